"""Several hosts, --compare, the exports (trace, CSV), a gap's deeper why, copying an id."""

from __future__ import annotations

import bisect
import csv
import io
import itertools
import json
import math
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SAMPLES
from helpers import build, live_model
from hostile import job_line_set
from rich.console import Console
from rich.text import Text
from textual.widgets import Static

from cuzksim.config import SimConfig, random_config
from cuzksim.logs import simulate
from parsers.breakdown import busy_breakdown
from parsers.builder import LogBuilder
from parsers.compare import compare, compare_dict
from parsers.durations import offset
from parsers.export import trace_document, write_csv
from parsers.hosts import CUT, OWN, RUNS, START, WALL, HostLines, merge
from parsers.load import read_log, read_runs
from parsers.model import LogModel, Phase, ProofTable
from parsers.proofs import FoundJob, failed_proofs, found_job, proof_ends
from parsers.rawlines import LineReader
from parsers.why import gap_why, synthesis_during, why_lines, worker_states
from tui import cli
from tui.app import make_app
from tui.commands import export_visible
from tui.compare import CompareScreen
from tui.gantt import AXIS_ROWS, GanttView
from tui.inspector import InspectorScreen
from tui.lanes import ID_CELLS, LaneDrawing, Window

REQUIRED = {
    "X": {"name", "ph", "ts", "dur", "pid", "tid"},
    "M": {"name", "ph", "pid", "args"},
    "C": {"name", "ph", "ts", "pid", "args"},
}
METADATA = {"process_name", "thread_name", "process_sort_index", "thread_sort_index"}


def validate_trace(doc: dict[str, Any]) -> None:
    """The rules of the Trace Event Format (JSON object form) that Perfetto relies on."""
    assert set(doc) >= {"traceEvents"}
    assert doc["displayTimeUnit"] in ("ms", "ns")
    json.dumps(doc)  # serializable as is
    tracks: dict[tuple[int, int], list[tuple[int, int]]] = {}
    named: set[int] = set()
    for e in doc["traceEvents"]:
        ph = e["ph"]
        assert ph in REQUIRED, e
        assert REQUIRED[ph] <= set(e), e
        assert isinstance(e["pid"], int) and e["pid"] > 0
        if "tid" in e:
            assert isinstance(e["tid"], int) and e["tid"] >= 0
        if ph == "M":
            assert e["name"] in METADATA
            if e["name"] == "process_name":
                named.add(e["pid"])
            continue
        assert isinstance(e["ts"], int)  # whole microseconds
        if ph == "X":
            assert isinstance(e["dur"], int) and e["dur"] >= 0
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        if ph == "C":
            assert e["args"] and all(isinstance(v, int | float) for v in e["args"].values())
    assert {e["pid"] for e in doc["traceEvents"]} <= named
    # on one track, two complete events either nest or are disjoint: never partly overlap
    for spans in tracks.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack: list[int] = []
        for s, e in spans:
            while stack and stack[-1] <= s:
                stack.pop()
            if stack:
                assert e <= stack[-1], (s, e, stack[-1])
            stack.append(e)


def kernel_sums(doc: dict[str, Any]) -> dict[str, float]:
    """Per process name, the kernel segments' total in ms."""
    names = {
        e["pid"]: e["args"]["name"]
        for e in doc["traceEvents"]
        if e["ph"] == "M" and e["name"] == "process_name"
    }
    out: dict[str, float] = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X" and e["name"] == "kernel":
            out[names[e["pid"]]] = out.get(names[e["pid"]], 0.0) + e["dur"] / 1000
    return out


@pytest.mark.parametrize("name", ["curio-mixed", "journal-2gpu", "p12-c15-gw1", "tiny"])
def test_trace_follows_the_format_and_its_kernels_add_up_to_the_report(name: str) -> None:
    model = read_log(SAMPLES / f"{name}.log")
    doc = trace_document(model)
    validate_trace(doc)
    sums = kernel_sums(doc)
    segments = len(model.parts.seg_start)
    for g in model.gpus:
        # each segment's ends are rounded to the µs once: at most 1 µs apart per segment
        assert sums.get(f"GPU{g.gpu}", 0.0) == pytest.approx(g.kernel_busy_ms, abs=0.001 * segments)
        assert sums.get(f"GPU{g.gpu}", 0.0) == pytest.approx(g.kernel_busy_ms, rel=1e-6)


# random runs of each engine: lock lines (p12), none (p9), no allocation line either (feb)
ERA_SEEDS = {
    era: [s for s in range(7000, 7400) if random_config(s).era == era][:2]
    for era in ("p12", "p9", "feb")
}


@pytest.mark.parametrize(
    "seed", [s for seeds in ERA_SEEDS.values() for s in seeds], ids=lambda s: str(s)
)
def test_the_trace_s_kernels_are_the_drawn_segments_and_kernel_busy_where_that_is_them(
    seed: int, tmp_path: Path
) -> None:
    """On an engine without lock lines the trace's kernel events added up to a figure the
    report gave nowhere (p9: 51.7 s of kernel events, kernel busy 69.0 s), and the README
    said they add up to kernel busy. They are the kernel segments of the completed intervals,
    as drawn and as phases.csv lists them; they are kernel busy where the estimate is the
    union of those segments, which do not overlap where the engine prints lock lines."""
    _, data = simulate(random_config(seed))
    model = build(data)
    sums = kernel_sums(trace_document(model))
    t = model.parts
    done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    owner = np.repeat(np.arange(len(t)), np.diff(t.seg_offsets))
    kernel = (t.seg_phase == Phase.KERNEL) & done[owner]
    files = write_csv(model, tmp_path / "out")
    phases = next(f for f in files if f.name == "phases.csv")
    rows = list(csv.DictReader(phases.open()))
    era = random_config(seed).era
    for g in model.gpus:
        label = f"GPU{g.gpu}"
        mine = kernel & (t.gpu[owner] == g.gpu)
        drawn = float((t.seg_end[mine] - t.seg_start[mine]).sum())
        listed = sum(
            float(r["ms"])
            for r in rows
            if r["phase"] == "kernel" and r["gpu"] == label and done[int(r["index"])]
        )
        assert sums.get(label, 0.0) == pytest.approx(drawn, abs=0.001 * len(t.seg_start))
        assert listed == pytest.approx(drawn, abs=0.01)
        if era == "p12":
            assert drawn == pytest.approx(g.kernel.total_ms, abs=0.001)  # never overlapping
        if g.kernel_busy_ms == g.kernel.total_ms and era == "p12":
            assert sums.get(label, 0.0) == pytest.approx(g.kernel_busy_ms, rel=1e-6)
    if era != "p12":  # the estimate is not what the drawn segments add up to on some GPU
        assert any(abs(g.kernel_busy_ms - g.kernel.total_ms) > 1 for g in model.gpus)


def test_trace_names_processes_by_ordinal_and_puts_gaps_on_the_busy_track() -> None:
    model = read_log(SAMPLES / "journal-2gpu.log")
    doc = trace_document(model)
    events = doc["traceEvents"]
    procs = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert {"GPU2", "GPU3", "synthesis", "proofs"} <= procs
    gaps = [e for e in events if e.get("cat") == "gap"]
    assert len(gaps) == len(model.gaps)
    assert {e["tid"] for e in gaps} == {0}
    assert sorted(e["dur"] for e in gaps) == sorted(g.duration_ms * 1000 for g in model.gaps)
    phases = [e for e in events if e.get("cat") == "phase"]
    assert all("job" in e["args"] and "partition" in e["args"] for e in phases)
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert counters == {"intervals in flight", "kernels running", "partitions in synthesis"}


@pytest.mark.parametrize("seed", [3, 11, 40])
def test_trace_of_random_runs_and_of_a_range_is_valid(seed: int) -> None:
    _, data = simulate(random_config(seed))
    model = build(data)
    validate_trace(trace_document(model))
    lo, hi = model.time_range
    part = trace_document(model, lo + (hi - lo) / 3, lo + (hi - lo) / 2)
    validate_trace(part)
    xs = [e for e in part["traceEvents"] if e["ph"] == "X"]
    assert xs and all(
        _us(lo + (hi - lo) / 3) <= e["ts"] <= e["ts"] + e["dur"] <= _us(lo + (hi - lo) / 2)
        for e in xs
    )


def _us(ms: float) -> int:
    return round(ms * 1000)


def test_split_proving_overlaps_go_to_their_own_tracks() -> None:
    model = read_log(SAMPLES / "journal-2gpu.log")
    assert any(lane.sub_row for lane in model.lanes)  # the sample overlaps
    threads = {
        e["args"]["name"]
        for e in trace_document(model)["traceEvents"]
        if e["name"] == "thread_name"
    }
    assert any("'" in t for t in threads)


def test_csv_export_has_every_interval_gap_and_proof(tmp_path: Path) -> None:
    model = read_log(SAMPLES / "curio-mixed.log")
    files = write_csv(model, tmp_path / "out")
    rows = {f.name: list(csv.DictReader(f.open())) for f in files}
    assert len(rows["intervals.csv"]) == len(model.parts)
    assert len(rows["gaps.csv"]) == len(model.gaps)
    assert len(rows["proofs.csv"]) == len(model.proofs)
    assert len(rows["phases.csv"]) == len(model.parts.seg_start)
    done = {i for i in range(len(model.parts)) if model.parts.get(i).gpu_end is not None}
    for g in model.gpus:
        kernel = sum(
            float(r["ms"])
            for r in rows["phases.csv"]
            if r["phase"] == "kernel" and r["gpu"] == f"GPU{g.gpu}" and int(r["index"]) in done
        )
        assert kernel == pytest.approx(g.kernel_busy_ms, abs=0.01)
    assert sum(int(r["ms"]) for r in rows["gaps.csv"]) == model.summary.gaps.total_ms


def test_the_proofs_csv_of_several_logs_says_each_proof_s_log(tmp_path: Path) -> None:
    """proofs.csv of two logs had no column saying which log a proof is from: two logs of one
    job id gave two rows alike. Of several logs (or runs) it has a `log` column, named as
    its GPUs' labels name the log; of one log, none."""
    logs = [SAMPLES / "curio-mixed.log", SAMPLES / "journal-2gpu.log"]
    each = [read_log(x) for x in logs]
    # the second log twice: the same job ids in two logs
    names = ["curio", "journal", "again"]
    model = merge([*each, each[1]], names).model
    files = write_csv(model, tmp_path / "out")
    rows = next(list(csv.DictReader(f.open())) for f in files if f.name == "proofs.csv")
    assert all(r["log"] in names for r in rows)
    for name, m in zip(names, [*each, each[1]], strict=True):
        mine = sorted(r["job"] for r in rows if r["log"] == name)
        assert mine == sorted(p.job for p in m.proofs)
    labels = {model.gpu_label(g.gpu).split(":")[0] for g in model.gpus}
    assert labels == set(names)
    one = write_csv(each[0], tmp_path / "one")
    header = next(f.read_text().split("\n")[0] for f in one if f.name == "proofs.csv")
    assert "log" not in header.split(",")


def test_two_hosts_align_on_the_wall_clock() -> None:
    a, b = read_log(SAMPLES / "curio-mixed.log"), read_log(SAMPLES / "journal-2gpu.log")
    assert a.wall_anchor is not None and b.wall_anchor is not None
    m = merge([a, b], ["a", "b"])
    assert m.alignment == WALL
    shift = round((a.wall_anchor - b.wall_anchor).total_seconds() * 1000)
    assert m.hosts[0].offset_ms - m.hosts[1].offset_ms == shift
    model = m.model
    assert len(model.gaps) == len(a.gaps) + len(b.gaps)
    assert [g.start for g in model.gaps] == sorted(g.start for g in model.gaps)
    assert {model.gpu_label(g.gpu) for g in model.gpus} == {"a:GPU0", "a:GPU1", "b:GPU2", "b:GPU3"}
    # the same instant has the same wall time on both hosts
    gap = b.gaps[0]
    moved = next(
        g
        for g in model.gaps
        if model.gpu_keys is not None
        and (model.gpu_keys[g.gpu].host, model.gpu_keys[g.gpu].ordinal) == (1, gap.gpu)
        and g.end - g.start == gap.duration_ms
    )
    assert model.wall_time(moved.start) == b.wall_time(gap.start)
    # the sides still name their own partitions
    assert model.parts.job_of(moved.after.index) == gap.after.job
    assert sum(g.busy_ms for g in model.gpus) == sum(g.busy_ms for g in (*a.gpus, *b.gpus))


