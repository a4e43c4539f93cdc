"""Logs the samples do not cover: the simulator's ground truth against the model."""

from __future__ import annotations

import io
import math
import random
import re
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from helpers import build

from cuzksim import reference as ref
from cuzksim.config import SimConfig, random_config
from cuzksim.logs import simulate
from parsers.durations import duration
from parsers.model import LogModel

CONFIGS = [
    SimConfig(seed=21, proofs=6, gpus=1, gw=1, stdout="none"),
    SimConfig(seed=22, proofs=8, gpus=1, gw=3, stdout="plain", concurrency=4),
    SimConfig(
        seed=23,
        proofs=10,
        gpus=2,
        gw=2,
        stdout="ansi",
        splice=0.02,
        jitter=True,
        ids="curio",
        mix=0.2,
        fail=0.02,
    ),
    SimConfig(seed=24, proofs=6, era="p9", gpus=1, gw=1, stdout="none"),
    SimConfig(seed=25, proofs=8, gpus=3, gw=1, stdout="plain", jitter=True, gpu_scale=1.6),
    SimConfig(
        seed=26, proofs=12, gpus=1, gw=2, stdout="ansi", concurrency=8, synth_ms=20000, splice=0.03
    ),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"seed{c.seed}-{c.era}-{c.gpus}x{c.gw}")
def test_simulated_log_matches_ground_truth(cfg: SimConfig) -> None:
    sim, data = simulate(cfg)
    # stderr-only logs name no GPU: the user says how workers map to GPUs
    model = build(data, workers_per_gpu=cfg.gw if cfg.stdout == "none" else None)

    expected = ref.gaps(sim)
    got = [
        (g.gpu, g.start, g.end, g.before.job, g.after.job, g.crosses_proof_boundary, g.cause)
        for g in model.gaps
    ]
    assert got == [
        (g.gpu, g.start, g.end, g.before_job, g.after_job, g.crosses, g.cause) for g in expected
    ]
    assert len(model.gpus) == cfg.gpus
    for g in model.gpus:
        figures = ref.gpu_figures(sim, g.gpu)
        assert abs(g.timeline_util - figures["timeline_util"]) <= 0.001
        assert abs(g.kernel_util - figures["kernel_util"]) <= 0.015
    assert model.summary.proofs_completed == ref.proofs_completed(sim)
    timing_lines = model.counts.cuzk_timing
    assert model.unattributed_timing_lines <= 0.01 * timing_lines


def test_simulator_is_deterministic() -> None:
    cfg = SimConfig(seed=5, proofs=3, stdout="ansi", splice=0.05, jitter=True)
    assert simulate(cfg)[1] == simulate(cfg)[1]
    assert simulate(cfg)[1] != simulate(SimConfig(seed=6, proofs=3, stdout="ansi"))[1]


def _random_config(seed: int) -> SimConfig:
    rng = random.Random(seed)
    return SimConfig(
        seed=seed,
        proofs=rng.randint(2, 8),
        concurrency=rng.randint(1, 6),
        gpus=rng.choice([1, 2, 3]),
        gw=rng.choice([1, 2, 3]),
        pw=rng.choice([4, 10, 20]),
        stdout=rng.choice(["none", "plain", "ansi"]),
        splice=rng.choice([0.0, 0.02]),
        jitter=rng.random() < 0.5,
        ids=rng.choice(["uuid", "curio"]),
        fail=rng.choice([0.0, 0.02]),
        mix=rng.choice([0.0, 0.2]),
        gpu_scale=rng.choice([0.5, 1.0, 2.0]),
        synth_ms=rng.choice([5000.0, 20000.0, 36000.0]),
    )


RANDOM_SEEDS = range(400, 440)


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_current_engine_runs_have_exact_gaps(seed: int) -> None:
    """Random runs of the current engine on one to three GPUs: gaps exact, lines attributed."""
    cfg = _random_config(seed)
    sim, data = simulate(cfg)
    model = build(data, workers_per_gpu=cfg.gw if cfg.stdout == "none" else None)
    got = [(g.gpu, g.start, g.end, g.before.job, g.after.job, g.cause) for g in model.gaps]
    assert got == [
        (g.gpu, g.start, g.end, g.before_job, g.after_job, g.cause) for g in ref.gaps(sim)
    ]
    assert model.unattributed_timing_lines <= 0.01 * model.counts.cuzk_timing


