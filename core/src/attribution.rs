//! Attributing the C++ prover's timing lines (no job, no worker, no time) to GPU intervals.
//!
//! Each GPU has one mutex, and its holder prints its lines in a fixed order: the lock line,
//! one `CUZK_NTT_H` per circuit, `ntt_msm_h_ms`, `barrier_wait_ms`, `batch_add_ms`,
//! `tail_msm_ms .. gpu_total_ms`, `mutex_held_ms`; the next holder of that GPU locks when
//! this one unlocks. With several GPUs these sequences interleave in the file. Every line's
//! print time can be predicted from its holder's lock time and the durations printed so far,
//! and must fall between the TIMELINE stamps around it and not before the lines above it.
//!
//! A beam search keeps the few best ways of giving the lines so far to the GPUs' holders
//! (each a per-GPU state and a cost), and commits the oldest decisions once the following
//! lines have had their say. What a nearly-as-good way would give to another GPU is kept as
//! doubt about the GPUs' kernel time: the ways still in the beam when their lines are
//! committed, and those merged into a way that reached the same states (each way tallies
//! what it gave every GPU, so what a merged way disagreed on is not lost with it).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet, FxHasher};

use crate::columns::{self as col, Columns};
use crate::timing::*;

const INF: f64 = f64::INFINITY;
/// How far (ms) a predicted print time may fall outside the stamps around the line.
pub const MATCH_TOLERANCE_MS: f64 = 60.0;
/// A line is not printed before the one above it, less the truncation of the durations.
const CLOCK_SLACK_MS: f64 = 10.0;
/// A lock that did not wait was taken after the previous holder of that GPU unlocked.
const HANDOFF_SLACK_MS: f64 = 4.0;
/// gpu_total_ms is ntt + barrier + batch + tail, each truncated to whole ms.
const SUM_SLACK_MS: f64 = 5.0;
/// The cost of a line given to nobody, or that a holder must have lost.
const SKIP_COST: f64 = 100.0;
/// Losing a lock line loses every line of its holder.
const LOCK_SKIP_COST: f64 = 3.0 * SKIP_COST;
/// Ways of giving the lines kept at once, and how many lines a decision waits.
const BEAM_WIDTH: usize = 128;
/// A way this much worse than the best is dropped (it would have to lose lines to win).
const PRUNE_COST: f64 = 150.0;
/// Where lock lines name each interval and stdout names each worker's GPU, a way that lost
/// a line more than the best is dropped at once: the lines that follow decide between the
/// ways that gave it, and the lost-line ways only slowed the beam (over a quarter of the
/// scan). Without either, they are how the beam gets back from a wrong early choice.
const PRUNE_COST_PINNED: f64 = SKIP_COST - 1.0;
const COMMIT_LAG_LINES: u64 = 256;
/// Ways made for a line past which the one with the same states is looked up by its hash.
const INDEX_WAYS: usize = 16;
const COMMIT_BATCH_LINES: u64 = 128;
/// A way this close to a better one is nearly as good: the durations' truncation (a few ms
/// a line, about CLOCK_SLACK_MS) can make the true way cost this much more.
const AMBIGUITY_MARGIN: f64 = 10.0;
/// An unlock may not come after GPU_END (truncated durations add up to a few ms).
const UNLOCK_SLACK_MS: f64 = 10.0;
/// Two intervals of one GPU that started this close print lock lines that fit either.
const TWIN_LOCK_MS: f64 = MATCH_TOLERANCE_MS;
/// How long (log time) an ended interval's start is kept for the epilogue lines that name
/// their interval by it (printed just before its GPU_END: an hour is ample).
const START_KEEP_MS: f64 = 3_600_000.0;

const EXPECTED_WITH_LOCK: [i8; 5] = [
    STAGE_NTT_H,
    STAGE_NTT_MSM,
    STAGE_BARRIER,
    STAGE_BATCH,
    STAGE_TAIL,
];
const EXPECTED_WITHOUT_LOCK: [i8; 3] = [STAGE_NTT_MSM, STAGE_BATCH, STAGE_TAIL];

/// Lines whose values are kernel time.
pub fn is_kernel_stage(stage: i8) -> bool {
    stage == STAGE_NTT_MSM || stage == STAGE_BATCH || stage == STAGE_TAIL
}

/// The kernel time a line adds to its holder's interval, as the phase segments count it
/// (segments.rs): a CUZK_NTT_H block's total less its allocation; ntt_msm_h only what its
/// blocks do not cover (none: the rest is the first use's allocation), or all of it
/// without blocks; batch and tail all of theirs.
fn kernel_part(st: Option<&GpuState>, stage: i8, vals: &Values) -> i64 {
    let ms = |v: Option<i64>| v.unwrap_or(0);
    match stage {
        STAGE_NTT_H => ms(vals[1]).saturating_sub(ms(vals[0])),
        STAGE_NTT_MSM => match st.map_or(0, |st| st.ntt_h) {
            0 => ms(vals[0]),
            blocks => ms(vals[0]).saturating_sub(blocks).min(0),
        },
        STAGE_BATCH | STAGE_TAIL => ms(vals[0]),
        _ => 0,
    }
}

/// An `Option<f64>` in 8 bytes: none is a NaN no arithmetic makes (a way's states are
/// copied for every line: their size is what the attribution moves most).
#[derive(Clone, Copy, Debug)]
struct MaybeF64(f64);

const NO_F64: u64 = 0x7ff8_0000_dead_beef;

impl MaybeF64 {
    const NONE: MaybeF64 = MaybeF64(f64::from_bits(NO_F64));

    fn get(self) -> Option<f64> {
        (self.0.to_bits() != NO_F64).then_some(self.0)
    }
}

impl From<Option<f64>> for MaybeF64 {
    fn from(v: Option<f64>) -> Self {
        v.map_or(MaybeF64::NONE, MaybeF64)
    }
}

impl PartialEq for MaybeF64 {
    /// As `Option<f64>` compares.
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// An `Option<i64>` in 8 bytes: none is `i64::MIN`, which no value of a timing line is
/// (`timing::classify` keeps 0..=MAX_DURATION_MS; `text::parse_int` cannot even read it).
#[derive(Clone, Copy, Debug, PartialEq)]
struct MaybeI64(i64);

impl MaybeI64 {
    const NONE: MaybeI64 = MaybeI64(i64::MIN);

    fn get(self) -> Option<i64> {
        (self.0 != i64::MIN).then_some(self.0)
    }
}

impl From<Option<i64>> for MaybeI64 {
    fn from(v: Option<i64>) -> Self {
        debug_assert!(v != Some(i64::MIN));
        v.map_or(MaybeI64::NONE, MaybeI64)
    }
}

/// One GPU's mutex holder as a way of giving the lines sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuState {
    holder: u32, // an interval: records are far fewer than 2^32 (each costs ~100 bytes)
    stage: i8,
    lock_line: bool,
    pool: bool,
    lock: MaybeF64,
    prestage: i64,
    ntt_h: i64,
    ntt: MaybeI64,
    barrier: MaybeI64,
    batch: MaybeI64,
    unlock: MaybeF64,
}

impl GpuState {
    fn new(holder: usize, stage: i8) -> Self {
        GpuState {
            holder: holder as u32,
            stage,
            lock_line: false,
            pool: false,
            lock: MaybeF64::NONE,
            prestage: 0,
            ntt_h: 0,
            ntt: MaybeI64::NONE,
            barrier: MaybeI64::NONE,
            batch: MaybeI64::NONE,
            unlock: MaybeF64::NONE,
        }
    }

    fn holder(&self) -> usize {
        self.holder as usize
    }

    fn key(&self, out: &mut [u64]) {
        let opt_f = |x: Option<f64>| x.map_or(u64::MAX, f64::to_bits);
        let opt_i = |x: Option<i64>| x.map_or(u64::MAX, |v| v as u64);
        out.copy_from_slice(&[
            u64::from(self.holder),
            self.stage as u64,
            opt_f(self.lock.get()),
            self.ntt_h as u64,
            opt_i(self.ntt.get()),
            opt_i(self.barrier.get()),
            opt_i(self.batch.get()),
            opt_f(self.unlock.get()),
        ]);
    }
}

