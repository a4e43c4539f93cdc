"""The terminal going away (an SSH connection dropped) must end the viewer, never hang it.

Textual writes the screen from a thread that dies on the first failed write; the app's later
writes then fill that thread's bounded queue and block for ever. Once the terminal has hung
up, writes fail with EIO: here they are dropped instead, so the app ends as `q` ends it. And
whatever ends the app by a signal, a watchdog makes sure the process is gone a few seconds
later, its temporary files removed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import IO, Any

from textual.driver import Driver

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


def hangup_safe(driver: type[Driver]) -> type[Driver]:
    """Textual's POSIX terminal driver writing through a `TerminalOut` (others as they are)."""
    from textual.drivers.linux_driver import LinuxDriver  # POSIX only

    if driver is not LinuxDriver:
        return driver

    class HangupSafeDriver(LinuxDriver):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if self._file is not None:
                self._file = TerminalOut(self._file)  # type: ignore[assignment]

    return HangupSafeDriver


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
