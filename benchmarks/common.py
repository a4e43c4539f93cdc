"""Shared helpers for the benchmark scripts: the big simulated log, peak RSS, timing."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cuzksim.config import SimConfig
from cuzksim.logs import write_log
from tui.options import positive_int

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


# A long run of one GPU with two workers: ~100 hours of engine time, ~1 M TIMELINE lines,
# ~260 MB (the C++ timing lines and 80 % of the stdout lines printed).
HOURS_100_LOG = Path("/tmp/cuzk-tui-bench/hours-100.log")
HOURS_100_CONFIG = SimConfig(
    seed=100,
    proofs=16_000,
    concurrency=4,
    partitions=10,
    gpus=1,
    gw=2,
    pw=16,
    stdout="plain",
    stdout_share=0.8,
    splice=0.001,
    jitter=True,
    ids="curio",
    fail=0.001,
    mix=0.02,
)
# ~250 hours on two GPUs, two workers each: ~2.9 M TIMELINE lines, ~690 MB.
HOURS_250_LOG = Path("/tmp/cuzk-tui-bench/hours-250.log")
HOURS_250_CONFIG = SimConfig(
    seed=250,
    proofs=48_000,
    concurrency=5,
    partitions=10,
    gpus=2,
    gw=2,
    pw=20,
    stdout="plain",
    stdout_share=0.6,
    splice=0.001,
    jitter=True,
    ids="curio",
    fail=0.001,
    mix=0.02,
)


# Two GPUs of two workers each, synthesis far ahead of them (60 partitions at once): the GPUs
# never idle (one worker waits on the lock while the other runs kernels); ~150,000 records.
GPU_BOUND_LOG = Path("/tmp/cuzk-tui-bench/gpu-bound-2x2-150k.log")
GPU_BOUND_CONFIG = SimConfig(
    seed=22,
    proofs=15_000,
    concurrency=12,
    partitions=10,
    gpus=2,
    gw=2,
    pw=60,
    stdout="plain",
    stdout_share=0.3,
    splice=0.001,
    jitter=True,
    ids="curio",
    fail=0.001,
)


def _generated(path: Path, config: SimConfig) -> Path:
    """`path`, written by the simulator from `config` the first time (kept in /tmp)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".partial")
        t0 = time.perf_counter()
        print(f"generating {path} with the simulator...", file=sys.stderr, flush=True)
        with tmp.open("w") as out:
            write_log(config, out)
        tmp.rename(path)
        print(f"  done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return path


def big_log() -> Path:
    """Generate the big log once (kept in /tmp between runs)."""
    return _generated(BIG_LOG, BIG_CONFIG)


def hours_100_log() -> Path:
    """The 100-hour one-GPU log (generated once)."""
    return _generated(HOURS_100_LOG, HOURS_100_CONFIG)


def hours_250_log() -> Path:
    """The 250-hour two-GPU log (generated once)."""
    return _generated(HOURS_250_LOG, HOURS_250_CONFIG)


def byte_compile() -> None:
    """Compile the project's modules as an install does (pip writes their .pyc files): with
    PYTHONDONTWRITEBYTECODE set, a timed run would otherwise compile them every time."""
    import compileall

    root = Path(__file__).resolve().parents[1]
    for package in ("parsers", "tui"):
        compileall.compile_dir(root / package, quiet=1)
    print("modules byte-compiled, as an install leaves them")


# A process's peak RSS (`ru_maxrss`, what wait4 and getrusage give) starts at its parent's
# RSS when it was spawned: Linux keeps the high-water mark across execve. A command spawned
# by a benchmark that holds a big log would report that as its own peak. So each measured
# command is spawned by a small process in between (the interpreter's start, ~10 MB), which
# waits for it and reports its wall seconds and peak RSS on a pipe of its own.
_SPAWNER = """
import os, sys, time
report = int(sys.argv[1])
os.set_inheritable(report, False)  # a daemon the command leaves must not hold it open
t0 = time.perf_counter()
try:
    pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
except OSError as exc:
    os.write(report, f"cannot run {sys.argv[2]}: {exc.strerror}".encode())
    sys.exit(2)
_, status, usage = os.wait4(pid, 0)
said = f"{time.perf_counter() - t0} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}"
os.write(report, said.encode())
"""


@dataclass(frozen=True)
class Measured:
    """A command's run: wall seconds, its own peak RSS (MB) and its exit code."""

    wall: float
    peak_mb: float
    code: int


def run_measured(
    cmd: Sequence[str],
    stdout: int | IO[Any] | None = subprocess.DEVNULL,
    stderr: int | IO[Any] | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Measured:
    """Run `cmd` (found on PATH) in a fresh process, its own peak RSS measured apart from
    this process's (see _SPAWNER)."""
    read, write = os.pipe()
    try:
        subprocess.run(
            [sys.executable, "-I", "-S", "-c", _SPAWNER, str(write), *cmd],
            stdout=stdout,
            stderr=stderr,
            env=env,
            cwd=cwd,
            pass_fds=(write,),
            check=False,
        )
        os.close(write)
        write = -1
        with os.fdopen(read, "rb") as pipe:
            read = -1
            said = pipe.read().decode(errors="replace")
        if said.startswith("cannot run") or len(said.split()) != 3:
            raise SystemExit(said or f"could not run {list(cmd)}")
        wall, rss_kb, code = said.split()
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)
    return Measured(float(wall), int(rss_kb) / 1024, int(code))


def peak_rss_mb() -> float:
    """This process's peak RSS (MB): VmHWM, the high-water mark of its own memory since it
    began (unlike `ru_maxrss`, nothing of the process that spawned it)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise SystemExit("no VmHWM in /proc/self/status (Linux only)")


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


def gpu_bound_log() -> Path:
    """The GPU-bound 2 x 2 log (generated once, kept in /tmp)."""
    return _generated(GPU_BOUND_LOG, GPU_BOUND_CONFIG)