/// The window of times at which `st`'s holder would print a line of `stage` with `vals`.
fn predict(st: &GpuState, stage: i8, vals: &Values) -> (f64, f64) {
    let Some(lock) = st.lock.get() else {
        return (-INF, INF);
    };
    let v = vals[0];
    let base = lock + st.prestage as f64;
    match stage {
        STAGE_POOL => return (lock, lock + 5.0),
        STAGE_PRESTAGE => {
            return match v {
                None => (-INF, INF),
                Some(v) => (lock + v as f64, lock + v as f64),
            }
        }
        STAGE_NTT_H => {
            let Some(total) = vals[1] else {
                return (-INF, INF);
            };
            let at = base + st.ntt_h as f64 + total as f64;
            // the first use of a GPU allocates its cache before the first block
            return (at, at + if st.pool { 250.0 } else { 10.0 });
        }
        _ => {}
    }
    let Some(v) = v else { return (-INF, INF) };
    match stage {
        STAGE_NTT_MSM => return (base + v as f64, base + v as f64),
        STAGE_HELD => return (lock + v as f64, lock + v as f64),
        _ => {}
    }
    let Some(ntt) = st.ntt.get() else {
        return (-INF, INF);
    };
    match stage {
        STAGE_BARRIER => {
            let at = base + ntt as f64 + v as f64;
            (at, at)
        }
        STAGE_BATCH => {
            let at = base + ntt as f64 + st.barrier.get().unwrap_or(0) as f64 + v as f64;
            if st.barrier.get().is_some() {
                (at, at)
            } else {
                (at, INF)
            }
        }
        STAGE_TAIL => match vals[1] {
            None => (-INF, INF),
            Some(total) => (base + total as f64, base + total as f64),
        },
        _ => (-INF, INF),
    }
}

/// How many lines the holder must have lost between its last one and `stage`.
fn skipped(st: &GpuState, stage: i8) -> usize {
    let expected: &[i8] = if st.lock_line {
        &EXPECTED_WITH_LOCK
    } else {
        &EXPECTED_WITHOUT_LOCK
    };
    expected
        .iter()
        .filter(|&&s| st.stage < s && s < stage)
        .count()
}

/// For a tail line: how far gpu_total is from ntt + barrier + batch + tail.
fn sum_error(st: &GpuState, vals: &Values) -> f64 {
    let (Some(tail), Some(total), Some(ntt), Some(batch)) =
        (vals[0], vals[1], st.ntt.get(), st.batch.get())
    else {
        return 0.0;
    };
    let sum = |parts: &[i64]| parts.iter().try_fold(0i64, |a, &b| a.checked_add(b));
    match st.barrier.get() {
        None => sum(&[ntt, batch, tail])
            .map_or(INF, |s| (s as f64 - total as f64 - SUM_SLACK_MS).max(0.0)),
        Some(barrier) => sum(&[ntt, barrier, batch, tail]).map_or(INF, |s| {
            ((s as f64 - total as f64).abs() - SUM_SLACK_MS).max(0.0)
        }),
    }
}

/// `st` after its holder printed the line.
fn took(st: &GpuState, stage: i8, vals: &Values) -> GpuState {
    let mut n = *st;
    n.stage = stage;
    let v = vals[0];
    match stage {
        STAGE_POOL => n.pool = true,
        STAGE_PRESTAGE => n.prestage = v.unwrap_or(0),
        STAGE_NTT_H => n.ntt_h = st.ntt_h.saturating_add(vals[1].unwrap_or(0)),
        STAGE_NTT_MSM => n.ntt = v.into(),
        STAGE_BARRIER => n.barrier = v.into(),
        STAGE_BATCH => n.batch = v.into(),
        STAGE_TAIL => {
            if let (Some(lock), Some(total)) = (st.lock.get(), vals[1]) {
                if !st.lock_line {
                    // no unlock line
                    n.unlock = MaybeF64(lock + st.prestage as f64 + total as f64);
                }
            }
        }
        STAGE_HELD => n.unlock = st.lock.get().zip(v).map(|(l, v)| l + v as f64).into(),
        _ => {}
    }
    n
}

fn distance(lo: f64, hi: f64, win_lo: f64, win_hi: f64) -> f64 {
    if lo > win_hi {
        lo - win_hi
    } else if hi < win_lo {
        win_lo - hi
    } else {
        0.0
    }
}

const NONE: u32 = u32::MAX;

/// One decision of a way: a line and the interval it went to (-1: nobody).
#[derive(Clone, Copy)]
struct Step {
    line: u64,
    interval: i64,
    gpu: i64,
    prev: u32, // the decision before it (an index into the arena), or NONE
}

/// The decisions of every way: ways share their older decisions.
#[derive(Default)]
struct Arena {
    steps: Vec<Step>,
}

impl Arena {
    fn push(&mut self, line: u64, interval: i64, gpu: i64, prev: u32) -> u32 {
        self.steps.push(Step {
            line,
            interval,
            gpu,
            prev,
        });
        (self.steps.len() - 1) as u32
    }

    /// A way's open decisions (indices), oldest (line `first`) first.
    fn trail(&self, last: u32, first: u64) -> Vec<u32> {
        let open = self
            .steps
            .get(last as usize)
            .map_or(0, |s| s.line.saturating_sub(first) as usize + 1);
        let mut out = Vec::with_capacity(open.min(self.steps.len()));
        let mut cur = last;
        while cur != NONE {
            let s = self.steps[cur as usize];
            if s.line < first {
                break;
            }
            out.push(cur);
            cur = s.prev;
        }
        out.reverse();
        out
    }
}

/// One GPU's holder as a way sees it, with the hash of the pair (a way's hash is the sum of
/// its entries' hashes: a change costs one new hash).
#[derive(Clone, Copy)]
struct Entry {
    gpu: i64,
    st: GpuState,
    hash: u64,
    /// What the way says of the GPU beyond its holder's state (neither hashed nor compared).
    tally: Tally,
}

/// A way's kernel time for one GPU, and its doubt about it: what nearly-as-good ways it
/// absorbed (same states, other decisions) would take from the GPU or give it.
/// Whole ms, as the lines print them (a state's size is what the attribution moves most).
#[derive(Clone, Copy, Default)]
struct Tally {
    kernel: i64, // every kernel ms the way gave the GPU
    less: u64,   // since the last commit
    more: u64,
}

impl Tally {
    /// The doubt of a way with this tally that absorbs one with `other`'s: the larger of
    /// the two ways' doubts, and what they disagree on.
    fn absorb(&mut self, other: &Tally) {
        let d = other.kernel.saturating_sub(self.kernel);
        let part = |d: i64| d.max(0).unsigned_abs();
        self.less = self
            .less
            .max(other.less)
            .saturating_add(part(d.saturating_neg()));
        self.more = self.more.max(other.more).saturating_add(part(d));
    }
}

impl Entry {
    fn new(gpu: i64, st: GpuState, tally: Tally) -> Self {
        Entry {
            gpu,
            st,
            hash: entry_hash(gpu, &st),
            tally,
        }
    }
}

/// The intervals that took a lock in each way's open decisions: one list per way, newest
/// first, its older cells shared with the ways it came from (a way holds its newest cell).
/// A way is made for every line: sharing by index costs nothing, where a shared pointer
/// would cost two atomic operations a way.
#[derive(Default)]
struct Locks {
    cells: Vec<(usize, u32)>, // (interval, the cell before it or NONE)
    any: HashSet<usize>,      // every interval in a cell: most asked for are in none
}

impl Locks {
    fn clear(&mut self) {
        self.cells.clear();
        self.any.clear();
    }

    fn push(&mut self, interval: usize, prev: u32) -> u32 {
        self.cells.push((interval, prev));
        self.any.insert(interval);
        (self.cells.len() - 1) as u32
    }

    fn iter(&self, mut head: u32) -> impl Iterator<Item = usize> + '_ {
        std::iter::from_fn(move || {
            let (i, prev) = *self.cells.get(head as usize)?;
            head = prev;
            Some(i)
        })
    }

    fn contains(&self, head: u32, i: usize) -> bool {
        self.any.contains(&i) && self.iter(head).any(|j| j == i)
    }
}

/// A way of giving the lines so far: its cost, what it says of the GPUs, its decisions.
#[derive(Clone, Copy)]
struct Way {
    cost: f64,
    hash: u64, // of the GPUs' states, whatever their order (ways that agree predict alike)
    clock: f64,
    locked: u32, // the intervals that took a lock in its open decisions (in `Locks`)
    last: u32,
    // per GPU, its holder's state, in the order the GPUs first took a holder: the run
    // `from..from + len` of the attributor's `holders`. A way is made for every line, and
    // copying its few entries costs less than a shared allocation to make and to free.
    from: u32,
    len: u32,
}

impl Way {
    /// Where its entries are in `holders`.
    fn run(&self) -> std::ops::Range<usize> {
        self.from as usize..(self.from + self.len) as usize
    }
}

/// Sort ways best first and measure their costs from the best (only differences matter:
/// kept small).
fn rank(ways: &mut [Way]) {
    ways.sort_by(|a, b| {
        a.cost
            .partial_cmp(&b.cost)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let base = ways[0].cost;
    for w in ways.iter_mut() {
        w.cost -= base;
    }
}

/// A way's entries, in `holders`.
fn entries<'a>(holders: &'a [Entry], way: &Way) -> &'a [Entry] {
    &holders[way.run()]
}

