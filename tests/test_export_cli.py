"""The export options on the command line: the warning of a JSON trace too large for
Perfetto UI, and --from/--to."""

from __future__ import annotations

import csv
import json
import math
import re
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from helpers import shifted_log
from perfetto_decode import decode

from parsers import export
from parsers.builder import LogBuilder
from parsers.durations import duration, offset
from parsers.load import read_log
from parsers.model import LogModel
from parsers.rawlines import LineReader
from parsers.timespec import parse_time, resolve
from tui import cli
from tui.app import make_app
from tui.axis import ticks
from tui.commands import export_visible
from tui.gantt import GanttView
from tui.inspector import when

LOG = str(SAMPLES / "curio-mixed.log")


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "warning" in line]


def test_a_json_trace_past_the_limit_is_written_with_one_line_of_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "t.json"
    assert cli.main([LOG, "--export-trace", str(out)]) == 0
    assert _warnings(capsys.readouterr().err) == []  # a small trace: no word of it
    size = out.stat().st_size
    monkeypatch.setattr(export, "JSON_TRACE_LIMIT_BYTES", size - 1)
    assert cli.main([LOG, "--export-trace", str(out)]) == 0
    (line,) = _warnings(capsys.readouterr().err)
    assert "t.perfetto-trace" in line and "--from/--to" in line and "Perfetto UI" in line
    assert len(json.loads(out.read_text())["traceEvents"]) > 0  # written all the same
    # at the limit itself, and for the protobuf trace, nothing is said
    monkeypatch.setattr(export, "JSON_TRACE_LIMIT_BYTES", size)
    assert cli.main([LOG, "--export-trace", str(out)]) == 0
    monkeypatch.setattr(export, "JSON_TRACE_LIMIT_BYTES", 1)
    assert cli.main([LOG, "--export-trace", str(tmp_path / "t.perfetto-trace")]) == 0
    assert _warnings(capsys.readouterr().err) == []


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("850ms", 850.0),
        ("12.5s", 12_500.0),
        ("3600s", 3_600_000.0),
        ("3m20s", 200_000.0),
        ("1m20.506s", 80_506.0),
        ("90m", 5_400_000.0),
        ("1h05m", 3_900_000.0),
        ("1h05m20s", 3_920_000.0),
        ("2h", 7_200_000.0),
        ("2d 20h54m", 248_040_000.0),
        ("4d 02h00m15.5s", 352_815_500.0),
        ("3d", 259_200_000.0),
        ("3600000", 3_600_000.0),
        ("1234.5", 1234.5),
    ],
)
def test_offsets_are_read_in_the_viewer_s_forms(text: str, ms: float) -> None:
    assert parse_time(text).offset_ms == ms


@pytest.mark.parametrize("hours", [0.01, 0.5, 23.9, 24, 49.7, 98, 250])
def test_every_time_the_viewer_writes_is_read_back(hours: float) -> None:
    """The axis wrote `4d 02h00m` past a day, and the gap list `2d 20h54m`: neither was
    read by --from/--to or the log pane's jump (no `d`). Each is read back as its time."""
    t0 = hours * 3_600_000
    for scale in (1.0, 250.0, 60_000.0, 900_000.0):
        for _, t, label in ticks(t0, scale, 200):
            assert parse_time(label).offset_ms == pytest.approx(t, abs=1e-6 * max(t, 1.0))
    ms = round(t0 + 4_177.25)
    assert parse_time(offset(ms)).offset_ms == ms  # the inspector's, to the millisecond
    # the gap list's and the report's: to 10 ms under a minute, to the minute past an hour
    said = parse_time(duration(ms)).offset_ms
    assert said is not None and abs(said - ms) <= (5 if ms < 60_000 else 60_000)


