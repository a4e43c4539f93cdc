"""The compact JSON report written from the columns is the text json.dumps makes of the
report's dict: on every sample, on simulated runs, with filtered gaps and odd job ids."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import build

from cuzksim.config import random_config
from cuzksim.logs import simulate
from parsers.report import report_dict, report_json

SAMPLES = sorted((Path(__file__).parent / "samples").glob("*.log"))

# two intervals on one GPU with a gap between them, named by job ids a log can hold: quotes,
# backslashes, accents, control characters, a character beyond the BMP, bidi text, a tab, DEL
ODD_JOBS = [
    'porep-"1"',
    "porep-\\2",
    "porep-é3",
    "porep-\x014",
    "porep-😀5",
    "porep-\u202e6",
    "porep-\t7",
    "porep-\x7f8",
    "porep-\x0c9",
]


def _odd_log() -> bytes:
    lines = []
    t = 1000
    for k, job in enumerate(ODD_JOBS):
        lines.append(f"TIMELINE,{t},GPU_START,{job},worker={k % 2},partition={k}")
        lines.append(f"TIMELINE,{t + 500},GPU_END,{job},worker={k % 2},partition={k}")
        t += 700 + 50 * k
    return ("\n".join(lines) + "\n").encode()


def _same(model_bytes: bytes, min_gap: int = 0) -> None:
    model = build(model_bytes)
    expected = json.dumps(report_dict(model, min_gap_ms=min_gap), ensure_ascii=True)
    assert report_json(model, min_gap_ms=min_gap) == expected


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample(path: Path) -> None:
    _same(path.read_bytes())
    _same(path.read_bytes(), min_gap=200)


@pytest.mark.parametrize("seed", [3, 11, 29, 47])
def test_simulated_runs(seed: int) -> None:
    _, data = simulate(random_config(seed))
    _same(data)
    _same(data, min_gap=1_000_000)  # no gap listed


def test_lists_written_in_pieces_are_the_lists_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gap and proof lists are written a few rows at a time: pieces of 3 rows (the last
    one short; of a restarted daemon's runs, each proof with its log) join into what
    json.dumps writes of the whole lists."""
    from parsers import report

    monkeypatch.setattr(report, "GAP_ROWS_PER_PIECE", 3)
    monkeypatch.setattr(report, "PROOF_ROWS_PER_PIECE", 3)
    once = (Path(__file__).parent / "samples" / "curio-mixed.log").read_bytes()
    for data in (once, once + once):
        model = build(data)
        assert len(model.gaps) > 4 and len(model.gaps) % 3 and len(model.proofs) % 3
        _same(data)


def test_each_proof_of_several_logs_names_its_log() -> None:
    """A restarted daemon's log (each run a log of the model) proving one job in both runs:
    the two proofs of the job could not be told apart in `proofs`; each names its log now,
    written from the columns as json.dumps writes the dicts."""
    once = (Path(__file__).parent / "samples" / "tiny.log").read_bytes()
    model = build(once + once)
    assert model.run_lines is not None and len(model.run_lines) == 2
    doc = report_dict(model)
    assert json.dumps(doc, ensure_ascii=True) == report_json(model)
    proofs = [(p["job"], p["log"]) for p in doc["proofs"]]
    job = proofs[0][0]
    assert proofs == [(job, "run 1"), (job, "run 2")]
    # one log: no such key
    assert "log" not in report_dict(build(once))["proofs"][0]
    # of several logs named by --name, as the JSON's hosts are named: exactly (a name's
    # controls escaped by the JSON, not made visible as the screen makes them)
    from parsers.hosts import merge

    names = ["host\tA", "h\x1b[31mB"]
    merged = merge([build(once), build(once)], names).model
    doc = report_dict(merged)
    assert json.dumps(doc, ensure_ascii=True) == report_json(merged)
    assert sorted(p["log"] for p in doc["proofs"]) == sorted(names)
    assert [name for _, name in merged.logs()] == ["host␉A", "h␛[31mB"]  # as drawn


