"""The incremental log builder: bytes in (any chunking), a `LogModel` out.

Lines are classified by prefix: TIMELINE (found anywhere in a line), the C++
prover's CUZK_TIMING / CUZK_NTT_H, stdout tracing (with or without ANSI colour),
everything else. A TIMELINE line cut by a C++ or stdout line (a splice) is rejoined
with its continuation on the next physical line. Bad input is counted, never raised.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from datetime import datetime

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
    STAGE_PRESTAGE,
    STAGE_TAIL,
    PartRecord,
)

TIMELINE = b"TIMELINE,"
# What can land inside a TIMELINE line: a C++ line or a stdout line (ANSI or plain).
_INTRUDER = re.compile(rb"CUZK_[A-Z0-9_]+: |\x1b\[|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")
_STDOUT_START = re.compile(rb"(?:\x1b\[[0-9;]*m)*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_KV = re.compile(rb"([a-z_]+)=(\S+)")
_NUM = re.compile(rb"(\d+)")

# Pending C++ lines wait this long (ms of TIMELINE stamps) so that a stamp written a
# little late (disorder) is read before they are attributed.
DEFER_MS = 10
# ...and this is the slack around the stamps that bracket them.
WINDOW_SLACK_MS = 10.0
_MAX_PENDING = 20_000

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


def _timing_values(body: bytes) -> tuple[int, Values] | None:
    """Parse the text after `CUZK_TIMING: ` / `CUZK_NTT_H: ` into (stage, numbers)."""
    kv = {k: v for k, v in _KV.findall(body)}

    def num(key: bytes) -> int | None:
        raw = kv.get(key)
        if raw is None:
            return None
        m = _NUM.match(raw)
        return int(m.group(1)) if m else None

    if b"pre_lock_cpu_ms" in kv:
        a, b = num(b"pre_lock_cpu_ms"), num(b"mutex_wait_ms")
        return None if a is None or b is None else (STAGE_LOCK, (a, b))
    if b"d_b_alloc" in kv:
        alloc, init, total = num(b"d_b_alloc"), num(b"msm_init"), num(b"total")
        if alloc is None or total is None:
            return None
        return STAGE_NTT_H, (alloc + (init or 0), total)
    if b"ntt_msm_h_ms" in kv:
        v = num(b"ntt_msm_h_ms")
        return None if v is None else (STAGE_NTT_MSM, (v,))
    if b"barrier_wait_ms" in kv:
        v = num(b"barrier_wait_ms")
        return None if v is None else (STAGE_BARRIER, (v,))
    if b"batch_add_ms" in kv:
        v = num(b"batch_add_ms")
        return None if v is None else (STAGE_BATCH, (v,))
    if b"tail_msm_ms" in kv:
        v = num(b"tail_msm_ms")
        return None if v is None else (STAGE_TAIL, (v, num(b"gpu_total_ms")))
    if b"mutex_held_ms" in kv:
        v = num(b"mutex_held_ms")
        return None if v is None else (STAGE_HELD, (v,))
    if b"prestage_setup" in kv:
        parts = [num(k) for k in (b"sync_ms", b"trim_ms", b"alloc_ms", b"upload_ms")]
        if all(p is not None for p in parts):
            return STAGE_PRESTAGE, (sum(p for p in parts if p is not None),)
        if kv[b"prestage_setup"].startswith(b"skip"):
            return STAGE_PRESTAGE, (0,)
        return STAGE_PRESTAGE, (num(b"total_ps_ms"),)
    if b"epilogue_ms" in kv:
        return STAGE_EPILOGUE, (num(b"epilogue_ms"), num(b"pre_destructor_ms"))
    return None


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
        self.parts: dict[tuple[str, int | None], PartRecord] = {}
        self.worker_gpu: dict[int, int] = {}
        self.wall_anchor: datetime | None = None
        self.bytes_read = 0
        self._jobs: dict[bytes, str] = {}
        self._tail = b""  # an incomplete last line
        self._splice: tuple[bytes, int, list[bytes]] | None = None
        self._line_no = 0
        self._stamp = -1  # the last TIMELINE stamp read
        self._max_stamp = -1
        self._pending: deque[_Pending] = deque()
        self._attributor = TimingAttributor(self.gpu_of)
        self._duplicates = 0

    # -- public -----------------------------------------------------------------------------

    def gpu_of(self, worker: int | None) -> int:
        """The GPU a worker runs on (stdout map, else --workers-per-gpu, else 0)."""
        if worker is None:
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
        self._lines(data[:cut].split(b"\n"))

    def snapshot(self, finished: bool = False) -> LogModel:
        """The model of what was read so far.

        Args:
            finished: the log is complete: pending timing lines are attributed with no
                later stamp, and partitions picked up but never ended count as failed.
        """
        from parsers.analysis import build_model

        return build_model(self, finished=finished)

    def build(self) -> LogModel:
        """End of input: attribute what waits and return the finished model."""
        self.finish()
        return self.snapshot(finished=True)

    def finish(self) -> None:
        """End of input (the partial last line, if any, stays unread)."""
        if self._splice is not None:
            self._flush_splice()
        while self._pending:
            self._resolve_one()

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
        line_no = self._line_no
        for line in lines:
            line_no += 1
            if self._splice is not None:
                if self._continues_splice(line, line_no):
                    continue
            if line.startswith(TIMELINE):
                if (b"CUZK_" in line or b"\x1b" in line or b"Z " in line) and self._spliced(
                    line, 0, line_no
                ):
                    continue
                counts.timeline += 1
                self._timeline(line, line_no)
                continue
            idx = line.find(TIMELINE)
            if idx > 0:
                # a fragment of something else before the TIMELINE line
                counts.other += 1
                if not self._spliced(line, idx, line_no):
                    counts.timeline += 1
                    self._timeline(line[idx:], line_no)
                continue
            self._other_line(line, line_no)
        self._line_no = line_no

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
        assert self._splice is not None
        head, line_no, inners = self._splice
        self._splice = None
        self.counts.timeline += 1
        self._timeline(head, line_no)
        for inner in inners:
            self._other_line(inner, line_no)

    def _continues_splice(self, line: bytes, line_no: int) -> bool:
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
        if line.startswith(b"CUZK_"):
            counts.cuzk_timing += 1
            colon = line.find(b": ")
            if colon < 0:
                return
            parsed = _timing_values(line[colon + 2 :])
            if parsed is not None:
                self._pending.append(_Pending(parsed[0], parsed[1], line_no, self._stamp))
                if len(self._pending) > _MAX_PENDING:
                    self._resolve_one()
            return
        first = line[:1]
        if first == b"\x1b" or (first.isdigit() and _STDOUT_START.match(line)):
            counts.stdout += 1
            self._stdout(line)
            return
        counts.other += 1

    def _stdout(self, line: bytes) -> None:
        if b"\x1b" in line:
            line = _ANSI.sub(b"", line)
        if b"worker started" in line:
            kv = dict(_KV.findall(line))
            try:
                self.worker_gpu[int(kv[b"worker_id"])] = int(kv[b"gpu"])
            except (KeyError, ValueError):
                self.counts.malformed += 1
        elif b"starting cuzk engine" in line and self.wall_anchor is None:
            stamp = line.split(None, 1)[0].decode("ascii", "replace")
            try:
                self.wall_anchor = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                self.counts.malformed += 1

    # -- TIMELINE ---------------------------------------------------------------------------

    def _timeline(self, line: bytes, line_no: int) -> None:
        fields = line.split(b",", 4)
        if len(fields) < 4:
            self._malformed()
            return
        try:
            stamp = int(fields[1])
        except ValueError:
            self._malformed()
            return
        event = fields[2]
        if event not in _EVENTS:
            self._malformed()
            return
        job_b = fields[3]
        job = self._jobs.get(job_b)
        if job is None:
            job = job_b.decode("utf-8", "replace")
            self._jobs[job_b] = job
        detail = _detail(fields[4]) if len(fields) > 4 else {}
        snap = b"snap_partition" in detail
        raw_part = detail.get(b"snap_partition") if snap else detail.get(b"partition")
        try:
            partition = int(raw_part) if raw_part is not None else None
            worker_raw = detail.get(b"worker")
            worker = int(worker_raw) if worker_raw is not None else None
        except ValueError:
            self._malformed()
            return
        self._advance_clock(stamp)
        key = (job, partition)
        rec = self.parts.get(key)
        if rec is None:
            rec = PartRecord(job, partition)
            self.parts[key] = rec
        if not rec.kind or b"kind" in detail:
            kind = detail.get(b"kind")
            rec.kind = kind.decode("utf-8", "replace") if kind else _kind_from_job(job, snap)
        if worker is not None:
            rec.worker = worker
        if event == b"GPU_START":
            if rec.gpu_start is not None:
                self._duplicates += 1
            rec.gpu_start = stamp
            rec.start_line = line_no
            self._attributor.started(rec)
        elif event == b"GPU_END":
            rec.gpu_end = stamp
            rec.end_line = line_no
            self._attributor.ended(rec)
        elif event == b"SYNTH_START":
            rec.synth_start = stamp
        elif event == b"SYNTH_END":
            rec.synth_end = stamp
        elif event == b"GPU_PICKUP":
            rec.pickup = stamp
        else:  # GPU_QUEUE / CHAN_SEND
            rec.queued = stamp

    def _malformed(self) -> None:
        self.counts.timeline -= 1
        self.counts.malformed += 1

    def _advance_clock(self, stamp: int) -> None:
        pending = self._pending
        if pending:
            # the lines read since the last stamp get this one as the stamp after them
            for item in reversed(pending):
                if item.next_stamp is not None:
                    break
                item.next_stamp = stamp
            while pending and stamp - DEFER_MS >= pending[0].prev_stamp:
                self._resolve_one()
        self._stamp = stamp
        if stamp > self._max_stamp:
            self._max_stamp = stamp

    def _resolve_one(self) -> None:
        item = self._pending.popleft()
        lo = -float("inf") if item.prev_stamp < 0 else item.prev_stamp - WINDOW_SLACK_MS
        nxt = item.next_stamp
        hi = float("inf") if nxt is None else nxt + WINDOW_SLACK_MS
        self._attributor.attribute(item.stage, item.values, item.line_no, lo, hi)


@dataclass(slots=True)
class _Pending:
    """A C++ timing line waiting for the TIMELINE stamp after it."""

    stage: int
    values: Values
    line_no: int
    prev_stamp: int
    next_stamp: int | None = None
