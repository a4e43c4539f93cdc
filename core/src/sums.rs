//! What each worker's ended intervals add up to, per phase (docs/analysis.md#per-worker):
//! one pass over the segments. The sums are numpy's `bincount` with weights, which
//! adds the segments in their order: the same additions in the same order give the same
//! figures to the last bit.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap as HashMap;

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

impl Inputs<'_> {
    /// How many segments the columns hold (the shortest segment column: a longer one's
    /// extra values belong to no segment).
    fn segments(&self) -> usize {
        self.seg_start
            .len()
            .min(self.seg_end.len())
            .min(self.seg_phase.len())
            .min(self.seg_part.len())
    }
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
    let segs = x.segments();
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
/// interval on that GPU has under way then (docs/analysis.md#where-the-busy-time-went).
#[derive(Debug, Default, PartialEq)]
pub struct BusySplit {
    pub gpus: Vec<i64>,
    pub sums: Vec<f64>, // row-major: `phases` numbers per GPU, indexed by phase
}

/// The busy split of the ended intervals' segments (see `BusySplit`); `gpu` per record (-1:
/// none), `order` the phases by precedence (a phase not in it is not busy time), `window`
/// per GPU the time counted, [lo, hi] (each segment clipped to it; a GPU not listed: all
/// its time), `(gpu, lo, hi)` each.
///
/// Per GPU its ended intervals, by start, are swept in time: each interval under way holds
/// a cursor on its next busy segment, and the next edge is the earliest of theirs, kept in
/// a heap (`Sweep`). The memory is that of the records, the time O(segments × log of the
/// intervals under way at once); the sums are added in time order, edge by edge.
pub fn busy_split(
    x: &Inputs,
    gpu: &[i32],
    order: &[i8],
    phases: usize,
    window: &[(i64, f64, f64)],
) -> BusySplit {
    let n = x.gpu_start.len().min(x.gpu_end.len()).min(gpu.len());
    let windows: HashMap<i64, (f64, f64)> =
        window.iter().map(|&(g, lo, hi)| (g, (lo, hi))).collect();
    let window_of = |g: i32| {
        windows
            .get(&i64::from(g))
            .copied()
            .unwrap_or((f64::NEG_INFINITY, f64::INFINITY))
    };
    let done = |i: usize| i < n && !x.gpu_start[i].is_nan() && !x.gpu_end[i].is_nan();
    let mut rank = vec![u8::MAX; phases];
    for (r, &p) in order.iter().enumerate() {
        if let Some(slot) = usize::try_from(p).ok().and_then(|p| rank.get_mut(p)) {
            *slot = u8::try_from(r).unwrap_or(u8::MAX);
        }
    }
    let segs = x.segments();
    // segment `s` within (lo, hi): its phase's rank and its times there, when it is busy
    // and some of it is left
    let busy = |s: usize, (lo, hi): (f64, f64)| -> Option<(u8, f64, f64)> {
        let r = *usize::try_from(x.seg_phase[s])
            .ok()
            .and_then(|p| rank.get(p))?;
        let (start, end) = (clip(x.seg_start[s], lo, hi), clip(x.seg_end[s], lo, hi));
        let long = end.partial_cmp(&start) == Some(Ordering::Greater);
        (r != u8::MAX && long).then_some((r, start, end))
    };
    let by_record = SegmentsOf::new(x.seg_part, x.seg_start, segs, n);
    // record `i`'s first busy segment from slot `k` on, within its GPU's window, as a cursor
    let cursor = |i: usize, mut k: usize, within: (f64, f64)| -> Option<Cursor> {
        let to = by_record.offsets[i + 1];
        while k < to {
            let s = by_record.slot(k);
            if let Some((rank, start, end)) = busy(s, within) {
                return Some(Cursor {
                    start,
                    end,
                    slot: k,
                    record: i,
                    rank,
                });
            }
            k += 1;
        }
        None
    };
    // the ended intervals with a busy segment, by (GPU, start)
    let mut records: Vec<(i32, f64, u32)> = Vec::new();
    for (i, &g) in gpu.iter().enumerate().take(n) {
        if done(i) && g >= 0 && cursor(i, by_record.offsets[i], window_of(g)).is_some() {
            records.push((g, x.gpu_start[i], i as u32));
        }
    }
    records.sort_unstable_by(|p, q| p.0.cmp(&q.0).then(p.1.total_cmp(&q.1)));
    let mut out = BusySplit::default();
    let mut sweep = Sweep::new(order.len());
    let mut k = 0;
    while k < records.len() {
        let g = records[k].0;
        out.gpus.push(i64::from(g));
        out.sums.extend(std::iter::repeat_n(0.0, phases));
        let row = out.sums.len() - phases;
        let within = window_of(g); // looked up once a GPU, not once a segment
        sweep.clear();
        loop {
            // the next edge: a segment of an interval under way starts or ends
            let edge = sweep.next_edge();
            // an interval that starts by then is under way first
            if let Some(&(_, start, i)) = records.get(k).filter(|r| r.0 == g) {
                if start <= edge {
                    k += 1;
                    let i = i as usize;
                    if let Some(c) = cursor(i, by_record.offsets[i], within) {
                        sweep.add(c);
                    }
                    continue;
                }
            }
            if sweep.is_empty() {
                break;
            }
            if edge > sweep.at {
                // [at, edge) goes to the first phase of a segment under way
                if let Some(r) = sweep.first_rank() {
                    out.sums[row + order[r as usize] as usize] += edge - sweep.at;
                }
                sweep.at = edge;
            }
            // segments that start here are under way; those that end here give way to their
            // interval's next busy one
            sweep.pass(|c| cursor(c.record, c.slot + 1, within));
        }
    }
    out
}

