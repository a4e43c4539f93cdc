"""The incremental log builder: bytes in (any chunking), a `LogModel` out.

Lines are classified by prefix: TIMELINE (found anywhere in a line), the C++
prover's CUZK_TIMING / CUZK_NTT_H, stdout tracing (with or without ANSI colour),
everything else. A TIMELINE line cut by a C++ or stdout line (a splice) is rejoined
with its continuation on the next physical line. Bad input is counted, never raised.
"""

from __future__ import annotations

import gc
import re
from collections import deque
from datetime import datetime
from typing import Any

from parsers.attribution import LOOKAHEAD_LINES, Line, TimingAttributor, Values
from parsers.model import LineCounts, LogModel
from parsers.records import (
    STAGE_BARRIER,
    STAGE_BATCH,
    STAGE_EPILOGUE,
    STAGE_HELD,
    STAGE_LOCK,
    STAGE_NTT_H,
    STAGE_NTT_MSM,
    STAGE_PRESTAGE,
    STAGE_TAIL,
    PartColumns,
)

TIMELINE = b"TIMELINE,"
# What can land inside a TIMELINE line: a C++ line or a stdout line (ANSI or plain).
_INTRUDER = re.compile(rb"CUZK_[A-Z0-9_]+: |\x1b\[|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")
_STDOUT_START = re.compile(rb"(?:\x1b\[[0-9;]*m)*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_KV = re.compile(rb"([a-z_]+)=(\S+)")

# Pending C++ lines wait this long (ms of TIMELINE stamps) so that a stamp written a
# little late (disorder) is read before they are attributed.
DEFER_MS = 10
# ...and this is the slack around the stamps that bracket them.
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
        if head == b"epilog":
            kv = _pairs(body)
            pre = kv.get(b"pre_destructor_ms")
            return STAGE_EPILOGUE, (_num(kv[b"epilogue_ms"]), None if pre is None else _num(pre))
    except (KeyError, ValueError, IndexError):
        return None
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
        self.bytes_read = 0
        self.lines_read = 0  # physical lines
        self.max_stamp = -1
        self._tail = b""  # an incomplete last line
        self._splice: tuple[bytes, int, list[bytes]] | None = None
        self._stamp = -1  # the last TIMELINE stamp read
        self._pending: deque[list[Any]] = deque()
        self._attributor = TimingAttributor(self.cols, self.gpu_of)

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
        if self._splice is not None:
            self._flush_splice()
        while self._pending:
            self._resolve_one()

    def flush_pending(self) -> bool:
        """Attribute the timing lines kept back for look-ahead (the input went quiet).

        Returns True if there were any.
        """
        had = bool(self._pending)
        while self._pending:
            self._resolve_one()
        return had

    @property
    def partial_bytes(self) -> int:
        """Bytes of an incomplete last line waiting for its newline."""
        return len(self._tail)

    @property
    def unattributed_timing_lines(self) -> int:
        """C++ timing lines that matched no GPU interval."""
        return self._attributor.unattributed

    # -- lines ------------------------------------------------------------------------------

    def _lines(self, lines: list[bytes]) -> None:
        counts = self.counts
        line_no = self.lines_read
        timeline = self._timeline
        other = self._other_line
        for line in lines:
            line_no += 1
            if self._splice is not None and self._continues_splice(line):
                continue
            if line.startswith(TIMELINE):
                if (b"CUZK_" in line or b"\x1b" in line or b"Z " in line) and self._spliced(
                    line, 0, line_no
                ):
                    continue
                counts.timeline += 1
                timeline(line, line_no)
                continue
            if line.startswith(b"CUZK_"):
                other(line, line_no)
                continue
            idx = line.find(TIMELINE)
            if idx > 0:
                # a fragment of something else before the TIMELINE line
                counts.other += 1
                if not self._spliced(line, idx, line_no):
                    counts.timeline += 1
                    timeline(line[idx:], line_no)
                continue
            other(line, line_no)
        self.lines_read = line_no

    def _spliced(self, line: bytes, start: int, line_no: int) -> bool:
        """A TIMELINE line with another line inside: hold its head for the continuation."""
        m = _INTRUDER.search(line, start + len(TIMELINE))
        if m is None:
            return False
        self.counts.spliced += 1
        if self._splice is not None:
            self._flush_splice()
        self._splice = (line[start : m.start()], line_no, [line[m.start() :]])
        return True

    def _flush_splice(self) -> None:
        """The line after a splice was not its rest: take the head as it is."""
        assert self._splice is not None
        head, line_no, inners = self._splice
        self._splice = None
        self.counts.timeline += 1
        self._timeline(head, line_no)
        for inner in inners:
            self._other_line(inner, line_no)

    def _continues_splice(self, line: bytes) -> bool:
        """Rejoin a spliced TIMELINE line with `line` when `line` is its rest."""
        assert self._splice is not None
        if (
            line.startswith(TIMELINE)
            or line.startswith(b"CUZK_")
            or _STDOUT_START.match(line) is not None
        ):
            self._flush_splice()
            return False
        head, first_line, inners = self._splice
        self._splice = None
        self.counts.timeline += 1
        self._timeline(head + line, first_line)
        for inner in inners:
            self._other_line(inner, first_line)
        return True

    def _other_line(self, line: bytes, line_no: int) -> None:
        counts = self.counts
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
                if b"worker started" in line or b"starting cuzk engine" in line:
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
        if b"worker started" in line:
            kv = dict(_KV.findall(line))
            try:
                self.worker_gpu[int(kv[b"worker_id"])] = int(kv[b"gpu"])
            except (KeyError, ValueError):
                self.counts.stdout -= 1
                self.counts.malformed += 1
        elif self.wall_anchor is None:
            stamp = line.split(None, 1)[0].decode("ascii", "replace")
            try:
                self.wall_anchor = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                self.counts.stdout -= 1
                self.counts.malformed += 1

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
            self._attributor.check_unlock(i)
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
        # the lines read since the last stamp get this one as the stamp after them
        for item in reversed(pending):
            if item[_P_NEXT] is not None:
                break
            item[_P_NEXT] = stamp
        # keep a few lines back so that a tie between holders can look ahead
        while len(pending) > LOOKAHEAD_LINES and stamp - DEFER_MS >= pending[0][_P_PREV]:
            self._resolve_one()

    def _resolve_one(self) -> None:
        stage, vals, line_no, prev, nxt = self._pending.popleft()
        lo = prev - WINDOW_SLACK_MS if prev >= 0 else -_INF
        hi = nxt + WINDOW_SLACK_MS if nxt is not None else _INF
        self._attributor.attribute(stage, vals, line_no, lo, hi, self._lookahead)

    def _lookahead(self) -> list[Line]:
        """The timing lines waiting after the one being attributed (asked for on a tie)."""
        ahead: list[Line] = []
        for item in self._pending:
            if len(ahead) >= LOOKAHEAD_LINES:
                break
            ahead.append((item[_P_STAGE], item[_P_VALS], *_window(item[_P_PREV], item[_P_NEXT])))
        return ahead


def _window(prev: int, nxt: int | None) -> tuple[float, float]:
    """The stamps around a line, widened for disorder."""
    lo = -float("inf") if prev < 0 else prev - WINDOW_SLACK_MS
    hi = float("inf") if nxt is None else nxt + WINDOW_SLACK_MS
    return lo, hi
