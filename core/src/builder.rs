//! The incremental scanner: log bytes in (any chunking), per-partition columns out.
//!
//! Physical lines lose their capture prefix (journalctl, container time stamps); a line
//! that another line cut is rejoined with its rest; each whole line is a TIMELINE event, a
//! C++ timing line (given to a GPU interval by the attributor), a stdout tracing line (the
//! worker → GPU map, the wall clock) or something else. Bad input is counted, never raised.

use std::collections::{BTreeMap, VecDeque};

use rustc_hash::FxHashMap as HashMap;

use crate::attribution::{Attributor, Records};
use crate::columns::{self as col, Columns};
use crate::text::{self, Wall, TIMELINE};
use crate::timing::{classify, Timing, Values, MAX_GPU};

/// The plausible range of a TIMELINE stamp (ms since engine start: about 31 years), of a
/// partition number and of a worker id. Outside it a line is malformed: counted, skipped.
pub const MAX_STAMP_MS: i64 = 1_000_000_000_000;
pub const MAX_PARTITION: i64 = 1_000_000;
pub const MAX_WORKER: i64 = 1_000_000;
/// Offsets going back by more than this (ms) mean the daemon restarted.
pub const RESTART_JUMP_MS: i64 = 30_000;

/// Pending C++ lines wait this long (ms of stamps) so that a stamp written a little late
/// (disorder) is read before they are attributed.
const DEFER_MS: i64 = 10;
/// How late a stamp can be (taken, then written after the lines below it).
const WINDOW_SLACK_MS: f64 = 10.0;
const MAX_PENDING: usize = 20_000;
/// A cut line waits this many physical lines for its rest, then is taken as it is.
const FRAGMENT_WAIT_LINES: usize = 16;
/// A physical line longer than this is no daemon line: it is counted as other and its
/// bytes are skipped, never held (memory stays bounded whatever the input).
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// Prefix clocks read for the wall-clock anchor.
const ANCHOR_SAMPLES: u32 = 2000;
/// The capture's form is decided from this many first lines (from four when they agree).
const CAPTURE_VOTES: u32 = 16;

/// How many lines of each sort were read.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Counts {
    pub timeline: i64,
    pub cuzk_timing: i64,
    pub stdout: i64,
    pub spliced: i64,
    pub malformed: i64,
    pub other: i64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Capture {
    Undecided,
    Plain,
    Prefixed,
}

struct Fragment {
    head: Vec<u8>,
    line_no: u64,
    inners: Vec<(Vec<u8>, u64)>,
}

struct Pending {
    stage: i8,
    vals: Values,
    prev: i64,
    next: Option<i64>,
}

/// What the attributor reads: the records and the worker → GPU map.
pub struct Recs {
    pub cols: Columns,
    pub worker_gpu: BTreeMap<i64, i64>,
    pub workers_per_gpu: Option<i64>,
}

impl Records for Recs {
    fn cols(&self) -> &Columns {
        &self.cols
    }
    fn cols_mut(&mut self) -> &mut Columns {
        &mut self.cols
    }
    fn gpu_of(&self, worker: i64) -> i64 {
        if worker < 0 {
            return 0;
        }
        if let Some(&g) = self.worker_gpu.get(&worker) {
            return g;
        }
        match self.workers_per_gpu {
            Some(n) if n > 0 => worker / n,
            _ => 0,
        }
    }
    fn ordinals_known(&self) -> bool {
        !self.worker_gpu.is_empty()
    }
}

/// Feed bytes as they come; read the columns at any time.
pub struct Builder {
    /// The runs before a daemon restart, finished (the current run is this builder).
    pub finished: Vec<Builder>,
    /// The physical line each run began at.
    pub run_first_line: u64,
    pub recs: Recs,
    pub counts: Counts,
    keys: HashMap<u64, u32>, // record_key(job number, partition) -> record
    attempts: HashMap<usize, (u32, usize)>, // job number -> (attempt, its job number)
    pub bytes_read: u64,
    pub lines_read: u64,
    pub max_stamp: i64,
    pub engine_seen: bool,
    /// The wall clock of offset 0, when the log gives it.
    pub wall_anchor: Option<Wall>,
    anchor_from_stdout: bool,
    anchor_samples: u32,
    year: Option<i64>,
    tail: Vec<u8>,
    skipping: bool, // inside a line longer than MAX_LINE_BYTES: drop bytes until its newline
    fragment: Option<Fragment>,
    prefix: Option<Option<Wall>>, // the capture prefix of the line being read, and its clock
    unbounded: usize,
    capture: Capture,
    votes: [u32; 2],
    stamp: i64,
    pending: VecDeque<Pending>,
    pub attributor: Attributor,
}