/// A cursor's next edge in the sweep: its segment's start while it is ahead, else its end.
#[derive(Clone, Copy)]
struct Edge {
    at: f64,
    id: usize,
}

impl PartialEq for Edge {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Edge {}
impl PartialOrd for Edge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Edge {
    /// Reversed, so that the heap gives the earliest edge first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.total_cmp(&self.at).then(other.id.cmp(&self.id))
    }
}

/// The intervals under way on one GPU: their cursors, each one's next edge in a heap, and
/// how many segments of each rank are under way at `at` (started, not ended). An edge costs
/// the logarithm of the intervals under way, whatever their number (a hostile log that nests
/// a hundred thousand intervals made a scan of them all at each edge quadratic).
struct Sweep {
    cursors: Vec<Cursor>,
    free: Vec<usize>,
    started: Vec<bool>,
    edges: BinaryHeap<Edge>,
    open: Vec<usize>, // by rank
    at: f64,
}

impl Sweep {
    fn new(ranks: usize) -> Sweep {
        Sweep {
            cursors: Vec::new(),
            free: Vec::new(),
            started: Vec::new(),
            edges: BinaryHeap::new(),
            open: vec![0; ranks],
            at: f64::NEG_INFINITY,
        }
    }

    fn clear(&mut self) {
        self.cursors.clear();
        self.free.clear();
        self.started.clear();
        self.edges.clear();
        self.open.iter_mut().for_each(|c| *c = 0);
        self.at = f64::NEG_INFINITY;
    }

    fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    fn next_edge(&self) -> f64 {
        self.edges.peek().map_or(f64::INFINITY, |e| e.at)
    }

    /// The first rank of a segment under way at `at`.
    fn first_rank(&self) -> Option<u8> {
        self.open.iter().position(|&c| c > 0).map(|r| r as u8)
    }

    /// Cursor `c` joins: under way when its segment has started by `at`, else ahead.
    fn add(&mut self, c: Cursor) {
        let id = match self.free.pop() {
            Some(id) => {
                self.cursors[id] = c;
                id
            }
            None => {
                self.cursors.push(c);
                self.started.push(false);
                self.cursors.len() - 1
            }
        };
        self.place(id);
    }

    fn place(&mut self, id: usize) {
        let c = self.cursors[id];
        let started = c.start <= self.at;
        self.started[id] = started;
        if started {
            self.open[c.rank as usize] += 1;
        }
        let at = if started { c.end } else { c.start };
        self.edges.push(Edge { at, id });
    }

    /// Every edge at or before `at`: a segment ahead is under way now; one that ended gives
    /// way to `next` of it (its interval's next busy segment), or its interval leaves.
    fn pass(&mut self, mut next: impl FnMut(&Cursor) -> Option<Cursor>) {
        while let Some(&edge) = self.edges.peek() {
            if edge.at > self.at {
                break;
            }
            self.edges.pop();
            let id = edge.id;
            let c = self.cursors[id];
            if !self.started[id] {
                self.place(id); // its start has come: under way till its end
                continue;
            }
            self.open[c.rank as usize] -= 1;
            match next(&c) {
                Some(following) => {
                    self.cursors[id] = following;
                    self.place(id);
                }
                None => self.free.push(id),
            }
        }
    }
}

