"""Reading the raw log lines around a line number (for the inspector), without loading the log.

A sparse index (the byte offset and line number at the start of every block) is built
once, on first use, and extended as the file grows; finding a line then reads one block.
The core's index of the same log (parsers/linefacts.py), made as it read the log, is taken
instead of reading from the start, once the file's bytes where the core stopped are those
it read (a file replaced or truncated since is read as before). The log is only ever
opened for reading: for each read, or, for the log the viewer follows (`keep_open`), once
and held, so a log deleted (or renamed) while it is shown still gives its lines; `reset`
(the log truncated or replaced) holds the new file.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from parsers.regular import open_regular

if TYPE_CHECKING:
    from parsers.linefacts import LineFacts, LineStarts

BLOCK_BYTES = 1 << 20
CHUNK_BYTES = 1 << 20  # what `chunks` and `chunks_back` hand over at a time, about


class RawLine(NamedTuple):
    """One physical line: its number, its bytes (cut to the limit asked for), its length."""

    number: int
    data: bytes
    length: int  # the whole line's length in bytes, without its newline

    @property
    def cut(self) -> bool:
        """Only the start of the line is in `data`."""
        return len(self.data) < self.length


class _OpenFile:
    """A file descriptor, closed when the last reference goes."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class LineReader:
    """Raw lines of a log by physical line number (1-based).

    Args:
        path: the log file, or None when the log is held in memory.
        data: the log bytes when there is no file (the built-in demo).
        keep_open: hold the file open from now on (a log followed, deleted while shown,
            still gives its lines); not for a file this program removes itself (a pipe's
            spool), nor for logs read once (a process reading a thousand holds none).
    """

    def __init__(
        self,
        path: Path | None = None,
        data: bytes | None = None,
        facts: LineFacts | None = None,
        keep_open: bool = False,
    ) -> None:
        self.path = path
        self.data = data
        self._offsets: list[int] = [0]  # byte offset where block k starts (a line start)
        self._first_line: list[int] = [1]  # the line number at that offset
        self._indexed_to = 0  # bytes indexed so far (always at a line start)
        # what the core noted of the log's lines, and the line starts last weighed for use
        self.facts = facts
        self._weighed: LineStarts | None = None
        self._file: _OpenFile | None = None
        self._opening = threading.Lock()
        # a file of this program's own (a pipe's spool) is not held: removed to free the
        # disk (the spool would fill it), its blocks go back at once
        self.keep_open = keep_open
        if path is not None and keep_open:
            # opened now: a log deleted before its first line is read still gives its lines
            with contextlib.suppress(OSError):  # a FIFO too (NotARegularFile)
                self._open()

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
        self.close()
        if self.keep_open and self.path is not None:
            # the new file held at once: deleted before its first line is read, it still
            # gives its lines
            with contextlib.suppress(OSError):
                self._open()

    def close(self) -> None:
        """Let the file go (closed once no read holds it; the next read opens the path
        again)."""
        with self._opening:
            self._file = None

    def _open(self) -> _OpenFile:
        """The file, opened at the first read (never a blocking open: the path may have
        become a FIFO since the log was opened)."""
        with self._opening:
            if self._file is None:
                assert self.path is not None
                self._file = _OpenFile(open_regular(self.path))
            return self._file

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
        file = self._open()  # held while it is read: `close` on another thread waits for it
        if not self.keep_open:
            self.close()  # closed once read
        return os.pread(file.fd, size, offset)

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

    def line_count(self) -> int:
        """How many complete lines the log holds now (an unfinished last line is not one).

        With the core's index only what it had not read is read; without it, the whole
        file is counted once (the index is kept)."""
        self._take_core_index()
        self._extend_index(sys.maxsize)
        return self._first_line[-1] - 1

    def _start_of(self, line: int) -> tuple[int, int]:
        """The byte offset where `line` starts, and `line`; past the last complete line,
        where the complete lines end and the number the next line would have."""
        line = max(line, 1)
        self._take_core_index()
        self._extend_index(line)
        k = bisect.bisect_right(self._first_line, line) - 1
        offset, line_no = self._offsets[k], self._first_line[k]
        while line_no < line:
            block = self._read(offset, BLOCK_BYTES)
            if not block:
                break
            pos = 0
            while line_no < line and (newline := block.find(b"\n", pos)) >= 0:
                pos = newline + 1
                line_no += 1
            if line_no == line:
                return offset + pos, line_no
            if pos == 0:  # no newline in the block: a line longer than it
                end = self._line_end(offset + len(block))
                if end is None:
                    break
                offset, line_no = end, line_no + 1
            else:
                offset += pos
        return offset, line_no

    def chunks(self, first: int, size: int = CHUNK_BYTES) -> Iterator[tuple[int, bytes]]:
        """Whole lines from line `first` to the last complete one, about `size` bytes at a
        time: (the number of the chunk's first line, its lines, each ending in a newline).

        A line longer than `size` comes alone, as its first `size` bytes and a newline. The
        file is read as the chunks are taken: a caller may stop at any one.
        """
        offset, line_no = self._start_of(first)
        while block := self._read(offset, size):
            cut = block.rfind(b"\n")
            if cut < 0:
                end = self._line_end(offset + len(block))
                if end is None:
                    return  # an unfinished last line
                yield line_no, block + b"\n"
                offset, line_no = end, line_no + 1
                continue
            yield line_no, block[: cut + 1]
            line_no += block.count(b"\n", 0, cut + 1)
            offset += cut + 1

    def chunks_back(self, last: int, size: int = CHUNK_BYTES) -> Iterator[tuple[int, bytes]]:
        """Whole lines from line `last` back to line 1, a stretch between two of the index's
        line starts at a time, last stretch first: (the number of its first line, its lines,
        each ending in a newline). A stretch longer than `size` is read as `chunks` reads
        it (its lines longer than `size` cut) and handed over in pieces, last first."""
        end_offset, end_line = self._start_of(last + 1)
        end_line = min(end_line, last + 1)
        while end_line > 1:
            k = bisect.bisect_left(self._first_line, end_line) - 1
            offset, line_no = self._offsets[k], self._first_line[k]
            if end_offset - offset <= size:
                yield line_no, self._read(offset, end_offset - offset)
            else:
                pieces: list[tuple[int, bytes]] = []
                for start, chunk in self.chunks(line_no, size):
                    if start >= end_line:
                        break
                    over = start + chunk.count(b"\n") - end_line
                    if over > 0:  # the chunk runs past the stretch: keep its first lines
                        chunk = b"\n".join(chunk.split(b"\n")[: end_line - start]) + b"\n"
                    pieces.append((start, chunk))
                yield from reversed(pieces)
            end_offset, end_line = offset, line_no
