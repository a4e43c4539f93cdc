"""The terminal's modes while the viewer starts.

Between the command's start and the viewer's taking the terminal (a few tenths of a second;
seconds while several logs are read), the terminal still echoed: a `q` typed then was written
onto the shell's line, though the viewer read it and ended. The command turns the echo off as
it starts, and puts the user's modes back as soon as it knows it opens no viewer, and
however it ends; the viewer puts them back whenever it gives the terminal back (ctrl+z, the
end). What was typed meanwhile waits for the viewer.
"""

from __future__ import annotations

import contextlib
import os
import signal
import termios
from typing import Any

LFLAG = 3  # termios.tcgetattr's index of the local modes (tty.LFLAG)
# the signals that end the command, the viewer as the reports (ctrl+c aside): each path
# takes them so that the terminal's modes and the files it made are put right on the way out
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Modes:
    """The terminal's modes as the user had them, and a descriptor of that terminal (a
    plain class: the command loads no dataclasses before its report's read starts)."""

    __slots__ = ("_back", "fd", "saved")

    def __init__(self, fd: int, saved: list[Any]) -> None:
        self.fd = fd
        self.saved = saved
        self._back = False

    def put_back(self) -> None:
        """Set the terminal's modes to the user's again, once: later, a pager reading the
        report may have set modes of its own."""
        if self._back:
            return
        self._back = True
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self.fd, termios.TCSANOW, self.saved)


def unechoed() -> Modes | None:
    """Turn the echo of the terminal that standard input, error or output is off; its modes
    before (None: none of them is a terminal, the command runs in the background, or its
    modes cannot be read or set)."""
    for fd in (0, 2, 1):
        if not os.isatty(fd):
            continue
        try:
            if os.tcgetpgrp(fd) != os.getpgrp():
                return None  # a background job: setting them would stop it (SIGTTOU)
            saved = termios.tcgetattr(fd)
            quiet = termios.tcgetattr(fd)
            quiet[LFLAG] &= ~termios.ECHO
            termios.tcsetattr(fd, termios.TCSANOW, quiet)
        except (termios.error, OSError):
            return None
        return Modes(fd, saved)
    return None
