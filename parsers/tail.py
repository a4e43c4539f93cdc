"""Following a log file as the daemon writes it: new bytes, truncation, rotation, deletion.

Every poll compares the read position with the file's size and the path's inode with
the open file's, so copytruncate and rename-and-recreate are both noticed. The file is
opened read-only; nothing is ever written to it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from parsers.regular import kind_of, open_regular

READ_BYTES = 8 << 20  # at most this much per poll, so a burst never blocks the caller long
# New bytes at least this many are a span for the caller to read (`LogTail.poll`)
SPAN_MIN_BYTES = 1 << 20
SIGNATURE_BYTES = 64  # the last bytes read, checked again on every poll


class TailState(Enum):
    """What happened to the file since the last poll."""

    GROWING = "growing"
    TRUNCATED = "truncated"  # shorter than what was read: a new run in the same file
    ROTATED = "rotated"  # the path names another file now
    DELETED = "deleted"  # the path is gone (what was read is kept)
    UNAVAILABLE = "unavailable"  # the path names no regular file now (a FIFO, a directory)


@dataclass(frozen=True, slots=True)
class Span:
    """New bytes of the open file, left for the caller to read: `length` bytes from `offset`
    of the descriptor `fd` (open until the next poll). What it could not read it gives back
    (`LogTail.give_back`)."""

    fd: int
    offset: int
    length: int
    before: bytes = field(default=b"", compare=False, repr=False)  # the signature at offset


@dataclass(frozen=True, slots=True)
class TailRead:
    """The result of one poll.

    `restart` is True when the bytes are the beginning of a new file (after truncation
    or rotation): whoever models the log must start over with them.
    """

    data: bytes
    state: TailState
    restart: bool = False
    more: bool = False  # more bytes are waiting (the read was capped)
    note: str = ""  # UNAVAILABLE: what the path names now, in words
    span: Span | None = None  # new bytes not read: the caller reads them (in place of data)

    @property
    def got(self) -> bool:
        """New bytes came, read or as a span."""
        return bool(self.data) or self.span is not None


class LogTail:
    """Reads what was appended to a file since the last poll.

    Args:
        path: the log.
        start_at_end: skip what the file already holds.
    """

    def __init__(self, path: Path, start_at_end: bool = False) -> None:
        self.path = path
        self._fd = open_regular(path)
        st = os.fstat(self._fd)
        self._ident = (st.st_dev, st.st_ino)
        self.position = st.st_size if start_at_end else 0
        self._signature = self._read_signature()

    def _read_signature(self, at: int | None = None) -> bytes:
        """The bytes just before `at` (the read position when None; empty at the start)."""
        at = self.position if at is None else at
        n = min(SIGNATURE_BYTES, at)
        return os.pread(self._fd, n, at - n) if n else b""

    def close(self) -> None:
        """Close the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def size(self) -> int:
        """The size of the open file."""
        return os.fstat(self._fd).st_size

    def read_again(self, chunk: int = READ_BYTES) -> Iterator[bytes]:
        """What was read of the open file so far, again from its first byte (a piece of
        `chunk` bytes at a time)."""
        end = self.position
        for at in range(0, end, chunk):
            data = os.pread(self._fd, min(chunk, end - at), at)
            if not data:
                return
            yield data

    def _read_available(self, limit: int, span_limit: int = 0) -> tuple[bytes, bool, Span | None]:
        size = os.fstat(self._fd).st_size
        left = size - self.position
        if span_limit and left >= SPAN_MIN_BYTES:
            # the caller reads them: the position and signature move past them now (a file
            # cut meanwhile reads short, and the next poll finds it shorter), both or
            # neither (a read error here moves nothing)
            span = Span(self._fd, self.position, min(left, span_limit), self._signature)
            self._signature = self._read_signature(span.offset + span.length)
            self.position = span.offset + span.length
            return b"", self.position < size, span
        want = min(left, limit)
        if want <= 0:
            return b"", False, None
        data = os.pread(self._fd, want, self.position)
        self.position += len(data)
        self._signature = (self._signature + data)[-SIGNATURE_BYTES:]
        return data, self.position < size, None

    def give_back(self, span: Span, taken: bytes | int = b"") -> None:
        """The caller read only the start of `span`, the last poll's (`taken`: those bytes,
        or how many): the rest is read at the next poll. Given the bytes, no read is made
        (the disk that failed the caller may fail it again); given a count, the signature
        is read again, and left empty (not checked at the next poll) if it cannot be."""
        if isinstance(taken, bytes):
            self.position = span.offset + len(taken)
            self._signature = (span.before + taken)[-SIGNATURE_BYTES:]
            return
        self.position = span.offset + min(taken, span.length)
        try:
            self._signature = self._read_signature()
        except OSError:
            self._signature = b""

    def _rewritten(self) -> bool:
        """Truncated and written again past where we were: the bytes we read changed."""
        n = len(self._signature)
        return n > 0 and os.pread(self._fd, n, self.position - n) != self._signature

    def poll(self, limit: int = READ_BYTES, span_limit: int = 0) -> TailRead:
        """Read new bytes and say what happened to the file.

        Args:
            limit: read at most this many bytes.
            span_limit: when at least SPAN_MIN_BYTES are new, read none: they are a span of
                at most this many bytes for the caller to read (0: always read them).
        """
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            data, more, span = self._read_available(limit, span_limit)
            return TailRead(data, TailState.DELETED, more=more, span=span)
        if (st.st_dev, st.st_ino) != self._ident:
            # rotated: finish the old file first, then switch to the new one
            data, more, span = self._read_available(limit, span_limit)
            if data or span:
                return TailRead(data, TailState.GROWING, more=True, span=span)
            kind = kind_of(st.st_mode)
            if kind is not None:
                # keep the old file open and look again later: a regular file may come back
                note = f"the log's path is now {kind}: waiting for a log file there"
                return TailRead(b"", TailState.UNAVAILABLE, note=note)
            fd = open_regular(self.path)  # OSError (permission): the caller says so, retries
            self.close()
            self._fd = fd
            fst = os.fstat(self._fd)
            self._ident = (fst.st_dev, fst.st_ino)
            self.position = 0
            self._signature = b""
            data, more, span = self._read_available(limit, span_limit)
            return TailRead(data, TailState.ROTATED, restart=True, more=more, span=span)
        if os.fstat(self._fd).st_size < self.position or self._rewritten():
            self.position = 0
            self._signature = b""
            data, more, span = self._read_available(limit, span_limit)
            return TailRead(data, TailState.TRUNCATED, restart=True, more=more, span=span)
        data, more, span = self._read_available(limit, span_limit)
        return TailRead(data, TailState.GROWING, more=more, span=span)
