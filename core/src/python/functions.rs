//! The core's functions over numpy columns: packing, sums, segments, the report's JSON rows.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::columns::{FLOAT_COUNT, FLOAT_FIELDS};

use super::guarded;

/// Each interval's row when packed greedily (see `packing::first_free_rows`), without the
/// GIL.
#[pyfunction]
#[pyo3(signature = (starts, ends, touching=true))]
pub(super) fn first_free_rows<'py>(
    py: Python<'py>,
    starts: PyReadonlyArray1<'py, f64>,
    ends: PyReadonlyArray1<'py, f64>,
    touching: bool,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let (s, e) = (starts.as_slice()?, ends.as_slice()?);
    if s.len() != e.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "starts and ends differ in length",
        ));
    }
    let rows = py.detach(|| guarded(|| crate::packing::first_free_rows(s, e, touching)))?;
    Ok(PyArray1::from_vec(py, rows))
}

/// A lane's segments: start, end, phase, record.
pub(super) type LaneArrays<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i8>>,
    Bound<'py, PyArray1<i32>>,
);

/// The segments of records `members`, in their order (see `segments::gather`), read without
/// the GIL. Raises ValueError when the columns do not go together.
#[pyfunction]
pub(super) fn lane_segments<'py>(
    py: Python<'py>,
    members: PyReadonlyArray1<'py, i64>,
    seg_offsets: PyReadonlyArray1<'py, i64>,
    seg_start: PyReadonlyArray1<'py, f64>,
    seg_end: PyReadonlyArray1<'py, f64>,
    seg_phase: PyReadonlyArray1<'py, i8>,
) -> PyResult<LaneArrays<'py>> {
    let (m, o) = (members.as_slice()?, seg_offsets.as_slice()?);
    let (s, e, k) = (
        seg_start.as_slice()?,
        seg_end.as_slice()?,
        seg_phase.as_slice()?,
    );
    let gathered = py.detach(|| guarded(|| crate::segments::gather(m, o, s, e, k)))?;
    let g = gathered.ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err("a record or a segment is not in the columns")
    })?;
    Ok((
        PyArray1::from_vec(py, g.start),
        PyArray1::from_vec(py, g.end),
        PyArray1::from_vec(py, g.phase),
        PyArray1::from_vec(py, g.part),
    ))
}

pub(super) type WorkerSumArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f64>>,
);

/// Per worker, what its ended intervals add up to (see `sums::worker_sums`): per record
/// gpu_start, gpu_end and worker, per segment start, end, phase and record, and how many
/// phases to sum. Returns (worker ids, each one's lowest record, its interval count, the
/// sums: `phases` a worker, row after row).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(super) fn worker_sums<'py>(
    py: Python<'py>,
    gpu_start: PyReadonlyArray1<'py, f64>,
    gpu_end: PyReadonlyArray1<'py, f64>,
    worker: PyReadonlyArray1<'py, i32>,
    seg_start: PyReadonlyArray1<'py, f64>,
    seg_end: PyReadonlyArray1<'py, f64>,
    seg_phase: PyReadonlyArray1<'py, i8>,
    seg_part: PyReadonlyArray1<'py, i64>,
    phases: usize,
) -> PyResult<WorkerSumArrays<'py>> {
    let inputs = crate::sums::Inputs {
        gpu_start: gpu_start.as_slice()?,
        gpu_end: gpu_end.as_slice()?,
        worker: worker.as_slice()?,
        seg_start: seg_start.as_slice()?,
        seg_end: seg_end.as_slice()?,
        seg_phase: seg_phase.as_slice()?,
        seg_part: seg_part.as_slice()?,
    };
    let s = py.detach(|| guarded(|| crate::sums::worker_sums(&inputs, phases)))?;
    Ok((
        PyArray1::from_vec(py, s.ids),
        PyArray1::from_vec(py, s.first),
        PyArray1::from_vec(py, s.counts),
        PyArray1::from_vec(py, s.sums),
    ))
}

pub(super) type BusySplitArrays<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>);

/// Per GPU, its busy time split by phase (see `sums::busy_split`): per record gpu_start,
/// gpu_end and GPU, per segment start, end, phase and record, the phases by precedence,
/// how many phases there are and the time each GPU counts, (gpu, lo, hi) (a GPU not
/// listed: all its time). Returns (GPU ordinals, the sums: `phases` a GPU).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(super) fn busy_split<'py>(
    py: Python<'py>,
    gpu_start: PyReadonlyArray1<'py, f64>,
    gpu_end: PyReadonlyArray1<'py, f64>,
    gpu: PyReadonlyArray1<'py, i32>,
    seg_start: PyReadonlyArray1<'py, f64>,
    seg_end: PyReadonlyArray1<'py, f64>,
    seg_phase: PyReadonlyArray1<'py, i8>,
    seg_part: PyReadonlyArray1<'py, i64>,
    order: Vec<i8>,
    phases: usize,
    window: Vec<(i64, f64, f64)>,
) -> PyResult<BusySplitArrays<'py>> {
    let inputs = crate::sums::Inputs {
        gpu_start: gpu_start.as_slice()?,
        gpu_end: gpu_end.as_slice()?,
        worker: &[],
        seg_start: seg_start.as_slice()?,
        seg_end: seg_end.as_slice()?,
        seg_phase: seg_phase.as_slice()?,
        seg_part: seg_part.as_slice()?,
    };
    let gpu = gpu.as_slice()?;
    let s =
        py.detach(|| guarded(|| crate::sums::busy_split(&inputs, gpu, &order, phases, &window)))?;
    Ok((
        PyArray1::from_vec(py, s.gpus),
        PyArray1::from_vec(py, s.sums),
    ))
}

