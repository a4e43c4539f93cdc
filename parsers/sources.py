"""Opening a log for reading whether it is plain or compressed (gzip, zstd, bzip2, xz: by its
magic bytes), and saying when its encoding is one the parser cannot read (UTF-16, UTF-32)."""

from __future__ import annotations

import bz2
import importlib
import io
import lzma
import os
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from parsers.errors import CuzkError
from parsers.regular import open_regular

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"


UTF16_HINT = "this file is UTF-16: convert it with iconv -f UTF-16 -t UTF-8"
UTF32_HINT = "this file is UTF-32: convert it with iconv -f UTF-32 -t UTF-8"
HEAD_BYTES = 64


def _nul_every(head: bytes, width: int) -> bool:
    """ASCII text in `width`-byte characters, either byte order: in every character all the
    bytes but one are NUL, and most characters are not NUL."""
    units = len(head) // width
    if units < 4:
        return False
    chars = [head[width * k : width * (k + 1)] for k in range(units)]
    for low in (0, width - 1):  # little- or big-endian: where the character's byte is
        zeros = all(c[:low] + c[low + 1 :] == bytes(width - 1) for c in chars)
        if zeros and sum(1 for c in chars if c[low]) >= units * 3 // 4:
            return True
    return False


def utf16_hint(head: bytes) -> str | None:
    """The sentence for a log saved as UTF-16 or UTF-32 (a Windows editor, PowerShell's `>`),
    from its first bytes: a byte order mark, or a NUL in every other byte of ASCII text (in
    three bytes of every four: UTF-32)."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")) or _nul_every(head, 4):
        return UTF32_HINT
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or _nul_every(head, 2):
        return UTF16_HINT
    return None


# the command that decompresses each compression to standard output
DECOMPRESSORS = {"gzip": "zcat", "zstd": "zstdcat", "bzip2": "bzcat", "xz": "xzcat"}


def head_compression(head: bytes) -> str | None:
    """`"gzip"`, `"zstd"`, `"bzip2"`, `"xz"` or None (plain), from a stream's first bytes."""
    return next((kind for kind, magic in MAGICS.items() if head.startswith(magic)), None)


def stdin_hint(head: bytes) -> str | None:
    """The sentence for standard input whose first bytes say why it shows nothing: UTF-16
    or UTF-32 (`utf16_hint`), or compressed data (a file is read compressed as it is;
    standard input is read as text)."""
    kind = head_compression(head)
    if kind is not None:
        return (
            f"standard input is {kind}-compressed: pipe it through {DECOMPRESSORS[kind]} "
            "first, or give the file's name (a compressed file is read as it is)"
        )
    return utf16_hint(head)


def _open_binary(path: Path) -> BinaryIO:
    """The file, read-only, opened without blocking on a FIFO put in its place."""
    return os.fdopen(open_regular(path), "rb")


def _head(path: Path, n: int) -> bytes:
    """The file's first `n` bytes at most. A file with nothing to read yet (`/proc/kmsg`: its
    non-blocking read returns None rather than bytes) has no head."""
    with _open_binary(path) as fh:
        return fh.read(n) or b""


def file_hint(path: Path) -> str | None:
    """utf16_hint of a file's first bytes (None when it cannot be read)."""
    try:
        return utf16_hint(_head(path, HEAD_BYTES))
    except OSError:
        return None


class UnreadableLog(CuzkError, OSError):
    """The file is compressed in a way this installation cannot read."""


# what reading a log may raise, besides OSError: a compressed file cut short (EOFError), or
# corrupt data: xz's LZMAError, zlib.error (the gzip readers' own are OSErrors), bzip2's and
# the gzip and zstd readers' OSError
READ_ERRORS: tuple[type[Exception], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)

MAGICS = {"gzip": GZIP_MAGIC, "zstd": ZSTD_MAGIC, "bzip2": BZIP2_MAGIC, "xz": XZ_MAGIC}


def compression(path: Path) -> str | None:
    """`"gzip"`, `"zstd"`, `"bzip2"`, `"xz"` or None (plain), from the file's first bytes,
    not its name."""
    return head_compression(_head(path, 6))


ZSTD_FEED_BYTES = 256  # compressed bytes given to the decompressor at a time (see _ZstdRaw)
ZSTD_READ_BYTES = 1 << 16


