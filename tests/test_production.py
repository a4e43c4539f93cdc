"""The logs operators have: journald and container captures, span prefixes, GPU ordinals,
splices cut at any character, failures, heavy load, older engines."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from conftest import SAMPLES
from helpers import build, model_fingerprint

from cuzksim import reference as ref
from cuzksim.config import HEAVY_CONFIG, SimConfig, random_config
from cuzksim.engine import EngineSim
from cuzksim.logs import lose_lines, simulate
from parsers.builder import LogBuilder
from parsers.model import GpuStats, LogModel, Phase
from parsers.report import NOT_A_CUZK_LOG, PIPELINE_DISABLED, missing_timeline, report_dict


def _figures(model: LogModel) -> dict[str, object]:
    doc = report_dict(model)
    doc.pop("wall_anchor")
    doc.pop("source")
    return doc


# -- captures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "capture", ["journal", "journal-iso", "journal-precise", "docker"], ids=lambda c: c
)
def test_a_capture_prefix_changes_nothing(capture: str) -> None:
    """The same run captured by journalctl (each output) or `docker logs -t` reads like
    the plain file: every line has its prefix, both halves of a splice included."""
    cfg = SimConfig(
        seed=31, proofs=5, gpus=2, gw=2, stdout="ansi", spans=True, splice=0.08, gpu_base=2
    )
    _, plain = simulate(cfg)
    _, prefixed = simulate(SimConfig(**{**cfg.__dict__, "capture": capture}))
    assert prefixed != plain and prefixed.count(b"\n") == plain.count(b"\n")
    assert _figures(build(prefixed)) == _figures(build(plain))


def test_the_journal_sample_reads_the_same_from_stdin() -> None:
    log = SAMPLES / "journal-2gpu.log"
    args = [sys.executable, "-m", "tui.cli", "--report", "--json"]
    from_file = subprocess.run([*args, str(log)], capture_output=True, check=True)
    from_stdin = subprocess.run(
        [*args, "-"], input=log.read_bytes(), capture_output=True, check=True
    )
    a, b = json.loads(from_file.stdout), json.loads(from_stdin.stdout)
    a.pop("source"), b.pop("source")
    assert a == b
    assert [g["gpu"] for g in a["gpus"]] == [2, 3]  # CUDA ordinals as printed


def test_journal_prefix_clock_anchors_a_log_without_stdout() -> None:
    """Without stdout lines the journal's receive time gives the wall clock of offset 0."""
    cfg = SimConfig(seed=32, proofs=3, stdout="none", capture="journal-precise")
    sim, data = simulate(cfg)
    model = build(data)
    assert model.wall_anchor is not None
    truth = sim.wall_anchor.replace(tzinfo=None)
    assert abs(model.wall_anchor.replace(tzinfo=None) - truth) < timedelta(milliseconds=5)
    iso = build(simulate(SimConfig(**{**cfg.__dict__, "capture": "journal-iso"}))[1])
    assert iso.wall_anchor is not None and iso.wall_anchor.tzinfo is not None
    assert abs(iso.wall_anchor - sim.wall_anchor) < timedelta(seconds=1.5)


def test_prefix_forms() -> None:
    """Each prefix is recognised and a tracing line's own time is not taken for one."""
    body = (
        b"TIMELINE,10,GPU_START,j,worker=0,partition=0\n"
        b"TIMELINE,20,GPU_END,j,worker=0,partition=0,gpu_ms=10\n"
    )
    for prefix in (
        b"Mar 16 09:12:37 gpu-host-1 cuzk[41231]: ",
        b"Mar  6 09:12:37.338119 host cuzk: ",
        b"2026-03-16T09:12:37+0000 gpu-host-1 cuzk[41231]: ",
        b"2026-03-16T09:12:37.123456789Z ",
        b"2026-03-16T09:12:37.123+01:00 ",
    ):
        data = b"".join(prefix + line + b"\n" for line in body.splitlines())
        model = build(data)
        assert model.gpus[0].busy_ms == 10, prefix
        assert model.wall_anchor is not None, prefix
    tracing = b"2026-03-16T09:12:37.123456Z  INFO cuzk_core::engine: starting cuzk engine\n"
    model = build(tracing + body)
    assert model.counts.stdout == 1
    assert model.wall_anchor == datetime(2026, 3, 16, 9, 12, 37, 123456, tzinfo=UTC)


# -- what the engine prints -------------------------------------------------------------------


def test_span_prefixes_map_workers_to_gpus() -> None:
    """With no `worker started` line, the gpu_worker span still names each worker's GPU."""
    cfg = SimConfig(seed=33, proofs=4, gpus=2, gw=2, stdout="ansi", spans=True, gpu_base=2)
    _, data = simulate(cfg)
    kept = b"\n".join(x for x in data.split(b"\n") if b"worker started" not in x)
    model = build(kept)
    assert [g.gpu for g in model.gpus] == [2, 3]
    assert [g.workers for g in model.gpus] == [(0, 1), (2, 3)]


def test_batched_proofs_sum_their_ntt_blocks() -> None:
    cfg = SimConfig(seed=34, proofs=6, gpus=2, gw=2, stdout="plain", circuits=0.5)
    sim, data = simulate(cfg)
    assert data.count(b"CUZK_NTT_H") > data.count(b"ntt_msm_h_ms")
    model = build(data)
    assert model.unattributed_timing_lines == 0
    for g in model.gpus:
        assert abs(g.kernel_util - ref.gpu_figures(sim, g.gpu)["kernel_util"]) < 0.002


def test_failed_proves_end_where_their_worker_moved_on() -> None:
    data = (
        b"TIMELINE,100,GPU_START,a,worker=0,partition=0\n"
        b"TIMELINE,900,GPU_START,b,worker=0,partition=1\n"  # a failed: its worker moved on
        b"TIMELINE,5000,GPU_END,b,worker=0,partition=1,gpu_ms=4100\n"
        b"TIMELINE,6000,GPU_START,c,worker=0,partition=2\n"  # c: still running
    )
    live = LogBuilder()
    live.feed(data)
    model = live.snapshot()
    t = model.parts
    jobs = {t.job_of(i): i for i in range(len(t))}
    a, c = jobs["a"], jobs["c"]
    assert bool(t.failed[a]) and not bool(t.failed[c])
    assert model.gpus[0].in_flight == 1
    lo, hi = int(t.seg_offsets[a]), int(t.seg_offsets[a + 1])
    assert t.seg_phase[lo:hi].tolist() == [Phase.FAILED]
    assert (t.seg_start[lo], t.seg_end[hi - 1]) == (100.0, 900.0)  # not "running" to now
    # the log ends with c under way: running when the log ends, not failed
    done = live.build()
    assert not bool(done.parts.failed[jobs["c"]]) and done.gpus[0].in_flight == 1
    assert bool(done.parts.failed[jobs["a"]])


