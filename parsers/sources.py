"""Opening a log for reading whether it is plain, gzip- or zstd-compressed (by its magic bytes)."""

from __future__ import annotations

import gzip
import importlib
from pathlib import Path
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class UnreadableLog(OSError):
    """The file is compressed in a way this installation cannot read."""


def compression(path: Path) -> str | None:
    """`"gzip"`, `"zstd"` or None (plain), from the file's first bytes, not its name."""
    with path.open("rb") as fh:
        head = fh.read(4)
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
        raw = path.open("rb")
        reader: BinaryIO = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return reader
    return path.open("rb")
