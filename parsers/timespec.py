"""Times given on the command line (--from, --to) in the forms the viewer shows them.

An offset on the log's clock (ms since the engine started, the TIMELINE offsets), as the time
axis, the gap list and the inspector write it: `850ms`, `12.5s`, `3600s`, `3m20s`,
`1m20.506s`, `90m`, `1h05m`, `1h05m20s`, `2h`, `2d 20h54m`, `4d 02h00m15.5s`, `3d`, the
report's `44.94 s` and `812 ms`, or a bare number of ms (`3600000`, as the palette's trace
files are named). Or a wall-clock time, as the inspector shows it beside an offset when the
log gives the engine's start: a time of day `12:30`, `12:30:05`, `12:30:05.250` (the first such
moment at or after the engine started; for --to, at or after --from), or a date and time
`2026-03-16 12:30` (`T` between them too), both in the zone the log's times are in. Either may
end in ` UTC` (as the report's `engine started` line writes it), ` GMT`, `Z` (as tracing stamps
do) or `+00:00`, which a log whose times are UTC reads and a journal on its local time refuses.
Or both, as the inspector and the report write a time: `35.510s (09:31:51.366)`; on a log that
gives the engine's start, once the two agree (to the offset's last digit), the moment the more
exact half names: an offset to the millisecond, else the wall-clock time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

_UNITS = {"d": 86_400_000.0, "h": 3_600_000.0, "m": 60_000.0, "s": 1000.0, "ms": 1.0}
_NUMBER = r"[0-9]+(?:\.[0-9]+)?"  # ASCII digits: int() reads "٣" as 3
# a unit may follow its number after a space, and a part the one before it (`2d 20h54m`,
# the report's `44.94 s` and `812 ms`)
_OFFSET = re.compile(
    rf"(?:(?P<d>{_NUMBER}) ?d ?)?(?:(?P<h>{_NUMBER}) ?h ?)?(?:(?P<m>{_NUMBER}) ?m(?!s) ?)?"
    rf"(?:(?P<s>{_NUMBER}) ?s ?)?(?:(?P<ms>{_NUMBER}) ?ms)?"
)
# a wall-clock time said to be in UTC: the report's ` UTC` (or ` GMT`), a stamp's `Z` after its
# digits, or ISO 8601's `+00:00`
_UTC = re.compile(r"(?:\s+(?:UTC|GMT)|(?<=\d)Z|(?<=\d)\s*[+-]00:?00)\Z", re.IGNORECASE | re.ASCII)
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?", re.ASCII)

# how far the two halves of one moment as shown may differ beyond the offset's last digit:
# the wall clock is cut to the millisecond (up to 1 ms), and with several logs each log's
# clock is whole milliseconds from the all-hosts one (up to 1 ms more)
WALL_SLACK_MS = 2.0
# an offset and its wall-clock time, as the inspector and the report write them
_BOTH = re.compile(r"(?P<offset>[^()]+) \((?P<wall>[^()]+)\)")
_LATER_FORMS = (
    "12:30[:05[.250]] or 2026-03-16 12:30, a wall-clock time ending in UTC, GMT, Z or +00:00"
    " on a log in UTC, or an offset and its wall-clock time as the inspector writes them:"
    " 35.510s (09:31:51.366)"
)
FORMS = f"850ms, 12.5s, 3m20s, 1h05m, 2d 20h54m, a number of ms, {_LATER_FORMS}"
# ... where a bare number is something else (the log pane's `:`: a line number)
PANE_FORMS = f"a line number, or a time: 850ms, 12.5s, 3m20s, 1h05m, 2d 20h54m, {_LATER_FORMS}"


@dataclass(frozen=True, slots=True)
class TimeSpec:
    """A parsed time: an offset in ms, a time of day, or a date and time (the last two
    resolved against the log's wall clock)."""

    text: str
    offset_ms: float | None = None
    clock: tuple[int, int, int, int] | None = None  # hour, minute, second, µs
    moment: datetime | None = None  # a date and time, without a zone
    utc: bool = False  # a wall-clock time said to be in UTC
    # an offset given with its wall-clock time, and the unit of the offset's last digit
    wall: TimeSpec | None = None
    digit_ms: float = 0.0

    @property
    def is_wall(self) -> bool:
        """Whether the time is on the wall clock (needs the log's anchor)."""
        return self.offset_ms is None


def parse_time(text: str, forms: str = FORMS) -> TimeSpec:
    """`text` as a time (see the module's forms; `forms`: what the message says to give).

    Raises:
        ValueError: not one of the forms, with a one-line message.
    """
    # any run of spaces as one (a time copied from the inspector holds no-break spaces),
    # and so in what is said of it
    text = raw = " ".join(text.split())
    if raw.startswith("at "):
        raw = raw[3:]  # the report's `at 44.94 s (09:32:00.796)`, copied with its word
    both = _BOTH.fullmatch(raw)
    if both is not None:
        return _offset_and_wall(text, both["offset"], both["wall"])
    if re.fullmatch(_NUMBER, raw):
        return TimeSpec(text, offset_ms=float(raw))
    m = _OFFSET.fullmatch(raw)
    if raw and m is not None:
        return TimeSpec(
            text, offset_ms=sum(float(v) * _UNITS[u] for u, v in m.groupdict().items() if v)
        )
    zone = _UTC.search(raw)
    utc = zone is not None
    if zone is not None:
        raw = raw[: zone.start()]
    c = _CLOCK.fullmatch(raw)
    if c is not None:
        hour, minute = int(c[1]), int(c[2])
        second = int(c[3] or 0)
        micro = int((c[4] or "0").ljust(6, "0"))
        if hour > 23 or minute > 59 or second > 59:
            raise ValueError(f"not a time of day: {text!r}")
        return TimeSpec(text, clock=(hour, minute, second, micro), utc=utc)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(:\d{2}(\.\d{1,6})?)?", raw):
        try:
            return TimeSpec(text, moment=datetime.fromisoformat(raw), utc=utc)
        except ValueError:
            raise ValueError(f"not a date and time: {text!r}") from None
    raise ValueError(f"not a time: {text!r} (give {forms})")


def _offset_and_wall(text: str, offset: str, wall: str) -> TimeSpec:
    """`35.510s (09:31:51.366)`: an offset and the wall-clock time it is.

    Raises:
        ValueError: either half is not a time of its kind.
    """
    first, second = _read(offset), _read(wall)
    if first is None or first.offset_ms is None or second is None or not second.is_wall:
        raise ValueError(
            f"not a time: {text!r} (an offset and its wall-clock time are written "
            "35.510s (09:31:51.366))"
        )
    return replace(first, text=text, wall=second, digit_ms=_last_digit_ms(first.text))


def _read(text: str) -> TimeSpec | None:
    try:
        return parse_time(text)
    except ValueError:
        return None


def _last_digit_ms(offset: str) -> float:
    """What the last digit of an offset counts, in ms (`1h05m`: a minute; `44.94 s`: 10)."""
    if re.fullmatch(_NUMBER, offset):
        unit, number = 1.0, offset
    else:
        m = _OFFSET.fullmatch(offset)
        assert m is not None  # parse_time read it as an offset
        key, number = next((k, str(v)) for k, v in reversed(m.groupdict().items()) if v)
        unit = _UNITS[key]
    decimals = len(number.partition(".")[2])
    return unit / 10.0**decimals


def resolve(spec: TimeSpec, anchor: datetime | None, after_ms: float = 0.0) -> float:
    """The offset in ms of `spec` on a log whose engine started at `anchor` (a time of day:
    its first moment at or after `after_ms`).

    Raises:
        ValueError: a wall-clock time on a log without the engine's start time, or one the
            calendar cannot hold on the log's clock.
    """
    try:
        return _resolve(spec, anchor, after_ms)
    except OverflowError:
        raise ValueError(
            f"{spec.text!r} falls past the calendar's ends on this log's clock"
        ) from None


def _resolve(spec: TimeSpec, anchor: datetime | None, after_ms: float) -> float:
    """`resolve`, which the calendar's ends may stop (OverflowError)."""
    if spec.offset_ms is not None:
        if spec.wall is None or anchor is None:
            return spec.offset_ms  # no clock to place the wall-clock half on: the offset
        # the offset says the day a time of day falls on; the wall-clock half, the moment
        at = resolve(spec.wall, anchor, spec.offset_ms - spec.digit_ms - WALL_SLACK_MS)
        if abs(at - spec.offset_ms) > spec.digit_ms + WALL_SLACK_MS:
            offset = spec.text.partition(" (")[0]
            moment = anchor.replace(tzinfo=None) + timedelta(milliseconds=spec.offset_ms)
            form = "%H:%M:%S.%f" if spec.wall.clock is not None else "%Y-%m-%d %H:%M:%S.%f"
            raise ValueError(
                f"{spec.text!r}: {offset} into this log is {moment.strftime(form)[:-3]}, "
                f"not {spec.wall.text} (give one of the two)"
            )
        # the more exact half: an offset to the millisecond is the moment shown (the wall
        # clock's is cut to the millisecond), a rounded one (`1h05m`) the wall clock's
        return spec.offset_ms if spec.digit_ms <= 1.0 else at
    if anchor is None:
        raise ValueError(
            f"{spec.text!r} is a wall-clock time, and this log does not say when the engine "
            "started (give an offset such as 1h05m)"
        )
    if spec.utc and anchor.tzinfo is None:
        raise ValueError(
            f"{spec.text!r} is in UTC, and this log's times are the journal's local time "
            "(give the time without UTC)"
        )
    base = anchor.replace(tzinfo=None)
    if spec.moment is not None:
        return (spec.moment - base) / timedelta(milliseconds=1)
    since, later = _time_of_day(spec, base, after_ms)
    return (since + timedelta(days=1) if later else since) / timedelta(milliseconds=1)


def next_day(spec: TimeSpec, anchor: datetime | None, after_ms: float = 0.0) -> bool:
    """Whether `resolve` takes `spec`, a time of day, on the day after the one `after_ms`
    falls on (that day, it comes before `after_ms`)."""
    if spec.clock is None or anchor is None:
        return False
    return _time_of_day(spec, anchor.replace(tzinfo=None), after_ms)[1]


def _time_of_day(spec: TimeSpec, base: datetime, after_ms: float) -> tuple[timedelta, bool]:
    """Time of day `spec` on the day `after_ms` (after `base`) falls on, from `base`, and
    whether that comes before `after_ms`."""
    assert spec.clock is not None
    hour, minute, second, micro = spec.clock
    start = base + timedelta(milliseconds=max(after_ms, 0.0))
    moment = start.replace(hour=hour, minute=minute, second=second, microsecond=micro)
    return moment - base, moment < start


def ascii_number(text: str) -> str:
    """`text` if it is a number as written here, in ASCII digits; else ValueError. Python's
    int() and float() also read other scripts' digits ("٣") and underscores ("1_0")."""
    if not text.isascii() or "_" in text:
        raise ValueError(f"not a number: {text!r}")
    return text
