"""What became of each proof: completed, failed, or neither (under way when the log ends).

One rule for every output: the viewer's proofs lane (✗), the text and JSON reports, the
proofs CSV and the failed-proofs counter of the metrics
(docs/analysis.md#what-is-read-from-the-log).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from parsers.model import I64, LogModel, PartitionTable, ProofTable
from parsers.rows import distinct
from parsers.tracing import FAILED


def failed_proofs(model: LogModel) -> npt.NDArray[np.bool_]:
    """Per proof, whether the log says it failed: a traced job's error line, or a TIMELINE
    proof one of whose partitions failed (its worker moved on without a GPU_END, or the
    daemon restarted after it: then all of them did) with none of its partitions under way.
    A proof under way when the log ends is not failed: nothing says it failed; nor is one
    whose synthesis never ended (no line says that it failed, nor when)
    (docs/analysis.md#what-is-read-from-the-log). Made once a model (read-only): the
    viewer's lanes and header, and each report and export read it."""
    made = model.derived.get("failed_proofs")
    if isinstance(made, np.ndarray):
        return made
    failed = _failed_proofs(model)
    failed.setflags(write=False)
    model.derived["failed_proofs"] = failed
    return failed


def _failed_proofs(model: LogModel) -> npt.NDArray[np.bool_]:
    if model.proof_failed is not None:
        return model.proof_failed.copy()  # several logs: as each one's own says
    failed = np.zeros(len(model.proofs), dtype=bool)
    if model.traced_jobs and len(model.traced_jobs) == len(model.proofs):
        failed[:] = [j.outcome == FAILED for j in model.traced_jobs]
        return failed
    if not len(model.proofs):
        return failed
    t = model.parts
    # asked of each part of a live model's table (the viewer asks at each update), and of
    # its settled part once: no column of its settled rows is put together, nor sorted again
    jobs = [p.memo("failed_proofs", _jobs_of) for p in t.parts_of()]
    failing = np.concatenate([j.failing for j in jobs])
    if not len(failing):
        return failed
    # a job's record of no partition, where the job has partitions, holds a line cut before
    # its partition (`proof_table_of`): not a partition under way
    whole = np.concatenate([j.busy_whole for j in jobs])
    for j in jobs:
        whole = whole[~np.isin(whole, j.partitioned)]
    busy = np.concatenate([whole, *(j.busy for j in jobs)])
    gone = np.setdiff1d(failing, busy)
    gone = gone[(gone >= 0) & (gone < len(t.jobs))]
    table = ProofTable.of(model.proofs)
    # a proof is told by its job id (of several logs or runs, `merge` takes each one's own
    # word: a daemon proving again after a restart a job the restart failed, still proving
    # it when the log ends, has not failed it)
    if table.jobs is t.jobs:  # numbered as the rows are (one log): by number
        named = np.isin(table.job, gone)
    else:
        named = table.named({t.jobs[j] for j in gone.tolist()})
    failed[:] = named & ~table.completed
    return failed


class _PartJobs(NamedTuple):
    """The job numbers of a table's rows that `_failed_proofs` reads (each sorted, once)."""

    partitioned: I64  # with a row of a partition
    failing: I64  # with a failed row
    busy: I64  # with a partition's row under way
    busy_whole: I64  # with a row of no partition under way


def _jobs_of(p: PartitionTable) -> _PartJobs:
    """The jobs of `p`'s rows `_failed_proofs` reads: a row is under way when it started
    (picked up, or its GPU_START) and has no GPU_END, or its synthesis has not ended, and
    it did not fail."""

    def jobs(mask: npt.NDArray[np.bool_]) -> I64:
        return distinct(p.job[mask]).astype(np.int64)

    started = ~np.isnan(p.pickup) | ~np.isnan(p.gpu_start)
    under_way = ~p.failed & (
        (started & np.isnan(p.gpu_end)) | (~np.isnan(p.synth_start) & np.isnan(p.synth_end))
    )
    whole = p.partition < 0
    return _PartJobs(
        jobs(~whole), jobs(p.failed), jobs(under_way & ~whole), jobs(under_way & whole)
    )


def proof_ends(
    model: LogModel,
    last: npt.NDArray[np.float64],
    completed: npt.NDArray[np.bool_],
    seen: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Where each proof of `model.proofs` is drawn to, from its columns (`last` GPU_END,
    `completed`, `seen` its latest stamp): a completed one to its last GPU_END; one that
    failed to its latest stamp; one still running (also where a finished log ends) to now,
    its own log's (of several logs). The proofs lane and the trace draw them so."""
    now: float | npt.NDArray[np.float64] = model.now_ms
    if model.log_ends is not None and model.proof_hosts is not None:
        now = np.array(model.log_ends, dtype=np.float64)[model.proof_hosts]
    open_end = np.where(failed_proofs(model), seen, now)
    open_end = np.where(np.isnan(open_end), now, open_end)
    ends: npt.NDArray[np.float64] = np.where(completed & ~np.isnan(last), last, open_end)
    return ends


class FoundJob(NamedTuple):
    """One proof by its job id and, in a model of several logs or runs, the log it is from:
    a job id two runs share (a daemon proving again after a restart the job the restart
    failed) is two proofs (`log` None: a model of one log)."""

    job: str
    log: int | None = None


def found_job(model: LogModel, k: int) -> FoundJob:
    """Proof `k` of `model.proofs` as a FoundJob."""
    hosts = model.proof_hosts
    return FoundJob(model.proofs[k].job, None if hosts is None else int(hosts[k]))


def job_numbers(model: LogModel, found: FoundJob) -> list[int]:
    """The numbers `model.parts.job` gives the partitions of `found` (of its log alone)."""
    hosts = model.job_hosts
    return [
        k
        for k, name in enumerate(model.parts.jobs)
        if name == found.job and (found.log is None or hosts is None or hosts[k] == found.log)
    ]


def found_proofs(model: LogModel, found: Collection[FoundJob]) -> npt.NDArray[np.bool_]:
    """Per proof of `model.proofs`, whether it is one of `found`."""
    table = ProofTable.of(model.proofs)
    mask = np.zeros(len(table), dtype=bool)
    hosts = model.proof_hosts
    for f in found:
        mine = table.named({f.job})
        if f.log is not None and hosts is not None:
            mine &= hosts == f.log
        mask |= mine
    return mask


def proof_of(model: LogModel, found: FoundJob) -> int | None:
    """The index in `model.proofs` of `found` (None: no such proof, yet)."""
    at = np.flatnonzero(found_proofs(model, (found,)))
    return int(at[0]) if len(at) else None
