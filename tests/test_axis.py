"""The time axis's labels: each says its tick's time, as precisely as the step needs, in
the largest unit that fits (hours from the first hour on, never `5880m00s`; days from the
first day on, as the gap list counts them, never `98h00m`)."""

from __future__ import annotations

import itertools
import math
import random
import re

import pytest

from tui.axis import MIN_TICK_CELLS, format_tick, tick_step, ticks
from tui.gantt import MIN_SAMPLE_ULPS, MIN_SCALE

LABEL = re.compile(r"^(?:(\d+)ms|(?:(\d+)d )?(?:(\d+)h)?(?:(\d\d?)m)?(?:(\d+(?:\.\d+)?)s)?)$")


def said_ms(label: str) -> float:
    """The time a label says, in ms."""
    m = LABEL.match(label)
    assert m is not None and label, label
    ms, days, hours, minutes, seconds = m.groups()
    if ms is not None:
        return float(ms)
    if days is not None:
        assert int(days) > 0 and hours is not None and len(hours) == 2, label
    assert hours is None or int(hours) < 24, label
    if minutes is not None:
        assert int(minutes) < 60 or hours is None, label
    if hours is not None:
        assert minutes is not None and int(minutes) < 60, label
    if seconds is not None:
        assert float(seconds) < 60, label  # a minute or more is `1m00s`
    return 1000 * (
        86_400 * int(days or 0)
        + 3600 * int(hours or 0)
        + 60 * int(minutes or 0)
        + float(seconds or 0)
    )


@pytest.mark.parametrize("hours", [0, 0.5, 1, 2.25, 23, 98, 250])
@pytest.mark.parametrize("scale", [1.0, 37.0, 250.0, 1_000.0, 4_000.0, 60_000.0, 900_000.0])
def test_every_label_says_its_ticks_time_at_every_zoom(hours: float, scale: float) -> None:
    t0 = hours * 3_600_000
    marks = ticks(t0, scale, 200)
    assert marks
    for _, t, label in marks:
        assert said_ms(label) == pytest.approx(t, abs=1e-6 * max(t, 1.0)), (label, t)
    # each label fits before the next tick, with a space (two after a label holding one,
    # `2d 02h00m  2d 02h30m`): every one is drawn
    for (cell, _, label), (after, _, _) in itertools.pairwise(marks):
        assert after - cell >= len(label) + (2 if " " in label else 1), (label, after - cell)
    assert all(b - a >= MIN_TICK_CELLS for (a, _, _), (b, _, _) in itertools.pairwise(marks))


def test_hours_carry_minutes_and_seconds_when_the_step_is_under_a_minute() -> None:
    assert format_tick(23 * 3_600_000, 15_000) == "23h00m00s"
    assert format_tick(23 * 3_600_000 + 75_500, 500) == "23h01m15.5s"
    assert format_tick(3_600_000 + 300_000, 300_000) == "1h05m"
    assert format_tick(200_000, 10_000) == "3m20s"


def test_days_are_counted_as_the_gap_list_counts_them() -> None:
    assert format_tick(98 * 3_600_000, 15_000) == "4d 02h00m00s"
    assert format_tick(98 * 3_600_000 + 75_500, 500) == "4d 02h01m15.5s"
    assert format_tick(68 * 3_600_000 + 54 * 60_000, 60_000) == "2d 20h54m"
    assert format_tick(24 * 3_600_000, 43_200_000) == "1d 00h00m"
    # a 10-day run fitted to 110 cells: every label in days, every one drawn
    labels = [label for _, _, label in ticks(0.0, 250 * 3_600_000 / 110, 110)]
    assert labels[0] == "0s" and all(re.fullmatch(r"\d+d 00h00m", x) for x in labels[1:])


def test_labels_that_hold_a_space_are_two_spaces_apart() -> None:
    """`2d 01h30m 2d 02h00m 2d 02h30m` read as six labels: ticks whose labels hold a space
    (days into a run) are far enough apart for two spaces between the labels."""
    for scale in (180_000.0, 30_000 / 13, 2_000.0, 500 / 16):
        marks = ticks(2 * 86_400_000 + 1234.0, scale, 200)
        assert len(marks) >= 3 and all(" " in label for _, _, label in marks)
        for (cell, _, label), (after, _, _) in itertools.pairwise(marks):
            assert after - cell >= len(label) + 2, (scale, label, after - cell)


def test_a_time_is_rounded_before_it_is_split_so_no_second_reads_60() -> None:
    """A time a hair under a minute, an hour or a day read `59m60s`, `23h59m60s`, `60s`:
    rounded to the label's precision after it was split into minutes and seconds."""
    assert format_tick(86_399_999.6, 1000) == "1d 00h00m00s"
    assert format_tick(3_599_999.6, 1000) == "1h00m00s"
    assert format_tick(59_999.6, 1000) == "1m00s"
    assert format_tick(119_999.96, 100) == "2m00.0s"


@pytest.mark.parametrize("seed", range(4))
def test_far_into_the_clock_every_label_says_its_tick_at_any_zoom_the_gantt_allows(
    seed: int,
) -> None:
    """Past 1e12 ms a tick is no longer a whole number of steps (`first + k * step` in
    floats): its label is rounded, never `…m60s`."""
    rng = random.Random(seed)
    for _ in range(300):
        t0 = 10 ** rng.uniform(9, 18)
        scale = max(MIN_SCALE, math.ulp(t0) * MIN_SAMPLE_ULPS) * 10 ** rng.uniform(0, 4)
        for _, t, label in ticks(t0, scale, rng.randint(20, 200)):
            assert said_ms(label) == pytest.approx(t, rel=1e-9, abs=1e-3), (label, t)


def test_ticks_fall_on_times_read_at_a_glance() -> None:
    """A 50 s step put ticks at 1m40s, 2m30s, 3m20s (a 4-minute run opened so): every step
    from a second to a day divides a minute, or is a whole number of minutes."""
    steps = {tick_step(10**e) for e in (x / 20 for x in range(0, 140))}
    for step in steps:
        assert 60_000 % step == 0 or step % 60_000 == 0, step
    labels = [label for _, _, label in ticks(0.0, 250_000 / 110, 110)]
    assert "1m40s" not in labels and "1m00s" in labels, labels
