"""The report written to standard output: its width, one log's report, a reader that left."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from parsers.sources import HEAD_BYTES, file_hint, stdin_hint

if TYPE_CHECKING:
    from rich.console import Console

    from parsers.model import LogModel
    from tui.options import Options


def say(line: str) -> None:
    """`line` on standard error, `cuzk-tui: ` before it: a note beside a report or an
    export, which a standard error that cannot be written (full, closed) loses, not the
    report or the files (the line is the caller's to make visible)."""
    if sys.stderr is None:  # closed when Python started: print would write standard output
        return
    with contextlib.suppress(OSError, ValueError):
        print(f"cuzk-tui: {line}", file=sys.stderr)


MIN_COLUMNS = 40  # narrower, the report's lines are cut to nothing (COLUMNS=0: an empty report)


def report_width() -> int | None:
    """The text report's width: the terminal's (None: rich reads COLUMNS or asks the
    terminal), never under MIN_COLUMNS; piped or redirected, full lines (a reader greps
    them), not 80 columns."""
    if not sys.stdout.isatty():
        return 10_000
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns >= MIN_COLUMNS:
        return None
    try:
        # COLUMNS unset, or too small to be meant: the terminal says
        columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except OSError:
        columns = 80
    return max(MIN_COLUMNS, columns)


def piped_head(options: Options) -> bytes | None:
    """The first bytes of standard input when it is the log, peeked at, not read (None:
    another log, or they cannot be seen)."""
    if options.demo or options.log != "-":
        return None
    stdin = sys.stdin.buffer if sys.stdin is not None else None
    peek = getattr(stdin, "peek", None)
    try:
        return peek(HEAD_BYTES)[:HEAD_BYTES] if peek is not None else None
    except (OSError, ValueError):
        return None


def encoding_hint(options: Options) -> str | None:
    """Why a log shows nothing when the reason is its encoding (UTF-16; standard input
    compressed), else None."""
    if options.demo or options.log is None:
        return None
    if options.log == "-":
        head = piped_head(options)
        return stdin_hint(head) if head is not None else None
    return file_hint(Path(options.log))


def print_one_report(options: Options, model: LogModel) -> None:
    """One log's report on standard output: the JSON document (`--json`) or the text."""
    from parsers.report import report_dict, report_json_pieces

    if options.json:
        # indented for a person at a terminal; compact (its gap list written straight from
        # the columns) for a script. ensure_ascii: log text's controls, C1 and bidi
        # characters travel as \u escapes (exact, and valid JSON), never as raw characters
        if sys.stdout.isatty():
            doc = report_dict(model, min_gap_ms=options.min_gap)
            sys.stdout.write(json.dumps(doc, indent=1, ensure_ascii=True))
        else:
            for piece in report_json_pieces(model, min_gap_ms=options.min_gap):
                sys.stdout.write(piece)
        sys.stdout.write("\n")
    else:
        from tui.report import print_report

        # the largest gaps' CPU path is the model's own (what the core noted as it read the
        # log, compressed or piped alike)
        with report_console(report_width()) as console:
            print_report(model, console, top=options.top, min_gap_ms=options.min_gap)
    sys.stdout.flush()


class TrimmedLines:
    """Standard output, each line written without the spaces that end it (Rich pads a table's
    lines to its width: a report in a file had 37 of its 132 lines end in spaces). Written
    at `finish`, in one piece: a reader that leaves early (`| head`) is met there, where the
    report's caller says nothing of it, not inside Rich, which exits with status 1."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._parts: list[str] = []
        self.encoding = getattr(out, "encoding", None)  # the glyphs chosen for the output

    def write(self, text: str) -> int:
        self._parts.append(text)
        return len(text)

    def flush(self) -> None:
        """Nothing: the lines are written at `finish`."""

    def isatty(self) -> bool:
        return False

    def finish(self) -> None:
        """Write what was drawn, each line trimmed."""
        lines = "".join(self._parts).split("\n")
        self._parts = []
        self._out.write("\n".join(line.rstrip(" ") for line in lines))
        self._out.flush()


@contextmanager
def report_console(width: int | None) -> Iterator[Console]:
    """The console a text report is drawn on: standard output, at a terminal as Rich draws
    it; piped or redirected, its lines without the spaces that end them."""
    from rich.console import Console

    # text is literal: a file's name (a host's GPU label) is never markup nor emoji codes
    # (`x[red]y:thumbs_up:.log:GPU0`), and no number is coloured as a repr would be
    if sys.stdout.isatty():
        yield Console(width=width, markup=False, emoji=False, highlight=False)
        return
    trimmed = TrimmedLines(sys.stdout)
    file: Any = trimmed  # it writes what Rich writes to a file
    yield Console(width=width, file=file, markup=False, emoji=False, highlight=False)
    trimmed.finish()


def written(what: str, write: Callable[[], None]) -> int:
    """Run `write` (it writes to standard output) and give the exit status: a reader that
    left (`| head`) is not an error; a write that failed (/dev/full, a closed descriptor, a
    full disk) is one line and status 1, never a traceback."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OSError as exc:
        silence_stdout()
        print(f"cuzk-tui: error: cannot write the {what}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def silence_stdout() -> None:
    """Send what is still buffered nowhere, so the exit does not fail on it again (the
    reader left: `cuzk-tui LOG --report | head`)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        sys.stdout = None
