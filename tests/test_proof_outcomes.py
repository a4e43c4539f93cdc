"""What became of each proof (parsers/proofs.py): the same proofs failed on the screen, in
the text and JSON reports, proofs.csv and the metrics, and none where nothing says so."""

from __future__ import annotations

import csv
import io
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import build

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers.export import write_trace
from parsers.export_csv import write_csv
from parsers.metrics import figures_of
from parsers.model import LogModel, PartitionTable, ProofTable
from parsers.proofs import FoundJob, failed_proofs
from parsers.report import report_dict, report_json
from tui.header import header_text
from tui.lanes import LaneDrawing
from tui.report import unfinished_sentence

ROOT = Path(__file__).parent.parent
FAILED = ("cuzk_proofs_failed", ())


def _lines(*lines: str) -> bytes:
    return "".join(x + "\n" for x in lines).encode()


# proof a: partition 0's worker moves on without its GPU_END (it failed), partition 1 proves on
HALF_FAILED = (
    "TIMELINE,0,SYNTH_START,a,partition=0",
    "TIMELINE,0,SYNTH_START,a,partition=1",
    "TIMELINE,10,SYNTH_END,a,partition=0",
    "TIMELINE,10,SYNTH_END,a,partition=1",
    "TIMELINE,20,GPU_START,a,worker=0,partition=0",
    "TIMELINE,100,GPU_START,a,worker=0,partition=1",
)