/// The state of GPU `g`'s holder among a way's entries.
fn get(gpus: &[Entry], g: i64) -> Option<&GpuState> {
    gpus.iter().find(|e| e.gpu == g).map(|e| &e.st)
}

/// What a line changes of a way: a GPU's holder after it. Kept small (most candidates are
/// pruned before they are built): the new state is made only for the ones kept.
#[derive(Clone, Copy)]
enum Change {
    Nothing,
    /// The holder of `gpu` printed the line.
    Took(i64),
    /// Interval `interval` locked `gpu` at `at`.
    Lock {
        gpu: i64,
        interval: usize,
        at: f64,
    },
    /// Interval `interval` became the holder of `gpu` at this line (no lock line).
    Open {
        gpu: i64,
        interval: usize,
    },
}

impl Change {
    /// The GPU and its holder's state after `line`, as a way with `parent`'s entries would
    /// have them.
    #[inline]
    fn entry(self, parent: &[Entry], line: &Line) -> Option<Entry> {
        let find = |gpu: i64| parent.iter().find(|e| e.gpu == gpu);
        let (gpu, st, before, old) = match self {
            Change::Nothing => return None,
            Change::Took(gpu) => {
                let old = find(gpu)?;
                let st = took(&old.st, line.stage, &line.vals);
                (gpu, st, Some(Some(&old.st)), Some(old))
            }
            Change::Lock { gpu, interval, at } => {
                let mut st = GpuState::new(interval, STAGE_LOCK);
                st.lock = MaybeF64(at);
                st.lock_line = true;
                (gpu, st, None, find(gpu))
            }
            Change::Open { gpu, interval } => (
                gpu,
                took(&GpuState::new(interval, -1), line.stage, &line.vals),
                Some(None),
                find(gpu),
            ),
        };
        // the GPU's tally goes on whoever holds it
        let mut tally = old.map_or(Tally::default(), |e| e.tally);
        if let Some(st) = before {
            // the holder printed it
            tally.kernel = tally
                .kernel
                .saturating_add(kernel_part(st, line.stage, &line.vals));
        }
        Some(Entry::new(gpu, st, tally))
    }
}

/// An interval that could have printed a lock line, and what that would say.
#[derive(Clone, Copy)]
struct LockFit {
    interval: usize,
    at: f64,   // the lock's time
    cost: f64, // how far it falls outside the stamps around the line
    gpu: i64,
}

/// A way one line could extend another by: its cost and what it changes.
#[derive(Clone, Copy)]
struct Cand {
    parent: usize,
    cost: f64,
    clock: f64,
    change: Change,
    locks: Option<usize>, // the interval that took a lock (or opened a holder)
    interval: i64,        // the step: who printed the line (-1: nobody)
    gpu: i64,
}

fn entry_hash(g: i64, st: &GpuState) -> u64 {
    let mut key = [0u64; 9];
    key[0] = g as u64;
    st.key(&mut key[1..]);
    let mut h = FxHasher::default();
    key.hash(&mut h);
    // spread the bits so that sums of entries rarely collide
    h.finish()
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .rotate_left(29)
}

/// A way's entries after a line: its parent's, with the entry the line changed (`new`),
/// which replaces the parent's entry `at` for that GPU, or is added (`at` None).
struct Changed<'a> {
    parent: &'a [Entry],
    new: Option<Entry>,
    at: Option<usize>,
}

impl<'a> Changed<'a> {
    fn new(parent: &'a [Entry], new: Option<Entry>) -> Self {
        let at = new.and_then(|n| parent.iter().position(|e| e.gpu == n.gpu));
        Changed { parent, new, at }
    }

    /// The order-insensitive hash of the entries, from the parent's.
    fn hash(&self, parent_hash: u64) -> u64 {
        match self.new {
            None => parent_hash,
            Some(new) => {
                let old = self.at.map_or(0, |k| self.parent[k].hash);
                parent_hash.wrapping_sub(old).wrapping_add(new.hash)
            }
        }
    }

    fn len(&self) -> usize {
        self.parent.len() + usize::from(self.new.is_some() && self.at.is_none())
    }

    /// The entry of GPU `gpu` among them.
    fn get(&self, gpu: i64) -> Option<&Entry> {
        match &self.new {
            Some(n) if n.gpu == gpu => Some(n),
            _ => self.parent.iter().find(|e| e.gpu == gpu),
        }
    }

    /// Write the entries at the end of `out`.
    fn write(&self, out: &mut Vec<Entry>) {
        let from = out.len();
        out.extend_from_slice(self.parent);
        if let Some(new) = self.new {
            match self.at {
                Some(k) => out[from + k] = new,
                None => out.push(new),
            }
        }
    }
}

/// Do `existing`'s GPUs equal `changed`'s (whatever the order the GPUs came in)?
fn same_states(existing: &[Entry], changed: &Changed) -> bool {
    let (parent, change) = (changed.parent, &changed.new);
    if existing.len() != changed.len() {
        return false;
    }
    existing.iter().all(|e| {
        let want = match change {
            Some(c) if c.gpu == e.gpu => Some(&c.st),
            _ => get(parent, e.gpu),
        };
        want == Some(&e.st)
    })
}

#[derive(Clone, Copy)]
struct Line {
    stage: i8,
    vals: Values,
    win_lo: f64,
    win_hi: f64,
}

/// Started intervals that have not taken a lock, in the order they started.
#[derive(Default)]
struct Awaiting {
    order: Vec<usize>,
    live: HashSet<usize>,
}

impl Awaiting {
    fn insert(&mut self, i: usize) {
        if self.live.insert(i) {
            self.order.push(i);
        }
    }

    fn remove(&mut self, i: usize) {
        if self.live.remove(&i) {
            // once in `order`, as in `live`: the rest moved up, not every one rewritten
            if let Some(k) = self.order.iter().position(|&j| j == i) {
                self.order.remove(k);
            }
        }
    }

    fn remove_all(&mut self, gone: &HashSet<usize>) {
        self.order.retain(|i| !gone.contains(i));
        self.live.retain(|i| !gone.contains(i));
    }

    fn contains(&self, i: usize) -> bool {
        self.live.contains(&i)
    }
}

/// Gives each C++ timing line to the GPU interval it belongs to.
pub struct Attributor {
    awaiting: Awaiting,
    retired: HashMap<usize, f64>,
    last_start: HashMap<i64, usize>,
    ways: Vec<Way>,
    lines: VecDeque<Line>, // the open lines: line `committed + k` at k
    line_gpus: HashMap<u64, BTreeSet<i64>>,
    epilogue_of: HashMap<u64, usize>,
    starts: Vec<(f64, usize)>,
    arena: Arena,
    locks: Locks,
    seq: u64,
    committed: u64,
    /// Timing lines given to no interval.
    pub unattributed: u64,
    /// Kernel time in them.
    pub unattributed_kernel_ms: f64,
    /// The engine prints lock lines (since 2026-03-13).
    pub lock_lines_seen: bool,
    /// Per GPU: kernel ms given to it that another GPU could own, and the converse.
    pub kernel_doubt: BTreeMap<i64, [f64; 2]>,
    cands: Vec<Cand>,           // reused between lines
    fits: Vec<LockFit>,         // reused between lines
    spare: Vec<Way>,            // reused between lines (emptied)
    holders: Vec<Entry>,        // the ways' entries (`Way::from`)
    spare_holders: Vec<Entry>,  // reused between lines (emptied)
    by_hash: HashMap<u64, u32>, // reused between lines (emptied)
    // reused between commits (emptied): the arena and locks the last commit replaced, the
    // map of old steps to new, the intervals committed
    spare_arena: Arena,
    spare_locks: Locks,
    moved: Vec<u32>,
    done: Vec<i64>,
}

impl Default for Attributor {
    fn default() -> Self {
        Attributor {
            awaiting: Awaiting::default(),
            retired: HashMap::default(),
            last_start: HashMap::default(),
            ways: vec![Way {
                cost: 0.0,
                hash: 0,
                clock: -INF,
                locked: NONE,
                last: NONE,
                from: 0,
                len: 0,
            }],
            holders: Vec::new(),
            spare_holders: Vec::new(),
            lines: VecDeque::new(),
            line_gpus: HashMap::default(),
            epilogue_of: HashMap::default(),
            starts: Vec::new(),
            arena: Arena::default(),
            locks: Locks::default(),
            seq: 0,
            committed: 0,
            unattributed: 0,
            unattributed_kernel_ms: 0.0,
            lock_lines_seen: false,
            kernel_doubt: BTreeMap::new(),
            cands: Vec::new(),
            fits: Vec::new(),
            spare: Vec::new(),
            by_hash: HashMap::default(),
            spare_arena: Arena::default(),
            spare_locks: Locks::default(),
            moved: Vec::new(),
            done: Vec::new(),
        }
    }
}