class _Decompressed(io.RawIOBase):
    """A compressed file's decompressed bytes, read a piece at a time: `_fill` puts the next
    in `_output` (empty: the end), and what a read leaves of it waits there."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._output = memoryview(b"")

    def readable(self) -> bool:
        return True

    def _fill(self) -> None:
        raise NotImplementedError

    def readinto(self, buffer: Any) -> int:
        if not self._output:
            self._fill()
        n = min(len(buffer), len(self._output))
        buffer[:n] = self._output[:n]
        self._output = self._output[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


class _ZstdRaw(_Decompressed):
    """A zstd file's decompressed bytes, as `zstd -d` reads them: every frame, and EOFError when
    the file ends inside one (a copy cut short), where zstandard's stream reader just stops.

    The decompressor is given ZSTD_FEED_BYTES at a time: what one call gives back is bounded
    by that times zstd's largest ratio (about 32 000: 8 MB), whatever the file holds.
    """

    def __init__(self, raw: BinaryIO, zstandard: Any) -> None:
        super().__init__(raw)
        self._new = zstandard.ZstdDecompressor().decompressobj
        self._error: type[Exception] = zstandard.ZstdError
        self._frame = self._new()
        self._in_frame = False  # bytes of a frame were given since the last one ended
        self._input = memoryview(b"")

    def _fill(self) -> None:
        while not self._output:
            if not self._input:
                self._input = memoryview(self._raw.read(ZSTD_READ_BYTES) or b"")
                if not self._input:
                    if self._in_frame:
                        raise EOFError("Compressed file ended before the end of its zstd frame")
                    return
            piece, self._input = self._input[:ZSTD_FEED_BYTES], self._input[ZSTD_FEED_BYTES:]
            self._in_frame = True
            try:
                self._output = memoryview(self._frame.decompress(piece))
            except self._error as exc:  # corrupt data: an OSError, as _GzipRaw's
                raise OSError(f"not valid zstd data ({exc})") from None
            if self._frame.eof:  # a frame ended: what follows it begins the next
                self._input = memoryview(self._frame.unused_data + bytes(self._input))
                self._frame, self._in_frame = self._new(), False


GZIP_READ_BYTES = 1 << 16
GZIP_OUT_BYTES = 1 << 20  # decompressed bytes one call gives back at most


class _GzipRaw(_Decompressed):
    """A gzip file's decompressed bytes as `gzip -d` reads them: every member, the NUL
    padding after one skipped, and EOFError when the file ends inside one. Bytes after the
    last member that begin no other end the data (`ignored` then says so, as `gzip -d`
    warns "trailing garbage ignored"), where the gzip module refuses the whole file."""

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__(raw)
        self._member = self._new()
        self._started = False  # bytes of the member were given since the last one ended
        self._input = b""
        self._done = False
        self.ignored: str | None = None

    @staticmethod
    def _new() -> Any:
        return zlib.decompressobj(16 + zlib.MAX_WBITS)  # a gzip header and trailer

    def _more(self) -> bool:
        """Read more of the file (False: at its end)."""
        piece = self._raw.read(GZIP_READ_BYTES)
        self._input += piece
        return bool(piece)

    def _next_member(self) -> None:
        """After a member: the next one, or the end of the data."""
        while True:
            self._input = self._input.lstrip(b"\0")
            if len(self._input) >= len(GZIP_MAGIC) or not self._more():
                break
        if not self._input:
            self._done = True
        elif self._input.startswith(GZIP_MAGIC):
            self._member, self._started = self._new(), False
        else:
            self._done = True
            self.ignored = "trailing garbage after its gzip data ignored (as gzip -d does)"

    def _fill(self) -> None:
        # decompressed GZIP_OUT_BYTES at most at a time, whatever the caller's buffer: what
        # is left over waits in `_output` (a small buffer would have the input's unread
        # rest copied at every call)
        while not self._output and not self._done:
            if not self._input and not self._more():
                if self._started:
                    raise EOFError(
                        "Compressed file ended before the end-of-stream marker was reached"
                    )
                self._done = True
                return
            piece, self._input = self._input, b""
            self._started = True
            try:
                self._output = memoryview(self._member.decompress(piece, GZIP_OUT_BYTES))
            except zlib.error as exc:
                raise OSError(f"not valid gzip data ({exc})") from None
            self._input = self._member.unconsumed_tail
            if self._member.eof:
                self._input = self._member.unused_data + self._input
                self._next_member()


def ignored_bytes(stream: BinaryIO) -> str | None:
    """What reading a log's stream left out, once read to its end (None: nothing)."""
    note: str | None = getattr(getattr(stream, "raw", None), "ignored", None)
    return note


def open_log(path: Path) -> BinaryIO:
    """The log's bytes, decompressed when it is compressed (read-only).

    Reading it raises EOFError when a compressed file is cut short.

    Raises:
        UnreadableLog: a zstd file without the optional `zstandard` package.
        OSError: the file cannot be opened.
    """
    kind = compression(path)
    if kind == "gzip":
        return io.BufferedReader(_GzipRaw(_open_binary(path)))
    if kind == "bzip2":
        return bz2.open(path, "rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.open(path, "rb")  # type: ignore[return-value]
    if kind == "zstd":
        try:
            zstandard = importlib.import_module("zstandard")
        except ImportError:
            raise UnreadableLog(
                f"{path.name} is zstd-compressed: install the optional zstandard package "
                "(pip install 'cuzk-tui[zstd]') or decompress it with zstd -d"
            ) from None
        return io.BufferedReader(_ZstdRaw(_open_binary(path), zstandard))
    return _open_binary(path)
