"""Logs of a given shape, at scale, written line by line rather than simulated: one worker
with a million GPU intervals, or thousands of workers (the scale tests and
benchmarks/bench_scale.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path


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


def write_failing_log(path: Path, intervals: int, workers: int = 8, every: int = 10) -> Path:
    """A log of `intervals` GPU intervals on `workers` workers of GPU 0, taking turns; one
    in `every` prints no GPU_END (its prove failed: GPU_END is printed on success only)."""
    with path.open("wb") as out:
        out.write(b"".join(worker_line(w, 0) for w in range(workers)))
        piece = []
        for k in range(intervals):
            job, partition, w = f"porep-{k // 10}", k % 10, k % workers
            lines = interval_lines(job, partition, w, 1000 + 200 * (k // workers))
            if k % every == every - 1:
                lines = lines[: lines.rindex(b"TIMELINE,", 0, len(lines) - 1)]
            piece.append(lines)
            if len(piece) == 10_000:
                out.write(b"".join(piece))
                piece.clear()
        out.write(b"".join(piece))
    return path


def write_nested_log(path: Path, intervals: int) -> Path:
    """A hostile shape: `intervals` GPU intervals of one worker, each begun inside the one
    before and ended after it (every one under way at once, each on a sub-row of its own)."""
    with path.open("wb") as out:
        for k in range(intervals):
            out.write(f"TIMELINE,{100 + k},GPU_START,j{k},worker=0,partition=0\n".encode())
        for k in range(intervals):
            end = f"TIMELINE,{100 + intervals + k},GPU_END,j{intervals - 1 - k},worker=0,"
            out.write(f"{end}partition=0,gpu_ms=1\n".encode())
    return path


def write_restarts_log(path: Path, runs: int) -> Path:
    """A hostile shape: a daemon that restarted `runs` times, each run one GPU interval,
    every run's stamps the same (ties between the runs' proofs)."""
    start = datetime(2026, 3, 16, 9)
    with path.open("wb") as out:
        for k in range(runs):
            stamp = (start + timedelta(seconds=10 * k)).strftime("%Y-%m-%dT%H:%M:%S")
            out.write(
                f"{stamp}.000000Z  INFO cuzk_core::engine: starting cuzk engine "
                "pipeline_enabled=true\n"
                f"TIMELINE,100,GPU_START,job{k},worker=0,partition=0\n"
                f"TIMELINE,200,GPU_END,job{k},worker=0,partition=0,gpu_ms=100\n".encode()
            )
    return path