/// What the attributor needs to know of the records and the worker → GPU map.
pub trait Records {
    /// The columns it reads and writes (the stamps and workers of intervals it was told
    /// of, and the C++ durations and stages it writes).
    fn cols(&self) -> &Columns;
    /// How many records it was told of.
    fn record_count(&self) -> usize;
    fn cols_mut(&mut self) -> &mut Columns;
    fn gpu_of(&self, worker: i64) -> i64;
    fn ordinals_known(&self) -> bool;
}

impl Attributor {
    /// A GPU_START was read: interval `i` may take the lock from now on. Its worker picked
    /// it up at `picked_up` (NaN: not read).
    pub fn started<R: Records>(&mut self, r: &R, i: usize, picked_up: f64) {
        self.awaiting.insert(i);
        let c = r.cols();
        let start = c.f[col::GPU_START][i];
        let pos = self
            .starts
            .partition_point(|&(s, k)| s < start || (s == start && k < i));
        self.starts.insert(pos, (start, i));
        let w = i64::from(c.worker[i]);
        if w >= 0 {
            if let Some(&prev) = self.last_start.get(&w) {
                if self.awaiting.contains(prev) {
                    // a worker proves one partition at a time: its earlier interval, still
                    // without a lock, failed before it picked this one up
                    self.retired.insert(prev, picked_up.min(start));
                }
            }
            self.last_start.insert(w, i);
        }
    }

    /// Take the next timing line (in file order) with the stamps around it.
    pub fn push<R: Records>(
        &mut self,
        r: &mut R,
        stage: i8,
        vals: Values,
        win_lo: f64,
        win_hi: f64,
    ) {
        if stage == STAGE_EPILOGUE {
            match self.epilogue_target(r, &vals, win_lo, win_hi) {
                Some(target) => {
                    self.epilogue_of.insert(self.seq, target);
                }
                None => {
                    self.unattributed += 1;
                    return;
                }
            }
        }
        if stage == STAGE_LOCK {
            self.lock_lines_seen = true;
        }
        let line = Line {
            stage,
            vals,
            win_lo,
            win_hi,
        };
        let seq = self.seq;
        self.seq += 1;
        self.lines.push_back(line);
        self.extend(r, seq, &line);
        if self.seq - self.committed > COMMIT_LAG_LINES {
            self.commit(r, COMMIT_BATCH_LINES);
        }
    }

    /// Lines whose decision waits for the lines after them.
    pub fn has_open_lines(&self) -> bool {
        self.committed < self.seq
    }

    /// Commit every decision still open.
    pub fn flush<R: Records>(&mut self, r: &mut R) {
        self.commit(r, self.seq - self.committed);
    }

    /// Run `read` on the records as the best way would leave them if its open decisions were
    /// committed now (a live snapshot), then put the records back as they were. Nothing is
    /// decided: the lines stay open for the lines after them to settle. `read` is also told
    /// which records the open decisions changed.
    pub fn with_open_decisions<R: Records, T>(
        &self,
        r: &mut R,
        read: impl FnOnce(&mut R, &[usize]) -> T,
    ) -> T {
        let Some(best) = self.ways.first() else {
            return read(r, &[]);
        };
        let trail = self.arena.trail(best.last, self.committed);
        let mut saved: Vec<(usize, [f64; col::TIMING.end - col::TIMING.start], i32)> = Vec::new();
        for &k in &trail {
            let step = self.arena.steps[k as usize];
            let Ok(i) = usize::try_from(step.interval) else {
                continue; // given to no interval
            };
            let Some(line) = self.open_line(step.line) else {
                continue;
            };
            let c = r.cols_mut();
            if !saved.iter().any(|(j, _, _)| *j == i) {
                saved.push((
                    i,
                    std::array::from_fn(|k| c.f[col::TIMING.start + k][i]),
                    c.stage[i],
                ));
            }
            store(c, i, line.stage, &line.vals);
            c.stage[i] = i32::from(line.stage);
        }
        let open: Vec<usize> = saved.iter().map(|s| s.0).collect();
        let out = read(r, &open);
        let c = r.cols_mut();
        for (i, row, stage) in saved {
            for (k, v) in row.into_iter().enumerate() {
                c.f[col::TIMING.start + k][i] = v;
            }
            c.stage[i] = stage;
        }
        out
    }

    /// Open line `seq` (read, not committed yet).
    fn open_line(&self, seq: u64) -> Option<&Line> {
        let k = usize::try_from(seq.checked_sub(self.committed)?).ok()?;
        self.lines.get(k)
    }

    fn gone(&self, c: &Columns, i: usize) -> f64 {
        let end = c.f[col::GPU_END][i];
        let gone = self.retired.get(&i).copied().unwrap_or(INF);
        if end.is_nan() {
            gone
        } else {
            gone.min(end)
        }
    }

    /// Did interval `i` take its GPU's lock in `way`'s open decisions (it holds it, or
    /// held it before the holder now)?
    fn took_lock(&self, way: &Way, i: usize) -> bool {
        self.locks.contains(way.locked, i)
            || entries(&self.holders, way)
                .iter()
                .any(|e| e.st.holder() == i)
    }

    /// Did another interval start on `i`'s GPU so close to it that either could have
    /// printed the other's lock line?
    fn has_twin<R: Records>(&self, r: &R, i: usize) -> bool {
        self.twin_of(r, i, false)
    }

    /// Has `i` a twin (as `has_twin`) that another worker started (`other_worker`), or
    /// any twin?
    fn twin_of<R: Records>(&self, r: &R, i: usize, other_worker: bool) -> bool {
        let c = r.cols();
        let start = c.f[col::GPU_START][i];
        let w = c.worker[i];
        let g = r.gpu_of(i64::from(w));
        let k = self
            .starts
            .partition_point(|&(s, _)| s < start - TWIN_LOCK_MS);
        self.starts[k..]
            .iter()
            .take_while(|&&(s, _)| s <= start + TWIN_LOCK_MS)
            .any(|&(_, j)| {
                j != i
                    && r.gpu_of(i64::from(c.worker[j])) == g
                    && !(other_worker && c.worker[j] == w)
            })
    }

    /// Was `line` (its holder's prediction `lo`) printed after interval `holder` could print
    /// it? Only where lock lines name the holders: without them a holder is opened at a
    /// guess, where the GPU matters more than which of its intervals holds it.
    fn after_its_holder<R: Records>(&self, r: &R, line: &Line, lo: f64, holder: usize) -> bool {
        let end = r.cols().f[col::GPU_END]
            .get(holder)
            .copied()
            .unwrap_or(f64::NAN);
        if line.win_lo.max(lo) > end + UNLOCK_SLACK_MS && !self.has_twin(r, holder) {
            // printed (or predicted) after its GPU_END: a line under the lock comes before
            // the unlock, which comes before GPU_END (but a twin may have taken its lock
            // line: check_unlock gives each its own lines)
            return true;
        }
        // stamped after its worker moved on to its next interval: a holder's lines come
        // before its worker is free (the stamps bound it; a prediction would be late
        // wherever the way took another GPU's lock line for this one). A twin of the same
        // worker is the interval that moved it on, and never gives lines back
        self.retired
            .get(&holder)
            .is_some_and(|&gone| line.win_lo > gone + UNLOCK_SLACK_MS)
            && !self.twin_of(r, holder, true)
    }

    fn can_lock(&self, c: &Columns, i: usize, win_lo: f64) -> bool {
        self.gone(c, i) >= win_lo - MATCH_TOLERANCE_MS
    }

