"""The exports written from columns hold what the dict-by-dict writers wrote: the same JSON
trace and the same CSV files, byte for byte, whole and over a window."""

from __future__ import annotations

import math
import random
from pathlib import Path

import export_reference as reference
import numpy as np
import pytest
from conftest import SAMPLES
from helpers import build
from hostile import injected_log

from cuzksim.config import SimConfig, random_config
from cuzksim.logs import lose_lines, simulate
from parsers import _core
from parsers.export import CSV_FILES, trace_events, write_csv, write_trace
from parsers.hosts import merge
from parsers.model import LogModel


def _models() -> list[tuple[str, LogModel]]:
    out = [("hostile ids", build(injected_log()))]
    for seed in (3, 17, 41):
        out.append((f"random {seed}", build(simulate(random_config(seed))[1])))
    failing = SimConfig(seed=5, proofs=30, gpus=2, fail=0.08, mix=0.2, stdout="plain")
    out.append(("failures", build(simulate(failing)[1])))
    # half the lock lines lost: locks placed from unlock lines, the time before them unknown
    _, data = simulate(SimConfig(seed=9, proofs=6, gpus=2, stdout="plain"))
    lost = lose_lines(data, "lock", 0.5, seed=9)
    out.append(("lost lines", build(lost)))
    # cut while proves ran: intervals running when the log ends
    lines = (SAMPLES / "curio-mixed.log").read_bytes().splitlines(keepends=True)
    out.append(("cut while running", build(b"".join(lines[: len(lines) * 2 // 3]))))
    # several logs: each one's synthesis and proofs are processes of their own
    hosts = [build((SAMPLES / n).read_bytes()) for n in ("p9-c6.log", "curio-mixed.log")]
    out.append(("hosts", merge(hosts, ["a", "b"]).model))
    restarted = (SAMPLES / "tiny.log").read_bytes() + (SAMPLES / "p12-gw2-merged.log").read_bytes()
    out.append(("restarted", build(restarted)))
    return out


MODELS = _models()


def _windows(model: LogModel) -> list[tuple[float, float]]:
    lo, hi = model.time_range
    third = (hi - lo) / 3
    # the whole run, a window inside, one that starts before the run, one on a ms boundary
    # that cuts events, and one after the run
    return [
        (-math.inf, math.inf),
        (lo + third, lo + 2 * third),
        (lo - 1000.5, lo + third),
        (float(round(lo + 1.25 * third)), float(round(hi))),
        (hi + 10, hi + 20),
    ]


@pytest.mark.parametrize(("name", "model"), MODELS, ids=[n for n, _ in MODELS])
def test_the_json_trace_is_the_dict_writers_byte_for_byte(
    name: str, model: LogModel, tmp_path: Path
) -> None:
    for k, (t0, t1) in enumerate(_windows(model)):
        old, new = tmp_path / f"old-{k}.json", tmp_path / f"new-{k}.json"
        n_old = reference.write_trace(model, old, t0, t1)
        n_new = write_trace(model, new, t0, t1)
        assert n_new == n_old
        assert new.read_bytes() == old.read_bytes(), (name, t0, t1)
        assert list(trace_events(model, t0, t1)) == list(reference.trace_events(model, t0, t1))


@pytest.mark.parametrize(("name", "model"), MODELS, ids=[n for n, _ in MODELS])
def test_the_csv_files_are_the_dict_writers_byte_for_byte(
    name: str, model: LogModel, tmp_path: Path
) -> None:
    reference.write_csv(model, tmp_path / "old")
    write_csv(model, tmp_path / "new")
    for f in CSV_FILES:
        assert (tmp_path / "new" / f).read_bytes() == (tmp_path / "old" / f).read_bytes(), f


def _cells(values: list[float], code: int) -> list[str]:
    """`values` as the core writes them with value `code`, one a row."""
    writer = _core.RowWriter([([(b"", code, 0)], b"\n")], b"", np.zeros(0, np.int64), b"-")
    arr = np.array(values, dtype=np.float64)
    text = writer.rows(np.zeros(len(arr), np.uint8), [], [arr], b"")
    return text.decode().splitlines()


def test_floats_are_written_as_python_writes_them() -> None:
    rng = random.Random(7)
    values = [rng.uniform(-1e7, 1e7) for _ in range(2000)]
    values += [rng.random() * 10 ** rng.randint(-12, 22) for _ in range(2000)]
    values += [round(rng.uniform(0, 5000), rng.randint(0, 4)) for _ in range(2000)]
    # near the ties of rounding to 3 decimals, and past where it is done by multiplying
    values += [rng.randint(-(10**9), 10**9) / 1000 + 0.0005 for _ in range(2000)]
    values += [rng.uniform(1e12, 1e14) for _ in range(500)]
    values += [0.0, -0.0, 1e16, 1e-5, 0.0001, 0.0625, 2.675, 1.0005, 5e-324, 1.7976931348623157e308]
    assert _cells(values, 4) == [repr(v) for v in values]  # JSON
    # CSV, round(x, 3): a whole number as an integer (the CSV's number rule)
    assert _cells(values, 6) == [repr(reference.csv_number(round(v, 3))) for v in values]
    assert _cells([14130.0, -0.0, 0.375], 5) == ["14130", "0", "0.375"]
    specials = [math.nan, math.inf, -math.inf]
    assert _cells(specials, 4) == ["NaN", "Infinity", "-Infinity"]
    assert _cells(specials, 5) == ["-", "inf", "-inf"]  # CSV: NaN is the empty cell


def test_bad_rows_are_a_value_error_not_a_crash() -> None:
    writer = _core.RowWriter([([(b"", 2, 0)], b"")], b"ab", np.array([2], np.int64), b"")
    with pytest.raises(ValueError, match="no such string"):
        writer.rows(np.zeros(1, np.uint8), [np.array([5], np.int64)], [], b"")
    with pytest.raises(ValueError, match="no such kind"):
        writer.rows(np.ones(1, np.uint8), [np.array([0], np.int64)], [], b"")
    with pytest.raises(ValueError, match="differ in length"):
        writer.rows(np.zeros(2, np.uint8), [np.array([0], np.int64)], [], b"")
