"""The viewer's terminal: found whichever standard streams are files, and never a way to
hang or end the viewer.

The screen goes to the terminal itself and the keys come from it (`2>file`, `</dev/null`);
with no terminal at all the viewer does not start. Input the key parser cannot read is
dropped. A stop and continue resumes once. Textual writes the screen from a thread that
dies on the first failed write; the app's later writes then fill that thread's bounded
queue and block for ever. Once the terminal has hung up, writes fail with EIO: here they
are dropped instead, so the app ends as `q` ends it. And whatever ends the app by a signal,
a watchdog makes sure the process is gone a few seconds later, its temporary files removed.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from textual import events
from textual.driver import Driver
from textual.keys import Keys
from textual.message import Message

from tui.ttymodes import Modes

if TYPE_CHECKING:
    from textual._parser import Parser

EXIT_GRACE_S = 10.0  # after an ending signal, how long the app has to end by itself


class TerminalOut:
    """The terminal as the screen writer sees it: once a write fails, later ones are dropped."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._file.write(text)
            except (OSError, ValueError):  # EIO / EPIPE after a hang-up; ValueError: closed
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except (OSError, ValueError):
                self.gone = True

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return self._file.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


@dataclass(frozen=True)
class Terminal:
    """The terminal the viewer draws on and reads its keys from, whichever of the standard
    streams are files: `cuzk-tui LOG 2>err` draws on the terminal, not into `err`."""

    keys_fd: int
    screen: IO[str]
    modes: Modes | None = None  # the user's, when the command turned the echo off

    def close(self) -> None:
        """Close both (after the app has ended)."""
        with contextlib.suppress(OSError, ValueError):
            self.screen.close()
        with contextlib.suppress(OSError):
            os.close(self.keys_fd)


def _terminal_fd(fds: tuple[int, ...], readable: bool) -> int | None:
    """A new descriptor of the terminal: the first of `fds` that is one (and can be read or
    written as needed), else the process's terminal (/dev/tty); None: there is none."""
    import fcntl  # POSIX only, as the driver

    for fd in fds:
        try:
            if not os.isatty(fd):
                continue
            mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
        except OSError:  # closed
            continue
        if mode == os.O_RDWR or mode == (os.O_RDONLY if readable else os.O_WRONLY):
            return os.dup(fd)
    try:
        return os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:  # no controlling terminal: cron, CI, a daemon
        return None


def open_terminal(encoding: str, errors: str = "strict") -> Terminal | None:
    """The terminal to draw on (standard error, else /dev/tty, else standard output) and to
    read keys from (standard input, where a piped log has put the terminal, else /dev/tty);
    None when there is none, or when none of the standard streams is one (a script's run,
    whose files would fill with escapes).

    Args:
        encoding: how text is written to the terminal.
        errors: the codec error handler for what that encoding cannot write.
    """
    if not any(os.isatty(fd) for fd in (0, 1, 2)):
        return None
    keys = _terminal_fd((0,), readable=True)
    screen = _terminal_fd((2, 1), readable=False)
    if keys is None or screen is None:
        for fd in (keys, screen):
            if fd is not None:
                os.close(fd)
        return None
    return Terminal(keys, open(screen, "w", encoding=encoding, errors=errors))


