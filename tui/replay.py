"""Writers that make a log grow as if a daemon were running: the live demo and --replay.

Each writes, in a thread, into a temporary file that the viewer follows like any log,
paced by the log's own clock at SPEED times real time.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from cuzksim.config import DEMO_CONFIG
from cuzksim.engine import EngineSim
from tui.follow import nameless_file, temporary_file

DEMO_SPEED = 20.0
DEMO_NAME = "demo (built-in simulated run)"
_STAMP = re.compile(rb"TIMELINE,(\d+),")
BATCH_S = 0.02  # lines due within this much are written together


# the core's cap on a line (MAX_LINE_BYTES): a longer one is no daemon line
LONGEST_LINE_BYTES = 1 << 20


def _bounded_lines(fh: BinaryIO) -> Iterator[bytes]:
    """The file's lines, each with its newline; a line longer than LONGEST_LINE_BYTES (a hole
    of NULs that copytruncate left) is read past, never held, and given as an empty line (the
    line numbers stay those of the recorded log)."""
    while line := fh.readline(LONGEST_LINE_BYTES + 1):
        if len(line) <= LONGEST_LINE_BYTES or line.endswith(b"\n"):
            yield line
            continue
        while (rest := fh.readline(LONGEST_LINE_BYTES)) and not rest.endswith(b"\n"):
            pass
        if rest:
            yield b"\n"


def timed_lines(path: Path) -> Iterator[tuple[float | None, bytes]]:
    """A recorded log as (ms stamp or None, line with its newline)."""
    with path.open("rb") as fh:
        for line in _bounded_lines(fh):
            m = _STAMP.search(line)
            yield (float(m.group(1)) if m else None), line


class PacedWriter:
    """Writes timed lines into a temporary file at `speed` times their own pace.

    Args:
        lines: (ms, bytes) pairs; a line with no time follows the one before it.
        speed: how many times faster than real time.
        name: the temporary file's name (shown as the log's name).
    """

    def __init__(
        self, lines: Iterable[tuple[float | None, bytes]], speed: float, name: str
    ) -> None:
        self.lines = lines
        self.speed = speed
        self.name = name
        # a process killed (SIGKILL, the OOM killer) leaves no file behind: where the system
        # makes one, the file has no name from the start
        self.dir: Path | None = None
        self._fd, self.path, self._name = nameless_file(lambda: self._named(name))
        if self.dir is not None and self._name is None:
            with contextlib.suppress(OSError):
                self.dir.rmdir()
        self.stop = threading.Event()
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cuzk-tui-writer", daemon=True)

    def _named(self, name: str) -> tuple[int, Path]:
        """The file made under `name` in a folder of its own (`self.dir`)."""
        self.dir = Path(temporary_file(lambda: tempfile.mkdtemp(prefix="cuzk-tui-")))
        named = self.dir / name
        try:
            fd = os.open(named, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError:
            self.dir.rmdir()
            raise
        return fd, named

    def start(self) -> None:
        """Begin writing."""
        self._thread.start()

    def _run(self) -> None:
        start = time.monotonic()
        first: float | None = None
        batch: list[bytes] = []
        with os.fdopen(self._fd, "ab", closefd=False) as out:
            for ms, line in self.lines:
                if self.stop.is_set():
                    break
                if ms is not None:
                    if first is None:
                        first = ms
                    due = start + max(ms - first, 0.0) / 1000 / self.speed
                    wait = due - time.monotonic()
                    if wait > BATCH_S:
                        if batch:
                            out.write(b"".join(batch))
                            out.flush()
                            batch.clear()
                        if self.stop.wait(wait):
                            break
                batch.append(line)
            if batch:
                out.write(b"".join(batch))
                out.flush()
        self.done.set()

    def cleanup(self) -> None:
        """Stop writing and remove the temporary file."""
        self.stop.set()
        self._thread.join(timeout=2)
        if self._name is not None:
            self._name.unlink(missing_ok=True)
        if self.dir is not None:
            with contextlib.suppress(OSError):  # gone already, or another file is there
                self.dir.rmdir()
        if not self._thread.is_alive():  # else it still writes: the file goes with the process
            os.close(self._fd)


def demo_writer(speed: float = DEMO_SPEED) -> PacedWriter:
    """The built-in simulated run, written live."""
    sim = EngineSim(DEMO_CONFIG)
    lines = ((t, line.encode() + b"\n") for t, line in sim.lines())
    return PacedWriter(lines, speed, "demo.log")


def demo_bytes() -> bytes:
    """The built-in demo log, whole."""
    import io

    from cuzksim.logs import write_log

    out = io.StringIO()
    write_log(DEMO_CONFIG, out)
    return out.getvalue().encode()


def replay_writer(path: Path, speed: float) -> PacedWriter:
    """A recorded log, written again as if live."""
    return PacedWriter(timed_lines(path), speed, path.name)
