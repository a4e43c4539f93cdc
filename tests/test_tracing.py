"""Logs without TIMELINE lines: the jobs their tracing lines tell, and why there is no TIMELINE."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES
from helpers import build

from parsers.report import report_dict, report_json
from parsers.tracing import TracingScanner

REAL = SAMPLES / "real"
MONOLITHIC = REAL / "monolithic-merged.log"
PIPELINE_FAILED = REAL / "pipeline-failed-merged.log"

# (job, queue_ms, prove_ms, total_ms), as the completion lines print them
MONOLITHIC_JOBS = [
    ("47b59677-41ff-40d4-9b37-9a846f884a43", "porep-c2", 0, 53446, 53449),
    ("98021143-0abf-4bd3-acac-a00611c4a457", "porep-c2", 63577, 85430, 149008),
    ("64f3c45d-14d9-4ad3-83c6-265f55d53086", "porep-c2", 148806, 57618, 206425),
    ("3b440954-8cae-4045-9fd1-6722f35333b8", "window-post", 60909, 2261, 63170),
    ("72578e52-c903-4fb6-b6d8-ec40ad298f98", "winning-post", 52841, 8067, 60909),
]
REQUIRES = "pipeline mode requires cuda-supraseal feature"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        input=stdin,
        env={**os.environ, "COLUMNS": "100"},
    )


def json_report(*args: str, stdin: bytes | None = None) -> tuple[dict[str, Any], str]:
    proc = run(*args, "--report", "--json", stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr.decode()


def line(t: str, level: str, rest: str) -> str:
    return f"2026-03-16T09:{t}Z {level:>5} {rest}\n"


def jobs_of(data: bytes, chunk: int | None = None) -> list[dict[str, Any]]:
    """The traced jobs of `data` as the JSON report lists them."""
    model = build(data, None if chunk is None else [chunk] * (len(data) // chunk))
    proofs: list[dict[str, Any]] = report_dict(model)["proofs"]
    assert all(p["timeline"] is False for p in proofs)
    return proofs


# -- the real daemon's logs ------------------------------------------------------------------


@pytest.mark.parametrize("how", ["file", "stdin", "gzip"])
def test_a_monolithic_logs_five_proofs_are_read_from_its_tracing_lines(
    how: str, tmp_path: Path
) -> None:
    data = MONOLITHIC.read_bytes()
    if how == "file":
        doc, err = json_report(str(MONOLITHIC))
    elif how == "stdin":
        doc, err = json_report("-", stdin=data)
    else:
        gz = tmp_path / "daemon.log.gz"
        gz.write_bytes(gzip.compress(data))
        doc, err = json_report(str(gz))
    s = doc["summary"]
    assert (s["proofs_started"], s["proofs_completed"]) == (5, 5)
    assert s["no_timeline_reason"] == "pipeline_disabled" and s["first_job_error"] is None
    got = sorted(
        (p["job"], p["kind"], p["queue_ms"], p["prove_ms"], p["total_ms"]) for p in doc["proofs"]
    )
    assert got == sorted(MONOLITHIC_JOBS)
    first = doc["proofs"][0]
    assert first["enqueued"] == "2026-12-01T20:04:32.563789+00:00"
    assert first["dequeued"] == "2026-12-01T20:04:32.563814+00:00"
    assert first["ended"] == "2026-12-01T20:05:26.012992+00:00"
    assert (first["outcome"], first["worker"], first["gpu"]) == ("completed", 0, 0)
    assert err == (
        "cuzk-tui: no TIMELINE lines: the daemon ran with the pipeline disabled "
        "(pipeline.enabled=false), so this log has no GPU intervals to show; 5 of 5 jobs "
        "completed (from the tracing lines)\n"
    )


def test_a_pipeline_whose_every_job_failed_says_so_with_the_first_error() -> None:
    doc, err = json_report(str(PIPELINE_FAILED))
    s = doc["summary"]
    assert s["no_timeline_reason"] == "all_jobs_failed"
    assert s["first_job_error"] == REQUIRES
    assert (s["proofs_started"], s["proofs_completed"]) == (6, 0)
    assert [p["outcome"] for p in doc["proofs"]] == ["failed"] * 6
    assert {p["error"] for p in doc["proofs"]} == {REQUIRES}
    assert [p["kind"] for p in doc["proofs"]] == ["porep-c2"] * 4 + ["winning-post", "window-post"]
    assert "pipeline disabled" not in err
    assert err == (
        "cuzk-tui: no TIMELINE lines: the pipeline was enabled but every job failed "
        f"(6 jobs; the first: {REQUIRES})\n"
    )


def test_a_run_with_no_completion_has_no_span_not_one_of_0_ms(tmp_path: Path) -> None:
    """No job completed (every one failed), no GPU_END yet after a SYNTH_START, or no
    SYNTH_START read (a log begun mid-run, with completions): the text report and the header
    write the span `–` and `– s/proof` (not `0.00 s/proof`); the JSON keeps 0."""
    from tui.header import header_text

    begun = tmp_path / "begun.log"
    begun.write_bytes(b"TIMELINE,100,SYNTH_START,job-a,partition=0\n")
    # begun mid-run (`tail -f`): a proof completes, yet no SYNTH_START was read
    middle = tmp_path / "middle.log"
    middle.write_bytes(
        b"TIMELINE,100,GPU_START,job-a,worker=0,partition=0\n"
        b"TIMELINE,900,GPU_END,job-a,worker=0,partition=0,gpu_ms=800\n"
    )
    for path, says in (
        (PIPELINE_FAILED, "first dequeue to last completion"),
        (begun, "run span"),
        (middle, "run span"),
    ):
        model = build(path.read_bytes())
        assert model.summary.run_span_ms == 0 and report_dict(model)["summary"]["run_span_ms"] == 0
        assert model.summary.run_span_shown == "–"
        assert "  run –  proofs" in header_text(model, "FINISHED").plain
        text = run(str(path), "--report").stdout.decode()
        assert f"{says} –   – s/proof" in text, text
    done = build((SAMPLES / "tiny.log").read_bytes()).summary
    assert done.run_span_ms > 0 and done.run_span_shown != "–"


def test_the_compact_json_writes_the_traced_jobs_as_the_document_does() -> None:
    for path in (MONOLITHIC, PIPELINE_FAILED):
        model = build(path.read_bytes())
        assert json.loads(report_json(model)) == report_dict(model)


def test_an_empty_file_a_text_file_and_a_timeline_log_each_say_their_reason(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    doc, err = json_report(str(empty))
    assert doc["summary"]["no_timeline_reason"] == "empty_file"
    assert err == "cuzk-tui: no TIMELINE lines: the log is empty\n"
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping list {eggs; milk}\nERROR: out of bread\n")
    doc, err = json_report(str(notes))
    assert doc["summary"]["no_timeline_reason"] == "not_a_cuzk_log" and doc["proofs"] == []
    assert err == "cuzk-tui: no TIMELINE lines: is this a cuzk daemon log?\n"
    doc, err = json_report(str(SAMPLES / "curio-mixed.log"))
    assert doc["summary"]["no_timeline_reason"] is None and err == ""
    assert doc["proofs"] and all("timeline" not in p for p in doc["proofs"])


def test_a_timeline_log_with_tracing_job_lines_keeps_its_timeline_proofs() -> None:
    tiny = (SAMPLES / "tiny.log").read_bytes()
    extra = line("00:01.000000", "INFO", "cuzk_core::scheduler: job enqueued job_id=x proof_kind=k")
    for data in (extra.encode() + tiny, tiny + extra.encode()):
        model = build(data)
        assert model.traced_jobs == () and model.no_timeline_reason is None
        assert all(p.job != "x" for p in model.proofs)


def test_an_engine_without_timeline_and_without_the_pipeline_flag_is_an_older_engine() -> None:
    data = line("00:00.000000", "INFO", "cuzk_core::engine: cuzk engine started num_workers=1")
    doc = report_dict(build(data.encode()))
    assert doc["summary"]["no_timeline_reason"] == "no_timeline"


# -- the shapes of the tracing lines ---------------------------------------------------------


def monolithic_two_gpus() -> str:
    """Two monolithic workers on GPUs 2 and 3, their jobs interleaved; j3 fails in its span."""
    w = "monolithic_worker{{worker_id={w} gpu={g} job_id={j} proof_kind={k}}}"
    sched = "cuzk_core::scheduler"
    return "".join(
        [
            line(
                "00:00.000000",
                "INFO",
                "cuzk_core::engine: starting cuzk engine pipeline_enabled=false",
            ),
            line(
                "00:00.100000",
                "INFO",
                "cuzk_core::engine: monolithic GPU worker started worker_id=0 gpu=2",
            ),
            line(
                "00:00.100100",
                "INFO",
                "cuzk_core::engine: monolithic GPU worker started worker_id=1 gpu=3",
            ),
            line("00:01.000000", "INFO", f"{sched}: job enqueued job_id=j1 proof_kind=porep-c2"),
            line("00:01.500000", "INFO", f"{sched}: job enqueued job_id=j2 proof_kind=snap-prove"),
            line(
                "00:02.000000",
                "INFO",
                f"{sched}: job dequeued for proving job_id=j1 proof_kind=porep-c2",
            ),
            line(
                "00:02.000100",
                "INFO",
                w.format(w=0, g=2, j="j1", k="porep-c2")
                + ": cuzk_core::engine: processing job (monolithic)",
            ),
            line(
                "00:02.500000",
                "INFO",
                f"{sched}: job dequeued for proving job_id=j2 proof_kind=snap-prove",
            ),
            line(
                "00:02.500100",
                "INFO",
                w.format(w=1, g=3, j="j2", k="snap-prove")
                + ": cuzk_core::engine: processing job (monolithic)",
            ),
            line("00:03.000000", "INFO", f"{sched}: job enqueued job_id=j3 proof_kind=porep-c2"),
            line(
                "00:03.100000",
                "INFO",
                'prove_porep_c2{job_id="j1"}: storage_proofs_core::'
                "parameter_cache: parameter set identifier for cache: layered{ graph: g{size: "
                "64; degree: 6} }, job dequeued ",
            ),
            line(
                "00:12.000000",
                "INFO",
                w.format(w=1, g=3, j="j2", k="snap-prove")
                + ": cuzk_core::engine: proof completed successfully (monolithic) proof_len=192 "
                "total_ms=10500 queue_ms=1000 deser_ms=0 prove_ms=9500 ",
            ),
            line(
                "00:12.000100",
                "INFO",
                f"{sched}: job dequeued for proving job_id=j3 proof_kind=porep-c2",
            ),
            line(
                "00:13.000000",
                "ERROR",
                w.format(w=1, g=3, j="j3", k="porep-c2")
                + ": cuzk_core::engine: proof failed error=CUDA error {code: 2; out of memory}",
            ),
            line(
                "00:52.000000",
                "INFO",
                w.format(w=0, g=2, j="j1", k="porep-c2")
                + ": cuzk_core::engine: proof completed successfully (monolithic) proof_len=192 "
                "total_ms=51000 queue_ms=1000 deser_ms=2 prove_ms=50000",
            ),
        ]
    )


def test_several_gpus_interleaved_jobs_and_a_failure_in_a_span_naming_its_job() -> None:
    jobs = {p["job"]: p for p in jobs_of(monolithic_two_gpus().encode())}
    assert list(jobs) == ["j1", "j2", "j3"]
    j1, j2, j3 = jobs["j1"], jobs["j2"], jobs["j3"]
    assert (j1["worker"], j1["gpu"], j1["queue_ms"], j1["prove_ms"]) == (0, 2, 1000, 50000)
    assert (j2["worker"], j2["gpu"], j2["total_ms"], j2["outcome"]) == (1, 3, 10500, "completed")
    # the third-party line in j1's span, braces, semicolons and `job dequeued` in its message,
    # did not dequeue j1 again
    assert j1["dequeued"] == "2026-03-16T09:00:02+00:00"
    assert (j3["outcome"], j3["error"]) == ("failed", "CUDA error {code: 2; out of memory}")
    assert (j3["queue_ms"], j3["prove_ms"], j3["ended"]) == (
        9000,
        None,
        "2026-03-16T09:00:13+00:00",
    )


def test_journald_prefixes_without_colour_give_the_same_jobs() -> None:
    plain = monolithic_two_gpus()
    prefixed = "".join(f"Mar 16 09:12:37 gpu-host-1 cuzk[41231]: {x}\n" for x in plain.splitlines())
    assert jobs_of(prefixed.encode()) == jobs_of(plain.encode())


def test_a_journal_without_the_tracing_time_takes_the_prefix_clock() -> None:
    lines = [
        "Mar 16 09:12:37 host cuzk[41231]:  INFO cuzk_core::scheduler: job enqueued job_id=a "
        "proof_kind=porep-c2",
        "Mar 16 09:12:38.250000 host cuzk[41231]:  INFO cuzk_core::scheduler: job dequeued for "
        "proving job_id=a proof_kind=porep-c2",
    ]
    (job,) = jobs_of(("\n".join(lines) + "\n").encode())
    year = job["enqueued"][:4]
    assert job["enqueued"] == f"{year}-03-16T09:12:37"
    assert job["dequeued"] == f"{year}-03-16T09:12:38.250000"
    assert (job["queue_ms"], job["outcome"]) == (1250, "unfinished")


def test_failures_without_a_job_id_go_to_the_latest_dequeued_open_job_of_their_kind() -> None:
    sched = "cuzk_core::scheduler"
    fail = "synth_single{proof_kind=porep-c2}: cuzk_core::engine: " + REQUIRES
    data = "".join(
        [
            line(
                "00:00.000000",
                "INFO",
                "cuzk_core::engine: starting cuzk engine pipeline_enabled=true",
            ),
            line(
                "00:01.000000",
                "INFO",
                f"{sched}: job dequeued for proving job_id=p1 proof_kind=porep-c2",
            ),
            line(
                "00:01.000010",
                "INFO",
                f"{sched}: job dequeued for proving job_id=w1 proof_kind=winning-post",
            ),
            line(
                "00:01.000020",
                "INFO",
                f"{sched}: job dequeued for proving job_id=p2 proof_kind=porep-c2",
            ),
            line("00:01.000030", "ERROR", fail),
            line("00:01.000040", "ERROR", "cuzk_core::engine: something without a job"),
        ]
    )
    jobs = {p["job"]: p["outcome"] for p in jobs_of(data.encode())}
    assert jobs == {"p1": "unfinished", "w1": "unfinished", "p2": "failed"}
    doc = report_dict(build(data.encode()))
    # one failed, two still open: not every job failed
    assert doc["summary"]["no_timeline_reason"] == "no_timeline"
    assert doc["summary"]["first_job_error"] == REQUIRES


def test_a_line_cut_short_at_the_end_stays_unread_and_any_chunking_reads_the_same() -> None:
    data = MONOLITHIC.read_bytes()
    whole = jobs_of(data)
    assert jobs_of(data, chunk=100) == whole
    assert jobs_of(data, chunk=7) == whole
    cut = data[: data.rindex(b"proof completed successfully") + 20]
    last = jobs_of(cut)[2]
    assert (last["job"], last["outcome"], last["ended"]) == (
        "64f3c45d-14d9-4ad3-83c6-265f55d53086",
        "unfinished",
        None,
    )


def test_a_retry_of_a_job_id_is_a_second_attempt() -> None:
    sched = "cuzk_core::scheduler"
    data = "".join(
        line(t, level, rest)
        for t, level, rest in [
            ("00:01.000000", "INFO", f"{sched}: job enqueued job_id=r proof_kind=porep-c2"),
            ("00:01.000010", "INFO", f"{sched}: job dequeued for proving job_id=r"),
            ("00:02.000000", "ERROR", 'prove_porep_c2{job_id="r"}: cuzk_core::prover: bad input'),
            ("00:03.000000", "INFO", f"{sched}: job enqueued job_id=r proof_kind=porep-c2"),
        ]
    )
    jobs = jobs_of(data.encode())
    assert [(p["job"], p["outcome"], p["error"]) for p in jobs] == [
        ("r", "failed", "bad input"),
        ("r (attempt 2)", "unfinished", None),
    ]


def test_the_scanner_holds_no_overlong_line_and_keeps_no_control_byte() -> None:
    scanner = TracingScanner()
    scanner.feed(b"x" * (3 << 20))  # no newline: skipped, never held whole
    scanner.feed(b"job enqueued job_id=lost\n")
    evil = line("00:01.000000", "ERROR", 'prove_porep_c2{job_id="e"}: t: boom\x1b]0;owned\x07')
    scanner.feed(evil.encode())
    (job,) = scanner.result().jobs
    assert job.job == "e" and job.error is not None
    assert "\x1b" not in job.error and "\x07" not in job.error


# -- the text report and the viewer ----------------------------------------------------------


def test_the_text_report_lists_the_jobs_in_place_of_the_empty_gpu_tables() -> None:
    out = run(str(MONOLITHIC), "--report").stdout.decode()
    assert "GPU utilization" not in out and "Gaps:" not in out and "Largest" not in out
    assert "Jobs, as the tracing lines tell them" in out
    assert "proofs 5 completed / 5 started" in out
    rows = [x.split() for x in out.splitlines() if x.strip().endswith("completed")]
    assert [r[1:4] for r in rows] == [
        ["porep-c2", "0ms", "53.4s"],
        ["porep-c2", "1m04s", "1m25s"],
        ["porep-c2", "2m29s", "57.6s"],
        ["window-post", "1m01s", "2.26s"],
        ["winning-post", "52.8s", "8.07s"],
    ]
    # piped, an id is whole (a reader greps it); on a terminal, cut in the middle to fit
    assert rows[0][0] == "47b59677-41ff-40d4-9b37-9a846f884a43"
    import io

    from rich.console import Console

    from parsers.load import read_log
    from tui.report import print_report

    screen = io.StringIO()
    print_report(read_log(MONOLITHIC), Console(file=screen, width=120, force_terminal=True))
    assert "47b59677-41f…a846f884a43" in screen.getvalue()
    assert "47b59677-41ff-40d4-9b37-9a846f884a43" not in screen.getvalue()
    out = run(str(PIPELINE_FAILED), "--report").stdout.decode()
    failed = [x for x in out.splitlines() if f"failed: {REQUIRES}" in x]
    assert len(failed) == 6
    assert "every job failed (6 jobs" in out


async def _lanes_read(tmp_path: Path, log: Path, size: tuple[int, int]) -> tuple[list[str], int]:
    """The viewer's lane rows once it has read `log` whole (as followed), and its proofs."""
    from test_viewer import lane_text, live_app, until_finished

    from tui.follow import FileSource

    path = tmp_path / log.name
    path.write_bytes(log.read_bytes())
    app = live_app(FileSource(path), False, path)
    async with app.run_test(size=size) as pilot:
        await until_finished(app, pilot)
        await pilot.pause()
        rows, proofs = lane_text(app), len(app.model.proofs)
    app.live.source.close()  # type: ignore[union-attr]
    return rows, proofs


