"""Bad input is counted and skipped, never raised."""

from __future__ import annotations

import random
import re
from datetime import datetime
from pathlib import Path

import pytest
from conftest import SAMPLES
from helpers import build

from parsers.builder import LogBuilder
from parsers.load import read_log
from parsers.timespec import parse_time, resolve
from tui import cli


def test_empty_input() -> None:
    model = build(b"")
    assert model.counts.total == 0
    assert len(model.gaps) == 0 and model.proofs == () and model.gpus == ()
    assert model.summary.s_per_proof == 0.0


def test_binary_garbage() -> None:
    rng = random.Random(7)
    data = bytes(rng.randrange(256) for _ in range(200_000))
    model = build(data)
    assert model.counts.total == data.count(b"\n")
    assert model.parts.job.size == 0


def test_invalid_utf8_in_job_id_and_elsewhere() -> None:
    data = (
        b"TIMELINE,10,SYNTH_START,job-\xff\xfe,partition=0\n"
        b"\xc3\x28 not utf-8 at all\n"
        b"TIMELINE,20,GPU_START,job-\xff\xfe,worker=0,partition=0\n"
        b"TIMELINE,30,GPU_END,job-\xff\xfe,worker=0,partition=0,gpu_ms=10\n"
    )
    model = build(data)
    assert model.counts.timeline == 3 and model.counts.other == 1
    assert model.proofs[0].job == "job-\ufffd\ufffd"
    assert model.proofs[0].completed


def test_ten_megabyte_line() -> None:
    data = b"TIMELINE,1,SYNTH_START,j,partition=0\n" + b"x" * 10_000_000 + b"\nCUZK_TIMING: a=1\n"
    model = build(data, [4096] * 3000)
    assert model.counts.other == 1 and model.counts.timeline == 1 and model.counts.cuzk_timing == 1


def test_a_daemon_line_too_long_to_read_is_counted_malformed() -> None:
    # a TIMELINE or timing line past 1 MiB is a line of the daemon's lost, not other text,
    # whether it comes whole in one chunk or held across many, and under a journald prefix
    big = b"x" * 3_000_000
    lines = (
        b"TIMELINE,1,SYNTH_START,j,partition=0\n"
        b"TIMELINE,2,GPU_START,j,worker=0,partition=0," + big + b"\n"
        b"CUZK_TIMING: prep_msm_ms=" + big + b"\n"
        b"CUZK_NTT_H: " + big + b"\n"
        b"hello " + big + b"\n"
        b"TIMELINE,3,SYNTH_END,j,partition=0\n"
    )
    prefix = b"Mar 16 09:08:44 host cuzk[7]: "
    journal = b"".join(prefix + line + b"\n" for line in lines.split(b"\n")[:-1])
    for data in (lines, journal):
        for chunks in (None, [4096] * 3000):
            model = build(data, chunks)
            c = model.counts
            assert (c.timeline, c.malformed, c.other, c.cuzk_timing) == (2, 3, 1, 0), chunks
            assert len(model.parts) == 1


def test_malformed_timeline_lines_are_counted() -> None:
    data = (
        b"TIMELINE,abc,GPU_START,j,worker=0,partition=0\n"  # stamp not a number
        b"TIMELINE,5,NOT_AN_EVENT,j,partition=0\n"
        b"TIMELINE,6\n"  # too short
        b"TIMELINE,7,GPU_START,j,worker=x,partition=0\n"  # worker not a number
        b"TIMELINE,8,SYNTH_START,j,partition=0\n"
    )
    model = build(data)
    assert model.counts.malformed == 4
    assert model.counts.timeline == 1
    assert len(model.parts) == 1