def test_a_gap_s_wall_time_is_its_own_log_s_in_the_all_hosts_section() -> None:
    """The logs are placed by whole ms; their anchors are µs apart. A wall time on the
    all-hosts clock was the first anchor plus the rounded offset, and read 1 ms apart from
    the host's own section (`09:32:38.133` and `.134`). Logs each on its own clock (one has
    no wall clock) or from their starts: a log's gaps had no wall time there at all."""
    a, b = read_log(SAMPLES / "curio-mixed.log"), read_log(SAMPLES / "journal-2gpu.log")
    no_clock, tiny = read_log(SAMPLES / "p12-c15-gw1.log"), read_log(SAMPLES / "tiny.log")
    assert a.wall_anchor is not None and b.wall_anchor is not None
    assert no_clock.wall_anchor is None and tiny.wall_anchor is not None
    cases: list[tuple[tuple[LogModel, ...], str | None, str]] = [
        ((a, replace(b, wall_anchor=b.wall_anchor + timedelta(microseconds=us))), None, WALL)
        for us in (0, 400, 600, 999)
    ]
    cases += [((no_clock, tiny), None, OWN), ((a, b), START, START), ((tiny, a), OWN, OWN)]
    for own, align, placed in cases:
        m = merge(list(own), ["x", "y"], align=align)
        model, keys = m.model, m.model.gpu_keys
        assert m.alignment == placed and keys is not None
        walls = 0
        for g in model.gaps:
            host = keys[g.gpu].host
            start = g.start - m.hosts[host].offset_ms  # on its own log's clock
            assert model.wall_time(g.start, g.gpu) == own[host].wall_time(start)
            said = model.wall_text(g.start, g.gpu)
            assert (said is None) == (own[host].wall_anchor is None)
            assert said is None or said.endswith(str(own[host].wall_text(start)))
            walls += said is not None
        assert walls > 0


@pytest.mark.parametrize("width", [70, 80, 100])
def test_the_all_hosts_gpu_table_at_a_terminal_cuts_names_to_fit(width: int) -> None:
    """At 80 columns the names folded inside (`curio-mixed.log:G` over `PU0`): at a
    terminal they are cut in the middle to fit, each `:GPU0` whole; piped, whole."""
    from io import StringIO

    from rich.console import Console

    from tui.report import gpu_table

    names = ["journal-2gpu.log", "curio-mixed.log"]
    model = merge([read_log(SAMPLES / n) for n in names], names).model

    def rows(table: object, cells: int) -> list[str]:
        out = StringIO()
        Console(file=out, width=cells).print(table)
        return [line for line in out.getvalue().splitlines() if re.search(r"w\d,w\d", line)]

    cut = rows(gpu_table(model, width), width)
    assert len(cut) == 4 and all(len(line) <= width for line in cut)  # a line a GPU
    assert {m for line in cut for m in re.findall(r":GPU\d", line)} == {
        ":GPU0",
        ":GPU1",
        ":GPU2",
        ":GPU3",
    }
    # cut below 90 columns: the `.log` both names end with first, then the middle
    assert all(".log:GPU" not in line for line in cut) == (width < 90)
    if 80 <= width < 90:  # room for each name without it
        assert all(re.search(r"(journal-2gpu|curio-mixed):GPU\d", line) for line in cut)
    assert all(("…" in line) == (width < 80) for line in cut)
    whole = rows(gpu_table(model), 1000)
    assert all(model.gpu_label(g.gpu) in "".join(whole) for g in model.gpus)


def test_the_proof_view_names_another_log_s_gpus_as_the_other_screens_do() -> None:
    """The proof view of the second log's job said `GPU 1000`, its GPU's id in the model of
    both logs. A proof of one log names its log once, its GPUs by their ordinals; at 80
    columns (a 74-cell window) every figure stays whole."""
    from io import StringIO

    from rich.console import Console

    from tui.find import describe_proof

    a, b = read_log(SAMPLES / "journal-2gpu.log"), read_log(SAMPLES / "curio-mixed.log")
    names = ["journal-2gpu.log", "curio-mixed.log"]
    model = merge([a, b], names).model
    jobs = {n: {p.job for p in m.proofs} for n, m in zip(names, (a, b), strict=True)}
    for k in range(len(model.proofs)):
        found = found_job(model, k)
        for width in (74, 200):
            out = StringIO()
            Console(file=out, width=width).print(describe_proof(model, found))
            said = out.getvalue()
            # no id of the merged model (`1000`; job ids hold `-1000-`)
            assert not re.search(r"(?<![-\w])1\d\d\d(?![-\w])", said), said
            own = [n for n in names if found.job in jobs[n]]
            assert len(own) == 1 and f"on {own[0]}" in " ".join(said.split())
            table = said.split("Its gaps")[0].splitlines()[3:]
            assert "…" not in "".join(table), said


@pytest.mark.parametrize("align", [OWN, START])
def test_merged_proofs_are_every_log_s_shifted_in_the_order_of_their_objects(align: str) -> None:
    """The proofs of several logs, merged as columns: each log's proofs with its times
    shifted, in `proof_key` order (the earlier log's first on a tie: the same log twice
    ties every proof), each said to be from its log; no proof object is made to merge.
    A log whose proofs come in another order (its jobs as the tracing lines name them) is
    put in that order first."""
    from parsers.model import ProofList, proof_key

    models = [build(simulate(random_config(seed))[1]) for seed in (3, 3, 8, 21)]
    # a log without TIMELINE lines lists its jobs as the log names them, not in that order
    traced = read_log(SAMPLES / "real" / "monolithic-merged.log")
    assert list(traced.proofs) != sorted(traced.proofs, key=proof_key)
    models.insert(2, traced)
    merged = merge(models, ["a", "b", "t", "c", "d"], align=align)
    model = merged.model
    assert isinstance(model.proofs, ProofList) and model.proofs._made is None
    every = [
        (
            p._replace(
                first_synth_start=None
                if p.first_synth_start is None
                else p.first_synth_start + h.offset_ms,
                last_gpu_end=None if p.last_gpu_end is None else p.last_gpu_end + h.offset_ms,
                last_seen=None if p.last_seen is None else p.last_seen + h.offset_ms,
            ),
            k,
        )
        for k, (m, h) in enumerate(zip(models, merged.hosts, strict=True))
        for p in m.proofs
    ]
    want = sorted(every, key=lambda pk: proof_key(pk[0]))  # stable: the earlier log first
    assert list(model.proofs) == [p for p, _ in want]
    assert model.proof_hosts is not None
    assert model.proof_hosts.tolist() == [k for _, k in want]
    assert model.proof_spans is not None and len(model.proof_spans) == len(want) > 20


@pytest.mark.parametrize("align", [OWN, START, RUNS])
def test_merged_columns_are_each_log_s_shifted(align: str) -> None:
    """The merged table's stamps and segments are each log's moved by its offset, and the
    synthesis steps are every log's put in time order (taken as they come where each log
    is after the one before: a log's runs), whatever the placement."""
    models = [build(simulate(random_config(seed))[1]) for seed in (4, 9, 4)]
    merged = merge(models, ["a", "b", "c"], align=align)
    t = merged.model.parts
    offs = [h.offset_ms for h in merged.hosts]
    for name in ("synth_start", "gpu_start", "gpu_end", "unlock", "seg_start", "seg_end"):
        want = np.concatenate(
            [getattr(m.parts, name) + off for m, off in zip(models, offs, strict=True)]
        )
        assert np.array_equal(getattr(t, name), want, equal_nan=True), name
    times = np.concatenate([m.synth_times + off for m, off in zip(models, offs, strict=True)])
    steps = np.concatenate([np.diff(m.synth_counts, prepend=0) for m in models])
    order = np.lexsort((steps, times))
    assert merged.model.synth_times.tolist() == times[order].tolist()
    assert merged.model.synth_counts.tolist() == np.cumsum(steps[order]).tolist()
    assert len(times) > 20 and (align != RUNS or times.tolist() == sorted(times.tolist()))


def test_a_merged_model_marks_the_failed_partitions_and_proofs_each_log_does(
    tmp_path: Path,
) -> None:
    """A merged model's `failed` column is each log's, a mask still (it was joined as 0s and
    1s: the failed partitions picked by it were the first two rows' over and over, and a
    restarted daemon's failed proofs were drawn running to the log's end), and the proofs
    drawn failed are those each log draws failed."""
    from parsers.proofs import failed_proofs

    logs = [SAMPLES / "curio-mixed.log", SAMPLES / "journal-2gpu.log"]
    alone = [read_log(p) for p in logs]
    both = tmp_path / "restarted.log"
    both.write_bytes(b"".join(p.read_bytes() for p in logs))  # the daemon restarted
    merged = merge(alone, ["a", "b"]).model
    assert merged.parts.failed.tolist() == [f for m in alone for f in m.parts.failed.tolist()]
    for model in (merged, read_log(both)):
        assert model.parts.failed.dtype == np.bool_
        drawn = {p.job for p, f in zip(model.proofs, failed_proofs(model), strict=True) if f}
        each = {p.job for m in alone for p, f in zip(m.proofs, failed_proofs(m), strict=True) if f}
        assert drawn == each and len(each) == 4


def test_a_log_without_wall_clock_keeps_its_own_and_compare_starts_both_at_zero() -> None:
    a, b = read_log(SAMPLES / "p12-c15-gw1.log"), read_log(SAMPLES / "tiny.log")
    assert a.wall_anchor is None
    m = merge([a, b], ["a", "b"])
    assert m.alignment == OWN and "no wall clock in p12-c15-gw1.log" in m.note
    assert m.model.wall_anchor is None
    s = merge([a, b], ["a", "b"], START)
    assert s.alignment == START
    # each run's first event is at 0 on the shared axis
    assert s.model.time_range[0] == 0
    for k, run in enumerate((a, b)):
        first = run.summary.first_synth_start
        assert first is not None
        assert first + s.hosts[k].offset_ms == round(first - run.time_range[0])
    assert [h.offset_ms for h in s.hosts] == [-round(a.time_range[0]), -round(b.time_range[0])]


def test_the_compared_runs_proofs_are_each_run_s_not_their_sum() -> None:
    """The comparison's header said `proofs 12/12  - s/proof`: before's 4 and after's 8
    added up, which is no run's. It says each, before → after, with each one's rate."""
    from tui.header import header_text

    a = build(simulate(SimConfig(seed=51, proofs=4, gpus=1, gw=2, stdout="plain"))[1])
    b = build(simulate(SimConfig(seed=52, proofs=10, gpus=1, gw=2, stdout="plain"))[1])
    both = merge([a, b], ["a", "b"], START).model
    s = both.summary
    assert s.proofs_shown(short=True) == "proofs 4/4 → 10/10"
    assert s.s_per_proof_shown == f"{a.summary.rate:.2f} → {b.summary.rate:.2f} s/proof"
    first = header_text(both, "FINISHED").plain.split("\n")[0]
    assert "proofs 4/4 → 10/10" in first and "14" not in first


def test_gpus_of_one_run_only_are_said_not_dropped() -> None:
    """One GPU before, three after: the after-run's GPU1 and GPU2 had no section and nothing
    said so, while their gaps counted in the gap figures."""
    from tui.compare import compare_renderables

    one = build(simulate(SimConfig(seed=5, proofs=4, gpus=1, gw=1, stdout="plain"))[1])
    three = build(simulate(SimConfig(seed=6, proofs=6, gpus=3, gw=1, stdout="plain"))[1])
    doc = compare_dict(one, three)
    assert doc["gpu_pairs"] == [[0, 0]]
    assert doc["unpaired"] == {"before": [], "after": [1, 2]}
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(*compare_renderables(one, three))
    assert "GPU1, GPU2 only in after: no GPU to compare with" in console.export_text()
    assert compare_dict(three, three)["unpaired"] == {"before": [], "after": []}
    # GPUs 1 and 2 against 0-2: 1 with 1 and 2 with 2 (in order they were 1 → 0, 2 → 1, and
    # `GPU1, GPU2 only in after` was said of GPUs both runs have)
    keys = {g.gpu: g for g in three.gpus}
    part = replace(three, gpus=(keys[1], keys[2]))
    doc = compare_dict(part, three)
    assert doc["gpu_pairs"] == [[1, 1], [2, 2]]
    assert doc["unpaired"] == {"before": [], "after": [0]}


