"""One figure, one meaning: each GPU's busy split is the same number in the model, the JSON
report, the text report, the CSV, the trace and the viewer's header, on random simulated runs
(several GPUs and workers, so workers contend for the lock)."""

from __future__ import annotations

import csv
import itertools
import json
import re
from pathlib import Path

import pytest
from textual.widgets import Static

from cuzksim.config import Era, SimConfig, random_config
from cuzksim.logs import lose_lines, simulate
from parsers.breakdown import (
    BUSY_KEYS,
    BUSY_ORDER,
    alloc_unprinted,
    busy_breakdown,
    busy_split_ms,
    inferred_phases,
    unmeasured_phases,
    whole_run,
)
from parsers.load import model_of_bytes, read_log
from parsers.model import PHASE_NAMES, Breakdown, LogModel, Phase
from parsers.rawlines import LineReader
from tui import cli
from tui.app import make_app

# random runs with more than one worker on a GPU (lock contention) and several GPUs
SEEDS = [s for s in range(5000, 5200) if (c := random_config(s)).gw >= 2 and c.gpus >= 2][:8]


def test_the_seeds_cover_what_they_claim() -> None:
    assert len(SEEDS) == 8
    assert {random_config(s).era for s in SEEDS} >= {"p12"}


def _log(tmp_path: Path, seed: int) -> Path:
    _, data = simulate(random_config(seed))
    path = tmp_path / f"run-{seed}.log"
    path.write_bytes(data)
    return path


def _text_shares(out: str, model: LogModel) -> dict[str, dict[str, str]]:
    """The text report's busy split table: per GPU label, per phase name, its `56.5%`."""
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("Where each GPU's busy"))
    labels = [model.gpu_label(g.gpu) for g in model.gpus]
    shares: dict[str, dict[str, str]] = {label: {} for label in labels}
    for line in lines[head + 1 : head + 14]:
        for phase in BUSY_ORDER:
            name = PHASE_NAMES[phase]
            if line.strip().startswith(name + " ") and ":" not in line:  # a row, not a note
                cells = re.findall(r"(\d+\.\d)%|(?<= )(–)(?= |$)", line)
                cells = [share or dash for share, dash in cells]
                assert len(cells) == len(labels), line
                for label, cell in zip(labels, cells, strict=True):
                    shares[label][name] = cell
    return shares