def test_unpaired_events() -> None:
    data = (
        b"TIMELINE,100,GPU_END,orphan,worker=0,partition=0,gpu_ms=5\n"  # end, no start
        b"TIMELINE,150,GPU_PICKUP,failed,worker=0,partition=1\n"  # picked up, never started
        b"TIMELINE,200,GPU_START,a,worker=0,partition=0\n"
        b"TIMELINE,300,GPU_END,a,worker=0,partition=0,gpu_ms=100\n"
        b"TIMELINE,350,GPU_START,open,worker=1,partition=0\n"  # never ends
        b"TIMELINE,400,GPU_START,b,worker=0,partition=0\n"
        b"TIMELINE,500,GPU_END,b,worker=0,partition=0,gpu_ms=100\n"
    )
    live = LogBuilder()
    live.feed(data)
    # while the log grows, an interval that has not ended is running...
    assert live.snapshot().gpus[0].in_flight == 1
    model = build(data)
    (gpu,) = model.gpus
    assert gpu.span == (200, 500)
    assert gpu.busy_ms == 200
    assert [(g.start, g.end) for g in model.gaps] == [(300, 400)]
    # ...and when the log ends it still is: nothing says it failed (the log may have been
    # cut while it ran); the pickup whose worker moved on failed
    assert gpu.in_flight == 1
    by_job = {p.job: p for p in model.proofs}
    assert not by_job["failed"].completed and not by_job["open"].completed
    assert by_job["a"].completed and by_job["b"].completed
    t = model.parts
    failed = [t.job_of(i) for i in range(len(t)) if t.failed[i]]
    assert failed == ["failed"]
    # the daemon restarted after it: then it failed
    restart = b"2026-03-16T09:08:44.409318Z  INFO cuzk_core::engine: starting cuzk engine\n"
    again = build(data + restart + b"TIMELINE,10,GPU_START,c,worker=0,partition=0\n")
    assert again.run_lines is not None and len(again.run_lines) == 2
    first_run = next(g for g in again.gpus if g.gpu == again.gpus[0].gpu)
    assert first_run.in_flight == 0
    t = again.parts
    failed = [t.job_of(i) for i in range(len(t)) if t.failed[i]]
    assert sorted(failed) == ["failed", "open"]


def test_old_engine_formats() -> None:
    data = (
        b"TIMELINE,1,SYNTH_START,wdpost-1000-0-[1 2 3],kind=window-post\n"
        b"TIMELINE,900,SYNTH_END,wdpost-1000-0-[1 2 3],synth_ms=899\n"
        b"TIMELINE,901,CHAN_SEND,wdpost-1000-0-[1 2 3],\n"
        b"TIMELINE,902,GPU_PICKUP,wdpost-1000-0-[1 2 3],worker=0\n"
        b"TIMELINE,903,GPU_START,wdpost-1000-0-[1 2 3],worker=0\n"
        b"TIMELINE,1903,GPU_END,wdpost-1000-0-[1 2 3],worker=0\n"
        b"TIMELINE,5,SYNTH_START,snap-1000-4,snap_partition=3\n"
        b"TIMELINE,2000,CHAN_SEND,snap-1000-4,snap_partition=3\n"
        b"TIMELINE,2100,GPU_START,snap-1000-4,worker=0,snap_partition=3\n"
        b"TIMELINE,2600,GPU_END,snap-1000-4,worker=0,snap_partition=3,gpu_ms=500\n"
    )
    model = build(data)
    assert model.counts.malformed == 0
    by_job = {p.job: p for p in model.proofs}
    wd = by_job["wdpost-1000-0-[1 2 3]"]
    assert (wd.kind, wd.partitions, wd.completed) == ("window-post", 1, True)
    snap = by_job["snap-1000-4"]
    assert snap.kind == "snap-update" and snap.completed
    (gap,) = model.gaps
    assert (gap.start, gap.end, gap.crosses_proof_boundary, gap.cause) == (
        1903,
        2100,
        True,
        "synthesis",
    )
    assert gap.before.partition is None and gap.after.partition == 3


