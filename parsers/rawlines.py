"""Reading the raw log lines around a line number (for the inspector), without loading the log.

A sparse index (the byte offset and line number at the start of every block) is built
once, on first use, and extended as the file grows; finding a line then reads one block.
The core's index of the same log (parsers/linefacts.py), made as it read the log, is taken
instead of reading from the start, once the file's bytes where the core stopped are those
it read (a file replaced or truncated since is read as before). The log is only ever
opened for reading.
"""

from __future__ import annotations

import bisect
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from parsers.regular import open_regular

if TYPE_CHECKING:
    from parsers.linefacts import LineFacts, LineStarts

BLOCK_BYTES = 1 << 20


class RawLine(NamedTuple):
    """One physical line: its number, its bytes (cut to the limit asked for), its length."""

    number: int
    data: bytes
    length: int  # the whole line's length in bytes, without its newline

    @property
    def cut(self) -> bool:
        """Only the start of the line is in `data`."""
        return len(self.data) < self.length


class LineReader:
    """Raw lines of a log by physical line number (1-based).

    Args:
        path: the log file, or None when the log is held in memory.
        data: the log bytes when there is no file (the built-in demo).
    """

    def __init__(
        self, path: Path | None = None, data: bytes | None = None, facts: LineFacts | None = None
    ) -> None:
        self.path = path
        self.data = data
        self._offsets: list[int] = [0]  # byte offset where block k starts (a line start)
        self._first_line: list[int] = [1]  # the line number at that offset
        self._indexed_to = 0  # bytes indexed so far (always at a line start)
        # what the core noted of the log's lines, and the line starts last weighed for use
        self.facts = facts
        self._weighed: LineStarts | None = None

    def adopt(self, facts: LineFacts) -> None:
        """What the core noted of this log's lines as it read it (a newer model's). Its line
        starts are weighed at the next `lines`: taken only if the file still holds the bytes
        the core read."""
        self.facts = facts

    def reset(self) -> None:
        """The file was truncated or replaced: forget the index (the core's is weighed
        again: it may be of the new file)."""
        self._offsets, self._first_line, self._indexed_to = [0], [1], 0
        self._weighed = None

    def _take_core_index(self) -> None:
        """Start from the core's line starts when they reach past this index, and the file's
        bytes before where the core stopped reading are the last it read."""
        starts = self.facts.starts if self.facts is not None else None
        if starts is None or starts is self._weighed:
            return
        self._weighed = starts
        if starts.lines[-1] <= self._first_line[-1]:
            return  # this index reaches as far
        n = len(starts.signature)
        if self._read(starts.bytes_read - n, n) != starts.signature:
            return  # another file now, or rewritten: its own lines are counted
        self._offsets = list(starts.offsets)
        self._first_line = list(starts.lines)
        self._indexed_to = starts.offsets[-1]

    def _read(self, offset: int, size: int) -> bytes:
        if self.data is not None:
            return self.data[offset : offset + size]
        if self.path is None:
            return b""
        # never a blocking open: the path may have become a FIFO since the log was opened
        fd = open_regular(self.path)
        try:
            return os.pread(fd, size, offset)
        finally:
            os.close(fd)

    def _line_end(self, offset: int) -> int | None:
        """Where the line that goes on at `offset` ends (past its newline); None: unfinished."""
        while block := self._read(offset, BLOCK_BYTES):
            newline = block.find(b"\n")
            if newline >= 0:
                return offset + newline + 1
            offset += len(block)
        return None

    def _extend_index(self, upto_line: int) -> None:
        """Index blocks until one starts after `upto_line` (or the file ends)."""
        while self._first_line[-1] <= upto_line:
            block = self._read(self._indexed_to, BLOCK_BYTES)
            cut = block.rfind(b"\n")
            if cut < 0:
                # a line longer than a block still counts as one line: find where it ends
                end = self._line_end(self._indexed_to + len(block)) if block else None
                if end is None:
                    return  # no complete line after the index yet
                self._indexed_to = end
                self._offsets.append(end)
                self._first_line.append(self._first_line[-1] + 1)
                continue
            self._indexed_to += cut + 1
            self._offsets.append(self._indexed_to)
            self._first_line.append(self._first_line[-1] + block.count(b"\n", 0, cut + 1))

    def lines(self, first: int, last: int, limit: int = BLOCK_BYTES) -> list[RawLine]:
        """Lines `first`..`last` (inclusive, clipped to what exists), each cut to `limit` bytes."""
        first = max(first, 1)
        if last < first:
            return []
        self._take_core_index()
        self._extend_index(last)
        k = bisect.bisect_right(self._first_line, first) - 1
        offset, line_no = self._offsets[k], self._first_line[k]
        out: list[RawLine] = []
        while line_no <= last:
            block = self._read(offset, BLOCK_BYTES)
            if not block:
                break
            cut = block.rfind(b"\n")
            if cut < 0:
                end = self._line_end(offset + len(block))
                if end is None:
                    break  # an unfinished last line
                if line_no >= first:
                    out.append(RawLine(line_no, block[:limit], end - offset - 1))
                line_no += 1
                offset = end
                continue
            for raw in block[:cut].split(b"\n"):
                if first <= line_no <= last:
                    out.append(RawLine(line_no, raw[:limit], len(raw)))
                line_no += 1
                if line_no > last:
                    break
            offset += cut + 1
        return out