pub(super) type SegmentArrays<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

/// Every GPU interval split into phase segments (see `segments::reconstruct`): columns by
/// name, `now` (where running intervals are drawn to), per interval where a failed prove
/// is drawn to (NaN: not failed). Returns (seg_start, seg_end, seg_phase, seg_part,
/// lock_acquired, unlock, drawn_end).
#[pyfunction]
#[pyo3(signature = (columns, now, failed_end=None))]
pub(super) fn reconstruct_segments<'py>(
    py: Python<'py>,
    columns: &Bound<'py, PyDict>,
    now: f64,
    failed_end: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<SegmentArrays<'py>> {
    let mut arrays: Vec<PyReadonlyArray1<'py, f64>> = Vec::with_capacity(FLOAT_COUNT + 1);
    for name in FLOAT_FIELDS {
        let item = columns
            .get_item(name)?
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name))?;
        arrays.push(item.extract()?);
    }
    let has_failed = failed_end.is_some();
    arrays.extend(failed_end);
    // numpy may hand a strided view: such a column is copied, the others are read in place
    let copies: Vec<Option<Vec<f64>>> = arrays
        .iter()
        .map(|a| {
            a.as_slice()
                .is_err()
                .then(|| a.as_array().iter().copied().collect())
        })
        .collect();
    let mut cols: Vec<&[f64]> = Vec::with_capacity(arrays.len());
    for (a, copy) in arrays.iter().zip(&copies) {
        cols.push(match copy {
            Some(v) => v,
            None => a.as_slice()?,
        });
    }
    if cols.iter().any(|c| c.len() != cols[0].len()) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "columns differ in length",
        ));
    }
    let inputs = crate::segments::Inputs {
        f: std::array::from_fn(|k| cols[k]),
        failed_end: has_failed.then(|| cols[FLOAT_COUNT]),
    };
    let s = py.detach(|| guarded(|| crate::segments::reconstruct(&inputs, now)))?;
    Ok((
        PyArray1::from_vec(py, s.start),
        PyArray1::from_vec(py, s.end),
        PyArray1::from_vec(py, s.phase),
        PyArray1::from_vec(py, s.part),
        PyArray1::from_vec(py, s.lock),
        PyArray1::from_vec(py, s.unlock),
        PyArray1::from_vec(py, s.drawn_end),
    ))
}

/// Gaps as JSON text (`json::push_gap` each, joined by ", "): the gaps' columns (gpu,
/// start, end, cause, crosses, and the record before and after each), the records' job,
/// worker and partition columns, the job names (a sequence) and the causes' names (None:
/// null).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(super) fn gap_rows_json<'py>(
    rank: PyReadonlyArray1<'py, i64>,
    gpu: PyReadonlyArray1<'py, i32>,
    start: PyReadonlyArray1<'py, i64>,
    end: PyReadonlyArray1<'py, i64>,
    cause: PyReadonlyArray1<'py, i8>,
    crosses: PyReadonlyArray1<'py, bool>,
    before: PyReadonlyArray1<'py, i64>,
    after: PyReadonlyArray1<'py, i64>,
    job: PyReadonlyArray1<'py, i32>,
    worker: PyReadonlyArray1<'py, i32>,
    partition: PyReadonlyArray1<'py, i32>,
    jobs: &Bound<'py, pyo3::PyAny>,
    causes: Vec<Option<String>>,
) -> PyResult<String> {
    let (gpu, start, end) = (gpu.as_array(), start.as_array(), end.as_array());
    let rank = rank.as_array();
    let (cause, crosses) = (cause.as_array(), crosses.as_array());
    let (before, after) = (before.as_array(), after.as_array());
    let (job, worker, partition) = (job.as_array(), worker.as_array(), partition.as_array());
    let n = gpu.len();
    let lengths = [
        rank.len(),
        start.len(),
        end.len(),
        before.len(),
        after.len(),
        cause.len(),
        crosses.len(),
    ];
    same_lengths("gap", n, &lengths)?;
    same_lengths("record", job.len(), &[worker.len(), partition.len()])?;
    let bad = || pyo3::exceptions::PyIndexError::new_err("a gap names no such record");
    let causes: Vec<String> = causes
        .iter()
        .map(|c| c.as_deref().map_or("null".to_string(), crate::json::quoted))
        .collect();
    // each job's JSON text once (a job has many partitions, so many gaps)
    let mut names: std::collections::HashMap<i32, String> = Default::default();
    let mut out = String::with_capacity(n * 300);
    for k in 0..n {
        let side = |r: i64| -> PyResult<(i32, i64, i64)> {
            let r = usize::try_from(r).map_err(|_| bad())?;
            let j = *job.get(r).ok_or_else(bad)?;
            Ok((j, i64::from(worker[r]), i64::from(partition[r])))
        };
        let (bj, bw, bp) = side(before[k])?;
        let (aj, aw, ap) = side(after[k])?;
        for j in [bj, aj] {
            if let std::collections::hash_map::Entry::Vacant(slot) = names.entry(j) {
                let raw: String = jobs
                    .get_item(usize::try_from(j).map_err(|_| bad())?)?
                    .extract()?;
                slot.insert(crate::json::quoted(&raw));
            }
        }
        let (bname, aname) = (&names[&bj], &names[&aj]);
        let cause = usize::try_from(cause[k])
            .ok()
            .and_then(|c| causes.get(c))
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("no such cause"))?;
        if k > 0 {
            out.push_str(", ");
        }
        crate::json::push_gap(
            &mut out,
            &crate::json::Gap {
                rank: rank[k],
                gpu: i64::from(gpu[k]),
                start: start[k],
                end: end[k],
                before: crate::json::Side {
                    job: bname,
                    worker: bw,
                    partition: bp,
                },
                after: crate::json::Side {
                    job: aname,
                    worker: aw,
                    partition: ap,
                },
                crosses: crosses[k],
                cause,
            },
        );
    }
    Ok(out)
}

