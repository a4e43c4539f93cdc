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

/// Per GPU (by ordinal, ascending), its busy time split by phase: every instant inside an
/// ended interval is given to the one phase, first in `order`, that a segment of an ended
/// interval on that GPU has under way then (docs/analysis.md, "Where the busy time went").
#[derive(Debug, Default, PartialEq)]
pub struct BusySplit {
    pub gpus: Vec<i64>,
    pub sums: Vec<f64>, // row-major: `phases` numbers per GPU, indexed by phase
}

/// The busy split of the ended intervals' segments (see `BusySplit`); `gpu` per record (-1:
/// none), `order` the phases by precedence (a phase not in it is not busy time).
pub fn busy_split(x: &Inputs, gpu: &[i32], order: &[i8], phases: usize) -> BusySplit {
    let n = x.gpu_start.len().min(x.gpu_end.len()).min(gpu.len());
    let done = |i: usize| i < n && !x.gpu_start[i].is_nan() && !x.gpu_end[i].is_nan();
    let mut rank = vec![u8::MAX; phases.max(1)];
    for (r, &p) in order.iter().enumerate() {
        if p >= 0 && (p as usize) < phases {
            rank[p as usize] = u8::try_from(r).unwrap_or(u8::MAX);
        }
    }
    let segs = x
        .seg_start
        .len()
        .min(x.seg_end.len())
        .min(x.seg_phase.len())
        .min(x.seg_part.len());
    // (gpu, instant, rank, +1 opens / -1 closes): each segment opens and closes its rank
    let mut edges: Vec<(i32, f64, u8, i8)> = Vec::new();
    for s in 0..segs {
        let phase = x.seg_phase[s];
        if phase < 0 || phase as usize >= phases || rank[phase as usize] == u8::MAX {
            continue;
        }
        let Some(i) = usize::try_from(x.seg_part[s]).ok().filter(|&i| done(i)) else {
            continue;
        };
        let (a, b) = (x.seg_start[s], x.seg_end[s]);
        if gpu[i] < 0 || b.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) {
            continue; // empty, or a NaN end
        }
        edges.push((gpu[i], a, rank[phase as usize], 1));
        edges.push((gpu[i], b, rank[phase as usize], -1));
    }
    edges.sort_unstable_by(|p, q| p.0.cmp(&q.0).then(p.1.total_cmp(&q.1)));
    let mut out = BusySplit::default();
    let mut open = vec![0i64; order.len()];
    let mut k = 0;
    while k < edges.len() {
        let g = edges[k].0;
        out.gpus.push(i64::from(g));
        out.sums.extend(std::iter::repeat_n(0.0, phases));
        let row = out.sums.len() - phases;
        open.iter_mut().for_each(|c| *c = 0);
        let mut at = edges[k].1;
        while k < edges.len() && edges[k].0 == g {
            let t = edges[k].1;
            if t > at {
                if let Some(r) = open.iter().position(|&c| c > 0) {
                    out.sums[row + order[r] as usize] += t - at;
                }
                at = t;
            }
            let (_, _, r, d) = edges[k];
            open[r as usize] += i64::from(d);
            k += 1;
        }
    }
    out
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

    #[test]
    fn each_instant_of_busy_time_goes_to_the_first_phase_under_way() {
        let nan = f64::NAN;
        // GPU 0: record 0 [0, 10) kernel 2..6 inside lock wait 0..10; record 1 [4, 12)
        // barrier 4..12, overlapping; record 2 failed (no end): not counted. GPU 1: record 3.
        let inputs = Inputs {
            gpu_start: &[0.0, 4.0, 0.0, 0.0],
            gpu_end: &[10.0, 12.0, nan, 3.0],
            worker: &[0, 1, 2, 3],
            seg_start: &[0.0, 2.0, 6.0, 4.0, 0.0, 0.0],
            seg_end: &[2.0, 6.0, 10.0, 12.0, 9.0, 3.0],
            seg_phase: &[1, 3, 1, 4, 3, 5],
            seg_part: &[0, 0, 0, 1, 2, 3],
        };
        // order: kernel, barrier, lock wait, cleanup
        let s = busy_split(&inputs, &[0, 0, 0, 1], &[3, 4, 1, 5], 6);
        assert_eq!(s.gpus, vec![0, 1]);
        // GPU 0: kernel 2..6 = 4; barrier 6..12 = 6; lock wait 0..2 = 2 (12 ms busy in all)
        assert_eq!(s.sums[0..6].to_vec(), vec![0.0, 2.0, 0.0, 4.0, 6.0, 0.0]);
        assert_eq!(s.sums[6..12].to_vec(), vec![0.0, 0.0, 0.0, 0.0, 0.0, 3.0]);
    }
}
