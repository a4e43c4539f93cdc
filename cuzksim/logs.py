"""Simulated logs as a daemon leaves them: written out, as bytes, or with lines lost."""

from __future__ import annotations

import random
from typing import TextIO

from cuzksim.config import SimConfig
from cuzksim.engine import EngineSim


def write_log(config: SimConfig, out: TextIO) -> EngineSim:
    """Simulate `config` and write the whole log to `out`; return the simulator (for its truth)."""
    sim = EngineSim(config)
    for _, line in sim.lines():
        out.write(line)
        out.write("\n")
    return sim


def simulate(config: SimConfig) -> tuple[EngineSim, bytes]:
    """Run the simulator; return it (with its truth) and the log bytes."""
    sim = EngineSim(config)
    text = "".join(line + "\n" for _, line in sim.lines())
    return sim, text.encode()


def lose_lines(data: bytes, kind: str, rate: float, seed: int) -> bytes:
    """`data` without a share `rate` of its C++ lines (`kind` cpp) or lock lines (lock), as a
    rate limit would lose them; a line that also holds a piece of a TIMELINE line (a splice)
    is kept."""
    rng = random.Random(seed)
    marker = b"CUZK_" if kind == "cpp" else b"pre_lock_cpu_ms="
    lines = data.split(b"\n")
    return b"\n".join(
        x for x in lines if not (marker in x and b"TIMELINE," not in x and rng.random() < rate)
    )
