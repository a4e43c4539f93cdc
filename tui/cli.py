"""The `cuzk-tui` command: open the viewer, print the report, or serve the metrics.

The one place where a failure becomes what the user sees: every `CuzkError` raised below
(parsers/errors.py) is one line on standard error and its exit status here.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, NoReturn

# Only what the command line needs before a log is read: the report starts reading its log
# (parsers.load.read_ahead) before the analysis, numpy and the model are loaded.
from parsers.errors import CuzkError, OptionError
from parsers.sanitize import visible
from tui.ttymodes import ENDING_SIGNALS, Modes, unechoed

# numpy's OpenBLAS starts a thread per core when numpy is loaded, and they spin for a while;
# nothing here uses BLAS, and on a small machine they take CPU from the core's threads
# (~60 ms of CPU on a 1 M-event report on 2 cores). A user's own setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

if TYPE_CHECKING:
    from collections.abc import Callable

    from parsers.model import LogModel
    from tui.options import Options


class EndedBySignal(BaseException):
    """SIGTERM or SIGHUP while a report is made or an export written: raised where the
    command is, as ctrl+c raises KeyboardInterrupt, so that what it was writing is removed
    on the way out (parsers/writing.py), never left as a temporary file."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# the options after which no viewer opens (argparse takes their abbreviations too): the
# terminal's echo is left alone, for a pager reading the report saves the modes it finds
NO_VIEWER = (
    "--report",
    "--export-trace",
    "--export-csv",
    "--serve-metrics",
    "--what-if",
    "--help",
    "--version",
)


def _end_on_signals() -> None:
    """SIGTERM and SIGHUP end the command by raising EndedBySignal (the viewer and the
    metrics' server take them themselves), once: the clean-up is not cut short by a second.
    One ignored (`nohup`) stays ignored."""

    def end(signum: int, frame: object) -> None:
        for sig in ENDING_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise EndedBySignal(signum)

    for sig in ENDING_SIGNALS:
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, end)


def may_open_viewer(args: list[str]) -> bool:
    """Whether the command line may open the viewer (no option that does without it, by
    any abbreviation, before a `--`)."""
    for arg in args:
        if arg == "--":
            break
        if arg == "-h":
            return False
        name = arg.partition("=")[0]
        if len(name) > 2 and name.startswith("--") and any(o.startswith(name) for o in NO_VIEWER):
            return False
    return True


def error_line(error: CuzkError) -> str:
    """The one line that says `error` (an option's points to --help, as argparse's do)."""
    text = f"cuzk-tui: error: {visible(str(error))}"  # quotes argv and log text
    return text + " (see cuzk-tui --help)" if isinstance(error, OptionError) else text


def _stdout_closed() -> bool:
    """Started with standard output closed (>&-): said in a line."""
    if sys.stdout is None:
        print("cuzk-tui: error: standard output is closed", file=sys.stderr)
        return True
    return False


def _one_model(
    options: Options, drawn: bool, meanwhile: Callable[[], object] | None = None
) -> LogModel:
    """The finished model of the one log, or of the demo, that the report and --what-if
    read (`drawn`: with the viewer's lanes). The core reads a plain file while the analysis
    loads, and `meanwhile` runs (the modules the model's reader loads after it)."""
    from parsers.load import load_log, model_of_bytes, read_ahead

    log = options.log
    ahead = None if options.demo or log is None else read_ahead(log, options.workers_per_gpu)
    if meanwhile is not None:
        meanwhile()
    if options.demo:
        from tui.replay import DEMO_NAME, demo_bytes

        return model_of_bytes(demo_bytes(), DEMO_NAME, options.workers_per_gpu, drawn)
    assert log is not None  # options_of: one log, or the demo
    return load_log(log, options.workers_per_gpu, drawn, ahead)


def _text() -> None:
    """Load the text report's writer (Rich, ~30-60 ms)."""
    import tui.report  # noqa: F401


def _report(options: Options) -> int:
    from parsers.load import check_stdin
    from parsers.sources import head_compression, stdin_hint
    from tui.output import encoding_hint, piped_head, print_one_report, say, written

    if _stdout_closed():
        return 1
    if options.log == "-":
        # before the peek below, which on a terminal would wait for a line
        check_stdin("journalctl -u cuzk | cuzk-tui - --report")
    head = piped_head(options)  # before the read: standard input is peeked at, not re-read
    if head is not None and head_compression(head) is not None:
        # compressed data read as text would be a report of nothing
        print(f"cuzk-tui: error: {stdin_hint(head)}", file=sys.stderr)
        return 2
    hint = encoding_hint(options)
    # the JSON does without the lanes; the text's writer is loaded while the core reads
    model = _one_model(options, drawn=not options.json, meanwhile=None if options.json else _text)
    from parsers.report import missing_timeline

    reason = missing_timeline(model)
    if reason is not None:
        say(hint or reason)
    if model.read_note is not None:
        say(f"{visible(model.source)}: {model.read_note}")
    return written("report", lambda: print_one_report(options, model))


