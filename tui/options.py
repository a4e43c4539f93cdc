"""The command line's options: parsed once, checked once, into one frozen `Options`.

Cheap to import (no log is read here): the report starts reading its log before the analysis
is loaded. Every failure is an `OptionError` (parsers/errors.py), said by tui/cli.py.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from parsers.durations import counted
from parsers.errors import OptionError
from parsers.sanitize import visible
from parsers.timespec import ascii_number
from parsers.writing import STDIN
from tui.palettes import PALETTES

if TYPE_CHECKING:
    from parsers.timespec import TimeSpec
    from parsers.whatif import Change

GLOB_CHARS = set("*?[")
# `--compare LOG:N`: run N (from 1) of a log whose daemon restarted
RUN_SUFFIX = re.compile(r"^(.+):(-?[0-9]+)$")
TOP_GAPS = 10  # the largest gaps the text report lists, unless --top says


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, exit 2, said by the command line (argparse prints the whole usage
        otherwise)."""
        raise OptionError(message)


def _at_least(text: str, least: int) -> int:
    """A whole number, `least` or more (a bad one: argparse's one-line error)."""
    try:
        value = int(ascii_number(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more: {value}")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number, 0 or more."""
    return _at_least(text, 0)


def positive_int(text: str) -> int:
    """An argparse type: a whole number, 1 or more."""
    return _at_least(text, 1)


def named(text: str) -> str:
    """An argparse type: a name that is not empty or blank. Where to write (`""`, an unset
    variable in a script, would be the current folder, and CSV files there would be
    replaced), and a log's `--name` (`:GPU0` named no host)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a name (it is empty)")
    return text


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
        value = float(ascii_number(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not MIN_SPEED <= value <= MAX_SPEED:
        raise argparse.ArgumentTypeError(f"must be from {MIN_SPEED:g} to {MAX_SPEED:g}: {text}")
    return value


DEFAULT_BIND = "127.0.0.1"  # --serve-metrics PORT: this machine only, unless told otherwise
MAX_PORT = 65535


def listen_address(text: str) -> tuple[str, int]:
    """An argparse type: --serve-metrics's HOST:PORT (`PORT` or `:PORT`: DEFAULT_BIND;
    `[::1]:PORT` for an IPv6 address; port 0: any free one)."""
    host, _, port = text.rpartition(":")
    bracketed = len(host) >= 2 and host[0] == "[" and host[-1] == "]"
    if bracketed:
        host = host[1:-1]
    if not (port.isascii() and port.isdigit()) or (bracketed and not host):
        raise argparse.ArgumentTypeError(f"not HOST:PORT (e.g. 127.0.0.1:9100): {text!r}")
    if ":" in host and not bracketed:
        raise argparse.ArgumentTypeError(f"put an IPv6 address in brackets, [::1]:9100: {text!r}")
    if any(c.isspace() or not c.isprintable() or c in "[]/" for c in host):
        raise argparse.ArgumentTypeError(f"not a host name or address: {text!r}")
    if int(port) > MAX_PORT:
        raise argparse.ArgumentTypeError(f"port must be at most {MAX_PORT}: {text!r}")
    return host or DEFAULT_BIND, int(port)


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
        "(or a quoted glob) show one group of lanes per host; LOG:N picks run N of a log "
        "whose daemon restarted",
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
        help="with --report or --what-if: print the JSON document (its keys: see the README)",
    )
    p.add_argument(
        "--min-gap",
        type=non_negative_int,
        default=0,
        metavar="MS",
        help=(
            "with --report: list only gaps of at least MS milliseconds (the summary counts "
            "all; the exports hold every gap); in the viewer, the gap threshold it opens at "
            "(n, N and the gap list step through gaps at or above it; ] and [ move it)"
        ),
    )
    p.add_argument(
        "--top",
        type=non_negative_int,
        default=None,
        metavar="N",
        help=f"with --report (the text): how many of the largest gaps it lists ({TOP_GAPS})",
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
        type=named,
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
    # beyond one log: several hosts, a comparison, the exports (tui/multi.py)
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("BEFORE", "AFTER"),
        help="compare two runs: the viewer (c: the figures), or with --report the report; "
        "LOG:N picks run N of a log whose daemon restarted",
    )
    p.add_argument(
        "--name",
        action="append",
        type=named,
        metavar="NAME",
        help="name a log's lanes (repeat once per log, in order; default: the file name); "
        "with --serve-metrics, the host label",
    )
    p.add_argument(
        "--export-trace",
        type=named,
        metavar="OUT",
        help="write the trace that Perfetto UI opens: Perfetto's protobuf if OUT ends in "
        ".perfetto-trace or .pftrace (a fraction of the size), else Trace Event Format JSON "
        "(chrome://tracing too)",
    )
    p.add_argument(
        "--export-csv",
        type=named,
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
        "1h05m, or ms), a wall-clock time (12:30, 12:30:05.250, 2026-03-16 12:30), or both as "
        "the inspector writes them (35.510s (09:31:51.366))",
    )
    p.add_argument(
        "--to",
        dest="time_to",
        type=time_option,
        metavar="T1",
        help="export only up to T1 (the same forms; a time of day: the first one after T0)",
    )
    p.add_argument(
        "--serve-metrics",
        type=listen_address,
        metavar="HOST:PORT",
        help="follow the log without the viewer and serve its figures on /metrics for "
        f"Prometheus (PORT alone: {DEFAULT_BIND}; --name sets the host label, default: this "
        "machine's name)",
    )
    p.add_argument(
        "--what-if",
        action="append",
        metavar="KNOB=VALUE",
        help="predict what a change would do to s/proof and GPU utilization, from this log "
        "alone (repeat to change several): gpu-workers=N, synthesis-workers=N, concurrency=N, "
        "synthesis-speed=X, gpu-speed=X, split-lock",
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


@dataclass(frozen=True)
class Options:
    """What the command line asks for, checked: every rule holds (`options_of`).

    `logs` are the logs as given, patterns expanded; `log` is the one log when there is one
    (`-`: standard input); `multi` says that several logs, `--compare` or an export are asked
    for (tui/multi.py). Export paths and `screenshot_dir` are absolute, `~` expanded.
    """

    logs: tuple[str, ...]
    log: str | None
    multi: bool
    demo: bool
    report: bool
    json: bool
    min_gap: int
    top: int
    workers_per_gpu: int | None
    no_follow: bool
    palette: str
    screenshot_dir: str
    replay: float | None
    compare: tuple[str, str] | None
    # with --compare, the run of each log asked for with LOG:N (from 1; None: the log's only)
    compare_runs: tuple[int | None, int | None]
    # the run of each of `logs` asked for with LOG:N (from 1; None: all of the log's)
    log_runs: tuple[int | None, ...]
    name: tuple[str, ...] | None
    export_trace: str | None
    export_csv: str | None
    time_from: TimeSpec | None
    time_to: TimeSpec | None
    ascii: bool
    no_clipboard: bool
    serve_metrics: tuple[str, int] | None = None  # where /metrics is served (tui/exporter.py)
    what_if: tuple[Change, ...] = ()  # the --what-if changes, checked (parsers/whatif.py)

    @property
    def exporting(self) -> bool:
        """An export is asked for."""
        return self.export_trace is not None or self.export_csv is not None

    @property
    def inputs(self) -> list[Path]:
        """The files the command reads (`-`: standard input), which nothing it writes may be."""
        return input_paths(list(self.compare or self.logs))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line as argparse reads it (`--help` and `--version` print and exit).

    Raises: OptionError: an unknown option or a bad value.
    """
    args = sys.argv[1:] if argv is None else argv
    return make_parser().parse_args(_dash_values_glued(args))


# the options whose value may begin with a dash (`--from -5s`)
DASH_VALUE_OPTIONS = ("--from", "--to")


def _dash_values_glued(args: list[str]) -> list[str]:
    """`--from -5s` as `--from=-5s`: argparse takes a value that begins with a dash and a
    digit for an option and says `expected one argument`, where the value's own error says
    what times it takes."""
    out: list[str] = []
    k = 0
    while k < len(args):
        arg = args[k]
        if arg == "--":
            return out + args[k:]
        value = args[k + 1] if k + 1 < len(args) else ""
        # an option as given or as argparse takes it shortened (`--fro`)
        named = len(arg) > 2 and any(o.startswith(arg) for o in DASH_VALUE_OPTIONS)
        if named and value[:1] == "-" and value[1:2].isdigit():
            out.append(f"{arg}={value}")
            k += 2
            continue
        out.append(arg)
        k += 1
    return out


def log_and_run(raw: str, patterns: bool = False) -> tuple[str, int | None]:
    """`LOG:N` as (LOG, N) when LOG names a file (`patterns`: or is a pattern that names
    files, each file's run N) and `LOG:N` does not; else (raw, None)."""

    def names(text: str) -> bool:
        return os.path.exists(text) or (patterns and bool(glob.glob(text)))

    if raw == "-" or names(raw):
        return raw, None
    m = RUN_SUFFIX.match(raw)
    if m is not None and names(m.group(1)):
        run = int(m.group(2))
        if run < 1:
            raise OptionError(f"{raw}: runs are numbered from 1 (LOG:1 is a log's first)")
        return m.group(1), run
    return raw, None


def logs_and_runs(raw: list[str]) -> tuple[list[str], list[int | None]]:
    """The logs as given, patterns expanded, and the run each names with LOG:N or PATTERN:N
    (None: every run of it)."""
    logs: list[str] = []
    runs: list[int | None] = []
    for item in raw:
        path, run = log_and_run(item, patterns=True)
        found = expand([path])
        logs.extend(found)
        runs.extend([run] * len(found))
    return logs, runs


def expand(raw: list[str]) -> list[str]:
    """Logs as given; a pattern that names no file (the shell left it) is expanded here."""
    out: list[str] = []
    for item in raw:
        if item != "-" and not os.path.exists(item) and GLOB_CHARS & set(item):
            found = sorted(glob.glob(item))
            if not found:
                raise OptionError(f"no file matches {item}")
            out.extend(found)
        else:
            out.append(item)
    return out


def options_of(ns: argparse.Namespace) -> Options:
    """The options of a parsed command line, every rule checked here and only here.

    Raises: OptionError: options that do not go together, or an output that cannot be
    written (one of the logs, a folder that does not exist).
    """
    logs, log_runs = logs_and_runs(ns.logs)
    what_if = checked_what_if(ns, logs) if ns.what_if else ()
    compare: tuple[str, str] | None = None
    compare_runs: tuple[int | None, int | None] = (None, None)
    if ns.compare:
        if ns.demo:
            raise OptionError("--demo shows the built-in log: not with --compare")
        if logs:
            raise OptionError("give --compare BEFORE AFTER, or logs, not both")
        pair = [log_and_run(x) for x in ns.compare]
        paths = expand([p for p, _ in pair])
        if len(paths) != 2:
            raise OptionError("--compare takes exactly two logs")
        compare = (paths[0], paths[1])
        compare_runs = (pair[0][1], pair[1][1])
        check_two_names(ns.name)
    read = list(compare or logs)
    if "-" in read and len(read) > 1:
        raise OptionError("standard input (-) can only be read as the one log")
    if ns.name is not None and len(ns.name) != max(len(read), 1):
        raise OptionError(
            f"--name given {counted(len(ns.name), 'time')} for {counted(len(read), 'log')} "
            "(once per log)"
        )
    exporting = ns.export_trace is not None or ns.export_csv is not None
    check_window(ns.time_from, ns.time_to, exporting)
    # what lists gaps: the text report (its largest ones), the JSON (every one at or above
    # --min-gap) and the viewer (those at or above its threshold, which --min-gap opens
    # at); given elsewhere they would do nothing (the comparison lists no gap)
    if ns.top is not None and (not ns.report or ns.json or ns.compare):
        raise OptionError(
            "--top goes with --report, the text report of a log (how many of the largest "
            "gaps it lists), "
            + (
                "not with --compare (a comparison lists no gap)"
                if ns.compare
                else "not with --json (the JSON lists every gap)"
                if ns.json
                else "which was not asked for"
            )
        )
    if ns.min_gap and (
        (ns.compare and ns.report)
        or (not ns.report and (exporting or ns.what_if or ns.serve_metrics is not None))
    ):
        raise OptionError(
            "--min-gap goes with --report of a log or the viewer (an export and "
            "a comparison's report hold every gap)"
        )
    if ns.serve_metrics is not None:
        check_serving(ns, read, exporting)
    if compare is None:
        check_distinct(read, ns.name, log_runs)
    picked = any(r is not None for r in log_runs)
    if picked and (ns.serve_metrics is not None or ns.replay is not None):
        what = "--serve-metrics" if ns.serve_metrics is not None else "--replay"
        raise OptionError(
            f"LOG:N picks a run to read whole: not with {what}, which follows the log as it grows"
        )
    # a run picked from a log: read whole, as a log among others is (what-if replays it)
    multi = compare is not None or len(read) > 1 or exporting or (picked and not ns.what_if)
    log = logs[0] if len(logs) == 1 else None
    export_trace, export_csv = ns.export_trace, ns.export_csv
    screenshot_dir = ns.screenshot_dir
    if multi:
        if ns.json and not ns.report:
            raise OptionError("--json goes with --report")
        if ns.replay is not None:
            raise OptionError("--replay shows one log (not with several, --compare or an export)")
        if not read and not ns.demo:
            raise OptionError("no log given (try: cuzk-tui --demo)")
        if ns.demo and read:
            raise OptionError("give a log or --demo, not both")
        export_trace, export_csv = checked_outputs(ns.export_trace, ns.export_csv, read)
        screenshot_dir = checked_screenshot_dir(ns.screenshot_dir)
    else:
        if ns.demo and log:
            raise OptionError("give a log or --demo, not both")
        if ns.replay is not None and (log in (None, "-") or ns.report):
            raise OptionError("--replay needs a log file and the viewer (not --report)")
        if ns.replay is not None and ns.no_follow:
            raise OptionError(
                "--replay plays the log as it grows, --no-follow reads it once: give one"
            )
        if not ns.demo and not log:
            raise OptionError("no log given (try: cuzk-tui --demo)")
        if ns.json and not ns.report and not ns.what_if:
            raise OptionError("--json goes with --report or --what-if")
        if not ns.report and ns.serve_metrics is None and not ns.what_if:
            screenshot_dir = checked_screenshot_dir(ns.screenshot_dir)
    return Options(
        logs=tuple(logs),
        log=log,
        multi=multi,
        demo=ns.demo,
        report=ns.report,
        json=ns.json,
        min_gap=ns.min_gap,
        top=TOP_GAPS if ns.top is None else ns.top,
        workers_per_gpu=ns.workers_per_gpu,
        no_follow=ns.no_follow,
        palette=ns.palette,
        screenshot_dir=screenshot_dir,
        replay=ns.replay,
        compare=compare,
        compare_runs=compare_runs,
        log_runs=tuple(log_runs),
        name=None if ns.name is None else tuple(ns.name),
        export_trace=export_trace,
        export_csv=export_csv,
        time_from=ns.time_from,
        time_to=ns.time_to,
        ascii=ns.ascii,
        no_clipboard=ns.no_clipboard,
        serve_metrics=ns.serve_metrics,
        what_if=what_if,
    )


def checked_what_if(ns: argparse.Namespace, logs: list[str]) -> tuple[Change, ...]:
    """The --what-if changes: one log (or the demo) replayed and its prediction printed,
    nothing else to show or write; every change known and in range."""
    from parsers.whatif import checked_changes

    others = [
        ("--report", ns.report),
        ("--compare", ns.compare),
        ("--export-trace", ns.export_trace),
        ("--export-csv", ns.export_csv),
        ("--serve-metrics", ns.serve_metrics),
        ("--replay", ns.replay),
    ]
    for name, given in others:
        if given:
            raise OptionError(f"--what-if prints its own prediction (not with {name})")
    if len(logs) > 1:
        raise OptionError(f"--what-if replays one log ({len(logs)} given)")
    return checked_changes(list(ns.what_if))


def check_serving(ns: argparse.Namespace, read: list[str], exporting: bool) -> None:
    """--serve-metrics follows one log, headless: nothing else to show or write."""
    if ns.report or exporting or ns.compare:
        raise OptionError(
            "--serve-metrics serves one log's figures (not with --report, --compare or an export)"
        )
    if ns.demo or ns.replay is not None or ns.no_follow:
        raise OptionError(
            "--serve-metrics follows a log (not with --demo, --replay or --no-follow)"
        )
    if len(read) != 1:
        raise OptionError(f"--serve-metrics follows one log ({len(read)} given)")


def check_window(t0: TimeSpec | None, t1: TimeSpec | None, exporting: bool) -> None:
    """--from/--to: only with an export, and the one not after the other (wall-clock times
    are checked once the log gives the engine's start)."""
    if (t0 is not None or t1 is not None) and not exporting:
        raise OptionError("--from/--to choose what --export-trace or --export-csv writes")
    a = None if t0 is None else t0.offset_ms
    b = None if t1 is None else t1.offset_ms
    if t0 is not None and t1 is not None and a is not None and b is not None and a >= b:
        raise OptionError(window_error(t0.text, t1.text, a > b))


def window_error(t0: str, t1: str, after: bool) -> str:
    """--from after --to, or the same moment: a window with nothing in it."""
    if after:
        return f"--from {t0} is after --to {t1}"
    return f"--from {t0} is --to {t1}: the window is empty"


def check_distinct(
    logs: list[str], names: list[str] | None, runs: list[int | None] | None = None
) -> None:
    """Logs side by side are hosts: one given twice (by path, link or hard link) was two hosts
    of the same GPUs, every figure counted twice (two runs of one log, `LOG:1 LOG:2`, are
    two); two of one `--name` could not be told apart. A log that cannot be looked at is said
    when it is opened."""
    seen: dict[tuple[int, int], dict[int | None, tuple[str, str]]] = {}  # a file's runs given
    for raw, run in zip(logs, runs or [None] * len(logs), strict=True):
        try:
            st = os.stat(raw)
        except (OSError, ValueError):
            continue
        given = seen.setdefault((st.st_dev, st.st_ino), {})
        label = raw if run is None else f"{raw}:{run}"
        # the whole log and a run of it hold that run twice
        first = next(iter(given.values()), None) if run is None else given.get(run, given.get(None))
        if first is not None:
            first_raw, first_label = first
            if first_label == label:
                same = "given twice"
            elif first_raw != raw:
                same = f"the same file as {visible(first_label)}"
            elif run is None:
                same = f"given whole and as {visible(first_label)}"
            else:
                same = f"a run of {visible(raw)}, given whole too"
            raise OptionError(f"{visible(label)} is {same}: give each host's log once")
        given[run] = (raw, label)
    if names is not None and len(set(names)) < len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise OptionError(f"--name {visible(twice)} is given to two logs: one name per log")


def check_two_names(names: list[str] | None) -> None:
    """--compare's two sides under one `--name` could not be told apart."""
    if names is not None and len(names) == 2 and names[0] == names[1]:  # else: counted below
        raise OptionError(f"--name {visible(names[0])} is given to both sides: one name each")


def input_paths(logs: list[str]) -> list[Path]:
    """The files the command reads (`-`: standard input), which nothing it writes may be."""
    return [STDIN if x == "-" else Path(x) for x in logs]


def checked_outputs(
    export_trace: str | None, export_csv: str | None, logs: list[str]
) -> tuple[str | None, str | None]:
    """The export paths with `~` expanded, made absolute; a target that is one of the logs
    or not a regular file is refused before anything is read or written."""
    from parsers.export import check_csv_targets
    from parsers.writing import WriteRefused, check_target, output_path, through_links

    inputs = input_paths(logs)
    option, raw = "--export-trace", export_trace
    try:
        if export_trace is not None:
            if export_trace == "-":
                raise OptionError(
                    "--export-trace: give a file's name (`-` is standard input, for a log)"
                )
            trace = through_links(output_path(export_trace))
            if trace.is_dir():
                raise OptionError(f"--export-trace: is a folder: {export_trace}")
            if not trace.parent.is_dir():
                raise OptionError(f"--export-trace: no such folder: {trace.parent}")
            check_target(trace, inputs)
            export_trace = str(trace)
        option, raw = "--export-csv", export_csv
        if export_csv is not None:
            if export_csv == "-":
                raise OptionError(
                    "--export-csv: give a folder's name (`-` is standard input, for a log)"
                )
            folder = through_links(output_path(export_csv))
            if not folder.exists() and not folder.parent.is_dir():
                raise OptionError(f"--export-csv: no such folder: {folder.parent}")
            targets = check_csv_targets(folder, inputs)
            if export_trace is not None and _one_of(Path(export_trace), targets):
                # the CSV written after the trace would replace it: the trace would be lost
                raise OptionError(
                    f"--export-trace: {export_trace} is a file --export-csv writes; "
                    "choose another name"
                )
            export_csv = str(folder)
    except WriteRefused as exc:
        raise OptionError(f"{option}: {exc}") from None
    except OSError as exc:  # a name too long, a folder that cannot be searched
        raise OptionError(_unusable(option, raw, exc)) from None
    return export_trace, export_csv


def _one_of(path: Path, targets: list[Path]) -> bool:
    """`path` (its links followed) is one of `targets`: the same name, or the same file."""
    from parsers.writing import same_file, through_links

    return any(same_file(path, through_links(target)) for target in targets)


def _unusable(option: str, raw: str | None, exc: OSError) -> str:
    """Why the path `raw` given to `option` cannot be written to, in one line."""
    return f"{option}: cannot use {raw}: {exc.strerror or exc}"


def checked_screenshot_dir(raw: str) -> str:
    """`--screenshot-dir`, `~` expanded and absolute: an existing folder."""
    from parsers.writing import WriteRefused, output_path

    try:
        folder = output_path(raw)
        if not folder.is_dir():
            raise OptionError(f"--screenshot-dir: not a directory: {raw}")
    except WriteRefused as exc:
        raise OptionError(f"--screenshot-dir: {exc}") from None
    except OSError as exc:  # a name too long, a folder that cannot be searched
        raise OptionError(_unusable("--screenshot-dir", raw, exc)) from None
    return str(folder)
