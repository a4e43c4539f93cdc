"""How a duration, an offset, a count and an estimated share are written for people: one
formatter for every screen, the text report and the palette, with days for long runs
(`10d 07h56m`).

A duration drops precision as it grows (`812 ms`, `3.41 s`, `4m05s`, `3h10m`,
`10d 07h56m`); an offset (when something happened, on the run's clock) keeps the
millisecond (`1m20.506s`, `10d 07h56m04.177s`): it is looked up in the log.
"""

from __future__ import annotations

import math
from typing import Literal

DAY_MS = 86_400_000.0
HOUR_MS = 3_600_000.0
MINUTE_MS = 60_000.0

# text: the report's and the viewer's prose (`812 ms`, `3.41 s`); cell: a table cell, in six
# characters up to an hour (`812ms`, `3.41s`, `12.3s`); span: how much time a cell of the
# Gantt shows (`250µs`, `12.5ms`, `1.25s`); age: how long ago, in whole seconds (`12s`);
# tight: text with no space between a figure and its unit (`812ms`, `3.41s`, `2d 20h54m`),
# for prose a narrow window wraps (it glues the day's space: tui/prose.py)
Style = Literal["text", "cell", "span", "age", "tight"]


def _to(ms: float, quantum: float, cut: bool) -> float:
    """`ms` to a whole number of `quantum`s: the nearest (halves up), or the one at or
    before it (`cut`)."""
    steps = ms / quantum
    return quantum * (math.floor(steps) if cut else math.floor(steps + 0.5))


def _long(ms: float, cut: bool) -> str:
    """A minute or more, to the second or the minute: `4m05s`, `3h10m`, `10d 07h56m`."""
    seconds = int(_to(ms, 1000, cut) // 1000)
    if seconds < HOUR_MS / 1000:
        minutes, seconds = divmod(seconds, 60)
        return f"{minutes}m{seconds:02d}s"
    minutes = int(_to(ms, MINUTE_MS, cut) // MINUTE_MS)
    if minutes < DAY_MS / MINUTE_MS:
        hours, minutes = divmod(minutes, 60)
        return f"{hours}h{minutes:02d}m"
    days, rest = divmod(minutes, 1440)
    return f"{days}d {rest // 60:02d}h{rest % 60:02d}m"


def duration(ms: float, style: Style = "text", *, cut: bool = False) -> str:
    """`ms` milliseconds as `style` writes them (see Style), to the nearest unit shown (a
    GPU's busy 6m29.6s and idle 2m05.5s cut to the second read 6m29s and 2m05s beside its
    span 8m35s); not finite: `–`. `cut`: to the unit at or before it, for an instant on the
    run's clock (a gap that began at 7m40.6s is at `7m40s`: a line looked up from there
    finds it) and for an age (`age` always is)."""
    if not math.isfinite(ms):
        return "–"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    cut = cut or style == "age"
    if ms >= MINUTE_MS:
        return sign + _long(ms, cut)
    if style == "age":
        return f"{sign}{int(ms // 1000)}s"
    if style == "span":
        if ms < 0.9995:
            return f"{sign}{ms * 1000:.0f}µs"
        shown = float(f"{ms:.3g}")  # three figures: 999.6 ms is 1 s, not `1e+03ms`
        if shown < 1000:
            return f"{sign}{shown:g}ms"
        return f"{sign}{ms / 1000:.3g}s"
    space = " " if style == "text" else ""
    shown = _to(ms, 1, cut)
    if shown < 1000:
        return f"{sign}{shown:.0f}{space}ms"
    tenths = style == "cell" and ms >= 10_000  # six characters at most
    shown = _to(ms, 100 if tenths else 10, cut)
    if shown >= MINUTE_MS:
        return sign + _long(ms, cut)  # 59.996 s is a minute, not `60.00 s`
    return f"{sign}{shown / 1000:.{1 if tenths else 2}f}{space}s"


def offset(ms: float) -> str:
    """When, on the run's clock, to the millisecond: `38.375s`, `1m20.506s`,
    `2h03m20.506s`, `10d 07h56m04.177s`."""
    if not math.isfinite(ms):
        return "–"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    if ms < MINUTE_MS:
        return f"{sign}{ms / 1000:.3f}s"
    seconds = ms % MINUTE_MS / 1000
    minutes = int(ms // MINUTE_MS)
    if minutes < 60:
        return f"{sign}{minutes}m{seconds:06.3f}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{sign}{hours}h{minutes:02d}m{seconds:06.3f}s"
    days, hours = divmod(hours, 24)
    return f"{sign}{days}d {hours:02d}h{minutes:02d}m{seconds:06.3f}s"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 gap`, `2 gaps`, `0 gaps` (`plural`: when not the noun and an s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def estimate_pct(mid: float, lo: float, hi: float) -> str:
    """`≈31 % (26–36 %)`: an estimate of a share and the range the log allows, in whole
    percents, or tenths where the range is under a point wide (`≈62.4 % (62.3–62.6 %)`, not
    `62–63 %`), the range rounded outwards so that what is shown still holds the truth."""
    scale = 1000 if hi - lo < 0.01 else 100
    low = math.floor(scale * lo + 1e-9) / (scale / 100)
    high = math.ceil(scale * hi - 1e-9) / (scale / 100)
    digits = 0 if scale == 100 else 1
    return f"{estimate_mid(mid, lo, hi)} ({low:.{digits}f}–{high:.{digits}f} %)"


def estimate_mid(mid: float, lo: float, hi: float) -> str:
    """`≈31 %`: an estimate of a share alone, written as `estimate_pct` writes it (whole
    percents, tenths where its range `lo`..`hi` is under a point wide)."""
    return f"≈{100 * mid:.{0 if hi - lo >= 0.01 else 1}f} %"