const EVENTS: [&[u8]; 7] = [
    b"SYNTH_START",
    b"SYNTH_END",
    b"GPU_QUEUE",
    b"CHAN_SEND",
    b"GPU_PICKUP",
    b"GPU_START",
    b"GPU_END",
];

const JOB_KIND_PREFIXES: [(&[u8], &str); 7] = [
    (b"porep-", "porep-c2"),
    (b"snap-", "snap-update"),
    (b"wdpost-", "window-post"),
    (b"wnpost-", "winning-post"),
    (b"winpost-", "winning-post"),
    (b"ps-porep-", "porep-c2"),
    (b"ps-snap-", "snap-update"),
];

fn kind_from_job(job: &[u8], snap: bool) -> &'static str {
    if snap {
        return "snap-update";
    }
    JOB_KIND_PREFIXES
        .iter()
        .find(|(p, _)| job.starts_with(p))
        .map_or("porep-c2", |(_, k)| k)
}

/// The `key=value` items of a TIMELINE detail (a bare word is a key with no value).
fn detail_pairs(detail: &[u8]) -> Vec<(&[u8], &[u8])> {
    detail
        .split(|&b| b == b',')
        .filter_map(|item| match memchr::memchr(b'=', item) {
            Some(eq) => Some((text::trim(&item[..eq]), text::trim(&item[eq + 1..]))),
            None => {
                let t = text::trim(item);
                (!t.is_empty()).then_some((t, &b""[..]))
            }
        })
        .collect()
}

fn current_year() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    // good enough for a guess: 365.2425-day years
    1970 + secs / 31_556_952
}

impl Builder {
    /// A builder; `workers_per_gpu` maps workers of stderr-only logs to GPUs.
    pub fn new(workers_per_gpu: Option<i64>) -> Self {
        Builder {
            finished: Vec::new(),
            run_first_line: 1,
            recs: Recs {
                cols: Columns::default(),
                worker_gpu: BTreeMap::new(),
                workers_per_gpu,
            },
            counts: Counts::default(),
            keys: HashMap::default(),
            attempts: HashMap::default(),
            bytes_read: 0,
            lines_read: 0,
            max_stamp: -1,
            engine_seen: false,
            wall_anchor: None,
            anchor_from_stdout: false,
            anchor_samples: 0,
            year: None,
            tail: Vec::new(),
            skipping: false,
            fragment: None,
            prefix: None,
            unbounded: 0,
            capture: Capture::Undecided,
            votes: [0, 0],
            stamp: -1,
            pending: VecDeque::new(),
            attributor: Attributor::default(),
        }
    }

    /// Bytes of an incomplete last line waiting for its newline.
    pub fn partial_bytes(&self) -> usize {
        self.tail.len()
    }

