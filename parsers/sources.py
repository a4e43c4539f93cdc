"""Opening a log for reading whether it is plain, gzip- or zstd-compressed (by its magic bytes)."""

from __future__ import annotations

import gzip
import importlib
import os
from pathlib import Path
from typing import BinaryIO

from parsers.regular import open_regular

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


UTF16_HINT = "this file is UTF-16: convert it with iconv -f UTF-16 -t UTF-8"
HEAD_BYTES = 64


def utf16_hint(head: bytes) -> str | None:
    """The sentence for a log saved as UTF-16 (a Windows editor, PowerShell's `>`), from its
    first bytes: a UTF-16 byte order mark, or a NUL in every other byte of ASCII text."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return UTF16_HINT
    pairs = len(head) // 2
    if pairs < 4:
        return None
    for zero in (0, 1):  # big- or little-endian
        nul = sum(1 for k in range(pairs) if head[2 * k + zero] == 0)
        other = sum(1 for k in range(pairs) if head[2 * k + 1 - zero] != 0)
        if nul == pairs and other >= pairs * 3 // 4:
            return UTF16_HINT
    return None


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


class UnreadableLog(OSError):
    """The file is compressed in a way this installation cannot read."""


def compression(path: Path) -> str | None:
    """`"gzip"`, `"zstd"` or None (plain), from the file's first bytes, not its name."""
    head = _head(path, 4)
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return None


def open_log(path: Path) -> BinaryIO:
    """The log's bytes, decompressed when it is compressed (read-only).

    Raises:
        UnreadableLog: a zstd file without the optional `zstandard` package.
        OSError: the file cannot be opened.
    """
    kind = compression(path)
    if kind == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if kind == "zstd":
        try:
            zstandard = importlib.import_module("zstandard")
        except ImportError:
            raise UnreadableLog(
                f"{path.name} is zstd-compressed: install the optional zstandard package "
                "(pip install 'cuzk-tui[zstd]') or decompress it with zstd -d"
            ) from None
        raw = _open_binary(path)
        reader: BinaryIO = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return reader
    return _open_binary(path)