@pytest.mark.parametrize(
    "args",
    [
        ["--from", "x"],
        ["--from", "1h5"],
        ["--to", "25:00"],
        ["--to", "12:61"],
        ["--from", ""],
        ["--from", "1.2.3s"],
        ["--from", "2026-02-30 10:00"],
        ["--from", "2h", "--to", "1h"],
        ["--from", "10:00:05", "--to", "2026-03-16 09:00"],  # resolved: after --to
        ["--from", "1m", "--to", "1m"],  # an empty window: exported with exit 0 before
        ["--from", "1m", "--to", "60s"],
        ["--from", "5s"],  # no export
    ],
)
def test_a_bad_window_is_one_line_and_exit_2(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export_args = [] if args == ["--from", "5s"] else ["--export-trace", str(tmp_path / "t.json")]
    assert cli.main([LOG, *export_args, *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize(
    ("window", "said"),
    [
        (["--from", "100h"], "--from 100h is after the log's end"),
        (["--from", "10m", "--to", "20m"], "--from 10m is after the log's end"),
        (["--to", "0"], "--to 0 is before the log's start"),
    ],
)
@pytest.mark.parametrize("target", ["t.json", "t.perfetto-trace", "csv"])
def test_a_window_the_run_never_reaches_exports_nothing_and_says_so(
    window: list[str], said: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An export of a window outside the run held only headers and metadata, with exit 0:
    a user took it for a good export. It is refused, with the run's own span."""
    flag = "--export-csv" if target == "csv" else "--export-trace"
    assert cli.main([LOG, flag, str(tmp_path / target), *window]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and "the log runs" in err
    # in the clock the user typed (an offset, as the time axis writes it), the wall's beside
    assert re.search(r"the log runs [0-9][0-9hm.]*s( \(|\b).* to [0-9][0-9hm.]*s", err), err
    assert list(tmp_path.iterdir()) == []


def test_a_wall_clock_time_needs_the_engine_s_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    no_anchor = str(SAMPLES / "p9-c6.log")
    assert cli.main([no_anchor, "--export-trace", str(tmp_path / "t.json"), "--from", "09:00"]) == 2
    assert "does not say when the engine started" in capsys.readouterr().err
    # two logs, one without a wall clock: the error says which
    two = [str(SAMPLES / "journal-2gpu.log"), no_anchor]
    assert cli.main([*two, "--export-trace", str(tmp_path / "t.json"), "--from", "09:33"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not on one wall clock (no wall clock in p9-c6.log)" in err
    assert "journal-2gpu.log" not in err
    # compared, each run from its own start: not their clocks' zones (it said so before)
    compared = ["--compare", two[0], str(SAMPLES / "curio-mixed.log")]
    assert cli.main([*compared, "--export-trace", str(tmp_path / "t.json"), "--from", "09:33"]) == 2
    err = capsys.readouterr().err
    assert "not on one wall clock (each run placed from its own start)" in err


def test_a_wall_clock_window_is_the_offsets_of_those_moments(tmp_path: Path) -> None:
    model = read_log(Path(LOG))
    anchor = model.wall_anchor
    assert anchor is not None
    lo = anchor + timedelta(seconds=30)
    hi = anchor + timedelta(seconds=95, milliseconds=250)
    by_clock, by_offset = tmp_path / "clock.json", tmp_path / "offset.json"
    clock = ["--from", lo.strftime("%H:%M:%S"), "--to", hi.strftime("%H:%M:%S.%f")[:-3]]
    assert cli.main([LOG, "--export-trace", str(by_clock), *clock]) == 0
    start_ms = (lo - anchor) / timedelta(milliseconds=1) - lo.microsecond / 1000
    shown = hi.replace(microsecond=hi.microsecond // 1000 * 1000)  # to the ms, as given
    end_ms = (shown - anchor) / timedelta(milliseconds=1)
    assert resolve(parse_time(clock[1]), anchor) == start_ms
    offsets = ["--from", repr(start_ms), "--to", repr(end_ms)]
    assert cli.main([LOG, "--export-trace", str(by_offset), *offsets]) == 0
    assert by_clock.read_bytes() == by_offset.read_bytes()
    # a time of day is the first one after the start (--to: after --from); a date pins it
    assert resolve(parse_time(anchor.strftime("%H:%M")), anchor) > 23 * 3_600_000
    day = anchor.strftime("%Y-%m-%d %H:%M:%S")
    assert resolve(parse_time(day), anchor) == -anchor.microsecond / 1000


def _days_in(days: int) -> tuple[LogModel, datetime]:
    """The sample's model, its stamps moved `days` days (and 20 hours) on, and its anchor."""
    data = shifted_log(Path(LOG), days * 86_400_000 + (20 * 3_600_000 if days else 0))
    builder = LogBuilder(source="days")
    builder.feed(data)
    model = builder.build()
    assert model.wall_anchor is not None
    return model, model.wall_anchor


@pytest.mark.parametrize("days", [0, 1, 2])
def test_a_wall_time_the_screens_show_is_read_back_as_its_moment(days: int) -> None:
    """Days into a run whose events all fall on one day, the inspector showed `05:31:51.255`
    without the date: --from read it as its first moment after the engine's start, days
    before the event, and exported the whole log. A wall time is shown with its date unless
    the engine's start and every event are on one day, so that what is shown reads back as
    the moment it shows."""
    model, anchor = _days_in(days)
    lo, hi = model.time_range
    assert (anchor + timedelta(milliseconds=lo)).date() == (
        anchor + timedelta(milliseconds=hi)
    ).date()
    for ms in np.linspace(lo, hi, 7).tolist():
        shown = model.wall_text(ms)
        assert shown is not None and (" " in shown) == (days > 0), shown
        assert resolve(parse_time(shown), anchor) == pytest.approx(ms, abs=1.0)


@pytest.mark.parametrize("days", [0, 2])
def test_a_time_copied_whole_from_the_inspector_or_the_report_is_read_back(days: int) -> None:
    """The inspector writes `35.510s (09:31:51.366)` and the report's gaps `at 44.94 s
    (09:32:00.796)`: copied whole, --from refused them. The moment is the wall-clock half's,
    once the offset agrees with it to its last digit (the report's is rounded)."""
    model, anchor = _days_in(days)
    lo, hi = model.time_range
    for ms in np.linspace(lo, hi, 7).round(3).tolist():
        wall = model.wall_text(ms)
        assert wall is not None
        for shown, digit in ((when(model, ms), 1.0), (f"{duration(ms)} ({wall})", 60_000.0)):
            spec = parse_time(shown)
            assert spec.wall is not None and spec.digit_ms <= digit, shown
            assert resolve(spec, anchor) == pytest.approx(ms, abs=1.0), shown
    # without a clock to place it on, the offset is taken
    assert resolve(parse_time("35.510s (09:31:51.366)"), None) == 35_510.0


def test_a_time_copied_from_the_inspector_of_several_logs_is_read_back() -> None:
    """With several logs on the wall clock, each log's clock is whole milliseconds from the
    all-hosts one and the wall time shown is cut to the millisecond: most times copied from
    the inspector (154 of 182 gap edges of three samples) were refused as halves that
    disagree. They are read back as the offset shown."""
    from parsers.hosts import merge

    names = ["curio-mixed.log", "journal-2gpu.log", "p12-gw2-merged.log"]
    merged = merge([read_log(SAMPLES / n) for n in names], names).model
    anchor = merged.wall_anchor
    assert anchor is not None
    gaps = merged.gaps
    assert len(gaps) > 50
    for k in range(len(gaps)):
        for ms in (float(gaps.start[k]), float(gaps.end[k])):
            shown = when(merged, ms, int(gaps.gpu[k]))
            assert "(" in shown
            assert resolve(parse_time(shown), anchor) == ms, shown
    assert parse_time("at 44.94 s (09:34:50.985)").offset_ms == 44_940.0  # the report's


def test_the_halves_of_a_time_that_disagree_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = read_log(Path(LOG))
    anchor = model.wall_anchor
    assert anchor is not None
    ms = 35_510.0
    wall = model.wall_text(ms)
    assert wall is not None
    later = (anchor + timedelta(milliseconds=ms + 5)).strftime("%H:%M:%S.%f")[:-3]
    target = tmp_path / "t.json"
    assert cli.main([LOG, "--export-trace", str(target), "--from", f"35.510s ({later})"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"cuzk-tui: error: '35.510s ({later})': 35.510s into this log is {wall}, not {later} "
        "(give one of the two)\n"
    )
    for bad in ("35.510s (x)", "09:31 (09:31:51.366)", "(09:31)", "35s (1s)"):
        assert cli.main([LOG, "--export-trace", str(target), "--from", bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "an offset and its wall-clock time" in err, bad
    assert not target.exists()
    assert cli.main([LOG, "--export-trace", str(target), "--from", f"35.510s ({wall})"]) == 0


def test_a_wall_clock_time_on_a_log_whose_runs_have_their_own_clocks_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log whose daemon restarted, its runs on clocks of their own (here a cut line's
    stamp starts a second run): a wall-clock --from was refused as if the log did not say
    when the engine started, which the screens showed it does, and the error quoted the
    time with Python's escapes for its no-break space."""
    data = shifted_log(SAMPLES / "journal-2gpu.log")
    log = tmp_path / "days.log"
    log.write_bytes(data)
    model = read_log(log)
    assert model.run_lines is not None and len(model.run_lines) == 2
    assert model.wall_anchor is None and model.wall_bases
    target = str(tmp_path / "csv")
    assert cli.main([str(log), "--export-csv", target, "--from", "2026-03-19\u00a005:32"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "cuzk-tui: error: '2026-03-19 05:32' is a wall-clock time, and the daemon restarted in "
        "this log (2 runs, one after another on the time axis, each on its own clock)"
    )
    assert not (tmp_path / "csv").exists()
    # a log with no wall clock at all says so, as before
    assert cli.main([str(SAMPLES / "p9-c6.log"), "--export-csv", target, "--from", "09:35"]) == 2
    assert "does not say when the engine started" in capsys.readouterr().err


def test_a_time_of_day_taken_on_the_next_day_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--to before --from on their day is a window across midnight, or --from and --to
    typed the wrong way round: the export is written, and a note says which day --to was
    taken on and how long the window is. A --from before the engine's start is the next
    day's, after the log's end: the error says so."""
    anchor = read_log(Path(LOG)).wall_anchor
    assert anchor is not None
    lo, hi = anchor + timedelta(seconds=95), anchor + timedelta(seconds=30)
    window = ["--from", f"{lo:%H:%M:%S}", "--to", f"{hi:%H:%M:%S}"]
    assert cli.main([LOG, "--export-csv", str(tmp_path / "csv"), *window]) == 0
    err = capsys.readouterr().err.splitlines()
    next_day = (hi + timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    assert err[0] == (
        f"cuzk-tui: note: --to {hi:%H:%M:%S} comes before --from {lo:%H:%M:%S} on its day: "
        f"taken on the next day, {next_day} (a window of {duration(86_400_000 - 65_000)})"
    )
    assert err[1].startswith("cuzk-tui: wrote intervals.csv")
    # the right way round, or offsets: no note
    window = ["--from", f"{hi:%H:%M:%S}", "--to", f"{lo:%H:%M:%S}"]
    assert cli.main([LOG, "--export-csv", str(tmp_path / "csv"), *window]) == 0
    assert "note" not in capsys.readouterr().err
    early = anchor - timedelta(minutes=5)
    assert cli.main([LOG, "--export-csv", str(tmp_path / "early"), "--from", f"{early:%H:%M}"]) == 2
    said = capsys.readouterr().err
    taken = (early + timedelta(days=1)).strftime("%Y-%m-%d %H:%M:00")
    assert f"--from {early:%H:%M} (taken on the next day, {taken}) is after the log's end" in said
    assert not (tmp_path / "early").exists()


def test_the_report_s_engine_start_copied_whole_is_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main([LOG, "--report"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "engine started" in x)
    said = line.split("engine started ", 1)[1]
    assert said.endswith(" UTC")
    anchor = read_log(Path(LOG)).wall_anchor
    assert anchor is not None
    at = -(anchor.microsecond % 1000) / 1000  # the report writes the start to the ms
    assert resolve(parse_time(said), anchor) == at
    stamp = said.removesuffix(" UTC").replace(" ", "T") + "Z"  # as a tracing stamp writes it
    assert resolve(parse_time(stamp), anchor) == at
    clock = said.split(" ")[1]
    assert resolve(parse_time(f"{clock} UTC"), anchor) == resolve(parse_time(clock), anchor)
    # a journal on its local time: a time said in UTC is not the log's, and refused
    local = anchor.replace(tzinfo=None)
    with pytest.raises(ValueError, match="journal's local time"):
        resolve(parse_time(said), local)
    assert resolve(parse_time(said.removesuffix(" UTC")), local) == at
    # as the inspector writes it (no-break spaces), and copied from the terminal
    for glued in (said.replace(" ", "\u00a0"), said.replace(" ", "  ")):
        assert resolve(parse_time(glued), anchor) == at
    days = "2d\u00a020h54m29.258s"
    assert parse_time(days).offset_ms == parse_time("2d 20h54m29.258s").offset_ms
    for zone in (" GMT", "+00:00", "-0000", "+0000", " +00:00"):
        assert resolve(parse_time(said.removesuffix(" UTC") + zone), anchor) == at
    for bad in ("5m UTC", "UTC", "12:30 CET", "2026-03-16Z", f"{clock}+01:00"):
        with pytest.raises(ValueError, match="not a"):
            parse_time(bad)


def test_a_window_in_utc_exports_as_its_offsets(tmp_path: Path) -> None:
    anchor = read_log(Path(LOG)).wall_anchor
    assert anchor is not None
    lo, hi = anchor + timedelta(seconds=30), anchor + timedelta(seconds=95)
    said = [t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] for t in (lo, hi)]
    in_utc, as_given = tmp_path / "utc.json", tmp_path / "given.json"
    window = ["--from", f"{said[0]} UTC", "--to", f"{said[1]} UTC"]
    assert cli.main([LOG, "--export-trace", str(in_utc), *window]) == 0
    assert cli.main([LOG, "--export-trace", str(as_given), "--from", said[0], "--to", said[1]]) == 0
    assert in_utc.read_bytes() == as_given.read_bytes()


async def test_from_to_cut_as_the_palette_s_visible_range_export(tmp_path: Path) -> None:
    model = read_log(Path(LOG))
    app = make_app(model, LineReader(path=Path(LOG)), screenshot_dir=tmp_path / "shots")
    (tmp_path / "shots").mkdir()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("plus", "plus", "plus", "right", "right")
        export_visible(app)
        view = app.query_one(GanttView)
        # the view's range to whole ms (the palette's window, as its file's name says)
        t0 = math.floor(view.t0)
        t1 = math.ceil(view.t0 + view.timeline_width * view.scale)
    (palette,) = (tmp_path / "shots").glob("cuzk-trace-*.json")
    assert palette.name.endswith(f"-{t0}-{t1}ms.json")
    assert 0 < t0 < t1 < model.time_range[1]
    for suffix in (".json", ".perfetto-trace"):
        out = tmp_path / f"cli{suffix}"
        assert cli.main([LOG, "--export-trace", str(out), "--from", str(t0), "--to", str(t1)]) == 0
    assert (tmp_path / "cli.json").read_bytes() == palette.read_bytes()
    # the protobuf trace of the window holds the same slices
    events = json.loads(palette.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert slices and len(decode((tmp_path / "cli.perfetto-trace").read_bytes()).slices) == len(
        slices
    )


def test_from_to_keep_the_csv_rows_that_overlap_the_window(tmp_path: Path) -> None:
    model = read_log(Path(LOG))
    lo, hi = model.time_range
    t0, t1 = lo + (hi - lo) / 3, lo + (hi - lo) / 2
    whole, part = tmp_path / "whole", tmp_path / "part"
    assert cli.main([LOG, "--export-csv", str(whole)]) == 0
    assert cli.main([LOG, "--export-csv", str(part), "--from", repr(t0), "--to", repr(t1)]) == 0

    def rows(folder: Path, name: str) -> list[dict[str, str]]:
        with (folder / name).open(newline="") as fh:
            return list(csv.DictReader(fh))

    kept = rows(part, "phases.csv")
    expected = [
        r for r in rows(whole, "phases.csv") if float(r["end"]) >= t0 and float(r["start"]) < t1
    ]
    assert kept == expected and 0 < len(kept) < len(rows(whole, "phases.csv"))
    gaps = [r for r in rows(whole, "gaps.csv") if float(r["end"]) >= t0 and float(r["start"]) < t1]
    assert rows(part, "gaps.csv") == gaps
    # the busy split is the window's: less busy time than the whole run's
    (w,) = rows(whole, "busy_split.csv")[:1]
    (p,) = rows(part, "busy_split.csv")[:1]
    assert 0 < float(p["timeline_busy_ms"]) < float(w["timeline_busy_ms"])


def test_each_csv_row_ends_in_a_newline_that_awk_splits_cleanly(tmp_path: Path) -> None:
    """The rows ended in RFC 4180's `\\r\\n`: `awk -F, '{print $NF}'` then printed each last
    cell with a `\\r` on it (`== "0"` never true). Each row now ends in `\\n` alone."""
    folder = tmp_path / "csv"
    assert cli.main([LOG, "--export-csv", str(folder)]) == 0
    for name in ("intervals.csv", "phases.csv", "gaps.csv", "proofs.csv", "busy_split.csv"):
        raw = (folder / name).read_bytes()
        assert raw.endswith(b"\n") and b"\r" not in raw, name
        with (folder / name).open(newline="") as fh:
            rows = list(csv.reader(fh))
        assert len(rows) == raw.count(b"\n") > 1, name  # one row a line, cells unbroken


def test_a_gap_beside_a_whole_job_names_no_partition(tmp_path: Path) -> None:
    """A WindowPoSt job is proved whole: its side of a gap is `JOB w0`, as the gap list
    writes it (the trace wrote `p None` into it), the same in the JSON and protobuf traces."""
    model = read_log(SAMPLES / "curio-mixed.log")
    whole_jobs = {
        side.job for g in model.gaps for side in (g.before, g.after) if side.partition is None
    }
    assert whole_jobs  # the sample has them
    export.write_trace(model, tmp_path / "t.json")
    sides = [
        e["args"][key]
        for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]
        if e.get("cat") == "gap"
        for key in ("before", "after")
    ]
    assert not [s for s in sides if "None" in s]
    assert any(s.split(" w")[0] in whole_jobs and " p" not in s.split(" w")[-1] for s in sides)


async def test_the_palette_export_of_the_whole_view_names_the_window_it_holds(
    tmp_path: Path,
) -> None:
    """The whole run in view has a margin before its first event: the file's name said
    `0-289283ms` while its window_ms began at -1,406 ms. The window is the run's part in
    view, and the name says its times."""
    model = read_log(Path(LOG))
    app = make_app(model, LineReader(path=Path(LOG)), screenshot_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        assert view.t0 < model.time_range[0]  # the margin
        export_visible(app)
    (path,) = tmp_path.glob("cuzk-trace-*.json")
    lo, hi = json.loads(path.read_text())["otherData"]["window_ms"]
    assert (lo, hi) == model.time_range
    assert path.name.endswith(f"-{round(lo)}-{round(hi)}ms.json")


async def test_the_palette_export_of_a_log_with_no_event_writes_nothing(tmp_path: Path) -> None:
    """An empty log's time range is a placeholder (0-1 ms): no trace of it is written."""
    model = LogBuilder(source="empty.log").snapshot()
    app = make_app(model, LineReader(data=b""), screenshot_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        export_visible(app)
        await pilot.pause()
        said = [n.message for n in app._notifications]
    assert list(tmp_path.iterdir()) == []
    assert any("no event to export" in m for m in said)


async def test_the_palette_export_s_name_writes_the_same_trace_from_the_command_line(
    tmp_path: Path,
) -> None:
    """Zoomed in, the palette wrote `…-139938-234834ms.json` with window_ms [139938.405,
    234833.595]: `--from 139938 --to 234834` gave a trace 31 events apart. The window is
    in whole ms, the name's."""
    model = read_log(Path(LOG))
    app = make_app(model, LineReader(path=Path(LOG)), screenshot_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("plus", "plus", "right")
        await pilot.pause()
        view = app.query_one(GanttView)
        assert view.t0 != round(view.t0)  # the view is not on whole ms
        export_visible(app)
    (path,) = tmp_path.glob("cuzk-trace-*.json")
    m = re.search(r"-(\d+)-(\d+)ms\.json$", path.name)
    assert m is not None
    t0, t1 = m.group(1), m.group(2)
    again = tmp_path / "again.json"
    assert cli.main([LOG, "--export-trace", str(again), "--from", t0, "--to", t1]) == 0
    palette, command = (json.loads(p.read_text()) for p in (path, again))
    assert palette["otherData"]["window_ms"] == [int(t0), int(t1)]
    assert palette["traceEvents"] == command["traceEvents"]


@pytest.mark.parametrize(
    ("log", "window", "kernel"),
    [
        # a log begun at a GPU_END (tailed): its one interval has no segment, nor a start
        # that its phases could be known from
        (b"TIMELINE,9,GPU_END,a,worker=0\n", [], ""),
        # a window in which no interval has a segment
        (
            b"TIMELINE,0,GPU_START,a,worker=0,partition=0\n"
            b"TIMELINE,1000000000000,GPU_END,a,worker=0,partition=0\n",
            ["--from", "1s", "--to", "50s"],
            "0",
        ),
    ],
)
def test_intervals_without_a_segment_are_exported(
    tmp_path: Path,
    log: bytes,
    window: list[str],
    kernel: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`cannot write the export: cannot convert float NaN to integer (nothing was
    replaced)`: the phase sums of intervals with no segment at all were integers, and an
    unmeasured phase's NaN could not be written into them."""
    path = tmp_path / "x.log"
    path.write_bytes(log)
    out = tmp_path / "csv"
    assert cli.main([str(path), "--export-csv", str(out), *window]) == 0, capsys.readouterr().err
    with (out / "intervals.csv").open(newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["pre_lock_ms"] == row["lock_wait_ms"] == ""  # no lock line: not measured
    assert row["kernel_ms"] == kernel


def test_a_failed_prove_of_no_length_is_in_the_trace_as_in_the_csv(tmp_path: Path) -> None:
    """A worker's last prove failed with no unlock line (the daemon restarted after it): it
    is drawn to its start (nothing says how long it ran). intervals.csv listed it failed;
    the lanes and the trace had no event for it (one event per interval, docs/analysis.md)."""
    log = tmp_path / "f.log"
    log.write_text(
        "TIMELINE,100,GPU_START,ok,worker=0,partition=0\n"
        "TIMELINE,900,GPU_END,ok,worker=0,partition=0,gpu_ms=800\n"
        "TIMELINE,1000,GPU_START,lost,worker=0,partition=1\n"
        "TIMELINE,1100,GPU_START,other,worker=1,partition=0\n"
        "TIMELINE,2000,GPU_END,other,worker=1,partition=0,gpu_ms=900\n"
        "2026-03-16T09:08:44.409318Z  INFO cuzk_core::engine: starting cuzk engine\n"
        "TIMELINE,10,GPU_START,again,worker=0,partition=0\n"  # the daemon restarted
        "TIMELINE,20,GPU_END,again,worker=0,partition=0,gpu_ms=10\n"
    )
    model = read_log(log)
    export.write_csv(model, tmp_path / "csv")
    with (tmp_path / "csv" / "intervals.csv").open() as f:
        rows = list(csv.DictReader(f))
    failed = [r["job"] for r in rows if r["failed"] == "1"]
    assert failed == ["lost"]
    events = export.trace_document(model)["traceEvents"]
    intervals = {e["args"]["job"]: e for e in events if e.get("cat") == "interval"}
    assert set(intervals) == {r["job"] for r in rows}
    assert intervals["lost"]["name"].endswith("(failed)")
    # at its GPU_START, 900 ms after ok's (the runs are laid out one after the other)
    assert intervals["lost"]["ts"] - intervals["ok"]["ts"] == 900_000
    assert intervals["lost"]["dur"] == 0
    # and its segment of none, as phases.csv lists it
    with (tmp_path / "csv" / "phases.csv").open() as f:
        phases = [r for r in csv.DictReader(f) if r["job"] == "lost"]
    inside = [e for e in events if e.get("cat") == "phase" and e["args"]["job"] == "lost"]
    assert len(phases) == len(inside) == 1 and inside[0]["dur"] == 0


def test_the_trace_counts_intervals_running_where_the_log_ends_in_flight(
    tmp_path: Path,
) -> None:
    """A log cut while proves ran: the trace drew them `(running)` to the log's end, yet its
    `intervals in flight` counter fell to 0 at the last GPU_END (it counted ended intervals
    only), where the header says `+N running` (in flight: started and not ended)."""
    lines = (SAMPLES / "curio-mixed.log").read_bytes().splitlines(keepends=True)
    log = tmp_path / "cut.log"
    log.write_bytes(b"".join(lines[: len(lines) * 2 // 3]))
    model = read_log(log)
    events = export.trace_document(model)["traceEvents"]
    for pid, g in enumerate(model.gpus, 1):
        if not g.in_flight:
            continue
        counter = sorted(
            (e["ts"], e["args"]["intervals"])
            for e in events
            if e.get("ph") == "C" and e["pid"] == pid and e["name"] == "intervals in flight"
        )
        t = model.parts
        mine = (t.gpu == g.gpu) & ~np.isnan(t.gpu_start) & np.isnan(t.gpu_end) & ~t.failed
        # each running one from its start to the log's end (one that starts there has no
        # length: no instant to count it at)
        starts = sorted(float(x) for x in t.gpu_start[mine] if x < model.now_ms)
        assert starts
        for k, start in enumerate(starts, 1):
            at = [v for ts, v in counter if ts <= start * 1000]
            assert at and at[-1] >= k, (g.gpu, start, counter[-4:])
        assert counter[-1] == (model.now_ms * 1000, 0)


@pytest.mark.parametrize(
    ("logs", "window"),
    [
        (["real/pipeline-failed-merged.log"], ["--from", "5m"]),
        (["p12-c15-gw1.log", "CUT:p9-c6.log"], ["--from", "2m", "--to", "3m"]),
    ],
)
def test_a_window_s_proofs_csv_holds_the_proofs_its_trace_holds(
    logs: list[str], window: list[str], tmp_path: Path
) -> None:
    """proofs.csv windowed a proof that did not complete as if it never ended (no GPU_END):
    jobs that failed at 3 s, or a log's proof under way when that log ended at 36 s, were
    in every later window, where the trace (and the proofs lane) end them."""
    paths = []
    for name in logs:
        cut, _, name = name.rpartition(":")
        data = (SAMPLES / name).read_bytes()
        if cut:  # cut before its first GPU line: one proof under way, the log ends
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[: next(k for k, x in enumerate(lines) if b",GPU_" in x)])
        paths.append(tmp_path / Path(name).name)
        paths[-1].write_bytes(data)
    trace, folder = tmp_path / "t.json", tmp_path / "csv"
    args = [*map(str, paths), *window, "--export-trace", str(trace), "--export-csv", str(folder)]
    assert cli.main(args) == 0
    events = json.loads(trace.read_text())["traceEvents"]
    traced = sorted(e["args"]["job"] for e in events if e.get("cat") == "proof")
    with (folder / "proofs.csv").open() as fh:
        listed = sorted(row["job"] for row in csv.DictReader(fh))
    assert listed == traced


def test_a_partition_never_on_a_gpu_has_no_lines_and_no_phases(tmp_path: Path) -> None:
    """A partition queued and never picked up had start_line and end_line 0 (no such line)
    and 0 ms in every phase beside empty lock cells: it has no GPU interval, so no line of
    one and no phase, all empty."""
    path = tmp_path / "x.log"
    path.write_bytes(
        b"TIMELINE,0,SYNTH_START,a,partition=0\n"
        b"TIMELINE,5,SYNTH_END,a,partition=0\n"
        b"TIMELINE,5,GPU_QUEUE,a,partition=0\n"
        b"TIMELINE,6,SYNTH_START,a,partition=1\n"
        b"TIMELINE,9,GPU_PICKUP,a,worker=0,partition=1\n"
        b"TIMELINE,10,GPU_START,a,worker=0,partition=1\n"
        b"TIMELINE,30,GPU_END,a,worker=0,partition=1\n"
    )
    out = tmp_path / "csv"
    assert cli.main([str(path), "--export-csv", str(out)]) == 0
    with (out / "intervals.csv").open(newline="") as fh:
        queued, proved = list(csv.DictReader(fh))
    phases = [k for k in queued if k.endswith("_ms")]
    assert [queued[k] for k in ("start_line", "end_line", *phases)] == [""] * (2 + len(phases))
    assert (proved["start_line"], proved["end_line"]) == ("6", "7")
    assert proved["unknown_ms"] == "20"  # no C++ line: its 20 ms unexplained


def test_phases_csv_names_each_phase_as_the_interval_columns_do(tmp_path: Path) -> None:
    """phases.csv named a phase as the screen does (`pre-lock`, `lock wait`), where
    intervals.csv's columns and the JSON use its key (`pre_lock_ms`, `lock_wait`): a phase's
    rows of an interval, summed, are its column in intervals.csv."""
    model = read_log(SAMPLES / "p12-c15-gw1.log")
    export.write_csv(model, tmp_path / "csv")
    with (tmp_path / "csv" / "intervals.csv").open() as f:
        intervals = {r["index"]: r for r in csv.DictReader(f)}
    sums: dict[tuple[str, str], float] = {}
    with (tmp_path / "csv" / "phases.csv").open() as f:
        for r in csv.DictReader(f):
            key = (r["index"], r["phase"])
            sums[key] = sums.get(key, 0.0) + float(r["ms"])
    phases = {phase for _, phase in sums}
    assert {"pre_lock", "kernel"} <= phases
    checked = 0
    for (index, phase), ms in sums.items():
        cell = intervals[index].get(f"{phase}_ms")
        if phase in ("in_flight", "failed"):
            assert cell is None  # no column: the interval did not end
            continue
        assert cell is not None, phase
        assert ms == pytest.approx(float(cell), abs=0.01)
        checked += 1
    assert checked > 100
