"""The proofs a cuzk log tells by its stdout tracing lines alone.

A daemon without the pipeline, or one whose every job failed, prints no TIMELINE line; its
jobs are read from `job enqueued`, `job dequeued for proving`, `proof completed successfully`
and the ERROR lines instead (docs/log-format.md#jobs-from-the-tracing-lines).

`TracingScanner` takes byte chunks cut anywhere (the partial last line waits for its newline)
and looks only at the lines that hold one of a few markers, found by one regular expression
over the chunk: everything else costs a scan at C speed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from parsers.model import LogModel, Proof, ProofSpans
from parsers.sanitize import visible

MAX_LINE_BYTES = 1 << 20  # a longer line is skipped (as the core does)
MAX_FIELD_CHARS = 256  # a job id, a kind
MAX_ERROR_CHARS = 300  # an error kept with its job

# The lines read: anything else is not looked at.
_MARKERS = re.compile(
    rb"job enqueued|job dequeued|processing job|proof completed successfully|ERROR"
    rb"|starting cuzk engine"
)
_SGR = re.compile(r"\x1b\[[0-9;:]*[A-Za-z]")
_ISO = r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?"
_LEVEL = r"(TRACE|DEBUG|INFO|WARN|ERROR)"
# the line's own time before its level (under any capture prefix), or a capture's time
_OWN = re.compile(_ISO + r"\s+" + _LEVEL + r"\s+(.*)")
_JOURNAL = re.compile(
    r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))? [\w.-]+ [^\s:\[]+(?:\[\d+\])?:"
    r"\s+" + _LEVEL + r"\s+(.*)"
)
_PREFIX_ISO = re.compile(
    r"^" + _ISO + r"(?: [\w.-]+ [^\s:\[]+(?:\[\d+\])?:)?\s+" + _LEVEL + r"\s+(.*)"
)
_BARE = re.compile(r"^\s*" + _LEVEL + r"\s+(.*)")
# `span{fields}:span2{fields}: target: message`: the spans, then a Rust path
_FIELDS = r"\{(?:\"(?:[^\"\\]|\\.)*\"|[^{}\"])*\}"
_HEAD = re.compile(
    r"^(?:((?:[A-Za-z_]\w*(?:" + _FIELDS + r")?:)+) )?([A-Za-z_]\w*(?:::\w+)*): (.*)$"
)
_FIELD = re.compile(
    r"(?<![\w.])(job_id|proof_kind|worker_id|gpu|request_id)=(\"(?:[^\"\\]|\\.)*\"|[^\s{}]+)"
)
_NUMBER = re.compile(r"(?<![\w.])(total_ms|queue_ms|prove_ms)=(\d{1,15})(?!\S)")
_ENABLED = re.compile(r"pipeline_enabled=(true|false)")
_MONTHS = {
    m: k + 1
    for k, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    )
}
_EPOCH = datetime(1970, 1, 1)

COMPLETED, FAILED, UNFINISHED = "completed", "failed", "unfinished"


@dataclass(frozen=True, slots=True)
class TracedJob:
    """One job as the tracing lines tell it (wall times: µs since 1970, in the log's clock)."""

    job: str
    kind: str
    enqueued_us: int | None
    dequeued_us: int | None
    ended_us: int | None
    queue_ms: int | None
    prove_ms: int | None
    total_ms: int | None
    outcome: str  # COMPLETED, FAILED or UNFINISHED
    error: str | None
    worker: int | None
    gpu: int | None


@dataclass(frozen=True, slots=True)
class TracedLog:
    """What the tracing lines of a log said: its jobs in the order they appeared."""

    jobs: tuple[TracedJob, ...] = ()
    pipeline_enabled: bool | None = None  # the last `starting cuzk engine` line's
    engine_start_us: int | None = None  # the first `starting cuzk engine` line's time
    first_us: int | None = None  # the first time read
    aware: bool = False  # the times are UTC (the log names a zone)


@dataclass(slots=True)
class _Job:
    job: str
    kind: str
    enqueued_us: int | None = None
    dequeued_us: int | None = None
    ended_us: int | None = None
    queue_ms: int | None = None
    prove_ms: int | None = None
    total_ms: int | None = None
    outcome: str = UNFINISHED
    error: str | None = None
    worker: int | None = None
    gpu: int | None = None

    def frozen(self) -> TracedJob:
        queue_ms = self.queue_ms
        if queue_ms is None and self.enqueued_us is not None and self.dequeued_us is not None:
            queue_ms = max(0, self.dequeued_us - self.enqueued_us) // 1000
        total_ms = self.total_ms
        if total_ms is None and self.enqueued_us is not None and self.ended_us is not None:
            total_ms = max(0, self.ended_us - self.enqueued_us) // 1000
        return TracedJob(
            self.job,
            self.kind,
            self.enqueued_us,
            self.dequeued_us,
            self.ended_us,
            queue_ms,
            self.prove_ms,
            total_ms,
            self.outcome,
            self.error,
            self.worker,
            self.gpu,
        )


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value[:MAX_FIELD_CHARS]


def _int(value: str | None) -> int | None:
    if value is None or not value.isdigit() or len(value) > 9:
        return None
    return int(value)


class TracingScanner:
    """Feed byte chunks (cut anywhere); `result()` gives the jobs read so far."""

    def __init__(self) -> None:
        self._rest = b""  # the partial last line
        self._skipping = False  # inside a line longer than MAX_LINE_BYTES
        self._jobs: list[_Job] = []
        self._latest: dict[str, _Job] = {}  # each job id's latest attempt
        self._attempts: dict[str, int] = {}
        # per kind, the jobs dequeued in order (ended ones are dropped from the top lazily)
        self._dequeued: dict[str, list[_Job]] = {}
        self._pipeline: bool | None = None
        self._engine_us: int | None = None
        self._first_us: int | None = None
        self._aware = False
        self._year: int | None = None  # journald's short prefixes print none

    # -- input --------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the log."""
        if not data:
            return
        last = data.rfind(b"\n")
        if last < 0:
            self._keep(data)
            return
        head = data[:last]
        if self._skipping:
            cut = head.find(b"\n")
            self._skipping = False
            self._rest = b""
            if cut < 0:
                self._keep(data[last + 1 :])
                return
            head = head[cut + 1 :]
        elif self._rest:
            cut = head.find(b"\n")
            first = self._rest + (head if cut < 0 else head[:cut])
            self._rest = b""
            self._scan(first)
            head = b"" if cut < 0 else head[cut + 1 :]
        self._scan(head)
        self._keep(data[last + 1 :])

    def _keep(self, tail: bytes) -> None:
        """Hold a partial line (bounded: a line past MAX_LINE_BYTES is skipped)."""
        if self._skipping:
            return
        if len(self._rest) + len(tail) > MAX_LINE_BYTES:
            self._rest, self._skipping = b"", True
        else:
            self._rest += tail

    def _scan(self, block: bytes) -> None:
        """Read the lines of `block` (whole lines, without the last newline) that hold a
        marker."""
        pos = 0
        while (m := _MARKERS.search(block, pos)) is not None:
            start = block.rfind(b"\n", 0, m.start()) + 1
            end = block.find(b"\n", m.end())
            end = len(block) if end < 0 else end
            if end - start <= MAX_LINE_BYTES:
                self._line(block[start:end].decode("utf-8", "replace"))
            pos = end + 1

    # -- one line -----------------------------------------------------------------------------

    def _line(self, raw: str) -> None:
        line = _SGR.sub("", raw).rstrip("\r").rstrip()
        parsed = self._when(line)
        if parsed is None:
            return
        when, level, body = parsed
        head = _HEAD.match(body)
        if head is None:
            return
        spans, message = head.group(1) or "", head.group(3)
        if message.startswith("starting cuzk engine"):
            enabled = _ENABLED.search(message)
            if enabled is not None:
                self._pipeline = enabled.group(1) == "true"
            if self._engine_us is None:
                self._engine_us = when
            return
        fields = {k: _unquote(v) for k, v in _FIELD.findall(message)}
        in_span = {k: _unquote(v) for k, v in _FIELD.findall(spans)}
        job_id = in_span.get("job_id") or fields.get("job_id")
        kind = in_span.get("proof_kind") or fields.get("proof_kind") or ""
        if level == "ERROR":
            self._failed(job_id, kind, when, message)
        elif message.startswith("job enqueued") and job_id:
            job = self._new(job_id, kind)
            job.enqueued_us = when
        elif job_id is None:
            return
        elif message.startswith("job dequeued"):
            job = self._job(job_id, kind)
            if job.dequeued_us is None:
                job.dequeued_us = when
                self._dequeued.setdefault(job.kind, []).append(job)
        elif message.startswith("processing job") or message.startswith("proof completed"):
            job = self._job(job_id, kind)
            job.worker = _int(in_span.get("worker_id"))
            job.gpu = _int(in_span.get("gpu"))
            if message.startswith("proof completed") and job.outcome == UNFINISHED:
                numbers = {k: int(v) for k, v in _NUMBER.findall(message)}
                job.outcome, job.ended_us = COMPLETED, when
                job.queue_ms = numbers.get("queue_ms")
                job.prove_ms = numbers.get("prove_ms")
                job.total_ms = numbers.get("total_ms")

    def _when(self, line: str) -> tuple[int | None, str, str] | None:
        """The line's wall time (µs), level and the rest, or None for no tracing line."""
        own = _OWN.search(line)
        if own is not None:
            return self._iso(own.groups()[:8]), own.group(9), own.group(10)
        journal = _JOURNAL.match(line)
        if journal is not None:
            mon, day, hh, mm, ss, frac, level, body = journal.groups()
            year = self._year or datetime.now().year
            try:
                wall = datetime(year, _MONTHS[mon], int(day), int(hh), int(mm), int(ss))
            except (KeyError, ValueError):
                return None, level, body
            return self._stamp(wall, frac), level, body
        prefixed = _PREFIX_ISO.match(line)
        if prefixed is not None:
            return self._iso(prefixed.groups()[:8]), prefixed.group(9), prefixed.group(10)
        bare = _BARE.match(line)
        if bare is not None:
            return None, bare.group(1), bare.group(2)
        return None

    def _iso(self, g: tuple[str | None, ...]) -> int | None:
        year, mon, day, hh, mm, ss, frac, zone = g
        try:
            wall = datetime(int(year or 0), int(mon or 0), int(day or 0), int(hh or 0))
            wall = wall.replace(minute=int(mm or 0), second=int(ss or 0))
        except ValueError:
            return None
        if zone and zone != "Z":
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            try:
                wall -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
            except OverflowError:
                return None  # in UTC, past the calendar's ends (9999-12-31T23:00-05:00)
        if self._year is None:
            self._year = wall.year
        if zone:
            self._aware = True
        return self._stamp(wall, frac)

    def _stamp(self, wall: datetime, frac: str | None) -> int:
        us = (wall - _EPOCH) // timedelta(microseconds=1) + int((frac or "0")[:6].ljust(6, "0"))
        if self._first_us is None:
            self._first_us = us
        return us

    # -- jobs ---------------------------------------------------------------------------------

    def _new(self, job_id: str, kind: str) -> _Job:
        """A job enqueued: a new attempt when its id was seen before (a retry reuses it)."""
        n = self._attempts.get(job_id, 0) + 1
        self._attempts[job_id] = n
        name = job_id if n == 1 else f"{job_id} (attempt {n})"
        job = _Job(name, kind)
        self._jobs.append(job)
        self._latest[job_id] = job
        return job

    def _job(self, job_id: str, kind: str) -> _Job:
        """The job's latest attempt (one the log did not show enqueued is made)."""
        job = self._latest.get(job_id)
        if job is None:
            job = self._new(job_id, kind)
        if kind and not job.kind:
            job.kind = kind
        return job

    def _failed(self, job_id: str | None, kind: str, when: int | None, message: str) -> None:
        """An ERROR line: the job its span or fields name, else the job of its kind most
        recently dequeued and not yet ended (`synth_single{proof_kind=…}` names no job)."""
        if job_id is not None:
            job: _Job | None = self._job(job_id, kind)
        elif kind:
            dequeued = self._dequeued.get(kind, [])
            while dequeued and dequeued[-1].outcome != UNFINISHED:
                dequeued.pop()
            job = dequeued[-1] if dequeued else None
        else:
            job = None
        if job is None or job.outcome != UNFINISHED:
            return
        error = message
        at = message.find("error=")
        if at >= 0:
            error = message[at + len("error=") :]
        job.outcome, job.ended_us = FAILED, when
        job.error = visible(_unquote(error.strip()))[:MAX_ERROR_CHARS]

    def result(self) -> TracedLog:
        """What was read so far (a partial last line stays unread)."""
        return TracedLog(
            tuple(j.frozen() for j in self._jobs),
            self._pipeline,
            self._engine_us,
            self._first_us,
            self._aware,
        )


# -- the model ----------------------------------------------------------------------------------

PIPELINE_DISABLED = "pipeline_disabled"
ALL_JOBS_FAILED = "all_jobs_failed"
EMPTY_FILE = "empty_file"
NOT_A_CUZK_LOG = "not_a_cuzk_log"
NO_TIMELINE = "no_timeline"  # cuzk lines, none of the above: an engine before TIMELINE


def no_timeline_reason(model: LogModel, traced: TracedLog) -> str | None:
    """Why a log has no TIMELINE line (docs/analysis.md#logs-without-timeline), or None."""
    if model.counts.timeline or model.run_lines:
        return None
    if model.counts.total == 0 and not model.partial_bytes:
        return EMPTY_FILE
    if traced.pipeline_enabled is False:
        return PIPELINE_DISABLED
    if traced.jobs and all(j.outcome == FAILED for j in traced.jobs):
        return ALL_JOBS_FAILED
    if model.engine_seen or model.counts.cuzk_timing or traced.jobs:
        return NO_TIMELINE
    return NOT_A_CUZK_LOG


def wall_us(wall: datetime) -> int:
    """A wall time as µs since 1970 in its own clock (UTC when it names a zone)."""
    if wall.tzinfo is not None:
        wall = wall.astimezone(UTC).replace(tzinfo=None)
    return (wall - _EPOCH) // timedelta(microseconds=1)


def us_wall(us: int, aware: bool) -> datetime:
    """The inverse of `wall_us`."""
    wall = _EPOCH + timedelta(microseconds=us)
    return wall.replace(tzinfo=UTC) if aware else wall


def with_traced(model: LogModel, traced: TracedLog) -> LogModel:
    """`model` with the jobs its tracing lines tell and the reason it has no TIMELINE line
    (a model with TIMELINE lines is returned as it is: its figures tell its proofs).

    The jobs are placed on the model's ms clock (ms since `starting cuzk engine`) as proofs
    from their first dequeue to their end, so that the proofs lane draws them.
    """
    reason = no_timeline_reason(model, traced)
    if reason is None:
        return model
    # a worker line maps a worker to a GPU, but no GPU interval exists: no GPU to show
    model = replace(
        model, gpus=(), workers=(), lanes=(), kernel_gaps={}, run_split={}, segment_split={}
    )
    if not traced.jobs:
        return replace(model, no_timeline_reason=reason)
    errors = [j.error for j in traced.jobs if j.outcome == FAILED and j.error]
    own = traced.engine_start_us if traced.engine_start_us is not None else traced.first_us
    anchor = own
    if model.wall_anchor is not None and (model.wall_anchor.tzinfo is not None) == traced.aware:
        anchor = wall_us(model.wall_anchor)  # the core's, in the same clock
    wall = model.wall_anchor
    if wall is None and traced.engine_start_us is not None:
        wall = us_wall(traced.engine_start_us, traced.aware)

    def ms(us: int | None) -> int | None:
        return None if us is None or anchor is None else (us - anchor) // 1000

    proofs = []
    for j in traced.jobs:
        first = ms(j.dequeued_us if j.dequeued_us is not None else j.enqueued_us)
        end = ms(j.ended_us)
        first = first if first is not None else end
        proofs.append(
            Proof(
                j.job,
                j.kind,
                0,
                first,
                end if j.outcome == COMPLETED else None,
                j.outcome == COMPLETED,
                end if end is not None else first,
            )
        )
    starts = [p.first_synth_start for p in proofs if p.first_synth_start is not None]
    ends = [p.last_gpu_end for p in proofs if p.last_gpu_end is not None]
    seen = [p.last_seen for p in proofs if p.last_seen is not None]
    summary = replace(
        model.summary,
        proofs_started=len(proofs),
        proofs_completed=sum(p.completed for p in proofs),
        first_synth_start=min(starts, default=None),
        last_gpu_end=max(ends, default=None),
    )
    return replace(
        model,
        proofs=tuple(proofs),
        proof_spans=ProofSpans.of(proofs),
        summary=summary,
        now_ms=max([model.now_ms, *seen]),
        wall_anchor=wall,
        traced_jobs=traced.jobs,
        traced_aware=traced.aware,
        no_timeline_reason=reason,
        first_job_error=errors[0] if errors else None,
    )