def _failed_as_told(c: dict[str, np.ndarray], worker: np.ndarray, stopped: bool) -> np.ndarray:
    """`_failed_proves`'s rule read straight from its docstring, one prove at a time."""
    start, end = c["gpu_start"], c["gpu_end"]
    out = np.full(len(start), np.nan)
    for i in range(len(start)):
        if np.isnan(start[i]) or not np.isnan(end[i]):
            continue
        unlock = not (np.isnan(c["mutex_held"][i]) and np.isnan(c["tail_msm"][i]))
        later = [
            j
            for j in range(len(start))
            if worker[i] >= 0 and worker[j] == worker[i] and start[j] > start[i]
        ]
        if not (stopped or (later and not unlock) or any(~np.isnan(end[later]))):
            continue
        if later:
            out[i] = min(start[j] for j in later)
        elif unlock and not np.isnan(c["mutex_held"][i]):
            lock = start[i] + np.nan_to_num(c["pre_lock"][i]) + np.nan_to_num(c["mutex_wait"][i])
            out[i] = lock + c["mutex_held"][i]
        else:
            out[i] = start[i]
    return out


def test_failed_proves_are_found_as_the_rule_says_in_one_sort() -> None:
    """Each open prove was looked for with a search of every prove (its worker's number
    converted at each): a log with thousands of failures took seconds to minutes. Random
    tables with ties, unlock lines and proves of no worker give what the rule says."""
    from parsers.rows import _failed_proves

    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(1, 40))
        start = rng.integers(0, 20, n).astype(float)  # equal starts: ties
        start[rng.random(n) < 0.15] = np.nan
        end = np.where(rng.random(n) < 0.5, start + rng.integers(1, 9, n), np.nan)
        c = {"gpu_start": start, "gpu_end": end}
        for key in ("mutex_held", "tail_msm", "pre_lock", "mutex_wait"):
            c[key] = np.where(rng.random(n) < 0.3, rng.integers(1, 5, n).astype(float), np.nan)
        worker = rng.integers(-1, 4, n).astype(np.int32)
        for stopped in (False, True):
            got = _failed_proves(c, worker, stopped)
            assert np.array_equal(got, _failed_as_told(c, worker, stopped), equal_nan=True), trial


def test_a_synthesis_that_never_ended_stops_counting() -> None:
    lines = [f"TIMELINE,{k * 10},SYNTH_START,j{k},partition=0" for k in range(4)]
    lines += [
        f"TIMELINE,{1000 + k * 10},SYNTH_END,j{k},partition=0,synth_ms=1000" for k in (0, 1, 2)
    ]
    lines += ["TIMELINE,9000,SYNTH_START,late,partition=0"]  # keeps the clock going
    live = LogBuilder()
    live.feed(("\n".join(lines) + "\n").encode())
    # j3 never ended: counted for one median synthesis, not to the end of the log; `late`
    # is still running
    model = live.snapshot()
    counts = dict(zip(model.synth_times.tolist(), model.synth_counts.tolist(), strict=True))
    assert counts[9000.0] == 1 and model.synth_counts[-1] == 1
    assert counts[1030.0] == 0  # j3 stopped counting one median (1000 ms) after its start
    # the log complete, `late` failed too
    assert live.build().synth_counts[-1] == 0


def test_a_log_without_timeline_lines_says_why() -> None:
    disabled = build(
        b"\x1b[2m2026-03-16T09:31:15.856886Z\x1b[0m \x1b[32m INFO\x1b[0m cuzk_core::engine: "
        b"starting cuzk engine pipeline_enabled=false\n"
        b"CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=700\n"
    )
    assert missing_timeline(disabled) == PIPELINE_DISABLED
    assert missing_timeline(build(b"just some text\nand more\n")) == NOT_A_CUZK_LOG
    assert missing_timeline(build((SAMPLES / "tiny.log").read_bytes())) is None


# -- splices --------------------------------------------------------------------------------

_RUN = [
    "TIMELINE,100,SYNTH_START,porep-1000-7,partition=0",
    "TIMELINE,200,SYNTH_END,porep-1000-7,partition=0,synth_ms=100",
    "TIMELINE,201,GPU_QUEUE,porep-1000-7,partition=0",
    "TIMELINE,210,GPU_START,porep-1000-7,worker=0,partition=0",
    "CUZK_TIMING: pre_lock_cpu_ms=5 mutex_wait_ms=0",
    "CUZK_NTT_H: d_b_alloc=10ms ntt_kernels=300ms coset_intt_sync=100ms msm_init=1ms "
    "msm_invoke=200ms msm_dtor=1ms total=612ms",
    "CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=612",
    "CUZK_TIMING: gpu_tid=0 barrier_wait_ms=100",
    "2026-03-16T09:12:37.123456Z  INFO cuzk_core::engine: pipeline GPU worker started "
    "worker_id=0 gpu=3 sub_id=0",
    "CUZK_TIMING: gpu_tid=0 batch_add_ms=600",
    "CUZK_TIMING: gpu_tid=0 tail_msm_ms=80 gpu_total_ms=1392",
    "CUZK_TIMING: mutex_held_ms=1392 total_start_fn_ms=1397",
    "TIMELINE,2000,GPU_END,porep-1000-7,worker=0,partition=0,gpu_ms=1790",
    "TIMELINE,2001,GPU_START,porep-1000-7,worker=0,partition=1",
    "TIMELINE,3000,GPU_END,porep-1000-7,worker=0,partition=1,gpu_ms=999",
]


def _cut(lines: list[str], victim: int, at: int, intruder: int) -> bytes:
    """`lines` with line `victim` cut after `at` characters and line `intruder` (the next
    one written) landing between its parts."""
    out = list(lines)
    text, inner = out[victim], out[intruder]
    out[victim] = text[:at] + inner
    out[intruder] = text[at:]
    return ("\n".join(out) + "\n").encode()


