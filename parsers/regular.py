"""Opening a log read-only, and only if it is a regular file (never a FIFO, which would
wait for a writer for ever). Imports nothing heavy: the report opens its log first thing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


class NotARegularFile(OSError):
    """The path names something that is not a regular file."""


def open_regular(path: Path) -> int:
    """A read-only descriptor on a regular file.

    O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for ever (and
    the viewer's `q` with it); the file type is checked on the open descriptor, so a path
    swapped between a stat and the open cannot slip a FIFO or a directory in.

    Raises:
        NotARegularFile: a FIFO, a directory, a device, a socket.
        OSError: the path cannot be opened (missing, permission, a symlink loop).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        kind = kind_of(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    if kind is not None:
        os.close(fd)
        raise NotARegularFile(f"{path.name} is {kind}, not a log file")
    return fd