    fn extend<R: Records>(&mut self, r: &R, seq: u64, line: &Line) {
        let mut ways = std::mem::take(&mut self.ways);
        let awaiting = &self.awaiting.order;
        let mut cands = std::mem::take(&mut self.cands);
        cands.clear();
        let mut fits = std::mem::take(&mut self.fits);
        if line.stage == STAGE_LOCK {
            self.lock_fits(r, line, &mut fits);
        }
        for (k, way) in ways.iter().enumerate() {
            let skip = if line.stage == STAGE_LOCK {
                LOCK_SKIP_COST
            } else {
                SKIP_COST
            };
            // the line may belong to nobody we know (a holder whose lock line was lost)
            cands.push(Cand {
                parent: k,
                cost: way.cost + skip,
                clock: way.clock,
                change: Change::Nothing,
                locks: None,
                interval: -1,
                gpu: -1,
            });
            let mut offer = |c: Cand| cands.push(Cand { parent: k, ..c });
            match line.stage {
                STAGE_LOCK => self.lock_options(way, line, &fits, &mut offer),
                STAGE_EPILOGUE => self.epilogue_option(r, way, seq, &mut offer),
                _ => self.line_options(r, way, line, awaiting, &mut offer),
            }
        }
        // a way worse than the best by PRUNE_COST is dropped before it is built
        let best = cands.iter().map(|c| c.cost).fold(INF, f64::min);
        let prune = if self.lock_lines_seen && r.ordinals_known() {
            PRUNE_COST_PINNED
        } else {
            PRUNE_COST
        };
        let mut out: Vec<Way> = std::mem::take(&mut self.spare);
        let mut next = std::mem::take(&mut self.spare_holders); // the new ways' entries
        let mut by_hash = std::mem::take(&mut self.by_hash);
        for c in cands.iter().filter(|c| c.cost - best <= prune) {
            let parent = &ways[c.parent];
            let parent_gpus = entries(&self.holders, parent);
            let changed = Changed::new(parent_gpus, c.change.entry(parent_gpus, line));
            let way_hash = changed.hash(parent.hash);
            // a way already made with the same GPU states (the same hash, then compared):
            // the beam mostly holds a few ways, a scan finds it; past a few dozen (GPUs
            // whose lines fit each other's), the first way of each hash is looked up
            let same = |w: &Way| w.hash == way_hash && same_states(entries(&next, w), &changed);
            let slot = if out.len() < INDEX_WAYS {
                out.iter().position(same)
            } else {
                if by_hash.is_empty() {
                    for (k, w) in out.iter().enumerate() {
                        by_hash.entry(w.hash).or_insert(k as u32);
                    }
                }
                match by_hash.get(&way_hash) {
                    None => None,
                    Some(&k) if same(&out[k as usize]) => Some(k as usize),
                    Some(_) => out.iter().position(same), // another state, the same hash
                }
            };
            if let Some(k) = slot {
                if c.cost >= out[k].cost {
                    if c.cost - out[k].cost <= AMBIGUITY_MARGIN {
                        // nearly as good, and what it gave each GPU may differ
                        for e in &mut next[out[k].run()] {
                            if let Some(theirs) = changed.get(e.gpu) {
                                e.tally.absorb(&theirs.tally);
                            }
                        }
                    }
                    continue;
                }
            }
            let from = next.len();
            changed.write(&mut next);
            if let Some(k) = slot {
                if out[k].cost - c.cost <= AMBIGUITY_MARGIN {
                    let old = out[k].run();
                    for j in from..next.len() {
                        let theirs = next[old.clone()].iter().find(|e| e.gpu == next[j].gpu);
                        if let Some(t) = theirs.map(|e| e.tally) {
                            next[j].tally.absorb(&t);
                        }
                    }
                }
            }
            let locked = match c.locks {
                None => parent.locked,
                Some(i) => self.locks.push(i, parent.locked),
            };
            let way = Way {
                cost: c.cost,
                hash: way_hash,
                clock: c.clock,
                locked,
                last: self.arena.push(seq, c.interval, c.gpu, parent.last),
                from: from as u32,
                len: (next.len() - from) as u32,
            };
            match slot {
                Some(k) => out[k] = way,
                None => {
                    if !by_hash.is_empty() {
                        by_hash.entry(way.hash).or_insert(out.len() as u32);
                    }
                    out.push(way);
                }
            }
        }
        by_hash.clear();
        self.by_hash = by_hash;
        self.cands = cands;
        self.fits = fits;
        next = std::mem::replace(&mut self.holders, next);
        next.clear();
        self.spare_holders = next;
        rank(&mut out);
        out.truncate(BEAM_WIDTH);
        if !self.lock_lines_seen && is_kernel_stage(line.stage) {
            // without lock lines the evidence is weak: a line that nearly-as-good ways give
            // to different GPUs stays in doubt even if the beam later drops one of them
            let gpus: BTreeSet<i64> = out
                .iter()
                .filter(|w| w.cost <= AMBIGUITY_MARGIN)
                .filter(|w| w.last != NONE)
                .map(|w| self.arena.steps[w.last as usize].gpu)
                .filter(|&g| g >= 0)
                .collect();
            if gpus.len() > 1 {
                self.line_gpus.insert(seq, gpus);
            }
        }
        self.ways = out;
        ways.clear();
        self.spare = ways;
    }

    /// The intervals awaiting a lock that could have printed lock line `line`, whatever the
    /// way (in the order they started): most started too early or too late. Found once a
    /// line, not once a way.
    fn lock_fits<R: Records>(&self, r: &R, line: &Line, out: &mut Vec<LockFit>) {
        out.clear();
        let [Some(pre_lock), Some(wait)] = line.vals else {
            return;
        };
        let c = r.cols();
        for &i in &self.awaiting.order {
            let t = c.f[col::GPU_START][i] + pre_lock as f64 + wait as f64;
            let cost = distance(t, t, line.win_lo, line.win_hi);
            if cost > MATCH_TOLERANCE_MS || !self.can_lock(c, i, line.win_lo) {
                continue;
            }
            if t >= self.gone(c, i) + 1.0 {
                continue; // it would lock after it ended, or after its worker moved on
            }
            let gpu = r.gpu_of(i64::from(c.worker[i]));
            out.push(LockFit {
                interval: i,
                at: t,
                cost,
                gpu,
            });
        }
    }

    fn lock_options(&self, way: &Way, line: &Line, fits: &[LockFit], offer: &mut impl FnMut(Cand)) {
        let [Some(_), Some(wait)] = line.vals else {
            return;
        };
        for fit in fits {
            let (i, t, mut cost, g) = (fit.interval, fit.at, fit.cost, fit.gpu);
            if self.locks.contains(way.locked, i) {
                continue;
            }
            if let Some(st) = get(entries(&self.holders, way), g) {
                if st.stage < STAGE_HELD && st.lock_line {
                    cost += SKIP_COST; // the GPU's mutex is still held: its holder lost lines
                }
                if let Some(u) = st.unlock.get() {
                    let off = if wait >= 2 {
                        (t - u).abs()
                    } else {
                        (u - t - HANDOFF_SLACK_MS).max(0.0)
                    };
                    // far from the unlock before it, the GPU's lines in between were lost (a
                    // holder's lock line, or the unlock): no more than a lost line, or the
                    // GPU's next locks would all cost more than skipping them
                    cost += off.min(SKIP_COST);
                }
            }
            if t < way.clock {
                if way.clock - t > CLOCK_SLACK_MS {
                    continue;
                }
                cost += way.clock - t;
            }
            offer(Cand {
                parent: 0,
                cost: way.cost + cost,
                clock: way.clock.max(t),
                change: Change::Lock {
                    gpu: g,
                    interval: i,
                    at: t,
                },
                locks: Some(i),
                interval: i as i64,
                gpu: g,
            });
        }
    }

    fn line_options<R: Records>(
        &self,
        r: &R,
        way: &Way,
        line: &Line,
        awaiting: &[usize],
        offer: &mut impl FnMut(Cand),
    ) {
        let (stage, vals) = (line.stage, &line.vals);
        for e in entries(&self.holders, way) {
            let (g, st) = (e.gpu, &e.st);
            if st.stage >= stage && !(stage == STAGE_NTT_H && st.stage == STAGE_NTT_H) {
                continue;
            }
            if stage == STAGE_POOL
                && (st.stage != STAGE_LOCK || (vals[0] != Some(g) && r.ordinals_known()))
            {
                continue; // printed by the GPU it names, right after its holder locked
            }
            let (lo, hi) = predict(st, stage, vals);
            if self.lock_lines_seen && self.after_its_holder(r, line, lo, st.holder()) {
                continue;
            }
            let mut cost = distance(lo, hi, line.win_lo, line.win_hi);
            if cost > MATCH_TOLERANCE_MS {
                continue;
            }
            if hi < way.clock {
                // printed before the line above it: only as early as truncation explains
                let late = way.clock - hi;
                if late > CLOCK_SLACK_MS {
                    continue;
                }
                cost += late;
            }
            cost += SKIP_COST * skipped(st, stage) as f64;
            if stage == STAGE_TAIL {
                cost += sum_error(st, vals);
            } else if stage == STAGE_NTT_MSM {
                if let Some(v) = vals[0] {
                    // ntt_msm_h spans every CUZK_NTT_H block before it
                    cost += (st.ntt_h as f64 - v as f64 - SUM_SLACK_MS).max(0.0);
                }
            }
            offer(Cand {
                parent: 0,
                cost: way.cost + cost,
                clock: way.clock.max(lo), // printed no earlier than its prediction
                change: Change::Took(g),
                locks: None,
                interval: i64::from(st.holder),
                gpu: g,
            });
        }
        if !self.lock_lines_seen && matches!(stage, STAGE_PRESTAGE | STAGE_NTT_H | STAGE_NTT_MSM) {
            self.open_without_lock(r, way, line, awaiting, offer);
        }
    }