def test_a_run_whose_timing_lines_are_lost_is_not_judged_by_its_phases() -> None:
    """The same run with its C++ lines lost (all unknown time) was judged `kernel % of busy
    fell 45 → 0: worse`, `barrier … fell: better`: verdicts from lines that are not there.
    A share moves only beyond both runs' unknown shares; the unknown share is a row of its
    own; the comparison's header adds no `all N GPUs` of both runs together."""
    from tui.header import header_text

    _, data = simulate(SimConfig(seed=2, proofs=8, gpus=3, gw=2, stdout="plain"))
    whole = build(data)
    lost = build(b"\n".join(x for x in data.split(b"\n") if not x.startswith(b"CUZK_")))
    doc = compare_dict(whole, lost)
    moved = [f for f in doc["figures"] if f["moved"]]
    assert moved and all(f["figure"] == "unknown % of busy" for f in moved), doc["verdicts"]
    assert all(f["better"] is None for f in moved)
    lock = [f for f in doc["figures"] if f["figure"] == "lock wait % of interval time"]
    assert lock and all(f["after"] is None and f["delta_pct"] is None for f in lock)
    both = merge([whole, lost], ["a", "b"], START).model
    assert "all 6 GPUs" not in header_text(both, "FINISHED").plain


def test_a_run_compared_with_itself_has_no_verdict() -> None:
    m = read_log(SAMPLES / "curio-mixed.log")
    figures = compare(m, m)
    assert figures and not any(f.moved for f in figures)
    assert compare_dict(m, m)["verdicts"] == []


def test_more_gpu_workers_show_as_verdicts() -> None:
    one = build(simulate(SimConfig(seed=5, proofs=8, gpus=1, gw=1, stdout="plain"))[1])
    two = build(simulate(SimConfig(seed=5, proofs=8, gpus=1, gw=2, stdout="plain"))[1])
    doc = compare_dict(one, two)
    util = next(f for f in doc["figures"] if f["figure"] == "TIMELINE % of span")
    assert util["delta"] == pytest.approx(
        100 * (two.gpus[0].timeline_util - one.gpus[0].timeline_util), abs=1e-4
    )
    assert any(v.startswith("GPU0: ") for v in doc["verdicts"])
    for f in doc["figures"]:
        if f["noise_factor"] is not None:  # a gap duration: by ratio
            low, high = sorted((f["before"], f["after"]))
            assert f["moved"] == (high - low > 20 and high >= f["noise_factor"] * low)
        else:
            assert f["moved"] == (f["noise"] is not None and abs(f["delta"]) > f["noise"])
        if f["unit"] == "ms" and f["before"] is not None and abs(f["before"]) < 20:
            assert f["delta_pct"] is None  # a share of a few ms is no proportion
        elif f["before"]:
            assert f["delta_pct"] == pytest.approx(100 * f["delta"] / f["before"], abs=1e-2)


def test_an_estimated_kernel_figure_is_compared_with_its_range() -> None:
    """A run whose C++ lines were half lost against the whole one: `kernel % of span` read
    `18.8 %  49.4 %` as if both were measured, where the report says `≈19 % (2–40 %)`. The
    table and the verdicts write the estimate with its range; the JSON carries it."""
    from cuzksim.logs import lose_lines
    from tui.compare import compare_renderables

    _, data = simulate(SimConfig(seed=2, proofs=8, gpus=2, gw=2, stdout="plain"))
    whole, lost = build(data), build(lose_lines(data, "cpp", 0.5, seed=1))
    assert all(g.kernel_is_estimate for g in lost.gpus)
    assert not any(g.kernel_is_estimate for g in whole.gpus)
    doc = compare_dict(lost, whole)
    kernel = [f for f in doc["figures"] if f["figure"] == "kernel % of span"]
    assert len(kernel) == 2
    for f, g in zip(kernel, lost.gpus, strict=True):
        lo, hi = g.kernel_util_range
        assert f["before_range"] == [round(100 * lo, 6), round(100 * hi, 6)]
        assert f["after_range"] is None
    # its share of busy too (the busy split's ≈), its range holding the estimate
    busy = [f for f in doc["figures"] if f["figure"] == "kernel % of busy"]
    for f, g in zip(busy, lost.gpus, strict=True):
        lo, hi = f["before_range"]
        assert lo <= f["before"] <= hi and f["after_range"] is None
        assert lo == pytest.approx(100 * g.kernel_range_ms[0] / g.busy_ms, abs=1e-5)
    console = Console(width=120, file=io.StringIO(), record=True)
    console.print(*compare_renderables(lost, whole))
    rows = [line for line in console.export_text().splitlines() if "kernel % of span" in line]
    assert len(rows) == 2
    assert all(
        "≈" in line for line in console.export_text().splitlines() if "kernel % of busy" in line
    )
    for row, g in zip(rows, lost.gpus, strict=True):
        lo, hi = g.kernel_util_range
        shown = re.search(r"≈(\d+) % \((\d+)–(\d+) %\)", row)
        assert shown is not None, row
        assert int(shown.group(2)) <= 100 * lo and 100 * hi <= int(shown.group(3))
        assert row.count("≈") == 1  # the run after is measured


def test_a_phase_the_kernel_estimate_took_is_compared_with_its_doubt() -> None:
    """A log with no stdout line (its workers on one GPU) leaves kernel busy to the lines'
    sum, which takes the cleanup, allocation and unknown time of the run: `cleanup % of busy
    fell 13.6 % → 0.0 %: better` was a verdict on what the estimate took, not a change."""
    measured = build(simulate(SimConfig(seed=3, proofs=10, gpus=2, gw=2, stdout="ansi"))[1])
    guessed = build(simulate(SimConfig(seed=14, proofs=5, gpus=2, gw=2, stdout="none"))[1])
    (g,) = guessed.gpus
    assert g.kernel_is_estimate and not any(x.kernel_is_estimate for x in measured.gpus)
    taken = busy_breakdown(guessed)[g.gpu]
    assert taken.phase_ms[Phase.CLEANUP] == 0.0
    figures = [f for f in compare(measured, guessed) if f.section == "GPU0"]
    width = 100 * (g.kernel_range_ms[1] - g.kernel_range_ms[0]) / g.busy_ms
    for f in figures:
        if f.name.endswith("% of busy"):
            assert f.noise is not None and f.noise >= width, f.name
    shares = [f for f in figures if f.name == "cleanup % of busy"]
    assert shares and shares[0].before and shares[0].verdict() is None


def test_a_run_without_lock_lines_compares_no_lock_share() -> None:
    """The p9 engine prints no lock line: `lock wait % of busy` and `pre-lock % of busy`
    read `0.0 %` beside a current engine's, as if measured. They are `–` and never move, as
    `lock wait % of interval time` was."""
    old, current = read_log(SAMPLES / "p9-c6.log"), read_log(SAMPLES / "p12-gw2-merged.log")
    figures = {f.name: f for f in compare(old, current) if f.section != "run"}
    for name in ("lock wait % of busy", "pre-lock % of busy", "lock wait % of interval time"):
        f = figures[name]
        assert f.before is None and f.after is not None and not f.moved, name
        assert f.shown(after=False) == "–"
    assert figures["kernel % of busy"].before is not None


def test_the_proofs_of_many_logs_are_merged_as_one_by_one_insertion_merges_them() -> None:
    """The logs' proofs were put among those before them one log at a time, a pass over all
    so far for each: a log of 50,000 restarts took minutes. One sort gives the same list
    (the one-by-one insertion, `merge_positions`, as the oracle), ties and all."""
    from parsers.hosts import _merged_proofs
    from parsers.model import NO_FIRST, ProofTable

    rng = np.random.default_rng(7)
    for _ in range(40):
        tables = []
        for _ in range(int(rng.integers(1, 6))):
            n = int(rng.integers(0, 8))
            names = tuple(f"job{int(x)}" for x in rng.integers(0, 5, n))
            first = rng.integers(0, 4, n).astype(np.float64)
            first[rng.random(n) < 0.2] = np.nan
            table = ProofTable(
                job=np.arange(n, dtype=np.int64),
                kind=np.full(n, -1, dtype=np.int64),
                partitions=rng.integers(1, 10, n),
                first=first,
                last=first + 1,
                completed=rng.random(n) < 0.5,
                seen=first + 2,
                jobs=names,
                kinds=(),
            )
            tables.append(table.in_key_order())
        merged, hosts, order = _merged_proofs(tables)
        # the oracle: each log's proofs, one by one, put after every proof before it of a
        # key up to its own (insort_right), the key a proof's first SYNTH_START and job id
        listed: list[tuple[float, str, int]] = []
        for k, t in enumerate(tables):
            for j, first in zip(t.job.tolist(), t.first.tolist(), strict=True):
                key = float(NO_FIRST) if math.isnan(first) else first
                bisect.insort_right(listed, (key, t.jobs[j], k), key=lambda e: e[:2])
        want_names = [name for _, name, _ in listed]
        want_hosts = [k for _, _, k in listed]
        assert [merged.jobs[j] for j in merged.job.tolist()] == want_names
        assert hosts.tolist() == want_hosts
        # the order takes the tables' proofs, one table after the other, to the list's
        whole = [t.jobs[j] for t in tables for j in t.job.tolist()]
        assert [whole[k] for k in order.tolist()] == want_names


def test_a_duration_of_a_few_ms_before_has_no_percentage_change() -> None:
    """`p50 rose 4 ms → 32.52 s (+812775 %)`: a share of a few ms says nothing. Under 20 ms
    before, the difference is given in ms alone, in the table, the verdict and the JSON."""
    from parsers.compare import Figure, fmt_delta

    tiny = Figure("gaps", "p50", "ms", 4.0, 32_520.0, 20.0, "lower")
    assert tiny.delta_pct is None and fmt_delta(tiny) == "+32.52 s"
    assert tiny.verdict() == "gaps: p50 rose 4 ms → 32.52 s (+32.52 s): worse"
    assert tiny.as_dict()["delta_pct"] is None
    usual = Figure("gaps", "p50", "ms", 400.0, 600.0, 40.0, "lower")
    assert usual.delta_pct == pytest.approx(50.0) and fmt_delta(usual) == "+200 ms (+50 %)"


def test_a_change_that_rounds_to_nothing_has_no_sign() -> None:
    """`-0.0 points`, `-1 ms (-0 %)`: a change that rounds to nothing is written `0.0
    points`, `(0 %)`; one that does not keeps its sign."""
    from parsers.compare import Figure, fmt_delta

    share = Figure("GPU0", "kernel", "%", 46.21, 46.18, 0.5, "higher")
    assert fmt_delta(share) == "0.0 points"
    assert fmt_delta(Figure("GPU0", "kernel", "%", 46.2, 45.9, 0.5, "higher")) == "-0.3 points"
    slight = Figure("gaps", "p50", "ms", 4000.0, 3999.0, 40.0, "lower")
    assert fmt_delta(slight) == "-1 ms (0 %)"


def test_a_longer_run_is_not_worse_for_its_gaps_being_more() -> None:
    """A run of 10 proofs against one of 4: `gaps: count rose 5 → 22: worse` and `total rose
    … worse` judged the length. Counts and totals are shown, never judged; their rates of the
    GPUs' span are judged, and the share equals what TIMELINE utilization leaves idle."""
    short = build(simulate(SimConfig(seed=51, proofs=4, gpus=1, gw=2, stdout="plain"))[1])
    long = build(simulate(SimConfig(seed=52, proofs=10, gpus=1, gw=2, stdout="plain"))[1])
    figures = {(f.section, f.name): f for f in compare(short, long)}
    for section in ("gaps", "mid-proof gaps", "boundary gaps"):
        for name in ("count", "total", "under 50 ms", "50–500 ms", "over 500 ms"):
            f = figures[(section, name)]
            assert f.noise is None and not f.moved and f.verdict() is None
    verdicts = compare_dict(short, long)["verdicts"]
    assert not any(re.match(r"gaps: (count|total) (rose|fell)", v) for v in verdicts), verdicts
    for model, side in ((short, "before"), (long, "after")):
        (gpu,) = model.gpus
        hours = gpu.span_ms / 3_600_000
        rate = figures[("gaps", "count per hour of span")]
        share = figures[("gaps", "total % of span")]
        assert getattr(rate, side) == pytest.approx(len(model.gaps) / hours)
        assert getattr(share, side) == pytest.approx(100 * (1 - gpu.timeline_util), abs=1e-6)
    assert json.loads(json.dumps(compare_dict(short, long), allow_nan=False))
    # a run with no span has no rate, and the rate no noise (it was 500,000,000 per hour)
    empty = build(b"TIMELINE,100,GPU_START,j,worker=0,partition=0\n")
    rate = next(f for f in compare(empty, empty) if f.name == "count per hour of span")
    assert rate.before is None and rate.noise is None and not rate.moved