def test_a_line_cut_at_any_character_is_rejoined() -> None:
    whole = build(("\n".join(_RUN) + "\n").encode())
    expected = model_fingerprint(whole)
    # TIMELINE lines cut by a C++ line and by a stdout line, and a stdout line cut by the
    # TIMELINE line after it, at every character
    cases = [(3, 4), (12, 13), (1, 2)]
    cases += [(8, 9)]  # a stdout line cut by a C++ line
    checked = 0
    for victim, intruder in cases:
        for at in range(1, len(_RUN[victim])):
            got = build(_cut(_RUN, victim, at, intruder))
            fp = model_fingerprint(got)
            assert fp["report"]["gpus"] == expected["report"]["gpus"], (victim, at)
            assert fp["report"]["gaps"] == expected["report"]["gaps"], (victim, at)
            assert fp["parts"] == expected["parts"], (victim, at)
            assert got.counts.timeline == whole.counts.timeline, (victim, at)
            assert got.counts.spliced == 1, (victim, at)
            checked += 1
    assert checked > 200


@pytest.mark.parametrize(
    "prefix",
    [
        "2026-03-16T09:12:37.123456000Z ",
        "2026-03-16T09:12:37+0000 gpu-host-1 cuzk[41231]: ",
        "Mar 16 09:12:37 gpu-host-1 cuzk[41231]: ",
    ],
    ids=["docker", "journal-iso", "journal"],
)
def test_a_window_post_line_cut_inside_its_id_is_rejoined_under_a_capture(prefix: str) -> None:
    """A window-PoSt id holds spaces: `TIMELINE,..,wdpost-1000-4-[225 CUZK_TIMING: ..` after
    a capture's time is not a journal's `host ident: `, and the line is rejoined."""
    run = [
        line.replace("porep-1000-7", "wdpost-1000-4-[225 215 213 252 38 208 234 67]")
        for line in _RUN
    ]

    def captured(lines: list[str]) -> bytes:
        return "".join(prefix + line + "\n" for line in lines).encode()

    expected = model_fingerprint(build(captured(run)))
    for at in range(1, len(run[3])):
        got = build(captured(_cut(run, 3, at, 4).decode().splitlines()))
        fp = model_fingerprint(got)
        assert fp["report"]["gpus"] == expected["report"]["gpus"], at
        assert fp["parts"] == expected["parts"], at
        assert got.counts.spliced == 1, at


def test_a_stdout_line_cut_with_a_timeline_line_inside() -> None:
    run = list(_RUN)
    run.insert(13, run.pop(8))  # the stdout line just before GPU_END
    whole = build(("\n".join(run) + "\n").encode())
    for at in range(1, len(run[12])):
        got = build(_cut(run, 12, at, 13))
        assert [g.gpu for g in got.gpus] == [3], at  # the worker line was rejoined
        assert (
            model_fingerprint(got)["report"]["gaps"] == model_fingerprint(whole)["report"]["gaps"]
        )
        assert got.summary.proofs_completed == whole.summary.proofs_completed


# -- attribution under every load ------------------------------------------------------------


def test_heavy_load_on_three_gpus_is_exact() -> None:
    """3 GPUs x 3 workers, GPU-bound, 15 proofs in flight, splices."""
    sim, data = simulate(HEAVY_CONFIG)
    model = build(data)
    assert model.unattributed_timing_lines == 0
    for g in model.gpus:
        truth = ref.gpu_figures(sim, g.gpu)
        assert truth["timeline_util"] > 0.9
        assert abs(g.kernel_util - truth["kernel_util"]) < 0.005
        lo, hi = g.kernel_util_range
        assert lo <= truth["kernel_util"] <= hi and hi - lo < 0.005


def _random_run(seed: int) -> tuple[SimConfig, EngineSim, LogModel, int]:
    """Random run `seed`, simulated and read: a log without stdout names no GPU, so its
    workers map to GPUs 0, 1, .. by --workers-per-gpu, and `base` gives the simulator's
    number of the model's GPU 0."""
    cfg = random_config(seed)
    sim, data = simulate(cfg)
    model = build(data, workers_per_gpu=cfg.gw if cfg.stdout == "none" else None)
    return cfg, sim, model, cfg.gpu_base if cfg.stdout == "none" else 0


RANDOM_RUNS = range(5000, 5120)


def test_random_configurations() -> None:
    """120 random runs (eras, 1-4 GPUs x 1-3 workers, starved to GPU-bound, splices, jitter,
    failures, captures): gaps and TIMELINE figures exact; the current engine's kernel
    figure within 0.015 and its range (nearly always) a point; every era's truth inside
    (docs/analysis.md#kernel_util_range: a narrow range that misses it is a bug)."""
    errors: list[float] = []
    estimates = 0
    for seed in RANDOM_RUNS:
        cfg, sim, model, base = _random_run(seed)
        got = [
            (g.gpu + base, g.start, g.end, g.before.job, g.after.job, g.cause) for g in model.gaps
        ]
        want = [(g.gpu, g.start, g.end, g.before_job, g.after_job, g.cause) for g in ref.gaps(sim)]
        assert got == want, seed
        assert model.summary.proofs_completed == ref.proofs_completed(sim), seed
        for g in model.gpus:
            if g.span is None:
                continue
            truth = ref.gpu_figures(sim, g.gpu + base)
            assert abs(g.timeline_util - truth["timeline_util"]) < 1e-9, seed
            lo, hi = g.kernel_util_range
            assert lo - 1e-9 <= truth["kernel_util"] <= hi + 1e-9, (seed, g.gpu)
            if cfg.era == "p12":
                err = abs(g.kernel_util - truth["kernel_util"])
                errors.append(err)
                assert err <= 0.015, (seed, g.gpu)
                assert hi - lo < 0.01, (seed, g.gpu)
                estimates += g.kernel_is_estimate
    assert len(errors) > 100
    # a range wider than a point only where two GPUs' holders locked within a few ms and
    # their lines fit either GPU within the truncation of the durations
    assert estimates <= 0.03 * len(errors)


@pytest.mark.parametrize(
    "seed",
    [
        # lines under a lock given to an interval after its GPU_END (two GPUs locked 3-12 ms
        # apart); a worker's failed interval locking after the worker picked up its next
        71156,
        72240,
        72889,
        # same states reached by ways that gave two GPUs' lines the other way round, or
        # swapped first-use CUZK_NTT_H blocks (allocation differs): doubt not kept
        71664,
        72597,
        73888,
        73999,
        # a window-PoSt TIMELINE line cut inside its id by a timing line in a docker capture
        72976,
        # a worker's failed interval took the lock line of the interval it picked up next
        # (28 ms later) and every line after it: shown as exact, 0.010 off
        102216,
    ],
)
def test_the_truth_lies_inside_the_kernel_range_where_lines_fit_two_gpus(seed: int) -> None:
    """Runs found by benchmarks/sweep_attribution.py whose truth fell outside a range
    (four of them shown as exact, off by 0.010-0.028)."""
    _, sim, model, base = _random_run(seed)
    assert [g.duration_ms for g in model.gaps] == [g.end - g.start for g in ref.gaps(sim)]
    for g in model.gpus:
        truth = ref.gpu_figures(sim, g.gpu + base)["kernel_util"]
        lo, hi = g.kernel_util_range
        assert lo - 1e-9 <= truth <= hi + 1e-9, (g.gpu, truth, lo, hi)
        assert abs(g.kernel_util - truth) < 0.01 or g.kernel_is_estimate, g.gpu


