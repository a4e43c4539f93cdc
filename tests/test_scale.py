"""Logs of unusual shape: GPU ordinals in the thousands, many workers, long runs on one
worker. What they must still give (behaviour; the benchmarks measure time and memory)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.common import worker_line, write_many_workers_log
from parsers.builder import LogBuilder
from parsers.model import LogModel


def load(path: Path) -> LogModel:
    """The finished model of the file at `path`, as the report reads it."""
    b = LogBuilder(source=path.name)
    b.feed(path.read_bytes())
    return b.build()


def test_gpu_ordinals_past_4096_land_on_their_own_gpu(tmp_path: Path) -> None:
    log = write_many_workers_log(tmp_path / "big-ordinals.log", 8, first_gpu=5000)
    with log.open("ab") as out:  # past a 16-bit ordinal too
        out.write(worker_line(9, 70_000))
        out.write(b"TIMELINE,2000,GPU_START,late,worker=9,partition=0\n")
        out.write(b"TIMELINE,2100,GPU_END,late,worker=9,partition=0,gpu_ms=100\n")
    model = load(log)
    gpus = {g.gpu: g.workers for g in model.gpus}
    assert gpus == {5000: (0, 1), 5001: (2, 3), 5002: (4, 5), 5003: (6, 7), 70_000: (9,)}
    assert {w.worker: w.gpu for w in model.workers}[9] == 70_000
    assert model.counts.malformed == 0
    assert model.counts.stdout == 9


def test_an_ordinal_past_any_u32_stays_malformed(tmp_path: Path) -> None:
    log = tmp_path / "bad-ordinal.log"
    log.write_bytes(
        worker_line(0, 1)
        + worker_line(1, 2**32)
        + b"TIMELINE,100,GPU_START,j,worker=0,partition=0\n"
        + b"TIMELINE,200,GPU_END,j,worker=0,partition=0,gpu_ms=100\n"
    )
    model = load(log)
    assert model.counts.malformed == 1
    assert [g.gpu for g in model.gpus] == [1]
