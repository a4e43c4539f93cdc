"""Shared helpers for the benchmark scripts: the big simulated log, peak RSS, timing."""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from parsers.simulate import SimConfig, write_log
from tui.cli import positive_int

BIG_LOG = Path("/tmp/cuzk-tui-bench/big-1m.log")
# ~1,000,000 TIMELINE lines: 6 per partition, 10 partitions per proof, plus a few
# whole-proof jobs; two GPUs with two workers each, a third of the stdout lines merged
# in (plain), some splices and disorder.
BIG_CONFIG = SimConfig(
    seed=2026,
    proofs=16_700,
    concurrency=6,
    partitions=10,
    gpus=2,
    gw=2,
    pw=24,
    stdout="plain",
    stdout_share=0.3,
    splice=0.001,
    jitter=True,
    ids="curio",
    fail=0.001,
    mix=0.02,
)


def big_log() -> Path:
    """Generate the big log once (kept in /tmp between runs)."""
    if not BIG_LOG.exists():
        BIG_LOG.parent.mkdir(parents=True, exist_ok=True)
        tmp = BIG_LOG.with_suffix(".partial")
        t0 = time.perf_counter()
        print(f"generating {BIG_LOG} with the simulator...", file=sys.stderr, flush=True)
        with tmp.open("w") as out:
            write_log(BIG_CONFIG, out)
        tmp.rename(BIG_LOG)
        print(f"  done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return BIG_LOG


def byte_compile() -> None:
    """Compile the project's modules as an install does (pip writes their .pyc files): with
    PYTHONDONTWRITEBYTECODE set, a timed run would otherwise compile them every time."""
    import compileall

    root = Path(__file__).resolve().parents[1]
    for package in ("parsers", "tui"):
        compileall.compile_dir(root / package, quiet=1)
    print("modules byte-compiled, as an install leaves them")


def peak_rss_mb_children() -> float:
    """Peak resident set of the largest child process waited for so far (MB)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be above 0: {text}")
    return value


def event_counts(text: str) -> list[int]:
    """An argparse type: comma-separated event counts, each 1 or more (empty: none)."""
    return [positive_int(part.strip()) for part in text.split(",") if part.strip()]