    /// Take the next bytes of the log (any size, cut anywhere).
    pub fn feed(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.bytes_read += data.len() as u64;
        let mut pos = 0;
        if self.skipping || !self.tail.is_empty() {
            // finish the line the last bytes began
            let Some(nl) = memchr::memchr(b'\n', data) else {
                self.hold(data);
                return;
            };
            self.hold(&data[..nl]);
            self.lines_read += 1;
            if self.skipping {
                self.skipping = false;
            } else {
                let line = std::mem::take(&mut self.tail);
                self.physical(&line, self.lines_read);
            }
            pos = nl + 1;
        }
        let rest = &data[pos..];
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', rest) {
            self.lines_read += 1;
            let line = &rest[start..nl];
            if line.len() > MAX_LINE_BYTES {
                self.counts.other += 1;
            } else {
                self.physical(line, self.lines_read);
            }
            start = nl + 1;
        }
        self.hold(&rest[start..]);
    }

    /// Keep the start of an unfinished line, up to MAX_LINE_BYTES.
    fn hold(&mut self, bytes: &[u8]) {
        if self.skipping {
            return;
        }
        if self.tail.len() + bytes.len() > MAX_LINE_BYTES {
            self.tail = Vec::new();
            self.skipping = true;
            self.counts.other += 1;
            return;
        }
        self.tail.extend_from_slice(bytes);
    }

    /// End of input: attribute what waits (a partial last line stays unread).
    pub fn finish(&mut self) {
        if self.fragment.is_some() {
            self.flush_fragment();
        }
        while !self.pending.is_empty() {
            self.resolve_one();
        }
        self.attributor.flush(&mut self.recs);
        self.attributor.finish(&mut self.recs);
        self.recs.cols.shrink();
    }

    /// Run `read` on the records with the attributor's open decisions filled in as they stand
    /// (what a live view shows); the records are left as they were.
    pub fn with_open_decisions<T>(&mut self, read: impl FnOnce(&Columns, &[usize]) -> T) -> T {
        self.attributor
            .with_open_decisions(&mut self.recs, |recs, open| read(&recs.cols, open))
    }

    /// Attribute the timing lines kept back for the lines after them (the input went quiet).
    pub fn flush_pending(&mut self) -> bool {
        let had = !self.pending.is_empty() || self.attributor.has_open_lines();
        while !self.pending.is_empty() {
            self.resolve_one();
        }
        self.attributor.flush(&mut self.recs);
        had
    }

    // -- physical lines ---------------------------------------------------------------------

    fn physical(&mut self, raw: &[u8], line_no: u64) {
        self.prefix = None;
        let mut line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let capture = self.capture;
        if capture != Capture::Plain {
            if !(line.starts_with(TIMELINE)
                || line.starts_with(b"CUZK_")
                || line.first() == Some(&0x1b))
            {
                line = self.strip_prefix(line);
            }
            if capture == Capture::Undecided && !line.is_empty() && !line.starts_with(b"-- ") {
                self.vote(self.prefix.is_some());
            }
        }
        if let Some(frag) = self.fragment.as_mut() {
            if !text::line_start_at(line, 0) {
                // the rest of the cut line (itself perhaps cut again by another line)
                if let Some(m) = text::find_line_start(line, 1) {
                    frag.head.extend_from_slice(&line[..m]);
                    frag.inners.push((line[m..].to_vec(), line_no));
                    return;
                }
                let frag = self.fragment.take().expect("a fragment");
                self.counts.spliced += 1;
                let mut whole = frag.head;
                whole.extend_from_slice(line);
                self.rejoined(&whole, frag.line_no, frag.inners);
                return;
            }
            let m = text::find_line_start(line, 1);
            if frag.inners.len() < FRAGMENT_WAIT_LINES
                && m.is_none_or(|m| !text::plausible_head(&line[..m]))
            {
                let rest = match m {
                    Some(m) => {
                        self.counts.other += 1;
                        &line[m..]
                    }
                    None => line,
                };
                self.fragment
                    .as_mut()
                    .expect("a fragment")
                    .inners
                    .push((rest.to_vec(), line_no));
                return;
            }
            self.flush_fragment();
        }
        match text::find_line_start(line, 1) {
            None => self.logical(line, line_no),
            Some(m) => {
                let head = &line[..m];
                if text::plausible_head(head) {
                    self.fragment = Some(Fragment {
                        head: head.to_vec(),
                        line_no,
                        inners: vec![(line[m..].to_vec(), line_no)],
                    });
                } else {
                    self.counts.other += 1; // text of something else before a daemon line
                    self.logical(&line[m..], line_no);
                }
            }
        }
    }

    /// Decide from the first lines whether the capture puts a prefix on every line.
    fn vote(&mut self, prefixed: bool) {
        self.votes[usize::from(prefixed)] += 1;
        let n = self.votes[0] + self.votes[1];
        if n >= CAPTURE_VOTES || (n >= 4 && self.votes.contains(&0)) {
            self.capture = if self.votes[1] > self.votes[0] {
                Capture::Prefixed
            } else {
                Capture::Plain
            };
        }
    }

    fn strip_prefix<'a>(&mut self, line: &'a [u8]) -> &'a [u8] {
        let year = self.year.unwrap_or_else(current_year);
        match text::capture_prefix(line, year) {
            Some((n, wall)) => {
                self.prefix = Some(wall);
                &line[n..]
            }
            None => line,
        }
    }

    fn flush_fragment(&mut self) {
        if let Some(frag) = self.fragment.take() {
            self.rejoined(&frag.head, frag.line_no, frag.inners);
        }
    }

    /// A cut line made whole, and the lines that landed inside it. Those were printed while
    /// it was being written, around its stamp but not necessarily after it: they are read
    /// first, and its stamp does not bound them.
    fn rejoined(&mut self, line: &[u8], line_no: u64, inners: Vec<(Vec<u8>, u64)>) {
        let before = self.pending.len();
        for (inner, no) in &inners {
            self.logical(inner, *no);
        }
        self.unbounded = self.pending.len() - before;
        self.logical(line, line_no);
        self.unbounded = 0;
    }

    // -- whole lines ------------------------------------------------------------------------

    /// The daemon restarted: the run read so far is finished and kept apart; a new one
    /// begins with this line (its offsets start again from 0).
    fn restart(&mut self, line_no: u64) {
        let mut fresh = Builder::new(self.recs.workers_per_gpu);
        // what belongs to the file, not to a run
        fresh.bytes_read = self.bytes_read;
        fresh.lines_read = self.lines_read;
        fresh.capture = self.capture;
        fresh.votes = self.votes;
        fresh.year = self.year;
        fresh.run_first_line = line_no;
        fresh.tail = std::mem::take(&mut self.tail);
        fresh.skipping = self.skipping;
        let mut old = std::mem::replace(self, fresh);
        old.finish();
        self.finished = std::mem::take(&mut old.finished);
        self.finished.push(old);
    }

    fn logical(&mut self, line: &[u8], line_no: u64) {
        if line.starts_with(TIMELINE) {
            // offsets jumping back by more than disorder explains: the daemon restarted
            let stamp = line[TIMELINE.len()..]
                .split(|&b| b == b',')
                .next()
                .and_then(text::parse_int);
            if stamp.is_some_and(|s| s < self.max_stamp - RESTART_JUMP_MS) {
                self.restart(line_no);
            }
            self.counts.timeline += 1;
            self.timeline(line, line_no);
            return;
        }
        let parsed = if let Some(body) = line.strip_prefix(b"CUZK_TIMING: ") {
            classify(body, false)
        } else if let Some(body) = line.strip_prefix(b"CUZK_NTT_H: ") {
            classify(body, true)
        } else {
            let first = line.first().copied().unwrap_or(0);
            if first == 0x1b || (first.is_ascii_digit() && text::stdout_start_at(line, 0)) {
                if self.counts.timeline > 0 && text::contains(line, b"starting cuzk engine") {
                    self.restart(line_no); // the engine started again: a new run begins here
                }
                self.counts.stdout += 1;
                if !self.engine_seen && text::contains(line, b"cuzk") {
                    self.engine_seen = true;
                }
                if text::contains(line, b"worker started")
                    || text::contains(line, b"starting cuzk engine")
                    || text::contains(line, b"gpu_worker")
                    || self.year.is_none()
                {
                    self.stdout(line);
                }
            } else {
                self.counts.other += 1;
            }
            return;
        };
        match parsed {
            Timing::Bad => self.counts.malformed += 1,
            Timing::Other => self.counts.cuzk_timing += 1,
            Timing::Phase(stage, vals) => {
                self.counts.cuzk_timing += 1;
                self.pending.push_back(Pending {
                    stage,
                    vals,
                    prev: self.stamp,
                    next: None,
                });
                if self.pending.len() > MAX_PENDING {
                    self.resolve_one();
                }
            }
        }
        let _ = line_no;
    }

    fn stdout(&mut self, raw: &[u8]) {
        let stripped;
        let line = if memchr::memchr(0x1b, raw).is_some() {
            stripped = text::strip_sgr(raw);
            &stripped[..]
        } else {
            raw
        };
        if self.year.is_none() && line.len() >= 4 {
            if let Some(y) = text::parse_int(&line[..4]) {
                self.year = Some(y);
            }
        }
        if text::contains(line, b"worker started") {
            let kv = text::kv_pairs(line);
            let w = text::kv_get(&kv, b"worker_id").and_then(text::parse_int);
            let g = text::kv_get(&kv, b"gpu").and_then(text::parse_int);
            match (w, g) {
                (Some(w), Some(g))
                    if (0..=MAX_WORKER).contains(&w) && (0..=MAX_GPU).contains(&g) =>
                {
                    self.recs.worker_gpu.insert(w, g);
                }
                _ => {
                    self.counts.stdout -= 1;
                    self.counts.malformed += 1;
                }
            }
        } else if let Some(at) = memchr::memmem::find(line, b"gpu_worker{") {
            let body = &line[at + 11..];
            if let Some(close) = memchr::memchr(b'}', body) {
                let kv = text::kv_pairs(&body[..close]);
                let w = text::kv_get(&kv, b"worker_id").and_then(text::parse_int);
                let g = text::kv_get(&kv, b"gpu").and_then(text::parse_int);
                if let (Some(w), Some(g)) = (w, g) {
                    if (0..=MAX_WORKER).contains(&w) && (0..=MAX_GPU).contains(&g) {
                        self.recs.worker_gpu.entry(w).or_insert(g);
                    }
                }
            }
        } else if text::contains(line, b"starting cuzk engine") && !self.anchor_from_stdout {
            let first = line
                .split(u8::is_ascii_whitespace)
                .find(|t| !t.is_empty())
                .unwrap_or(b"");
            match text::iso_time(first, false) {
                Some((Some(wall), end, _)) if end == first.len() => {
                    self.wall_anchor = Some(wall);
                    self.anchor_from_stdout = true;
                }
                _ => {
                    self.counts.stdout -= 1;
                    self.counts.malformed += 1;
                }
            }
        }
    }

    /// Engine start by the capture's clock: the receive time of a line is at or after the
    /// time of its stamp, so the latest of (receive time - stamp) is the best bound.
    fn prefix_anchor(&mut self, stamp: i64) {
        let Some(wall) = self.prefix.take() else {
            return;
        };
        if self.anchor_from_stdout || self.anchor_samples >= ANCHOR_SAMPLES {
            return;
        }
        self.anchor_samples += 1;
        let Some(wall) = wall else { return };
        let Some(us) = stamp
            .checked_mul(1000)
            .and_then(|ms| wall.us.checked_sub(ms))
        else {
            return;
        };
        if self.wall_anchor.is_none_or(|a| us > a.us) {
            self.wall_anchor = Some(Wall {
                us,
                aware: wall.aware,
            });
        }
    }

    // -- TIMELINE ---------------------------------------------------------------------------

    /// A record for the next attempt of job `j` (the record `old` already started): the
    /// attempt is named `<job> (attempt N)`, and every partition of the job that starts
    /// from now on joins it.
    fn new_attempt(&mut self, j: usize, job: &[u8], old: usize, partition: Option<i64>) -> usize {
        let c = &mut self.recs.cols;
        let (n, current) = self.attempts.get(&j).copied().unwrap_or((1, j));
        let attempt = if c.job[old] as usize == current {
            let n = n + 1;
            let mut name = job.to_vec();
            name.extend_from_slice(format!(" (attempt {n})").as_bytes());
            let jn = c.job_id(&name);
            self.attempts.insert(j, (n, jn));
            jn
        } else {
            current
        };
        let i = c.add(attempt, partition);
        c.kind[i] = c.kind[old];
        self.keys.insert(record_key(j, partition), i as u32);
        i
    }

    fn malformed(&mut self) {
        self.counts.timeline -= 1;
        self.counts.malformed += 1;
    }

    fn timeline(&mut self, line: &[u8], line_no: u64) {
        let mut fields = line.splitn(5, |&b| b == b',');
        let (_, Some(stamp_raw), Some(event), Some(job)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            self.malformed();
            return;
        };
        let Some(event_id) = EVENTS.iter().position(|e| *e == event) else {
            self.malformed();
            return;
        };
        let mut detail: &[u8] = fields.next().unwrap_or(b"");
        let parsed = (|| {
            let stamp = text::parse_int(stamp_raw)?;
            let mut partition: Option<i64> = None;
            let mut worker: Option<i64> = None;
            let mut snap = false;
            if let Some(rest) = detail.strip_prefix(b"partition=") {
                match memchr::memchr(b',', detail) {
                    Some(comma) if comma > 0 => {
                        partition = Some(text::parse_int(&detail[10..comma])?);
                        detail = &detail[comma + 1..];
                    }
                    _ => partition = Some(text::parse_int(rest)?),
                }
            } else if let Some(rest) = detail.strip_prefix(b"worker=") {
                match memchr::memchr(b',', detail) {
                    Some(comma) if comma > 0 => {
                        worker = Some(text::parse_int(&detail[7..comma])?);
                        if detail[comma + 1..].starts_with(b"partition=") {
                            let after = &detail[comma + 11..];
                            let end =
                                memchr::memchr(b',', &detail[comma + 1..]).map(|e| e + comma + 1);
                            partition = Some(text::parse_int(match end {
                                Some(end) if end > 0 => &detail[comma + 11..end.max(comma + 11)],
                                _ => after,
                            })?);
                        }
                    }
                    _ => worker = Some(text::parse_int(rest)?),
                }
            }
            if partition.is_none() && memchr::memchr(b'=', detail).is_some() {
                let kv = detail_pairs(detail);
                let raw = kv_last(&kv, b"partition").or_else(|| {
                    let s = kv_last(&kv, b"snap_partition");
                    snap = s.is_some();
                    s
                });
                partition = match raw {
                    Some(raw) => Some(text::parse_int(raw)?),
                    None => None,
                };
                if let Some(raw) = kv_last(&kv, b"worker") {
                    worker = Some(text::parse_int(raw)?);
                }
            }
            let plausible = (0..=MAX_STAMP_MS).contains(&stamp)
                && partition.is_none_or(|p| (0..=MAX_PARTITION).contains(&p))
                && worker.is_none_or(|w| (0..=MAX_WORKER).contains(&w));
            plausible.then_some((stamp, partition, worker, snap))
        })();
        let Some((stamp, partition, worker, snap)) = parsed else {
            self.malformed();
            return;
        };
        if !self.pending.is_empty() {
            self.advance_pending(stamp);
        }
        if self.prefix.is_some() {
            self.prefix_anchor(stamp);
        }
        self.stamp = stamp;
        self.max_stamp = self.max_stamp.max(stamp);
        let j = self.recs.cols.job_id(job);
        let key = record_key(j, partition);
        let field = match EVENTS[event_id] {
            b"SYNTH_START" => Some(col::SYNTH_START),
            b"GPU_PICKUP" => Some(col::PICKUP),
            b"GPU_START" => Some(col::GPU_START),
            _ => None,
        };
        let i = match self.keys.get(&key).map(|&i| i as usize) {
            // the same partition starting again, or starting after it ended: a new attempt
            // of the job (a Curio retry reuses the job id), kept apart from the one before
            Some(i)
                if field.is_some_and(|f| {
                    let c = &self.recs.cols;
                    let old = c.f[f][i];
                    (!old.is_nan() && old != stamp as f64)
                        || (f == col::GPU_START && c.known(col::GPU_END, i))
                }) =>
            {
                self.new_attempt(j, job, i, partition)
            }
            Some(i) => i,
            None => {
                let current = self.attempts.get(&j).map_or(j, |a| a.1);
                let c = &mut self.recs.cols;
                let i = c.add(current, partition);
                let k = c.kind_id(kind_from_job(job, snap));
                c.kind[i] = k;
                self.keys.insert(key, i as u32);
                i
            }
        };
        let c = &mut self.recs.cols;
        c.touch(i);
        if let Some(w) = worker {
            c.worker[i] = w as i32; // within MAX_WORKER: it fits
        }
        let t = stamp as f64;
        match EVENTS[event_id] {
            b"GPU_START" => {
                c.f[col::GPU_START][i] = t;
                c.start_line[i] = line_no as i64;
                self.attributor.started(&self.recs, i);
            }
            b"GPU_END" => {
                if c.f[col::GPU_START][i] > t {
                    self.malformed(); // it ends before it started: an impossible interval
                    return;
                }
                c.f[col::GPU_END][i] = t;
                c.end_line[i] = line_no as i64;
                self.attributor.ended(&mut self.recs, i);
            }
            b"SYNTH_START" => {
                c.f[col::SYNTH_START][i] = t;
                if text::contains(detail, b"kind=") {
                    let kv = detail_pairs(detail);
                    if let Some(kind) = kv_last(&kv, b"kind").filter(|k| !k.is_empty()) {
                        let name = String::from_utf8_lossy(kind).into_owned();
                        let k = c.kind_id(&name);
                        c.kind[i] = k;
                    }
                }
            }
            b"SYNTH_END" => c.f[col::SYNTH_END][i] = t,
            b"GPU_PICKUP" => c.f[col::PICKUP][i] = t,
            _ => c.f[col::QUEUED][i] = t, // GPU_QUEUE / CHAN_SEND
        }
    }

    fn advance_pending(&mut self, stamp: i64) {
        // the lines read since the last stamp get this one as the stamp after them (but not
        // the lines that landed inside this stamp's own line)
        for (k, item) in self.pending.iter_mut().rev().enumerate() {
            if k < self.unbounded {
                continue;
            }
            if item.next.is_some() {
                break;
            }
            item.next = Some(stamp);
        }
        // a stamp written a little late (disorder) may still come for the oldest lines
        while let Some(front) = self.pending.front() {
            if front.next.is_none() || stamp.saturating_sub(DEFER_MS) < front.prev {
                break;
            }
            self.resolve_one();
        }
    }

    fn resolve_one(&mut self) {
        let Some(p) = self.pending.pop_front() else {
            return;
        };
        let lo = if p.prev < 0 {
            f64::NEG_INFINITY
        } else {
            p.prev as f64
        };
        let hi = p.next.map_or(f64::INFINITY, |n| n as f64 + WINDOW_SLACK_MS);
        self.attributor
            .push(&mut self.recs, p.stage, p.vals, lo, hi);
    }
}

