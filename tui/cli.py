"""The `cuzk-tui` command: open the viewer, or print the report."""

from __future__ import annotations

import argparse
import errno
import fcntl
import io
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

# Only what the command line needs before a log is read: the report starts reading its log
# (parsers.readahead) before the analysis, numpy and the model are loaded.
from parsers.regular import open_regular
from parsers.sanitize import visible
from parsers.sources import (
    HEAD_BYTES,
    READ_ERRORS,
    UnreadableLog,
    compression,
    file_hint,
    utf16_hint,
)
from tui.palettes import PALETTES

# numpy's OpenBLAS starts a thread per core when numpy is loaded, and they spin for a while;
# nothing here uses BLAS, and on a small machine they take CPU from the core's threads
# (~60 ms of CPU on a 1 M-event report on 2 cores). A user's own setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

if TYPE_CHECKING:
    from parsers.model import LogModel
    from parsers.readahead import ReadAhead
    from parsers.timespec import TimeSpec

DEMO_NAME = "demo (built-in simulated run)"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, exit 2 (argparse prints the whole usage otherwise)."""
        self.exit(2, f"cuzk-tui: error: {visible(message)} (see cuzk-tui --help)\n")


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number, 0 or more (a bad one: argparse's one-line error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number, 1 or more."""
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


# a GPU runs a handful of workers; the core keeps worker numbers in 64 bits
MAX_WORKERS_PER_GPU = 1 << 16


def workers_per_gpu(text: str) -> int:
    """An argparse type: --workers-per-gpu, 1 to MAX_WORKERS_PER_GPU."""
    value = positive_int(text)
    if value > MAX_WORKERS_PER_GPU:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_WORKERS_PER_GPU}")
    return value


# --replay: slower than a hundredth of real time shows nothing for hours; faster than ten
# thousand times writes a long log at once (and a speed near 0 would wait for ever)
MIN_SPEED = 0.01
MAX_SPEED = 10_000.0