def test_a_second_worker_s_lock_wait_is_a_verdict_the_busy_split_misses() -> None:
    """A second worker on the GPU waits for the lock while the first runs kernels: the busy
    split's `lock wait % of busy` stays 0 (the instant is kernel), and compare judged the
    change only better; the workers' interval time shows the wait, and it is worse."""
    one = read_log(SAMPLES / "p12-c15-gw1.log")
    two = read_log(SAMPLES / "p12-gw2-merged.log")
    doc = compare_dict(one, two)
    by_name = {f["figure"]: f for f in doc["figures"] if f["section"] == "GPU0"}
    assert not by_name["lock wait % of busy"]["moved"]
    lock = by_name["lock wait % of interval time"]
    waits = [w.phases_ms["lock_wait"] for w in two.workers if w.gpu == 0]
    total = sum(sum(w.phases_ms.values()) for w in two.workers if w.gpu == 0)
    assert lock["before"] == 0 and lock["after"] == pytest.approx(100 * sum(waits) / total)
    assert any(
        "lock wait % of interval time rose" in v and v.endswith("worse") for v in doc["verdicts"]
    )


def test_a_figure_a_run_does_not_have_is_no_value_and_no_verdict() -> None:
    """No proof completed is no rate (it was 0 s/proof: "fell 38.24 s → 0.00 s: better"); a
    GPU with no ended interval, or an engine that prints no lock line, has no lock wait (it
    was 0 %: "fell 14.5 % → 0.0 %: better"). Such a figure is `–`, null, and no verdict."""
    from tui.compare import compare_renderables

    cfg = SimConfig(seed=5, gpus=2, gw=2, proofs=6, stdout="plain")
    data = simulate(cfg)[1]
    whole = build(data)
    start = build(b"\n".join(data.split(b"\n")[:110]))
    old = build(simulate(replace(cfg, era="feb"))[1])
    assert start.summary.proofs_completed == 0 and whole.summary.proofs_completed > 0
    doc = compare_dict(whole, start)
    rate = next(f for f in doc["figures"] if f["figure"] == "s/proof")
    assert rate["after"] is None and rate["delta"] is None and not rate["moved"]
    assert not any("s/proof" in v for v in doc["verdicts"])
    idle = [g.gpu for g in start.gpus if not g.span_ms]
    lock = {
        f["section"]: f for f in doc["figures"] if f["figure"] == "lock wait % of interval time"
    }
    for gpu in idle:
        assert lock[f"GPU{gpu}"]["after"] is None and lock[f"GPU{gpu}"]["verdict"] is None
    doc = compare_dict(old, whole)
    lock = {
        f["section"]: f for f in doc["figures"] if f["figure"] == "lock wait % of interval time"
    }
    assert all(f["before"] is None and not f["moved"] for f in lock.values())
    text = "\n".join(str(r) for r in compare_renderables(whole, start) if isinstance(r, Text))
    assert "s/proof" not in text  # no verdict line for it


def test_compare_across_captures_pairs_gpus_in_order() -> None:
    doc = compare_dict(
        read_log(SAMPLES / "curio-mixed.log"), read_log(SAMPLES / "journal-2gpu.log")
    )
    assert doc["gpu_pairs"] == [[0, 2], [1, 3]]
    assert any(f["section"] == "GPU0 → GPU2" for f in doc["figures"])


def test_synthesis_during_a_gap_matches_counting_by_hand() -> None:
    model = read_log(SAMPLES / "curio-mixed.log")
    t = model.parts
    s, e = t.synth_start, t.synth_end
    for gap in model.gaps[:10]:
        lo, hi, peak = synthesis_during(model, gap.start, gap.end)
        probes = np.arange(gap.start, gap.end, 1.0)
        counts = [int(np.sum((s <= x) & (e > x))) for x in probes]
        assert (lo, hi) == (min(counts), max(counts))
        assert peak == int(model.synth_counts.max())


def test_worker_states_and_the_cpu_lines_near_a_gap() -> None:
    path = SAMPLES / "p12-c15-gw1.log"
    model = read_log(path)
    reader = LineReader(path=path)
    text = path.read_bytes()
    prep_all = [int(x) for x in re.findall(rb"prep_msm_ms=(\d+)", text)]
    assert model.line_facts is not None
    assert model.line_facts.cpu.medians()[0] == float(np.median(prep_all))
    lines = text.split(b"\n")
    for gap in model.gaps:
        why = gap_why(model, gap, reader)
        # nothing of the GPU covers a gap: no worker is inside an interval at its start
        assert all(s.state in ("idle", "picked up") for s in why.at_start)
        assert why.cpu is not None
        first = model.parts.get(gap.before.index).start_line
        last = model.parts.get(gap.after.index).end_line
        nearby = b"\n".join(lines[first - 1 : last])
        assert list(why.cpu.prep_msm_ms) == [
            int(x) for x in re.findall(rb"prep_msm_ms=(\d+)", nearby)
        ]
        if gap.cause == "dispatch":
            assert why.at_queue == worker_states(model, gap.gpu, float(gap.after_queued or 0))


@pytest.mark.parametrize("sep", [" ", ""])
def test_the_next_pickup_is_written_as_the_durations_beside_it(sep: str) -> None:
    """The deeper why said `next partition picked up 32512ms after the gap began` two lines
    below the cause's `32.51s after the gap began`: one duration, two ways of writing it."""
    lines = [
        "TIMELINE,100,GPU_PICKUP,j,worker=0,partition=0",
        "TIMELINE,110,GPU_START,j,worker=0,partition=0",
        "TIMELINE,900,GPU_END,j,worker=0,partition=0",
        "TIMELINE,33412,GPU_QUEUE,j,partition=1",
        "TIMELINE,33412,GPU_PICKUP,j,worker=0,partition=1",
        "TIMELINE,33420,GPU_START,j,worker=0,partition=1",
        "TIMELINE,34000,GPU_END,j,worker=0,partition=1",
        "TIMELINE,100000,GPU_PICKUP,j,worker=0,partition=2",
        "TIMELINE,99990,GPU_QUEUE,j,partition=2",
        "TIMELINE,100100,GPU_START,j,worker=0,partition=2",
        "TIMELINE,101000,GPU_END,j,worker=0,partition=2",
    ]
    model = build(("\n".join(lines) + "\n").encode())
    said = [
        line
        for gap in model.gaps
        for line in why_lines(gap_why(model, gap), sep=sep)
        if line.startswith("next partition picked up")
    ]
    assert said == [
        f"next partition picked up 32.51{sep}s after the gap began",
        "next partition picked up 1m06s after the gap began",
    ]


def test_a_pickup_whose_start_never_came_is_not_waited_on_once_another_started() -> None:
    """w0 picks up p0, whose GPU_START never comes (a lost line), then picks up and runs p1:
    once p1 started, w0 is not waiting on p0. It was said to be "picked up (j p0)" for the
    rest of the log: 47 of the 50 largest gaps of a 100-hour log said so, and the text
    report and the inspector named a partition picked up hours before."""
    lines = [
        "TIMELINE,100,GPU_PICKUP,j,worker=0,partition=0",
        "TIMELINE,200,GPU_PICKUP,j,worker=0,partition=1",
        "TIMELINE,210,GPU_START,j,worker=0,partition=1",
        "TIMELINE,900,GPU_END,j,worker=0,partition=1",
        "TIMELINE,5000,GPU_PICKUP,j,worker=0,partition=2",
        "TIMELINE,5100,GPU_START,j,worker=0,partition=2",
        "TIMELINE,6000,GPU_END,j,worker=0,partition=2",
    ]
    model = build(("\n".join(lines) + "\n").encode())
    gpu = model.gpus[0].gpu

    def said(at: float) -> tuple[str, int | None]:
        (state,) = worker_states(model, gpu, at)
        return state.state, state.partition

    assert said(150) == ("picked up", 0)  # p0 picked up, nothing started since
    assert said(205) == ("picked up", 1)  # the last picked up
    assert said(2000) == ("idle", None)  # was ("picked up", 0)
    assert said(5050) == ("picked up", 2)
    (gap,) = model.gaps
    assert [s.words() for s in gap_why(model, gap).at_start] == ["w0 idle"]