def test_odd_job_ids_are_escaped_as_json_dumps_does() -> None:
    data = _odd_log()
    model = build(data)
    assert len(model.gaps) == len(ODD_JOBS) - 1
    _same(data)
    doc = json.loads(report_json(model))
    assert [g["before"]["job"] for g in doc["gaps"]] == ODD_JOBS[:-1]
    assert sorted(p["job"] for p in doc["proofs"]) == sorted(ODD_JOBS)


def test_a_model_s_proofs_are_made_from_their_columns_only_when_asked_for() -> None:
    """A finished model keeps its proofs as columns: the list behaves as the tuple of
    Proofs it stands for, in the report's order (first SYNTH_START, then job id; none last)."""
    from parsers.model import Proof, ProofList, ProofTable, proof_key

    lines = [
        "TIMELINE,1000,SYNTH_START,b-job,partition=0",
        "TIMELINE,1000,SYNTH_START,a-job,partition=0",  # a tie: by job id
        "TIMELINE,900,SYNTH_START,c-job,partition=0",
        "TIMELINE,1100,GPU_START,zz-none,worker=0,partition=0",  # none: last, by job id
        "TIMELINE,1200,GPU_START,aa-none,worker=1,partition=0",
        "TIMELINE,1300,GPU_END,aa-none,worker=1,partition=0",
    ]
    model = build(("\n".join(lines) + "\n").encode())
    assert [p.job for p in model.proofs] == ["c-job", "a-job", "b-job", "aa-none", "zz-none"]
    _, data = simulate(random_config(23))
    model = build(data)
    proofs = model.proofs
    assert isinstance(proofs, ProofList) and proofs._made is None
    # a proof asked for by its place (a drawing's few) is made alone
    picked = [proofs[0], proofs[-1], proofs[len(proofs) // 2]]
    assert proofs._made is None
    with pytest.raises(IndexError):
        proofs[len(proofs)]
    made = tuple(proofs)
    assert picked == [made[0], made[-1], made[len(made) // 2]]
    assert list(made) == sorted(made, key=proof_key) and len(made) == len(proofs) > 3
    assert proofs == made and proofs == list(made) and made == tuple(proofs)
    assert proofs[0] == made[0] and proofs[-1] == made[-1] and proofs[1:3] == made[1:3]
    assert proofs != made[:-1] and proofs != () and (proofs == 3) is False
    assert all(isinstance(p, Proof) for p in proofs) and hash(proofs) == hash(made)
    # the columns of a plain tuple say the same
    table = ProofTable.of(made)
    assert table.proofs() == made
    assert ProofTable.of(proofs) is proofs.table


def test_the_cli_writes_it_when_piped(tmp_path: Path) -> None:
    log = tmp_path / "odd.log"
    log.write_bytes(_odd_log())
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", str(log), "--report", "--json"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    doc = report_dict(build(_odd_log()))
    doc["source"] = "odd.log"
    assert out == json.dumps(doc, ensure_ascii=True) + "\n"


@pytest.mark.parametrize("seed", [5, 17])
def test_the_report_s_model_without_lanes_reports_the_same(seed: int) -> None:
    """The report draws nothing: its model skips the viewer's lanes and the synthesis steps,
    and says the same, on one run and across a restart (each run's model made apart)."""
    from cuzksim.config import SimConfig
    from parsers.builder import LogBuilder

    _, data = simulate(random_config(seed))
    _, other = simulate(SimConfig(seed=seed + 1, proofs=3, gpus=1, gw=2, stdout="plain"))
    for log, runs in ((data, 1), (data + other, 2)):
        drawn = build(log)
        assert len(drawn.run_lines or (1,)) == runs
        undrawn_builder = LogBuilder(source="t")
        undrawn_builder.feed(log)
        undrawn = undrawn_builder.build(release=True, drawn=False)
        assert drawn.lanes and not undrawn.lanes
        assert len(drawn.synth_times) and not len(undrawn.synth_times)
        assert report_json(undrawn) == report_json(drawn)


@pytest.mark.parametrize("sample", ["p9-c6.log", "journal-2gpu.log"])
def test_the_text_report_says_what_each_worker_was_doing(sample: str) -> None:
    """The text report reads the lanes (each worker's state when a gap began): the command
    builds them for it, and prints what a drawn model prints, from a file and from stdin."""
    import io

    from rich.console import Console

    from parsers.load import read_log
    from parsers.rawlines import LineReader
    from tui.report import print_report

    path = Path(__file__).parent / "samples" / sample
    out = io.StringIO()
    print_report(read_log(path), Console(width=10_000, file=out), reader=LineReader(path=path))
    # piped, the command writes each line without the spaces that pad it (tui/output.py)
    expected = "".join(line.rstrip(" ") + "\n" for line in out.getvalue().splitlines())
    states = [line for line in expected.splitlines() if "workers " in line]
    assert states
    if sample == "p9-c6.log":  # a gap where a worker was busy
        assert any("running kernels" in line for line in states)
    cmd = [sys.executable, "-m", "tui.cli", str(path), "--report"]
    assert subprocess.run(cmd, capture_output=True, check=True).stdout.decode() == expected
    piped = subprocess.run(
        [sys.executable, "-m", "tui.cli", "-", "--report"],
        input=path.read_bytes(),
        capture_output=True,
        check=True,
    ).stdout.decode()
    # from stdin there is no file to read raw lines from: the same workers' states
    assert [line for line in piped.splitlines() if "workers " in line] == states


@pytest.mark.parametrize("seed", [7, 31])
def test_segments_made_on_a_thread_of_their_own_give_the_same_model(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long log's segments are made on a second thread while the stamps are read: the
    model is the one made on one thread (a log of any size is made both ways here)."""
    import parsers.analysis as analysis
    import parsers.pieces as pieces

    _, data = simulate(random_config(seed))
    for module in (analysis, pieces):
        monkeypatch.setattr(module, "SEGMENTS_APART_ROWS", 10**12)
    alone = build(data)
    for module in (analysis, pieces):
        monkeypatch.setattr(module, "SEGMENTS_APART_ROWS", 0)
    apart = build(data)
    assert report_json(apart) == report_json(alone)
    assert apart.lanes and len(apart.lanes) == len(alone.lanes)
    for a, b in zip(apart.lanes, alone.lanes, strict=True):
        assert (a.gpu, a.worker, a.sub_row) == (b.gpu, b.worker, b.sub_row)
        for f in ("starts", "ends", "phases", "partition"):
            assert np.array_equal(getattr(a.segments, f), getattr(b.segments, f))
    for name in ("seg_start", "seg_end", "seg_phase", "seg_offsets", "lock_acquired", "unlock"):
        ours, theirs = getattr(apart.parts, name), getattr(alone.parts, name)
        assert len(ours) and np.array_equal(ours, theirs, equal_nan=ours.dtype.kind == "f")


def test_a_failure_on_the_segments_thread_is_raised_by_the_build() -> None:
    from parsers.later import Later

    def broken() -> int:
        raise ValueError("segments failed")

    with pytest.raises(ValueError, match="segments failed"):
        Later(broken, name="t").result()
    assert Later(lambda: 5, name="t").result() == 5


def test_a_model_for_the_json_report_refuses_what_needs_lanes() -> None:
    """Built without lanes and synthesis steps, the model says so when asked what needs
    them, instead of calling every worker idle or splitting no busy time."""
    from parsers.breakdown import busy_breakdown
    from parsers.load import read_log
    from parsers.model import IncompleteModel
    from parsers.trace_tracks import TraceTracks
    from parsers.why import gap_why

    log = Path(__file__).parent / "samples" / "p9-c6.log"
    model = read_log(log, drawn=False)
    drawn = read_log(log)
    assert not model.drawn and drawn.drawn
    gap = model.gaps[model.gaps.largest(1)[0]]
    with pytest.raises(IncompleteModel, match="needs the lanes"):
        gap_why(model, gap)
    with pytest.raises(IncompleteModel):
        busy_breakdown(model, 0.0, float(model.now_ms))
    with pytest.raises(IncompleteModel):
        TraceTracks(model)
    # the whole run's figures do not need the lanes: the two models agree on them
    assert busy_breakdown(model) == busy_breakdown(drawn)
    why = gap_why(drawn, drawn.gaps[drawn.gaps.largest(1)[0]])
    assert why.at_start  # the drawn model answers


def _floats(x: object) -> list[float]:
    if isinstance(x, float):
        return [x]
    if isinstance(x, dict):
        return [f for v in x.values() for f in _floats(v)]
    if isinstance(x, list):
        return [f for v in x for f in _floats(v)]
    return []


@pytest.mark.parametrize("log", SAMPLES, ids=lambda p: p.stem)
def test_every_float_of_the_json_is_rounded(log: Path) -> None:
    """No float noise (`2397.000000000005`) in the document a script reads: six decimals
    at most (shares), three for milliseconds."""
    from parsers.load import read_log

    doc = json.loads(report_json(read_log(log, drawn=False)))
    for f in _floats(doc):
        assert round(f, 6) == f, f
    summary = doc["summary"]
    for key in ("gap_mean_ms", "gap_p50_ms", "gap_p90_ms", "gap_p99_ms"):
        assert round(summary[key], 3) == summary[key], key


def test_workers_the_log_puts_on_no_gpu_are_said_to_be_counted_on_gpu_0() -> None:
    """A stderr-only capture of a two-GPU run (no `pipeline GPU worker started` line, no
    worker span): its four workers were one GPU's in every figure, and nothing said so."""
    from io import StringIO

    from conftest import SAMPLES
    from rich.console import Console

    from parsers.builder import LogBuilder
    from parsers.report import unplaced_sentence
    from tui.header import header_text
    from tui.report import print_report

    lines = (SAMPLES / "journal-2gpu.log").read_bytes().splitlines(keepends=True)
    stderr_only = b"".join(line for line in lines if b"cuzk_core" not in line)
    model = build(stderr_only)
    assert model.unplaced_workers == (0, 1, 2, 3) and [g.gpu for g in model.gpus] == [0]
    said = unplaced_sentence(model)
    assert said is not None and "4 workers" in said and "--workers-per-gpu" in said
    assert report_dict(model)["summary"]["unplaced_workers"] == [0, 1, 2, 3]
    out = StringIO()
    print_report(model, Console(file=out, width=200))
    assert said in out.getvalue()
    assert said in header_text(model, "FINISHED", width=80).plain
    assert len(said) <= 78  # whole in the header at 80 columns
    # the live model says the same as the whole one
    live = LogBuilder(source="t")
    live.feed(stderr_only)
    assert live.snapshot().unplaced_workers == model.unplaced_workers
    # placed by --workers-per-gpu, or placed by the log: nothing assumed, nothing said
    for placed in (build(stderr_only, workers_per_gpu=2), build(b"".join(lines))):
        assert placed.unplaced_workers == () and unplaced_sentence(placed) is None
        assert report_dict(placed)["summary"]["unplaced_workers"] == []
    # one worker on GPU 0: nothing to place wrongly
    single = build((SAMPLES / "p9-c6.log").read_bytes())
    assert single.unplaced_workers == (0,) and unplaced_sentence(single) is None
    # beside another log, the viewer's header of both says it too
    from parsers.hosts import merge

    placed_log = build((SAMPLES / "curio-mixed.log").read_bytes())
    both = merge([model, placed_log], ["stderr.log", "curio-mixed.log"]).model
    said = unplaced_sentence(both)
    assert said is not None and said.startswith("4 workers a log puts on no GPU")
    assert said in header_text(both, "FINISHED", width=120).plain
    assert unplaced_sentence(merge([placed_log, single], ["c", "p"]).model) is None


def test_each_gpu_has_the_label_the_screen_gives_it() -> None:
    """A restarted daemon's GPUs are numbered 1000, 1001, 2000 in the model: the JSON gave
    those numbers alone, where the screen and the text report say `run 2:GPU0`."""
    from cuzksim.config import SimConfig

    first = simulate(SimConfig(seed=8, proofs=4, gpus=2))[1]
    second = simulate(SimConfig(seed=7, proofs=4, gpus=1))[1]
    model = build(first + second)
    doc = report_dict(model)
    assert [g["label"] for g in doc["gpus"]] == ["run 1:GPU0", "run 1:GPU1", "run 2:GPU0"]
    assert [g["label"] for g in report_dict(build(second))["gpus"]] == ["GPU0"]


def test_a_gpu_whose_intervals_all_run_has_no_share_of_a_span_it_does_not_have() -> None:
    """A log cut while one GPU's first intervals ran: its span is none, yet the report, the
    JSON and the header gave it 0.0 % TIMELINE and kernel (and `0ms` of idle), a working GPU
    read as an idle one. Each now says `–` (null), as for any figure the log does not give;
    the other GPU's figures are as before."""
    from tui.header import header_text
    from tui.report import gpu_table, kernel_figure, timeline_figure

    lines = (
        (Path(__file__).parent / "samples" / "journal-2gpu.log")
        .read_bytes()
        .splitlines(keepends=True)
    )
    model = build(b"".join(lines[:94]))
    spanned = [g for g in model.gpus if g.span is not None]
    running = [g for g in model.gpus if g.span is None]
    assert len(spanned) == 1 and len(running) == 1 and running[0].in_flight == 2
    doc = report_dict(model)
    by_gpu = {g["gpu"]: g for g in doc["gpus"]}
    mute = by_gpu[running[0].gpu]
    assert mute["span_ms"] is None and mute["running"] == 2
    assert mute["timeline_util"] is mute["kernel_util"] is mute["kernel_util_range"] is None
    full = by_gpu[spanned[0].gpu]
    assert full["timeline_util"] == 1.0 and 0.5 < full["kernel_util"] < 0.9
    assert timeline_figure(running[0]) == kernel_figure(running[0]) == "–"
    from rich.console import Console

    console = Console(width=120, record=True, color_system=None)
    console.print(gpu_table(model))
    row = next(r for r in console.export_text().splitlines() if r.split()[:1] == ["3"])
    assert row.split() == ["3", "w2,w3", "–", "0ms", "–", "–", "0ms", "–"]
    header = header_text(model, "FINISHED", width=120).plain
    line = " ".join(next(r for r in header.splitlines() if r.startswith("GPU3")).split())
    assert "TIMELINE –" in line and "kernel –" in line and "idle – in 0 gaps" in line
    assert "0.0" not in line


def test_the_figures_of_no_gap_are_none_not_0_ms() -> None:
    """A run whose GPU never idled (or a section of no gap: `dispatch 0`) had a mean, a
    longest and percentiles of `0ms` in the report's gap table and `0.0` in the JSON, and
    --compare judged a mean going from 0 ms to 3 s: a figure of no gap is `–`, null, and no
    figure to compare."""
    from rich.console import Console

    from parsers.compare import compare
    from tui.report import gap_stats_table

    one = (
        "TIMELINE,0,GPU_START,a,worker=0,partition=0\nTIMELINE,100,GPU_END,a,worker=0,partition=0\n"
    )
    model = build(one.encode())
    assert model.summary.gaps.count == 0
    s = report_dict(model)["summary"]
    assert s["gap_count"] == 0 and s["gap_total_ms"] == 0
    for key in ("gap_max_ms", "gap_mean_ms", "gap_p50_ms", "gap_p90_ms", "gap_p99_ms"):
        assert s[key] is None, key
    console = Console(width=100, record=True, color_system=None)
    console.print(gap_stats_table(model.gaps, model.summary.gaps))
    row = next(r.split() for r in console.export_text().splitlines() if r.split()[:1] == ["all"])
    assert row[:8] == ["all", "0", "0ms", "–", "–", "–", "–", "–"]
    two = build(
        (
            one + "TIMELINE,3100,GPU_START,b,worker=0,partition=0\n"
            "TIMELINE,3200,GPU_END,b,worker=0,partition=0\n"
        ).encode()
    )
    assert two.summary.gaps.count == 1
    means = [f for f in compare(model, two) if f.section == "gaps" and f.name == "mean"]
    assert len(means) == 1 and means[0].before is None and means[0].after == 3000
    assert not means[0].moved


def test_a_gpu_with_no_span_is_no_figure_in_compare_what_if_and_metrics() -> None:
    """After the report and the JSON said `–`/null for a GPU whose intervals all ran, the
    other outputs still said 0: --compare's shares of its busy time (0.0 % → 55.0 %, judged
    better), --what-if's baseline (0.0 %, s/proof 0.00) and the metrics' gauges of a GPU
    whose one interval lasted 0 ms."""
    from parsers.compare import compare
    from parsers.metrics import figures_of
    from parsers.whatif import predict, prediction_dict, prediction_text

    lines = (Path(__file__).parent / "samples" / "journal-2gpu.log").read_bytes()
    whole = lines.splitlines(keepends=True)
    cut, full = build(b"".join(whole[:94])), build(lines)
    running = next(g.gpu for g in cut.gpus if g.span is None)
    moved = [f for f in compare(cut, full) if f.section == f"GPU{running}"]
    shares = [f for f in moved if f.name.endswith("% of busy")]
    assert shares and all(f.before is None and not f.moved for f in shares)
    doc = prediction_dict(predict(cut, ()))
    assert doc["baseline"]["s_per_proof"] is None
    base = {g["gpu"]: g for g in doc["baseline"]["gpus"]}
    assert base[running]["timeline_util"] is None and base[running]["kernel_util"] is None
    text = prediction_text(predict(cut, ()))
    assert re.search(rf"GPU{running} TIMELINE +–", text) and re.search(r"s/proof +–", text)
    zero = build(
        b"TIMELINE,0,GPU_START,a,worker=0,partition=0\n"
        b"TIMELINE,0,GPU_END,a,worker=0,partition=0\n"
        b"TIMELINE,5,GPU_START,b,worker=1,partition=0\n"
        b"TIMELINE,900,GPU_END,b,worker=1,partition=0\n",
        workers_per_gpu=1,
    )
    assert [g.span_ms for g in zero.gpus] == [0, 895]
    gauges = figures_of(zero).gpus
    assert [g.gpu for g in gauges] == [1]


def test_each_gap_of_the_json_carries_the_number_it_has_everywhere(tmp_path: Path) -> None:
    """The JSON's gaps had no number where gaps.csv, the viewer (`#12`) and the text
    report give each one: its `rank`, the same in the gap list of at least --min-gap."""
    import csv

    log = Path(__file__).parent / "samples" / "p9-c6.log"
    model = build(log.read_bytes())
    out = tmp_path / "csv"
    for args in ([], ["--min-gap", "500"]):
        proc = subprocess.run(
            [sys.executable, "-m", "tui.cli", str(log), "--report", "--json", *args],
            capture_output=True,
            check=True,
        )
        gaps = json.loads(proc.stdout)["gaps"]
        assert gaps and next(iter(gaps[0])) == "rank"
        t = model.gaps
        by_start = {(g, s): int(r) for g, s, r in zip(t.gpu, t.start, t.ranks(), strict=True)}
        assert [g["rank"] for g in gaps] == [by_start[(g["gpu"], g["start"])] for g in gaps]
        assert min(g["rank"] for g in gaps) == 1  # the longest is kept by any --min-gap
    subprocess.run(
        [sys.executable, "-m", "tui.cli", str(log), "--export-csv", str(out)],
        capture_output=True,
        check=True,
    )
    with (out / "gaps.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "tui.cli", str(log), "--report", "--json"],
            capture_output=True,
            check=True,
        ).stdout
    )
    assert sorted(int(r["rank"]) for r in rows) == sorted(g["rank"] for g in doc["gaps"])
    first = min(rows, key=lambda r: int(r["rank"]))
    assert int(first["start"]) == next(g["start"] for g in doc["gaps"] if g["rank"] == 1)
    assert report_dict(model)["gaps"][0]["rank"] == doc["gaps"][0]["rank"]
