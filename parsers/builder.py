"""The incremental log builder: bytes in (any chunking), a `LogModel` out.

Lines are classified by prefix: TIMELINE (found anywhere in a line), the C++
prover's CUZK_TIMING / CUZK_NTT_H, stdout tracing (with or without ANSI colour),
everything else. A TIMELINE line cut by a C++ or stdout line (a splice) is rejoined
with its continuation on the next physical line. Bad input is counted, never raised.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections import deque
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from parsers.attribution import TimingAttributor, Values
from parsers.model import LineCounts, LogModel
from parsers.records import (
    STAGE_BARRIER,
    STAGE_BATCH,
    STAGE_EPILOGUE,
    STAGE_HELD,
    STAGE_LOCK,
    STAGE_NTT_H,
    STAGE_NTT_MSM,
    STAGE_POOL,
    STAGE_PRESTAGE,
    STAGE_TAIL,
    PartColumns,
)

TIMELINE = b"TIMELINE,"
# Where a line of the daemon begins: what can land inside another line that was being
# written in parts (a splice). A stdout tracing line begins with its time (ANSI or not).
_LINE_START = re.compile(
    rb"TIMELINE,|CUZK_[A-Z0-9_]+: |(?:\x1b\[[0-9;]*m)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
    rb"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z? +(?:TRACE|DEBUG|INFO|WARN|ERROR) "
)
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")
_STDOUT_START = re.compile(rb"(?:\x1b\[[0-9;]*m)*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_KV = re.compile(rb"([a-z_]+)=(\S+)")
_GPU_SPAN = re.compile(rb"gpu_worker\{([^}]*)\}")
# Capture prefixes: journalctl short / short-precise, short-iso, and an ISO time first
# (docker logs -t, kubectl logs --timestamps). The stdout tracing line's own time is not
# a prefix: a level follows it.
_JOURNAL_SHORT = re.compile(
    rb"([A-Z][a-z]{2}) ([ \d]?\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))? \S+ [^\s:\[]+(?:\[\d+\])?: "
)
_ISO_PREFIX = re.compile(
    rb"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?"
    rb" (?:(\S+) ([^\s:\[]+(?:\[\d+\])?): )?"
)
_LEVEL = re.compile(rb" *(?:TRACE|DEBUG|INFO|WARN|ERROR) ")
_MONTH_NAMES = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec"
_MONTHS = {m.encode(): k for k, m in enumerate(_MONTH_NAMES.split(), 1)}
# The capture's form is decided from this many first lines (from four when they agree).
CAPTURE_VOTES = 16
_UNDECIDED, _PLAIN, _PREFIXED = range(3)
# A fragment (the first part of a line written in parts) waits this many physical lines
# for its continuation, then is taken as it is.
FRAGMENT_WAIT_LINES = 16
# Prefix clocks read for the wall-clock anchor (the best of them is kept).
ANCHOR_SAMPLES = 2000

# Pending C++ lines wait this long (ms of TIMELINE stamps) so that a stamp written a
# little late (disorder) is read before they are attributed.
DEFER_MS = 10
# ...and this is the slack around the stamps that bracket them.
# ...and this late a stamp can be (taken, then written after the lines below it). A stamp
# is never later than its line, so the stamp before a line bounds it exactly.
WINDOW_SLACK_MS = 10.0
_MAX_PENDING = 20_000
_INF = float("inf")

_EVENTS = frozenset(
    {
        b"SYNTH_START",
        b"SYNTH_END",
        b"GPU_QUEUE",
        b"CHAN_SEND",
        b"GPU_PICKUP",
        b"GPU_START",
        b"GPU_END",
    }
)

_JOB_KIND_PREFIXES = (
    ("porep-", "porep-c2"),
    ("snap-", "snap-update"),
    ("wdpost-", "window-post"),
    ("wnpost-", "winning-post"),
    ("winpost-", "winning-post"),
    ("ps-porep-", "porep-c2"),
    ("ps-snap-", "snap-update"),
)


def _kind_from_job(job: str, snap: bool) -> str:
    if snap:
        return "snap-update"
    for prefix, kind in _JOB_KIND_PREFIXES:
        if job.startswith(prefix):
            return kind
    return "porep-c2"


def _detail(detail: bytes) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for item in detail.split(b","):
        key, eq, value = item.partition(b"=")
        if eq:
            out[key.strip()] = value.strip()
        elif item.strip():
            out[item.strip()] = b""
    return out


def _num(token: bytes) -> int:
    """`123`, `123ms` -> 123 (ValueError otherwise)."""
    if token.endswith(b"ms"):
        token = token[:-2]
    return int(token)


def _pairs(body: bytes) -> dict[bytes, bytes]:
    return dict(t.split(b"=", 1) for t in body.split() if b"=" in t)


def _timing_values(body: bytes, ntt_h: bool) -> tuple[int, Values] | None:
    """Parse the text after `CUZK_TIMING: ` / `CUZK_NTT_H: ` into (stage, numbers).

    Returns None for the lines that say nothing about the phases (setup, the CPU
    threads, async dealloc, one-off messages) and for lines that do not parse.
    """
    try:
        if ntt_h:
            kv = _pairs(body)
            return STAGE_NTT_H, (
                _num(kv[b"d_b_alloc"]) + _num(kv.get(b"msm_init", b"0")),
                _num(kv[b"total"]),
            )
        head = body[:6]
        if head == b"gpu_ti":
            toks = body.split()
            key, _, value = toks[1].partition(b"=")
            if key == b"ntt_msm_h_ms":
                return STAGE_NTT_MSM, (_num(value),)
            if key == b"barrier_wait_ms":
                return STAGE_BARRIER, (_num(value),)
            if key == b"batch_add_ms":
                return STAGE_BATCH, (_num(value),)
            if key == b"tail_msm_ms":
                total = _pairs(body).get(b"gpu_total_ms")
                return STAGE_TAIL, (_num(value), None if total is None else _num(total))
            return None
        if head == b"pre_lo":
            kv = _pairs(body)
            return STAGE_LOCK, (_num(kv[b"pre_lock_cpu_ms"]), _num(kv[b"mutex_wait_ms"]))
        if head == b"mutex_":
            kv = _pairs(body)
            return STAGE_HELD, (_num(kv[b"mutex_held_ms"]),)
        if head == b"presta" and body.startswith(b"prestage_setup="):
            kv = _pairs(body)
            keys = (b"sync_ms", b"trim_ms", b"alloc_ms", b"upload_ms")
            if all(k in kv for k in keys):
                return STAGE_PRESTAGE, (sum(_num(kv[k]) for k in keys),)
            if kv[b"prestage_setup"].startswith(b"skip"):
                return STAGE_PRESTAGE, (0,)
            total = kv.get(b"total_ps_ms")
            return STAGE_PRESTAGE, (None if total is None else _num(total),)
        if head == b"d_a_ca":
            # printed under the lock by the first holder of a GPU (and at a proof-type change)
            return STAGE_POOL, (int(body.rsplit(None, 1)[-1]),)
        if head == b"epilog":
            kv = _pairs(body)
            pre = kv.get(b"pre_destructor_ms")
            return STAGE_EPILOGUE, (_num(kv[b"epilogue_ms"]), None if pre is None else _num(pre))
    except (KeyError, ValueError, IndexError):
        return None
    return None


_DATE_HEAD = re.compile(rb"\d{1,4}(?:-(?:\d{1,2}(?:-(?:\d{1,2}(?:T.*)?)?)?)?)?", re.S)


def _plausible_head(head: bytes) -> bool:
    """Could `head` be the first part of a daemon line that another line cut?"""
    if not head:
        return False
    return (
        head.startswith(TIMELINE)
        or TIMELINE.startswith(head)
        or head.startswith(b"CUZK_")
        or b"CUZK_".startswith(head)
        or head.startswith(b"\x1b[")
        or _DATE_HEAD.fullmatch(head) is not None
        or _STDOUT_START.match(head) is not None
    )


def _prefix_time(m: re.Match[bytes], year: int | None) -> datetime | None:
    """The wall clock of a capture prefix (journalctl short has no year: the log's, else now's)."""
    try:
        g = m.groups()
        if len(g) == 6:  # journalctl short / short-precise: local time, no zone
            y = year if year is not None else datetime.now(UTC).year
            frac = int((g[5] or b"0").ljust(6, b"0")[:6])
            return datetime(y, _MONTHS[g[0]], int(g[1]), int(g[2]), int(g[3]), int(g[4]), frac)
        frac = int((g[6] or b"0").ljust(6, b"0")[:6])
        y, mo, d, h, mi, sec = (int(x) for x in g[:6])
        wall = datetime(y, mo, d, h, mi, sec, frac)
        zone = g[7]
        if zone is None:
            return wall
        if zone == b"Z":
            return wall.replace(tzinfo=UTC)
        digits = zone[1:].replace(b":", b"")
        minutes = int(digits[:2]) * 60 + int(digits[2:4])
        sign = -1 if zone[:1] == b"-" else 1
        return wall.replace(tzinfo=timezone(timedelta(minutes=sign * minutes)))
    except (ValueError, OverflowError, KeyError):
        return None


# A pending C++ line: [stage, values, line_no, stamp before it, stamp after it or None]
_P_STAGE, _P_VALS, _P_LINE, _P_PREV, _P_NEXT = range(5)


class LogBuilder:
    """Feed bytes as they come; `snapshot()` or `build()` gives the model.

    Args:
        source: a name for the log (shown in reports).
        workers_per_gpu: for logs without the stdout worker lines: worker W is on GPU
            W // workers_per_gpu. None puts every unmapped worker on GPU 0.
    """

    def __init__(self, source: str = "", workers_per_gpu: int | None = None) -> None:
        self.source = source
        self.workers_per_gpu = workers_per_gpu
        self.counts = LineCounts()
        self.cols = PartColumns()
        self.keys: dict[tuple[bytes, int | None], int] = {}
        self.worker_gpu: dict[int, int] = {}
        self.wall_anchor: datetime | None = None
        self.engine_seen = False  # a stdout line of the cuzk engine was read
        self.bytes_read = 0
        self.lines_read = 0  # physical lines
        self.max_stamp = -1
        self._tail = b""  # an incomplete last line
        # the first part of a line written in parts, its line number, and the lines that
        # landed after it (read once it is whole)
        self._fragment: tuple[bytes, int, list[tuple[bytes, int]]] | None = None
        self._prefix: re.Match[bytes] | None = None  # the capture prefix of the line read
        self._unbounded = 0  # newest pending lines the next stamp does not bound
        self._capture = _UNDECIDED  # whether every line carries a capture prefix
        self._votes = [0, 0]  # first lines without, with a prefix
        self._year: int | None = None  # from a stdout time (journalctl short omits it)
        self._anchor_from_stdout = False
        self._anchor_samples = 0
        self._stamp = -1  # the last TIMELINE stamp read
        self._pending: deque[list[Any]] = deque()
        self._attributor = TimingAttributor(
            self.cols, self.gpu_of, ordinals_known=lambda: bool(self.worker_gpu)
        )

    # -- public -----------------------------------------------------------------------------

    def gpu_of(self, worker: int | None) -> int:
        """The GPU a worker runs on (stdout map, else --workers-per-gpu, else 0)."""
        if worker is None or worker < 0:
            return 0
        gpu = self.worker_gpu.get(worker)
        if gpu is not None:
            return gpu
        if self.workers_per_gpu:
            return worker // self.workers_per_gpu
        return 0

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the log (any size, cut anywhere)."""
        if not data:
            return
        self.bytes_read += len(data)
        if self._tail:
            data = self._tail + data
        cut = data.rfind(b"\n")
        if cut < 0:
            self._tail = data
            return
        self._tail = data[cut + 1 :]
        # millions of small objects, none cyclic: the cyclic collector would only rescan them
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            self._lines(data[:cut].split(b"\n"))
        finally:
            if gc_was_on:
                gc.enable()

    def snapshot(self, finished: bool = False) -> LogModel:
        """The model of what was read so far.

        Args:
            finished: the log is complete: partitions picked up but never ended count
                as failed.
        """
        from parsers.analysis import build_model

        return build_model(self, finished=finished)

    def build(self) -> LogModel:
        """End of input: attribute what waits and return the finished model."""
        self.finish()
        return self.snapshot(finished=True)

    def finish(self) -> None:
        """End of input: attribute the waiting timing lines (a partial last line stays unread)."""
        if self._fragment is not None:
            self._flush_fragment()
        while self._pending:
            self._resolve_one()
        self._attributor.flush()
        self._attributor.finish()

    def flush_pending(self) -> bool:
        """Attribute the timing lines kept back for look-ahead (the input went quiet).

        Returns True if there were any.
        """
        had = bool(self._pending) or self._attributor.has_open_lines
        while self._pending:
            self._resolve_one()
        self._attributor.flush()
        return had

    @property
    def partial_bytes(self) -> int:
        """Bytes of an incomplete last line waiting for its newline."""
        return len(self._tail)

    def kernel_doubt_ms(self, gpu: int) -> tuple[float, float]:
        """Kernel ms given to `gpu` that another GPU could own, and kernel ms given
        elsewhere that it could own (the lines the log leaves ambiguous)."""
        minus, plus = self._attributor.kernel_doubt.get(gpu, (0.0, 0.0))
        return minus, plus

    @property
    def lock_lines_seen(self) -> bool:
        """The engine prints lock lines (since 2026-03-13): holders are known exactly."""
        return self._attributor.lock_lines_seen

    @property
    def unattributed_kernel_ms(self) -> float:
        """Kernel time in the timing lines that matched no GPU interval."""
        return self._attributor.unattributed_kernel_ms

    @property
    def unattributed_timing_lines(self) -> int:
        """C++ timing lines that matched no GPU interval."""
        return self._attributor.unattributed

    # -- lines ------------------------------------------------------------------------------

    def _lines(self, lines: list[bytes]) -> None:
        line_no = self.lines_read
        physical = self._physical
        for line in lines:
            line_no += 1
            physical(line, line_no)
        self.lines_read = line_no

    def _physical(self, line: bytes, line_no: int) -> None:
        """One physical line: strip the capture's prefix, rejoin what a splice cut.

        A line written in parts can have other lines land between its parts: its first
        part then ends a physical line that another line finishes, and its rest starts a
        later one. The lines that landed inside are read after the rejoined line (they
        were printed after it began).
        """
        self._prefix = None
        if line.endswith(b"\r"):
            line = line[:-1]
        capture = self._capture
        if capture != _PLAIN:
            if not (line.startswith(TIMELINE) or line.startswith(b"CUZK_") or line[:1] == b"\x1b"):
                line = self._strip_prefix(line)
            if capture == _UNDECIDED and line and not line.startswith(b"-- "):
                self._vote(self._prefix is not None)
        frag = self._fragment
        if frag is not None:
            head, first_no, inners = frag
            if _LINE_START.match(line) is None:
                # the rest of the cut line (itself perhaps cut again by another line)
                m = _LINE_START.search(line, 1)
                if m is not None:
                    self._fragment = (head + line[: m.start()], first_no, inners)
                    inners.append((line[m.start() :], line_no))
                    return
                self._fragment = None
                self.counts.spliced += 1
                self._rejoined(head + line, first_no, inners)
                return
            m = _LINE_START.search(line, 1)
            if len(inners) < FRAGMENT_WAIT_LINES and (
                m is None or not _plausible_head(line[: m.start()])
            ):
                if m is not None:
                    self.counts.other += 1
                    line = line[m.start() :]
                inners.append((line, line_no))
                return
            self._flush_fragment()
        m = _LINE_START.search(line, 1)
        if m is None:
            self._logical(line, line_no)
            return
        head = line[: m.start()]
        if _plausible_head(head):
            self._fragment = (head, line_no, [(line[m.start() :], line_no)])
            return
        self.counts.other += 1  # text of something else before a daemon line
        self._logical(line[m.start() :], line_no)

    def _flush_fragment(self) -> None:
        """No continuation came for a cut line: take its first part as it is."""
        assert self._fragment is not None
        head, line_no, inners = self._fragment
        self._fragment = None
        self._rejoined(head, line_no, inners)

    def _rejoined(self, line: bytes, line_no: int, inners: list[tuple[bytes, int]]) -> None:
        """A cut line made whole, and the lines that landed inside it. Those were printed
        while it was being written, around its stamp but not necessarily after it: they
        are read first, and its stamp does not bound them."""
        before = len(self._pending)
        for inner, no in inners:
            self._logical(inner, no)
        self._unbounded = len(self._pending) - before
        self._logical(line, line_no)
        self._unbounded = 0

    def _vote(self, prefixed: bool) -> None:
        """Decide from the first lines whether this capture puts a prefix on every line (a
        plain file never does: what looks like one there is a cut stdout line)."""
        self._votes[prefixed] += 1
        n = sum(self._votes)
        if n >= CAPTURE_VOTES or (n >= 4 and 0 in self._votes):
            self._capture = _PREFIXED if self._votes[True] > self._votes[False] else _PLAIN

    def _strip_prefix(self, line: bytes) -> bytes:
        """Remove a journalctl / container time prefix; remember its clock."""
        first = line[:1]
        if first.isdigit():
            m = _ISO_PREFIX.match(line)
            if m is None:
                return line
            if m.group(9) is None and (m.group(8) is None or _LEVEL.match(line, m.end() - 1)):
                return line  # a stdout tracing line's own time, not a prefix
            self._prefix = m
            return line[m.end() :]
        if b"A" <= first <= b"Z":
            m = _JOURNAL_SHORT.match(line)
            if m is not None and m.group(1) in _MONTHS:
                self._prefix = m
                return line[m.end() :]
        return line

    def _logical(self, line: bytes, line_no: int) -> None:
        """One whole line of the daemon's."""
        counts = self.counts
        if line.startswith(TIMELINE):
            counts.timeline += 1
            self._timeline(line, line_no)
            return
        if line.startswith(b"CUZK_TIMING: "):
            counts.cuzk_timing += 1
            parsed = _timing_values(line[13:], False)
        elif line.startswith(b"CUZK_NTT_H: "):
            counts.cuzk_timing += 1
            parsed = _timing_values(line[12:], True)
        else:
            first = line[:1]
            if first == b"\x1b" or (first.isdigit() and _STDOUT_START.match(line)):
                counts.stdout += 1
                if not self.engine_seen and b"cuzk" in line:
                    self.engine_seen = True
                if (
                    b"worker started" in line
                    or b"starting cuzk engine" in line
                    or b"gpu_worker" in line
                    or self._year is None
                ):
                    self._stdout(line)
            else:
                counts.other += 1
            return
        if parsed is not None:
            self._pending.append([parsed[0], parsed[1], line_no, self._stamp, None])
            if len(self._pending) > _MAX_PENDING:
                self._resolve_one()

    def _stdout(self, line: bytes) -> None:
        if b"\x1b" in line:
            line = _ANSI.sub(b"", line)
        if self._year is None:
            with contextlib.suppress(ValueError):
                self._year = int(line[:4])
        if b"worker started" in line:
            kv = dict(_KV.findall(line))
            try:
                self.worker_gpu[int(kv[b"worker_id"])] = int(kv[b"gpu"])
            except (KeyError, ValueError):
                self.counts.stdout -= 1
                self.counts.malformed += 1
        elif b"gpu_worker{" in line:
            span = _GPU_SPAN.search(line)
            if span is not None:
                kv = dict(_KV.findall(span.group(1)))
                with contextlib.suppress(KeyError, ValueError):
                    self.worker_gpu.setdefault(int(kv[b"worker_id"]), int(kv[b"gpu"]))
        elif b"starting cuzk engine" in line and not self._anchor_from_stdout:
            stamp = line.split(None, 1)[0].decode("ascii", "replace")
            try:
                self.wall_anchor = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
                self._anchor_from_stdout = True
            except ValueError:
                self.counts.stdout -= 1
                self.counts.malformed += 1

    def _prefix_anchor(self, stamp: int) -> None:
        """Engine start by the capture's clock: the receive time of a line is at or after
        the time of its stamp, so the latest of (receive time - stamp) is the best bound."""
        m = self._prefix
        self._prefix = None
        if m is None or self._anchor_from_stdout or self._anchor_samples >= ANCHOR_SAMPLES:
            return
        self._anchor_samples += 1
        wall = _prefix_time(m, self._year)
        if wall is None:
            return
        candidate = wall - timedelta(milliseconds=stamp)
        if self.wall_anchor is None or candidate > self.wall_anchor:
            self.wall_anchor = candidate

    # -- TIMELINE ---------------------------------------------------------------------------

    def _timeline(self, line: bytes, line_no: int) -> None:
        fields = line.split(b",", 4)
        if len(fields) < 4:
            self._malformed()
            return
        event = fields[2]
        if event not in _EVENTS:
            self._malformed()
            return
        detail = fields[4] if len(fields) > 4 else b""
        partition: int | None = None
        worker: int | None = None
        snap = False
        try:
            stamp = int(fields[1])
            if detail.startswith(b"partition="):
                comma = detail.find(b",")
                partition = int(detail[10:comma] if comma > 0 else detail[10:])
                if comma > 0:
                    detail = detail[comma + 1 :]
            elif detail.startswith(b"worker="):
                comma = detail.find(b",")
                worker = int(detail[7:comma] if comma > 0 else detail[7:])
                if comma > 0 and detail.startswith(b"partition=", comma + 1):
                    end = detail.find(b",", comma + 1)
                    partition = int(detail[comma + 11 : end] if end > 0 else detail[comma + 11 :])
            if partition is None and b"=" in detail:
                kv = _detail(detail)
                raw = kv.get(b"partition")
                if raw is None:
                    raw = kv.get(b"snap_partition")
                    snap = raw is not None
                partition = int(raw) if raw is not None else None
                raw = kv.get(b"worker")
                if raw is not None:
                    worker = int(raw)
        except ValueError:
            self._malformed()
            return
        if self._pending:
            self._advance_pending(stamp)
        if self._prefix is not None:
            self._prefix_anchor(stamp)
        self._stamp = stamp
        if stamp > self.max_stamp:
            self.max_stamp = stamp
        c = self.cols
        key = (fields[3], partition)
        i = self.keys.get(key)
        if i is None:
            job = fields[3].decode("utf-8", "replace")
            i = self.keys[key] = c.add(job, partition)
            c.kind[i] = c.kind_id(_kind_from_job(job, snap))
        if worker is not None:
            c.worker[i] = worker
        if event == b"GPU_START":
            c.gpu_start[i] = stamp
            c.start_line[i] = line_no
            self._attributor.started(i)
        elif event == b"GPU_END":
            c.gpu_end[i] = stamp
            c.end_line[i] = line_no
            self._attributor.ended(i)
        elif event == b"SYNTH_START":
            c.synth_start[i] = stamp
            if b"kind=" in detail:
                kind = _detail(detail).get(b"kind")
                if kind:
                    c.kind[i] = c.kind_id(kind.decode("utf-8", "replace"))
        elif event == b"SYNTH_END":
            c.synth_end[i] = stamp
        elif event == b"GPU_PICKUP":
            c.pickup[i] = stamp
        else:  # GPU_QUEUE / CHAN_SEND
            c.queued[i] = stamp

    def _malformed(self) -> None:
        self.counts.timeline -= 1
        self.counts.malformed += 1

    def _advance_pending(self, stamp: int) -> None:
        pending = self._pending
        # the lines read since the last stamp get this one as the stamp after them (but
        # not the lines that landed inside this stamp's own line)
        for k, item in enumerate(reversed(pending)):
            if k < self._unbounded:
                continue
            if item[_P_NEXT] is not None:
                break
            item[_P_NEXT] = stamp
        # a stamp written a little late (disorder) may still come for the oldest lines
        while (
            pending and pending[0][_P_NEXT] is not None and stamp - DEFER_MS >= pending[0][_P_PREV]
        ):
            self._resolve_one()

    def _resolve_one(self) -> None:
        stage, vals, line_no, prev, nxt = self._pending.popleft()
        lo, hi = _window(prev, nxt)
        self._attributor.push(stage, vals, line_no, lo, hi)


def _window(prev: int, nxt: int | None) -> tuple[float, float]:
    """The stamps around a line, the later one widened for disorder."""
    lo = -float("inf") if prev < 0 else float(prev)
    hi = float("inf") if nxt is None else nxt + WINDOW_SLACK_MS
    return lo, hi