/// The last value of `key` (a TIMELINE detail's later items win).
/// A record's key: its job number and partition in one number (a partition is within
/// MAX_PARTITION, a job number below 2^32: the two halves never mix).
fn record_key(j: usize, partition: Option<i64>) -> u64 {
    ((j as u64) << 32) | partition.map_or(0, |p| p as u64 + 1)
}

fn kv_last<'a>(kv: &[(&[u8], &'a [u8])], key: &[u8]) -> Option<&'a [u8]> {
    kv.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns_of(b: &Builder) -> Vec<Vec<u64>> {
        let c = &b.recs.cols;
        let mut out: Vec<Vec<u64>> =
            c.f.iter()
                .map(|v| v.iter().map(|x| x.to_bits()).collect())
                .collect();
        for v in c.i32s() {
            out.push(v.iter().map(|x| *x as u64).collect());
        }
        for v in c.i64s() {
            out.push(v.iter().map(|x| *x as u64).collect());
        }
        out
    }

    const LOG: &[u8] = b"TIMELINE,100,SYNTH_START,porep-1000-7,partition=0
TIMELINE,200,SYNTH_END,porep-1000-7,partition=0,synth_ms=100
TIMELINE,201,GPU_QUEUE,porep-1000-7,partition=0
TIMELINE,210,GPU_START,porep-1000-7,worker=0,partition=0
CUZK_TIMING: pre_lock_cpu_ms=5 mutex_wait_ms=0
CUZK_NTT_H: d_b_alloc=10ms ntt_kernels=300ms coset_intt_sync=100ms msm_init=1ms msm_invoke=200ms msm_dtor=1ms total=612ms
CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=612
CUZK_TIMING: gpu_tid=0 barrier_wait_ms=100
2026-03-16T09:12:37.123456Z  INFO cuzk_core::engine: pipeline GPU worker started worker_id=0 gpu=3 sub_id=0
CUZK_TIMING: gpu_tid=0 batch_add_ms=600
CUZK_TIMING: gpu_tid=0 tail_msm_ms=80 gpu_total_ms=1392
CUZK_TIMING: mutex_held_ms=1392 total_start_fn_ms=1397
TIMELINE,2000,GPU_END,porep-1000-7,worker=0,partition=0,gpu_ms=1790
";

    fn whole(data: &[u8]) -> Builder {
        let mut b = Builder::new(None);
        b.feed(data);
        b.finish();
        b
    }

    #[test]
    fn attributes_one_interval() {
        let b = whole(LOG);
        let c = &b.recs.cols;
        assert_eq!(c.len(), 1);
        assert_eq!(c.f[col::NTT_MSM_H][0], 612.0);
        assert_eq!(c.f[col::MUTEX_HELD][0], 1392.0);
        assert_eq!(b.recs.gpu_of(0), 3);
        assert_eq!(b.counts.timeline, 5);
        assert_eq!(b.attributor.unattributed, 0);
    }

    #[test]
    fn a_live_view_shows_open_decisions_without_taking_them() {
        let mut live = Builder::new(None);
        live.feed(LOG);
        // too few lines after them: the attributor keeps its decisions open
        assert!(live.attributor.has_open_lines());
        let before = columns_of(&live);
        assert!(live.recs.cols.f[col::NTT_MSM_H][0].is_nan());
        let shown = live.with_open_decisions(|c, _| {
            (c.f[col::NTT_MSM_H][0], c.f[col::MUTEX_HELD][0], c.stage[0])
        });
        assert_eq!(columns_of(&live), before, "the records are put back");
        assert!(live.attributor.has_open_lines(), "nothing was decided");
        let done = whole(LOG);
        let c = &done.recs.cols;
        assert_eq!(
            shown,
            (c.f[col::NTT_MSM_H][0], c.f[col::MUTEX_HELD][0], c.stage[0])
        );
        assert_eq!(shown.0, 612.0);
    }

    #[test]
    fn a_start_after_its_end_is_a_new_attempt() {
        // a whole-proof job whose end line came first (a line lost its partition key)
        let b = whole(
            b"TIMELINE,100,GPU_END,job-a,worker=0,gpu_ms=5
TIMELINE,105,GPU_START,job-a,worker=0
",
        );
        let c = &b.recs.cols;
        assert_eq!(c.len(), 2);
        for i in 0..c.len() {
            let (s, e) = (c.f[col::GPU_START][i], c.f[col::GPU_END][i]);
            assert!(s.is_nan() || e.is_nan() || s <= e);
        }
    }

    /// A tiny deterministic generator, so that the property test needs no crate.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    #[test]
    fn any_chunking_gives_the_same_columns() {
        let expected = columns_of(&whole(LOG));
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..500 {
            let mut b = Builder::new(None);
            let mut pos = 0;
            while pos < LOG.len() {
                let n = 1 + rng.below(40);
                let end = (pos + n).min(LOG.len());
                b.feed(&LOG[pos..end]);
                pos = end;
            }
            b.finish();
            assert_eq!(columns_of(&b), expected);
        }
    }

    #[test]
    fn a_cut_at_any_character_is_rejoined() {
        let lines: Vec<&[u8]> = LOG
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let expected = columns_of(&whole(LOG));
        for victim in [3usize, 12] {
            let intruder = victim + 1;
            let text = lines[victim.min(lines.len() - 1)];
            for at in 1..text.len() {
                let mut out: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
                if intruder >= out.len() {
                    // cut the last line by a C++ line of its own making
                    out.push(b"CUZK_TIMING: async_dealloc_ms=9".to_vec());
                }
                let inner = out[intruder].clone();
                let mut head = text[..at].to_vec();
                head.extend_from_slice(&inner);
                out[victim] = head;
                out[intruder] = text[at..].to_vec();
                let mut data = out.join(&b'\n');
                data.push(b'\n');
                let b = whole(&data);
                let got = columns_of(&b);
                assert_eq!(got[..20], expected[..20], "victim {victim} at {at}");
                assert_eq!(b.counts.spliced, 1);
            }
        }
    }

    #[test]
    fn numbers_out_of_range_are_malformed() {
        let mut b = Builder::new(None);
        b.feed(b"TIMELINE,99999999999999999999999,GPU_START,j,worker=0,partition=0
TIMELINE,5,GPU_START,j,worker=10000000000,partition=0
TIMELINE,5,GPU_START,j,worker=-7,partition=0
TIMELINE,5,GPU_START,j,worker=0,partition=9223372036854775807
TIMELINE,50,GPU_START,k,worker=0,partition=0
TIMELINE,40,GPU_END,k,worker=0,partition=0,gpu_ms=1
CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=123456789012345678901234567890
2026-03-16T09:12:37.123456Z  INFO cuzk: pipeline GPU worker started worker_id=0 gpu=3000000000 sub_id=0
");
        b.finish();
        assert_eq!(b.counts.malformed, 7);
        assert_eq!(b.counts.timeline, 1);
        assert!(b.recs.worker_gpu.is_empty());
        assert!(b.recs.cols.f[col::GPU_END].iter().all(|x| x.is_nan()));
    }

    #[test]
    fn a_restart_starts_a_new_run() {
        let mut data = LOG.to_vec();
        data.extend_from_slice(b"TIMELINE,40000,GPU_START,porep-1000-9,worker=0,partition=0\n");
        data.extend_from_slice(LOG); // offsets from 0 again: the daemon restarted
        let b = whole(&data);
        assert_eq!(b.finished.len(), 1);
        let first = &b.finished[0];
        assert_eq!(first.recs.cols.len(), 2);
        assert_eq!(b.recs.cols.len(), 1);
        assert_eq!(b.recs.cols.f[col::NTT_MSM_H][0], 612.0);
        assert_eq!(b.run_first_line, 15);
        assert_eq!(b.attributor.unattributed, 0);
    }

    #[test]
    fn a_retry_of_the_same_job_is_a_new_attempt() {
        let b = whole(
            b"TIMELINE,10,GPU_START,porep-1-5,worker=0,partition=0
TIMELINE,20,GPU_END,porep-1-5,worker=0,partition=0,gpu_ms=10
TIMELINE,25,GPU_START,porep-1-5,worker=0,partition=1
TIMELINE,30,GPU_END,porep-1-5,worker=0,partition=1,gpu_ms=5
TIMELINE,100,GPU_START,porep-1-5,worker=0,partition=0
TIMELINE,120,GPU_END,porep-1-5,worker=0,partition=0,gpu_ms=20
TIMELINE,125,GPU_START,porep-1-5,worker=0,partition=1
TIMELINE,130,GPU_END,porep-1-5,worker=0,partition=1,gpu_ms=5
",
        );
        let c = &b.recs.cols;
        assert_eq!(c.len(), 4);
        assert_eq!(
            c.jobs,
            vec!["porep-1-5".to_string(), "porep-1-5 (attempt 2)".to_string()]
        );
        assert_eq!(c.job, vec![0, 0, 1, 1]);
        assert_eq!(c.f[col::GPU_START], vec![10.0, 25.0, 100.0, 125.0]);
        assert_eq!(c.f[col::GPU_END], vec![20.0, 30.0, 120.0, 130.0]);
    }

    #[test]
    fn a_huge_line_is_skipped_without_being_held() {
        let mut b = Builder::new(None);
        let junk = vec![b'x'; 256 * 1024];
        b.feed(b"TIMELINE,1,GPU_START,j,worker=0,partition=0\n");
        for _ in 0..40 {
            b.feed(&junk); // a 10 MiB line without newline
            assert!(b.partial_bytes() <= MAX_LINE_BYTES);
        }
        b.feed(b"\nTIMELINE,2,GPU_END,j,worker=0,partition=0,gpu_ms=1\n");
        b.finish();
        assert_eq!(b.counts.timeline, 2);
        assert_eq!(b.counts.other, 1);
        assert_eq!(b.lines_read, 3);
    }

    #[test]
    fn bad_input_never_panics() {
        let mut rng = Rng(7);
        let mut data = Vec::new();
        for _ in 0..20_000 {
            let k = rng.below(LOG.len());
            match rng.below(4) {
                0 => data.push(LOG[k]),
                1 => data.push(rng.below(256) as u8),
                2 => data.extend_from_slice(b"99999999999999999999999,"),
                _ => data.extend_from_slice(&LOG[k..(k + rng.below(60)).min(LOG.len())]),
            }
        }
        let mut b = Builder::new(Some(2));
        b.feed(&data);
        b.finish();
        assert!(b.counts.timeline >= 0);
    }
}
