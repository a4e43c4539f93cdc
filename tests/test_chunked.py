"""The builder gives the same model whatever the chunking of its input."""

from __future__ import annotations

import random

import pytest
from conftest import SAMPLES
from helpers import build, model_fingerprint

from cuzksim.config import SimConfig
from cuzksim.logs import simulate


def _random_cuts(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    sizes = []
    total = 0
    while total < n:
        size = rng.choice([1, 1, 2, 3, 7, 13, 64, 100, 257, 1000, 4096])
        sizes.append(size)
        total += size
    return sizes


def test_samples_whole_vs_random_chunks(sample_name: str) -> None:
    data = (SAMPLES / f"{sample_name}.log").read_bytes()
    whole = model_fingerprint(build(data))
    assert model_fingerprint(build(data, _random_cuts(len(data), 1))) == whole
    assert model_fingerprint(build(data, [100] * (len(data) // 100 + 1))) == whole


def test_one_byte_at_a_time() -> None:
    data = (SAMPLES / "tiny.log").read_bytes()
    assert model_fingerprint(build(data, [1] * len(data))) == model_fingerprint(build(data))


@pytest.mark.parametrize("seed", [3, 4])
def test_spliced_simulated_log_chunked(seed: int) -> None:
    cfg = SimConfig(
        seed=seed,
        proofs=5,
        gpus=2,
        gw=2,
        stdout="ansi",
        splice=0.2,
        jitter=True,
        ids="curio",
        mix=0.2,
        fail=0.02,
    )
    _, data = simulate(cfg)
    assert data.count(b"CUZK_TIMING: ") > 0
    whole = model_fingerprint(build(data))
    assert whole["report"]["lines"]["spliced"] > 0
    for cut_seed in (1, 2):
        assert model_fingerprint(build(data, _random_cuts(len(data), cut_seed))) == whole


def test_cut_between_every_line_of_a_splice() -> None:
    """Cut right inside the spliced line, at the newline, and inside the continuation."""
    data = (SAMPLES / "p12-gw2-merged.log").read_bytes()
    whole = model_fingerprint(build(data))
    at = data.index(b"TIMELINE,111723CUZK_TIMING")
    for cut in (
        at + 3,
        at + 15,
        data.index(b"\n", at),
        data.index(b"\n", at) + 1,
        data.index(b"\n", at) + 5,
    ):
        assert model_fingerprint(build(data, [cut])) == whole


def test_a_report_that_takes_the_columns_gives_the_same_model(sample_name: str) -> None:
    """`build(release=True)` (the report) moves the core's columns out instead of copying
    them: the model is the same, and the builder is finished for good."""
    from parsers.builder import LogBuilder

    data = (SAMPLES / f"{sample_name}.log").read_bytes()
    kept = LogBuilder(source="t")
    kept.feed(data)
    taken = LogBuilder(source="t")
    taken.feed(data)
    model = taken.build(release=True)
    assert model_fingerprint(model) == model_fingerprint(kept.build())
    assert model_fingerprint(taken.snapshot(finished=True)) == model_fingerprint(model)
    with pytest.raises(RuntimeError, match="handed over"):
        taken.feed(b"TIMELINE,1,SYNTH_START,x,partition=0\n")