def replay_speed(text: str) -> float:
    """An argparse type: --replay's SPEED, MIN_SPEED to MAX_SPEED."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not MIN_SPEED <= value <= MAX_SPEED:
        raise argparse.ArgumentTypeError(f"must be from {MIN_SPEED:g} to {MAX_SPEED:g}: {text}")
    return value


def time_option(text: str) -> TimeSpec:
    """An argparse type: --from/--to, an offset or a wall-clock time (parsers/timespec.py)."""
    from parsers.timespec import parse_time

    try:
        return parse_time(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def make_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = _Parser(
        prog="cuzk-tui",
        description=(
            "Timeline viewer for the cuzk GPU proving daemon's log: a Gantt per GPU worker "
            "(pre-lock, lock wait, allocation, kernel, barrier, cleanup), every idle gap with "
            "its cause, and TIMELINE-interval utilization next to real kernel utilization."
        ),
        epilog="examples: cuzk-tui daemon.log | cuzk-tui --demo | cuzk-tui LOG --report --json",
    )
    p.add_argument(
        "logs",
        nargs="*",
        metavar="log",
        help="the daemon log (stderr, or stdout+stderr merged); - reads stdin; several logs "
        "(or a quoted glob) show one group of lanes per host",
    )
    p.add_argument("--version", action=_VersionAction)
    p.add_argument(
        "--demo",
        action="store_true",
        help="a built-in simulated run, written live at 20x real time (no daemon needed)",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="print the report and exit instead of opening the viewer",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="with --report: print the JSON document (its keys: see the README)",
    )
    p.add_argument(
        "--min-gap",
        type=non_negative_int,
        default=0,
        metavar="MS",
        help="list only gaps of at least MS milliseconds (summary counts all)",
    )
    p.add_argument(
        "--top",
        type=non_negative_int,
        default=10,
        metavar="N",
        help="how many of the largest gaps the text report lists (default 10)",
    )
    p.add_argument(
        "--workers-per-gpu",
        type=workers_per_gpu,
        default=None,
        metavar="N",
        help="for logs without the stdout worker lines: worker W is on GPU W // N",
    )
    p.add_argument(
        "--no-follow",
        action="store_true",
        help="open a snapshot of the log instead of following it as it grows",
    )
    p.add_argument(
        "--palette",
        choices=sorted(PALETTES),
        default="default",
        help="phase colours: default, or okabe-ito (safe with red-green colour blindness)",
    )
    p.add_argument(
        "--screenshot-dir",
        default=".",
        metavar="DIR",
        help="where the command palette's Screenshot saves (default: the current directory)",
    )
    p.add_argument(
        "--replay",
        type=replay_speed,
        default=None,
        metavar="SPEED",
        help="replay a recorded log as if live, SPEED times real time (0.01 to 10000)",
    )
    # issue 11: beyond one log (tui/multi.py)
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("BEFORE", "AFTER"),
        help="compare two runs: the viewer (c: the figures), or with --report the report",
    )
    p.add_argument(
        "--name",
        action="append",
        metavar="NAME",
        help="name a log's lanes (repeat once per log, in order; default: the file name)",
    )
    p.add_argument(
        "--export-trace",
        metavar="OUT",
        help="write the trace that Perfetto UI opens: Perfetto's protobuf if OUT ends in "
        ".perfetto-trace or .pftrace (a fraction of the size), else Trace Event Format JSON "
        "(chrome://tracing too)",
    )
    p.add_argument(
        "--export-csv",
        metavar="DIR",
        help="write intervals.csv, phases.csv, gaps.csv, proofs.csv and busy_split.csv into DIR",
    )
    p.add_argument(
        "--from",
        dest="time_from",
        type=time_option,
        metavar="T0",
        help="export only from T0 on (with --export-trace/--export-csv), cut as the palette's "
        "visible-range export cuts: an offset as the viewer shows it (850ms, 12.5s, 3m20s, "
        "1h05m, or ms) or a wall-clock time (12:30, 12:30:05.250, 2026-03-16 12:30)",
    )
    p.add_argument(
        "--to",
        dest="time_to",
        type=time_option,
        metavar="T1",
        help="export only up to T1 (the same forms; a time of day: the first one after T0)",
    )
    p.add_argument(
        "--ascii",
        action="store_true",
        help="draw with ASCII only (lines as -|+, each phase its own character; also what a "
        "terminal whose encoding cannot show a glyph gets for it)",
    )
    p.add_argument(
        "--no-clipboard",
        action="store_true",
        help="y shows the id instead of copying it (OSC 52) to the terminal's clipboard",
    )
    return p


class _VersionAction(argparse.Action):
    """--version: the installed version, looked up only when asked (a report starts sooner)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings,
            dest=dest,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(f"{parser.prog} {_version()}\n")
        parser.exit()


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("cuzk-tui")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def demo_bytes() -> bytes:
    """The built-in demo log."""
    from parsers.simulate import DEMO_CONFIG, write_log

    out = io.StringIO()
    write_log(DEMO_CONFIG, out)
    return out.getvalue().encode()


def fail(message: str) -> NoReturn:
    print(f"cuzk-tui: error: {visible(message)}", file=sys.stderr)  # quotes argv
    raise SystemExit(2)


def check_stdin() -> None:
    """Standard input open for reading, or a one-line error and exit 2 (closed: `<&-`;
    write-only: `0>file`)."""
    closed = "standard input is closed: nothing to read (give a log file)"
    if sys.stdin is None:  # closed when Python started: descriptor 0 may be another file now
        fail(closed)
    try:
        flags = fcntl.fcntl(0, fcntl.F_GETFL)
    except OSError:
        fail(closed)
    if flags & os.O_ACCMODE == os.O_WRONLY:
        fail("standard input is open for writing only: nothing to read (give a log file)")