def test_random_current_engine_runs_kernel_utilization() -> None:
    """Kernel utilization is reconstructed, yet within 0.015 of the truth on every run."""
    for seed in RANDOM_SEEDS:
        cfg = _random_config(seed)
        sim, data = simulate(cfg)
        model = build(data, workers_per_gpu=cfg.gw if cfg.stdout == "none" else None)
        for g in model.gpus:
            truth = ref.gpu_figures(sim, g.gpu)["kernel_util"]
            assert abs(g.kernel_util - truth) <= 0.015, (seed, g.gpu)


def test_the_oldest_engines_hidden_allocation_is_inside_the_range() -> None:
    """An engine that prints no allocation line times the buffers' cudaMalloc inside its NTT
    block: the kernel range's low end takes it out, and the truth (kernels only) lies inside
    the range on every GPU of every run (before, 20 of these 40 runs had a GPU outside)."""
    for seed in range(20000, 20040):
        cfg = replace(random_config(seed, "feb"), fail=0.0, fail_prove=0.0, fail_synth=0.0)
        sim, data = simulate(cfg)
        workers_per_gpu = cfg.gw if cfg.stdout == "none" else None
        model = build(data, workers_per_gpu=workers_per_gpu)
        # without stdout the GPUs are numbered from 0, whatever ordinals the engine used
        base = cfg.gpu_base if workers_per_gpu else 0
        for g in model.gpus:
            truth = ref.gpu_figures(sim, g.gpu + base)["kernel_util"]
            lo, hi = g.kernel_util_range
            assert lo <= truth <= hi, (seed, g.gpu, truth, (lo, hi))
            assert lo <= g.kernel_util <= hi