    /// Engines that print no lock line: a holder starts at its first line under the lock,
    /// on a GPU whose holder has finished its kernels. The earliest started goes first.
    fn open_without_lock<R: Records>(
        &self,
        r: &R,
        way: &Way,
        line: &Line,
        awaiting: &[usize],
        offer: &mut impl FnMut(Cand),
    ) {
        let c = r.cols();
        let mut rank = 0.0;
        for &i in awaiting {
            if c.f[col::GPU_START][i] > line.win_hi || self.gone(c, i) <= line.win_lo {
                continue; // not started yet, or it ended (its worker moved on) before
            }
            if self.locks.contains(way.locked, i) {
                continue;
            }
            let g = r.gpu_of(i64::from(c.worker[i]));
            if get(entries(&self.holders, way), g).is_some_and(|st| st.stage < STAGE_TAIL) {
                continue;
            }
            offer(Cand {
                parent: 0,
                cost: way.cost + 0.01 * rank,
                clock: way.clock,
                change: Change::Open {
                    gpu: g,
                    interval: i,
                },
                locks: Some(i),
                interval: i as i64,
                gpu: g,
            });
            rank += 1.0;
        }
    }

    /// An epilogue line (engines of February 2026) names its interval by its timing:
    /// printed `pre_destructor_ms` after its GPU_START, just before its GPU_END.
    fn epilogue_target<R: Records>(
        &self,
        r: &R,
        vals: &Values,
        win_lo: f64,
        win_hi: f64,
    ) -> Option<usize> {
        let pre = vals[1]? as f64;
        let c = r.cols();
        let lo = win_lo - pre - MATCH_TOLERANCE_MS;
        let mut k = self.starts.partition_point(|&(s, _)| s < lo);
        let mut best = None;
        let mut best_cost = MATCH_TOLERANCE_MS;
        while k < self.starts.len() && self.starts[k].0 <= win_hi - pre + MATCH_TOLERANCE_MS {
            let (start, i) = self.starts[k];
            k += 1;
            if c.known(col::EPILOGUE, i) || self.epilogue_of.values().any(|&v| v == i) {
                continue;
            }
            let cost = distance(start + pre, start + pre, win_lo, win_hi);
            if cost < best_cost {
                best = Some(i);
                best_cost = cost;
            }
        }
        best
    }

    /// The interval an epilogue names printed its kernel lines before it: a way that gave
    /// them to another interval pays for it.
    fn epilogue_option<R: Records>(
        &self,
        r: &R,
        way: &Way,
        seq: u64,
        offer: &mut impl FnMut(Cand),
    ) {
        let i = self.epilogue_of[&seq];
        let c = r.cols();
        let ran = self.took_lock(way, i) || c.known(col::NTT_MSM_H, i);
        offer(Cand {
            parent: 0,
            cost: way.cost + if ran { 0.0 } else { SKIP_COST },
            clock: way.clock,
            change: Change::Nothing,
            locks: None,
            interval: i as i64,
            gpu: r.gpu_of(i64::from(c.worker[i])),
        });
    }

    fn prune_awaiting<R: Records>(&mut self, r: &R, win_lo: f64) {
        let (c, order) = (r.cols(), &self.awaiting.order);
        if order.iter().all(|&i| self.can_lock(c, i, win_lo)) {
            return; // as most commits find: none has gone (the locks pending need no look)
        }
        let pending: HashSet<usize> = self
            .ways
            .iter()
            .flat_map(|w| self.locks.iter(w.locked))
            .collect();
        let gone: HashSet<usize> = self
            .awaiting
            .order
            .iter()
            .copied()
            .filter(|&i| !self.can_lock(c, i, win_lo) && !pending.contains(&i))
            .collect();
        if !gone.is_empty() {
            self.awaiting.remove_all(&gone); // one pass, however many
            for i in &gone {
                self.retired.remove(i);
            }
        }
    }

    /// Each way's open decisions, oldest first (one a line: every line extended every way),
    /// and the ways that agree with the best on the `count` oldest (kept) or, disagreeing,
    /// are nearly as good (rivals).
    fn sort_out(&self, count: usize) -> (Vec<Vec<u32>>, Vec<usize>, Vec<usize>) {
        let trails: Vec<Vec<u32>> = self
            .ways
            .iter()
            .map(|w| self.arena.trail(w.last, self.committed))
            .collect();
        let interval = |i: u32| self.arena.steps[i as usize].interval;
        let (mut kept, mut rivals) = (Vec::new(), Vec::new());
        for (k, t) in trails.iter().enumerate() {
            if (0..count).all(|j| interval(t[j]) == interval(trails[0][j])) {
                kept.push(k);
            } else if self.ways[k].cost <= self.ways[0].cost + AMBIGUITY_MARGIN {
                rivals.push(k);
            }
        }
        (trails, kept, rivals)
    }

    /// Commit the `count` oldest open decisions of the best way; drop the ways that disagree.
    fn commit<R: Records>(&mut self, r: &mut R, count: u64) {
        let count = count.min(self.seq - self.committed) as usize;
        if count == 0 {
            return;
        }
        let first = self.committed;
        let (trails, kept, rivals) = self.sort_out(count);
        if !rivals.is_empty() {
            self.doubt(&rivals);
        }
        // the intervals the committed lines went to (sorted, once each)
        let mut done = std::mem::take(&mut self.done);
        done.clear();
        for (j, &step) in trails[0][..count].iter().enumerate() {
            let chosen = self.arena.steps[step as usize];
            if done.last() != Some(&chosen.interval) {
                done.push(chosen.interval); // an interval's lines come in runs: one each
            }
            let seq = first + j as u64;
            let mut alternatives = if self.line_gpus.is_empty() {
                BTreeSet::new() // engines with lock lines keep none
            } else {
                self.line_gpus.remove(&seq).unwrap_or_default()
            };
            alternatives.remove(&chosen.gpu);
            let line = self.lines.pop_front().expect("an open line");
            self.apply(r, seq, &line, chosen.interval, chosen.gpu, &alternatives);
        }
        self.committed += count as u64;
        done.sort_unstable();
        done.dedup();
        // a new arena with the open decisions of the ways kept (shared ones stay shared), in
        // the memory of the one the last commit replaced
        let old_ways = std::mem::take(&mut self.ways);
        let mut arena = std::mem::take(&mut self.spare_arena);
        arena.steps.clear();
        let mut moved = std::mem::take(&mut self.moved); // old step -> new
        moved.clear();
        moved.resize(self.arena.steps.len(), NONE);
        let mut locks = std::mem::take(&mut self.spare_locks);
        locks.clear();
        let mut ways = Vec::with_capacity(kept.len());
        for (k, mut way) in old_ways.into_iter().enumerate() {
            if !kept.contains(&k) {
                continue;
            }
            let mut prev = NONE;
            for &idx in &trails[k][count..] {
                let slot = &mut moved[idx as usize];
                if *slot == NONE {
                    let s = self.arena.steps[idx as usize];
                    *slot = arena.push(s.line, s.interval, s.gpu, prev);
                }
                prev = *slot;
            }
            way.last = prev;
            // its locks still open, oldest first, in a new list (lists are short)
            let mut open: Vec<usize> = self
                .locks
                .iter(way.locked)
                .filter(|&i| done.binary_search(&(i as i64)).is_err())
                .collect();
            open.reverse();
            way.locked = open.into_iter().fold(NONE, |prev, i| locks.push(i, prev));
            ways.push(way);
        }
        self.spare_arena = std::mem::replace(&mut self.arena, arena);
        self.spare_locks = std::mem::replace(&mut self.locks, locks);
        self.moved = moved;
        self.done = done;
        self.ways = ways;
        self.settle_tallies();
        let win_lo = self.lines.front().map_or(-INF, |l| l.win_lo);
        self.prune_awaiting(r, win_lo);
        self.prune_starts(r, win_lo);
    }

    /// Forget the starts of intervals that ended long before the lines now read (the index
    /// of starts would otherwise keep one entry per interval of the whole log).
    fn prune_starts<R: Records>(&mut self, r: &R, win_lo: f64) {
        let c = r.cols();
        let before = win_lo - START_KEEP_MS;
        let old = self
            .starts
            .iter()
            // a failed interval never ends: its start goes with the ended ones around it
            .take_while(|&&(s, i)| {
                let end = c.f[col::GPU_END][i];
                s < before && (end.is_nan() || end < before)
            })
            .count();
        if old >= 1024 {
            self.starts.drain(..old);
        }
    }

