"""What became of each proof: completed, failed, or neither (under way when the log ends).

One rule for every output: the viewer's proofs lane (✗), the text and JSON reports, the
proofs CSV and the failed-proofs counter of the metrics
(docs/analysis.md#what-is-read-from-the-log).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from parsers.model import LogModel, ProofTable
from parsers.rows import distinct
from parsers.tracing import FAILED


def failed_proofs(model: LogModel) -> npt.NDArray[np.bool_]:
    """Per proof, whether the log says it failed: a traced job's error line, or a TIMELINE
    proof one of whose partitions failed (its worker moved on without a GPU_END, or the
    daemon restarted after it: then all of them did) with none of its partitions under way.
    A proof under way when the log ends is not failed: nothing says it failed; nor is one
    whose synthesis never ended (no line says that it failed, nor when)
    (docs/analysis.md#what-is-read-from-the-log)."""
    failed = np.zeros(len(model.proofs), dtype=bool)
    if model.traced_jobs and len(model.traced_jobs) == len(model.proofs):
        failed[:] = [j.outcome == FAILED for j in model.traced_jobs]
        return failed
    if not len(model.proofs):
        return failed
    t = model.parts
    if not t.failed.any():
        return failed
    started = ~np.isnan(t.pickup) | ~np.isnan(t.gpu_start)
    under_way = ~t.failed & (
        (started & np.isnan(t.gpu_end)) | (~np.isnan(t.synth_start) & np.isnan(t.synth_end))
    )
    gone = set(distinct(t.job[t.failed]).tolist()) - set(distinct(t.job[under_way]).tolist())
    gone = {j for j in gone if 0 <= j < len(t.jobs)}
    table = ProofTable.of(model.proofs)
    # a proof is told by its log and its job id: of several logs or runs, a job id two of
    # them share is two proofs (a daemon proving again after a restart a job the restart
    # failed, still proving it when the log ends, is not failed)
    job_hosts, proof_hosts = model.job_hosts, model.proof_hosts
    if job_hosts is None or proof_hosts is None:
        names = {t.jobs[j] for j in gone}
        failed[:] = table.named(names) & ~table.completed
        return failed
    ids: dict[str, int] = {}
    for j in gone:
        ids.setdefault(t.jobs[j], len(ids))
    codes = np.array([int(job_hosts[j]) * len(ids) + ids[t.jobs[j]] for j in gone], np.int64)
    name_ids = np.array([ids.get(name, -1) for name in table.jobs], dtype=np.int64)[table.job]
    mine = (name_ids >= 0) & np.isin(proof_hosts.astype(np.int64) * len(ids) + name_ids, codes)
    failed[:] = mine & ~table.completed
    return failed