def test_all_gpus_together_the_kernel_time_is_pinned_down() -> None:
    """Where the log cannot tell which GPU ran a kernel (no lock lines: ranges up to 0-100 %),
    every kernel line is still some GPU's: the range of all GPUs together holds the truth
    and is narrow."""
    widths = []
    for seed in range(50000, 50300):
        cfg = random_config(seed)
        if cfg.gpus < 2:
            continue
        sim, data = simulate(cfg)
        workers_per_gpu = cfg.gw if cfg.stdout == "none" else None
        model = build(data, workers_per_gpu=workers_per_gpu)
        base = cfg.gpu_base if workers_per_gpu else 0
        figures = [ref.gpu_figures(sim, g.gpu + base) for g in model.gpus if g.span]
        truth = sum(f["kernel_util"] * f["span"] for f in figures)
        lo, hi = model.all_gpus_kernel_ms
        assert lo - 1e-6 <= truth <= hi + 1e-6, (seed, truth, (lo, hi))
        widths.append((hi - lo) / model.all_gpus_span_ms)
    widths.sort()
    assert len(widths) > 150 and widths[len(widths) // 2] < 0.005


def multi_gpu_models(seeds: range) -> Iterator[tuple[int, LogModel]]:
    """The models of the random simulated runs of `seeds` on two GPUs or more (workers
    placed as the simulator placed them where the log prints no stdout line)."""
    for seed in seeds:
        cfg = random_config(seed)
        if cfg.gpus >= 2:
            _, data = simulate(cfg)
            yield seed, build(data, workers_per_gpu=cfg.gw if cfg.stdout == "none" else None)


def test_all_gpus_is_the_gpus_figures_added_up_where_the_log_pins_them() -> None:
    """The figure of all the GPUs together is their estimates added up, inside a range no
    wider than their ranges added up: where each GPU's figure is pinned down, so is theirs
    (the demo had said ≈47.2 % (46.8–47.5 %) beside GPUs of 46.7 % and 47.1 %)."""
    pinned = 0
    for seed, model in multi_gpu_models(range(51000, 51120)):
        lo, hi = model.all_gpus_kernel_ms
        assert lo >= sum(g.kernel_range_ms[0] for g in model.gpus) - 1e-6, seed
        assert hi <= sum(g.kernel_range_ms[1] for g in model.gpus) + 1e-6, seed
        estimate = model.all_gpus_kernel_estimate_ms
        assert lo <= estimate <= hi
        if not any(g.kernel_is_estimate for g in model.gpus):
            pinned += 1
            assert estimate == pytest.approx(sum(g.kernel_busy_ms for g in model.gpus)), seed
    assert pinned > 20


ESTIMATE = re.compile(r"≈([\d.]+) % \(([\d.]+)–([\d.]+) %\)")


def test_every_kernel_estimate_is_written_one_way_and_its_range_holds_the_log_s() -> None:
    """A GPU's kernel estimate and all the GPUs' are written alike (`≈31 % (29–32 %)`; the
    all-GPUs line had one decimal, the GPUs' none), the range rounded outwards: `27–36 %`
    for [26.6 %, 35.2 %] had left out what the log allows."""
    from tui.report import all_gpus_figure, kernel_figure

    seen = 0
    for seed, model in multi_gpu_models(range(51000, 51060)):
        span = model.all_gpus_span_ms
        figures = [(kernel_figure(g), g.kernel_util_range) for g in model.gpus]
        whole = all_gpus_figure(model)
        if whole is not None and span:
            low, high = model.all_gpus_kernel_ms
            figures.append((whole, (low / span, high / span)))
        for text, (lo, hi) in figures:
            if "≈" not in text:
                continue
            seen += 1
            m = ESTIMATE.search(text)
            assert m is not None, (seed, text)
            low, high = float(m.group(2)), float(m.group(3))
            assert low <= 100 * lo + 1e-9 and 100 * hi - 1e-9 <= high
            assert high - low <= math.ceil(100 * (hi - lo)) + 2
    assert seen > 20


def test_an_estimate_s_range_is_rounded_outwards_and_no_further() -> None:
    from parsers.durations import estimate_pct

    assert estimate_pct(0.315, 0.266, 0.352) == "≈32 % (26–36 %)"
    assert estimate_pct(0.30, 0.27, 0.36) == "≈30 % (27–36 %)"  # 100 × 0.36 is 36.000…01
    assert estimate_pct(0.0, 0.0, 1.0) == "≈0 % (0–100 %)"
    # under a point wide: tenths, as the all-GPUs figure's range most often is
    assert estimate_pct(0.6241, 0.6236, 0.6258) == "≈62.4 % (62.3–62.6 %)"


def test_all_gpus_of_a_log_begun_mid_run_are_the_gpus_figures_added_up() -> None:
    """A log begun mid-run holds the kernel lines of intervals whose start it lacks, given
    to none: they ran before the GPUs' spans, and only ever raise the range's top. The JSON
    had said 45.9 % for all the GPUs together beside a one-GPU log's pinned 45.6 %."""
    checked = 0
    for seed in range(53000, 53080):
        _, data = simulate(random_config(seed))
        lines = data.split(b"\n")
        model = build(b"\n".join(lines[len(lines) // 3 :]))
        if not model.gpus or not model.unattributed_kernel_ms:
            continue
        lo, hi = model.all_gpus_kernel_ms
        estimate = model.all_gpus_kernel_estimate_ms
        assert lo <= estimate <= hi, seed
        if not any(g.kernel_is_estimate for g in model.gpus):
            checked += 1
            assert estimate == pytest.approx(sum(g.kernel_busy_ms for g in model.gpus)), seed
    assert checked >= 5


def test_an_interval_that_lost_its_ntt_line_keeps_its_other_kernels() -> None:
    """A splice can take an interval's NTT line and leave its batch and tail lines: those
    kernels still count in the lines' sum (before, an interval without its NTT line counted
    no kernel, and all the GPUs' range could end below the kernel time the log printed);
    and the top, told a line was lost (fewer NTT lines than intervals), still holds what
    the whole log printed."""
    for seed in range(52000, 52010):
        cfg = replace(
            random_config(seed, "p9"),
            gpus=2,
            splice=0.0,
            splice_stdout=0.0,
            fail=0.0,
            fail_prove=0.0,
            fail_synth=0.0,
        )
        _, data = simulate(cfg)
        lines = data.split(b"\n")
        k = next(i for i, line in enumerate(lines) if b" ntt_msm_h_ms=" in line)
        ntt_ms = int(lines[k].rsplit(b"=", 1)[1])
        cut = b"\n".join(lines[:k] + lines[k + 1 :])
        wpg = cfg.gw if cfg.stdout == "none" else None
        printed = []
        for log in (data, cut):
            model = build(log, workers_per_gpu=wpg)
            lines_hi = sum(g.kernel_lines_ms[1] for g in model.gpus)
            printed.append(lines_hi + model.unattributed_kernel_ms)
        # the NTT block, and its truncation allowance, is all that goes; the top allows for
        # the lost line as long as the longest printed
        assert printed[0] - printed[1] <= ntt_ms + 1.0, seed
        assert printed[1] >= printed[0] - 1.0, seed


def test_a_log_that_starts_mid_run_says_so() -> None:
    """`tail -f daemon.log | cuzk-tui -` and a log after rotation begin inside a run: the
    model says so (the report, the JSON and the header with it); a whole log does not."""
    for seed in range(100, 160):
        cfg = random_config(seed)
        _, data = simulate(cfg)
        workers_per_gpu = cfg.gw if cfg.stdout == "none" else None
        assert not build(data, workers_per_gpu=workers_per_gpu).starts_mid_run, seed
        lines = data.split(b"\n")
        for part in (3, 2, 5):
            cut = b"\n".join(lines[len(lines) // part :])
            assert build(cut, workers_per_gpu=workers_per_gpu).starts_mid_run, (seed, part)


def test_mid_run_is_said_in_the_report_the_json_and_the_header() -> None:
    from parsers.breakdown import whole_run
    from parsers.report import MID_RUN, report_dict
    from tui.header import header_text
    from tui.report import report_renderables

    _, data = simulate(random_config(101))
    lines = data.split(b"\n")
    model = build(b"\n".join(lines[len(lines) // 2 :]))
    assert report_dict(model)["summary"]["starts_mid_run"] is True
    assert MID_RUN in report_renderables(model)[0].plain  # type: ignore[union-attr]
    assert MID_RUN in header_text(model, "LIVE", whole_run(model)).plain
    whole = build(data)
    assert report_dict(whole)["summary"]["starts_mid_run"] is False
    assert MID_RUN not in header_text(whole, "LIVE", whole_run(whole)).plain


def test_s_per_proof_is_no_number_before_a_proof_completes() -> None:
    """With no proof completed there is no rate: the header and the text report write
    `– s/proof`, not `0.00 s/proof` (which reads as infinitely fast), the JSON `null`."""
    from parsers.breakdown import whole_run
    from parsers.report import report_dict
    from tui.header import header_text
    from tui.report import report_renderables

    _, data = simulate(random_config(7))
    whole = build(data)
    assert whole.summary.proofs_completed > 0
    shown = f"{whole.summary.s_per_proof:.2f} s/proof"
    assert shown in header_text(whole, "LIVE", whole_run(whole)).plain
    assert shown in report_renderables(whole)[0].plain  # type: ignore[union-attr]
    # the log's start: intervals ran, no proof had ended yet
    lines = data.split(b"\n")
    start = build(b"\n".join(lines[: len(lines) // 20]))
    assert start.summary.proofs_completed == 0 and start.summary.proofs_started > 0
    for text in (
        header_text(start, "LIVE", whole_run(start)).plain,
        report_renderables(start)[0].plain,  # type: ignore[union-attr]
    ):
        assert "– s/proof" in text and "0.00 s/proof" not in text
    assert report_dict(start)["summary"]["s_per_proof"] is None  # no rate: not 0, not fast
    assert report_dict(whole)["summary"]["s_per_proof"] == round(whole.summary.s_per_proof, 6)


def test_an_inferred_kernel_busy_and_its_split_are_marked_estimates() -> None:
    """Where kernel busy is inferred (the oldest engine: no lock line, no allocation line),
    the report's kernel busy column, the busy split's kernel and allocation cells and the
    header's kernel share say `≈`, and the tables say why; the per-worker table's `alloc 0`
    says it is the engine printing none (the truth was 836 + 340 ms on GPU 0). A current
    engine's figures are pinned down and shown plain."""
    from parsers.breakdown import alloc_unprinted, whole_run
    from tui.header import header_text
    from tui.report import ESTIMATED_SPLIT, HIDDEN_ALLOC, report_renderables

    def plain(model: object) -> str:
        parts = report_renderables(model, cut_ids=False)  # type: ignore[arg-type]
        from rich.console import Console

        console = Console(width=200, file=io.StringIO())
        for part in parts:
            console.print(part)
        return console.file.getvalue()  # type: ignore[attr-defined, no-any-return]

    old_cfg = SimConfig(seed=5, era="feb", gpus=3, gw=2, proofs=8, concurrency=4, stdout="plain")
    old = build(simulate(old_cfg)[1])
    assert all(g.kernel_is_estimate for g in old.gpus)
    text = plain(old)
    split = text[text.index("Where each GPU") : text.index("Time in each phase")]
    for g in old.gpus:
        row = next(line for line in text.splitlines() if line.startswith(f" {g.gpu}  "))
        assert f"≈{duration(g.kernel_busy_ms, 'cell')}" in row
    assert split.count("≈") == 2 * len(old.gpus) + 1  # kernel and alloc cells, the note
    assert " ".join(ESTIMATED_SPLIT.split()) in " ".join(split.split())
    # every GPU of the run: said so (a note of 300 GPUs named each, 2,400 characters)
    assert " ".join(HIDDEN_ALLOC.format(gpus="every GPU").split()) in " ".join(text.split())
    head = header_text(old, "FINISHED", whole_run(old)).plain
    busy = [line for line in head.splitlines() if line.lstrip().startswith("busy")]
    assert len(busy) == len(old.gpus)
    assert all(" kernel ≈" in line and " alloc ≈" in line for line in busy)

    # the oldest engine's run beside a current one's (a daemon upgraded in the log): the
    # marks and the note are those of the old run's GPUs alone
    both = build(simulate(old_cfg)[1] + simulate(SimConfig(seed=5, gpus=2, proofs=8))[1])
    text = plain(both)
    olds = [g for g in both.gpus if g.kernel_is_estimate]
    assert len(olds) == 3 and len(both.gpus) == 5
    assert alloc_unprinted(both) == {g.gpu for g in olds}
    split = text[text.index("Where each GPU") : text.index("Time in each phase")]
    assert split.count("≈") == 2 * len(olds) + 1
    labels = ", ".join(both.gpu_label(g.gpu) for g in olds)
    assert " ".join(HIDDEN_ALLOC.format(gpus=labels).split()) in " ".join(text.split())

    current = build(simulate(SimConfig(seed=5, gpus=2, proofs=8))[1])
    assert not any(g.kernel_is_estimate for g in current.gpus)
    text = plain(current)
    assert "≈" not in text and "prints no allocation line" not in text
    assert "≈" not in header_text(current, "FINISHED", whole_run(current)).plain


LANE_CONFIGS = [
    SimConfig(seed=31, proofs=8, gpus=1, gw=3, stdout="plain", concurrency=6, fail=0.05),
    SimConfig(seed=32, proofs=10, gpus=2, gw=2, stdout="ansi", splice=0.03, jitter=True),
    SimConfig(seed=33, proofs=6, era="p9", gpus=1, gw=2, stdout="none", fail=0.1),
]


def _windows_agree(model: LogModel, rng: random.Random) -> int:
    """Each lane's windows read before it is gathered equal those read after: the members
    near a window hold every segment in it. Returns how many windows were compared."""
    compared = 0
    for lane in model.lanes:
        assert lane.gather is not None and not lane._made  # laid out, not gathered yet
        lo, hi = float(lane.gather.starts[0]), float(lane.gather.ends[-1])
        edges = np.concatenate([lane.gather.starts, lane.gather.ends])
        picks = [lo - 1000.0, hi, hi + 1000.0, *rng.sample(list(edges), min(20, len(edges)))]
        windows = [(a, a + rng.choice([0.0, 0.5, 1.0, 50.0, 5000.0])) for a in picks]
        windows += [(rng.uniform(lo - 10, hi + 10), 0.0) for _ in range(10)]
        windows = [(a, a + d if d else float(np.nextafter(a, np.inf))) for a, d in windows]
        windows.append((lo - 1.0, hi + 1.0))
        before = [lane.window(a, b) for a, b in windows]
        whole = lane.chunks[0]  # gathered now
        for (a, b), got in zip(windows, before, strict=True):
            want = whole.part(*whole.covering(a, b))
            for name in ("starts", "ends", "phases", "partition"):
                np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
            compared += 1
    return compared


@pytest.mark.parametrize("cfg", LANE_CONFIGS, ids=lambda c: f"seed{c.seed}")
def test_a_lane_read_in_a_window_before_it_is_gathered_reads_the_same(cfg: SimConfig) -> None:
    _, data = simulate(cfg)
    model = build(data, workers_per_gpu=cfg.gw if cfg.stdout == "none" else None)
    assert any(lane.sub_row > 0 for lane in model.lanes) or cfg.seed != 31
    assert _windows_agree(model, random.Random(cfg.seed)) > 0


def test_nested_intervals_read_in_windows_before_they_are_gathered() -> None:
    lines = [f"TIMELINE,{100 + k},GPU_START,j{k},worker=0,partition=0\n" for k in range(40)]
    lines += [
        f"TIMELINE,{140 + k},GPU_END,j{39 - k},worker=0,partition=0,gpu_ms=1\n" for k in range(40)
    ]
    model = build("".join(lines).encode())
    assert len(model.lanes) == 40
    assert _windows_agree(model, random.Random(5)) > 0


def test_the_text_report_gathers_no_lane_whole() -> None:
    """The report reads its gaps' instants of the lanes: only the intervals near each are
    put together, not every segment of every lane (~50 ms of a long log's report)."""
    from rich.console import Console

    from tui.report import print_report

    cfg = SimConfig(seed=34, proofs=12, gpus=2, gw=2, stdout="plain", concurrency=6)
    _, data = simulate(cfg)
    model = build(data)
    print_report(model, Console(file=io.StringIO(), width=120), top=5)
    assert model.lanes and all(lane.gather is not None for lane in model.lanes)
    assert not any(lane._made for lane in model.lanes)


def test_the_simulator_writes_a_log_from_the_command_line() -> None:
    """`python -m cuzksim --gpus 2 --proofs 3` failed (no __main__): every SimConfig field
    is an option, the log goes to standard output, a value out of range is one line, exit 2."""
    import subprocess
    import sys

    from cuzksim.__main__ import config_of
    from parsers.load import model_of_bytes

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "cuzksim", *args], capture_output=True, timeout=120
        )

    got = run("--gpus", "2", "--proofs", "3", "--capture", "journal", "--jitter", "true")
    assert got.returncode == 0 and not got.stderr
    want = SimConfig(gpus=2, proofs=3, capture="journal", jitter=True)
    assert got.stdout == simulate(want)[1]
    model = model_of_bytes(got.stdout, "sim.log")
    assert len(model.gpus) == 2 and model.summary.proofs_started == 3
    assert config_of(["--random", "9", "--proofs", "2"]) == replace(random_config(9), proofs=2)
    bad_values = (["--gpus", "0"], ["--fail", "2"], ["--era", "p1"], ["--gpu-scale", "inf"])
    for bad in (*bad_values, ["--synth-ms", "1e15"], ["--gpu-scale", "1e12"]):
        wrong = run(*bad)
        assert wrong.returncode == 2 and not wrong.stdout, bad
        lines = wrong.stderr.decode().strip().splitlines()
        assert lines[-1].startswith("python -m cuzksim: error: ") and "Traceback" not in lines[0]


def test_each_option_of_the_simulator_says_all_its_field_says() -> None:
    """`--era` said `"p9" (prestage lines, CHAN_SEND, a per-GPU` and stopped: the help took
    the first line of each field's entry; `--miner` said nothing."""
    from cuzksim.__main__ import parser

    ap = parser()
    said = {a.dest: a.help or "" for a in ap._actions if a.dest in SimConfig.__dataclass_fields__}
    assert set(said) == set(SimConfig.__dataclass_fields__)
    for name, text in said.items():
        assert text.endswith((".", ")")), (name, text)
        assert text.count("(") == text.count(")"), (name, text)
    assert said["era"].endswith("slower NTT).") and "miner" in said["miner"]
    # as Python 3.13 compiles the docstring (its common indent stripped): the same entries
    import inspect

    from cuzksim.__main__ import _args_doc

    doc = SimConfig.__doc__ or ""
    assert _args_doc(inspect.cleandoc(doc)) == _args_doc(doc) == said