def test_the_workers_at_an_instant_are_read_in_a_live_models_lane_chunks() -> None:
    """A live model's lanes are chunks (its settled part, then the rest): what each worker
    did at an instant is read in them, not in the lanes put together, and is the segment
    covering the instant (start <= at < end) of the worker's first lane that has one."""
    _, model = live_model(simulate(SimConfig(seed=9, proofs=40, concurrency=3))[1])
    assert any(len(lane.chunks) > 1 for lane in model.lanes)
    t = model.parts
    gpu = model.gpus[0].gpu
    starts = np.concatenate([c.starts for lane in model.lanes for c in lane.chunks])
    instants = sorted({*starts[:: max(1, len(starts) // 40)].tolist(), *model.gaps.start.tolist()})
    got = {at: worker_states(model, gpu, at) for at in instants}
    assert not any(lane._joined for lane in model.lanes), "no lane is put together"
    for at, states in got.items():
        for state in states:
            for lane in model.lanes:
                if lane.gpu != gpu or lane.worker != state.worker:
                    continue
                s, e = lane.starts, lane.ends
                k = np.flatnonzero((s <= at) & (e > at))
                if len(k):
                    i = int(lane.partition[k[0]])
                    assert (state.job, state.partition) == (
                        t.job_of(i),
                        t.partition[i] if t.partition[i] >= 0 else None,
                    )
                    assert state.state not in ("idle", "picked up")
                    break
            else:
                assert state.state in ("idle", "picked up")


def test_cli_compare_report_json(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = str(SAMPLES / "p12-c15-gw1.log"), str(SAMPLES / "journal-2gpu.log")
    assert cli.main(["--compare", a, b, "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["compare"] == {"before": "p12-c15-gw1.log", "after": "journal-2gpu.log"}
    assert cli.main(["--compare", a, b, "--report"]) == 0
    out = capsys.readouterr().out
    assert "What moved beyond noise" in out and "proofs completed" in out
    # a count that grows with the run's length is shown, never judged: its rate (s/proof)
    # is; "proofs completed fell 15 → 8" headed the list of what moved
    done = next(f for f in doc["figures"] if f["figure"] == "proofs completed")
    assert done["before"] != done["after"] and done["noise"] is None
    moved = out[out.index("What moved beyond noise") : out.index("\nrun\n")]
    assert "proofs completed" not in moved and "s/proof" in out
    # each side as --name names it (the lanes said so; the report, the JSON gave the files)
    named = ["--name", "before-box", "--name", "after-box"]
    assert cli.main(["--compare", a, b, *named, "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["compare"] == {"before": "before-box", "after": "after-box"}
    assert cli.main(["--compare", a, a, "--report"]) == 0
    assert "before p12-c15-gw1.log (before)\nafter  p12-c15-gw1.log (after)\n" in (
        capsys.readouterr().out
    )


MARKUP_NAME = "x[red]y:thumbs_up:"  # a file's name that Rich would read as markup and emoji


def test_a_host_named_like_markup_is_printed_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report's GPU table printed host `x[red]y:thumbs_up:.log` as `xy👍.log:GPU0`: its
    cells were read as Rich markup and emoji codes. Every table prints the name as it is."""
    odd, plain = tmp_path / f"{MARKUP_NAME}.log", tmp_path / "b.log"
    odd.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    plain.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    assert cli.main([str(odd), str(plain), "--report"]) == 0
    out = capsys.readouterr().out
    assert "xy" not in out.replace(MARKUP_NAME, "") and "👍" not in out
    label = f"{MARKUP_NAME}.log:GPU0"
    table_rows = [line.split() for line in out.splitlines() if line.rstrip().endswith("%")]
    assert [label, "w0"] in [row[:2] for row in table_rows]  # the all-hosts GPU table
    assert out.count(label) >= 6  # the table and the largest gaps


async def test_the_workers_window_names_a_markup_host_as_it_is() -> None:
    """In the viewer too (Textual's console reads markup): `w` names the GPU as it is."""
    from tui.workers import WorkersScreen

    model = read_log(SAMPLES / "p9-c6.log")
    both = merge([model, model], [f"{MARKUP_NAME}.log", "b.log"]).model
    app = make_app(both, LineReader(data=b""))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("w")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, WorkersScreen)
        console = Console(width=1000, file=io.StringIO(), record=True)
        for name in ("names-head", "table-head", "names", "table"):
            console.print(screen.query_one(f"#workers-{name}", Static).content)
        text = console.export_text()
        assert f"{MARKUP_NAME}.log:GPU0" in text and "👍" not in text


def test_cli_several_logs_report_each_and_all(capsys: pytest.CaptureFixture[str]) -> None:
    pattern = str(SAMPLES / "[cj]*-*.log")  # a glob the shell did not expand
    assert cli.main([pattern, "--report", "--json", "--name", "a", "--name", "b"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert out.count("\n") == 1, "compact for a script, as one log's report"
    assert out == json.dumps(doc, ensure_ascii=True) + "\n"
    assert [h["name"] for h in doc["hosts"]] == ["a", "b"]
    assert doc["alignment"] == WALL
    assert len(doc["all"]["gaps"]) == sum(len(h["gaps"]) for h in doc["hosts"])
    assert cli.main([pattern, "--report", "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "host curio-mixed.log" in out and "all 2 hosts: aligned on the wall clock" in out


def test_a_host_s_largest_gaps_carry_their_numbers_among_every_host_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A host's section numbered its largest gaps 1, 2, 3, while the viewer, gaps.csv and
    the all-hosts section number every host's gaps together (a gap shown #22 in the gap list
    was `1.` in its host's section). The one number everywhere."""
    logs = [str(SAMPLES / "curio-mixed.log"), str(SAMPLES / "journal-2gpu.log")]
    assert cli.main([*logs, "--export-csv", str(tmp_path / "csv")]) == 0
    with (tmp_path / "csv" / "gaps.csv").open(newline="") as fh:
        number = {(r["gpu"], int(r["start"])): int(r["rank"]) for r in csv.DictReader(fh)}
    assert cli.main([*logs, "--report", "--top", "4"]) == 0
    out = capsys.readouterr().out
    sections = re.split(r"^━━ ", out, flags=re.MULTILINE)[1:]
    hosts = [sec for sec in sections if sec.startswith("host ")]
    assert len(hosts) == 2
    merged = merge([read_log(Path(x)) for x in logs], [Path(x).name for x in logs])
    shown_numbers = []
    for sec, host in zip(hosts, merged.hosts, strict=True):
        lines = re.findall(r"^ *(\d+)\. +.+? +at (.+?) \(\S+\) +GPU (\d+)$", sec, re.MULTILINE)
        assert len(lines) == 4, sec
        model = read_log(Path(logs[merged.hosts.index(host)]))
        for (n, _, gpu), i in zip(lines, model.gaps.largest(4), strict=True):
            start = int(model.gaps.start[i]) + host.offset_ms
            assert int(gpu) == int(model.gaps.gpu[i])
            assert int(n) == number[(f"{host.name}:GPU{gpu}", start)]
            shown_numbers.append(int(n))
        # the title says how they are numbered (`20.` read as a list's twentieth line)
        assert "Largest 4 gaps (numbered by size among every host's gaps)" in sec
    assert shown_numbers != [1, 2, 3, 4] * 2  # not each host's own ranks
    assert "Largest 4 gaps of every host" in sections[-1]
    from tui.report import largest_title

    assert largest_title(0, 60_000, said="numbered so") == "No gap (of at least 1m00s)"
    assert largest_title(3, 500, said="numbered so") == (
        "Largest 3 gaps (of at least 500 ms; numbered so)"
    )


@pytest.mark.parametrize("width", [60, 80, None])
def test_a_host_s_banner_fits_a_terminal_and_keeps_its_words(width: int | None) -> None:
    """At 80 columns `━━ host curio-mixed.log: times on its own clock (+2m50.285s on the
    all-hosts clock) ━━` broke inside its phrase, its bar on both lines: a banner too wide
    for the terminal is its head alone, the words on the line under it; piped, one line."""
    from io import StringIO

    from rich.console import Console

    from tui.multi import banner, clock_words

    names = ["journal-2gpu.log", "curio-mixed.log"]
    merged = merge([read_log(SAMPLES / n) for n in names], names)
    for host in merged.hosts:
        words = clock_words(host)
        out = StringIO()
        console = Console(file=out, width=width or 1000)
        for line in banner(f"host {host.name}", words, width):
            console.print(line)
        lines = out.getvalue().splitlines()
        whole = f"━━ host {host.name}: {words} ━━"
        if width is None or len(whole) <= width:
            assert lines == [whole]
        else:
            assert lines[0] == f"━━ host {host.name} ━━"
            assert " ".join(lines[1:]) == words and all(len(x) <= width for x in lines)
    assert any(len(f"━━ host {h.name}: {clock_words(h)} ━━") > 80 for h in merged.hosts)
    # a name (--name) longer than the terminal is cut in its middle, the bar whole
    long = "gpu-host-17.prover.example.com:journal-2gpu.log"
    out = StringIO()
    for line in banner(f"host {long}", "times on its own clock", 40):
        Console(file=out, width=40).print(line)
    first, *rest = out.getvalue().splitlines()
    assert len(first) == 40 and first.startswith("━━ host gpu-") and first.endswith("2gpu.log ━━")
    assert "…" in first and rest == ["times on its own clock"]


def test_a_report_of_several_logs_says_which_clock_each_section_times_by(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One gap was `at 1m22s` in its log's section and `at 20m00s` in the all-hosts one,
    with nothing saying why; and the all-hosts section had no all-GPUs kernel line."""
    logs = [str(SAMPLES / "journal-2gpu.log"), str(SAMPLES / "p12-gw2-merged.log")]
    assert cli.main([*logs, "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert cli.main([*logs, "--report"]) == 0
    out = capsys.readouterr().out
    banners = [line for line in out.splitlines() if line.startswith("━━ ")]
    assert len(banners) == 3
    for banner, host in zip(banners, doc["hosts"], strict=False):
        off = host["offset_ms"]
        said = f"({'-' if off < 0 else '+'}{offset(abs(off))} on the all-hosts clock)"
        assert banner.startswith(f"━━ host {host['name']}: times on its own clock"), banner
        assert said in banner, banner
    assert any(h["offset_ms"] for h in doc["hosts"])  # the clocks do differ here
    assert banners[2].endswith("times on the all-hosts clock ━━")
    all_section = out[out.index(banners[2]) :]
    util = doc["all"]["summary"]["all_gpus_kernel_util"]
    n = len(doc["all"]["gpus"])
    assert f"all {n} GPUs: kernel {100 * util:.1f} % of their spans added up" in all_section


def test_a_log_whose_daemon_restarted_is_one_host_a_run_beside_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, first = simulate(SimConfig(seed=71, proofs=3, gpus=2, gw=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=72, proofs=2, gpus=2, gw=2, stdout="plain"))
    log = tmp_path / "restarted.log"
    log.write_bytes(first + second)
    assert cli.main([str(log), "--export-csv", str(tmp_path)]) == 0
    with open(tmp_path / "intervals.csv", newline="") as f:
        gpus = {row["gpu"] for row in csv.DictReader(f)}
    assert len(gpus) == 4, "both runs' two GPUs"
    capsys.readouterr()
    other = SAMPLES / "tiny.log"
    assert cli.main([str(log), str(other), "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [h["name"] for h in doc["hosts"]] == [
        "restarted.log run 1",
        "restarted.log run 2",
        "tiny.log",
    ]
    # each run as its own log would be, the other log as alone
    alone = read_log(log)
    for k, host in enumerate(doc["hosts"][:2]):
        assert alone.gpu_keys is not None
        runs = [alone.gpu_keys[g].host for g in alone.gaps.gpu.tolist()]
        run_gaps = alone.gaps.take(np.flatnonzero(np.array(runs) == k))
        assert len(host["gaps"]) == len(run_gaps)
        assert [g["duration_ms"] for g in host["gaps"]] == run_gaps.duration.tolist()
        assert {g["gpu"] for g in host["gaps"]} <= {0, 1}  # each run's own ordinals
    assert len(doc["hosts"][2]["gaps"]) == len(read_log(other).gaps)
    assert len(doc["all"]["gaps"]) == sum(len(h["gaps"]) for h in doc["hosts"])
    # a run that did no work (the daemon started as the capture ended) is left out, and said
    idle = tmp_path / "idle.log"
    lines = first.split(b"\n")
    start = lines[: next(k for k, line in enumerate(lines) if line.startswith(b"TIMELINE"))]
    assert any(b"starting cuzk engine" in line for line in start)
    idle.write_bytes(first + b"\n".join(start) + b"\n")
    assert cli.main([str(idle), str(other), "--report", "--json"]) == 0
    captured = capsys.readouterr()
    assert [h["name"] for h in json.loads(captured.out)["hosts"]] == ["idle.log run 1", "tiny.log"]
    assert captured.err == "cuzk-tui: idle.log run 2: no TIMELINE lines, left out\n"
    # two runs are compared: a log of two is refused, in one line
    assert cli.main(["--compare", str(log), str(other)]) == 2
    err = capsys.readouterr().err
    assert "restarted.log: the daemon restarted in this log" in err
    assert err.count("\n") == 1, "one line, no traceback"
    assert "pick one with LOG:N (1 to 2)" in err
    # LOG:N picks a run: the restarted log's two runs compared with each other
    assert cli.main(["--compare", f"{log}:1", f"{log}:2", "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    restarted = read_runs(log)
    assert doc["compare"] == {"before": "restarted.log run 1", "after": "restarted.log run 2"}
    done = next(f for f in doc["figures"] if f["figure"] == "proofs completed")
    assert (done["before"], done["after"]) == tuple(r.summary.proofs_completed for r in restarted)
    # a run the log does not hold: one line, exit 2
    assert cli.main(["--compare", f"{log}:3", str(other), "--report"]) == 2
    err = capsys.readouterr().err
    assert err == f"cuzk-tui: error: {log}:3: the log holds 2 runs (1 to 2)\n"
    # a run number below 1 said `no such file: LOG:0`
    for run in ("0", "-1", "00"):
        assert cli.main(["--compare", f"{log}:{run}", str(other), "--report"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"cuzk-tui: error: {log}:{run}: runs are numbered from 1"), err
    assert cli.main(["--compare", f"{log}:{10**12}", str(other), "--report"]) == 2
    assert "the log holds 2 runs (1 to 2)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a.log", "b.log", "--name", "x"], "--name given 1 time for 2 logs"),
        (["--compare", "a.log"], "expected 2 arguments"),
        (["x.log", "--compare", "a", "b"], "not both"),
        (["/no/*.log"], "no file matches /no/*.log"),
        (["x.log", "--export-trace", "/no/such/dir/t.json"], "--export-trace: no such folder"),
        (["-", "x.log"], "standard input"),
    ],
)
def test_bad_options_of_several_logs_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_log_n_picks_a_run_wherever_a_log_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`LOG:N` was read as a file's name (`no such file: restarted.log:2`) everywhere but in
    --compare: the report, the JSON, the exports and the hosts take it too."""
    _, first = simulate(SimConfig(seed=71, proofs=3, gpus=2, gw=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=72, proofs=2, gpus=1, gw=2, stdout="plain"))
    log = tmp_path / "restarted.log"
    log.write_bytes(first + second)
    runs = read_runs(log)
    assert cli.main([f"{log}:2", "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "restarted.log run 2"
    assert doc["runs"] == [first.count(b"\n") + 1]  # the line the run begins at, not 1
    assert [g["gpu"] for g in doc["gpus"]] == [g.gpu for g in runs[1].gpus] == [0]
    assert doc["summary"]["proofs_completed"] == runs[1].summary.proofs_completed
    assert len(doc["gaps"]) == len(runs[1].gaps)
    assert cli.main([f"{log}:1", "--report"]) == 0
    assert capsys.readouterr().out.startswith("cuzk-tui report: restarted.log run 1\n")
    # an export of one run: its intervals alone
    out = tmp_path / "csv"
    assert cli.main([f"{log}:1", "--export-csv", str(out)]) == 0
    with open(out / "intervals.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == len(runs[0].parts)
    capsys.readouterr()
    # one file's runs beside another file of its name: each named by its folder, as ever
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.log").write_bytes(first + second)
    xs = [str(tmp_path / "a" / "x.log:1"), str(tmp_path / "a" / "x.log:2")]
    assert cli.main([*xs, str(tmp_path / "b" / "x.log:1"), "--report", "--json"]) == 0
    names = [h["name"] for h in json.loads(capsys.readouterr().out)["hosts"]]
    assert names == ["a/x.log run 1", "a/x.log run 2", "b/x.log run 1"]
    # a quoted pattern with :N: run N of each file it names ("no file matches" before)
    assert cli.main([str(tmp_path / "*" / "x.log:2"), "--report", "--json"]) == 0
    names = [h["name"] for h in json.loads(capsys.readouterr().out)["hosts"]]
    assert names == ["a/x.log run 2", "b/x.log run 2"]
    assert cli.main([str(tmp_path / "*" / "x.log:0"), "--report"]) == 2
    assert "runs are numbered from 1" in capsys.readouterr().err
    # two runs of one log are two hosts; the log whole beside a run of it holds that run twice
    assert cli.main([f"{log}:1", f"{log}:2", "--report", "--json"]) == 0
    names = [h["name"] for h in json.loads(capsys.readouterr().out)["hosts"]]
    assert names == ["restarted.log run 1", "restarted.log run 2"]
    for args, said in (
        ([str(log), f"{log}:2"], f"{log}:2 is a run of {log}, given whole too"),
        ([f"{log}:2", str(log)], f"{log} is given whole and as {log}:2"),
        ([f"{log}:2", f"{log}:2"], f"{log}:2 is given twice"),
        ([f"{log}:3"], f"{log}:3: the log holds 2 runs (1 to 2)"),
    ):
        assert cli.main([*args, "--report"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"cuzk-tui: error: {said}"), err
        assert err.count("\n") == 1
    assert cli.main([f"{SAMPLES / 'tiny.log'}:2", "--report"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("tiny.log:2: the daemon did not restart in this log (one run)\n"), err
    # following the log as it grows is not reading one run whole
    assert cli.main([f"{log}:2", "--serve-metrics", "127.0.0.1:0"]) == 2
    assert "LOG:N picks a run to read whole" in capsys.readouterr().err
    # a file whose own name ends in `:2` is that file (README), not run 2 of another
    (tmp_path / "restarted.log:2").write_bytes(first)
    assert cli.main([f"{log}:2", "--report", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "restarted.log:2"


def test_cli_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = str(SAMPLES / "curio-mixed.log")
    out = tmp_path / "t.json"
    assert cli.main([log, "--export-trace", str(out), "--export-csv", str(tmp_path / "csv")]) == 0
    validate_trace(json.loads(out.read_text()))
    assert sorted(p.name for p in (tmp_path / "csv").iterdir()) == [
        "busy_split.csv",
        "gaps.csv",
        "intervals.csv",
        "phases.csv",
        "proofs.csv",
    ]
    assert "trace events" in capsys.readouterr().err


def _hosts() -> tuple[Any, HostLines]:
    paths = [SAMPLES / "curio-mixed.log", SAMPLES / "journal-2gpu.log"]
    m = merge([read_log(p) for p in paths], ["a", "b"])
    return m, HostLines(m, [LineReader(path=p) for p in paths])


async def test_several_hosts_in_the_viewer_step_gaps_across_hosts() -> None:
    m, reader = _hosts()
    app = make_app(m.model, reader)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(GanttView)
        titles = [r for r in view.rows if r.kind == "title"]
        assert len(titles) == 2
        hosts_seen, starts = [], []
        for _ in range(len(m.model.gaps)):
            await pilot.press("n")
            gap = view.selected_gap
            assert gap is not None
            assert m.model.gpu_keys is not None
            hosts_seen.append(m.model.gpu_keys[gap.gpu].host)
            starts.append(gap.start)
        # one walk in time order visits both hosts, interleaved where they overlap
        assert starts == sorted(starts) and len(set(starts)) > 1
        changes = sum(1 for x, y in itertools.pairwise(hosts_seen) if x != y)
        assert set(hosts_seen) == {0, 1} and changes > 2
        await pilot.press("enter")
        assert isinstance(app.screen, InspectorScreen)
        text = str(app.screen.query_one("#gap-facts", Static).content)
        assert "why, deeper" in text and ("a:GPU" in text or "b:GPU" in text)


async def test_several_hosts_at_80x24_each_gap_stepped_to_is_in_view() -> None:
    """Two logs' lanes do not fit 80x24: `n` onto a gap of a GPU scrolled out of view scrolls
    its rows in (its busy row, where the gap is drawn, and its workers' rows below it), and
    `N` back up."""
    m, reader = _hosts()
    app = make_app(m.model, reader)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(GanttView)
        assert view.virtual_size.height > view.size.height  # the lanes do not fit
        scrolled = set()
        top = int(view.scroll_offset.y)
        for key in ["n"] * len(m.model.gaps) + ["N"] * 8:
            await pilot.press(key)
            await pilot.pause()
            gap = view.selected_gap
            assert gap is not None
            own = [
                k
                for k, r in enumerate(view.rows)
                if r.gpu == gap.gpu and r.kind in ("busy", "kernel", "worker")
            ]
            busy, seen = own[0], view.size.height - AXIS_ROWS
            was, top = top, int(view.scroll_offset.y)
            # its busy row and as many of its workers' rows as fit are on screen
            assert top <= busy and min(own[-1], busy + seen - 1) < top + seen, (key, gap.gpu, top)
            if top < was and view.rows[busy - 1].kind == "title":
                assert top == busy - 1  # scrolled up: the title naming its log shows too
            scrolled.add(top)
        assert len(scrolled) > 1  # both ways


async def test_y_copies_the_gap_job_and_no_clipboard_only_shows_it() -> None:
    path = SAMPLES / "p9-c6.log"
    model = read_log(path)
    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "y")
        gap = app.query_one(GanttView).selected_gap
        assert gap is not None and app.clipboard == gap.after.job
    quiet = make_app(model, LineReader(path=path), use_clipboard=False)
    async with quiet.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "y")
        assert quiet.clipboard == ""


async def test_y_copies_the_job_found_over_a_gap_selected_before() -> None:
    """A gap selected (`n`), then a job found with `/`: `y` copied the gap's job, where the
    README says the job found comes first. In the gap's inspector, the gap's."""
    path = SAMPLES / "p9-c6.log"
    model = read_log(path)
    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("n")
        gap = app.query_one(GanttView).selected_gap
        assert gap is not None
        other = next(p.job for p in model.proofs if p.job != gap.after.job)
        await pilot.press("slash", *other, "enter")
        await pilot.pause()
        while app.screen is not app.screen_stack[0]:
            await pilot.press("escape")
        view = app.query_one(GanttView)
        assert view.found_jobs and view.selected_gap is not None
        await pilot.press("y")
        assert app.clipboard == other
        await pilot.press("enter")  # the selected gap's inspector
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        await pilot.press("y")
        assert app.clipboard == gap.after.job


async def test_y_in_the_find_window_copies_the_job_it_shows() -> None:
    """`y` did nothing in the find window, where the README says it copies the found job's
    id; after `n` to the next match, that match's."""
    path = SAMPLES / "curio-mixed.log"
    app = make_app(read_log(path), LineReader(path=path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("slash", *"wdpost", "enter")  # two window-PoSt jobs
        await pilot.pause()
        from tui.find import ProofScreen

        screen = app.screen
        assert isinstance(screen, ProofScreen) and len(screen.jobs) > 1
        await pilot.press("y")
        assert app.clipboard == screen.jobs[screen.index].job
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("y")
        assert app.clipboard == screen.jobs[screen.index].job
        assert screen.index == 1


async def test_y_copies_at_most_a_kibibyte_of_a_huge_id(tmp_path: Path) -> None:
    log = tmp_path / "long-id.log"
    log.write_bytes(
        b"pipeline GPU worker started worker_id=0 gpu=0\n"
        + job_line_set("before", 10)
        + job_line_set("J" * 500_000, 2000)
    )
    app = make_app(read_log(log), LineReader(path=log))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "y")
        assert app.clipboard == "J" * 1024
        # the note says it cut, not 1,024 J's filling half the screen
        note = list(app._notifications)[-1].message.split("\n")[0]
        assert len(note) < ID_CELLS + 30 and note.endswith("(1024 characters)"), note


def test_a_window_shows_a_huge_id_cut_in_the_middle_and_says_its_length() -> None:
    """A 600-character id filled the proof view with ~40 lines of it before its table, and
    the inspector with ~50: shown whole up to ID_CELLS cells, cut beyond, its length said."""
    from tui.find import describe_proof
    from tui.inspector import describe_gap
    from tui.interval import describe_interval

    job = "L" * 300 + "middle" + "R" * 294
    model = build(
        b"pipeline GPU worker started worker_id=0 gpu=0\n"
        + job_line_set(job, 1000)
        + job_line_set(job, 3000, partition=1)
    )
    assert len(model.gaps) == 1  # the gap inspector names it on both sides
    console = Console(width=80, file=io.StringIO(), record=True)
    console.print(describe_proof(model, FoundJob(job)))
    proof = console.export_text()
    inspector = describe_interval(model, 0).plain
    gap = Console(width=80, file=io.StringIO(), record=True)
    gap.print(describe_gap(model, model.gaps[0]))
    for text, times in ((proof, 1), (inspector, 1), (gap.export_text(), 2)):
        lines = [x for x in text.splitlines() if "L" * 10 in x]  # a line each, not 40
        assert len(lines) == times and "middle" not in text
        assert text.count("(600 characters)") == times
        ids = [word for line in lines for word in line.split() if "L" * 10 in word]
        # cut in the middle, short enough to stay whole on an 80-column window's line
        assert all("…" in w and len(w.strip("\u2063")) == ID_CELLS for w in ids), lines
    short = build(job_line_set("porep-1000-77", 1000))
    assert "porep-1000-77" in describe_interval(short, 0).plain  # a real id: whole


async def test_c_shows_the_comparison_and_the_palette_exports_the_view(tmp_path: Path) -> None:
    a, b = read_log(SAMPLES / "p12-c15-gw1.log"), read_log(SAMPLES / "tiny.log")
    m = merge([a, b], ["before", "after"], START)
    app = make_app(m.model, LineReader(data=b""), screenshot_dir=tmp_path, compared=(a, b))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("escape")
        await pilot.press("plus", "plus")
        export_visible(app)
        files = list(tmp_path.glob("cuzk-trace-*.json"))
        assert len(files) == 1
        doc = json.loads(files[0].read_text())
        validate_trace(doc)
        view = app.query_one(GanttView)
        t1 = view.t0 + view.timeline_width * view.scale
        assert all(
            e["ts"] >= _us(max(view.t0, 0)) - 1 and e["ts"] + e["dur"] <= _us(t1) + 1
            for e in doc["traceEvents"]
            if e["ph"] == "X"
        )


async def test_the_comparison_opens_over_no_other_window(tmp_path: Path) -> None:
    """`c` asked for while another window is open (a request on its way behind `enter`):
    the comparison was stacked on the inspector. It opens over the Gantt alone."""
    a, b = read_log(SAMPLES / "p12-c15-gw1.log"), read_log(SAMPLES / "tiny.log")
    m = merge([a, b], ["before", "after"], START)
    app = make_app(m.model, LineReader(data=b""), screenshot_dir=tmp_path, compared=(a, b))
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(GanttView.InspectGap(app.model.gaps[0]))
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        app.action_compare()
        await pilot.pause()
        assert len(app.screen_stack) == 2 and isinstance(app.screen, InspectorScreen)


def test_the_model_of_one_log_is_unchanged(tmp_path: Path) -> None:
    m: LogModel = read_log(SAMPLES / "tiny.log")
    assert m.gpu_keys is None and m.gpu_label(0) == "GPU0"


def test_a_job_two_logs_prove_is_a_proof_of_each_with_its_own_gaps() -> None:
    """Two logs name the same job (each under its own number in the merged model). The find
    gave one proof of both logs' partitions and gaps; it is one proof in each log, as the
    reports and the proofs lane have it."""
    from rich.console import Console

    from tui.find import describe_proof, find_jobs, proof_gaps

    def log() -> bytes:
        out = ""
        for k, t in enumerate((1000, 5000)):
            out += (
                f"TIMELINE,{t},SYNTH_START,porep-1000-7,partition={k}\n"
                f"TIMELINE,{t + 20},GPU_START,porep-1000-7,worker=0,partition={k}\n"
                f"TIMELINE,{t + 90},GPU_END,porep-1000-7,worker=0,partition={k}\n"
            )
        return out.encode()

    models = []
    for name in ("host-a", "host-b"):
        b = LogBuilder(source=name)
        b.feed(log())
        models.append(b.build())
    model = merge(models, ["host-a", "host-b"]).model
    assert len(model.gaps) == 2
    # the job id both logs prove is a proof of each: each its own log's, with its own gap on
    # its own log's GPU, named as the other screens name it (not `GPU 1000`)
    found = find_jobs(model, "porep-1000-7")
    assert found == (FoundJob("porep-1000-7", 0), FoundJob("porep-1000-7", 1))
    for host, f in zip(("host-a", "host-b"), found, strict=True):
        console = Console(width=120, record=True)
        console.print(describe_proof(model, f))
        text = " ".join(console.export_text().split())
        assert f"on {host}" in text and "1000 " not in text
        assert len(proof_gaps(model, f)) == 1


def test_a_gpu_ordinal_of_a_thousand_is_not_the_next_hosts_gpu_0() -> None:
    """Merged GPU ids once were host * 1000 + ordinal: ordinal 1000 of the first log was GPU 0
    of the second. The model says where each GPU is from, whatever the ordinals."""

    def log(gpu: int) -> bytes:
        return (
            "2026-03-16T09:08:44.409318Z  INFO cuzk_core::engine: starting cuzk engine\n"
            f"2026-03-16T09:08:44.409718Z  INFO cuzk_core::engine: pipeline GPU worker started "
            f"worker_id=0 gpu={gpu} sub_id=0\n"
            "TIMELINE,10,GPU_START,j,worker=0,partition=0\n"
            "TIMELINE,20,GPU_END,j,worker=0,partition=0\n"
            "TIMELINE,50,GPU_START,j,worker=0,partition=1\n"
            "TIMELINE,70,GPU_END,j,worker=0,partition=1\n"
        ).encode()

    models = []
    for gpu in (1000, 0):
        b = LogBuilder(source=f"gpu{gpu}.log")
        b.feed(log(gpu))
        models.append(b.build())
    assert [g.gpu for g in models[0].gpus] == [1000]
    merged = merge(models, ["a", "b"]).model
    labels = sorted(merged.gpu_label(g.gpu) for g in merged.gpus)
    assert labels == ["a:GPU1000", "b:GPU0"]
    assert len({g.gpu for g in merged.gpus}) == 2
    assert merged.gpu_keys is not None
    assert {(k.host, k.ordinal) for k in merged.gpu_keys.values()} == {(0, 1000), (1, 0)}


def test_each_log_has_its_own_synthesis_and_proofs_rows() -> None:
    """Several logs (or --compare): each log's synthesis steps and proofs under its own GPUs,
    not one synthesis row adding the logs together."""

    a, b = read_log(SAMPLES / "p9-c6.log"), read_log(SAMPLES / "curio-mixed.log")
    merged = merge([a, b], ["a", "b"]).model
    drawing = LaneDrawing(merged)
    assert merged.gpu_keys is not None and merged.proof_hosts is not None
    synth = [r for r in drawing.rows if r.kind == "synth"]
    assert [r.log for r in synth] == [0, 1]
    labels = [r.kind for r in drawing.rows]
    # each log's rows: its title, its GPUs' rows, then its synthesis and proofs rows
    assert labels.index("synth") < labels.index("title", 1)
    for r in drawing.rows:
        if r.kind == "proofs":
            members = drawing.proof_rows[r.lane].tolist()
            assert {int(merged.proof_hosts[m]) for m in members} == {r.log}
    shown = sorted(m for row in drawing.proof_rows for m in row.tolist())
    assert shown == list(range(len(merged.proofs)))  # every proof once
    # a log's synthesis row counts its own partitions in synthesis
    peak_b = int(b.synth_counts.max())
    assert int(merged.synth_steps(synth[1].log)[1].max()) == peak_b


def test_a_log_whose_gpus_printed_nothing_is_drawn_with_its_synthesis_and_proofs() -> None:
    """A host still synthesizing (no GPU line yet) beside one that proved: the report and
    the trace listed its proof, but the viewer laid out only logs with GPUs, so its title,
    synthesis and proof were drawn nowhere."""
    whole = (SAMPLES / "p9-c6.log").read_bytes().splitlines(keepends=True)
    cut = next(k for k, line in enumerate(whole) if b",GPU_" in line)
    a, b = read_log(SAMPLES / "tiny.log"), build(b"".join(whole[:cut]))
    assert not b.gpus and len(b.proofs) and int(b.synth_counts.max()) > 0
    merged = merge([a, b], ["a.log", "b.log"]).model
    assert merged.logs() == ((0, "a.log"), (1, "b.log"))
    drawing = LaneDrawing(merged)
    kinds = [(r.kind, r.log) for r in drawing.rows]
    b_rows = kinds[kinds.index(("title", 1)) :]
    assert [k for k, _ in b_rows] == ["title", "synth"] + ["proofs"] * (len(b_rows) - 2)
    assert {log for _, log in b_rows} == {1} and len(b_rows) > 2
    shown = sorted(m for row in drawing.proof_rows for m in row.tolist())
    assert shown == list(range(len(merged.proofs)))  # every proof once, b's too
    lo, hi = merged.time_range
    w = Window(lo, (hi - lo) / 60, 60, 0, None)
    title = next(r for r in drawing.rows if r.kind == "title" and r.log == 1)
    assert "".join(drawing.row_cells(title, w)[0]).startswith("── b.log ──")
    synth = next(r for r in drawing.rows if r.kind == "synth" and r.log == 1)
    assert "".join(drawing.row_cells(synth, w)[0]).strip()  # b's synthesis is drawn
    assert int(merged.synth_steps(1)[1].max()) == int(b.synth_counts.max())
    proof = next(r for r in drawing.rows if r.kind == "proofs" and r.log == 1)
    assert "".join(drawing.row_cells(proof, w)[0]).strip()


def test_a_trace_of_several_hosts_has_each_one_s_synthesis_and_proofs() -> None:
    """The viewer draws each host's synthesis and proofs apart; the trace had one synthesis
    process (every host's partitions in synthesis added up) and one proofs process."""
    logs = [read_log(SAMPLES / n) for n in ("p9-c6.log", "curio-mixed.log")]
    merged = merge(logs, ["a", "b"]).model
    events = trace_document(merged)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    pid = {name: p for p, name in names.items()}
    assert {"a synthesis", "a proofs", "b synthesis", "b proofs"} <= set(pid)
    assert "synthesis" not in pid and "proofs" not in pid
    for name, model in zip("ab", logs, strict=True):
        proofs = [
            e for e in events if e.get("cat") == "proof" and e["pid"] == pid[f"{name} proofs"]
        ]
        assert sorted(e["args"]["job"] for e in proofs) == sorted(p.job for p in model.proofs)
        peak = max(
            e["args"]["partitions"]
            for e in events
            if e.get("ph") == "C" and e["pid"] == pid[f"{name} synthesis"]
        )
        assert peak == int(model.synth_counts.max())  # its own, not the hosts' added up


def test_a_log_without_timeline_lines_among_hosts_keeps_its_jobs_and_their_failures(
    tmp_path: Path,
) -> None:
    """A real daemon's log whose jobs all failed (tracing lines, no TIMELINE), beside a
    TIMELINE log and an empty one: its own section said 6 failed, the all-hosts figures 6
    running; the viewer drew neither it nor the empty log; the trace had no process for it
    and proofs.csv named it `log 1`, not its name. The trace then had a synthesis process
    for each, and a proofs process for the empty log, with nothing in them."""
    failing = read_log(SAMPLES / "real" / "pipeline-failed-merged.log")
    tiny, empty = read_log(SAMPLES / "tiny.log"), build(b"")
    assert int(failed_proofs(failing).sum()) == len(failing.proofs) > 0
    merged = merge([failing, tiny, empty], ["hostR", "tiny", "nothing"]).model
    assert merged.proof_hosts is not None
    failed = failed_proofs(merged)
    for k, own in enumerate((failing, tiny, empty)):
        mine = merged.proof_hosts == k
        assert int(failed[mine].sum()) == int(failed_proofs(own).sum())
    from parsers.report import report_dict

    assert report_dict(merged)["summary"]["proofs_failed"] == len(failing.proofs)
    assert merged.logs() == ((0, "hostR"), (1, "tiny"), (2, "nothing"))
    # the viewer: a group for each log, the failed jobs drawn, none with a synthesis row
    drawing = LaneDrawing(merged)
    rows = [(r.kind, r.log) for r in drawing.rows]
    assert rows[: rows.index(("title", 1))] == [("title", 0)] + [("proofs", 0)] * (
        rows.index(("title", 1)) - 1
    )
    assert rows[-1] == ("title", 2)  # the empty log: its title alone
    shown = sorted(m for row in drawing.proof_rows for m in row.tolist())
    assert shown == list(range(len(merged.proofs)))
    # the trace and proofs.csv name it as the screen does
    events = trace_document(merged)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    proofs = [e for e in events if e.get("cat") == "proof" and names[e["pid"]] == "hostR proofs"]
    assert sorted(e["args"]["job"] for e in proofs) == sorted(p.job for p in failing.proofs)
    want = {"tiny:GPU0", "tiny synthesis", "tiny proofs", "hostR proofs"}
    assert set(names.values()) == want  # no process with nothing in it
    assert {e["pid"] for e in events} == set(names)
    from perfetto_decode import decode, fields, one

    from parsers.export import write_trace

    write_trace(merged, tmp_path / "t.perfetto-trace")
    tracks = decode((tmp_path / "t.perfetto-trace").read_bytes()).tracks.values()
    procs = {one(fields(one(t, 3)), 6).decode() for t in tracks if 3 in t}
    assert procs == want
    # the find window names the log of a job with no partition (its tracing lines')
    from tui.find import describe_proof

    k = int(np.flatnonzero(merged.proof_hosts == 0)[0])
    console = Console(record=True, width=120)
    console.print(describe_proof(merged, found_job(merged, k)))
    assert "failed  on hostR" in console.export_text()


def test_a_running_proof_of_a_log_that_ended_early_is_drawn_to_its_own_end() -> None:
    """Of several logs, a proof under way when its log ends was drawn to where the longest
    log ends (minutes past its own last line)."""
    whole = (SAMPLES / "p9-c6.log").read_bytes().splitlines(keepends=True)
    cut = next(k for k, line in enumerate(whole) if b",GPU_" in line)
    short = build(b"".join(whole[:cut]))
    merged = merge([read_log(SAMPLES / "p12-c15-gw1.log"), short], ["long", "short"]).model
    assert merged.log_ends is not None and merged.proof_hosts is not None
    mine = np.flatnonzero(merged.proof_hosts == 1)
    spans = ProofTable.of(merged.proofs)
    ends = proof_ends(merged, spans.last, spans.completed, spans.seen)
    assert len(mine) and not spans.completed[mine].any()
    assert (ends[mine] == merged.log_ends[1]).all() and merged.log_ends[1] < merged.now_ms


def _anchored(data: bytes, day: str) -> bytes:
    """`data` with its engine's start moved to `day` (its wall clock)."""
    return re.sub(rb"^\d{4}-\d\d-\d\d", day.encode(), data, flags=re.M)


def test_logs_far_apart_on_the_wall_clock_have_the_time_between_them_left_out() -> None:
    """Two logs 200 days apart, each a few minutes long: on one wall-clock axis each was a
    sliver at either end of it. The stretch between them is cut down to a minute; logs a
    few minutes apart stay as the wall clock has them."""
    data = (SAMPLES / "tiny.log").read_bytes()
    a = build(_anchored(data, "2026-01-01"))
    b = build(_anchored(data, "2026-07-20"))
    assert a.wall_anchor is not None and b.wall_anchor is not None
    placed = merge([b, a], ["b", "a"])
    assert placed.alignment == CUT and "between logs cut" in placed.note
    off_b, off_a = (h.offset_ms for h in placed.hosts)
    assert off_a == 0  # the earlier log first
    assert off_b == round(a.time_range[1] + 60_000 - b.time_range[0])
    assert placed.model.wall_anchor is None and placed.wall_clock_why() is not None
    # five minutes on: the minute-long logs are 4 minutes apart, as the wall clock has them
    near = build(_anchored(data, "2026-01-01").replace(b"T09:0", b"T09:1"))
    assert merge([a, near], ["a", "near"]).alignment == WALL
    # the runs of one log stay on the wall clock however far apart (a followed log's would
    # move as its last run grows)
    restarted = build(_anchored(data, "2026-01-01") + _anchored(data, "2026-07-20"))
    assert restarted.restarted and restarted.wall_anchor is not None


def test_the_header_names_as_many_logs_as_fit_whole() -> None:
    """Five logs at 120 columns: `tiny.log + synth.log + e…un 1 + restart.log run 2` cut a
    name in the middle into another; the header gives whole names and how many more."""
    from tui.header import source_in

    tiny = read_log(SAMPLES / "tiny.log")
    names = ["tiny.log", "synth.log", "empty.log", "real.log", "restart.log run 1"]
    merged = merge([tiny] * 5, names).model
    assert source_in(merged, 200) == " + ".join(names)
    assert source_in(merged, 45) == "tiny.log + synth.log + empty.log + 2 more"
    assert source_in(merged, 20) == "tiny.log + 4 more"
    assert source_in(merged, 8) == "5 logs"
    one = merge([tiny], ["a-very-long-name-of-one-log.log"]).model
    assert source_in(one, 12) == "a-very…e-log"  # one name: its `.log`, then the middle


async def test_the_gap_list_of_several_logs_keeps_both_sides_at_80_columns() -> None:
    """Runs of a restarted log among hosts at 80 columns: the GPU column took the width of
    `curio-mixed.log run 2:GPU1`, and the `after` column fell off the screen."""
    from textual.strip import Strip

    from tui.gaprows import GapRows

    data = (SAMPLES / "tiny.log").read_bytes() + (SAMPLES / "curio-mixed.log").read_bytes()
    builder = LogBuilder(source="curio-mixed.log")
    builder.feed(data)
    runs = builder.build_runs()
    names = [f"curio-mixed.log run {k + 1}" for k in range(len(runs))]
    merged = merge([read_log(SAMPLES / "tiny.log"), *runs], ["tiny.log", *names]).model
    app = make_app(merged, LineReader())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        rows = app.screen.query_one(GapRows)
        lines: list[Strip] = [rows.render_line(y) for y in range(4)]
        text = ["".join(seg.text for seg in line) for line in lines]
        assert "after" in text[0] and text[0].rstrip().endswith("after")
        for line in text[1:]:
            gpu = re.search(r"(\S+ )?\S+:GPU\d", line)
            assert gpu is not None and "…" in gpu.group()  # a name cut in the middle
            assert len(re.findall(r" w\d p\d", line)) == 2  # both sides: job, worker, part


@pytest.mark.parametrize(
    "names",
    [
        ["prover-east-01.log", "prover-east-02.log", "a.log"],
        ["prover-east-01.log", "prover-west-01.log"],
    ],
)
async def test_hosts_named_alike_but_one_stay_told_apart_in_the_gap_list(names: list[str]) -> None:
    """`prover-east-01.log`, `prover-east-02.log` and `a.log` at 80 columns: every name
    shares no start, so the gap list cut both provers' names in the middle to `pr…g:GPU0`.
    The end every name shares (`.log`) is left out first: `pr…1`, `pr…2`. Of
    `prover-east-01.log` and `prover-west-01.log`, which differ only in the middle, both
    GPUs read `…-01:GPU0`: the middle is shown (`…ea…`, `…we…`)."""
    from textual.strip import Strip

    from tui.gaprows import GapRows

    samples = ("journal-2gpu.log", "tiny.log", "p9-c6.log")[: len(names)]
    logs = [read_log(SAMPLES / name) for name in samples]
    merged = merge(logs, names).model
    app = make_app(merged, LineReader())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        rows = app.screen.query_one(GapRows)
        hosts: dict[str, set[str]] = {}
        for row in range(rows.row_count):
            gap = merged.gaps[rows.gap_at(row)]
            line: Strip = rows.render_line(row + 1 - int(rows.scroll_offset.y))
            if not 0 <= row + 1 - int(rows.scroll_offset.y) < rows.size.height:
                continue
            label = re.search(r"\S+:GPU\d", "".join(seg.text for seg in line))
            assert label is not None
            host = merged.gpu_label(gap.gpu).rpartition(":")[0]
            hosts.setdefault(host, set()).add(label.group().rpartition(":")[0])
        assert set(hosts) == set(names)  # every host's gaps among those shown
        shown = [next(iter(cut)) for cut in hosts.values()]
        assert all(len(cut) == 1 for cut in hosts.values()) and len(set(shown)) == len(names)


async def test_the_axis_names_the_log_whose_lanes_begin_the_view() -> None:
    """Several logs at 80x18, scrolled past a log's title row: its lanes read `gpu0 busy`,
    `w0`, nobody's. The tick line's gutter names the log whose lanes begin the view (blank
    while a title row is on top)."""
    from tui.gantt import AXIS_ROWS, GanttView
    from tui.lanes import host_in, hosts_of

    logs = [read_log(SAMPLES / name) for name in ("journal-2gpu.log", "tiny.log", "p9-c6.log")]
    names = ["prover-east-01.log", "prover-east-02.log", "a.log"]
    merged = merge(logs, names).model
    app = make_app(merged, LineReader())
    async with app.run_test(size=(80, 18)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)

        def gutter() -> str:
            line = view.render_line(AXIS_ROWS - 1)
            return "".join(seg.text for seg in line)[:10].strip()

        assert gutter() == ""  # the first title on top
        checked: list[str] = []
        for log, name in enumerate(names):
            title = next(k for k, r in enumerate(view.rows) if (r.kind, r.log) == ("title", log))
            for top, said in ((title, ""), (title + 1, host_in(name, 9, hosts_of(merged)))):
                view.scroll_to(y=top, animate=False)
                await pilot.pause()
                if int(view.scroll_offset.y) == top:  # the last log's lanes end the rows
                    assert gutter() == said, (log, top, gutter())
                    checked.append(said)
        assert len(checked) >= 4 and len({said for said in checked if said}) >= 2, checked
        hosts = hosts_of(merged)
        assert [host_in(name, 9, hosts) for name in names] == ["pr…ast-01", "pr…ast-02", "a.log"]


async def test_a_wide_log_name_keeps_the_gantt_s_rows_as_wide_as_the_view() -> None:
    """Logs named `東京-01.log`, `東京-02.log`: the axis's gutter and the title rows were
    cut and padded by characters, two cells wider than the view (the ticks out of line)."""
    from rich.cells import cell_len

    from tui.gantt import GanttView

    logs = [read_log(SAMPLES / name) for name in ("tiny.log", "p9-c6.log")]
    merged = merge(logs, ["東京-01.log", "東京-02.log"]).model
    app = make_app(merged, LineReader())
    async with app.run_test(size=(80, 18)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        for top in range(3):
            view.scroll_to(y=top, animate=False)
            await pilot.pause()
            lines = ["".join(seg.text for seg in view.render_line(y)) for y in range(8)]
            assert all(cell_len(line) == view.content_width for line in lines), lines
            assert any("東京" in line for line in lines)


async def test_a_log_with_nothing_to_draw_says_so_on_its_title_row() -> None:
    """`cuzk-tui empty.log a.log`: the empty log's group was its title row over nothing,
    no word of why. Its title row says there is nothing to draw; the others' do not."""
    from tui.lanes import NOTHING_TO_DRAW

    merged = merge(
        [LogBuilder(source="empty.log").build(), read_log(SAMPLES / "tiny.log")],
        ["empty.log", "a.log"],
    ).model
    app = make_app(merged, LineReader())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        titles = {
            r.log: "".join(seg.text for seg in view.render_line(AXIS_ROWS + k))
            for k, r in enumerate(view.rows)
            if r.kind == "title"
        }
        assert f"empty.log · {NOTHING_TO_DRAW}" in titles[0], titles
        assert "a.log" in titles[1] and NOTHING_TO_DRAW not in titles[1], titles


async def test_no_gutter_name_over_the_message_of_logs_without_gpu_lanes() -> None:
    """Two logs without TIMELINE lines: the view's first rows are the message saying so,
    not the lanes' rows, and the gutter named a log by a lane row it was not showing."""
    from tui.gantt import AXIS_ROWS, GanttView

    real = SAMPLES / "real"
    logs = [
        read_log(real / name) for name in ("monolithic-merged.log", "pipeline-failed-merged.log")
    ]
    merged = merge(logs[:2], ["aaa.log", "bbb.log"]).model
    assert not merged.gpus
    app = make_app(merged, LineReader())
    async with app.run_test(size=(80, 14)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        scrolled = 0
        for top in range(4):
            view.scroll_to(y=top, animate=False)
            await pilot.pause()
            scrolled = max(scrolled, int(view.scroll_offset.y))
            gutter = "".join(seg.text for seg in view.render_line(AXIS_ROWS - 1))[:10]
            assert gutter.strip() == "", (top, gutter)
        assert scrolled >= 2


def test_each_host_s_workers_are_dashed_by_their_own_lock_lines() -> None:
    """Three logs, one of whose engine prints no lock line (p9-c6): every host's `w0` read
    `–` for pre-lock and lock wait in the workers window and the report's table, the
    dashes of the last log's w0 given by worker number to all of them."""
    from parsers.breakdown import workers_unmeasured
    from tui.report import phase_cells

    logs = [read_log(SAMPLES / name) for name in ("journal-2gpu.log", "tiny.log", "p9-c6.log")]
    merged = merge(logs, ["prover-east-01.log", "prover-east-02.log", "a.log"]).model
    own = [dashed for log in logs for dashed in workers_unmeasured(log)]
    assert own[0] == frozenset() and own[-1] != frozenset()  # w0 of the first and the last
    header, rows, _ = phase_cells(merged)
    lock = header.index("lock wait")
    assert len(rows) == len(own) == len(merged.workers)
    for row, dashed in zip(rows, own, strict=True):
        assert (row[lock] == "–") == ("lock_wait" in dashed), row


def test_the_log_pane_opens_a_job_without_partitions_in_its_own_log() -> None:
    """`L` on a job of a log without TIMELINE lines (its tracing lines tell it) opened the
    TIMELINE line nearest the view's middle, of another log."""
    from tui.logpane import log_at

    paths = [SAMPLES / "real" / "pipeline-failed-merged.log", SAMPLES / "tiny.log"]
    placed = merge([read_log(p) for p in paths], ["hostR", "tiny"])
    merged = placed.model
    reader = HostLines(placed, [LineReader(path=p) for p in paths])
    assert merged.proof_hosts is not None
    k = int(np.flatnonzero(merged.proof_hosts == 0)[0])
    at = log_at(merged, reader, None, found_job(merged, k), merged.now_ms / 2)
    assert at.name == "hostR" and at.line == 1 and at.reader.path == paths[0]
    assert "no TIMELINE line" in at.why


def test_logs_that_share_a_file_name_are_named_by_what_tells_them_apart() -> None:
    """Hosts' logs named alike (`/srv/gpu1/cuzk.log`, `/srv/gpu3/cuzk.log`) were named by
    their whole paths, which the gap list and the header cut in the middle at 80 columns,
    just where they differ (`/tmp/wa…zk.log:GPU0` on every line). They are named by the
    fewest last parts of their paths that differ."""
    from tui.multi import names_for

    logs = ["/srv/h/gpu1/cuzk.log", "/srv/h/gpu3/cuzk.log", "other.log"]
    assert names_for(logs, None) == ["gpu1/cuzk.log", "gpu3/cuzk.log", "other.log"]
    deeper = ["x/a/c.log", "y/a/c.log", "b/c.log"]
    assert names_for(deeper, None) == ["x/a/c.log", "y/a/c.log", "b/c.log"]
    assert names_for(["-", "a.log"], None) == ["stdin", "a.log"]
    assert names_for(logs, ["one", "two", "three"]) == ["one", "two", "three"]
