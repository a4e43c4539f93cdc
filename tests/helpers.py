"""Helpers shared by tests: comparing models, simulated logs."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from parsers.builder import LogBuilder
from parsers.model import LogModel
from parsers.report import report_dict


def model_fingerprint(model: LogModel) -> dict[str, Any]:
    """Everything a view reads, in comparable form."""
    t = model.parts
    return {
        "report": report_dict(model),
        "lanes": [
            (
                lane.gpu,
                lane.worker,
                lane.sub_row,
                lane.starts.tolist(),
                lane.ends.tolist(),
                lane.phases.tolist(),
                lane.partition.tolist(),
            )
            for lane in model.lanes
        ],
        "segments": (
            t.seg_start.tolist(),
            t.seg_end.tolist(),
            t.seg_phase.tolist(),
            t.seg_offsets.tolist(),
        ),
        "parts": [
            np.nan_to_num(getattr(t, name), nan=-1.0).tolist()
            for name in ("gpu_start", "gpu_end", "queued", "synth_start", "lock_acquired", "unlock")
        ],
        "lines": (t.start_line.tolist(), t.end_line.tolist()),
        "synth": (model.synth_times.tolist(), model.synth_counts.tolist()),
        "partial": model.partial_bytes,
    }


# days into a run: 2 days 20 hours
DAYS_IN_MS = 2 * 86_400_000 + 20 * 3_600_000


def shifted_log(path: Path, ms: int = DAYS_IN_MS) -> bytes:
    """The log at `path` with every `TIMELINE,<stamp>,` moved on by `ms` (in
    journal-2gpu.log a cut line's stamp, at its line's start, is not moved: it starts a
    second run, on a clock of its own)."""
    return re.sub(
        rb"TIMELINE,(\d+),",
        lambda m: b"TIMELINE," + str(int(m[1]) + ms).encode() + b",",
        path.read_bytes(),
    )


def live_model(data: bytes) -> tuple[LogBuilder, LogModel]:
    """A builder fed a log in two halves, a snapshot after each, and its live model: its
    table and lanes are the settled part's, then the rest's (two parts, two chunks)."""
    half = data.index(b"\n", len(data) // 2) + 1
    b = LogBuilder(source="t")
    b.feed(data[:half])
    b.snapshot()
    b.feed(data[half:])
    return b, b.snapshot()


def build(data: bytes, chunks: list[int] | None = None, **kw: Any) -> LogModel:
    """Feed `data` whole, or cut at the given sizes, and build the finished model."""
    b = LogBuilder(source="t", **kw)
    if chunks is None:
        b.feed(data)
    else:
        pos = 0
        for size in chunks:
            b.feed(data[pos : pos + size])
            pos += size
        b.feed(data[pos:])
    return b.build()


def drain(fd: int, out: list[bytes]) -> None:
    """Read a pty's output until it closes (a full pty would block the app)."""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        out.append(data)


def wait_for(condition: Callable[[], object], what: str, wait_s: float = 30.0) -> None:
    """Poll until condition() is true; a hang guard generous on a busy machine."""
    deadline = time.monotonic() + wait_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def bytes_fed(builder: LogBuilder) -> int:
    """The bytes a follower's builder has read, asked from another thread (a test's): while
    the follower feeds it the core is borrowed, and PyO3 says so (`RuntimeError: Already
    mutably borrowed`); asked again a moment later. The viewer reads it on the follower's
    thread only."""
    while True:
        try:
            return builder.bytes_read
        except RuntimeError:
            time.sleep(0.001)