@pytest.mark.parametrize("seed", SEEDS)
async def test_the_busy_split_is_one_figure_everywhere(
    seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _log(tmp_path, seed)
    model = read_log(path)
    split = whole_run(model)
    assert model.gpus

    assert cli.main([str(path), "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert cli.main([str(path), "--report"]) == 0
    report = capsys.readouterr().out
    text = _text_shares(report, model)
    out = tmp_path / "csv"
    trace = tmp_path / "t.json"
    assert cli.main([str(path), "--export-csv", str(out), "--export-trace", str(trace)]) == 0
    capsys.readouterr()
    with (out / "busy_split.csv").open(newline="") as fh:
        rows = {row["gpu"]: row for row in csv.DictReader(fh)}
    with (out / "intervals.csv").open(newline="") as fh:
        intervals = list(csv.DictReader(fh))
    # an interval whose lock no lock line placed: its pre-lock and lock wait are empty
    lockless = {model.gpu_label(g.gpu) for g in model.gpus if not g.lock_printed}
    for row in intervals:
        unplaced = row["lock_acquired"] == "" or row["gpu"] in lockless
        assert (row["pre_lock_ms"] == row["lock_wait_ms"] == "") == unplaced, row
    other = json.loads(trace.read_text())["otherData"]
    traced = other["busy_split_ms"]

    for g, gj in zip(model.gpus, doc["gpus"], strict=True):
        b = split[g.gpu]
        label = model.gpu_label(g.gpu)
        ms = gj["busy_split_ms"]
        assert list(ms) == list(BUSY_KEYS)
        assert ms == {
            k: round(b.phase_ms[p], 3) for k, p in zip(BUSY_KEYS, BUSY_ORDER, strict=True)
        }
        # the seven phases are the busy time; kernel first: the kernel busy figure
        assert abs(sum(ms.values()) - gj["timeline_busy_ms"]) <= 0.01
        assert ms["kernel"] == gj["kernel_busy_ms"]
        assert {k: float(rows[label][f"{k}_ms"]) for k in BUSY_KEYS} == ms
        assert float(rows[label]["timeline_busy_ms"]) == gj["timeline_busy_ms"]
        assert traced[label] == ms
        unmeasured = unmeasured_phases(g)
        for phase in BUSY_ORDER:
            shown = "–" if phase in unmeasured else f"{100 * b.share(phase):.1f}"
            assert text[label][PHASE_NAMES[phase]] == shown
        # the phases its engine does not measure (`–`) are said in each export
        dashed = [k for k, p in zip(BUSY_KEYS, BUSY_ORDER, strict=True) if p in unmeasured]
        assert dashed == ([] if g.lock_printed else ["lock_wait", "pre_lock"])
        assert gj["busy_split_unmeasured"] == dashed
        assert rows[label]["unmeasured"].split() == dashed
        assert other["busy_split_unmeasured"][label] == dashed
        assert all(ms[k] == 0 for k in dashed)  # their time is unknown's
        for wj in doc["workers"]:  # a worker's too: null, never 0
            if wj["gpu"] == g.gpu:
                assert sorted(k for k, v in wj["phases_ms"].items() if v is None) == sorted(dashed)
        # the phases that are estimates (the screens' `≈`) are said in each export
        inferred = inferred_phases(g, alloc_unprinted(model))
        keys = [k for k, p in zip(BUSY_KEYS, BUSY_ORDER, strict=True) if p in inferred]
        assert gj["busy_split_estimates"] == keys
        assert rows[label]["estimates"].split() == keys
        assert other["busy_split_estimates"][label] == keys
        if g.kernel_is_estimate:
            least, most = (
                float(rows[label]["kernel_ms_least"]),
                float(rows[label]["kernel_ms_most"]),
            )
            assert (least, most) == tuple(round(x, 3) for x in g.kernel_range_ms)
            assert least <= ms["kernel"] <= most
        else:
            assert rows[label]["kernel_ms_least"] == rows[label]["kernel_ms_most"] == ""

    # all the GPUs together: their kernel busy added up, where each GPU's is one number
    summary = doc["summary"]
    together = summary["all_gpus_kernel_util"]
    lo, hi = summary["all_gpus_kernel_util_range"]
    assert lo <= together <= hi
    if not any(g.kernel_is_estimate for g in model.gpus):
        kernel = sum(gj["kernel_busy_ms"] for gj in doc["gpus"])
        assert together == pytest.approx(kernel / summary["all_gpus_span_ms"], abs=1e-5)
        shown = f"all {len(model.gpus)} GPUs: kernel {100 * together:.1f} % of their spans"
        assert shown in report

    # the screen: the header's `busy:` line per GPU
    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        header = str(app.query_one("#summary", Static).render())
    busy_lines = [line for line in header.splitlines() if line.startswith("  busy:")]
    assert len(busy_lines) == len(model.gpus)
    for g, line in zip(model.gpus, busy_lines, strict=True):
        b = split[g.gpu]
        for phase in BUSY_ORDER:
            name = PHASE_NAMES[phase]
            if phase in unmeasured_phases(g):  # not measured: never 0 %
                assert f" {name} –" in line, (name, line)
                continue
            # an inferred kernel busy is marked an estimate
            about = "≈" if phase in inferred_phases(g, alloc_unprinted(model)) else ""
            assert f" {name} {about}{100 * b.share(phase):.0f}%" in line, (name, line)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_a_window_s_busy_split_is_one_figure_in_its_exports(
    tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """An export of a window wrote the window's split in busy_split.csv and the whole run's
    in the trace's `otherData.busy_split_ms`, beside it: the same key, two figures. Both are
    the window's now, and the trace says which window."""
    path = _log(tmp_path, seed)
    model = read_log(path)
    lo, hi = model.time_range
    t0, t1 = round(lo + 0.3 * (hi - lo)), round(lo + 0.6 * (hi - lo))
    out, trace = tmp_path / "csv", tmp_path / "t.json"
    window = ["--from", str(t0), "--to", str(t1)]
    assert (
        cli.main([str(path), "--export-csv", str(out), "--export-trace", str(trace), *window]) == 0
    )
    capsys.readouterr()
    with (out / "busy_split.csv").open(newline="") as fh:
        rows = {row["gpu"]: row for row in csv.DictReader(fh)}
    other = json.loads(trace.read_text())["otherData"]
    assert other["window_ms"] == [t0, t1]
    split = busy_breakdown(model, t0, t1)
    whole = whole_run(model)
    for g in model.gpus:
        label = model.gpu_label(g.gpu)
        ms = busy_split_ms(split[g.gpu])
        assert other["busy_split_ms"][label] == ms
        assert {k: float(rows[label][f"{k}_ms"]) for k in BUSY_KEYS} == ms
        assert ms != busy_split_ms(whole[g.gpu])  # the window's, not the run's
    # the whole run's trace names no window
    assert cli.main([str(path), "--export-trace", str(trace)]) == 0
    assert "window_ms" not in json.loads(trace.read_text())["otherData"]


@pytest.mark.parametrize("era", ["feb", "p9", "p12"])
def test_the_view_of_the_whole_span_splits_busy_time_as_the_run(era: Era) -> None:
    """The header's `busy, view` over the whole span is the run's split. The run's kernel is
    the kernel figure (without lock lines the lines' sum, or less the allocation the NTT
    blocks hide; with them, half the unexplained time added), the view's was the segments':
    feb 53,447 ms against the run's 52,306 (its 1,141 ms of allocation gone), p9 41,468
    against 42,899."""
    for seed in range(3, 9):
        _, data = simulate(random_config(seed, era))
        model = model_of_bytes(data, era)
        spans = [g.span for g in model.gpus if g.span is not None]
        lo, hi = min(s[0] for s in spans) - 1, max(s[1] for s in spans) + 1
        run, view = whole_run(model), busy_breakdown(model, lo, hi)
        mid = (lo + hi) / 2
        first, second = busy_breakdown(model, lo, mid), busy_breakdown(model, mid, hi)
        for g in model.gpus:
            whole = busy_split_ms(run[g.gpu])
            assert busy_split_ms(view[g.gpu]) == pytest.approx(whole, abs=1e-6), (seed, g.gpu)
            _add_up([first[g.gpu], second[g.gpu]], run[g.gpu])


def _add_up(parts: list[Breakdown], whole: Breakdown) -> None:
    """The splits of windows that do not overlap add up to the whole run's, phase by phase,
    and each is a split of its own busy time (no phase below 0)."""
    for part in parts:
        assert min(part.phase_ms.values(), default=0.0) >= 0.0
        assert sum(part.phase_ms.values()) == pytest.approx(part.busy_ms, abs=1e-6)
    added = {k: sum(busy_split_ms(p)[k] for p in parts) for k in BUSY_KEYS}
    assert added == pytest.approx(busy_split_ms(whole), abs=0.01)


def test_a_gpu_with_no_kernel_segment_has_its_estimate_in_each_window() -> None:
    """Half the C++ lines lost (seed 31): a GPU left without a kernel segment still has a
    kernel estimate, which the run's split held and every window left out (`--from 0 --to
    100h`: kernel 0, unknown 74 s, against the run's 37 s and 37 s)."""
    data = lose_lines(simulate(random_config(31))[1], "cpp", 0.5, 31)
    model = model_of_bytes(data, "lost")
    run = whole_run(model)
    bare = [g for g in model.gpus if g.kernel.total_ms == 0 and g.kernel_busy_ms > 0]
    assert bare and all(g.kernel_is_estimate for g in bare)
    lo, hi = model.time_range
    view = busy_breakdown(model, lo - 1, hi + 1)
    halves = busy_breakdown(model, lo - 1, (lo + hi) / 2), busy_breakdown(model, (lo + hi) / 2, hi)
    for g in bare:
        assert run[g.gpu].phase_ms[Phase.KERNEL] > 0
        assert busy_split_ms(view[g.gpu]) == pytest.approx(busy_split_ms(run[g.gpu]), abs=1e-6)
        _add_up([h[g.gpu] for h in halves], run[g.gpu])


def test_windows_add_up_where_the_kernel_estimate_takes_whole_phases() -> None:
    """A log with no stdout line (its four workers on one GPU) leaves the kernel to the
    lines' sum, which takes every instant of cleanup, allocation, pre-lock and unknown time
    of the run. Scaled window by window, a window whose other phases it took whole gave up
    more than its share: three windows added up to 1.6 s of cleanup, the run had none."""
    _, data = simulate(SimConfig(seed=14, proofs=5, gpus=2, gw=2, stdout="none"))
    model = model_of_bytes(data, "no stdout")
    run = whole_run(model)
    (g,) = model.gpus
    assert g.kernel_is_estimate and run[g.gpu].phase_ms[Phase.CLEANUP] == 0.0
    lo, hi = model.time_range
    cuts = [lo - 1, lo + (hi - lo) / 3, lo + (hi - lo) / 2, lo + 0.8 * (hi - lo), hi + 1]
    parts = [busy_breakdown(model, a, b)[g.gpu] for a, b in itertools.pairwise(cuts)]
    _add_up(parts, run[g.gpu])
    assert all(p.phase_ms[Phase.CLEANUP] == 0.0 for p in parts)