def check_log_path(raw: str) -> Path:
    """A readable regular file, or a one-line error and exit 2."""
    path = Path(raw)
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            fail(f"symlink loop: {raw}")
        if exc.errno == errno.ENOENT and path.is_symlink():
            fail(f"no such file: {raw} (a symlink to nothing)")
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            fail(f"no such file: {raw}")
        if exc.errno == errno.EACCES:
            fail(f"cannot read (permission denied): {raw}")
        fail(f"cannot open {raw}: {exc.strerror or exc}")
    if path.is_dir():
        fail(f"is a directory, not a log: {raw}")
    if not path.is_file():
        fail(f"not a regular file: {raw} (for a pipe, use: ... | cuzk-tui -)")
    if not os.access(path, os.R_OK):
        fail(f"cannot read (permission denied): {raw}")
    try:
        os.close(open_regular(path))  # no blocking open, were it a FIFO by now
    except OSError as exc:
        fail(f"cannot open {raw}: {exc.strerror or exc}")
    return path


def read_ahead(args: argparse.Namespace) -> ReadAhead | None:
    """Start reading a plain log file in the core at once (None: the demo, standard input,
    a compressed file: `load_model` reads those)."""
    from parsers.readahead import ReadAhead

    if args.demo or args.log == "-":
        return None
    path = check_log_path(args.log)
    try:
        if compression(path) is not None:  # reads the file's first bytes
            return None
        return ReadAhead(path, args.workers_per_gpu)
    except OSError as exc:
        fail(f"cannot read {args.log}: {exc.strerror or exc}")


def load_model(args: argparse.Namespace, ahead: ReadAhead | None = None) -> LogModel:
    """Parse the demo or the named log into a finished model for the report (`ahead`: the
    log, being read). The JSON report does without the viewer's lanes; the text report
    reads them (what each worker was doing when a gap began)."""
    drawn = not args.json
    from parsers.builder import LogBuilder
    from parsers.report import read_log, read_stream

    if ahead is not None:
        # loaded while the core reads: numpy.unique imports it on first use (~15 ms)
        import numpy.ma  # noqa: F401

        try:
            scanner = ahead.scanner()
        except OSError as exc:
            fail(f"cannot read {args.log}: {exc.strerror or exc}")
        builder = LogBuilder(ahead.path.name, args.workers_per_gpu, scanner)
        try:
            builder.read_tracing(ahead.path)  # no TIMELINE line: its jobs, from the tracing
        except OSError as exc:
            fail(f"cannot read {args.log}: {exc.strerror or exc}")
        return builder.build(release=True, drawn=drawn)
    if args.demo:
        builder = LogBuilder(source=DEMO_NAME, workers_per_gpu=args.workers_per_gpu)
        builder.feed(demo_bytes())
        return builder.build(release=True, drawn=drawn)
    if args.log == "-":
        check_stdin()
        try:
            return read_stream(sys.stdin.buffer, "stdin", args.workers_per_gpu, drawn=drawn)
        except OSError as exc:
            fail(f"cannot read standard input: {exc.strerror or exc}")
    path = check_log_path(args.log)
    try:
        return read_log(path, workers_per_gpu=args.workers_per_gpu, drawn=drawn)
    except UnreadableLog as exc:
        fail(str(exc))
    except READ_ERRORS as exc:  # EOFError: a compressed file cut short
        fail(f"cannot read {args.log}: {getattr(exc, 'strerror', None) or exc}")


def encoding_hint(args: argparse.Namespace) -> str | None:
    """Why a log shows nothing when the reason is its encoding (UTF-16), else None."""
    if args.demo:
        return None
    if args.log == "-":
        stdin = sys.stdin.buffer if sys.stdin is not None else None
        peek = getattr(stdin, "peek", None)
        try:
            return utf16_hint(peek(HEAD_BYTES)[:HEAD_BYTES]) if peek is not None else None
        except (OSError, ValueError):
            return None
    return file_hint(Path(args.log))


MIN_COLUMNS = 40  # narrower, the report's lines are cut to nothing (COLUMNS=0: an empty report)


def report_width() -> int | None:
    """The text report's width: the terminal's (None: rich reads COLUMNS or asks the
    terminal), never under MIN_COLUMNS; piped or redirected, full lines (a reader greps
    them), not 80 columns."""
    if not sys.stdout.isatty():
        return 10_000
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns >= MIN_COLUMNS:
        return None
    try:
        # COLUMNS unset, or too small to be meant: the terminal says
        columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except OSError:
        columns = 80
    return max(MIN_COLUMNS, columns)


