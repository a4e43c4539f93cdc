"""The JSON report document (docs/analysis.md#the-json-report), built from the model."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from parsers import _core, tracing
from parsers.breakdown import (
    busy_split_ms,
    estimated_keys,
    unmeasured_keys,
    whole_run,
    workers_unmeasured,
)
from parsers.durations import counted
from parsers.model import CAUSES, Breakdown, GapTable, LogModel, ProofTable
from parsers.proofs import failed_proofs
from parsers.sanitize import visible

SCHEMA = 1
NOT_A_CUZK_LOG = "no TIMELINE lines: is this a cuzk daemon log?"
EMPTY_LOG = "no TIMELINE lines: the log is empty"
PIPELINE_DISABLED = (
    "no TIMELINE lines: the daemon ran with the pipeline disabled (pipeline.enabled=false), "
    "so this log has no GPU intervals to show"
)
ALL_JOBS_FAILED = "no TIMELINE lines: the pipeline was enabled but every job failed"
OLDER_ENGINE = (
    "no TIMELINE lines: the daemon ran with the pipeline disabled (pipeline.enabled=false) "
    "or predates TIMELINE (2026-02-18), so this log has no GPU intervals to show"
)
ERROR_CHARS = 120  # of the first job error, in the one-line sentence


def runs_sentence(model: LogModel) -> str | None:
    """One sentence when the daemon restarted within the log, else None."""
    if not model.restarted:
        return None
    runs = model.run_lines or ()
    lines = ", ".join(str(n) for n in runs)
    return (
        f"the daemon restarted: {len(runs)} runs (from lines {lines}), each shown and counted apart"
    )


MID_RUN = "log starts mid-run: figures from the first whole interval"


def unplaced_sentence(model: LogModel) -> str | None:
    """What the figures assumed when no line said which GPU each of several workers is on
    (docs/analysis.md#what-is-read-from-the-log): each on GPU 0 (None: nothing assumed)."""
    if not model.workers_assumed:
        return None
    n = len(model.unplaced_workers)
    which = "a log" if model.gpu_keys else "the log"  # several logs: each one's report says
    return f"{n} workers {which} puts on no GPU: counted on GPU 0 (--workers-per-gpu N)"


NO_GPU_LINES = (
    "no GPU_START/GPU_END lines in this log: the engine does not write them when "
    "CUZK_DISABLE_SPLIT_PROVE=1 is set"
)
NO_GPU_YET = "no GPU interval in this log yet"


# a partition picked up this long (log time) before now with no GPU_START anywhere: the
# engine does not print them (one enters the prover within milliseconds of its pickup)
NO_GPU_START_AFTER_MS = 60_000


def no_gpu_sentence(model: LogModel) -> str | None:
    """Why a log with TIMELINE lines has no GPU interval (None: it has one, or no TIMELINE
    line; a GPU its stdout names is no interval). A log begun inside its only intervals has
    their ends alone. A GPU worker picked partitions up and none entered the prover: the
    engine does not print GPU_START/GPU_END. Else no partition got that far (a daemon in its
    first synthesis, a log cut short): a log still growing has none yet."""
    t = model.parts
    if not model.counts.timeline or t.any_row(lambda p: ~np.isnan(p.gpu_start)):
        return None  # (asked of a live model's parts: the header asks at each update)
    ended = ~np.isnan(t.gpu_end)
    if ended.any() and model.gpus:
        return None
    if ended.any():
        # begun mid-interval (tail, journalctl -f): every GPU_END's start is before the log
        yet = "" if model.finished else " yet"
        inside = counted(int(ended.sum()), "interval")
        return f"no whole GPU interval{yet}: the log begins inside its {inside}"
    picked = t.pickup[~np.isnan(t.pickup)]
    if len(picked) and model.now_ms - float(picked.min()) > NO_GPU_START_AFTER_MS:
        return NO_GPU_LINES
    if not model.finished:
        return NO_GPU_YET
    if len(picked):  # the log ends right after them
        return (
            f"no GPU interval: {counted(len(picked), 'partition')} picked up by a GPU worker, "
            "none in the prover before the log ends"
        )
    queued = int(np.count_nonzero(~np.isnan(t.queued)))
    if queued:
        return (
            f"no GPU interval: {counted(queued, 'partition')} queued for a GPU, none picked "
            "up before the log ends"
        )
    return "no GPU interval: no partition reached the GPU queue before the log ends"


def timeline_reason(model: LogModel) -> str | None:
    """Why the log has no TIMELINE line, as the JSON names it (None: it has some)."""
    if model.no_timeline_reason is not None:
        return model.no_timeline_reason
    return tracing.no_timeline_reason(model, tracing.TracedLog())


def missing_timeline(model: LogModel) -> str | None:
    """The sentence that explains a log without TIMELINE lines, or None when it has some."""
    reason = timeline_reason(model)
    if reason is None:
        return None
    jobs = model.traced_jobs
    done = sum(j.outcome == tracing.COMPLETED for j in jobs)
    told = (
        f"; {done} of {counted(len(jobs), 'job')} completed (from the tracing lines)"
        if jobs
        else ""
    )
    if reason == tracing.EMPTY_FILE:
        return EMPTY_LOG
    if reason == tracing.NOT_A_CUZK_LOG:
        return NOT_A_CUZK_LOG
    if reason == tracing.PIPELINE_DISABLED:
        return PIPELINE_DISABLED + told
    if reason == tracing.ALL_JOBS_FAILED:
        error = visible(model.first_job_error or "")
        if len(error) > ERROR_CHARS:
            error = error[: ERROR_CHARS - 1] + "…"
        first = f"; the first: {error}" if error else ""
        return f"{ALL_JOBS_FAILED} ({counted(len(jobs), 'job')}{first})"
    return OLDER_ENGINE + told


def traced_dicts(model: LogModel) -> list[dict[str, Any]]:
    """The report's `proofs` list for a log without TIMELINE lines: its traced jobs."""

    def iso(us: int | None) -> str | None:
        return None if us is None else tracing.us_wall(us, model.traced_aware).isoformat()

    return [
        {
            "timeline": False,
            "job": j.job,
            "kind": j.kind,
            "enqueued": iso(j.enqueued_us),
            "dequeued": iso(j.dequeued_us),
            "ended": iso(j.ended_us),
            "queue_ms": j.queue_ms,
            "prove_ms": j.prove_ms,
            "total_ms": j.total_ms,
            "outcome": j.outcome,
            "error": j.error,
            "worker": j.worker,
            "gpu": j.gpu,
            "completed": j.outcome == tracing.COMPLETED,
            "failed": j.outcome == tracing.FAILED,
        }
        for j in model.traced_jobs
    ]


def listed_gaps(model: LogModel, min_gap_ms: int = 0) -> GapTable:
    """The gaps a report lists: all of them, or those of at least `min_gap_ms`."""
    gaps = model.gaps
    if min_gap_ms <= 0:
        return gaps
    return gaps.take(np.flatnonzero(gaps.duration >= min_gap_ms))


def gap_dicts(gaps: GapTable) -> list[dict[str, Any]]:
    """The report's `gaps` list, made from the columns (`gaps_json` writes the same). A
    gap's `rank` is its number among the gaps of `gaps` (GapTable.ranks): of those a
    --min-gap kept, the longest, the same as among all."""
    t = gaps.parts
    sides = np.concatenate([gaps.before, gaps.after])
    jobs = [t.jobs[j] for j in t.job[sides].tolist()]
    workers = t.worker[sides].tolist()
    partitions = [None if p < 0 else p for p in t.partition[sides].tolist()]
    n = len(gaps)
    out = []
    for k, (rank, gpu, start, end, cause, crosses) in enumerate(
        zip(
            gaps.ranks().tolist(),
            gaps.gpu.tolist(),
            gaps.start.tolist(),
            gaps.end.tolist(),
            gaps.cause.tolist(),
            gaps.crosses.tolist(),
            strict=True,
        )
    ):
        out.append(
            {
                "rank": rank,
                "gpu": gpu,
                "start": start,
                "end": end,
                "duration_ms": end - start,
                "before": {"job": jobs[k], "worker": workers[k], "partition": partitions[k]},
                "after": {
                    "job": jobs[n + k],
                    "worker": workers[n + k],
                    "partition": partitions[n + k],
                },
                "crosses_proof_boundary": crosses,
                "cause": CAUSES[cause],
            }
        )
    return out


# Rows of the gap and proof lists written per piece: a piece of ~1,000 rows (~270 kB of
# gaps) is made, copied into a str and written while it is still in the CPU's cache, in
# memory the allocator hands out again; a piece of megabytes is fresh pages each time
GAP_ROWS_PER_PIECE = 1024
PROOF_ROWS_PER_PIECE = 1024


def gaps_json(gaps: GapTable) -> Iterator[str]:
    """The report's `gaps` list as compact JSON text, in pieces, exactly as `json.dumps`
    writes `gap_dicts(gaps)` (ensure_ascii): the core writes it from the columns."""
    t = gaps.parts
    crosses = gaps.crosses
    ranks = gaps.ranks()

    def piece(part: slice) -> str:
        return _core.gap_rows_json(
            ranks[part],
            gaps.gpu[part],
            gaps.start[part],
            gaps.end[part],
            gaps.cause[part],
            crosses[part],
            gaps.before[part],
            gaps.after[part],
            t.job,
            t.worker,
            t.partition,
            t.jobs,
            CAUSES,
        )

    return _pieces(len(gaps), GAP_ROWS_PER_PIECE, piece)


def _pieces(rows: int, per_piece: int, piece: Callable[[slice], str]) -> Iterator[str]:
    """A JSON list of `rows` rows, written `per_piece` at a time (`piece`: the rows of a
    slice as JSON text, joined by `, `)."""
    yield "["
    for lo in range(0, rows, per_piece):
        yield (", " if lo else "") + piece(slice(lo, lo + per_piece))
    yield "]"


def proofs_json(model: LogModel) -> Iterator[str]:
    """The report's `proofs` list as compact JSON text, in pieces, exactly as `json.dumps`
    writes its dicts (ensure_ascii): the core writes it from the proofs' columns."""
    t = ProofTable.of(model.proofs)
    failed = failed_proofs(model)
    log, logs = _proof_logs(model)

    def piece(part: slice) -> str:
        return _core.proof_rows_json(
            t.job[part],
            t.kind[part],
            t.partitions[part],
            t.first[part],
            t.last[part],
            t.completed[part],
            failed[part],
            t.jobs,
            t.kinds,
            None if log is None else log[part],
            logs,
        )

    return _pieces(len(t.job), PROOF_ROWS_PER_PIECE, piece)


def _rounded_ms(ms: float | None) -> float | None:
    """A figure in ms to the µs, or null."""
    return None if ms is None else round(ms, 3)


def _proof_logs(model: LogModel) -> tuple[npt.NDArray[np.int32] | None, list[str]]:
    """Of several logs, the log each proof is from (an index into the names), and their
    names; of one, (None, [])."""
    if model.proof_hosts is None or model.log_names is None:
        return None, []
    return model.proof_hosts.astype(np.int32), list(model.log_names)


def report_json_pieces(model: LogModel, min_gap_ms: int = 0) -> Iterator[str]:
    """The whole JSON report as compact text, in pieces: `json.dumps(report_dict(...))`,
    its gap and proof lists written straight from the columns (a long log has tens of
    thousands of each)."""
    doc = report_dict(model, min_gap_ms, lists=False)
    for k, (key, value) in enumerate(doc.items()):
        yield ("{" if k == 0 else ", ") + json.dumps(key) + ": "
        if key == "gaps":
            yield from gaps_json(listed_gaps(model, min_gap_ms))
        elif key == "proofs" and model.traced_jobs:
            yield json.dumps(traced_dicts(model), ensure_ascii=True)  # a few: Python writes them
        elif key == "proofs":
            yield from proofs_json(model)
        else:
            yield json.dumps(value, ensure_ascii=True)
    yield "}"


def report_json(model: LogModel, min_gap_ms: int = 0) -> str:
    """The whole JSON report as compact text (see `report_json_pieces`)."""
    return "".join(report_json_pieces(model, min_gap_ms))


def _last_run(model: LogModel, failed: npt.NDArray[np.bool_]) -> dict[str, Any] | None:
    """Of a restarted daemon's runs, the last run's proofs, span and s/proof (else None;
    `failed`: each proof's, of every run, parsers/proofs.py)."""
    s = model.summary
    last = s.last_run
    if last is None:
        return None
    hosts = model.proof_hosts  # each proof's run
    mine = failed if hosts is None else failed[hosts == len(s.each) - 1]
    return {
        "proofs_started": last.proofs_started,
        "proofs_completed": last.proofs_completed,
        "proofs_failed": int(mine.sum()),
        "run_span_ms": last.run_span_ms,
        "s_per_proof": None if last.rate is None else round(last.rate, 6),
    }


def report_dict(model: LogModel, min_gap_ms: int = 0, lists: bool = True) -> dict[str, Any]:
    """The whole JSON report. `summary` always counts every gap; `gaps` may be filtered
    (`gaps` and `proofs` are left empty when not `lists`: `report_json` writes them)."""
    s = model.summary
    split = whole_run(model)
    estimated, unmeasured = estimated_keys(model), unmeasured_keys(model)
    failed = failed_proofs(model)
    log, names = _proof_logs(model)
    logs = None if log is None else [names[h] for h in log.tolist()]
    return {
        "schema": SCHEMA,
        "source": model.source,
        "lines": model.counts.as_dict(),
        "gpus": [
            {
                "gpu": g.gpu,
                # the CUDA ordinal the log printed (of several logs or runs, `gpu` is
                # k·1000 + it) and the name the screen and the text report give it
                "ordinal": model.gpu_ordinal(g.gpu),
                "label": model.gpu_label(g.gpu),
                "workers": list(g.workers),
                "span_ms": list(g.span) if g.span is not None else None,
                "timeline_busy_ms": g.busy_ms,
                # shares of a span of no length are none: null, not 0
                "timeline_util": round(g.timeline_util, 6) if g.spanned else None,
                "kernel_busy_ms": round(g.kernel_busy_ms, 3),
                "kernel_util": round(g.kernel_util, 6) if g.spanned else None,
                "kernel_util_range": (
                    [round(x, 6) for x in g.kernel_util_range] if g.spanned else None
                ),
                # each instant of busy time given to one phase: sums to timeline_busy_ms
                "busy_split_ms": busy_split_ms(split.get(g.gpu, Breakdown(g.gpu, 0.0, {}))),
                # its phases the log leaves to inference (the screens' `≈`): kernel where
                # kernel busy is an estimate, alloc too where the engine prints none
                "busy_split_estimates": estimated[g.gpu],
                # its phases the engine does not measure (0 ms: their time is unknown's)
                "busy_split_unmeasured": unmeasured[g.gpu],
                # intervals under way (when the log ends: nothing says they failed)
                "running": g.in_flight,
            }
            for g in model.gpus
        ],
        "workers": [
            {
                "worker": w.worker,
                "gpu": w.gpu,
                "intervals": w.intervals,
                "lock_lines": w.lock_lines,
                # a phase nothing measured (no lock line): null, never 0
                "phases_ms": {
                    k: None if k in dashed else round(v, 3) for k, v in w.phases_ms.items()
                },
            }
            for w, dashed in zip(model.workers, workers_unmeasured(model), strict=True)
        ],
        "gaps": gap_dicts(listed_gaps(model, min_gap_ms)) if lists else [],
        "proofs": traced_dicts(model)
        if model.traced_jobs and lists
        else [
            {
                "job": p.job,
                "kind": p.kind,
                "partitions": p.partitions,
                "first_synth_start": p.first_synth_start,
                "last_gpu_end": p.last_gpu_end,
                "completed": p.completed,
                "failed": bool(f),
                # of several logs, the one it is from (a job id two of them share is two)
                **({} if logs is None else {"log": logs[k]}),
            }
            for k, (p, f) in enumerate(
                zip(model.proofs, failed.tolist(), strict=True) if lists else ()
            )
        ],
        "summary": {
            "proofs_started": s.proofs_started,
            "proofs_completed": s.proofs_completed,
            # of those not completed, the failed (parsers/proofs.py); the rest are running
            "proofs_failed": int(failed.sum()),
            "run_span_ms": s.run_span_ms,
            "s_per_proof": None if s.rate is None else round(s.rate, 6),
            # a restarted daemon: the run the span and s/proof are of (the proofs: every run's)
            "last_run": _last_run(model, failed),
            "gap_count": s.gaps.count,
            "gap_total_ms": s.gaps.total_ms,
            # the gaps' own figures: null where there is none (the count and total are 0)
            "gap_max_ms": s.gaps.of_some(s.gaps.max_ms),
            "gap_mean_ms": _rounded_ms(s.gaps.of_some(s.gaps.mean_ms)),
            "gap_p50_ms": _rounded_ms(s.gaps.of_some(s.gaps.p50_ms)),
            "gap_p90_ms": _rounded_ms(s.gaps.of_some(s.gaps.p90_ms)),
            "gap_p99_ms": _rounded_ms(s.gaps.of_some(s.gaps.p99_ms)),
            "gap_histogram": {
                "<50ms": s.gaps.under_50,
                "50-500ms": s.gaps.from_50_to_500,
                ">500ms": s.gaps.over_500,
            },
            "unattributed_timing_lines": model.unattributed_timing_lines,
            "starts_mid_run": model.starts_mid_run,
            # the workers no line placed on a GPU, each counted on GPU 0
            "unplaced_workers": list(model.unplaced_workers),
            # no TIMELINE line: why (docs/analysis.md#logs-without-timeline)
            "no_timeline_reason": timeline_reason(model),
            "first_job_error": model.first_job_error,
            # every GPU together: each kernel line is some GPU's, so the sum is pinned
            # down where a GPU's share is not (docs/analysis.md#all-gpus)
            "all_gpus_span_ms": model.all_gpus_span_ms,
            "all_gpus_kernel_busy_ms_range": [round(x, 3) for x in model.all_gpus_kernel_ms],
            "all_gpus_kernel_util_range": (
                [round(x / model.all_gpus_span_ms, 6) for x in model.all_gpus_kernel_ms]
                if model.all_gpus_span_ms
                else None
            ),
            "all_gpus_kernel_util": (
                round(model.all_gpus_kernel_estimate_ms / model.all_gpus_span_ms, 6)
                if model.all_gpus_span_ms
                else None
            ),
        },
        "wall_anchor": model.wall_anchor.isoformat() if model.wall_anchor else None,
        # the daemon restarted: the physical line each run begins at (GPUs are run k's
        # k * 1000 + ordinal; every figure is per run, no gap crosses a restart)
        "runs": list(model.run_lines) if model.run_lines else [model.first_line],
    }
