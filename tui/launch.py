"""Opening the viewer as the command line asks: the source it follows, the terminal it draws
on, the signals that end it, and the clean-up of what it made."""

from __future__ import annotations

import contextlib
import io
import locale
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from parsers.builder import LogBuilder
from parsers.errors import CuzkError
from parsers.load import check_log_path, check_stdin
from parsers.model import LogModel
from parsers.rawlines import LineReader
from parsers.sources import UnreadableLog, compression, file_hint, open_log
from parsers.writing import STDIN
from tui.app import CuzkApp, make_app
from tui.ascii_glyphs import ERRORS, c_locale
from tui.follow import (
    FileSource,
    LiveLog,
    Source,
    StreamSource,
)
from tui.options import Options
from tui.replay import DEMO_NAME, demo_bytes, demo_writer, replay_writer
from tui.terminal import Terminal, open_terminal
from tui.ttymodes import ENDING_SIGNALS, Modes


def _stdin_for_data() -> int:
    """Keep the piped standard input for the log; read the keys from the terminal."""
    check_stdin("journalctl -u cuzk -f | cuzk-tui -")
    data_fd = os.dup(0)
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        raise CuzkError(
            "reading the log from standard input needs a terminal for the keys (/dev/tty)"
        ) from None
    os.dup2(tty, 0)
    os.close(tty)
    return data_fd


def find_terminal(ascii_only: bool, modes: Modes | None = None) -> Terminal:
    """The terminal to draw on and read keys from: without one the viewer would draw into
    files and wait for keys for ever (cron, CI, `>out 2>err </dev/null`). What its encoding
    cannot write (`ascii_only`: all but ASCII) is drawn in ASCII. `modes`: the user's, which
    the viewer puts back when it gives the terminal back (tui/ttymodes.py).

    Raises: CuzkError: there is no terminal.
    """
    encoding = getattr(sys.__stderr__, "encoding", None) or locale.getpreferredencoding(False)
    terminal = open_terminal("ascii" if ascii_only or c_locale() else encoding, ERRORS)
    if terminal is None:
        raise CuzkError("the viewer needs a terminal; try --report")
    return replace(terminal, modes=modes)


def once(action: Callable[[], None]) -> Callable[[], None]:
    """`action`, run the first time only (clean-up is called from more than one place)."""
    done = False

    def run() -> None:
        nonlocal done
        if not done:
            done = True
            action()

    return run


class _Ending:
    """SIGTERM and SIGHUP while the viewer starts or stops (running, the app's own handlers
    take them): before the app exists the clean-up runs on the way out; then the app is
    asked to end as `q` ends it."""

    def __init__(self) -> None:
        self.app: CuzkApp | None = None

    def __call__(self, signum: int, frame: object) -> None:
        if self.app is None:
            raise SystemExit(128 + signum)
        self.app.end_by_signal(signum)


def _open_source(
    args: Options, cleanups: list[Callable[[], None]]
) -> tuple[Source, LineReader, Callable[[], bool] | None]:
    """The input the command line names; every temporary thing it makes is in `cleanups`
    as soon as it exists.

    Raises: CuzkError: it cannot be opened.
    """

    if args.log == "-":
        stream = StreamSource(_stdin_for_data())
        cleanups.append(stream.close)
        return stream, LineReader(path=stream.spool_path), None
    if args.demo and args.no_follow:
        # the demo's run whole, as a finished log is read: not the first instant of its replay
        demo = StreamSource(io.BytesIO(demo_bytes()), name=DEMO_NAME)
        cleanups.append(demo.close)
        return demo, LineReader(path=demo.spool_path), None
    if args.demo or args.replay is not None:
        if args.demo or args.log is None or args.replay is None:
            writer = demo_writer()
        else:
            writer = replay_writer(check_log_path(args.log), args.replay)
        cleanups.append(writer.cleanup)
        writer.start()
        file_source = FileSource(writer.path)
        cleanups.append(file_source.close)
        file_source.name = DEMO_NAME if args.demo else writer.name
        # the run written: finished once read to its end
        return file_source, LineReader(path=writer.path), writer.done.is_set
    assert args.log is not None
    path = check_log_path(args.log)
    try:
        if compression(path) is not None:
            # a compressed log does not grow: read it to its end through a spool
            spool = StreamSource(open_log(path), name=path.name)
            cleanups.append(spool.close)
            return spool, LineReader(path=spool.spool_path), None
        plain = FileSource(path)
        cleanups.append(plain.close)
        return plain, LineReader(path=path, keep_open=True), None  # followed: held
    except UnreadableLog:
        raise
    except OSError as exc:
        raise CuzkError(f"cannot read {args.log}: {exc.strerror or exc}") from None