def hangup_safe(driver: type[Driver], terminal: Terminal | None = None) -> type[Driver]:
    """Textual's POSIX terminal driver made safe for this app (others as they are): it writes
    through a `TerminalOut`, drops input it cannot parse, and resumes once per stop; given a
    `terminal`, it draws on it and reads keys from it, and takes its size from it alone."""
    import termios  # POSIX only, as the driver
    import tty

    from textual.drivers.linux_driver import LinuxDriver

    if driver is not LinuxDriver:
        return driver

    class HangupSafeDriver(LinuxDriver):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            stdin = sys.__stdin__
            stand_in = None
            if stdin is None and terminal is not None:
                # started with standard input closed (`<&-`): Textual asks it for the keys'
                # descriptor, which the terminal's replaces below (typeshed calls the
                # name final; the interpreter lets it be set)
                stand_in = open(terminal.keys_fd, closefd=False)  # noqa: SIM115
                setattr(sys, "__stdin__", stand_in)  # noqa: B010
            try:
                super().__init__(*args, **kwargs)
            finally:
                if stand_in is not None:
                    setattr(sys, "__stdin__", stdin)  # noqa: B010
                    stand_in.close()
            if terminal is not None:
                self._file = terminal.screen  # type: ignore[assignment]
                self.fileno = terminal.keys_fd
                self.input_tty = True
            if self._file is not None:
                self._file = TerminalOut(self._file)  # type: ignore[assignment]
            self._suspended = False  # application mode stopped by a suspend (SIGTSTP)

        def start_application_mode(self) -> None:
            """Textual's, which notes the terminal's modes to put back when the viewer
            gives it back: the user's, not those the command set while it started (no
            echo; a ctrl+z would leave the shell without it)."""
            if self._in_foreground():
                super().start_application_mode()  # type: ignore[no-untyped-call]
            if self._writer_thread is None:
                # the terminal could not be taken: started in the background (`&`), its
                # terminal closed before it came to the foreground. Nothing to draw on: it
                # ends, quietly (Textual's own end wrote three tracebacks)
                self._app.call_later(self._app.exit, None, 1)
                return
            if terminal is not None and terminal.modes is not None:
                self.attrs_before = terminal.modes.saved

        def _in_foreground(self) -> bool:
            """Wait, stopped, until the terminal is this process's (a viewer started with
            `&` came up blank and deaf at `fg`); False once the terminal has gone."""
            if not os.isatty(self.fileno):
                return True
            while True:
                try:
                    if os.tcgetpgrp(self.fileno) == os.getpgrp():
                        return True
                except OSError:
                    # not this session's terminal (no job control to wait for), or hung up
                    # (the shell, the SSH link, is gone: its modes can no longer be read)
                    try:
                        termios.tcgetattr(self.fileno)
                    except termios.error:
                        return False
                    return True
                if _orphaned():
                    return False  # `( cuzk-tui LOG & )`: no shell can bring it to the front
                os.kill(os.getpid(), signal.SIGSTOP)  # as a background job is: until `fg`

        def write(self, data: str) -> None:
            """Textual's, and nothing where there is no terminal to write to (application
            mode never entered: see start_application_mode)."""
            if self._writer_thread is not None:
                super().write(data)

        def _get_terminal_size(self) -> tuple[int, int]:
            """The terminal's own size: COLUMNS and LINES are a shell's variables, often
            stale or exported from another window, and must not override it."""
            for fd in (self._file.fileno() if self._file is not None else -1, self.fileno):
                with contextlib.suppress(OSError, ValueError):
                    columns, lines = os.get_terminal_size(fd)
                    if columns > 0 and lines > 0:
                        return columns, lines
            return super()._get_terminal_size()

        def run_input_thread(self) -> None:
            """Textual's key loop on a parser that drops a sequence it cannot read; and
            begun again should the parser fail some other way (the input read with that
            failure is lost, the viewer goes on)."""
            while not self.exit_event.is_set():
                try:
                    self._read_keys()
                    return
                except (ValueError, OverflowError):
                    continue

        def _read_keys(self) -> None:
            selector = selectors.SelectSelector()
            selector.register(self.fileno, selectors.EVENT_READ)
            parser = tolerant_parser(self._debug)
            decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
            try:
                while not self.exit_event.is_set():
                    for _key, mask in selector.select(0.1):
                        if mask & selectors.EVENT_READ:
                            data = os.read(self.fileno, 4096)
                            if not data:
                                return  # the end of the input: no more keys, no busy loop
                            for event in parser.feed(decode(data)):
                                self.process_message(event)
                    for event in parser.tick():
                        self.process_message(event)
            finally:
                selector.close()

        def suspend_application_mode(self) -> None:
            """Leave application mode once, however many stops ask it to."""
            if not self._suspended:
                self._suspended = True
                super().suspend_application_mode()

        def resume_application_mode(self) -> None:
            """Enter application mode again only if a suspend left it: a SIGCONT after a
            SIGSTOP (which cannot be caught, so nothing was suspended) used to start a second
            writer and key thread each time, and `q` then never ended the process."""
            if self._suspended:
                self._suspended = False
                super().resume_application_mode()

        def _sigcont_application(self, *args: Any) -> None:
            """Continued: after a suspend, as Textual does; after a SIGSTOP the threads still
            run, but the shell may have put the terminal back in line mode meanwhile: set the
            modes again and redraw."""
            if self._suspended:
                super()._sigcont_application(*args)
                return
            with contextlib.suppress(termios.error):
                attrs = termios.tcgetattr(self.fileno)
                attrs[tty.LFLAG] = self._patch_lflag(attrs[tty.LFLAG])
                attrs[tty.IFLAG] = self._patch_iflag(attrs[tty.IFLAG])
                attrs[tty.CC][termios.VMIN] = 1
                termios.tcsetattr(self.fileno, termios.TCSANOW, attrs)
            # the shell may have written over the screen meanwhile: draw all of it again (a
            # resize to the same size would be ignored)
            self._app.call_later(self._app.refresh, repaint=True, layout=True)

    return HangupSafeDriver


