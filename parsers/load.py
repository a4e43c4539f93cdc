"""One way from a log the user names to a finished model.

A source is a path (a plain or compressed file), `-` (standard input) or bytes (the demo).
Every failure to open or read one is raised as a `CuzkError` that says it in one line
(parsers/errors.py); nothing here ends the process. The module itself imports only what
checking a path needs: the report starts its read (`read_ahead`) before the analysis, numpy
and the model are loaded.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from parsers._core import CoreError
from parsers.errors import CoreFailure, CuzkError
from parsers.regular import open_regular
from parsers.sources import READ_ERRORS, UnreadableLog, compression, ignored_bytes, open_log

if TYPE_CHECKING:
    from parsers.builder import LogBuilder
    from parsers.model import LogModel
    from parsers.rawlines import LineReader
    from parsers.readahead import ReadAhead

CHUNK_BYTES = 1 << 22
STDIN_NAME = "stdin"


# How a log reaches standard input, said where it is the terminal: the command as given,
# its log piped in (`try` names the pipe's command for the mode).
STDIN_PIPE = "journalctl -u cuzk | cuzk-tui - ..."


def check_stdin(pipe: str = STDIN_PIPE) -> None:
    """Standard input open for reading, and not the terminal: a log typed or pasted there
    is not what `-` is for, and its end (ctrl+d) is not the end of a file (`pipe`: how the
    error says to give it a log).

    Raises: CuzkError: it is closed (`<&-`), open for writing only (`0>file`) or the
    terminal.
    """
    closed = "standard input is closed: nothing to read (give a log file)"
    if sys.stdin is None:  # closed when Python started: descriptor 0 may be another file now
        raise CuzkError(closed)
    try:
        flags = fcntl.fcntl(0, fcntl.F_GETFL)
    except OSError:
        raise CuzkError(closed) from None
    if flags & os.O_ACCMODE == os.O_WRONLY:
        raise CuzkError(
            "standard input is open for writing only: nothing to read (give a log file)"
        )
    if os.isatty(0):
        raise CuzkError(f"- reads the log from standard input, which is the terminal (try: {pipe})")


def _path_error(raw: str, path: Path, exc: OSError) -> CuzkError:
    if exc.errno == errno.ELOOP:
        return CuzkError(f"symlink loop: {raw}")
    if exc.errno == errno.ENOENT and path.is_symlink():
        return CuzkError(f"no such file: {raw} (a symlink to nothing)")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return CuzkError(f"no such file: {raw}")
    if exc.errno == errno.EACCES:
        return CuzkError(f"cannot read (permission denied): {raw}")
    return CuzkError(f"cannot open {raw}: {exc.strerror or exc}")


def check_log_path(raw: str) -> Path:
    """The path of a readable regular file.

    Raises: CuzkError: it does not exist, is a folder, a FIFO or a device, or cannot be read.
    """
    path = Path(raw)
    try:
        os.stat(path)
    except OSError as exc:
        raise _path_error(raw, path, exc) from None
    if path.is_dir():
        raise CuzkError(f"is a directory, not a log: {raw}")
    if not path.is_file():
        raise CuzkError(f"not a regular file: {raw} (for a pipe, use: ... | cuzk-tui -)")
    if not os.access(path, os.R_OK):
        raise CuzkError(f"cannot read (permission denied): {raw}")
    try:
        os.close(open_regular(path))  # no blocking open, were it a FIFO by now
    except OSError as exc:
        raise CuzkError(f"cannot open {raw}: {exc.strerror or exc}") from None
    return path


def _read_error(what: str, exc: BaseException) -> CuzkError:
    """What reading `what` raised, as one line (EOFError: a compressed file cut short)."""
    if isinstance(exc, CuzkError):
        return exc
    return CuzkError(f"cannot read {what}: {getattr(exc, 'strerror', None) or exc}")


def read_ahead(raw: str, workers_per_gpu: int | None) -> ReadAhead | None:
    """Start reading the plain log file `raw` in the core at once (None: standard input or a
    compressed file, which `load_log` reads).

    Raises: CuzkError: the path cannot be read.
    """
    from parsers.readahead import ReadAhead

    if raw == "-":
        return None
    path = check_log_path(raw)
    try:
        if compression(path) is not None:  # reads the file's first bytes
            return None
        return ReadAhead(path, workers_per_gpu)
    except OSError as exc:
        raise _read_error(raw, exc) from None


def fed_builder(stream: BinaryIO, source: str, workers_per_gpu: int | None) -> LogBuilder:
    """A builder fed everything a binary stream holds."""
    from parsers.builder import LogBuilder

    builder = LogBuilder(source=source, workers_per_gpu=workers_per_gpu)
    while chunk := stream.read(CHUNK_BYTES):
        builder.feed(chunk)
    return builder


def read_stream(
    stream: BinaryIO, source: str, workers_per_gpu: int | None = None, drawn: bool = True
) -> LogModel:
    """Parse everything a binary stream holds and return its finished model (`drawn`: with
    the lanes and the synthesis steps; the JSON report does without them).

    Raises: OSError and READ_ERRORS, as the stream's reads raise them.
    """
    return fed_builder(stream, source, workers_per_gpu).build(release=True, drawn=drawn)


def read_log(path: Path, workers_per_gpu: int | None = None, drawn: bool = True) -> LogModel:
    """Parse a whole log file (read-only, decompressed if need be) and return its finished
    model (`drawn`: as for `read_stream`).

    Raises: UnreadableLog (a compression this installation cannot read), READ_ERRORS.
    """
    with open_log(path) as fh:
        model = read_stream(fh, path.name, workers_per_gpu, drawn)
        note = ignored_bytes(fh)
    return model if note is None else dataclasses.replace(model, read_note=note)


def read_runs(path: Path, workers_per_gpu: int | None = None) -> list[LogModel]:
    """As `read_log`, each run's finished model apart (the daemon restarted between them; one
    model when it did not)."""
    with open_log(path) as fh:
        models = fed_builder(fh, path.name, workers_per_gpu).build_runs()
        note = ignored_bytes(fh)
    if note is not None:  # the bytes after the last run's lines
        models[-1] = dataclasses.replace(models[-1], read_note=note)
    return models


def model_of_bytes(
    data: bytes, source: str, workers_per_gpu: int | None = None, drawn: bool = True
) -> LogModel:
    """The finished model of a log held in memory (the demo)."""
    from parsers.builder import LogBuilder

    builder = LogBuilder(source=source, workers_per_gpu=workers_per_gpu)
    builder.feed(data)
    try:
        return builder.build(release=True, drawn=drawn)
    except CoreError as exc:
        raise CoreFailure(exc) from None


def load_log(
    raw: str,
    workers_per_gpu: int | None = None,
    drawn: bool = True,
    ahead: ReadAhead | None = None,
) -> LogModel:
    """The finished model of the log `raw` names (`-`: standard input; `ahead`: that log,
    being read by `read_ahead`). `drawn`: as for `read_stream`.

    Raises: CuzkError: the log cannot be opened or read, or the core failed on it.
    """
    try:
        if ahead is not None:
            from parsers.builder import LogBuilder

            try:
                scanner = ahead.scanner()
                builder = LogBuilder(ahead.path.name, workers_per_gpu, scanner)
                builder.read_tracing(ahead.path)  # no TIMELINE line: its jobs, from the tracing
            except OSError as exc:
                raise _read_error(raw, exc) from None
            return builder.build(release=True, drawn=drawn)
        if raw == "-":
            check_stdin()
            try:
                return read_stream(sys.stdin.buffer, STDIN_NAME, workers_per_gpu, drawn=drawn)
            except OSError as exc:
                raise _read_error("standard input", exc) from None
        path = check_log_path(raw)
        try:
            return read_log(path, workers_per_gpu=workers_per_gpu, drawn=drawn)
        except READ_ERRORS as exc:
            raise _read_error(raw, exc) from None
    except CoreError as exc:
        raise CoreFailure(exc) from None


def load_runs(
    raw: str, workers_per_gpu: int | None, apart: bool = False
) -> tuple[list[LogModel], LineReader | None]:
    """A finished model of one log (`apart`: one per run, when the daemon restarted in it)
    and a reader of its raw lines (None: not re-readable: standard input, a compressed file,
    whose line numbers are those of its text).

    Raises: CuzkError, as `load_log`.
    """
    from parsers.rawlines import LineReader

    if raw == "-":  # alone: standard input is never put beside other logs
        return [load_log(raw, workers_per_gpu)], None
    path = check_log_path(raw)
    try:
        models = read_runs(path, workers_per_gpu) if apart else [read_log(path, workers_per_gpu)]
        packed = compression(path)
    except UnreadableLog:
        raise
    except READ_ERRORS as exc:
        raise _read_error(raw, exc) from None
    except CoreError as exc:
        raise CoreFailure(exc) from None
    return models, None if packed is not None else LineReader(path=path)
