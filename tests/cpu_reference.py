"""The CPU path of a gap as it was read before the core noted it: a regex over the log's
raw lines (every line of the gap's run for the run medians, the gap's neighbourhood for its
figures). Kept
as the reference the core's figures (parsers/linefacts.py) are checked against."""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator

import numpy as np

from parsers.hosts import reader_for
from parsers.model import MERGED_RUNS, Gap, LogModel
from parsers.rawlines import BLOCK_BYTES, LineReader
from parsers.why import MAX_LINES, CpuPath

_CPU = re.compile(rb"(prep_msm_ms|b_g2_msm_ms)=(\d+)")
LONGEST_LINE_BYTES = 1 << 20


_medians: weakref.WeakKeyDictionary[
    LineReader, dict[tuple[int, int], tuple[float | None, float | None]]
] = weakref.WeakKeyDictionary()

ALL_LINES = (1, 1 << 62)


def reference_medians(
    reader: LineReader, lines: tuple[int, int] = ALL_LINES
) -> tuple[float | None, float | None]:
    """The median prep_msm_ms and b_g2_msm_ms of every line of the log numbered within
    `lines` (from, before; once a reader and range)."""
    held = _medians.setdefault(reader, {})
    if lines in held:
        return held[lines]
    prep: list[int] = []
    b_g2: list[int] = []
    tail = b""
    skipping = False  # inside a line longer than LONGEST_LINE_BYTES: to its newline
    line_no = 1  # the number of the first line in the bytes held
    for block in _blocks(reader):
        if skipping:
            newline = block.find(b"\n")
            if newline < 0:
                continue
            block, skipping = block[newline + 1 :], False
            line_no += 1
        chunk = tail + block
        cut = chunk.rfind(b"\n") + 1
        for raw in chunk[:cut].split(b"\n")[:-1]:
            if lines[0] <= line_no < lines[1]:
                for key, value in _CPU.findall(raw):
                    (prep if key == b"prep_msm_ms" else b_g2).append(int(value))
            line_no += 1
        tail = chunk[cut:]
        if len(tail) > LONGEST_LINE_BYTES:
            tail, skipping = b"", True
    out = (
        float(np.median(prep)) if prep else None,
        float(np.median(b_g2)) if b_g2 else None,
    )
    held[lines] = out
    return out


def run_lines_of(model: LogModel, gap: Gap) -> tuple[int, int]:
    """The lines of the gap's run, of a restarted daemon's log (else every line)."""
    runs = model.run_lines
    if model.summary.merged != MERGED_RUNS or not runs or model.gpu_keys is None:
        return ALL_LINES
    k = model.gpu_keys[gap.gpu].host
    return runs[k], runs[k + 1] if k + 1 < len(runs) else ALL_LINES[1]


def _blocks(reader: LineReader) -> Iterator[bytes]:
    if reader.data is not None:
        yield reader.data
        return
    if reader.path is None:
        return
    with reader.path.open("rb") as fh:
        while block := fh.read(BLOCK_BYTES * 4):
            yield block


def reference_cpu_path(
    model: LogModel,
    gap: Gap,
    reader: LineReader,
    host_runs: dict[int, tuple[int, int]] | None = None,
) -> CpuPath | None:
    """The prep_msm / b_g2_msm figures of the lines from the GPU_START of the partition
    before the gap to the GPU_END of the one after, read from the raw lines (`host_runs`:
    the lines of the run a model is of a restarted daemon's log, by host: of several logs,
    GpuKey.host; of one, -1)."""
    t = model.parts
    b, a = gap.before.index, gap.after.index
    first, last = int(t.start_line[b]), int(t.end_line[a])
    if first <= 0 or last < first:
        return None
    last = min(last, first + MAX_LINES)
    own = reader_for(reader, b)
    rows = own.lines(first, last)
    lines = run_lines_of(model, gap)
    if host_runs is not None:
        host = model.gpu_keys[gap.gpu].host if model.gpu_keys is not None else -1
        lines = host_runs.get(host, lines)
    prep_med, b_g2_med = reference_medians(own, lines)
    prep: list[int] = []
    b_g2: list[int] = []
    for _, raw, _ in rows:
        for key, value in _CPU.findall(raw):
            (prep if key == b"prep_msm_ms" else b_g2).append(int(value))
    return CpuPath(tuple(prep), tuple(b_g2), prep_med, b_g2_med, first, last)
