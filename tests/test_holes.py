"""A stretch of NULs before a log (what logrotate's copytruncate leaves): read past as one
over-long line, in bounded memory, never held whole."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from conftest import SAMPLES

from parsers.load import read_log
from tui.replay import timed_lines

HOLE_BYTES = 48 << 20
# what a reading of the file may hold at once: a few of its blocks, far less than the hole
BOUND_BYTES = 16 << 20


def hole_then(sample: Path, directory: Path) -> Path:
    """A sparse hole of HOLE_BYTES (no disk used), then the sample log."""
    path = directory / f"hole-{sample.name}"
    with path.open("wb") as fh:
        fh.truncate(HOLE_BYTES)
        fh.seek(HOLE_BYTES)
        fh.write(sample.read_bytes())
    return path


def peak_bytes(action: Callable[[], object]) -> tuple[object, int]:
    """What `action` returns, and the most Python memory it held at once."""
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_cpu_figures_behind_a_hole_are_the_log_s(tmp_path: Path) -> None:
    sample = SAMPLES / "p9-c6.log"
    path = hole_then(sample, tmp_path)
    assert os.stat(path).st_size > HOLE_BYTES
    behind, alone = read_log(path).line_facts, read_log(sample).line_facts
    assert behind is not None and alone is not None
    # the hole and the sample's first line are one over-long line, skipped: the line
    # numbers stay the sample's, and its first line holds no CPU figure
    assert not sample.read_bytes().split(b"\n", 1)[0].count(b"_msm_ms=")
    assert behind.cpu.medians() == alone.cpu.medians() != (None, None)
    assert behind.cpu.line.tolist() == alone.cpu.line.tolist()
    assert behind.cpu.value.tolist() == alone.cpu.value.tolist()
    # the line index holds the hole's one line, then the sample's lines at their offsets
    assert behind.starts.lines[:1] == (1,) and behind.starts.lines[1] == 2


def test_replay_reads_past_a_hole_in_bounded_memory(tmp_path: Path) -> None:
    sample = SAMPLES / "p9-c6.log"
    path = hole_then(sample, tmp_path)
    lines, peak = peak_bytes(lambda: list(timed_lines(path)))
    assert isinstance(lines, list)
    # the hole and the line written after it (no newline between them) are one over-long
    # line, replayed empty: the line numbers stay the recorded log's
    assert lines[0] == (None, b"\n")
    assert lines[1:] == list(timed_lines(sample))[1:]
    assert peak < BOUND_BYTES + sum(len(line) + 100 for _, line in lines)
