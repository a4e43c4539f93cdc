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


def interval_lines(job: str, partition: int, worker: int, stamp: int) -> bytes:
    """One partition's TIMELINE lines from `stamp`: synthesis, queue, a GPU interval of 100 ms."""
    j, p, w = job.encode(), b"partition=%d" % partition, b"worker=%d" % worker
    return (
        b"TIMELINE,%d,SYNTH_START,%s,%s\n" % (stamp, j, p)
        + b"TIMELINE,%d,SYNTH_END,%s,%s\n" % (stamp + 50, j, p)
        + b"TIMELINE,%d,GPU_QUEUE,%s,%s\n" % (stamp + 51, j, p)
        + b"TIMELINE,%d,GPU_START,%s,%s,%s\n" % (stamp + 60, j, w, p)
        + b"TIMELINE,%d,GPU_END,%s,%s,%s,gpu_ms=100\n" % (stamp + 160, j, w, p)
    )


def worker_line(worker: int, gpu: int) -> bytes:
    """The engine's stdout line that maps `worker` to `gpu` (as tracing prints it)."""
    return (
        b"2026-03-16T09:12:37.123456Z  INFO cuzk_core::engine: "
        b"pipeline GPU worker started worker_id=%d gpu=%d\n" % (worker, gpu)
    )


def write_one_worker_log(path: Path, intervals: int) -> Path:
    """A log of `intervals` GPU intervals on worker 0 (GPU 0), one after the other, ten
    partitions to a proof, 200 ms apart (a gap of 100 ms between intervals)."""
    with path.open("wb") as out:
        out.write(worker_line(0, 0))
        piece = []
        for k in range(intervals):
            piece.append(interval_lines(f"porep-{k // 10}", k % 10, 0, 1000 + 200 * k))
            if len(piece) == 10_000:
                out.write(b"".join(piece))
                piece.clear()
        out.write(b"".join(piece))
    return path


def write_many_workers_log(
    path: Path, workers: int, per_worker: int = 3, workers_per_gpu: int = 2, first_gpu: int = 0
) -> Path:
    """A log of `workers` workers, each mapped to its GPU by a stdout line (`first_gpu` and on,
    `workers_per_gpu` to a GPU) and each with `per_worker` GPU intervals; the workers of a
    GPU take turns, so every GPU is busy from start to end but for 10 ms between intervals."""
    with path.open("wb") as out:
        out.write(
            b"".join(worker_line(w, first_gpu + w // workers_per_gpu) for w in range(workers))
        )
        gpus = -(-workers // workers_per_gpu)
        for turn in range(per_worker * workers_per_gpu):
            piece = []
            for g in range(gpus):
                w = g * workers_per_gpu + turn % workers_per_gpu
                if w < workers:
                    job = f"porep-{w}-{turn // workers_per_gpu}"
                    piece.append(interval_lines(job, 0, w, 1000 + 170 * turn))
            out.write(b"".join(piece))
    return path