def _what_if(options: Options) -> int:
    """--what-if: the log replayed, unchanged and changed (parsers/whatif.py)."""
    import json
    import shutil

    from parsers.report import missing_timeline
    from parsers.whatif import predict, prediction_dict, prediction_text
    from tui.output import report_width, say, written

    if _stdout_closed():
        return 1
    run = options.log_runs[0] if options.log_runs else None
    if run is not None and options.log is not None:  # LOG:N: that run of a restarted log
        from tui.multi import picked_run

        model = picked_run(options.log, run, options.workers_per_gpu)[0][0]
    else:
        model = _one_model(options, drawn=False)  # the replay reads no lane
    if model.read_note is not None:
        say(f"{visible(model.source)}: {model.read_note}")
    reason = missing_timeline(model)
    if reason is not None:
        print(f"cuzk-tui: error: {reason} (nothing to replay)", file=sys.stderr)
        return 2
    if model.restarted:
        # the runs side by side are no machine the log saw: one is replayed, or none
        runs = model.run_lines or ()
        lines = ", ".join(str(n) for n in runs)
        print(
            f"cuzk-tui: error: the daemon restarted in this log (runs begin at lines {lines}); "
            f"--what-if replays one run: pick one with LOG:N (1 to {len(runs)})",
            file=sys.stderr,
        )
        return 2
    prediction = predict(model, options.what_if)

    def write() -> None:
        if options.json:
            doc = prediction_dict(prediction)
            indent = 1 if sys.stdout.isatty() else None
            sys.stdout.write(json.dumps(doc, indent=indent, ensure_ascii=True) + "\n")
        else:
            width = report_width() or shutil.get_terminal_size().columns
            sys.stdout.write(prediction_text(prediction, width))

    return written("prediction", write)


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


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cuzk-tui`: the exit status (the command itself ends at once once a
    report is out; `argv` given, a caller in this process gets the status back)."""
    modes: Modes | None = None
    try:
        if argv is None and may_open_viewer(sys.argv[1:]):
            # the command itself: keys typed before the viewer takes the terminal are not
            # echoed. A kill or ctrl+c as it starts puts the user's modes back on the way
            # out: the signals wait until the echo is off and the handler that puts it back
            # is in place, then are taken here, `modes` known.
            held = signal.pthread_sigmask(signal.SIG_BLOCK, (*ENDING_SIGNALS, signal.SIGINT))
            try:
                modes = unechoed()
                if modes is not None:
                    _end_on_signals()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return _main(argv, modes)
    except CuzkError as exc:
        print(error_line(exc), file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, EndedBySignal) as exc:
        # ctrl+c, SIGTERM or SIGHUP while a report is made or an export written: quietly,
        # with the shell's status for the signal (an export is renamed into place only once
        # whole, its temporary files removed on the way here: nothing is left half-written)
        rc = 128 + (exc.signum if isinstance(exc, EndedBySignal) else signal.SIGINT)
        if argv is None:
            if modes is not None:
                modes.put_back()
            _exit_now(rc)
        return rc
    finally:
        if modes is not None:
            modes.put_back()


def _main(argv: list[str] | None, modes: Modes | None) -> int:
    """The command (`modes`: the terminal's as the user had them, its echo now off)."""
    from tui.ascii_glyphs import use_ascii_stand_ins
    from tui.options import options_of, parse_args

    parsed = parse_args(argv)
    for stream in (sys.stdout, sys.stderr):
        use_ascii_stand_ins(stream, parsed.ascii)
    options = options_of(parsed)  # several logs, --compare, exports: tui/multi.py
    viewer = not (options.serve_metrics or options.what_if or options.report or options.exporting)
    if modes is not None and not viewer:  # the terminal as it was, at once
        modes.put_back()
        modes = None
    if argv is None and not viewer and options.serve_metrics is None:
        _end_on_signals()  # the command itself: a caller in this process keeps its own
    if options.serve_metrics is not None:
        from tui.exporter import run_exporter

        return run_exporter(options)
    if options.multi:
        from tui.multi import run_multi

        if options.report and _stdout_closed():  # several logs, a comparison, LOG:N
            return 1
        return run_multi(options, modes)
    if options.what_if:
        rc = _what_if(options)
        if argv is None:
            _exit_now(rc)
        return rc
    if options.report:
        rc = _report(options)
        if argv is None:  # the command itself, not a caller in this process
            _exit_now(rc)
        return rc
    from tui.launch import run_app

    return run_app(options, modes)


if __name__ == "__main__":
    raise SystemExit(main())
