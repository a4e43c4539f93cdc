//! Every partition (or whole-proof job) the log named, one column per field: 8 bytes a
//! field, no object per record. NaN (floats) or -1 (ids) where the log said nothing.

use rustc_hash::FxHashMap as HashMap;

/// How many float columns.
pub const FLOAT_COUNT: usize = 20;
/// The float columns, in the order they are handed to Python: stamps (ms since the epoch),
/// then the C++ durations (ms).
pub const FLOAT_FIELDS: [&str; FLOAT_COUNT] = [
    "synth_start",
    "synth_end",
    "queued",
    "pickup",
    "gpu_start",
    "gpu_end",
    "pre_lock",
    "mutex_wait",
    "prestage",
    "ntt_alloc",
    "ntt_total",
    "ntt_msm_h",
    "barrier",
    "batch_add",
    "tail_msm",
    "gpu_total",
    "mutex_held",
    "epilogue",
    "pre_destructor",
    "ntt_blocks",
];
/// The 32-bit integer columns (ids: each within its plausible range, see `builder`).
pub const I32_FIELDS: [&str; 5] = ["job", "partition", "kind", "worker", "stage"];
/// The 64-bit integer columns (line numbers).
pub const I64_FIELDS: [&str; 2] = ["start_line", "end_line"];

/// One float column per field of `FLOAT_FIELDS`.
pub struct Columns {
    pub f: [Vec<f64>; FLOAT_COUNT],
    pub job: Vec<i32>,
    pub partition: Vec<i32>,
    pub kind: Vec<i32>,
    pub worker: Vec<i32>,
    pub stage: Vec<i32>,
    pub start_line: Vec<i64>,
    pub end_line: Vec<i64>,
    pub jobs: Vec<String>,
    job_index: HashMap<Vec<u8>, usize>,
    pub kinds: Vec<String>,
    kind_index: HashMap<String, usize>,
    /// Records written since the last `take_touched` (not counting new ones), so that a
    /// reader can keep what it built from the others; None: more than `TOUCH_CAP`.
    touched: Option<Vec<usize>>,
}

/// How many written records `Columns` lists before it says only "many".
pub const TOUCH_CAP: usize = 1 << 16;

// indices into `Columns::f`
pub const SYNTH_START: usize = 0;
pub const SYNTH_END: usize = 1;
pub const QUEUED: usize = 2;
pub const PICKUP: usize = 3;
pub const GPU_START: usize = 4;
pub const GPU_END: usize = 5;
pub const PRE_LOCK: usize = 6;
pub const MUTEX_WAIT: usize = 7;
pub const PRESTAGE: usize = 8;
pub const NTT_ALLOC: usize = 9;
pub const NTT_TOTAL: usize = 10;
pub const NTT_MSM_H: usize = 11;
pub const BARRIER: usize = 12;
pub const BATCH_ADD: usize = 13;
pub const TAIL_MSM: usize = 14;
pub const GPU_TOTAL: usize = 15;
pub const MUTEX_HELD: usize = 16;
pub const EPILOGUE: usize = 17;
pub const PRE_DESTRUCTOR: usize = 18;
pub const NTT_BLOCKS: usize = 19;
/// The C++ durations (everything a twin swap exchanges).
pub const TIMING: std::ops::Range<usize> = PRE_LOCK..NTT_BLOCKS + 1;
/// The stamps (written by the builder).
pub const STAMPS: std::ops::Range<usize> = SYNTH_START..PRE_LOCK;
/// The float columns the attribution keeps: the stamps it reads, the durations it writes.
fn attributed_floats() -> impl Iterator<Item = usize> {
    [GPU_START, GPU_END].into_iter().chain(TIMING)
}

/// Room in `col` for `records` in all, if the system gives it (whether it did): a refusal
/// (strict overcommit, a huge hint) leaves the growth as it was.
fn room<T>(col: &mut Vec<T>, records: usize) -> bool {
    col.try_reserve_exact(records.saturating_sub(col.len()))
        .is_ok()
}

/// How many more records a full column makes room for: a quarter, not double (the columns
/// are most of what a long log keeps).
fn more_room(capacity: usize) -> usize {
    (capacity / 4).max(1024)
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            f: Default::default(),
            job: Vec::new(),
            partition: Vec::new(),
            kind: Vec::new(),
            worker: Vec::new(),
            stage: Vec::new(),
            start_line: Vec::new(),
            end_line: Vec::new(),
            jobs: Vec::new(),
            job_index: HashMap::default(),
            kinds: Vec::new(),
            kind_index: HashMap::default(),
            touched: Some(Vec::new()),
        }
    }
}

impl Columns {
    /// Record `i` (an existing one) is being written.
    pub fn touch(&mut self, i: usize) {
        if let Some(list) = &mut self.touched {
            if list.len() < TOUCH_CAP {
                list.push(i);
            } else {
                self.touched = None;
            }
        }
    }

    /// The records written since the last call (sorted, once each), with those `other`
    /// lists (the attribution's columns), or None if there were more than `TOUCH_CAP`
    /// writes in all.
    pub fn take_touched(&mut self, other: &mut Columns) -> Option<Vec<usize>> {
        let mine = self.touched.replace(Vec::new());
        let theirs = other.touched.replace(Vec::new());
        let (mut v, more) = mine.zip(theirs)?;
        if v.len() + more.len() > TOUCH_CAP {
            return None;
        }
        v.extend(more);
        v.sort_unstable();
        v.dedup();
        Some(v)
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.job.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.job.is_empty()
    }

