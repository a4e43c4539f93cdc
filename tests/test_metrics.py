"""The Prometheus metrics of a model (parsers/metrics.py): the report's figures, counters that
only go up, and a scrape that promtool accepts."""

from __future__ import annotations

import math
import random
import shutil
import subprocess

import pytest
from conftest import SAMPLE_NAMES, SAMPLES
from helpers import build
from scrape import Samples, exposition, scraped

from cuzksim.config import SimConfig, random_config
from cuzksim.logs import simulate
from parsers.builder import LogBuilder
from parsers.load import model_of_bytes
from parsers.metrics import (
    BUSY,
    GAP_LE,
    IDLE,
    SPAN,
    Carried,
    figures_of,
)
from parsers.report import report_dict


def sample(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_a_sample_s_metrics_are_its_json_report_s_figures(name: str) -> None:
    data = (SAMPLES / f"{name}.log").read_bytes()
    model = model_of_bytes(data, name)
    doc = report_dict(model)
    got = scraped(exposition(model))
    assert doc["gpus"], name
    for g in doc["gpus"]:
        gpu = str(g["gpu"])
        assert sample(got, "cuzk_gpu_timeline_utilization", gpu=gpu) == g["timeline_util"]
        assert sample(got, "cuzk_gpu_kernel_utilization", gpu=gpu) == g["kernel_util"]
        lo, hi = g["kernel_util_range"]
        assert sample(got, "cuzk_gpu_kernel_utilization_low", gpu=gpu) == lo
        assert sample(got, "cuzk_gpu_kernel_utilization_high", gpu=gpu) == hi
        for phase, ms in g["busy_split_ms"].items():
            key = (f"{BUSY}_total", tuple(sorted({"gpu": gpu, "phase": phase}.items())))
            if phase in g["busy_split_unmeasured"]:  # not measured: no series, not 0 s
                assert key not in got
                continue
            busy = sample(got, f"{BUSY}_total", gpu=gpu, phase=phase)
            assert busy == pytest.approx(ms / 1000, abs=1e-9)
        start, end = g["span_ms"]
        assert sample(got, f"{SPAN}_total", gpu=gpu) == (end - start) / 1000
        gaps = [x for x in doc["gaps"] if x["gpu"] == g["gpu"]]
        idle = sum(x["duration_ms"] for x in gaps) / 1000
        assert sample(got, f"{IDLE}_total", gpu=gpu) == pytest.approx(idle, abs=1e-6)
        for cause in ("synthesis", "dispatch", None):
            for crosses, side in ((True, "boundary"), (False, "mid-proof")):
                mine = [
                    x["duration_ms"]
                    for x in gaps
                    if x["cause"] == cause and x["crosses_proof_boundary"] == crosses
                ]
                labels = {"gpu": gpu, "cause": cause or "unknown", "side": side}
                if not mine:
                    assert ("cuzk_gap_seconds_count", tuple(sorted(labels.items()))) not in got
                    continue
                assert sample(got, "cuzk_gap_seconds_count", **labels) == len(mine)
                assert sample(got, "cuzk_gap_seconds_sum", **labels) == pytest.approx(
                    sum(mine) / 1000, abs=1e-9
                )
                under = sample(got, "cuzk_gap_seconds_bucket", le="0.5", **labels)
                assert under == sum(d <= 500 for d in mine)
    s = doc["summary"]
    hist = s["gap_histogram"]
    buckets = [(k, v) for k, v in got.items() if k[0] == "cuzk_gap_seconds_bucket"]
    at_half = sum(v for (_, labels), v in buckets if ("le", "0.5") in labels)
    assert at_half == hist["<50ms"] + hist["50-500ms"]  # the report's bins: < 50, 50-500, > 500
    assert sum(v for (_, labels), v in buckets if ("le", "+Inf") in labels) == s["gap_count"]
    assert sample(got, "cuzk_proofs_completed_total") == s["proofs_completed"]
    assert sample(got, "cuzk_seconds_per_proof") == s["s_per_proof"]
    for kind in ("timeline", "cuzk_timing", "stdout", "malformed", "other"):
        assert sample(got, "cuzk_log_lines_total", kind=kind) == doc["lines"][kind]
    assert sample(got, "cuzk_log_malformed_lines_total") == doc["lines"]["malformed"]
    assert sample(got, "cuzk_log_last_line_age_seconds") == 2.5
    assert sample(got, "cuzk_log_input_state", state="following") == 1
    assert sample(got, "cuzk_log_input_state", state="truncated") == 0


def test_buckets_are_cumulative_and_end_at_the_count() -> None:
    got = scraped(exposition(model_of_bytes((SAMPLES / "journal-2gpu.log").read_bytes(), "j")))
    series = {
        tuple(x for x in labels if x[0] != "le")
        for (name, labels) in got
        if name == "cuzk_gap_seconds_bucket"
    }
    assert series
    for labels in series:
        counts = [
            got[("cuzk_gap_seconds_bucket", tuple(sorted((*labels, ("le", le)))))] for le in GAP_LE
        ]
        assert counts == sorted(counts)
        assert counts[-1] == got[("cuzk_gap_seconds_count", labels)]


def test_failed_proofs_are_the_simulated_failures() -> None:
    sim, data = simulate(SimConfig(seed=5, proofs=10, concurrency=3, fail_prove=0.05))
    failed = {p.job for p in sim.partitions if p.failed}
    assert failed  # the seed fails some
    figures = figures_of(build(data))
    assert figures.counters[("cuzk_proofs_failed", ())] == len(failed)


def test_a_running_interval_holds_the_counters_back_to_its_start() -> None:
    """Time after the start of an interval still running is not counted yet: once it ends it
    covers that time (a gap there may vanish), and instants it shares go to its phases."""
    lines = [
        "TIMELINE,0,SYNTH_START,a,partition=0",
        "TIMELINE,10,SYNTH_END,a,partition=0",
        "TIMELINE,20,GPU_START,a,worker=0,partition=0",
        "TIMELINE,1000,GPU_START,b,worker=1,partition=0",
        "TIMELINE,2000,GPU_END,a,worker=0,partition=0",
        "TIMELINE,5000,GPU_START,c,worker=0,partition=0",
        "TIMELINE,6000,GPU_END,c,worker=0,partition=0",
    ]
    b = LogBuilder(source="t")
    b.feed("".join(x + "\n" for x in lines).encode())
    assert figures_of(b.snapshot()).counters[(SPAN, ("0",))] == 0  # all in the last minute
    quiet = 60_000.0  # the log quiet for a minute: what it says is settled, but for b
    live = figures_of(b.snapshot(), quiet)
    span = live.counters[(SPAN, ("0",))]
    assert span == pytest.approx(0.98)  # GPU 0's span from 20 ms, settled up to b's start
    assert live.counters[(IDLE, ("0",))] == 0  # the gap 2000-5000 may be b's time
    assert not any(k[0] == "cuzk_gap_seconds_sum" for k in live.counters)
    b.feed(b"TIMELINE,7000,GPU_END,b,worker=1,partition=0\n")
    ended = figures_of(b.snapshot(), quiet)
    assert ended.counters[(SPAN, ("0",))] == pytest.approx(6.98)
    assert ended.counters[(IDLE, ("0",))] == 0  # b covered it: there never was a gap


def test_the_last_minute_of_a_growing_log_is_counted_once_it_is_quiet() -> None:
    _, data = simulate(SimConfig(seed=3, proofs=4, gpus=1))
    b = LogBuilder(source="t")
    b.feed(data)
    b.flush_pending()
    model = b.snapshot()
    whole = figures_of(build(data)).counters
    busy = (BUSY, ("0", "kernel"))
    growing, quiet = figures_of(model).counters, figures_of(model, quiet_ms=60_000).counters
    assert growing[busy] < whole[busy]
    assert quiet[busy] == pytest.approx(whole[busy])


@pytest.mark.parametrize("seed", [3, 7, 12, 17])
def test_counters_never_go_down_and_end_at_the_finished_figures(seed: int) -> None:
    """Fed in random pieces, a snapshot after each: every counter the exporter serves only
    goes up, and ends at the figures of the finished log (the live model's doubts, a prove
    taken as failed, timing lines given to an interval late, settle first)."""
    _, data = simulate(random_config(seed))
    rng = random.Random(seed)
    b, carried = LogBuilder(source="t"), Carried()
    last: dict[tuple[str, tuple[str, ...]], float] = {}
    pos = 0
    while pos < len(data):
        size = rng.randint(200, 6000)
        b.feed(data[pos : pos + size])
        pos += size
        counted = carried.counted(figures_of(b.snapshot()).counters)
        for key, value in last.items():
            assert counted[key] >= value, key
        last = counted
    final = figures_of(b.build()).counters
    counted = carried.counted(final)
    for key, value in final.items():
        assert counted[key] == pytest.approx(value, abs=1e-6), key


def test_a_new_run_counts_on_top_of_the_last() -> None:
    _, first = simulate(SimConfig(seed=41, proofs=4, gpus=1, gw=2))
    _, second = simulate(SimConfig(seed=42, proofs=3, gpus=1, gw=2))
    one, two = figures_of(build(first)).counters, figures_of(build(second)).counters
    carried = Carried()
    carried.counted(one)
    carried.new_run(one)
    counted = carried.counted(two)
    for key in one.keys() | two.keys():
        assert counted[key] == pytest.approx(one.get(key, 0.0) + two.get(key, 0.0)), key
    assert counted[("cuzk_proofs_completed", ())] > two[("cuzk_proofs_completed", ())]


def test_a_restarted_daemon_s_runs_add_up_on_one_gpu() -> None:
    _, first = simulate(SimConfig(seed=41, proofs=4, gpus=1, gw=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=42, proofs=3, gpus=1, gw=2, stdout="plain"))
    both = figures_of(build(first + second))
    runs = [figures_of(build(first)), figures_of(build(second))]
    assert [g.gpu for g in both.gpus] == [0]  # the CUDA ordinal, in both runs
    assert both.gpus[0] == runs[1].gpus[0]  # the gauges: the run of now
    for key in (("cuzk_gpu_span_seconds", ("0",)), (BUSY, ("0", "kernel"))):
        assert both.counters[key] == pytest.approx(sum(r.counters[key] for r in runs))


def test_after_a_restart_on_fewer_gpus_the_gauges_are_the_run_of_now() -> None:
    """Two GPUs, then one: the gauges of GPU1 were the first run's still, and s/proof the
    runs' spans (the downtime between them too) over all their proofs. Both are the run of
    now's; the counters add the runs up."""
    _, first = simulate(SimConfig(seed=8, proofs=6, gpus=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=7, proofs=8, gpus=1, stdout="plain"))
    model = build(first + second)
    now = build(second)
    both = figures_of(model)
    assert [g.gpu for g in both.gpus] == [0] and both.gpus[0] == figures_of(now).gpus[0]
    assert both.s_per_proof == round(now.summary.s_per_proof, 6)
    assert model.summary.s_per_proof_shown == f"{now.summary.s_per_proof:.2f} s/proof"
    assert model.summary.proofs_shown(short=True).endswith(f"in {now.summary.run_span_shown}")
    assert both.counters[("cuzk_gpu_span_seconds", ("1",))] > 0  # the first run's GPU1, counted
    # the new run's first line: no GPU of now yet, so no gauge (not the last run's)
    begun = build(first + second.split(b"\n", 1)[0] + b"\n")
    assert len(begun.run_lines or ()) == 2 and figures_of(begun).gpus == ()
    assert begun.summary.s_per_proof_shown == "– s/proof"
    # no proof of the new run yet: said so (`last 0/0 in –` said it in symbols)
    assert begun.summary.proofs_shown(short=True).endswith("in 2 runs, last run: none yet")
    assert begun.summary.proofs_shown(short=False).endswith("in 2 runs   last run: no proof yet")


def test_several_hosts_have_no_one_s_per_proof() -> None:
    """Two logs side by side: s/proof of their spans together over all their proofs was no
    host's (95 s/proof beside hosts of 38 and 40). Each host has its own; together, none:
    the header writes none (its `– s/proof` read as no proof completed yet)."""
    from parsers.hosts import merge
    from parsers.report import report_dict
    from tui.header import header_text

    a = build(simulate(SimConfig(seed=8, proofs=6, gpus=2))[1])
    b = build(simulate(SimConfig(seed=9, proofs=5, gpus=2, capture="journal"))[1])
    merged = merge([a, b], ["a.log", "b.log"]).model
    assert merged.summary.rate is None and merged.summary.s_per_proof_shown == ""
    header = header_text(merged, "FINISHED", width=120).plain.splitlines()[0]
    assert header.endswith("proofs 11/11 on 2 hosts"), header  # no `– s/proof`: none yet?
    # their span together is no run's: `span`, as the report's all-hosts section says it
    span = merged.summary.run_span_shown
    assert f"  span {span}  proofs" in header and " run " not in header
    assert merged.summary.proofs_shown(short=False).endswith(f"on 2 hosts   span {span}")
    assert report_dict(merged)["summary"]["s_per_proof"] is None
    assert a.summary.rate is not None and b.summary.rate is not None


def test_promtool_accepts_a_scrape() -> None:
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool is missing: apt-get install prometheus"
    text = exposition(model_of_bytes((SAMPLES / "journal-2gpu.log").read_bytes(), "j"))
    out = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, timeout=60
    )
    assert out.returncode == 0, out
    assert out.stdout.strip() == b"" and out.stderr.strip() == b"", out


def test_a_log_without_timeline_has_no_gpu_and_counts_its_lines() -> None:
    got = scraped(exposition(model_of_bytes(b"hello\nworld\n", "x")))
    assert not any(name.startswith("cuzk_gpu_") for name, _ in got)
    assert sample(got, "cuzk_log_lines_total", kind="other") == 2
    assert math.isnan(sample(got, "cuzk_seconds_per_proof"))  # no proof: no rate, not 0


def test_a_gpu_with_no_completed_interval_has_no_gauges() -> None:
    """Right after a rotation the new run's GPU has only a running interval: its gauges were
    0 (the JSON's 0 of no span), a drop to 0 % on every dashboard."""
    running = model_of_bytes(b"TIMELINE,1,GPU_START,j,worker=0,partition=0\n", "t")
    assert [g.span for g in running.gpus] == [None]
    assert figures_of(running).gpus == ()
    _, data = simulate(SimConfig(seed=3, proofs=2, gpus=1))
    assert [g.gpu for g in figures_of(build(data)).gpus] == [0]