def _outcomes(model: LogModel, tmp_path: Path) -> dict[str, object]:
    """The failed proofs as each output says them."""
    doc = json.loads(report_json(model))
    folder = tmp_path / f"csv{random.random()}"
    write_csv(model, folder)
    with (folder / "proofs.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    sentence = unfinished_sentence(model) or ""
    header = header_text(model, "FINISHED").plain.split("\n")[0]
    trace = tmp_path / f"trace{random.random()}.json"
    write_trace(model, trace)
    events = json.loads(trace.read_text())["traceEvents"]
    proofs = [e["name"] for e in events if e.get("cat") == "proof"]
    # every proof the lane draws is in the trace, those that did not complete named so
    drawn_lane = sum(len(row) for row in LaneDrawing(model).proof_rows)
    assert len(proofs) == drawn_lane
    running = sorted(n.removesuffix(" (running)") for n in proofs if n.endswith(" (running)"))
    t = ProofTable.of(model.proofs)
    assert len(running) == int((~t.completed & ~failed_proofs(model)).sum())
    return {
        "trace": sorted(n.removesuffix(" (failed)") for n in proofs if n.endswith(" (failed)")),
        "drawn": sorted(
            p.job for p, f in zip(model.proofs, failed_proofs(model), strict=True) if f
        ),
        "json": sorted(p["job"] for p in doc["proofs"] if p["failed"]),
        "dict": sorted(p["job"] for p in report_dict(model)["proofs"] if p["failed"]),
        "csv": sorted(r["job"] for r in rows if r["failed"] == "1"),
        "count": doc["summary"]["proofs_failed"],
        "metric": int(figures_of(model).counters[FAILED]),
        "text": int(sentence.split(" failed")[0].rsplit(" ", 1)[-1])
        if " failed" in sentence
        else 0,
        "header": int(header.split(" failed)")[0].rsplit("(", 1)[-1])
        if " failed)" in header
        else 0,
    }


def test_a_proof_whose_other_partition_still_proves_is_running_not_failed(
    tmp_path: Path,
) -> None:
    model = build(_lines(*HALF_FAILED))
    said = _outcomes(model, tmp_path)
    assert said == {
        "trace": [],
        "drawn": [],
        "json": [],
        "dict": [],
        "csv": [],
        "count": 0,
        "metric": 0,
        "text": 0,
        "header": 0,
    }  # the counter said 1 while the proofs lane drew it running
    assert unfinished_sentence(model) == "not completed: 1 running when the log ends"
    ended = build(_lines(*HALF_FAILED, "TIMELINE,200,GPU_END,a,worker=0,partition=1"))
    said = _outcomes(ended, tmp_path)
    assert said == {
        "trace": ["a"],
        "drawn": ["a"],
        "json": ["a"],
        "dict": ["a"],
        "csv": ["a"],
        "count": 1,
        "metric": 1,
        "text": 1,
        "header": 1,
    }
    assert unfinished_sentence(ended) == "not completed: 1 failed"
    completed = build(
        _lines(
            "TIMELINE,0,SYNTH_START,b,partition=0",
            "TIMELINE,10,SYNTH_END,b,partition=0",
            "TIMELINE,20,GPU_START,b,worker=0,partition=0",
            "TIMELINE,30,GPU_END,b,worker=0,partition=0",
        )
    )
    assert unfinished_sentence(completed) is None


@pytest.mark.parametrize("seed", range(6))
def test_every_output_fails_the_same_proofs_and_only_simulated_failures(
    tmp_path: Path, seed: int
) -> None:
    rnd = random.Random(seed)
    config = SimConfig(
        seed=seed, proofs=8, concurrency=3, fail_prove=0.05, fail=0.02, fail_synth=0.02
    )
    sim, data = simulate(config)
    failed = {p.job for p in sim.partitions if p.failed}
    assert failed  # the seeds fail some
    for cut in (len(data), rnd.randrange(len(data) // 3, len(data))):
        model = build(data[: data.rfind(b"\n", 0, cut) + 1])
        said = _outcomes(model, tmp_path)
        drawn = said["drawn"]
        assert isinstance(drawn, list)
        for key in ("json", "dict", "csv", "trace"):
            assert said[key] == drawn, key
        assert said["count"] == said["metric"] == said["text"] == said["header"] == len(drawn)
        assert set(drawn) <= failed  # nothing failed that the simulator did not fail
        if cut == len(data):
            # the whole log: a simulated failure not told still has a partition under way
            # when the log ends: a prove its worker followed with nothing, or a synthesis
            # that never ended (no line says it failed)
            t = model.parts
            open_ = ~t.failed & np.isnan(t.gpu_end)
            under_way = {t.jobs[j] for j in t.job[open_].tolist()}
            assert failed - set(drawn) <= under_way
            s = model.summary
            assert s.proofs_started - s.proofs_completed == len(failed)


def _text_report(tmp_path: Path, *lines: str) -> str:
    """`cuzk-tui LOG --report` of a log of `lines`, as the command prints it."""
    log = tmp_path / "daemon.log"
    log.write_bytes(_lines(*lines))
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", str(log), "--report"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout


def test_the_text_report_says_what_did_not_complete(tmp_path: Path) -> None:
    out = _text_report(tmp_path, *HALF_FAILED)
    assert "proofs 0 completed / 1 started" in out
    assert "not completed: 1 running when the log ends" in out


def test_the_find_window_says_what_became_of_a_proof() -> None:
    """`/` on a job: the proof's head said `not completed` of a failed proof and of one
    running when the log ends alike; it says which, as the proofs lane and the reports."""
    from rich.console import Console

    from tui.find import describe_proof

    def head(model: LogModel) -> str:
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(describe_proof(model, FoundJob("a")))
        return console.export_text().splitlines()[0]

    assert head(build(_lines(*HALF_FAILED))).endswith("running when the log ends")
    ended = build(_lines(*HALF_FAILED, "TIMELINE,200,GPU_END,a,worker=0,partition=1"))
    assert head(ended).endswith("failed")


@pytest.mark.parametrize("seed", range(3))
def test_a_restarted_daemon_s_last_run_counts_its_own_failed_proofs(seed: int) -> None:
    """The JSON's `last_run` gave the last run's proofs started and completed, not its
    failed ones: a reader took every run's `proofs_failed` for the last run's. The first
    run is cut mid-work (the restart fails what it had under way); the last run counts
    the failures it has alone, the summary both runs'."""
    rnd = random.Random(seed)
    config = SimConfig(seed=seed, proofs=6, gpus=1, gw=2, stdout="plain", fail_prove=0.05)
    _, first = simulate(config)
    first = first[: first.rfind(b"\n", 0, rnd.randrange(len(first) // 3, len(first) // 2)) + 1]
    _, second = simulate(SimConfig(**{**vars(config), "seed": seed + 100}))
    both = build(first + second)
    assert both.run_lines is not None and len(both.run_lines) == 2
    summary = report_dict(both)["summary"]
    alone = report_dict(build(second))["summary"]["proofs_failed"]
    cut_short = summary["proofs_started"] - summary["proofs_completed"] - alone
    assert cut_short > 0  # the first run's proofs under way at the restart failed
    assert summary["last_run"]["proofs_failed"] == alone
    assert summary["proofs_failed"] == alone + cut_short


def _run(minute: int, *lines: str) -> tuple[str, ...]:
    """A daemon's run: its engine's start, its worker on GPU 0, then `lines`."""
    at = f"2026-03-16T09:{minute}:51.67"
    return (
        f"{at}4484Z  INFO cuzk_core::engine: starting cuzk engine pipeline_enabled=true",
        f"{at}4884Z  INFO cuzk_core::engine: pipeline GPU worker started worker_id=0 gpu=0 "
        "sub_id=0",
        *lines,
    )


# job X synthesized and on the GPU, with no GPU_END yet
X_PROVING = (
    "TIMELINE,0,SYNTH_START,X,partition=0",
    "TIMELINE,10,SYNTH_END,X,partition=0",
    "TIMELINE,20,GPU_START,X,worker=0,partition=0",
)


def test_a_job_proved_again_after_a_restart_is_a_proof_of_its_own(tmp_path: Path) -> None:
    """The restart failed job X; the daemon proves X again, still at it when the log ends.
    Proofs were told apart by their job id alone: the second X was failed with the first,
    in every output. Each run's X is its own proof now: one failed, one running."""
    model = build(_lines(*_run(22, *X_PROVING), *_run(30, *X_PROVING)))
    assert model.run_lines is not None and len(model.run_lines) == 2
    assert [(p.job, bool(f)) for p, f in zip(model.proofs, failed_proofs(model), strict=True)] == [
        ("X", True),
        ("X", False),
    ]
    said = _outcomes(model, tmp_path)
    assert said["json"] == said["dict"] == said["csv"] == said["drawn"] == ["X"]
    assert said["trace"] == ["X"]
    assert said["count"] == said["metric"] == said["text"] == said["header"] == 1
    assert unfinished_sentence(model) == "not completed: 1 failed, 1 running when the log ends"
    assert report_dict(model)["summary"]["last_run"]["proofs_failed"] == 0
    # proved again and completed, the first X stays failed, the second completed
    done = build(
        _lines(
            *_run(22, *X_PROVING),
            *_run(30, *X_PROVING, "TIMELINE,50,GPU_END,X,worker=0,partition=0"),
        )
    )
    assert [bool(f) for f in failed_proofs(done)] == [True, False]
    assert [p.completed for p in done.proofs] == [False, True]


async def test_find_tells_a_job_proved_again_after_a_restart_from_its_first_try() -> None:
    """`/X` on a log whose daemon restarted while proving X, then proved X again: the find
    gave one proof of both runs' partitions and gaps, called failed. It finds a proof in
    each run: the first failed, the second completed, each with its own intervals, and the
    Gantt highlights the one shown."""
    from rich.console import Console
    from textual.widgets import Static

    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.find import ProofScreen, describe_proof, find_jobs
    from tui.interval import job_intervals

    data = _lines(
        *_run(22, *X_PROVING),
        *_run(30, *X_PROVING, "TIMELINE,50,GPU_END,X,worker=0,partition=0"),
    )
    model = build(data)
    found = find_jobs(model, "X")
    assert found == (FoundJob("X", 0), FoundJob("X", 1))

    def head(f: FoundJob) -> str:
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(describe_proof(model, f))
        return console.export_text().splitlines()[0]

    assert "failed" in head(found[0]) and "completed" in head(found[1])
    first, second = (job_intervals(model, f).tolist() for f in found)
    assert len(first) == len(second) == 1 and first != second
    assert not np.isnan(model.parts.gpu_end[second[0]])  # the second try ended
    app = make_app(model, LineReader(data=data))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("slash", "X", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ProofScreen)

        def shown() -> str:
            console = Console(width=120, record=True, file=io.StringIO())
            console.print(app.screen.query_one("#proof-facts", Static).content)
            return console.export_text().splitlines()[0]

        assert shown() == head(found[0])
        await pilot.press("n")
        await pilot.pause()
        assert shown() == head(found[1])
        assert app.gantt.found_jobs[app.gantt.found_index] == found[1]
        assert app.gantt._drawing.found.tolist() == second


# w0 proves a, starts b and moves on to c without b's GPU_END: b failed inside the gap
# between a and c
FAILED_IN_GAP = (
    "TIMELINE,0,SYNTH_START,a,partition=0",
    "TIMELINE,5,SYNTH_END,a,partition=0",
    "TIMELINE,10,GPU_START,a,worker=0,partition=0",
    "TIMELINE,100,GPU_END,a,worker=0,partition=0",
    "TIMELINE,150,GPU_START,b,worker=0,partition=0",
    "TIMELINE,400,GPU_START,c,worker=0,partition=0",
    "TIMELINE,500,GPU_END,c,worker=0,partition=0",
)


def test_a_gap_s_why_names_the_failed_prove_begun_in_it(tmp_path: Path) -> None:
    """A gap that mostly lay over a prove that failed said `workers as the gap began: w0
    idle` and nothing of the prove w0 began 50 ms later and ran to the gap's end (not busy
    time: the gap is the GPU's all the same). The why names it, on the screen and in the
    text report."""
    from rich.console import Console

    from parsers.why import FailedProve, gap_why, why_lines
    from tui.inspector import describe_gap
    from tui.prose import GLUE

    model = build(_lines(*FAILED_IN_GAP))
    (gap,) = model.gaps
    assert (gap.start, gap.end) == (100, 400)
    why = gap_why(model, gap)
    assert why.failed_in == (FailedProve(0, "b", 0, 50.0, 250.0),)
    # no line says when it failed: what its drawing gives is the most it can have run
    said = "failed proves begun in the gap (not busy time): w0 (b p0) 50 ms in, for up to 250 ms"
    assert said in why_lines(why)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(describe_gap(model, gap))
    # the inspector's: the same words, each number glued to its unit (drawn as a space)
    assert said in " ".join(console.export_text().replace(GLUE, " ").split())
    out = _text_report(tmp_path, *FAILED_IN_GAP)
    assert "failed proves begun in the gap (not busy time): w0 (b p0)" in " ".join(out.split())
    # a gap with no failed prove in it says nothing of them
    whole = build(_lines(*FAILED_IN_GAP[:4], *FAILED_IN_GAP[5:]))
    assert gap_why(whole, whole.gaps[0]).failed_in == ()


def test_the_failed_proofs_are_made_once_a_model_and_never_carried_to_another() -> None:
    """Every output reads the failed proofs (the header at each snapshot): made once a
    model, read-only; a model `replace` makes from it makes its own."""
    from dataclasses import replace

    model = build(_lines(*HALF_FAILED, "TIMELINE,200,GPU_END,a,worker=0,partition=1"))
    failed = failed_proofs(model)
    assert failed.tolist() == [True] and failed_proofs(model) is failed
    assert not failed.flags.writeable
    other = build(_lines(*HALF_FAILED))  # the same proof under way: not failed
    moved = replace(model, parts=other.parts)
    assert moved.derived == {} and failed_proofs(moved).tolist() == [False]


def test_an_interval_the_restart_cut_says_so() -> None:
    """A prove the daemon's restart cut showed `GPU_END none: failed` and one segment of
    `+0 ms failed 0 ms` (nothing follows its GPU_START in its run) where the Gantt draws a
    cross: it says the daemon restarted after it. One its worker moved on from says failed,
    in a restarted log too, and so does one in the last run."""
    from rich.console import Console

    from tui.interval import describe_interval

    def end_line(model: LogModel, index: int) -> str:
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(describe_interval(model, index))
        return next(x for x in console.export_text().splitlines() if x.startswith("GPU_END"))

    model = build(_lines(*_run(22, *FAILED_IN_GAP[:5]), *_run(30, *X_PROVING)))
    t = model.parts
    b = next(i for i in range(len(t)) if t.job_of(i) == "b")
    x = next(i for i in range(len(t)) if t.job_of(i) == "X")
    assert t.failed[b] and not t.failed[x]
    assert end_line(model, b).endswith("none: failed: the daemon restarted after it")
    assert end_line(model, x).endswith("none: running when the log ends")
    moved_on = build(_lines(*_run(22, *FAILED_IN_GAP), *_run(30, *X_PROVING)))
    t = moved_on.parts
    b = next(i for i in range(len(t)) if t.job_of(i) == "b")
    assert t.failed[b] and end_line(moved_on, b).endswith("none: failed")
    alone = build(_lines(*FAILED_IN_GAP))
    b = next(i for i in range(len(alone.parts)) if alone.parts.job_of(i) == "b")
    assert end_line(alone, b).endswith("none: failed")


def _cut_before_partition(data: bytes, nth: int) -> bytes:
    """`data` with its `nth` partitioned SYNTH_START line cut before `,partition=` and the
    rest of it lost."""
    lines = data.split(b"\n")
    at = [i for i, x in enumerate(lines) if b",SYNTH_START," in x and b",partition=" in x][nth]
    lines[at] = lines[at][: lines[at].index(b",partition=")]
    return b"\n".join(lines)


@pytest.mark.parametrize("nth", [0, 5, 17])
def test_a_line_cut_before_its_partition_is_no_partition_of_its_proof(
    tmp_path: Path, nth: int
) -> None:
    """A SYNTH_START cut before `,partition=P` (the rest lost) made a record of no partition
    of a job of partitions: its proof had 11 partitions of 10 and was never completed, in
    every output. After the job's first partition the line is malformed (the core); as the
    job's first line (nth 0) its record is kept, and is no partition of the proof."""
    data = (ROOT / "tests" / "samples" / "p9-c6.log").read_bytes()
    whole, cut = build(data), build(_cut_before_partition(data, nth))
    first = nth == 0
    assert len(cut.parts) == len(whole.parts) + first
    assert cut.counts.malformed == whole.counts.malformed + (not first)
    for model in (whole, cut):
        doc = json.loads(report_json(model))
        assert [(p["partitions"], p["completed"]) for p in doc["proofs"]] == [(10, True)] * 6
        assert doc["summary"]["proofs_completed"] == 6
        folder = tmp_path / f"csv-{len(model.parts)}"
        write_csv(model, folder)
        with (folder / "proofs.csv").open(newline="") as fh:
            assert {r["partitions"] for r in csv.DictReader(fh)} == {"10"}
        assert header_text(model, "FINISHED").plain.split("\n")[0].count("proofs 6/6")
        assert unfinished_sentence(model) is None


def test_a_cut_line_does_not_keep_a_failed_proof_under_way(tmp_path: Path) -> None:
    """A proof one of whose partitions failed, with a SYNTH_START cut before its partition
    and never ended: the cut line's record is no partition in synthesis, so the proof
    failed, as it does without the cut line."""
    lines = (*HALF_FAILED, "TIMELINE,200,GPU_END,a,worker=0,partition=1")
    plain = _outcomes(build(_lines(*lines)), tmp_path)
    with_cut = _outcomes(build(_lines(lines[0], "TIMELINE,0,SYNTH_START,a", *lines[1:])), tmp_path)
    assert plain == with_cut
    assert with_cut["json"] == ["a"] and with_cut["count"] == 1


def test_a_job_proved_whole_is_still_one_proof_of_one_record() -> None:
    model = build(
        _lines(
            "TIMELINE,0,SYNTH_START,winpost-1,kind=winning-post",
            "TIMELINE,10,SYNTH_END,winpost-1,synth_ms=10",
            "TIMELINE,20,GPU_START,winpost-1,worker=0",
            "TIMELINE,30,GPU_END,winpost-1,worker=0,gpu_ms=10",
            "TIMELINE,40,SYNTH_START,winpost-2,kind=winning-post",
        )
    )
    doc = json.loads(report_json(model))
    assert [(p["partitions"], p["completed"]) for p in doc["proofs"]] == [(1, True), (1, False)]


def test_a_job_of_partitions_retried_whole_is_a_proof_of_its_own() -> None:
    """A retry the scheduler batched is proved whole under the job id of a partitioned
    attempt: its lines are an attempt of their own, not lines cut before their partition."""
    model = build(
        _lines(
            "TIMELINE,100,SYNTH_START,porep-1000-7,partition=0",
            "TIMELINE,200,SYNTH_END,porep-1000-7,partition=0,synth_ms=100",
            "TIMELINE,210,GPU_QUEUE,porep-1000-7,partition=0",
            "TIMELINE,220,GPU_PICKUP,porep-1000-7,worker=0,partition=0",
            "TIMELINE,230,GPU_START,porep-1000-7,worker=0,partition=0",
            "TIMELINE,1000,SYNTH_START,porep-1000-7,kind=porep-c2",
            "TIMELINE,2000,SYNTH_END,porep-1000-7,synth_ms=1000",
            "TIMELINE,2010,GPU_QUEUE,porep-1000-7,monolithic",
            "TIMELINE,2020,GPU_PICKUP,porep-1000-7,worker=0",
            "TIMELINE,2030,GPU_START,porep-1000-7,worker=0",
            "TIMELINE,3030,GPU_END,porep-1000-7,worker=0,gpu_ms=1000",
        )
    )
    doc = json.loads(report_json(model))
    assert doc["lines"]["malformed"] == 0
    assert [(p["job"], p["partitions"], p["completed"], p["failed"]) for p in doc["proofs"]] == [
        ("porep-1000-7", 1, False, True),  # its worker moved on to the retry without a GPU_END
        ("porep-1000-7 (attempt 2)", 1, True, False),
    ]
    assert doc["gpus"][0]["timeline_busy_ms"] == 1000


def test_a_line_cut_before_its_partition_still_moves_the_log_s_time() -> None:
    model = build(
        _lines(
            "TIMELINE,100,SYNTH_START,porep-1-1,partition=0",
            "TIMELINE,200,SYNTH_END,porep-1-1,partition=0,synth_ms=100",
            "TIMELINE,230,GPU_START,porep-1-1,worker=0,partition=0",
            "TIMELINE,90000,SYNTH_START,porep-1-1,",
        )
    )
    assert model.counts.malformed == 1
    assert model.now_ms == 90000  # the interval under way is drawn to it
    assert [(p.partitions, p.completed) for p in model.proofs] == [(1, False)]


def test_the_proof_view_counts_a_cut_job_s_partitions_as_the_reports_do() -> None:
    from rich.console import Console

    from parsers.proofs import found_job
    from tui.find import describe_proof

    data = (ROOT / "tests" / "samples" / "p9-c6.log").read_bytes()
    model = build(_cut_before_partition(data, 0))  # the job's first line: its record kept
    screen = Console(file=io.StringIO(), width=120)
    screen.print(describe_proof(model, found_job(model, 0)))
    head = screen.file.getvalue().splitlines()[0]  # type: ignore[attr-defined]
    assert "10 partitions  begun at 1.163s  completed in" in head, head


def test_a_live_model_s_failed_proofs_read_its_settled_part_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The viewer asks at each update which proofs failed: every record's jobs were sorted
    again each time (27 ms an update on a 250-hour log, most of its redraw). What the
    settled part gives is made once; the answer is the whole log's, update after update."""
    import parsers.proofs as proofs
    from parsers.builder import LogBuilder

    config = SimConfig(seed=11, proofs=40, concurrency=4, gpus=2, gw=2, fail=0.05, mix=0.2)
    _, data = simulate(config)
    lines = data.splitlines(keepends=True)
    steps = range(len(lines) - 600, len(lines), 150)
    wanted = [failed_proofs(build(b"".join(lines[: k + 150]))).tolist() for k in steps]
    live = LogBuilder(source="live.log")
    live.feed(b"".join(lines[: len(lines) - 600]))
    live.snapshot()
    made: list[int] = []
    real = proofs._jobs_of

    def counted(p: PartitionTable) -> proofs._PartJobs:
        made.append(len(p))
        return real(p)

    monkeypatch.setattr(proofs, "_jobs_of", counted)
    for k, want in zip(steps, wanted, strict=True):
        live.feed(b"".join(lines[k : k + 150]))
        model = live.snapshot()
        assert model.parts.parts_of()[0] is not model.parts  # a settled part and live rows
        assert failed_proofs(model).tolist() == want and any(want)
    settled = model.parts.parts_of()[0]
    # the settled part's jobs once (when it was made again), never at each update
    assert made.count(len(settled)) <= 1 and len(made) >= 4, made