def test_partial_last_line_waits() -> None:
    b = LogBuilder()
    b.feed(b"TIMELINE,1,SYNTH_START,j,partition=0\nTIMELINE,2,SYNTH_E")
    assert b.partial_bytes == len(b"TIMELINE,2,SYNTH_E")
    assert b.snapshot().counts.timeline == 1
    b.feed(b"ND,j,partition=0,synth_ms=1\n")
    assert b.partial_bytes == 0
    model = b.snapshot()
    assert model.counts.timeline == 2
    assert model.parts.synth_end[0] == 2


def test_ansi_and_plain_stdout_give_the_worker_map() -> None:
    plain = (
        b"2026-01-01T00:00:00.000000Z  INFO cuzk_core::engine: "
        b"pipeline GPU worker started worker_id=3 gpu=1 sub_id=1\n"
    )
    ansi = (
        b"\x1b[2m2026-01-01T00:00:00.000000Z\x1b[0m \x1b[32m INFO\x1b[0m "
        b"\x1b[2mcuzk_core::engine\x1b[0m"
        b"\x1b[2m:\x1b[0m pipeline GPU worker started \x1b[3mworker_id\x1b[0m\x1b[2m=\x1b[0m3 "
        b"\x1b[3mgpu\x1b[0m\x1b[2m=\x1b[0m1 \x1b[3msub_id\x1b[0m\x1b[2m=\x1b[0m1\n"
    )
    for data in (plain, ansi):
        b = LogBuilder()
        b.feed(data)
        assert b.worker_gpu == {3: 1}
        assert b.counts.stdout == 1


def test_timeline_lines_cut_by_stdout_lines() -> None:
    """A stdout line (plain or coloured) landing inside a TIMELINE line is taken out of it."""
    plain = (
        b"2026-03-16T09:02:08.472351Z  INFO cuzk_core::engine: "
        b"pipeline GPU worker started worker_id=0 gpu=1 sub_id=0"
    )
    ansi = (
        b"\x1b[2m2026-03-16T09:02:08.472351Z\x1b[0m \x1b[32m INFO\x1b[0m "
        b"\x1b[2mcuzk_core::engine\x1b[0m\x1b[2m:\x1b[0m starting cuzk engine"
    )
    data = (
        b"TIMELINE,10,SYNTH_STA" + ansi + b"\nRT,job-a,partition=0\n"
        b"TIMELINE,20,GPU_ST" + plain + b"\nART,job-a,worker=0,partition=0\n"
        b"TIMELINE,30,GPU_END,job-a,worker=0,partition=0,gpu_ms=10\n"
    )
    model = build(data)
    assert model.counts.spliced == 2
    assert model.counts.timeline == 3 and model.counts.stdout == 2 and model.counts.malformed == 0
    assert model.parts.get(0).gpu_start == 20 and model.parts.get(0).gpu_end == 30
    assert model.gpus[0].gpu == 1  # the spliced stdout line still gave the worker map
    assert model.wall_anchor is not None