/// The report's proof list as JSON text (without its brackets), exactly as
/// `json.dumps(..., ensure_ascii=True)` writes the dicts: proof k is job `jobs[job[k]]`
/// of kind `kinds[kind[k]]` (-1: ""), its stamps NaN when not said (null); of several
/// logs, from log `logs[log[k]]` (the dict's last key).
#[pyfunction]
#[pyo3(signature = (job, kind, partitions, first, last, completed, failed, jobs, kinds, log=None, logs=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub(super) fn proof_rows_json<'py>(
    job: PyReadonlyArray1<'py, i64>,
    kind: PyReadonlyArray1<'py, i64>,
    partitions: PyReadonlyArray1<'py, i64>,
    first: PyReadonlyArray1<'py, f64>,
    last: PyReadonlyArray1<'py, f64>,
    completed: PyReadonlyArray1<'py, bool>,
    failed: PyReadonlyArray1<'py, bool>,
    jobs: &Bound<'py, pyo3::PyAny>,
    kinds: Vec<String>,
    log: Option<PyReadonlyArray1<'py, i32>>,
    logs: Vec<String>,
) -> PyResult<String> {
    let (job, kind, partitions) = (job.as_array(), kind.as_array(), partitions.as_array());
    let (first, last, completed) = (first.as_array(), last.as_array(), completed.as_array());
    let failed = failed.as_array();
    let log = log.as_ref().map(|l| l.as_array());
    let n = job.len();
    let lengths = [
        kind.len(),
        partitions.len(),
        first.len(),
        last.len(),
        completed.len(),
        failed.len(),
        log.map_or(n, |l| l.len()),
    ];
    same_lengths("proof", n, &lengths)?;
    let kinds: Vec<String> = kinds.iter().map(|k| crate::json::quoted(k)).collect();
    let logs: Vec<String> = logs.iter().map(|k| crate::json::quoted(k)).collect();
    let unknown = crate::json::quoted("");
    // a stamp is a whole number of ms (Python's int() of it: truncated)
    let stamp = |v: f64| (!v.is_nan()).then_some(v as i64);
    let mut out = String::with_capacity(n * 160);
    for k in 0..n {
        let j = usize::try_from(job[k])
            .map_err(|_| pyo3::exceptions::PyIndexError::new_err("no such job"))?;
        let name: String = jobs.get_item(j)?.extract()?;
        let kind = match usize::try_from(kind[k]) {
            Ok(c) => kinds
                .get(c)
                .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("no such kind"))?,
            Err(_) => &unknown,
        };
        let log = match log {
            None => None,
            Some(l) => Some(
                usize::try_from(l[k])
                    .ok()
                    .and_then(|h| logs.get(h))
                    .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("no such log"))?
                    .as_str(),
            ),
        };
        if k > 0 {
            out.push_str(", ");
        }
        crate::json::push_proof(
            &mut out,
            &crate::json::ProofRow {
                job: &crate::json::quoted(&name),
                kind,
                partitions: partitions[k],
                first: stamp(first[k]),
                last: stamp(last[k]),
                completed: completed[k],
                failed: failed[k],
                log,
            },
        );
    }
    Ok(out)
}

/// ValueError unless every length of `others` is `n` (the columns of one `what` list).
pub(super) fn same_lengths(what: &str, n: usize, others: &[usize]) -> PyResult<()> {
    if others.iter().all(|&k| k == n) {
        return Ok(());
    }
    Err(pyo3::exceptions::PyValueError::new_err(format!(
        "{what} columns differ in length"
    )))
}