@pytest.mark.parametrize("seed", [71101, 71156, 71378])
def test_a_line_printed_after_an_intervals_gpu_end_is_not_its_own(seed: int) -> None:
    """Two GPUs' holders locked a few ms apart: their lines fit either GPU, until one printed
    after the GPU_END of the interval the other reading gives it to. The log then pins the
    figure (without that rule: estimates off by up to 0.028)."""
    _, sim, model, base = _random_run(seed)
    for g in model.gpus:
        truth = ref.gpu_figures(sim, g.gpu + base)["kernel_util"]
        assert abs(g.kernel_util - truth) < 0.001, g.gpu
        assert not g.kernel_is_estimate, g.gpu


def _interval_lines() -> list[str]:
    """The timing lines of one GPU interval under its lock (NTT to unlock): 1,392 ms held,
    of which 602 + 600 + 80 ms of kernels."""
    return [
        "CUZK_NTT_H: d_b_alloc=10ms ntt_kernels=300ms coset_intt_sync=100ms msm_init=1ms "
        "msm_invoke=200ms msm_dtor=1ms total=612ms",
        "CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=612",
        "CUZK_TIMING: gpu_tid=0 barrier_wait_ms=100",
        "CUZK_TIMING: gpu_tid=0 batch_add_ms=600",
        "CUZK_TIMING: gpu_tid=0 tail_msm_ms=80 gpu_total_ms=1392",
        "CUZK_TIMING: mutex_held_ms=1392 total_start_fn_ms=1412",
    ]


def test_an_interval_that_failed_before_its_lock_does_not_take_its_twins() -> None:
    """Two intervals start on one GPU 10 ms apart; the first fails before the lock (no
    GPU_END), the second locks and ends. The one lock line fits both: it is the second's,
    since an interval that ended took the lock (it was given to the first, which no figure
    counts: an exact 0 % kernel)."""
    log = [
        "2026-03-16T09:12:37.000000Z  INFO cuzk_core::engine: pipeline GPU worker started "
        "worker_id=0 gpu=0 sub_id=0",
        "2026-03-16T09:12:37.000000Z  INFO cuzk_core::engine: pipeline GPU worker started "
        "worker_id=1 gpu=0 sub_id=1",
        "TIMELINE,0,SYNTH_START,porep-1000-7,partition=0",
        "TIMELINE,0,SYNTH_START,porep-1000-7,partition=1",
        "TIMELINE,90,SYNTH_END,porep-1000-7,partition=0,synth_ms=90",
        "TIMELINE,90,GPU_QUEUE,porep-1000-7,partition=0",
        "TIMELINE,95,SYNTH_END,porep-1000-7,partition=1,synth_ms=95",
        "TIMELINE,95,GPU_QUEUE,porep-1000-7,partition=1",
        "TIMELINE,100,GPU_PICKUP,porep-1000-7,worker=0,partition=0",
        "TIMELINE,100,GPU_START,porep-1000-7,worker=0,partition=0",
        "TIMELINE,110,GPU_PICKUP,porep-1000-7,worker=1,partition=1",
        "TIMELINE,110,GPU_START,porep-1000-7,worker=1,partition=1",
        "CUZK_TIMING: pre_lock_cpu_ms=20 mutex_wait_ms=0",
        *_interval_lines(),
        "TIMELINE,1600,GPU_END,porep-1000-7,worker=1,partition=1,gpu_ms=1490",
    ]
    model = build(("\n".join(log) + "\n").encode())
    (g,) = model.gpus
    # kernel: 612 - 11 (allocation) + 600 + 80 ms of the 1490 ms busy interval
    lo, hi = g.kernel_util_range
    assert lo <= (612 - 11 + 600 + 80) / 1490 <= hi
    assert g.kernel_util == pytest.approx(1281 / 1490, abs=0.005)
    t = model.parts
    ended = [i for i in range(len(t)) if t.gpu_end[i] == t.gpu_end[i]]
    assert [int(t.partition[i]) for i in ended] == [1]
    assert t.lock_acquired[ended[0]] == 130


def _two_workers_one_gpu(job: str, partitions: int) -> list[str]:
    """The head of a hand-made log: workers 0 and 1 on GPU 0, and `partitions` partitions
    of `job` synthesized and queued by 90 ms."""
    log = [
        "2026-03-16T09:12:37.000000Z  INFO cuzk_core::engine: pipeline GPU worker started "
        f"worker_id={w} gpu=0 sub_id={w}"
        for w in (0, 1)
    ]
    for p in range(partitions):
        log += [
            f"TIMELINE,0,SYNTH_START,{job},partition={p}",
            f"TIMELINE,90,SYNTH_END,{job},partition={p},synth_ms=90",
            f"TIMELINE,90,GPU_QUEUE,{job},partition={p}",
        ]
    return log


def test_a_lost_lock_line_does_not_lose_the_gpus_later_locks() -> None:
    """Four intervals hold one GPU in turn; the second's lock line is lost. The third locks
    1.4 s after the unlock the log last gave: the lines in between were lost, which costs
    one lost line. (It cost that distance: every later lock on the GPU was further from it
    and cost more than losing it, so the GPU's kernels stopped at the lost line.)"""
    job = "porep-1000-7"
    log = _two_workers_one_gpu(job, partitions=4)

    def start(t: int, w: int, p: int) -> list[str]:
        return [
            f"TIMELINE,{t},GPU_PICKUP,{job},worker={w},partition={p}",
            f"TIMELINE,{t},GPU_START,{job},worker={w},partition={p}",
        ]

    def end(t: int, w: int, p: int) -> str:
        return f"TIMELINE,{t},GPU_END,{job},worker={w},partition={p},gpu_ms=1"

    log += [*start(100, 0, 0), "CUZK_TIMING: pre_lock_cpu_ms=20 mutex_wait_ms=0"]  # 120
    log += [*start(200, 1, 1), *_interval_lines(), end(1600, 0, 0)]  # unlock 1512
    log += [*start(1700, 0, 2), *_interval_lines()]  # the second's: its lock line lost
    log += ["CUZK_TIMING: pre_lock_cpu_ms=20 mutex_wait_ms=1184", end(3000, 1, 1)]  # 2904
    log += [*start(3100, 1, 3), *_interval_lines()]  # the third's: unlock 4296
    log += ["CUZK_TIMING: pre_lock_cpu_ms=20 mutex_wait_ms=1176", end(4400, 0, 2)]  # 4296
    log += [*_interval_lines(), end(5800, 1, 3)]
    model = build(("\n".join(log) + "\n").encode())
    t = model.parts
    locks = {int(t.partition[i]): float(t.lock_acquired[i]) for i in range(len(t))}
    assert locks[0] == 120 and locks[2] == 2904 and locks[3] == 4296, locks
    (g,) = model.gpus
    lo, hi = g.kernel_util_range
    # the second's lines fit no holder the log names: an estimate, the truth in its range
    assert g.kernel_is_estimate
    assert lo <= 4 * (602 + 600 + 80) / 5700 <= hi


