"""Durations, offsets, counts and wall-clock times as people read them: one formatter."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from parsers.durations import duration, offset


@pytest.mark.parametrize(
    "ms,text,cell,span,age",
    [
        (0.25, "0 ms", "0ms", "250µs", "0s"),
        (812, "812 ms", "812ms", "812ms", "0s"),
        (3410, "3.41 s", "3.41s", "3.41s", "3s"),
        (12_345, "12.35 s", "12.3s", "12.3s", "12s"),
        (245_000, "4m05s", "4m05s", "4m05s", "4m05s"),
        (3 * 3_600_000 + 10 * 60_000 + 29_000, "3h10m", "3h10m", "3h10m", "3h10m"),
        # to the nearest second or minute, as shorter ones are (cut, a busy 6m29.605s and an
        # idle 2m05.464s read 6m29s and 2m05s beside their span 8m35.069s)
        (389_605, "6m30s", "6m30s", "6m30s", "6m29s"),
        (125_464, "2m05s", "2m05s", "2m05s", "2m05s"),
        # an age is cut, as below a minute: how long ago, never more than it is
        (3 * 3_600_000 + 10 * 60_000 + 59_000, "3h11m", "3h11m", "3h11m", "3h10m"),
        (3_599_600, "1h00m", "1h00m", "1h00m", "59m59s"),  # not 60m00s
        (3_599_400, "59m59s", "59m59s", "59m59s", "59m59s"),
        (119_600, "2m00s", "2m00s", "2m00s", "1m59s"),
        # halves up, not to even (62.5 s and 63.5 s both up)
        (62_500, "1m03s", "1m03s", "1m03s", "1m02s"),
        (63_500, "1m04s", "1m04s", "1m04s", "1m03s"),
        # what would read 60.00 s or 60.0s is a minute
        (59_999, "1m00s", "1m00s", "60s", "59s"),
        (59_960, "59.96 s", "1m00s", "60s", "59s"),
        (999.6, "1.00 s", "1.00s", "1s", "0s"),
        # a long run: days, not thousands of minutes
        (892_564_177, "10d 07h56m", "10d 07h56m", "10d 07h56m", "10d 07h56m"),
    ],
)
def test_every_style_of_a_duration(ms: float, text: str, cell: str, span: str, age: str) -> None:
    assert duration(ms) == text
    assert duration(ms, "cell") == cell
    assert duration(ms, "span") == span
    assert duration(ms, "age") == age


def test_a_cell_stays_within_six_characters_below_an_hour() -> None:
    for ms in [0, 9, 99, 999, 1000, 9_999, 10_000, 59_999, 60_000, 3_599_999]:
        assert len(duration(ms, "cell")) <= 6, ms


def test_what_is_not_finite_is_a_dash_and_a_negative_keeps_its_sign() -> None:
    assert duration(math.nan) == "–" and offset(math.inf) == "–"
    assert duration(-1500) == "-1.50 s"
    assert offset(-250) == "-0.250s"


@pytest.mark.parametrize(
    "ms,shown",
    [
        (38_375, "38.375s"),
        (80_506, "1m20.506s"),
        (2 * 3_600_000 + 3 * 60_000 + 20_506, "2h03m20.506s"),
        (892_564_177, "10d 07h56m04.177s"),
    ],
)
def test_an_offset_keeps_the_millisecond(ms: float, shown: str) -> None:
    assert offset(ms) == shown


def test_a_count_of_one_is_singular() -> None:
    from parsers.durations import counted

    assert counted(1, "gap") == "1 gap"
    assert counted(0, "gap") == "0 gaps" and counted(2, "gap") == "2 gaps"
    assert counted(3, "proof", "proofs") == "3 proofs"


def test_the_report_says_one_gap_not_one_gaps(tmp_path: Path) -> None:
    import subprocess
    import sys

    log = tmp_path / "one.log"
    log.write_bytes(
        b"TIMELINE,10,GPU_START,j,worker=0,partition=0\n"
        b"TIMELINE,20,GPU_END,j,worker=0,partition=0\n"
        b"TIMELINE,500,GPU_START,j,worker=0,partition=1\n"
        b"TIMELINE,600,GPU_END,j,worker=0,partition=1\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", str(log), "--report"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Largest 1 gap\n" in out and "1 gaps" not in out


def _run_of(tmp_path: Path, second_start_ms: int) -> str:
    import subprocess
    import sys

    log = tmp_path / "days.log"
    end = second_start_ms + 100
    log.write_bytes(
        b"2026-03-16T09:08:44.409318Z  INFO cuzk_core::engine: starting cuzk engine "
        b"pipeline_enabled=true\n"
        b"TIMELINE,10,GPU_START,j,worker=0,partition=0\n"
        b"TIMELINE,20,GPU_END,j,worker=0,partition=0\n"
        + f"TIMELINE,{second_start_ms},GPU_START,j,worker=0,partition=1\n".encode()
        + f"TIMELINE,{end},GPU_END,j,worker=0,partition=1\n".encode()
    )
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", str(log), "--report"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_wall_clock_times_carry_the_date_when_the_run_spans_days(tmp_path: Path) -> None:
    two_days = _run_of(tmp_path, 2 * 86_400_000)
    assert "at 20 ms (2026-03-16 09:08:44.429)" in two_days  # the gap's start, dated
    same_day = _run_of(tmp_path, 60_000)
    assert "at 20 ms (09:08:44.429)" in same_day and "2026-03-16 09:08:44.429" not in same_day


@pytest.mark.parametrize(
    "ms,cut",
    [
        (460_600, "7m40s"),  # a gap that began at 7m40.6s: looked up from 7m41s, missed
        (44_846, "44.84 s"),
        (999.6, "999 ms"),
        (3_599_999, "59m59s"),
        (892_564_177, "10d 07h56m"),
    ],
)
def test_an_instant_is_cut_to_the_unit_at_or_before_it(ms: float, cut: str) -> None:
    assert duration(ms, cut=True) == cut
    assert duration(-ms, cut=True) == "-" + cut