def _orphaned() -> bool:
    """This process's group has no parent in another group of its session, so no shell's
    `fg` can bring it to the front (the parent of `( cmd & )` has gone; init is in a
    session of its own). A parent in the same group says nothing: not orphaned, as far as
    can be told."""
    try:
        return os.getsid(os.getppid()) != os.getsid(0)
    except OSError:
        return True  # the parent is gone already


# `esc` and one of these in one read: Textual's parser maps the pair to a character (the
# option key of a macOS terminal: `esc 1` is ¡), which nothing here binds or means
ESC_AS_CHARACTER = frozenset("1234567890-=§")
# what follows `esc` in the escape sequences a terminal sends (CSI, OSC, DCS, APC, PM, SOS,
# ST; SS3's `O` is a letter): a sequence cut between two reads, or one Textual cannot read,
# is given back a character at a time after `esc`, as if typed with it, and must not
# become an `escape` that closes the window on top
SEQUENCE_STARTS = frozenset("[]P_^X\\")


def tolerant_parser(debug: bool = False) -> Parser[Message]:
    """Textual's terminal input parser, except that a sequence it cannot read is dropped, and
    `esc` typed with a key that is not a letter is both keys.

    `ESC[55555555u` (a key code past the last character) made it raise ValueError from
    chr(), `ESC[99999999999999999999999A` OverflowError, and a parser that raised once is
    finished: the key thread ended and took the viewer down with a traceback.

    `esc` and the next key in one read (typed fast, over SSH) are one key to the parser: alt
    and the key. A letter keeps the alt (the app makes it the two keys unless something
    binds the alt key: `escape_and_key`); any other key lost the `esc` (`g esc / q` quit
    where `/` opens the find box once the gap list has closed), or the pair became a
    character (`esc 1`: ¡). They are `escape`, then the key. `esc b` and `esc f` (word left
    and right in a text box), `esc tab` (shift+tab) and `esc backspace` (delete a word) stay
    the keys they are read as, and so does `esc` with what begins an escape sequence
    (SEQUENCE_STARTS: `esc [` is `[`, as Textual reads it).
    """
    from textual._xterm_parser import XTermParser  # the parser the driver uses; no seam

    escape = events.Key("escape", "\x1b")

    class TolerantParser(XTermParser):
        def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterator[events.Key]:
            if (
                alt
                and len(sequence) == 1
                and not sequence.isalpha()
                and sequence not in SEQUENCE_STARTS
            ):
                yield escape.copy()  # a key reissued after an `esc` it did not read with it
                alt = False
            elif len(sequence) == 2 and sequence[0] == "\x1b" and sequence[1] in ESC_AS_CHARACTER:
                yield escape.copy()
                sequence = sequence[1]
            try:
                keys = list(super()._sequence_to_key_events(sequence, alt))
            except (ValueError, OverflowError):
                keys = [events.Key(Keys.Ignore, sequence)]  # read, and ignored
            yield from keys

    return TolerantParser(debug)


def exit_watchdog(clean_up: Callable[[], None] | None, code: int) -> None:
    """Start a timer that, if the process still runs after EXIT_GRACE_S, removes what the run
    made and ends the process with `code` (a signal asked it to end and something hangs)."""

    def last_resort() -> None:
        try:
            if clean_up is not None:
                clean_up()
        finally:
            os._exit(code)

    timer = threading.Timer(EXIT_GRACE_S, last_resort)
    timer.daemon = True
    timer.start()
