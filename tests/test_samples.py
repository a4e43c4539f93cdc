"""The report matches every sample's truth file (docs/analysis.md#the-json-report)."""

from __future__ import annotations

from typing import Any

from conftest import SAMPLES, truth

from parsers.load import read_log
from parsers.report import report_dict


def _gap_key(g: dict[str, Any]) -> tuple[Any, ...]:
    return (
        g["gpu"],
        g["start"],
        g["end"],
        g["duration_ms"],
        g["before"]["job"],
        g["before"]["worker"],
        g["before"]["partition"],
        g["after"]["job"],
        g["after"]["worker"],
        g["after"]["partition"],
        g["crosses_proof_boundary"],
        g["cause"],
    )


def test_report_matches_truth(sample_name: str) -> None:
    expected = truth(sample_name)
    got = report_dict(read_log(SAMPLES / f"{sample_name}.log"))

    # the report lists gaps by start over all GPUs (docs/analysis.md#the-json-report); the
    # truth files group them by GPU
    assert sorted(map(_gap_key, got["gaps"])) == sorted(map(_gap_key, expected["gaps"]))
    assert [g["start"] for g in got["gaps"]] == sorted(g["start"] for g in got["gaps"])
    assert len(got["gpus"]) == len(expected["gpus"])
    for ours, theirs in zip(got["gpus"], expected["gpus"], strict=True):
        assert ours["gpu"] == theirs["gpu"]
        assert ours["workers"] == theirs["workers"]
        assert ours["span_ms"] == theirs["span_ms"]
        assert ours["timeline_busy_ms"] == theirs["timeline_busy_ms"]
        assert abs(ours["timeline_util"] - theirs["timeline_util"]) <= 0.001
        assert abs(ours["kernel_util"] - theirs["kernel_util"]) <= 0.015
        # the truth lies inside the range the log allows, and the estimate too
        lo, hi = ours["kernel_util_range"]
        assert lo <= theirs["kernel_util"] <= hi
        assert lo <= ours["kernel_util"] <= hi
    ours_proofs = {p["job"]: p for p in got["proofs"]}
    assert set(ours_proofs) == {p["job"] for p in expected["proofs"]}
    for p in expected["proofs"]:
        mine = ours_proofs[p["job"]]
        assert (mine["completed"], mine["partitions"], mine["kind"]) == (
            p["completed"],
            p["partitions"],
            p["kind"],
        )
        assert (mine["first_synth_start"], mine["last_gpu_end"]) == (
            p["first_synth_start"],
            p["last_gpu_end"],
        )
    s, t = got["summary"], expected["summary"]
    assert s["proofs_completed"] == t["proofs_completed"]
    assert s["run_span_ms"] == t["run_span_ms"]
    assert abs(s["s_per_proof"] - t["s_per_proof"]) <= 0.1
    for key in ("gap_count", "gap_total_ms", "gap_max_ms"):
        assert s[key] == t[key]
    for key, value in expected["lines"].items():
        assert got["lines"][key] == value, key


def test_phases_close_to_truth(sample_name: str) -> None:
    """Reconstructed phases of each partition are within a few ms of the real ones."""
    expected = truth(sample_name)
    model = read_log(SAMPLES / f"{sample_name}.log")
    table = model.parts
    index = {(table.job_of(i), table.get(i).partition): i for i in range(len(table))}
    checked = 0
    for p in expected["partitions"]:
        if p["phases_ms"]["kernel"] is None:
            continue
        mine = table.get(index[(p["job"], p["partition"])]).phases_ms
        for key in ("alloc", "kernel", "barrier", "cleanup"):
            assert abs(mine[key] - p["phases_ms"][key]) < 20, (p["job"], p["partition"], key)
        if mine["unknown"] == 0:
            # with the lock line the CPU time before the lock splits exactly
            for key in ("pre_lock", "lock_wait"):
                assert abs(mine[key] - p["phases_ms"][key]) < 5
        checked += 1
    assert checked > 0