def test_a_log_without_gpu_intervals_says_why() -> None:
    from rich.console import Console

    from tui.report import print_report

    data = (
        b"TIMELINE,10,SYNTH_START,job-a,partition=0\n"
        b"TIMELINE,900,SYNTH_END,job-a,partition=0,synth_ms=890\n"
        b"TIMELINE,901,GPU_QUEUE,job-a,partition=0\n"
        b"TIMELINE,902,GPU_PICKUP,job-a,worker=0,partition=0\n"
        b"TIMELINE,70000,SYNTH_START,job-b,partition=0\n"  # a minute on: none in the prover
    )
    console = Console(record=True, width=100)
    print_report(build(data), console)
    assert "CUZK_DISABLE_SPLIT_PROVE" in console.export_text()


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (3, "no GPU interval: no partition reached the GPU queue before the log ends"),
        (4, "no GPU interval: 1 partition queued for a GPU, none picked up before the log ends"),
        (5, "no GPU interval: 1 partition picked up by a GPU worker, none in the prover"),
    ],
)
def test_a_log_cut_before_its_first_gpu_line_is_not_said_to_disable_split_proving(
    lines: int, said: str
) -> None:
    """A daemon in its first synthesis (or a log cut there) has no GPU interval because no
    partition got that far, not because the engine does not print them: the report and the
    header blamed CUZK_DISABLE_SPLIT_PROVE, and the report drew four empty tables."""
    from rich.console import Console

    from tui.header import header_text
    from tui.report import print_report

    # a daemon's own first lines: its GPU worker named (a GPU of the model, no interval)
    data = (
        b"2026-03-16T09:01:32.875441Z  INFO cuzk_core::engine: pipeline GPU worker started "
        b"worker_id=0 gpu=0 sub_id=0\n"
        b"TIMELINE,10,SYNTH_START,job-a,partition=0\n"
        b"TIMELINE,900,SYNTH_END,job-a,partition=0,synth_ms=890\n"
        b"TIMELINE,901,GPU_QUEUE,job-a,partition=0\n"
        b"TIMELINE,902,GPU_PICKUP,job-a,worker=0,partition=0\n"
    )
    model = build(b"".join(data.splitlines(keepends=True)[:lines]))
    console = Console(record=True, width=100)
    print_report(model, console)
    text = console.export_text()
    assert said in text and "SPLIT_PROVE" not in text
    assert "GPU utilization" not in text and "Gaps:" not in text  # no empty table
    assert said in header_text(model, "FINISHED", width=100).plain
    # the log still growing: none yet (a partition picked up enters the prover at once)
    live = LogBuilder(source="t")
    live.feed(b"".join(data.splitlines(keepends=True)[:lines]))
    assert "no GPU interval in this log yet" in header_text(live.snapshot(), "LIVE").plain


def test_a_log_begun_inside_its_only_intervals_says_so_in_place_of_empty_tables() -> None:
    """`tail -n 2` of a log (or `journalctl -f` begun mid-interval): GPU_END lines whose
    GPU_START is before the log. The report drew its four tables empty, with headings."""
    from rich.console import Console

    from tui.header import header_text
    from tui.report import print_report

    data = (
        b"TIMELINE,9,GPU_END,a,worker=0,partition=1\nTIMELINE,10,GPU_END,b,worker=1,partition=1\n"
    )
    model = build(data)
    assert not model.gpus
    said = "no whole GPU interval: the log begins inside its 2 intervals"
    console = Console(record=True, width=100)
    print_report(model, console)
    text = console.export_text()
    assert said in text
    assert "GPU utilization" not in text and "Gaps:" not in text  # no empty table
    assert said in header_text(model, "FINISHED", width=100).plain
    live = LogBuilder(source="t")
    live.feed(data)
    assert "no whole GPU interval yet" in header_text(live.snapshot(), "LIVE").plain
    # its first whole interval: the tables again
    live.feed(
        b"TIMELINE,20,GPU_START,c,worker=0,partition=2\nTIMELINE,30,GPU_END,c,worker=0,partition=2\n"
    )
    assert "no whole GPU interval" not in header_text(live.snapshot(), "LIVE").plain


