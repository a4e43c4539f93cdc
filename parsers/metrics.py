"""The Prometheus metric families of a model: the report's figures as gauges and counters.

Model in, families out (tui/exporter.py serves them). The gauges are the JSON report's
figures of the latest model. The counters count the part of the run that no later line can
change, so that a `_total` never goes down while the log grows: each GPU's time before the
start of its oldest interval still running (docs/analysis.md#prometheus-metrics). `Carried`
keeps them going up across a new run (a truncated or rotated log, a restarted daemon).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from parsers import tracing
from parsers.analysis import SETTLE_MS
from parsers.breakdown import (
    BUSY_KEYS,
    BUSY_ORDER,
    clipped_split,
    kernel_scaled,
    unmeasured_phases,
    whole_run,
)
from parsers.model import CAUSES, PHASE_KEYS, Breakdown, LogModel, ProofTable
from parsers.proofs import failed_proofs
from parsers.rows import distinct

# the gap lengths a bucket ends at (s): 0.05 and 0.5 are the report's histogram's edges
GAP_BUCKETS_S = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, math.inf)
GAP_LE = tuple("+Inf" if x == math.inf else repr(x) for x in GAP_BUCKETS_S)  # the `le` labels
GAP_CAUSES = tuple("unknown" if c is None else c for c in CAUSES)  # a gap's cause, by index
MID_PROOF, BOUNDARY = "mid-proof", "boundary"  # both sides of one job, or not
LINE_KINDS = ("timeline", "cuzk_timing", "stdout", "malformed", "other")  # add up to `total`

BUSY = "cuzk_gpu_busy_seconds"
IDLE = "cuzk_gpu_idle_seconds"
SPAN = "cuzk_gpu_span_seconds"
GAPS = "cuzk_gap_seconds"
COMPLETED = "cuzk_proofs_completed"
FAILED = "cuzk_proofs_failed"
LINES = "cuzk_log_lines"
MALFORMED = "cuzk_log_malformed_lines"
GAP_SUM = GAPS + "_sum"
GAP_BUCKET = GAPS + "_bucket"

# A counter's series: its family's name and its label values (the host is added when served)
Series = tuple[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class GpuGauges:
    """One GPU's figures as the JSON report's `gpus[]` gives them (docs/analysis.md#per-gpu)."""

    gpu: int  # the CUDA ordinal
    timeline_util: float
    kernel_util: float
    kernel_util_low: float
    kernel_util_high: float


@dataclass(frozen=True, slots=True)
class Figures:
    """What a model gives the metrics: gauges of now, and counters of this run so far."""

    gpus: tuple[GpuGauges, ...]
    s_per_proof: float
    in_synthesis: int  # partitions in synthesis at the latest stamp read
    counters: dict[Series, float]  # the run's counts (`Carried` keeps them going up)


def settled_limit(model: LogModel, quiet_ms: float = 0.0) -> float:
    """Where what a live model says stops changing: SETTLE_MS before its latest stamp, by
    when the timing lines of an interval and the decisions about it have come. The log's
    clock runs on while it is quiet (`quiet_ms` since it last grew): quiet that long, all
    of it (a finished model: all of it too)."""
    if model.finished or quiet_ms >= SETTLE_MS:
        return math.inf
    return model.now_ms - SETTLE_MS + max(0.0, quiet_ms)


def settled_until(model: LogModel, quiet_ms: float = 0.0) -> dict[int, float]:
    """Per GPU, where the part of its time that no later line changes ends: the start of its
    oldest interval still running (one that ends will cover time from there on, and give
    the instants it shares with others to its own phases), and never past `settled_limit`."""
    limit = settled_limit(model, quiet_ms)
    out = {g.gpu: limit for g in model.gpus}
    if model.finished:
        return out
    t = model.parts
    running = ~np.isnan(t.gpu_start) & np.isnan(t.gpu_end) & ~t.failed
    for gpu, start in zip(t.gpu[running].tolist(), t.gpu_start[running].tolist(), strict=True):
        if gpu in out:
            out[gpu] = min(out[gpu], start)
    return out


def settled_split(model: LogModel, until: dict[int, float]) -> dict[int, Breakdown]:
    """Per GPU, its busy split (parsers/breakdown.py) of the time before `until[gpu]`.

    Where the whole run is settled this is the report's `busy_split_ms`. Before a running
    interval, the segments' split of that time with the run's kernel estimate in it in
    proportion, as a window's (`kernel_scaled`; the estimate adds what the log leaves to
    inference: docs/analysis.md#kernel_util_range).
    """
    whole = whole_run(model)
    cut = {g: x for g, x in until.items() if math.isfinite(x)}
    if not cut:
        return whole
    t = model.parts
    seg_part = t.seg_rows()
    clipped = clipped_split(t, seg_part, {g: (-math.inf, x) for g, x in cut.items()})
    # the kernel phase of a split is the union of the kernel segments (it comes first)
    parts = kernel_scaled(model, {g: clipped.get(g, Breakdown(g, 0.0, {})) for g in cut})
    return {**whole, **parts}


def _gap_counters(model: LogModel, until: dict[int, float]) -> dict[Series, float]:
    """The gap histogram's buckets and sums: the settled gaps (those that end where the GPU's
    time is settled: a gap before a running interval may be covered once it ends)."""
    gaps = model.gaps
    hi = np.array([until.get(g, math.inf) for g in gaps.gpu.tolist()], dtype=np.float64)
    keep = gaps.end <= hi
    seconds = gaps.duration[keep] / 1000.0
    gpus = [model.gpu_ordinal(g) for g in gaps.gpu[keep].tolist()]
    causes = gaps.cause[keep].tolist()
    sides = gaps.crosses[keep].tolist()
    out: dict[Series, float] = {}
    for gpu, cause, crosses, s in zip(gpus, causes, sides, seconds.tolist(), strict=True):
        labels = (str(gpu), GAP_CAUSES[cause], BOUNDARY if crosses else MID_PROOF)
        out[(GAP_SUM, labels)] = out.get((GAP_SUM, labels), 0.0) + s
        for bound, le in zip(GAP_BUCKETS_S, GAP_LE, strict=True):
            if s <= bound:
                key = (GAP_BUCKET, (*labels, le))
                out[key] = out.get(key, 0.0) + 1
    return out


def _failed_proofs(model: LogModel, limit: float) -> int:
    """The failed proofs (parsers/proofs.py) whose failed partition began in settled time:
    while the log grows a prove is taken as failed when its worker moved on, and a late
    GPU_END can say otherwise."""
    if model.traced_jobs:  # a log without TIMELINE: its failed jobs
        return sum(j.outcome == tracing.FAILED for j in model.traced_jobs)
    failed = failed_proofs(model)
    if not failed.any() or limit == math.inf:
        return int(failed.sum())
    t = model.parts
    settled = t.failed & ~(t.gpu_start > limit)
    names = {t.jobs[j] for j in distinct(t.job[settled]).tolist() if 0 <= j < len(t.jobs)}
    return int((failed & ProofTable.of(model.proofs).named(names)).sum())


def in_synthesis(model: LogModel) -> int:
    """Partitions in synthesis at the latest stamp read (the synthesis lane's step
    function; a model built without it: 0)."""
    times = model.synth_times
    k = int(np.searchsorted(times, model.now_ms, side="right")) - 1
    return int(model.synth_counts[k]) if k >= 0 else 0


def figures_of(model: LogModel, quiet_ms: float = 0.0) -> Figures:
    """The metrics' figures of a model (a live one, or a finished one).

    Args:
        model: the model.
        quiet_ms: how long the log has not grown (the counters count what is settled:
            `settled_until`).

    Returns:
        The gauges of the model, and the counters of what it says is settled.
    """
    until = settled_until(model, quiet_ms)
    split = settled_split(model, until)
    counters: dict[Series, float] = {}

    def add(name: str, labels: tuple[str, ...], value: float) -> None:
        counters[(name, labels)] = counters.get((name, labels), 0.0) + value

    latest: dict[int, GpuGauges] = {}
    keys = model.gpu_keys or {}
    # a restarted daemon's last run is the one of now: the gauges are its GPUs' alone (a GPU
    # of an earlier run only is no GPU of now); the counters add every run up
    # (the last run may have no GPU yet: then no GPU has gauges, not the run before's)
    runs = model.run_lines or ()
    last = len(runs) - 1 if runs else max((k.host for k in keys.values()), default=0)
    for g in model.gpus:
        gpu = model.gpu_ordinal(g.gpu)
        lo, hi = g.kernel_util_range
        # a GPU whose span has no length (no completed interval yet, or one of 0 ms) has no
        # utilization: no gauge (a 0 drew a drop to 0 % after every rotation), as the JSON's
        # null
        if g.spanned and (g.gpu not in keys or keys[g.gpu].host == last):
            latest[gpu] = GpuGauges(
                gpu,
                round(g.timeline_util, 6),
                round(g.kernel_util, 6),
                round(lo, 6),
                round(hi, 6),
            )
        b = split.get(g.gpu, Breakdown(g.gpu, 0.0, {}))
        unmeasured = unmeasured_phases(g)  # no series: not measured is no 0 s
        for phase in BUSY_ORDER:
            if phase not in unmeasured:
                add(BUSY, (str(gpu), PHASE_KEYS[phase]), b.phase_ms.get(phase, 0.0) / 1000)
        span_ms = 0.0
        if g.span is not None:
            span_ms = max(0.0, min(float(g.span[1]), until[g.gpu]) - g.span[0])
        add(SPAN, (str(gpu),), span_ms / 1000)
        add(IDLE, (str(gpu),), max(0.0, span_ms - b.busy_ms) / 1000)
    for key, value in _gap_counters(model, until).items():
        add(*key, value)
    add(COMPLETED, (), model.summary.proofs_completed)
    add(FAILED, (), _failed_proofs(model, settled_limit(model, quiet_ms)))
    lines = model.counts.as_dict()
    for kind in LINE_KINDS:
        add(LINES, (kind,), lines[kind])
    add(MALFORMED, (), model.counts.malformed)
    return Figures(
        gpus=tuple(latest[k] for k in sorted(latest)),
        s_per_proof=math.nan if model.summary.rate is None else round(model.summary.rate, 6),
        in_synthesis=in_synthesis(model),
        counters=counters,
    )


@dataclass(slots=True)
class Carried:
    """The counters of this process: never down. Within a run each series keeps the most it
    has counted; a new run (the log truncated or rotated) starts counting on top."""

    base: dict[Series, float] = field(default_factory=dict)  # the runs before this one
    high: dict[Series, float] = field(default_factory=dict)  # this run's most

    def counted(self, counters: dict[Series, float]) -> dict[Series, float]:
        """Every series' count with `counters` the run's latest."""
        for key, value in counters.items():
            self.high[key] = max(value, self.high.get(key, 0.0))
        keys = self.base.keys() | self.high.keys()
        return {k: self.base.get(k, 0.0) + self.high.get(k, 0.0) for k in keys}

    def new_run(self, last: dict[Series, float]) -> None:
        """A new run begins; `last` are the counters of the run that ended, as it ended."""
        self.counted(last)
        for key, value in self.high.items():
            self.base[key] = self.base.get(key, 0.0) + value
        self.high = {}


@dataclass(frozen=True, slots=True)
class LogHealth:
    """What the follower knows of its input (tui/follow.py), for the reader's gauges."""

    state: str  # the input's state now
    states: tuple[str, ...]  # every state it can be in
    last_line_age_s: float | None  # since the input last grew (None: not known)
    # how often a new run began in the input (truncated, rotated), by how: the state says
    # it for a minute only, which a scrape a minute apart can miss
    new_runs: tuple[tuple[str, int], ...] = ()


def _counters(
    counted: dict[Series, float], name: str, doc: str, labels: list[str], host: str
) -> CounterMetricFamily:
    family = CounterMetricFamily(name, doc, labels=["host", *labels])
    for (series, values), value in sorted(counted.items()):
        if series == name:
            family.add_metric([host, *values], value)
    return family


def _gap_histogram(counted: dict[Series, float], host: str) -> HistogramMetricFamily:
    family = HistogramMetricFamily(
        GAPS,
        "Length of each settled idle gap of a GPU, by cause and side (mid-proof: both sides "
        "of one job; boundary: it crosses a proof boundary).",
        labels=["host", "gpu", "cause", "side"],
    )
    sums = sorted((v, s) for (n, v), s in counted.items() if n == GAP_SUM)
    for labels, total in sums:
        buckets = [(le, counted.get((GAP_BUCKET, (*labels, le)), 0.0)) for le in GAP_LE]
        family.add_metric([host, *labels], buckets, total)
    return family


def families(
    figures: Figures, counted: dict[Series, float], host: str, health: LogHealth | None = None
) -> Iterable[Metric]:
    """The metric families: the gauges of `figures`, the counters `counted` (`Carried`), and
    the reader's health.

    Args:
        figures: the latest model's figures (`figures_of`).
        counted: every counter's series, as `Carried.counted` gives them.
        host: the `host` label.
        health: the follower's input, when there is one.

    Returns:
        The families, each with HELP text and a `host` label.
    """
    gauges = (
        (
            "cuzk_gpu_timeline_utilization",
            "TIMELINE busy / span: the union of the GPU's completed intervals over its span.",
            "timeline_util",
        ),
        (
            "cuzk_gpu_kernel_utilization",
            "Kernel busy / span: the union of its kernel segments over its span (an estimate).",
            "kernel_util",
        ),
        (
            "cuzk_gpu_kernel_utilization_low",
            "The least kernel utilization the log allows (kernel_util_range).",
            "kernel_util_low",
        ),
        (
            "cuzk_gpu_kernel_utilization_high",
            "The most kernel utilization the log allows (kernel_util_range).",
            "kernel_util_high",
        ),
    )
    for name, doc, figure in gauges:
        gauge = GaugeMetricFamily(name, doc, labels=["host", "gpu"])
        for g in figures.gpus:
            gauge.add_metric([host, str(g.gpu)], float(getattr(g, figure)))
        yield gauge
    yield _counters(
        counted,
        BUSY,
        "GPU busy time by phase: each settled instant of its completed intervals given to one "
        f"phase ({', '.join(BUSY_KEYS)}).",
        ["gpu", "phase"],
        host,
    )
    yield _counters(counted, IDLE, "Settled GPU time no completed interval covers.", ["gpu"], host)
    yield _counters(
        counted,
        SPAN,
        "Settled GPU span: from its first GPU_START on; rate(busy) / rate(span) is the "
        "utilization over a window.",
        ["gpu"],
        host,
    )
    yield _gap_histogram(counted, host)
    yield _counters(counted, COMPLETED, "Proofs whose every partition ended.", [], host)
    yield _counters(counted, FAILED, "Proofs with a failed partition.", [], host)
    s_per_proof = GaugeMetricFamily(
        "cuzk_seconds_per_proof",
        "Run span in seconds per completed proof (a rate over the run; NaN until one completes).",
        labels=["host"],
    )
    s_per_proof.add_metric([host], figures.s_per_proof)
    yield s_per_proof
    synthesis = GaugeMetricFamily(
        "cuzk_partitions_in_synthesis",
        "Partitions in synthesis at the latest TIMELINE stamp read.",
        labels=["host"],
    )
    synthesis.add_metric([host], figures.in_synthesis)
    yield synthesis
    yield _counters(
        counted, LINES, f"Log lines read, by kind ({', '.join(LINE_KINDS)}).", ["kind"], host
    )
    yield _counters(counted, MALFORMED, "Log lines that could not be read.", [], host)
    if health is not None:
        yield from health_families(health, host)


def health_families(health: LogHealth, host: str) -> Iterable[Metric]:
    """The reader's health: since when the log is quiet, and the follower's state."""
    if health.last_line_age_s is not None:
        age = GaugeMetricFamily(
            "cuzk_log_last_line_age_seconds", "Seconds since the log last grew.", labels=["host"]
        )
        age.add_metric([host], max(0.0, health.last_line_age_s))
        yield age
    state = GaugeMetricFamily(
        "cuzk_log_input_state",
        "The follower's input: 1 for the state it is in (following: all is well).",
        labels=["host", "state"],
    )
    for name in health.states:
        state.add_metric([host, name], 1.0 if name == health.state else 0.0)
    yield state
    runs = CounterMetricFamily(
        "cuzk_log_new_runs",
        "How often the input began a new run since the exporter started (the log truncated "
        "or rotated), by how.",
        labels=["host", "how"],
    )
    for how, n in health.new_runs:
        runs.add_metric([host, how], n)
    yield runs