    /// The 32-bit integer columns, in the order of `I32_FIELDS`, to move them out.
    pub fn i32s_mut(&mut self) -> [&mut Vec<i32>; 5] {
        [
            &mut self.job,
            &mut self.partition,
            &mut self.kind,
            &mut self.worker,
            &mut self.stage,
        ]
    }

    /// The 32-bit integer columns, in the order of `I32_FIELDS`.
    pub fn i32s(&self) -> [&Vec<i32>; 5] {
        [
            &self.job,
            &self.partition,
            &self.kind,
            &self.worker,
            &self.stage,
        ]
    }

    /// The 64-bit integer columns, in the order of `I64_FIELDS`, to move them out.
    pub fn i64s_mut(&mut self) -> [&mut Vec<i64>; 2] {
        [&mut self.start_line, &mut self.end_line]
    }

    /// The 64-bit integer columns, in the order of `I64_FIELDS`.
    pub fn i64s(&self) -> [&Vec<i64>; 2] {
        [&self.start_line, &self.end_line]
    }

    /// Make room for `records` records in all, if the system gives it (a hint: more records
    /// grow the columns as ever). Room not written is address space, not memory: its pages
    /// are touched when written, and the columns are not copied as they grow. Whether every
    /// column got it.
    pub fn reserve_records(&mut self, records: usize) -> bool {
        let mut all = true;
        for col in &mut self.f {
            all &= room(col, records);
        }
        for col in self.i32s_mut() {
            all &= room(col, records);
        }
        for col in self.i64s_mut() {
            all &= room(col, records);
        }
        all
    }

    /// `reserve_records` for the columns an attribution keeps (`grow_attributed`).
    pub fn reserve_attributed(&mut self, records: usize) {
        for k in attributed_floats() {
            room(&mut self.f[k], records);
        }
        room(&mut self.worker, records);
        room(&mut self.stage, records);
    }

    /// Give back what growing left unused (the input is finished).
    pub fn shrink(&mut self) {
        for col in &mut self.f {
            col.shrink_to_fit();
        }
        for col in self.i32s_mut() {
            col.shrink_to_fit();
        }
        for col in self.i64s_mut() {
            col.shrink_to_fit();
        }
    }

    /// The number of a job id (a new one is added).
    pub fn job_id(&mut self, job: &[u8]) -> usize {
        match self.job_index.get(job) {
            Some(&j) => j,
            None => {
                let j = self.jobs.len();
                self.jobs.push(String::from_utf8_lossy(job).into_owned());
                self.job_index.insert(job.to_vec(), j);
                j
            }
        }
    }

    /// A new record of job number `j`; returns its index. Its stamps and ids only: the
    /// attributed columns (`TIMING`, `stage`) are the attribution's until the run is
    /// finished (`swap_attributed`).
    pub fn add(&mut self, j: usize, partition: Option<i64>) -> usize {
        if self.job.len() == self.job.capacity() {
            let more = more_room(self.job.capacity());
            for col in &mut self.f[STAMPS] {
                col.reserve_exact(more);
            }
            for col in [
                &mut self.job,
                &mut self.partition,
                &mut self.kind,
                &mut self.worker,
            ] {
                col.reserve_exact(more);
            }
            for col in self.i64s_mut() {
                col.reserve_exact(more);
            }
        }
        for col in &mut self.f[STAMPS] {
            col.push(f64::NAN);
        }
        self.job.push(j as i32);
        // a partition is within MAX_PARTITION (builder): it fits
        self.partition.push(partition.map_or(-1, |p| p as i32));
        self.kind.push(-1);
        self.worker.push(-1);
        self.start_line.push(0);
        self.end_line.push(0);
        self.len() - 1
    }

    /// The attribution's columns grow to `n` records: the interval stamps and the workers
    /// it is told of, and the attributed columns it writes (NaN / -1: not said).
    pub fn grow_attributed(&mut self, n: usize) {
        let have = self.worker.len();
        if have >= n {
            return;
        }
        if n > self.worker.capacity() {
            let more = more_room(self.worker.capacity()).max(n - have);
            for k in attributed_floats() {
                self.f[k].reserve_exact(more);
            }
            self.worker.reserve_exact(more);
            self.stage.reserve_exact(more);
        }
        for k in attributed_floats() {
            self.f[k].resize(n, f64::NAN);
        }
        self.worker.resize(n, -1);
        self.stage.resize(n, -1);
    }

    /// Exchange the attributed columns (`TIMING`, `stage`) with `other`'s.
    pub fn swap_attributed(&mut self, other: &mut Columns) {
        for k in TIMING {
            std::mem::swap(&mut self.f[k], &mut other.f[k]);
        }
        std::mem::swap(&mut self.stage, &mut other.stage);
    }

    /// The number of a kind name.
    pub fn kind_id(&mut self, kind: &str) -> i32 {
        if let Some(&k) = self.kind_index.get(kind) {
            return k as i32;
        }
        let k = self.kinds.len();
        self.kinds.push(kind.to_owned());
        self.kind_index.insert(kind.to_owned(), k);
        k as i32
    }

    /// Whether float field `field` of record `i` is known.
    pub fn known(&self, field: usize, i: usize) -> bool {
        !self.f[field][i].is_nan()
    }

    /// Exchange every timing field of two records.
    pub fn swap_timing(&mut self, i: usize, j: usize) {
        self.touch(i);
        self.touch(j);
        for k in TIMING {
            self.f[k].swap(i, j);
        }
        self.stage.swap(i, j);
    }
}