async def test_the_viewer_shows_the_traced_proofs_and_says_why_there_are_no_gpu_lanes(
    tmp_path: Path,
) -> None:
    from test_viewer import SIZE, SMALL

    for log, size in ((PIPELINE_FAILED, SMALL), (MONOLITHIC, SIZE)):
        rows, count = await _lanes_read(tmp_path, log, size)
        text = "\n".join(rows)
        assert "gpu0" not in text and "synth" not in text
        # the axis, the sentence on two rows, then the proofs lane
        assert rows[4].startswith("proofs")
        proofs = [r for r in rows[4:] if r.strip()]
        if log is PIPELINE_FAILED:
            assert "the pipeline was enabled but every job failed" in rows[2]
            # jobs a few ms apart share a cell: each proofs row ends in ✗, none runs
            assert count == 6 and len(proofs) == 3
            assert all("✗" in r for r in proofs)
            assert "┫" not in text and "▶" not in text
        else:
            assert "pipeline disabled" in rows[2]
            # the 2 s WindowPoSt is two cells at this zoom: drawn ┣┫, its ends only
            assert sum(r.count("┫") for r in proofs) == 5 and "━━" in text
            assert any("┣┫" in r for r in proofs)
            assert "▶" not in text and "✗" not in text
            assert "47b59677-41f…a846f884a43" in text


