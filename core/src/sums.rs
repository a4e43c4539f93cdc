//! What each worker's ended intervals add up to, per phase (ANALYSIS.md, per-worker phase
//! sums): one pass over the segments. The sums are numpy's `bincount` with weights, which
//! adds the segments in their order: the same additions in the same order give the same
//! figures to the last bit.

/// Per worker (by id, ascending): the lowest record of an ended interval of its, how many
/// such intervals it has, and the length of its segments of each phase.
#[derive(Debug, Default, PartialEq)]
pub struct WorkerSums {
    pub ids: Vec<i64>,
    pub first: Vec<i64>,
    pub counts: Vec<i64>,
    pub sums: Vec<f64>, // row-major: `phases` numbers per worker
}

/// The columns the sums are made of: per record its interval's start, end and worker (-1:
/// none); per segment its start, end, phase and record.
pub struct Inputs<'a> {
    pub gpu_start: &'a [f64],
    pub gpu_end: &'a [f64],
    pub worker: &'a [i32],
    pub seg_start: &'a [f64],
    pub seg_end: &'a [f64],
    pub seg_phase: &'a [i8],
    pub seg_part: &'a [i64],
}

/// Sums over the intervals that ended (start and end known) on a worker, of the segments
/// whose phase is below `phases`. Records out of range count for nobody.
pub fn worker_sums(x: &Inputs, phases: usize) -> WorkerSums {
    let n = x.gpu_start.len().min(x.gpu_end.len()).min(x.worker.len());
    let done = |i: usize| i < n && !x.gpu_start[i].is_nan() && !x.gpu_end[i].is_nan();
    // the workers of ended intervals, each with its lowest record
    let mut firsts: Vec<(i64, i64)> = Vec::new();
    for i in (0..n).filter(|&i| done(i) && x.worker[i] >= 0) {
        firsts.push((i64::from(x.worker[i]), i as i64));
    }
    firsts.sort_unstable();
    firsts.dedup_by_key(|(w, _)| *w); // sorted by (worker, record): the first is the lowest
    let ids: Vec<i64> = firsts.iter().map(|&(w, _)| w).collect();
    let slot = |w: i32| ids.binary_search(&i64::from(w)).ok();
    let mut counts = vec![0i64; ids.len()];
    for i in (0..n).filter(|&i| done(i) && x.worker[i] >= 0) {
        if let Some(k) = slot(x.worker[i]) {
            counts[k] += 1;
        }
    }
    let mut sums = vec![0.0f64; ids.len() * phases];
    let segs = x
        .seg_start
        .len()
        .min(x.seg_end.len())
        .min(x.seg_phase.len())
        .min(x.seg_part.len());
    let mut last: Option<(i64, Option<usize>)> = None; // the record of the segment before
    for s in 0..segs {
        let phase = x.seg_phase[s];
        if phase < 0 || phase as usize >= phases {
            continue;
        }
        let part = x.seg_part[s];
        let k = match last {
            Some((p, k)) if p == part => k,
            _ => {
                let k = usize::try_from(part)
                    .ok()
                    .filter(|&i| done(i) && x.worker[i] >= 0)
                    .and_then(|i| slot(x.worker[i]));
                last = Some((part, k));
                k
            }
        };
        if let Some(k) = k {
            sums[k * phases + phase as usize] += x.seg_end[s] - x.seg_start[s];
        }
    }
    WorkerSums {
        ids,
        first: firsts.iter().map(|&(_, i)| i).collect(),
        counts,
        sums,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_by_worker_and_phase_over_ended_intervals() {
        let nan = f64::NAN;
        // records: 0 worker 7 ended, 1 worker 3 ended, 2 worker 7 running, 3 no worker,
        // 4 worker 3 ended
        let inputs = Inputs {
            gpu_start: &[0.0, 5.0, 9.0, 1.0, 20.0],
            gpu_end: &[4.0, 8.0, nan, 2.0, 30.0],
            worker: &[7, 3, 7, -1, 3],
            seg_start: &[0.0, 1.0, 5.0, 9.0, 1.0, 20.0, 25.0],
            seg_end: &[1.0, 4.0, 8.0, 12.0, 2.0, 25.0, 30.0],
            seg_phase: &[0, 3, 3, 3, 3, 6, 3],
            seg_part: &[0, 0, 1, 2, 3, 4, 4],
        };
        let s = worker_sums(&inputs, 6);
        assert_eq!(s.ids, vec![3, 7]);
        assert_eq!(s.first, vec![1, 0]);
        assert_eq!(s.counts, vec![2, 1]);
        let row = |k: usize| s.sums[k * 6..(k + 1) * 6].to_vec();
        assert_eq!(row(0), vec![0.0, 0.0, 0.0, 3.0 + 5.0, 0.0, 0.0]); // phase 6 not summed
        assert_eq!(row(1), vec![1.0, 0.0, 0.0, 3.0, 0.0, 0.0]);
    }

    #[test]
    fn nothing_ended_gives_nothing() {
        let inputs = Inputs {
            gpu_start: &[0.0],
            gpu_end: &[f64::NAN],
            worker: &[1],
            seg_start: &[0.0],
            seg_end: &[1.0],
            seg_phase: &[3],
            seg_part: &[0],
        };
        assert_eq!(worker_sums(&inputs, 6), WorkerSums::default());
    }
}