def test_a_run_captured_with_a_prefix_after_one_without_is_read_as_it_comes() -> None:
    """Two captures put end to end: a run with no line prefix, then a restarted daemon's
    run whose every line carries a container's time stamp. Decided plain from the first
    lines, the reader took the second run's lines for one cut line and held all of them to
    the end: the report failed (`the records were handed over`) and the viewer never showed
    the second run. A prefix before a daemon line is taken off; the run is read as it comes,
    as it is read alone."""
    from cuzksim.config import SimConfig
    from cuzksim.logs import simulate
    from parsers import _core
    from parsers.load import model_of_bytes
    from parsers.report import report_dict

    _, first = simulate(SimConfig(seed=3, proofs=3, gpus=1, gw=1, stdout="ansi"))
    _, second = simulate(SimConfig(seed=4, proofs=3, gpus=1, gw=1, stdout="ansi", capture="docker"))
    assert not first.startswith(b"2026") and second.startswith(b"2026")
    scanner = _core.Scanner(None)
    scanner.feed(first + second)  # no end of input yet: a follower's view
    assert scanner.run_count() == 2
    assert scanner.counts().timeline == second.count(b"TIMELINE,")
    both = model_of_bytes(first + second, "both.log")  # the report's read, handing over
    assert both.restarted and both.summary.proofs_completed == 3 + 3
    alone = report_dict(model_of_bytes(second, "b.log"))
    builder = LogBuilder(source="both.log")
    builder.feed(first + second)
    last = report_dict(builder.build_runs()[-1])
    for key in ("summary", "gpus", "workers"):
        assert last[key] == alone[key], key
    # its first line, read before a second told it was a capture's, counts once more
    for kind in ("timeline", "cuzk_timing", "malformed"):
        assert last["lines"][kind] == alone["lines"][kind], kind
    assert abs(last["lines"]["total"] - alone["lines"]["total"]) <= 1


def test_a_cut_line_is_not_held_past_its_wait_whatever_follows() -> None:
    """Lines each looking like the rest of a cut line with another line cut into it (a
    prefix no capture has, before a TIMELINE line) were all added to the one cut line and
    read only at the end of the input. Past FRAGMENT_WAIT_LINES (16) the cut line is taken
    as it is and the lines come."""
    from parsers import _core

    lines = b"".join(
        b"2026-03-16Tnot-a-time TIMELINE,%d,GPU_START,j%d,worker=0,partition=0\n" % (k, k)
        for k in range(200)
    )
    scanner = _core.Scanner(None)
    scanner.feed(lines)
    assert scanner.counts().timeline >= 200 - 2 * 17
    scanner.finish()
    assert scanner.counts().timeline == 200


def _stamped(year_day: str, zone: str = "Z") -> bytes:
    """tiny.log with its tracing lines' wall clock moved to `year_day` (`9999-12-31`)."""
    text = (SAMPLES / "tiny.log").read_text()
    return re.sub(r"2026-03-16T(\d\d:\d\d:[\d.]+)Z", rf"{year_day}T\1{zone}", text).encode()


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01"])
def test_a_wall_clock_at_the_calendars_ends_is_no_clock(
    day: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log stamped 9999-12-31 is well formed, and its times of day past its first minute
    are past the calendar: the text report, several logs' report and the gap inspector
    ended in an OverflowError's traceback. A clock whose run the calendar cannot hold is
    no clock: the times are offsets, as for a log that gives none."""
    log = tmp_path / "end.log"
    log.write_bytes(_stamped(day))
    model = read_log(log)
    assert model.wall_anchor is None
    assert model.wall_text(model.gaps[0].start) is None
    for args in (["--report"], ["--report", "--json"], [str(SAMPLES / "tiny.log"), "--report"]):
        assert cli.main([str(log), *args]) == 0, args
        out, err = capsys.readouterr()
        assert "Traceback" not in err and "gap" in out, args
    # a wall-clock time asked of such a clock: one line, no traceback
    with pytest.raises(ValueError, match="calendar"):
        resolve(parse_time("23:59:59"), datetime(9999, 12, 31, 23, 59), 5e10)


def test_a_zone_that_moves_a_tracing_time_past_the_calendar_is_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tracing line at 9999-12-31T23:59:59-05:00 is past the calendar in UTC: reading the
    jobs of a log without TIMELINE lines ended in a traceback."""
    text = (SAMPLES / "real" / "monolithic-merged.log").read_text()
    log = tmp_path / "zone.log"
    log.write_text(re.sub(r"2026-[\d-]+T[\d:.]+Z", "9999-12-31T23:59:59.000000-05:00", text))
    for args in (["--report"], ["--report", "--json"]):
        assert cli.main([str(log), *args]) == 0, args
        assert "Traceback" not in capsys.readouterr().err