/// `v` within [lo, hi], as numpy.clip gives it (a NaN stays NaN).
fn clip(v: f64, lo: f64, hi: f64) -> f64 {
    if v.is_nan() {
        v
    } else {
        v.max(lo).min(hi)
    }
}

/// An interval under way in the sweep: its current busy segment (times, slot among its
/// record's segments, phase rank) and its record.
#[derive(Clone, Copy)]
struct Cursor {
    start: f64,
    end: f64,
    slot: usize,
    record: usize,
    rank: u8,
}

/// Each record's segments in time order: a range of the segment columns when they come
/// record by record (as the core makes them, each record's in time order), else an index
/// grouped by record and sorted by start.
struct SegmentsOf {
    offsets: Vec<usize>, // n + 1
    index: Option<Vec<u32>>,
}

impl SegmentsOf {
    fn new(part: &[i64], start: &[f64], segs: usize, n: usize) -> SegmentsOf {
        let record = |s: usize| usize::try_from(part[s]).ok().filter(|&i| i < n);
        let mut counts = vec![0usize; n + 1];
        for s in 0..segs {
            if let Some(i) = record(s) {
                counts[i + 1] += 1;
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        // record by record, each record's segments by start
        let in_order = (0..segs).all(|s| record(s).is_some())
            && (1..segs).all(|s| {
                part[s - 1] < part[s] || (part[s - 1] == part[s] && start[s - 1] <= start[s])
            });
        if in_order {
            return SegmentsOf {
                offsets: counts,
                index: None,
            };
        }
        let mut fill = counts.clone();
        let mut index = vec![0u32; counts[n]];
        for s in 0..segs {
            if let Some(i) = record(s) {
                index[fill[i]] = s as u32;
                fill[i] += 1;
            }
        }
        for i in 0..n {
            index[counts[i]..counts[i + 1]]
                .sort_by(|&a, &b| start[a as usize].total_cmp(&start[b as usize]));
        }
        SegmentsOf {
            offsets: counts,
            index: Some(index),
        }
    }

    /// The segment at position `k` of the records' order.
    fn slot(&self, k: usize) -> usize {
        match &self.index {
            None => k,
            Some(index) => index[k] as usize,
        }
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
        let s = busy_split(&inputs, &[0, 0, 0, 1], &[3, 4, 1, 5], 6, &[]);
        assert_eq!(s.gpus, vec![0, 1]);
        // GPU 0: kernel 2..6 = 4; barrier 6..12 = 6; lock wait 0..2 = 2 (12 ms busy in all)
        assert_eq!(s.sums[0..6].to_vec(), vec![0.0, 2.0, 0.0, 4.0, 6.0, 0.0]);
        assert_eq!(s.sums[6..12].to_vec(), vec![0.0, 0.0, 0.0, 0.0, 0.0, 3.0]);
    }

    /// The split by a plain sort of every segment end, as an oracle.
    fn split_by_sorting(x: &Inputs, gpu: &[i32], order: &[i8], phases: usize) -> BusySplit {
        let mut rank = vec![usize::MAX; phases];
        for (r, &p) in order.iter().enumerate() {
            rank[p as usize] = r;
        }
        let mut edges: Vec<(i32, f64, usize, i64)> = Vec::new();
        for s in 0..x.seg_start.len() {
            let i = x.seg_part[s] as usize;
            let ended = !x.gpu_start[i].is_nan() && !x.gpu_end[i].is_nan();
            let r = rank[x.seg_phase[s] as usize];
            if ended && gpu[i] >= 0 && r != usize::MAX && x.seg_end[s] > x.seg_start[s] {
                edges.push((gpu[i], x.seg_start[s], r, 1));
                edges.push((gpu[i], x.seg_end[s], r, -1));
            }
        }
        edges.sort_by(|p, q| p.0.cmp(&q.0).then(p.1.total_cmp(&q.1)));
        let mut out = BusySplit::default();
        let mut open = vec![0i64; order.len()];
        let mut at = 0.0;
        for (k, &(g, t, r, d)) in edges.iter().enumerate() {
            if k == 0 || edges[k - 1].0 != g {
                out.gpus.push(i64::from(g));
                out.sums.extend(std::iter::repeat_n(0.0, phases));
                open.iter_mut().for_each(|c| *c = 0);
                at = t;
            }
            let row = out.sums.len() - phases;
            if let Some(first) = open.iter().position(|&c| c > 0) {
                out.sums[row + order[first] as usize] += t - at;
            }
            at = t;
            open[r] += d;
        }
        out
    }

    #[test]
    fn intervals_nested_deep_are_swept_in_time_n_log_n() {
        // interval k: [k, 2n - k), one kernel segment each, all on GPU 0: every one is under
        // way at once (a scan of them at each edge took minutes at this size)
        let n = 200_000usize;
        let gs: Vec<f64> = (0..n).map(|k| k as f64).collect();
        let ge: Vec<f64> = (0..n).map(|k| (2 * n - k) as f64).collect();
        let part: Vec<i64> = (0..n as i64).collect();
        let phase = vec![3i8; n];
        let inputs = Inputs {
            gpu_start: &gs,
            gpu_end: &ge,
            worker: &[],
            seg_start: &gs,
            seg_end: &ge,
            seg_phase: &phase,
            seg_part: &part,
        };
        let s = busy_split(&inputs, &vec![0; n], &[3], 6, &[]);
        assert_eq!(s.gpus, vec![0]);
        assert_eq!(s.sums[3], (2 * n) as f64); // busy from 0 to 2n, all of it kernel
    }

    #[test]
    fn the_merge_gives_what_sorting_every_end_gives() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for round in 0..200 {
            let records = 1 + next(40) as usize;
            let (mut gs, mut ge, mut gpu) = (Vec::new(), Vec::new(), Vec::new());
            let (mut ss, mut se, mut sp, mut spart) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for i in 0..records {
                let start = next(1000) as f64;
                let mut t = start;
                for _ in 0..1 + next(6) {
                    let len = next(50) as f64;
                    ss.push(t);
                    se.push(t + len);
                    sp.push(next(9) as i8);
                    spart.push(i as i64);
                    t += len + if next(4) == 0 { next(5) as f64 } else { 0.0 };
                }
                gs.push(start);
                ge.push(if next(10) == 0 { f64::NAN } else { t });
                gpu.push(next(3) as i32 - i32::from(next(20) == 0));
            }
            if round % 2 == 1 {
                // segments not record by record: the index path
                let k = ss.len() / 2;
                ss.rotate_left(k);
                se.rotate_left(k);
                sp.rotate_left(k);
                spart.rotate_left(k);
            }
            let inputs = Inputs {
                gpu_start: &gs,
                gpu_end: &ge,
                worker: &[],
                seg_start: &ss,
                seg_end: &se,
                seg_phase: &sp,
                seg_part: &spart,
            };
            let order = [3, 4, 2, 5, 1, 0, 6];
            let got = busy_split(&inputs, &gpu, &order, 9, &[]);
            let want = split_by_sorting(&inputs, &gpu, &order, 9);
            assert_eq!(got.gpus, want.gpus, "round {round}");
            for (a, b) in got.sums.iter().zip(&want.sums) {
                assert!((a - b).abs() < 1e-9, "round {round}: {a} against {b}");
            }
            // a window per GPU (GPU 2 has none): what the segments clipped to it give
            let lo = [next(600) as f64, f64::NEG_INFINITY];
            let window = [
                (0, lo[0], lo[0] + next(800) as f64),
                (1, lo[1], next(1200) as f64),
            ];
            let clipped = |v: &[f64]| -> Vec<f64> {
                v.iter()
                    .zip(&spart)
                    .map(|(&t, &i)| {
                        match window.iter().find(|w| w.0 == i64::from(gpu[i as usize])) {
                            Some(&(_, lo, hi)) => clip(t, lo, hi),
                            None => t,
                        }
                    })
                    .collect()
            };
            let (cs, ce) = (clipped(&ss), clipped(&se));
            let clipped_inputs = Inputs {
                seg_start: &cs,
                seg_end: &ce,
                ..inputs
            };
            let got = busy_split(&inputs, &gpu, &order, 9, &window);
            let want = split_by_sorting(&clipped_inputs, &gpu, &order, 9);
            assert_eq!(got.gpus, want.gpus, "round {round}, windowed");
            for (a, b) in got.sums.iter().zip(&want.sums) {
                assert!(
                    (a - b).abs() < 1e-9,
                    "round {round}, windowed: {a} against {b}"
                );
            }
        }
    }
}