def test_a_line_is_placed_after_a_worker_moved_on_by_its_stamps_not_a_prediction() -> None:
    """Three GPUs of one worker each, started within 8 ms: their lock lines fit each other's
    GPUs, and a way that took another GPU's lock line predicts its holder's lines tens of ms
    late. Where those predictions (not the stamps) said a line came after the holder's
    worker had moved on, the ways that kept the doubt were dropped: two ranges 0.0007 wide
    missed the truth by 0.0003-0.0004."""
    # a random current-engine run made busier (as benchmarks/sweep_attribution.py's twin
    # sweeps were): more GPUs of one worker each, synthesis as fast as the GPUs
    cfg = replace(
        random_config(341978, era="p12"),
        gpus=3,
        gw=1,
        pw=30,
        synth_ms=2000.0,
        synth_sd=166.0,
        concurrency=9,
    )
    sim, data = simulate(cfg)
    model = build(data)
    assert len(model.gpus) == 3
    for g in model.gpus:
        truth = ref.gpu_figures(sim, g.gpu)["kernel_util"]
        lo, hi = g.kernel_util_range
        assert lo - 1e-9 <= truth <= hi + 1e-9, (g.gpu, truth, lo, hi)


def test_a_lost_kernel_line_leaves_the_figure_an_estimate_with_the_truth_inside() -> None:
    """Two intervals hold one GPU in turn; the second's `batch_add_ms` line is lost (a rate
    limit). Its 600 ms of kernels are in no line: the stretch its lines leave unexplained
    may hold them, so the figure is an estimate whose range holds the truth (it was shown
    as exact, 600 ms short)."""
    job = "porep-1000-7"
    log = _two_workers_one_gpu(job, partitions=2)
    lost = [x for x in _interval_lines() if "batch_add_ms" not in x]
    log += [
        f"TIMELINE,100,GPU_PICKUP,{job},worker=0,partition=0",
        f"TIMELINE,100,GPU_START,{job},worker=0,partition=0",
        "CUZK_TIMING: pre_lock_cpu_ms=20 mutex_wait_ms=0",  # locks at 120, unlocks at 1512
        f"TIMELINE,200,GPU_PICKUP,{job},worker=1,partition=1",
        f"TIMELINE,200,GPU_START,{job},worker=1,partition=1",
        *_interval_lines(),
        "CUZK_TIMING: pre_lock_cpu_ms=20 mutex_wait_ms=1292",  # locks at 1512
        f"TIMELINE,1600,GPU_END,{job},worker=0,partition=0,gpu_ms=1500",
        *lost,
        f"TIMELINE,3000,GPU_END,{job},worker=1,partition=1,gpu_ms=2800",
    ]
    model = build(("\n".join(log) + "\n").encode())
    (g,) = model.gpus
    lo, hi = g.kernel_util_range
    truth = 2 * (602 + 600 + 80) / 2900
    assert g.kernel_is_estimate
    assert lo <= truth <= hi, (lo, truth, hi)
    # the estimate takes half the unexplained stretch (the middle of what the log allows):
    # nearer the truth than the lines alone (600 ms short), yet not all of it
    assert truth - 600 / 2900 + 0.05 < g.kernel_util < truth


@pytest.mark.parametrize("era", ["feb", "p12"])
def test_a_log_without_its_timing_lines_says_kernel_unknown_not_zero(
    era: Literal["feb", "p12"],
) -> None:
    """A capture that kept the TIMELINE lines and not the C++ ones (or lost them): kernel
    busy was `0ms 0.0 %`, range [0, 0], on an engine without lock lines. Kernels may have
    run all through the intervals: the range holds the truth, per GPU and for all GPUs."""
    cfg = SimConfig(seed=61, proofs=4, gpus=2, gw=2, stdout="plain")
    sim, data = simulate(replace(cfg, era=era))
    kept = b"\n".join(x for x in data.split(b"\n") if not x.startswith(b"CUZK_"))
    model = build(kept)
    assert model.counts.cuzk_timing == 0 and len(model.gpus) == 2
    for g in model.gpus:
        truth = ref.gpu_figures(sim, g.gpu)["kernel_util"]
        lo, hi = g.kernel_util_range
        assert g.kernel_is_estimate and lo <= truth <= hi, (g.gpu, lo, truth, hi)
        assert hi == pytest.approx(g.timeline_util)  # all of its busy time may be kernel
    lo_ms, hi_ms = model.all_gpus_kernel_ms
    truth_ms = sum(ref.gpu_figures(sim, g.gpu)["kernel_util"] * g.span_ms for g in model.gpus)
    assert lo_ms <= truth_ms <= hi_ms


def test_intervals_the_attribution_left_without_lines_do_not_widen_a_complete_log() -> None:
    """On an older engine with every line kept, the attribution may leave an interval
    without a kernel line (its lines went to another interval, or to none: both counted).
    Their time was added to the range's top as if lost: the all-GPUs figure, pinned down by
    every line being some GPU's, went from 61.8-71.4 % to 61.8-100 % (random_config 910)."""
    sim, data = simulate(random_config(910, "p9"))
    builder = LogBuilder(source="p9")
    builder.feed(data)
    cols = builder.columns()
    f = cols.floats
    done = ~np.isnan(f["gpu_start"]) & ~np.isnan(f["gpu_end"])
    no_line = done & np.isnan(f["ntt_msm_h"]) & np.isnan(f["tail_msm"])
    model = builder.build()
    assert no_line.any() and model.counts.cuzk_timing > 0  # the case: lines kept, some left
    lo, hi = model.all_gpus_kernel_ms
    truth = sum(ref.gpu_figures(sim, g.gpu)["kernel_util"] * g.span_ms for g in model.gpus)
    assert lo <= truth <= hi and (hi - lo) / model.all_gpus_span_ms < 0.12