def _inputs(args: Options, reader: LineReader) -> tuple[Path, ...]:
    """What the viewer reads: the log (or standard input), and the file its lines come from."""
    found: list[Path] = []
    if args.log == "-":
        found.append(STDIN)
    elif args.log is not None:
        found.append(Path(args.log))
    if reader.path is not None:
        found.append(reader.path)
    return tuple(found)


def run_app(args: Options, modes: Modes | None = None) -> int:
    """Open the viewer as the command line asks; whatever ends it, remove what it made
    (`modes`: the terminal's as the user had them, as for `find_terminal`).

    Raises: CuzkError: the log cannot be opened, no temporary file or no terminal.
    """
    cleanups: list[Callable[[], None]] = []

    def remove_all() -> None:
        for action in reversed(cleanups):
            with contextlib.suppress(Exception):  # one failure must not keep the rest
                action()

    cleanup = once(remove_all)
    ending = _Ending()
    previous = {sig: signal.getsignal(sig) for sig in ENDING_SIGNALS}
    app: CuzkApp | None = None
    terminal: Terminal | None = None
    try:
        for sig in ENDING_SIGNALS:
            signal.signal(sig, ending)
        # held while a temporary file is made and its removal registered: a signal in
        # between would leave the file behind
        signal.pthread_sigmask(signal.SIG_BLOCK, ENDING_SIGNALS)
        try:
            source, reader, ended = _open_source(args, cleanups)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, ENDING_SIGNALS)
        terminal = find_terminal(args.ascii, modes)
        live = LiveLog(source, lambda _: None, args.workers_per_gpu, not args.no_follow, ended)
        app = make_app(
            LogBuilder(source="").snapshot(),
            reader,
            live,
            on_exit=cleanup,
            palette=args.palette,
            screenshot_dir=Path(args.screenshot_dir),
            use_clipboard=not args.no_clipboard,
            terminal=terminal,
        )
        if args.log not in (None, "-") and not args.demo:
            app.encoding_hint = file_hint(Path(args.log))
            app.replay_speed = args.replay  # the header says the log is played
        app.inputs = _inputs(args, reader)
        app.min_gap_ms = args.min_gap
        ending.app = app
        app.run()
    finally:
        # the clean-up is not cut short by a second signal
        for sig in ENDING_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        cleanup()
        if terminal is not None:  # once the driver has given the terminal back
            terminal.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return app.return_code or 0


def run_static(
    args: Options,
    model: LogModel,
    reader: LineReader,
    note: str,
    compared: tuple[LogModel, LogModel] | None = None,
    terminal: Terminal | None = None,
) -> int:
    """The viewer on a finished model of several logs (not followed), saying how they align,
    on `terminal` (None: the one `find_terminal` finds)."""
    terminal = terminal or find_terminal(args.ascii)
    app = make_app(
        model,
        reader,
        palette=args.palette,
        screenshot_dir=Path(args.screenshot_dir),
        use_clipboard=not args.no_clipboard,
        compared=compared,
        terminal=terminal,
    )
    app.status = note + (" · c: the comparison" if compared is not None else "")
    app.inputs = tuple(STDIN if x == "-" else Path(x) for x in args.compare or args.logs)
    app.min_gap_ms = args.min_gap
    ending = _Ending()
    ending.app = app
    previous = {sig: signal.signal(sig, ending) for sig in ENDING_SIGNALS}
    try:
        app.run()
    finally:
        terminal.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return app.return_code or 0