    /// Move the doubt the ways kept absorbed into `kernel_doubt`: the most any of them
    /// holds for each GPU (whichever wins, its doubt is counted once).
    fn settle_tallies(&mut self) {
        let all: Vec<usize> = (0..self.ways.len()).collect();
        for (g, [less, more]) in self.most_absorbed(&all) {
            let doubt = self.kernel_doubt.entry(g).or_insert([0.0, 0.0]);
            doubt[0] += less as f64;
            doubt[1] += more as f64;
        }
        for way in &self.ways {
            for e in &mut self.holders[way.run()] {
                (e.tally.less, e.tally.more) = (0, 0);
            }
        }
    }

    /// Per GPU, the most doubt any of the ways `kept` absorbed.
    fn most_absorbed(&self, kept: &[usize]) -> BTreeMap<i64, [u64; 2]> {
        let mut most: BTreeMap<i64, [u64; 2]> = BTreeMap::new();
        for &k in kept {
            for e in entries(&self.holders, &self.ways[k]) {
                let m = most.entry(e.gpu).or_insert([0, 0]);
                m[0] = m[0].max(e.tally.less);
                m[1] = m[1].max(e.tally.more);
            }
        }
        most.retain(|_, m| m[0] > 0 || m[1] > 0);
        most
    }

    /// What rival ways would change of each GPU's kernel time: they share every decision
    /// before the open ones with the best way, so their tallies differ by those; and what
    /// the ways they absorbed would (their own doubt).
    fn doubt(&mut self, rivals: &[usize]) {
        for (g, [less, more]) in self.rival_doubt(rivals) {
            let doubt = self.kernel_doubt.entry(g).or_insert([0.0, 0.0]);
            doubt[0] += less;
            doubt[1] += more;
        }
    }

    /// Per GPU, the most the ways `rivals` would take from its kernel time and give it,
    /// against the best way (none: not in doubt).
    fn rival_doubt(&self, rivals: &[usize]) -> BTreeMap<i64, [f64; 2]> {
        let tally = |k: usize, g: i64| {
            entries(&self.holders, &self.ways[k])
                .iter()
                .find(|e| e.gpu == g)
                .map_or(Tally::default(), |e| e.tally)
        };
        let mut gpus: BTreeSet<i64> = BTreeSet::new();
        for &k in rivals.iter().chain(std::iter::once(&0)) {
            gpus.extend(entries(&self.holders, &self.ways[k]).iter().map(|e| e.gpu));
        }
        let mut out = BTreeMap::new();
        for g in gpus {
            let mine = tally(0, g).kernel;
            let (mut less, mut more) = (0.0f64, 0.0f64);
            for &k in rivals {
                let t = tally(k, g);
                let d = t.kernel.saturating_sub(mine) as f64;
                less = less.max(-d + t.less as f64);
                more = more.max(d + t.more as f64);
            }
            if less > 0.0 || more > 0.0 {
                out.insert(g, [less, more]);
            }
        }
        out
    }

    /// Per GPU, the doubt the decisions still open would add if they were committed now
    /// (a live snapshot): what `commit` adds, read without changing anything.
    pub fn open_doubt(&self) -> BTreeMap<i64, [f64; 2]> {
        if self.ways.is_empty() {
            return BTreeMap::new();
        }
        let (_, kept, rivals) = self.sort_out((self.seq - self.committed) as usize);
        let mut out = self.rival_doubt(&rivals);
        for (g, [less, more]) in self.most_absorbed(&kept) {
            let d = out.entry(g).or_insert([0.0, 0.0]);
            d[0] += less as f64;
            d[1] += more as f64;
        }
        out
    }

    fn apply<R: Records>(
        &mut self,
        r: &mut R,
        seq: u64,
        line: &Line,
        i: i64,
        gpu: i64,
        alternatives: &BTreeSet<i64>,
    ) {
        let v = line.vals[0];
        if i < 0 {
            self.unattributed += 1;
            if is_kernel_stage(line.stage) {
                if let Some(v) = v {
                    self.unattributed_kernel_ms += v as f64;
                }
            }
            return;
        }
        let i = i as usize;
        if self.awaiting.contains(i) && (line.stage == STAGE_LOCK || !self.lock_lines_seen) {
            self.awaiting.remove(i);
            self.retired.remove(&i);
        }
        self.epilogue_of.remove(&seq);
        if !alternatives.is_empty() && is_kernel_stage(line.stage) {
            if let Some(v) = v {
                self.kernel_doubt.entry(gpu).or_insert([0.0, 0.0])[0] += v as f64;
                for &g in alternatives {
                    if g >= 0 {
                        self.kernel_doubt.entry(g).or_insert([0.0, 0.0])[1] += v as f64;
                    }
                }
            }
        }
        let c = r.cols_mut();
        c.touch(i);
        store(c, i, line.stage, &line.vals);
        c.stage[i] = i32::from(line.stage);
        if line.stage == STAGE_HELD {
            self.check_unlock(r, i);
        }
    }

    /// A GPU_END was read for interval `i`.
    pub fn ended<R: Records>(&mut self, r: &mut R, i: usize) {
        if self.lock_lines_seen && !r.cols().known(col::PRE_LOCK, i) {
            // it ended, so it took its GPU's lock: a way in which it never did gave its
            // lock line to another (a twin that failed before locking, say) or lost it
            let missed: Vec<usize> = (0..self.ways.len())
                .filter(|&k| !self.took_lock(&self.ways[k], i))
                .collect();
            if !missed.is_empty() {
                for k in missed {
                    self.ways[k].cost += SKIP_COST;
                }
                rank(&mut self.ways);
            }
        }
        self.check_unlock(r, i);
    }

    /// An interval cannot unlock after its GPU_END. If it seems to, its lock line went to a
    /// twin on the same GPU that started at the same moment: give each the other's lines
    /// when that makes both consistent.
    fn check_unlock<R: Records>(&mut self, r: &mut R, i: usize) {
        let c = r.cols();
        let (end, held, pre, wait, start) = (
            c.f[col::GPU_END][i],
            c.f[col::MUTEX_HELD][i],
            c.f[col::PRE_LOCK][i],
            c.f[col::MUTEX_WAIT][i],
            c.f[col::GPU_START][i],
        );
        if end.is_nan() || held.is_nan() || pre.is_nan() {
            return;
        }
        if start + pre + wait + held <= end + UNLOCK_SLACK_MS {
            return;
        }
        let g = r.gpu_of(i64::from(c.worker[i]));
        let lo = i.saturating_sub(4096);
        for j in (lo..r.record_count()).rev() {
            if j == i || !c.known(col::PRE_LOCK, j) || r.gpu_of(i64::from(c.worker[j])) != g {
                continue;
            }
            if (c.f[col::GPU_START][j] - start).abs() > TWIN_LOCK_MS {
                continue;
            }
            if fits(c, i, j) && fits(c, j, i) {
                r.cols_mut().swap_timing(i, j);
                let c = r.cols();
                for way in &mut self.ways {
                    let gpus = &mut self.holders[way.run()];
                    for e in gpus.iter_mut() {
                        if e.st.holder() == i || e.st.holder() == j {
                            let k = if e.st.holder() == i { j } else { i };
                            let mut st = e.st;
                            st.holder = k as u32;
                            st.lock = MaybeF64(
                                c.f[col::GPU_START][k]
                                    + c.f[col::PRE_LOCK][k]
                                    + c.f[col::MUTEX_WAIT][k],
                            );
                            *e = Entry::new(e.gpu, st, e.tally);
                        }
                    }
                    way.hash = gpus.iter().fold(0u64, |h, e| h.wrapping_add(e.hash));
                }
                return;
            }
        }
    }

    /// End of input. Engines without lock lines let a holder be opened on an interval that
    /// then failed while a sibling on the same GPU ran the kernels: give such lines to the
    /// nearest sibling that ended without any.
    pub fn finish<R: Records>(&mut self, r: &mut R) {
        if self.lock_lines_seen {
            return;
        }
        let n = r.record_count();
        let mut bare: Vec<usize> = (0..n)
            .filter(|&i| r.cols().known(col::GPU_END, i) && !r.cols().known(col::NTT_MSM_H, i))
            .collect();
        if bare.is_empty() {
            return;
        }
        for j in 0..n {
            let c = r.cols();
            if c.known(col::GPU_END, j) || !c.known(col::NTT_MSM_H, j) {
                continue;
            }
            let g = r.gpu_of(i64::from(c.worker[j]));
            let mut best = None;
            let mut best_d = INF;
            for &i in &bare {
                if r.gpu_of(i64::from(c.worker[i])) != g || c.known(col::NTT_MSM_H, i) {
                    continue;
                }
                let d = (c.f[col::GPU_START][i] - c.f[col::GPU_START][j]).abs();
                if d < best_d {
                    best = Some(i);
                    best_d = d;
                }
            }
            if let Some(i) = best {
                r.cols_mut().swap_timing(i, j);
                bare.retain(|&k| k != i);
            }
        }
    }
}