def test_all_gpus_kernel_range_holds_the_truth_where_lines_were_lost() -> None:
    """Half the C++ lines lost on an engine with lock lines: each GPU's top holds the time
    its lines leave unexplained, the all-GPUs top did not, so `all 3 GPUs: kernel ≈7.1 %
    (2.2–7.1 %)` sat under each GPU's ≈13-15 % and under the truth."""
    sim, data = simulate(SimConfig(seed=2, proofs=8, gpus=3, gw=2, stdout="plain"))
    model = build(lose_lines(data, "cpp", 0.5, seed=1))
    assert model.counts.cuzk_timing > 0 and all(g.kernel_is_estimate for g in model.gpus)
    lo, hi = model.all_gpus_kernel_ms
    truth = sum(ref.gpu_figures(sim, g.gpu)["kernel_util"] * g.span_ms for g in model.gpus)
    assert lo <= truth <= hi, (lo, truth, hi)
    assert lo <= model.all_gpus_kernel_estimate_ms <= hi
    whole = build(data)  # every line kept: pinned down as before
    lo, hi = whole.all_gpus_kernel_ms
    assert (hi - lo) / whole.all_gpus_span_ms < 0.005


@pytest.mark.parametrize("seed", [72914, 72930, 72947, 73888])
def test_a_live_snapshot_of_the_whole_log_has_the_finished_ranges(seed: int) -> None:
    """The decisions still open (the last lines) carry their doubt into a snapshot: read
    to its end, a growing log shows the ranges its finished report will."""
    cfg = random_config(seed)
    _, data = simulate(cfg)
    live = LogBuilder(source="t")
    live.feed(data)
    snapshot = live.snapshot()
    finished = build(data)
    assert [g.kernel_util_range for g in snapshot.gpus] == [
        g.kernel_util_range for g in finished.gpus
    ]
    assert any(g.kernel_util_range[1] - g.kernel_util_range[0] > 1e-4 for g in finished.gpus)


def test_eight_gpus_in_lockstep_whose_lines_fit_any_of_them() -> None:
    """Eight GPUs start, lock and print identical lines at the same moments: every way of
    giving the lines to them fits, and the beam holds more ways than it scans one by one (it
    finds a way's twin by its hash). Each GPU's figure is what every one of them ran."""
    lines = [
        f"2026-03-16T09:12:37.000000Z  INFO cuzk_core::engine: pipeline GPU worker started "
        f"worker_id={w} gpu={w} sub_id=0"
        for w in range(8)
    ]
    each = [
        "CUZK_TIMING: pre_lock_cpu_ms=10 mutex_wait_ms=0",
        "CUZK_NTT_H: d_b_alloc=10ms ntt_kernels=300ms coset_intt_sync=100ms msm_init=1ms "
        "msm_invoke=200ms msm_dtor=1ms total=612ms",
        "CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=612",
        "CUZK_TIMING: gpu_tid=0 barrier_wait_ms=0",
        "CUZK_TIMING: gpu_tid=0 batch_add_ms=600",
        "CUZK_TIMING: gpu_tid=0 tail_msm_ms=80 gpu_total_ms=1292",
        "CUZK_TIMING: mutex_held_ms=1293 total_start_fn_ms=1303",
    ]
    rounds = 30
    for r in range(rounds):
        t = r * 1320
        lines += [f"TIMELINE,{t},GPU_START,job-{r},worker={w},partition={w}" for w in range(8)]
        for line in each:
            lines += [line] * 8
        lines += [
            f"TIMELINE,{t + 1310},GPU_END,job-{r},worker={w},partition={w},gpu_ms=1310"
            for w in range(8)
        ]
    model = build(("\n".join(lines) + "\n").encode())
    assert model.unattributed_timing_lines == 0
    span = (rounds - 1) * 1320 + 1310
    truth = rounds * (612 - 11 + 600 + 80) / span  # NTT less its allocation, batch, tail
    assert len(model.gpus) == 8
    for g in model.gpus:
        lo, hi = g.kernel_util_range
        assert lo - 1e-9 <= truth <= hi + 1e-9, g.gpu
        assert g.kernel_util == pytest.approx(truth, abs=1e-4), g.gpu


def test_the_february_engine_on_one_gpu_is_near_exact() -> None:
    for seed in (61, 62, 63):
        cfg = SimConfig(
            seed=seed, proofs=5, era="feb", gpus=1, gw=random.Random(seed).choice([1, 2])
        )
        sim, data = simulate(cfg)
        (g,) = build(data).gpus
        truth = ref.gpu_figures(sim, g.gpu)["kernel_util"]
        assert abs(g.kernel_util - truth) < 0.005
        lo, hi = g.kernel_util_range
        assert lo <= truth <= hi


def test_older_engines_on_several_gpus_say_estimate() -> None:
    cfg = SimConfig(seed=64, proofs=6, era="p9", gpus=2, gw=2, stdout="plain", concurrency=4)
    sim, data = simulate(cfg)
    model = build(data)
    assert any(g.kernel_is_estimate for g in model.gpus)
    for g in model.gpus:
        lo, hi = g.kernel_util_range
        assert lo <= ref.gpu_figures(sim, g.gpu)["kernel_util"] <= hi
    from rich.console import Console

    from tui.report import print_report

    console = Console(width=200, record=True)
    print_report(model, console)
    assert "≈" in console.export_text()


# -- restarts -------------------------------------------------------------------------------


def test_a_daemon_restart_keeps_each_run_apart() -> None:
    """Offsets going back to 0 mid-log start a new run: each run's figures are its own."""
    _, first = simulate(SimConfig(seed=41, proofs=4, gpus=1, gw=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=42, proofs=3, gpus=1, gw=2, stdout="plain"))
    alone = [build(first), build(second)]
    both = build(first + second)
    assert both.run_lines == (1, first.count(b"\n") + 1)
    assert [round(g.timeline_util, 9) for g in both.gpus] == [
        round(m.gpus[0].timeline_util, 9) for m in alone
    ]
    assert [g.kernel_util for g in both.gpus] == [m.gpus[0].kernel_util for m in alone]
    assert both.summary.proofs_completed == sum(m.summary.proofs_completed for m in alone)
    assert len(both.gaps) == sum(len(m.gaps) for m in alone)  # no gap crosses the restart
    assert both.gpu_label(both.gpus[1].gpu) == "run 2:GPU0"
    assert report_dict(both)["runs"] == list(both.run_lines)
    # the second run comes after the first on the wall clock
    assert both.gpus[1].span is not None and both.gpus[0].span is not None
    assert both.gpus[1].span[0] > both.gpus[0].span[1]


