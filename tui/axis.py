"""The time axis: tick spacing and labels that stay readable at every zoom."""

from __future__ import annotations

import math

# tick steps in ms: 1, 2, 5 x 10^k up to 20 s, then minute-friendly steps (50 s would put
# ticks at 1m40s, 2m30s, 3m20s: no time a person reads off at a glance)
_STEPS = [m * 10**e for e in range(0, 5) for m in (1, 2, 5) if m * 10**e != 50_000] + [
    15_000,
    30_000,
    60_000,
    120_000,
    300_000,
    600_000,
    900_000,
    1_800_000,
    3_600_000,
    7_200_000,
    10_800_000,
    14_400_000,
    21_600_000,
    43_200_000,
    86_400_000,
]
MIN_TICK_CELLS = 12


def tick_step(scale: float, cells: int = MIN_TICK_CELLS) -> float:
    """The smallest nice step (ms) whose ticks are at least `cells` cells apart."""
    for step in sorted(set(_STEPS)):
        if step / scale >= cells:
            return float(step)
    return float(_STEPS[-1] * math.ceil(cells * scale / _STEPS[-1]))


def _second_decimals(step: float) -> int:
    """Decimals of a seconds value that tell ticks `step` ms apart."""
    decimals = 0
    while decimals < 3 and round(step / 1000, decimals) != step / 1000:
        decimals += 1
    return decimals


def format_tick(ms: float, step: float) -> str:
    """A tick label: `850ms`, `12.5s`, `38.375s`, `3m20s`, `1h05m`, `2d 20h54m`,
    `4d 02h00m15s`: precise enough for the step, in days from the first day on, as the gap
    list, the header and the report count them (parsers/durations.py). The time is rounded
    to the label's precision first and then split, so that a second never reads `60s`."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    if ms < 1000 and step < 1000:
        return f"{sign}{ms:.0f}ms"
    d = _second_decimals(step)
    per_s = 10**d
    ticks_ = round(ms * per_s / 1000)  # whole units of the label's last digit
    if ticks_ < 60 * per_s:
        return f"{sign}{ticks_ / per_s:.{d}f}s"
    minutes, within = divmod(ticks_, 60 * per_s)
    whole, part = divmod(within, per_s)
    seconds = f"{whole:02d}" + (f".{part:0{d}d}" if d else "")
    if minutes < 60:
        return f"{sign}{minutes}m{seconds}s"
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    head = f"{sign}{days}d {hour:02d}h" if days else f"{sign}{hour}h"
    if step < 60_000:
        return f"{head}{minute:02d}m{seconds}s"
    return f"{head}{minute:02d}m"


def label_room(label: str) -> int:
    """The cells a label takes before the next one may begin."""
    return len(label) + (2 if " " in label else 1)


def ticks(t0: float, scale: float, width: int) -> list[tuple[int, float, str]]:
    """(cell, time, label) of every tick in [t0, t0 + width * scale)."""
    if not (math.isfinite(t0) and math.isfinite(scale)) or scale <= 0 or width <= 0:
        return []
    end = t0 + width * scale
    step = tick_step(scale)
    # far into a long run a label is long (`98h00m00.02s`): the ticks move apart until
    # each label fits before the next (a longer step never makes labels longer), two spaces
    # apart when a label holds one (`2d 02h00m  2d 02h30m`, not `2d 02h00m 2d 02h30m`)
    for _ in range(4):
        room = max(label_room(format_tick(t0, step)), label_room(format_tick(end, step)))
        if step / scale >= room:
            break
        step = tick_step(scale, room)
    first = math.ceil(t0 / step) * step
    out: list[tuple[int, float, str]] = []
    # Ticks are counted, not reached by adding the step: near 1e19 ms adding a step to a
    # float changes nothing. Ticks are MIN_TICK_CELLS cells apart, so this many suffice.
    for k in range(width // MIN_TICK_CELLS + 2):
        t = first + k * step
        if t >= end:
            break
        cell = int((t - t0) / scale)
        if 0 <= cell < width and (not out or cell > out[-1][0]):
            out.append((cell, t, format_tick(t, step)))
    return out