/// Would interval i, given j's timing lines, unlock before its own GPU_END?
fn fits(c: &Columns, i: usize, j: usize) -> bool {
    let held = c.f[col::MUTEX_HELD][j];
    if held.is_nan() {
        return true;
    }
    let unlock = c.f[col::GPU_START][i] + c.f[col::PRE_LOCK][j] + c.f[col::MUTEX_WAIT][j] + held;
    let end = c.f[col::GPU_END][i];
    end.is_nan() || unlock <= end + UNLOCK_SLACK_MS
}

fn store(c: &mut Columns, i: usize, stage: i8, vals: &Values) {
    let f = |v: Option<i64>| v.map_or(f64::NAN, |v| v as f64);
    let (v0, v1) = (f(vals[0]), f(vals[1]));
    match stage {
        STAGE_POOL => {}
        STAGE_NTT_MSM => c.f[col::NTT_MSM_H][i] = v0,
        STAGE_BARRIER => c.f[col::BARRIER][i] = v0,
        STAGE_BATCH => c.f[col::BATCH_ADD][i] = v0,
        STAGE_HELD => c.f[col::MUTEX_HELD][i] = v0,
        STAGE_PRESTAGE => c.f[col::PRESTAGE][i] = v0,
        STAGE_LOCK => {
            c.f[col::PRE_LOCK][i] = v0;
            c.f[col::MUTEX_WAIT][i] = v1;
        }
        STAGE_NTT_H => {
            // one line per circuit of a batch: the interval's figures are their sums
            if c.known(col::NTT_ALLOC, i) && c.stage[i] == i32::from(STAGE_NTT_H) {
                c.f[col::NTT_ALLOC][i] += v0;
                c.f[col::NTT_TOTAL][i] += v1;
                c.f[col::NTT_BLOCKS][i] += 1.0;
            } else {
                c.f[col::NTT_ALLOC][i] = v0;
                c.f[col::NTT_TOTAL][i] = v1;
                c.f[col::NTT_BLOCKS][i] = 1.0;
            }
        }
        STAGE_TAIL => {
            c.f[col::TAIL_MSM][i] = v0;
            c.f[col::GPU_TOTAL][i] = v1;
        }
        STAGE_EPILOGUE => {
            c.f[col::EPILOGUE][i] = v0;
            c.f[col::PRE_DESTRUCTOR][i] = v1;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirror::{Attribution, Msg};

    #[test]
    fn the_small_options_read_and_compare_as_options_do() {
        let floats = [
            None,
            Some(0.0),
            Some(-0.0),
            Some(1.5),
            Some(f64::NAN),
            Some(-f64::INFINITY),
        ];
        for a in floats {
            let m = MaybeF64::from(a);
            assert_eq!(m.get().map(f64::to_bits), a.map(f64::to_bits));
            for b in floats {
                assert_eq!(m == MaybeF64::from(b), a == b, "{a:?} {b:?}");
            }
        }
        let ints = [
            None,
            Some(0),
            Some(-1),
            Some(MAX_DURATION_MS),
            Some(i64::MAX),
        ];
        for a in ints {
            let m = MaybeI64::from(a);
            assert_eq!(m.get(), a);
            for b in ints {
                assert_eq!(m == MaybeI64::from(b), a == b);
            }
        }
        // a holder's state keeps its hash key: none is u64::MAX as before
        let st = GpuState::new(3, STAGE_LOCK);
        let mut key = [0u64; 8];
        st.key(&mut key);
        assert_eq!(
            key[2..],
            [u64::MAX, 0, u64::MAX, u64::MAX, u64::MAX, u64::MAX]
        );
    }

    #[test]
    fn a_way_absorbing_another_keeps_both_doubts_and_their_difference() {
        let mut a = Tally {
            kernel: 1000,
            less: 5,
            more: 0,
        };
        let b = Tally {
            kernel: 1030,
            less: 2,
            more: 7,
        };
        a.absorb(&b); // b gave this GPU 30 ms more
        assert_eq!((a.kernel, a.less, a.more), (1000, 5, 37));
        let mut c = b;
        c.absorb(&a); // a gave it 30 ms less
        assert_eq!((c.kernel, c.less, c.more), (1030, 35, 37));
        let huge = Tally {
            kernel: i64::MIN,
            less: u64::MAX - 1,
            more: 0,
        };
        c.absorb(&huge); // saturates, never wraps or panics
        assert_eq!((c.less, c.more), (u64::MAX, 37));
    }

    #[test]
    fn a_lines_kernel_part_is_what_the_segments_count() {
        let st = |blocks: i64| {
            let mut s = GpuState::new(0, STAGE_LOCK);
            s.ntt_h = blocks;
            s
        };
        // a CUZK_NTT_H block: its total less its allocation
        assert_eq!(kernel_part(None, STAGE_NTT_H, &[Some(12), Some(700)]), 688);
        // ntt_msm_h over its blocks is the first use's allocation; under them, less kernel
        assert_eq!(
            kernel_part(Some(&st(700)), STAGE_NTT_MSM, &[Some(790), None]),
            0
        );
        assert_eq!(
            kernel_part(Some(&st(700)), STAGE_NTT_MSM, &[Some(698), None]),
            -2
        );
        // without blocks (older engines) it is all kernel, as batch and tail are
        assert_eq!(
            kernel_part(Some(&st(0)), STAGE_NTT_MSM, &[Some(690), None]),
            690
        );
        assert_eq!(kernel_part(None, STAGE_BATCH, &[Some(655), None]), 655);
        assert_eq!(kernel_part(None, STAGE_TAIL, &[Some(84), Some(1500)]), 84);
        assert_eq!(kernel_part(None, STAGE_BARRIER, &[Some(300), None]), 0);
    }

    /// Lines of one GPU's intervals told as the builder tells them: worker 0 on GPU 0 (the
    /// map known or not), interval 0 started at 100 and locked at 124 (lock line), then
    /// `then` (more messages), then a CUZK_NTT_H block printed around 750.
    fn attribution_after(known: bool, then: &[Msg]) -> Attribution {
        let mut a = Attribution::new(Some(1));
        if known {
            a.take(Msg::Map {
                w: 0,
                g: 0,
                first: true,
            });
        }
        a.take(Msg::Worker { i: 0, w: 0 });
        a.take(Msg::Started {
            i: 0,
            at: 100.0,
            picked_up: 99.0,
        });
        a.take(Msg::Line {
            stage: STAGE_LOCK,
            vals: [Some(24), Some(0)],
            lo: 120.0,
            hi: 126.0,
        });
        for &m in then {
            a.take(m);
        }
        a.take(Msg::Line {
            stage: STAGE_NTT_H,
            vals: [Some(10), Some(612)],
            lo: 700.0,
            hi: 800.0,
        });
        a
    }

    /// Who the best way gave the last line to (-1: nobody).
    fn last_given(a: &Attribution) -> i64 {
        let best = a.attributor.ways[0];
        a.attributor.arena.steps[best.last as usize].interval
    }

    #[test]
    fn a_lost_line_way_is_dropped_at_once_where_lock_lines_and_stdout_pin_the_lines() {
        // with the GPU's ordinal known, the way that lost the block (cost SKIP_COST) goes
        for (known, ways) in [(false, 2), (true, 1)] {
            let a = attribution_after(known, &[]);
            assert_eq!(a.attributor.ways.len(), ways, "known {known}");
            assert_eq!(last_given(&a), 0);
        }
    }

    /// Worker `w` picked up interval `i` at `picked_up` and started it at `at`.
    fn started(i: u32, w: i32, at: f64, picked_up: f64) -> [Msg; 2] {
        [Msg::Worker { i, w }, Msg::Started { i, at, picked_up }]
    }

    #[test]
    fn a_line_printed_after_its_holders_worker_moved_on_is_not_its_own() {
        // worker 0 picks up interval 1 at 124 (started at 128): interval 0, whose lock line
        // came first, was over by then, and a block printed at 750 is not its own
        let a = attribution_after(true, &started(1, 0, 128.0, 124.0));
        assert_eq!(last_given(&a), -1);
        // another worker's interval started beside it (a twin, whose lines may be taken
        // for its own until its GPU_END swaps them back): the rule stands aside
        let map = Msg::Map {
            w: 1,
            g: 0,
            first: true,
        };
        let twin = [
            &[map][..],
            &started(1, 1, 110.0, 110.0),
            &started(2, 0, 128.0, 124.0),
        ]
        .concat();
        let a = attribution_after(true, &twin);
        assert_eq!(last_given(&a), 0);
        // nobody moved on: the block is the holder's
        assert_eq!(last_given(&attribution_after(true, &[])), 0);
    }
}