def test_a_restarted_daemon_s_proofs_span_and_rate_each_say_what_they_are_of() -> None:
    """`proofs 6 completed / 6 started   run span 12m05s   41.74 s/proof (last run)` mixed
    three scopes: every run's proofs, a span from the first run's start to the last one's
    end (the daemon's downtime in it), the last run's rate. The span is the last run's now,
    beside its own proofs and rate, and the line says so; the JSON gives the last run too."""
    _, first = simulate(SimConfig(seed=41, proofs=4, gpus=1, gw=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=42, proofs=3, gpus=1, gw=2, stdout="plain"))
    both, last = build(first + second), build(second).summary
    s = both.summary
    assert (s.proofs_completed, s.proofs_started) == (7, 7)
    assert s.run_span_ms == last.run_span_ms and s.rate == last.rate == s.s_per_proof
    assert s.proofs_shown(short=True) == f"proofs 7/7 in 2 runs, last 3/3 in {last.run_span_shown}"
    assert s.proofs_shown(short=False) == (
        f"proofs 7 completed / 7 started in 2 runs   last run: 3 completed / 3 started, "
        f"run span {last.run_span_shown}"
    )
    summary = report_dict(both)["summary"]
    assert summary["run_span_ms"] == last.run_span_ms
    assert summary["last_run"] == {
        "proofs_started": 3,
        "proofs_completed": 3,
        "proofs_failed": 0,
        "run_span_ms": last.run_span_ms,
        "s_per_proof": round(last.s_per_proof, 6),
    }
    assert report_dict(build(second))["summary"]["last_run"] is None
    # each GPU keeps an id of its own (run k's GPU G: k·1000 + G) and says its ordinal
    gpus = report_dict(both)["gpus"]
    assert [(g["gpu"], g["ordinal"], g["label"]) for g in gpus] == [
        (0, 0, "run 1:GPU0"),
        (1000, 0, "run 2:GPU0"),
    ]
    assert [g["ordinal"] for g in report_dict(build(second))["gpus"]] == [0]


def test_a_restart_without_wall_clock_lays_runs_one_after_the_other() -> None:
    _, run = simulate(SimConfig(seed=43, proofs=3, gpus=1, gw=2, stdout="none"))
    both = build(run + run)
    assert both.run_lines is not None and len(both.run_lines) == 2
    first, second = (g.span for g in both.gpus)
    assert first is not None and second is not None and second[0] > first[1]
    assert both.gpus[0].timeline_util == both.gpus[1].timeline_util


async def test_the_viewer_names_gpus_by_their_ordinals() -> None:
    """The journald sample runs on devices 2 and 3: the header and the lanes say so, with
    the TIMELINE and kernel figures of the report."""
    from textual.widgets import Static

    from parsers.load import read_log
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.gantt import GanttView

    path = SAMPLES / "journal-2gpu.log"
    model = read_log(path)
    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        header = str(app.query_one("#summary", Static).render())
        view = app.query_one(GanttView)
        lanes = "\n".join(view.render_line(y).text for y in range(view.size.height))
    for g in model.gpus:
        assert f"GPU{g.gpu}" in header
        assert f"{100 * g.timeline_util:.1f} %" in header
    assert "gpu2" in lanes.lower() and "gpu3" in lanes.lower()
    assert "GPU0" not in header and "GPU1" not in header


async def test_the_viewer_opens_on_the_last_run_and_r_steps_through_runs(tmp_path: Path) -> None:
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.gantt import GanttView

    _, first = simulate(SimConfig(seed=41, proofs=4, gpus=1, gw=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=42, proofs=3, gpus=1, gw=2, stdout="plain"))
    log = tmp_path / "restarted.log"
    log.write_bytes(first + second)
    model = build(first + second)
    spans = [g.span for g in model.gpus]
    assert all(s is not None for s in spans)
    app = make_app(model, LineReader(path=log))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)

        def shown() -> tuple[float, float]:
            return view.t0, view.t0 + view.timeline_width * view.scale

        def holds(k: int) -> bool:
            lo, hi = shown()
            span = spans[k]
            assert span is not None
            other = spans[1 - k]
            assert other is not None
            # the run fills the view, the other run is out of it
            return lo <= span[0] and span[1] <= hi and (other[1] < lo or other[0] > hi)

        assert view.current_run() == 1 and holds(1)
        await pilot.press("r")
        await pilot.pause()
        assert view.current_run() == 0 and holds(0)
        top = view.rows[int(view.scroll_offset.y)]
        assert top.kind == "title" and top.log == 0  # run 1's lanes on top
        await pilot.press("r")
        await pilot.pause()
        assert holds(1)
        # one notice, the run shown now (pressed again, the last took the place of the first)
        said = [str(n.message) for n in app._notifications]
        assert said == ["run 2 of 2"]
        await pilot.press("0")
        await pilot.pause()
        assert not view.is_zoomed
        assert not [str(n.message) for n in app._notifications]  # r's notice went with it
        await pilot.press("r")  # from the whole view: the first run
        await pilot.pause()
        assert holds(0)