async def test_the_sentence_in_place_of_the_lanes_is_whole_at_80_columns(tmp_path: Path) -> None:
    """A log without TIMELINE lines at 80x24: the sentence saying why had two rows and was
    cut (`… 5 of 5 job…`); it takes the rows it needs (three), the proofs lane under it."""
    from test_viewer import SMALL

    rows, _ = await _lanes_read(tmp_path, MONOLITHIC, SMALL)
    said = " ".join(r.strip() for r in rows[2:5])
    assert said.endswith("5 of 5 jobs completed (from the tracing lines)"), said
    assert "…" not in said and rows[5].startswith("proofs")


def test_the_proof_view_of_a_job_without_timeline_says_what_its_tracing_lines_tell() -> None:
    """`/98` on a monolithic log: `0 partitions`, an empty partition table and `Its gaps …
    none`, though the report's jobs table gives its queue (1m04s) and prove (1m25s) times.
    The proof view says those, and that the log has no partition, GPU interval or gap."""
    import io

    from rich.console import Console

    from parsers.durations import duration
    from parsers.load import read_log
    from tui.find import describe_proof, find_jobs

    model = read_log(MONOLITHIC)
    for traced in model.traced_jobs:
        found = find_jobs(model, traced.job[:8])
        assert found, traced.job
        out = io.StringIO()
        Console(file=out, width=80).print(describe_proof(model, found[0]))
        text = " ".join(out.getvalue().split())
        assert "partition" not in text.split("This log")[0] and "Its gaps" not in text
        assert traced.outcome in text
        for ms in (traced.queue_ms, traced.prove_ms):
            assert ms is not None
            assert duration(ms) in text, (duration(ms), text)
