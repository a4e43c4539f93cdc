"""Reading the raw log lines around a line number (for the inspector), without loading the log.

A sparse index (the byte offset and line number at the start of every block) is built
once, on first use, and extended as the file grows; finding a line then reads one block.
The log is only ever opened for reading.
"""

from __future__ import annotations

import bisect
from pathlib import Path

BLOCK_BYTES = 1 << 20


class LineReader:
    """Raw lines of a log by physical line number (1-based).

    Args:
        path: the log file, or None when the log is held in memory.
        data: the log bytes when there is no file (the built-in demo).
    """

    def __init__(self, path: Path | None = None, data: bytes | None = None) -> None:
        self.path = path
        self.data = data
        self._offsets: list[int] = [0]  # byte offset where block k starts (a line start)
        self._first_line: list[int] = [1]  # the line number at that offset
        self._indexed_to = 0  # bytes indexed so far (always at a line start)

    def reset(self) -> None:
        """The file was truncated or replaced: forget the index."""
        self._offsets, self._first_line, self._indexed_to = [0], [1], 0

    def _read(self, offset: int, size: int) -> bytes:
        if self.data is not None:
            return self.data[offset : offset + size]
        if self.path is None:
            return b""
        with self.path.open("rb") as fh:
            fh.seek(offset)
            return fh.read(size)

    def _extend_index(self, upto_line: int) -> None:
        """Index blocks until one starts after `upto_line` (or the file ends)."""
        while self._first_line[-1] <= upto_line:
            block = self._read(self._indexed_to, BLOCK_BYTES)
            cut = block.rfind(b"\n")
            if cut < 0:
                return  # no complete line after the index yet
            self._indexed_to += cut + 1
            self._offsets.append(self._indexed_to)
            self._first_line.append(self._first_line[-1] + block.count(b"\n", 0, cut + 1))

    def lines(self, first: int, last: int) -> list[tuple[int, bytes]]:
        """Lines `first`..`last` (inclusive, clipped to what exists) as (number, bytes)."""
        first = max(first, 1)
        if last < first:
            return []
        self._extend_index(last)
        k = bisect.bisect_right(self._first_line, first) - 1
        offset, line_no = self._offsets[k], self._first_line[k]
        out: list[tuple[int, bytes]] = []
        while line_no <= last:
            block = self._read(offset, BLOCK_BYTES)
            if not block:
                break
            cut = block.rfind(b"\n")
            if cut < 0:
                break
            for raw in block[:cut].split(b"\n"):
                if first <= line_no <= last:
                    out.append((line_no, raw))
                line_no += 1
                if line_no > last:
                    break
            offset += cut + 1
        return out