def _print_report(args: argparse.Namespace, model: LogModel) -> None:
    from parsers.report import report_dict, report_json_pieces

    if args.json:
        # indented for a person at a terminal; compact (its gap list written straight from
        # the columns) for a script. ensure_ascii: log text's controls, C1 and bidi
        # characters travel as \u escapes (exact, and valid JSON), never as raw characters
        if sys.stdout.isatty():
            doc = report_dict(model, min_gap_ms=args.min_gap)
            sys.stdout.write(json.dumps(doc, indent=1, ensure_ascii=True))
        else:
            for piece in report_json_pieces(model, min_gap_ms=args.min_gap):
                sys.stdout.write(piece)
        sys.stdout.write("\n")
    else:
        from rich.console import Console

        from parsers.rawlines import LineReader
        from tui.report import print_report

        width = report_width()
        reader = None
        if getattr(args, "log", None) not in (None, "-") and compression(Path(args.log)) is None:
            reader = LineReader(path=Path(args.log))  # the largest gaps' CPU path
        print_report(
            model, Console(width=width), top=args.top, min_gap_ms=args.min_gap, reader=reader
        )
    sys.stdout.flush()


def _report(args: argparse.Namespace) -> int:
    if sys.stdout is None:  # started with standard output closed (>&-)
        print("cuzk-tui: error: standard output is closed", file=sys.stderr)
        return 1
    ahead = read_ahead(args)  # the core reads a plain file while the analysis loads
    hint = encoding_hint(args)  # before the read: standard input is peeked at, not re-read
    try:
        model = load_model(args, ahead)
    except RuntimeError as exc:
        # the core failed (a bug, caught at its boundary): one line, never a traceback
        print(f"cuzk-tui: error: {visible(str(exc))} (please report it)", file=sys.stderr)
        return 1
    from parsers.report import missing_timeline

    reason = missing_timeline(model)
    if reason is not None:
        reason = hint or reason
        print(f"cuzk-tui: {reason}", file=sys.stderr)
    try:
        _print_report(args, model)
    except BrokenPipeError:
        # `cuzk-tui LOG --report | head`: the reader left; that is not an error
        _silence_stdout()
    except OSError as exc:
        # /dev/full, a closed descriptor, a full disk: one line, no traceback
        _silence_stdout()
        print(f"cuzk-tui: error: cannot write the report: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def _exit_now(rc: int) -> NoReturn:
    """End the process once the report is out: the model of a long log is hundreds of
    megabytes of arrays and objects, which the system takes back at once, where freeing
    them one by one would take tens of milliseconds more."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            rc = rc or 1
    os._exit(rc)


def _silence_stdout() -> None:
    """Send what is still buffered nowhere, so the exit does not fail on it again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        sys.stdout = None


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cuzk-tui`."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # ctrl+c while a report is made or an export written: quietly, with the shell's
        # status for SIGINT (an export is renamed into place only once whole: nothing is
        # left half-written)
        if argv is None:
            _exit_now(130)
        return 130


def _main(argv: list[str] | None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    from tui.ascii_glyphs import use_ascii_stand_ins

    for stream in (sys.stdout, sys.stderr):
        use_ascii_stand_ins(stream, args.ascii)
    from tui.options import check_multi

    check_multi(parser, args)  # sets args.log; several logs, --compare and exports
    if args.multi:
        from tui.multi import run_multi

        return run_multi(args)
    if args.demo and args.log:
        parser.error("give a log or --demo, not both")
    if args.replay is not None and (args.log in (None, "-") or args.report):
        parser.error("--replay needs a log file and the viewer (not --report)")
    if not args.demo and not args.log:
        parser.error("no log given (try: cuzk-tui --demo)")
    if args.json and not args.report:
        parser.error("--json goes with --report")
    if args.report:
        rc = _report(args)
        if argv is None:  # the command itself, not a caller in this process
            _exit_now(rc)
        return rc
    from tui.options import check_screenshot_dir

    check_screenshot_dir(parser, args)
    from tui.app import run_app

    return run_app(args)


if __name__ == "__main__":
    raise SystemExit(main())