async def test_r_steps_through_several_logs() -> None:
    """Of several logs, `r` said the daemon did not restart: it shows each log in turn
    now (its span, its title row on top), a log with no GPU too."""
    from parsers.hosts import merge
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.gantt import AXIS_ROWS, GanttView

    whole = (SAMPLES / "p9-c6.log").read_bytes().splitlines(keepends=True)
    cut = next(k for k, line in enumerate(whole) if b",GPU_" in line)
    logs = [build((SAMPLES / "p12-gw2-merged.log").read_bytes()), build(b"".join(whole[:cut]))]
    merged = merge(logs, ["gpus", "synthesizing"]).model
    app = make_app(merged, LineReader())
    async with app.run_test(size=(100, 18)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        said = []
        for k in (0, 1, 0):
            await pilot.press("r")
            await pilot.pause()
            said.append([str(n.message) for n in app._notifications])
            lo, hi = view.t0, view.t0 + view.timeline_width * view.scale
            first, last = logs[k].time_range
            assert lo <= first and last <= hi and hi - lo < 2 * (last - first)  # it fills the view
            # its title in view (on top, as far as the lanes scroll)
            y = int(view.scroll_offset.y)
            shown = view.rows[y : y + view.size.height - AXIS_ROWS]
            assert ("title", k) in [(r.kind, r.log) for r in shown]
            if k == 0:
                assert (shown[0].kind, shown[0].log) == ("title", 0)
        assert said == [["log 1 of 2: gpus"], ["log 2 of 2: synthesizing"], ["log 1 of 2: gpus"]]


async def test_0_typed_right_after_r_takes_r_s_notice_down() -> None:
    """`r` then `0` in one burst (typed ahead, or a paste) left `log 1 of 2` on screen: `0`
    took down the notices shown, and `r`'s had not shown yet."""
    from parsers.hosts import merge
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.gantt import GanttView

    logs = [build((SAMPLES / n).read_bytes()) for n in ("p12-gw2-merged.log", "tiny.log")]
    app = make_app(merge(logs, ["a", "b"]).model, LineReader())
    async with app.run_test(size=(100, 18)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        view.action_next_run()  # both in one turn: the notice's message is still queued
        view.action_fit()
        await pilot.pause()
        assert [str(n.message) for n in app._notifications] == []
        await pilot.press("r")  # what `r` says alone still shows
        await pilot.pause()
        assert [str(n.message) for n in app._notifications] == ["log 1 of 2: a"]
        await pilot.press("0")
        await pilot.pause()
        assert [str(n.message) for n in app._notifications] == []


async def test_r_on_several_logs_of_which_one_holds_anything_says_so() -> None:
    from parsers.hosts import merge
    from parsers.rawlines import LineReader
    from tui.app import make_app

    merged = merge([build((SAMPLES / "tiny.log").read_bytes()), build(b"")], ["a", "b"]).model
    app = make_app(merged, LineReader())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said == ["of the 2 logs only a holds anything to show"], said
    # an empty log among them keeps its number: each log is told by its own
    tiny = build((SAMPLES / "tiny.log").read_bytes())
    merged = merge([tiny, build(b""), tiny], ["a", "b", "c"]).model
    app = make_app(merged, LineReader())
    async with app.run_test(size=(80, 24)) as pilot:
        said = []
        for _ in range(2):
            await pilot.press("r")
            await pilot.pause()
            said += [str(n.message) for n in app._notifications]
        assert said == ["log 1 of 3: a", "log 3 of 3: c"], said


async def test_r_on_a_log_of_one_run_says_so() -> None:
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.gantt import GanttView

    path = SAMPLES / "tiny.log"
    app = make_app(build(path.read_bytes()), LineReader(path=path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        before = app.query_one(GanttView).t0
        await pilot.press("r")
        await pilot.pause()
        assert app.query_one(GanttView).t0 == before
        assert any("one run" in str(n.message) for n in app._notifications)


def _lost_lines_gpus(
    seeds: range, rate: float, older: bool
) -> Iterator[tuple[int, GpuStats, float]]:
    """Each GPU with a span of random simulated runs of the current engine (`older`: of the
    engines without lock lines) whose C++ lines were lost at `rate`: (seed, its figures, its
    true kernel utilization)."""
    for seed in seeds:
        cfg = random_config(seed)
        if (cfg.era != "p12") != older:
            continue
        sim, data = simulate(cfg)
        model = build(
            lose_lines(data, "cpp", rate, seed),
            workers_per_gpu=cfg.gw if cfg.stdout == "none" else None,
        )
        base = cfg.gpu_base if cfg.stdout == "none" else 0
        for g in model.gpus:
            if g.span is not None:
                yield seed, g, ref.gpu_figures(sim, g.gpu + base)["kernel_util"]


def test_estimates_after_lost_lines_sit_in_the_middle_not_at_the_bottom() -> None:
    """With 0.5 % of the C++ lines lost, the estimates of the current engine's kernel
    figure lie on both sides of the truth (the segments alone put 473 of 483 below it,
    median 0.0115 below, on seeds 40000-40999)."""
    lost = _lost_lines_gpus(range(40000, 40300), 0.005, older=False)
    errors = sorted(g.kernel_util - truth for _, g, truth in lost if g.kernel_is_estimate)
    assert len(errors) >= 60
    assert abs(errors[len(errors) // 2]) < 0.005
    assert sum(e > 0 for e in errors) > 0.15 * len(errors)


@pytest.mark.parametrize(("rate", "share"), [(0.005, 0.0), (0.05, 0.0), (0.5, 0.02)])
def test_an_older_engine_s_kernel_range_holds_the_truth_when_lines_are_lost(
    rate: float, share: float
) -> None:
    """An engine without lock lines (February, phase 9) whose C++ lines were lost: the range
    of its kernel figure holds the truth (`share`: of the GPUs, the most it may miss; with
    half the lines lost, one GPU's lines go to another's intervals). Its top counted only
    intervals given no kernel line on a GPU given none at all: with 0.5 % lost, 8 of 152
    GPUs on seeds 5000-5199 had the truth above it (6 shown as exact), with 5 %, 26, with
    50 %, 25."""
    checked = outside = 0
    for _, g, truth in _lost_lines_gpus(range(5000, 5120), rate, older=True):
        lo, hi = g.kernel_util_range
        checked += 1
        outside += not lo - 1e-9 <= truth <= hi + 1e-9
    assert checked >= 60 and outside <= share * checked


def test_a_lost_ntt_line_of_a_circuit_is_kernel_the_top_allows_for() -> None:
    """The current engine prints an NTT_H line per circuit of an interval; the NTT time they
    leave out is taken as allocation. One of several lost, its circuit's kernels went with
    it: with 0.5 % of the C++ lines lost the truth was above the top of 21 of 1,275 GPUs on
    seeds 40000-40999, 15 of them shown as exact (seed 40189: 70.4 % against 65.6-65.6 %).
    The top now holds NTT time left out that is at least half a circuit's."""
    checked = 0
    for seed, g, truth in _lost_lines_gpus(range(40000, 40400), 0.005, older=False):
        checked += 1
        assert truth <= g.kernel_util_range[1] + 1e-9, (seed, g.gpu)
    assert checked >= 400


def test_a_gpu_end_cut_inside_a_splice_is_not_an_end() -> None:
    """A capture that ends inside a spliced line leaves `TIMELINE,<ms>,GPU_END,<job>,` and a
    fragment: no worker, so no end (it stretched the run to 998,778 ms, 66.6 s/proof for 32.1)."""
    data = (SAMPLES / "p12-c15-gw1.log").read_bytes()
    job = [x for x in data.split(b"\n") if b"GPU_END" in x][-1].split(b",")[3]
    whole = build(data)
    cut = build(
        data + b"TIMELINE,999999,GPU_END," + job + b",2026-03-16T09:50:40.294780Z  INFO "
        b"cuzk_core::pipeline: GPU prove\n"
    )
    assert cut.summary.run_span_ms == whole.summary.run_span_ms
    assert cut.summary.s_per_proof == whole.summary.s_per_proof
    assert cut.counts.malformed == whole.counts.malformed + 1
