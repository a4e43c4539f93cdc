//! The incremental scanner: log bytes in (any chunking), per-partition columns out.
//!
//! A [`Reader`] turns the bytes into items (whole lines, parsed); the builder applies them
//! to the run's records: each TIMELINE event to its partition's record, each C++ timing line
//! to the attributor (which gives it to a GPU interval), each stdout line to the worker →
//! GPU map and the wall clock. A big feed reads on a second thread while the first applies;
//! a source read to its end (`feed_from`) also attributes on a third, told of the records by
//! messages (`mirror`).
//! Bad input is counted, never raised.

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex, MutexGuard, PoisonError};

use rustc_hash::FxHashMap as HashMap;

use crate::attribution::Attributor;
use crate::columns::{self as col, Columns};
use crate::lines::CpuLines;
use crate::mirror::{self, Attribution, Link, Msg};
use crate::reader::{self, Batch, Event, Item, Reader, MAX_WORKER};
use crate::text::{self, Wall};
use crate::timing::{Timing, Values, MAX_GPU, STAGE_BATCH, STAGE_NTT_MSM, STAGE_TAIL};

pub use crate::reader::{MAX_LINE_BYTES, MAX_PARTITION, MAX_STAMP_MS};

/// Offsets going back by more than this (ms) mean the daemon restarted.
pub const RESTART_JUMP_MS: i64 = 30_000;

/// Pending C++ lines wait this long (ms of stamps) so that a stamp written a little late
/// (disorder) is read before they are attributed.
const DEFER_MS: i64 = 10;
/// How late a stamp can be (taken, then written after the lines below it).
const WINDOW_SLACK_MS: f64 = 10.0;
const MAX_PENDING: usize = 20_000;
/// Prefix clocks read for the wall-clock anchor.
const ANCHOR_SAMPLES: u32 = 2000;
/// A feed at least this big is read on a second thread, in pieces of PIECE_BYTES, while
/// this one applies the pieces read (the items are the same as read in one go).
const THREADED_FEED_BYTES: usize = 1 << 20;
const PIECE_BYTES: usize = 1 << 18;
/// Pieces read ahead of the ones applied.
const PIECES_AHEAD: usize = 4;
/// Bytes of log a record takes at least, for the room made ahead of a file (`expect_bytes`):
/// logs take 680 to 3,700 bytes a record (every line counted); a denser one grows its columns.
const RECORD_BYTES_HINT: u64 = 512;
/// The most records room is made for ahead: ~1.3 GB of address space (~330 bytes a record,
/// the attribution's columns with the records'), memory only as it is written.
const MAX_RECORDS_HINT: usize = 4 << 20;

/// A part of a file, read at its offsets (`Read` that moves no file position); it ends
/// early once `stop` is set.
struct Span<'a> {
    file: &'a std::fs::File,
    at: u64,
    left: u64,
    stop: Option<&'a AtomicBool>,
}

impl Read for Span<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        if want == 0 || self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        self.at += n as u64;
        self.left -= n as u64;
        Ok(n)
    }
}

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

struct Pending {
    stage: i8,
    vals: Values,
    prev: i64,
    next: Option<i64>,
}

/// The run's records and the worker → GPU map.
pub struct Recs {
    pub cols: Columns,
    pub worker_gpu: BTreeMap<i64, i64>,
    pub workers_per_gpu: Option<i64>,
}

impl Recs {
    /// The GPU a worker runs on.
    pub fn gpu_of(&self, worker: i64) -> i64 {
        mirror::gpu_of(&self.worker_gpu, self.workers_per_gpu, worker)
    }
}

/// The reading side of a threaded feed: batches to fill (spent ones come back) and the way
/// to the applying side.
struct Pipe {
    full: mpsc::SyncSender<Batch>,
    empty: mpsc::Receiver<Batch>,
}

impl Pipe {
    /// An empty batch to read into.
    fn batch(&self) -> Batch {
        let mut batch = self.empty.try_recv().unwrap_or_default();
        batch.clear();
        batch
    }

    /// Hand a batch over; false when the applying side has stopped.
    fn send(&self, batch: Batch) -> bool {
        self.full.send(batch).is_ok()
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
    keys: RecordKeys,
    // per job number of the reader's (counted over the whole file), this run's: a run holds
    // only its own jobs, whatever came before it
    job_of: HashMap<u32, u32>,
    attempts: HashMap<usize, (u32, usize)>, // job number -> (attempt, its job number)
    pub max_stamp: i64,
    pub engine_seen: bool,
    /// The kernel lines read: NTT (`ntt_msm_h_ms=`), batch additions, tail MSMs (what lines
    /// the intervals lack were lost, where fewer were read than intervals ended).
    pub kernel_lines: [i64; 3],
    /// The wall clock of offset 0, when the log gives it.
    pub wall_anchor: Option<Wall>,
    anchor_from_stdout: bool,
    anchor_samples: u32,
    /// What belongs to the file, not to a run (moves to the next run at a restart).
    pub reader: Reader,
    /// The CPU path figures of the whole file, each with its run (moves like `reader`).
    pub cpu: CpuLines,
    batch: Batch,                 // reused between small feeds
    prefix: Option<Option<Wall>>, // the capture prefix of the line being read, and its clock
    inners: Option<usize>,        // reading the lines inside a cut line: timing lines pushed
    unbounded: usize,
    stamp: i64,
    pending: VecDeque<Pending>,
    // the attribution: here, or on its own thread during a big feed (`link`); told of the
    // records by messages (`msgs`: those not handed over yet)
    attribution: Option<Box<Attribution>>,
    link: Option<Link>,
    msgs: Vec<Msg>,
    merged: bool,    // the attributed columns are in `recs.cols` (a finished run)
    room_made: bool, // `expect_bytes` made room in the columns: not given back at the end
    span_room: bool, // a big span made room for the rest of its file (once a file)
    #[cfg(test)]
    no_threads: bool, // a big feed finds no thread to start (a test of the fallback)
    #[cfg(test)]
    apart: bool, // the attribution ran on its own thread
    #[cfg(test)]
    fail_at: Option<u64>, // applying a line from this one panics (a test of a failure)
}

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
            keys: RecordKeys::default(),
            job_of: HashMap::default(),
            attempts: HashMap::default(),
            max_stamp: -1,
            engine_seen: false,
            kernel_lines: [0; 3],
            wall_anchor: None,
            anchor_from_stdout: false,
            anchor_samples: 0,
            reader: Reader::default(),
            cpu: CpuLines::default(),
            batch: Batch::default(),
            prefix: None,
            inners: None,
            unbounded: 0,
            stamp: -1,
            pending: VecDeque::new(),
            attribution: Some(Box::new(Attribution::new(workers_per_gpu))),
            link: None,
            msgs: Vec::new(),
            merged: false,
            room_made: false,
            span_room: false,
            #[cfg(test)]
            no_threads: false,
            #[cfg(test)]
            apart: false,
            #[cfg(test)]
            fail_at: None,
        }
    }

    /// Bytes of an incomplete last line waiting for its newline.
    pub fn partial_bytes(&self) -> usize {
        self.reader.partial_bytes()
    }

    /// Take the next bytes of the log (any size, cut anywhere).
    pub fn feed(&mut self, data: &[u8]) {
        if data.len() < THREADED_FEED_BYTES || !self.feed_threaded(data) {
            self.feed_here(data);
        }
    }

    /// Read and apply on this thread.
    fn feed_here(&mut self, data: &[u8]) {
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        self.reader.read(data, &mut batch);
        self.apply(&batch);
        // a restart may have made a new builder meanwhile: the batch goes to the current one
        self.batch = batch;
        self.dispatch();
    }

    /// A big feed: a second thread reads pieces of it while this one applies them. False
    /// (nothing read) when no thread could be started.
    fn feed_threaded(&mut self, data: &[u8]) -> bool {
        // pieces fed one by one (a viewer's slices) do without the attribution's thread:
        // starting it and waiting for it to catch up at each one costs more than it gives
        self.threaded(false, |reader, pipe| {
            for piece in data.chunks(PIECE_BYTES) {
                let mut batch = pipe.batch();
                reader.read(piece, &mut batch);
                if !pipe.send(batch) {
                    break; // the applying side stopped
                }
            }
        })
        .is_some()
    }

    /// `bytes` of log are coming (a file read to its end): make room for the records they may
    /// hold, so that the columns are not copied as they grow.
    pub fn expect_bytes(&mut self, bytes: u64) {
        let more = usize::try_from(bytes / RECORD_BYTES_HINT).unwrap_or(usize::MAX);
        if more < 4096 {
            return; // growing costs nothing worth it
        }
        let records = self
            .recs
            .cols
            .len()
            .saturating_add(more)
            .min(MAX_RECORDS_HINT);
        // kept to the end only when every column got it (else it shrinks as ever)
        self.room_made = self.recs.cols.reserve_records(records);
        if let Some(a) = &mut self.attribution {
            a.mirror.cols.reserve_attributed(records);
        }
    }

    /// Everything `source` gives, to its end: read (the system calls too) on a second thread
    /// while this one applies, or here when no thread can be started. Returns the bytes read.
    pub fn feed_from(&mut self, source: &mut (impl Read + Send)) -> std::io::Result<u64> {
        fn read_piece(source: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
            loop {
                match source.read(buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    done => return done,
                }
            }
        }
        let mut total = 0u64;
        let read = self.threaded(true, |reader, pipe| -> std::io::Result<()> {
            let mut buf = vec![0u8; PIECE_BYTES];
            loop {
                let n = read_piece(source, &mut buf)?;
                if n == 0 {
                    return Ok(());
                }
                total += n as u64;
                let mut batch = pipe.batch();
                reader.read(&buf[..n], &mut batch);
                if !pipe.send(batch) {
                    return Ok(()); // the applying side stopped
                }
            }
        });
        if let Some(done) = read {
            return done.map(|()| total);
        }
        let mut buf = vec![0u8; PIECE_BYTES]; // no thread to be had: read here
        loop {
            let n = read_piece(source, &mut buf)?;
            if n == 0 {
                return Ok(total);
            }
            total += n as u64;
            self.feed_here(&buf[..n]);
        }
    }

    /// The bytes `offset..offset + length` of `file` (fewer where it ends first, or once
    /// `stop` is set: a reader that quits does not wait for the rest), read without moving
    /// its position: a big span as `feed_from` reads (on a second thread, attributed on a
    /// third), a small one here. Returns the bytes read; on a read error the bytes before
    /// it have been applied.
    pub fn feed_span(
        &mut self,
        file: &std::fs::File,
        offset: u64,
        length: u64,
        stop: Option<&AtomicBool>,
    ) -> std::io::Result<u64> {
        let mut span = Span {
            file,
            at: offset,
            left: length,
            stop,
        };
        if length >= THREADED_FEED_BYTES as u64 {
            // the first big span is most often the start of a long file read in spans:
            // room for the records of the rest of the file is made once, not grown span
            // after span (once a file, as `feed_fd` does: not again after a restart)
            if !self.span_room {
                self.span_room = true;
                if let Ok(meta) = file.metadata() {
                    if meta.is_file() {
                        self.expect_bytes(meta.len().saturating_sub(offset));
                    }
                }
            }
            return self.feed_from(&mut span);
        }
        let mut data = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
        span.read_to_end(&mut data)?;
        self.feed_here(&data);
        Ok(data.len() as u64)
    }

    /// Run `produce` on a second thread with the reader and a pipe of batches, and apply the
    /// batches on this one as they come (`apart`: the attribution on a third). None (nothing
    /// run) when no thread could be started.
    fn threaded<T: Send>(
        &mut self,
        apart: bool,
        produce: impl FnOnce(&mut Reader, &Pipe) -> T + Send,
    ) -> Option<T> {
        fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
            m.lock().unwrap_or_else(PoisonError::into_inner)
        }
        let slot = Mutex::new(Some(std::mem::take(&mut self.reader)));
        let shared = &slot;
        #[cfg(test)]
        let no_threads = self.no_threads;
        let out = std::thread::scope(|s| {
            let (full, read) = mpsc::sync_channel::<Batch>(PIECES_AHEAD);
            let (spent, empty) = mpsc::channel::<Batch>();
            #[cfg(test)]
            if no_threads {
                return None; // a test of the fallback: as if the system had no thread to give
            }
            let reading = std::thread::Builder::new()
                .name("cuzk-tui-read".into())
                .spawn_scoped(s, move || {
                    let mut reader = lock(shared).take().expect("the reader");
                    let out = produce(&mut reader, &Pipe { full, empty });
                    *lock(shared) = Some(reader);
                    out
                });
            let Ok(reading) = reading else {
                return None; // no thread to be had: the reader is still in its slot
            };
            if apart {
                self.attribute_apart();
            }
            let applied = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                for batch in read {
                    self.apply(&batch);
                    self.dispatch();
                    let _ = spent.send(batch); // the reader may have finished: fine
                }
            }));
            if let Err(panic) = applied {
                // the attribution's thread ends once its way in is dropped; a fresh one stays
                if self.link.take().is_some() {
                    let fresh = Attribution::new(self.recs.workers_per_gpu);
                    self.attribution = Some(Box::new(fresh));
                }
                std::panic::resume_unwind(panic);
            }
            self.home(); // a restart made a new builder: the link was the old one's
            match reading.join() {
                Ok(out) => Some(out),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        // a restart while applying made a new builder: the reader goes to the current one
        self.reader = lock(&slot).take().unwrap_or_default();
        out
    }

    /// End of input: attribute what waits (a partial last line stays unread). The run's
    /// attributed columns join its records.
    pub fn finish(&mut self) {
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        self.reader.finish(&mut batch);
        self.apply(&batch);
        self.batch = Batch::default();
        while !self.pending.is_empty() {
            self.resolve_one();
        }
        let (recs, a) = self.home_with_records();
        a.attributor.flush(&mut a.mirror);
        a.attributor.finish(&mut a.mirror);
        let m = &mut a.mirror.cols;
        m.grow_attributed(recs.cols.len());
        recs.cols.swap_attributed(m);
        // what it kept of the records is not needed again (`unmerge` makes it again if so)
        for k in [col::GPU_START, col::GPU_END] {
            m.f[k] = Vec::new();
        }
        m.worker = Vec::new();
        self.merged = true;
        if !self.room_made {
            // room made ahead is address space never written, not memory: shrinking it would
            // copy every column
            self.recs.cols.shrink();
        }
        crate::release_free_memory();
    }

    /// The attributor (its counts and doubts; outside a feed).
    pub fn attributor(&self) -> &Attributor {
        &self
            .attribution
            .as_ref()
            .expect("the attribution, home")
            .attributor
    }

    /// Run `read` on the records with the attributor's open decisions filled in as they stand
    /// (what a live view shows); the records are left as they were.
    pub fn with_open_decisions<T>(&mut self, read: impl FnOnce(&Columns, &[usize]) -> T) -> T {
        let (recs, a) = self.home_with_records();
        let n = recs.cols.len();
        a.attributor.with_open_decisions(&mut a.mirror, |m, open| {
            m.cols.grow_attributed(n);
            recs.cols.swap_attributed(&mut m.cols);
            let out = read(&recs.cols, open);
            recs.cols.swap_attributed(&mut m.cols);
            out
        })
    }

    /// The records written since the last call (see `Columns::take_touched`).
    pub fn take_touched(&mut self) -> Option<Vec<usize>> {
        let (recs, a) = self.home_with_records();
        recs.cols.take_touched(&mut a.mirror.cols)
    }

    /// Attribute the timing lines kept back for the lines after them (the input went quiet).
    pub fn flush_pending(&mut self) -> bool {
        let had_pending = !self.pending.is_empty();
        while !self.pending.is_empty() {
            self.resolve_one();
        }
        let a = self.home();
        let had = had_pending || a.attributor.has_open_lines();
        a.attributor.flush(&mut a.mirror);
        had
    }

    // -- the attribution ----------------------------------------------------------------------

    /// Tell the attribution of a change (in file order).
    fn tell(&mut self, msg: Msg) {
        self.msgs.push(msg);
    }

    /// Hand the messages told so far to the attribution, here or on its thread.
    fn dispatch(&mut self) {
        if self.msgs.is_empty() {
            return;
        }
        if let Some(link) = &self.link {
            if link.send(&mut self.msgs) {
                return;
            }
            self.recall(); // its thread stopped: a panic there goes on here
        }
        let mut msgs = std::mem::take(&mut self.msgs);
        let a = self.here();
        for msg in msgs.drain(..) {
            a.take(msg);
        }
        self.msgs = msgs;
    }

    /// Run the attribution on its own thread from now on (if a thread can be had).
    fn attribute_apart(&mut self) {
        #[cfg(test)]
        if self.no_threads {
            return;
        }
        self.here(); // with its own columns (a finished run fed again)
        if let Some(a) = self.attribution.take() {
            match Link::start(a) {
                Ok(link) => {
                    self.link = Some(link);
                    #[cfg(test)]
                    {
                        self.apart = true;
                    }
                }
                Err(a) => self.attribution = Some(a),
            }
        }
    }

    /// The attribution on this thread, with its own columns (see `unmerge`).
    fn here(&mut self) -> &mut Attribution {
        self.unmerge();
        self.attribution
            .as_deref_mut()
            .expect("the attribution, here")
    }

    /// A finished run fed or read again: its attributed columns go back to the attribution,
    /// and what it knew of the records is made again from them. Done before any record
    /// changes (`apply` asks first), so that it knows them as they were when it finished.
    fn unmerge(&mut self) {
        if !self.merged {
            return;
        }
        self.merged = false;
        let a = self
            .attribution
            .as_deref_mut()
            .expect("the attribution, here when finished");
        let m = &mut a.mirror.cols;
        self.recs.cols.swap_attributed(m);
        let c = &self.recs.cols;
        m.f[col::GPU_START] = c.f[col::GPU_START].clone();
        m.f[col::GPU_END] = c.f[col::GPU_END].clone();
        m.worker = c.worker.clone();
    }

    /// Stop the attribution's thread, if it runs, and take it back. A panic there goes on
    /// here, a fresh attribution left in its place (the reader is broken then, but what it
    /// is asked answers).
    fn recall(&mut self) {
        if let Some(link) = self.link.take() {
            match link.stop() {
                Ok(a) => self.attribution = Some(a),
                Err(panic) => {
                    let fresh = Attribution::new(self.recs.workers_per_gpu);
                    self.attribution = Some(Box::new(fresh));
                    std::panic::resume_unwind(panic);
                }
            }
        }
    }

    /// The attribution, here, up to date, and with its own columns.
    fn home(&mut self) -> &mut Attribution {
        self.dispatch();
        self.recall();
        self.here()
    }

    /// The records and the attribution (`home`), to be read or written together.
    fn home_with_records(&mut self) -> (&mut Recs, &mut Attribution) {
        self.home();
        let a = self
            .attribution
            .as_deref_mut()
            .expect("the attribution, home");
        (&mut self.recs, a)
    }

    // -- items ------------------------------------------------------------------------------

    /// Apply the items read, in order.
    fn apply(&mut self, batch: &Batch) {
        self.unmerge();
        for item in &batch.items {
            match *item {
                Item::Timeline {
                    line_no,
                    first,
                    event,
                } => {
                    #[cfg(test)]
                    assert!(self.fail_at.is_none_or(|n| line_no < n), "a test's failure");
                    // offsets jumping back by more than disorder explains: the daemon restarted
                    if first.is_some_and(|s| s < self.max_stamp - RESTART_JUMP_MS) {
                        self.restart(line_no);
                    }
                    self.counts.timeline += 1;
                    match event {
                        Some(e) => self.timeline(&e, batch, line_no),
                        None => self.malformed(),
                    }
                }
                Item::Timing(Timing::Bad) => self.counts.malformed += 1,
                Item::Timing(Timing::Other) => self.counts.cuzk_timing += 1,
                Item::Timing(Timing::Phase(stage, vals)) => {
                    self.counts.cuzk_timing += 1;
                    match stage {
                        STAGE_NTT_MSM => self.kernel_lines[0] += 1,
                        STAGE_BATCH => self.kernel_lines[1] += 1,
                        STAGE_TAIL => self.kernel_lines[2] += 1,
                        _ => {}
                    }
                    if let Some(n) = self.inners.as_mut() {
                        *n += 1;
                    }
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
                Item::Stdout {
                    line_no,
                    engine_start,
                    cuzk,
                    text,
                } => {
                    if engine_start && self.counts.timeline > 0 {
                        self.restart(line_no); // the engine started again: a new run begins here
                    }
                    self.counts.stdout += 1;
                    if cuzk {
                        self.engine_seen = true;
                    }
                    if let Some(t) = text {
                        self.stdout(batch.get(t));
                    }
                }
                Item::Cpu {
                    line_no,
                    kind,
                    value,
                } => {
                    let run = u32::try_from(self.finished.len()).unwrap_or(u32::MAX);
                    self.cpu.push(line_no, kind, value, run);
                }
                Item::Other => self.counts.other += 1,
                Item::Spliced => self.counts.spliced += 1,
                Item::Prefix(p) => self.prefix = p,
                Item::Inners => self.inners = Some(0),
                Item::Outer => {
                    // the newest pending lines; some may have been attributed already
                    let pushed = self.inners.take().unwrap_or(0);
                    self.unbounded = pushed.min(self.pending.len());
                }
                Item::OuterDone => self.unbounded = 0,
            }
        }
    }

    /// The daemon restarted: the run read so far is finished and kept apart; a new one
    /// begins with this line (its offsets start again from 0).
    fn restart(&mut self, line_no: u64) {
        let mut fresh = Builder::new(self.recs.workers_per_gpu);
        fresh.run_first_line = line_no;
        fresh.reader = std::mem::take(&mut self.reader);
        fresh.cpu = std::mem::take(&mut self.cpu);
        fresh.span_room = self.span_room;
        #[cfg(test)]
        {
            fresh.no_threads = self.no_threads;
        }
        // inside a cut line: its lines read before the restart went with the old run
        fresh.inners = self.inners.map(|_| 0);
        let mut old = std::mem::replace(self, fresh);
        old.job_of = HashMap::default(); // the run is over: its names stay in its columns
        old.finish();
        self.finished = std::mem::take(&mut old.finished);
        self.finished.push(old);
    }

    /// A stdout line that may map a worker to its GPU or give the wall clock (SGR removed).
    fn stdout(&mut self, line: &[u8]) {
        if crate::contains!(line, b"worker started") {
            let kv = text::kv_pairs(line);
            let w = text::kv_get(&kv, b"worker_id").and_then(text::parse_int);
            let g = text::kv_get(&kv, b"gpu").and_then(text::parse_int);
            match (w, g) {
                (Some(w), Some(g))
                    if (0..=MAX_WORKER).contains(&w) && (0..=MAX_GPU).contains(&g) =>
                {
                    self.recs.worker_gpu.insert(w, g);
                    self.tell(Msg::Map { w, g, first: false });
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
                        self.tell(Msg::Map { w, g, first: true });
                    }
                }
            }
        } else if crate::contains!(line, b"starting cuzk engine") && !self.anchor_from_stdout {
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
        self.keys.insert(j, partition, i as u32);
        i
    }

    /// A record for an attempt of job `j` proved whole after one in partitions: named
    /// `<job> (attempt N)`; the job's events of no partition join it from now on.
    fn whole_attempt(&mut self, j: usize, job: &[u8], snap: bool) -> usize {
        let c = &mut self.recs.cols;
        let n = self.attempts.get(&j).map_or(1, |a| a.0) + 1;
        let mut name = job.to_vec();
        name.extend_from_slice(format!(" (attempt {n})").as_bytes());
        let jn = c.job_id(&name);
        self.attempts.insert(j, (n, jn));
        let i = c.add(jn, None);
        c.kind[i] = c.kind_id(kind_from_job(job, snap));
        self.keys.insert(j, None, i as u32);
        i
    }

    fn malformed(&mut self) {
        self.counts.timeline -= 1;
        self.counts.malformed += 1;
    }

    fn timeline(&mut self, e: &Event, batch: &Batch, line_no: u64) {
        let (stamp, partition) = (e.stamp, e.partition);
        let gpu_event = matches!(
            e.event,
            reader::EV_PICKUP | reader::EV_GPU_START | reader::EV_GPU_END
        );
        if gpu_event && e.worker.is_none() {
            // every GPU event names its worker: without one its detail was cut (the last
            // line of a capture ending inside a splice), and such an end would stretch the
            // run to a time nothing ended at
            self.malformed();
            return;
        }
        let job = batch.get(e.job);
        let j = match self.job_of.get(&e.job_no) {
            Some(&j) => j as usize,
            None => {
                let j = self.recs.cols.job_id(job);
                self.job_of.insert(e.job_no, j as u32);
                j
            }
        };
        if !self.pending.is_empty() {
            self.advance_pending(stamp);
        }
        if self.prefix.is_some() {
            self.prefix_anchor(stamp);
        }
        self.stamp = stamp;
        self.max_stamp = self.max_stamp.max(stamp);
        let mut retried = None;
        if partition.is_none() && self.keys.has_partitions(j) {
            // an attempt is proved in partitions or whole. A job of partitions proved whole
            // again (a retry the scheduler batched) begins with a SYNTH_START that names its
            // kind: an attempt of its own. Any other event that names no partition, unless
            // such an attempt began, lost its detail (a line cut before `partition=`, the
            // rest lost): its stamp counts, its event would make a record of no partition
            let starts_whole = e.event == reader::EV_SYNTH_START && e.kind.is_some();
            let whole = self.keys.get(j, None);
            if starts_whole && whole.is_none() {
                retried = Some(self.whole_attempt(j, job, e.snap));
            } else if !starts_whole && (whole.is_none() || e.event == reader::EV_SYNTH_START) {
                self.malformed();
                return;
            }
        }
        let field = match e.event {
            reader::EV_SYNTH_START => Some(col::SYNTH_START),
            reader::EV_PICKUP => Some(col::PICKUP),
            reader::EV_GPU_START => Some(col::GPU_START),
            _ => None,
        };
        let found = match retried {
            Some(i) => Some(i as u32),
            None => self.keys.get(j, partition),
        };
        let i = match found.map(|i| i as usize) {
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
                let k = c.kind_id(kind_from_job(job, e.snap));
                c.kind[i] = k;
                self.keys.insert(j, partition, i as u32);
                i
            }
        };
        let c = &mut self.recs.cols;
        c.touch(i);
        if let Some(w) = e.worker {
            let w = w as i32; // within MAX_WORKER: it fits
            if c.worker[i] != w {
                c.worker[i] = w;
                self.tell(Msg::Worker { i: i as u32, w });
            }
        }
        let c = &mut self.recs.cols;
        let t = stamp as f64;
        match e.event {
            reader::EV_GPU_START => {
                c.f[col::GPU_START][i] = t;
                c.start_line[i] = line_no as i64;
                let picked_up = c.f[col::PICKUP][i];
                self.tell(Msg::Started {
                    i: i as u32,
                    at: t,
                    picked_up,
                });
            }
            reader::EV_GPU_END => {
                // it ends before it started, or again once it has ended (a line a capture
                // printed twice: a second end would stretch the interval to it)
                if c.f[col::GPU_START][i] > t || c.known(col::GPU_END, i) {
                    self.malformed();
                    return;
                }
                c.f[col::GPU_END][i] = t;
                c.end_line[i] = line_no as i64;
                self.tell(Msg::Ended { i: i as u32, at: t });
            }
            reader::EV_SYNTH_START => {
                c.f[col::SYNTH_START][i] = t;
                if let Some(kind) = e.kind {
                    let name = String::from_utf8_lossy(batch.get(kind)).into_owned();
                    let k = c.kind_id(&name);
                    c.kind[i] = k;
                }
            }
            reader::EV_SYNTH_END => c.f[col::SYNTH_END][i] = t,
            reader::EV_PICKUP => c.f[col::PICKUP][i] = t,
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
        self.tell(Msg::Line {
            stage: p.stage,
            vals: p.vals,
            lo,
            hi,
        });
    }
}

/// Partitions below this are listed per job by `RecordKeys` (a job has a few dozen at most;
/// hostile numbers go to the hash).
const LISTED_PARTITIONS: usize = 64;
const NO_RECORD: u32 = u32::MAX;

/// Each record by its job number and partition. A job's first partitions are in a short
/// list of its own: the lines of a job come close together, so its list is at hand in the
/// cache, where a hash of every record of the run would be read at a random place for
/// each TIMELINE line. Other partitions are hashed (`record_key`).
#[derive(Default)]
struct RecordKeys {
    by_job: Vec<Vec<u32>>, // [job][partition + 1, 0: none named]: the record, or NO_RECORD
    other: HashMap<u64, u32>,
    partitioned: Vec<bool>, // [job]: it has a record of a partition
}

impl RecordKeys {
    fn slot(partition: Option<i64>) -> Option<usize> {
        let slot = partition.map_or(Some(0), |p| usize::try_from(p).ok()?.checked_add(1))?;
        (slot < LISTED_PARTITIONS).then_some(slot)
    }

    fn get(&self, j: usize, partition: Option<i64>) -> Option<u32> {
        match Self::slot(partition) {
            Some(slot) => self
                .by_job
                .get(j)
                .and_then(|list| list.get(slot))
                .copied()
                .filter(|&i| i != NO_RECORD),
            None => self.other.get(&record_key(j, partition)).copied(),
        }
    }

    /// Whether job `j` has a record of a partition.
    fn has_partitions(&self, j: usize) -> bool {
        self.partitioned.get(j).copied().unwrap_or(false)
    }

    fn insert(&mut self, j: usize, partition: Option<i64>, i: u32) {
        if partition.is_some() {
            if self.partitioned.len() <= j {
                self.partitioned.resize(j + 1, false);
            }
            self.partitioned[j] = true;
        }
        match Self::slot(partition) {
            Some(slot) => {
                if self.by_job.len() <= j {
                    self.by_job.resize_with(j + 1, Vec::new);
                }
                let list = &mut self.by_job[j];
                if list.len() <= slot {
                    list.resize(slot + 1, NO_RECORD);
                }
                list[slot] = i;
            }
            None => {
                self.other.insert(record_key(j, partition), i);
            }
        }
    }
}

/// A record's key: its job number and partition in one number (a partition is within
/// MAX_PARTITION, a job number below 2^32: the two halves never mix).
fn record_key(j: usize, partition: Option<i64>) -> u64 {
    ((j as u64) << 32) | partition.map_or(0, |p| p as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column of the run's records (the attributed ones where they are).
    fn columns_of(b: &Builder) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        for c in [&b.recs.cols, &b.attribution.as_ref().unwrap().mirror.cols] {
            out.extend(c.f.iter().map(|v| v.iter().map(|x| x.to_bits()).collect()));
            for v in c.i32s() {
                out.push(v.iter().map(|x| *x as u64).collect());
            }
            for v in c.i64s() {
                out.push(v.iter().map(|x| *x as u64).collect());
            }
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
    fn record_keys_find_what_a_hash_of_every_key_finds() {
        let mut keys = RecordKeys::default();
        let mut want: HashMap<u64, u32> = HashMap::default();
        let mut rng = Rng(0x5851_f42d_4c95_7f2d);
        for i in 0..50_000u32 {
            let j = rng.below(300);
            let partition = match rng.below(10) {
                0 => None,
                1 => Some(rng.below(MAX_PARTITION as usize + 1) as i64),
                _ => Some(rng.below(2 * LISTED_PARTITIONS) as i64),
            };
            let key = record_key(j, partition);
            assert_eq!(keys.get(j, partition), want.get(&key).copied());
            if rng.below(2) == 0 {
                keys.insert(j, partition, i);
                want.insert(key, i);
            }
        }
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
        assert_eq!(b.attributor().unattributed, 0);
    }

    #[test]
    fn a_live_view_shows_open_decisions_without_taking_them() {
        let mut live = Builder::new(None);
        live.feed(LOG);
        // too few lines after them: the attributor keeps its decisions open
        assert!(live.attributor().has_open_lines());
        let before = columns_of(&live);
        let attributed = &live.attribution.as_ref().unwrap().mirror.cols;
        assert!(attributed.f[col::NTT_MSM_H][0].is_nan());
        let shown = live.with_open_decisions(|c, _| {
            (c.f[col::NTT_MSM_H][0], c.f[col::MUTEX_HELD][0], c.stage[0])
        });
        assert_eq!(columns_of(&live), before, "the records are put back");
        assert!(live.attributor().has_open_lines(), "nothing was decided");
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
    /// `LOG` repeated `n` times with its stamps moved on and its job renamed each time; the
    /// stamps start again from 0 at block `restart_at` (the daemon restarted); every 7th
    /// block has a line cut by the one after it.
    fn long_log(n: usize, restart_at: usize) -> Vec<u8> {
        let text = std::str::from_utf8(LOG).expect("ASCII");
        let mut out = String::new();
        for k in 0..n {
            let shift = 3000 * (if k < restart_at { k } else { k - restart_at }) as i64;
            let mut lines: Vec<String> = text
                .lines()
                .map(|l| {
                    let l = l.replace("porep-1000-7", &format!("porep-1000-{k}"));
                    match l.strip_prefix("TIMELINE,") {
                        Some(rest) => {
                            let (stamp, tail) = rest.split_once(',').expect("a stamp");
                            let stamp: i64 = stamp.parse().expect("a number");
                            format!("TIMELINE,{},{tail}", stamp + shift)
                        }
                        None => l,
                    }
                })
                .collect();
            if k % 7 == 3 {
                let (victim, at) = (3, 9 + k % 20);
                let inner = lines[victim + 1].clone();
                let whole = lines[victim].clone();
                lines[victim] = format!("{}{inner}", &whole[..at]);
                lines[victim + 1] = whole[at..].to_string();
            }
            for l in lines {
                out.push_str(&l);
                out.push('\n');
            }
        }
        out.push_str("TIMELINE,5,GPU_QUE"); // a partial last line
        out.into_bytes()
    }

    fn runs_of(b: &Builder) -> Vec<(Vec<Vec<u64>>, Counts, u64)> {
        b.finished
            .iter()
            .chain(std::iter::once(b))
            .map(|r| (columns_of(r), r.counts, r.run_first_line))
            .collect()
    }

    #[test]
    fn a_big_feed_read_on_two_threads_gives_what_small_feeds_give() {
        let data = long_log(3000, 1700);
        assert!(data.len() > 2 * THREADED_FEED_BYTES);
        let threaded = whole(&data);
        assert_eq!(threaded.finished.len(), 1, "the restart is seen");
        assert!(
            !threaded.finished[0].apart,
            "pieces fed one by one are attributed here"
        );
        assert_eq!(
            threaded.counts.spliced + threaded.finished[0].counts.spliced,
            429
        );
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut small = Builder::new(None);
        let mut pos = 0;
        while pos < data.len() {
            let end = (pos + 1 + rng.below(THREADED_FEED_BYTES / 16)).min(data.len());
            small.feed(&data[pos..end]);
            pos = end;
        }
        small.finish();
        assert_eq!(runs_of(&threaded), runs_of(&small));
        assert_eq!(threaded.reader.lines_read, small.reader.lines_read);
        assert_eq!(threaded.partial_bytes(), 18);
        // and fed in big pieces that cut lines anywhere
        let mut pieces = Builder::new(None);
        for piece in data.chunks(THREADED_FEED_BYTES + 12_345) {
            pieces.feed(piece);
        }
        pieces.finish();
        assert_eq!(runs_of(&pieces), runs_of(&small));
    }

    #[test]
    fn a_big_feed_without_a_thread_to_start_is_read_here() {
        let data = long_log(2000, 1100);
        assert!(data.len() > THREADED_FEED_BYTES);
        let threaded = whole(&data);
        let mut here = Builder::new(None);
        here.no_threads = true;
        here.feed(&data);
        here.finish();
        assert_eq!(here.finished.len(), 1, "the restart is seen");
        assert!(!here.finished[0].apart, "attributed here");
        assert_eq!(runs_of(&here), runs_of(&threaded));
        assert_eq!(here.reader.lines_read, threaded.reader.lines_read);
    }

    #[test]
    fn a_finished_run_fed_again_goes_on_as_if_read_in_between() {
        // the finished run's attributed columns go back to the attribution before it takes
        // anything more, on this thread (feeds) or its own (a source read to its end)
        let data = long_log(3000, usize::MAX);
        let cut = data.len() / 3;
        let small = &data[cut..cut + 5000];
        for (tail, from_source) in [(small, false), (&data[cut..], false), (&data[cut..], true)] {
            let mut fed = Builder::new(None);
            fed.feed(&data[..cut]);
            fed.finish();
            if from_source {
                fed.feed_from(&mut &tail[..]).expect("a slice reads");
                assert!(fed.apart);
            } else {
                fed.feed(tail);
            }
            fed.finish();
            let mut read = Builder::new(None);
            read.feed(&data[..cut]);
            read.finish();
            read.with_open_decisions(|_, _| ());
            read.feed(tail);
            read.finish();
            assert_eq!(runs_of(&fed), runs_of(&read));
            assert_eq!(
                fed.attributor().unattributed,
                read.attributor().unattributed
            );
            let known = |b: &Builder| {
                b.recs.cols.f[col::NTT_MSM_H]
                    .iter()
                    .filter(|v| !v.is_nan())
                    .count()
            };
            assert!(
                known(&fed) > 100,
                "the durations before the first finish are kept"
            );
        }
    }

    #[test]
    fn a_failure_while_applying_a_big_feed_ends_the_attribution_s_thread() {
        let data = long_log(3000, usize::MAX);
        let mut b = Builder::new(None);
        b.fail_at = Some(20_000);
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            b.feed_from(&mut &data[..]).map(|_| ())
        }));
        assert!(failed.is_err(), "the panic goes on to the caller");
        assert!(
            b.apart && b.link.is_none(),
            "the link is dropped: its thread ends"
        );
        assert_eq!(b.attributor().unattributed, 0);
    }

    #[test]
    fn a_failed_attribution_thread_leaves_a_reader_that_answers() {
        let mut b = Builder::new(None);
        b.feed(LOG);
        b.attribute_apart();
        assert!(b.link.is_some());
        b.tell(Msg::Panic);
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.finish()));
        assert!(failed.is_err(), "the panic goes on to the caller");
        assert!(b.link.is_none());
        assert_eq!(b.attributor().unattributed, 0);
        assert!(!b.attributor().lock_lines_seen);
    }

    /// A source that gives odd amounts, is interrupted now and then, and may fail at a point.
    struct Stutter<'a> {
        data: &'a [u8],
        pos: usize,
        rng: Rng,
        fail_at: Option<usize>,
    }

    impl Read for Stutter<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.rng.below(7) == 0 {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            if self.fail_at.is_some_and(|at| self.pos >= at) {
                return Err(std::io::Error::other("the disk went away"));
            }
            let n = (1 + self.rng.below(3 * PIECE_BYTES))
                .min(buf.len())
                .min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    /// A file holding `data`, open for reading, its name gone already.
    fn unlinked_file(data: &[u8], name: &str) -> std::fs::File {
        use std::io::Write;
        let path = std::env::temp_dir().join(format!("cuzk-tui-{name}-{}.log", std::process::id()));
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(data))
            .expect("a file written");
        let file = std::fs::File::open(&path).expect("the file opened");
        let _ = std::fs::remove_file(&path);
        file
    }

    #[test]
    fn a_file_read_in_spans_gives_what_a_whole_feed_gives() {
        let data = long_log(8000, 3000); // the restart early: the rest needs room
        assert!(data.len() > 2 * THREADED_FEED_BYTES);
        let whole_feed = whole(&data);
        let file = unlinked_file(&data, "span");
        let mut rng = Rng(0x5851_f42d_4c95_7f2d);
        let mut spans = Builder::new(None);
        let mut at = 0u64;
        let (mut big, mut roomy, mut grown) = (0, 0, 0);
        while at < data.len() as u64 {
            // spans big (read on threads) and small (here), cut anywhere
            let length = if rng.below(2) == 0 {
                1 + rng.below(THREADED_FEED_BYTES / 8)
            } else {
                big += 1;
                THREADED_FEED_BYTES + rng.below(THREADED_FEED_BYTES / 4)
            } as u64;
            let left = data.len() as u64 - at;
            let n = spans
                .feed_span(&file, at, length, None)
                .expect("a span reads");
            assert_eq!(n, length.min(left));
            let room = usize::try_from(left / RECORD_BYTES_HINT).unwrap();
            if length >= THREADED_FEED_BYTES as u64 && room >= 4096 {
                let capacity = spans.recs.cols.job.capacity();
                if spans.finished.is_empty() {
                    // a big span made room for the records of the rest of the file at once
                    assert!(capacity >= room, "room for the file's rest");
                    roomy += 1;
                } else {
                    // once a file: the run after the daemon restarted grows as it comes
                    assert!(capacity < room, "no room made again after the restart");
                    grown += 1;
                }
            }
            at += n;
        }
        assert!(big >= 2 && roomy >= 1 && grown >= 1);
        // past the end: nothing
        assert_eq!(spans.feed_span(&file, at, 1 << 20, None).unwrap(), 0);
        spans.finish();
        assert_eq!(runs_of(&spans), runs_of(&whole_feed));
    }

    #[test]
    fn a_span_told_to_stop_reads_no_further() {
        let data = long_log(3000, 1700);
        assert!(data.len() > THREADED_FEED_BYTES);
        let file = unlinked_file(&data, "stop");
        let stop = AtomicBool::new(false);
        let mut span = Span {
            file: &file,
            at: 0,
            left: data.len() as u64,
            stop: Some(&stop),
        };
        let mut buf = [0u8; 100];
        assert_eq!(span.read(&mut buf).unwrap(), 100);
        stop.store(true, Ordering::Relaxed);
        assert_eq!(span.read(&mut buf).unwrap(), 0);
        // a big span (read on threads) and a small one: nothing read, nothing taken
        let mut b = Builder::new(None);
        for length in [data.len() as u64, 100] {
            assert_eq!(b.feed_span(&file, 0, length, Some(&stop)).unwrap(), 0);
        }
        assert_eq!(b.reader.bytes_read, 0);
        stop.store(false, Ordering::Relaxed);
        let n = data.len() as u64;
        assert_eq!(b.feed_span(&file, 0, n, Some(&stop)).unwrap(), n);
    }

    #[test]
    fn a_source_read_on_the_second_thread_gives_what_a_whole_feed_gives() {
        let data = long_log(3000, 1700);
        let whole_feed = whole(&data);
        for no_threads in [false, true] {
            let mut from = Builder::new(None);
            from.no_threads = no_threads;
            let mut source = Stutter {
                data: &data,
                pos: 0,
                rng: Rng(0x9e37_79b9_7f4a_7c15),
                fail_at: None,
            };
            assert_eq!(from.feed_from(&mut source).unwrap(), data.len() as u64);
            from.finish();
            // a source read to its end is attributed on a third thread (up to the restart)
            assert_eq!(from.finished[0].apart, !no_threads);
            assert_eq!(runs_of(&from), runs_of(&whole_feed));
            assert_eq!(from.reader.lines_read, whole_feed.reader.lines_read);
        }
    }

    #[test]
    fn room_made_ahead_of_a_file_changes_nothing_but_the_room() {
        let data = long_log(3000, 1700);
        let as_ever = whole(&data);
        for hint in [0, data.len() as u64, u64::MAX] {
            let mut ahead = Builder::new(None);
            ahead.expect_bytes(hint);
            let room = ahead.recs.cols.job.capacity();
            let mirror = &ahead.attribution.as_ref().unwrap().mirror.cols;
            let expected = usize::try_from(hint / RECORD_BYTES_HINT)
                .unwrap_or(usize::MAX)
                .min(MAX_RECORDS_HINT);
            if expected >= 4096 {
                assert!(room >= expected && mirror.worker.capacity() >= expected);
                assert!(mirror.job.capacity() == 0); // the attribution keeps no job column
            } else {
                assert_eq!(room, 0);
            }
            let mut source = data.as_slice();
            ahead.feed_from(&mut source).unwrap();
            ahead.finish();
            assert_eq!(runs_of(&ahead), runs_of(&as_ever));
            // the room is kept (address space, never written), not copied away at the end;
            // without it the run's columns are made as small as they can be
            let first = &ahead.finished[0].recs.cols;
            if expected >= 4096 {
                assert!(first.job.capacity() >= expected);
            } else {
                assert_eq!(first.job.capacity(), first.job.len());
            }
        }
    }

    #[test]
    fn a_read_error_ends_the_feed_with_what_was_read_applied() {
        let data = long_log(2000, 1100);
        let at = data.len() / 2;
        let mut from = Builder::new(None);
        let mut source = Stutter {
            data: &data,
            pos: 0,
            rng: Rng(0x2545_f491_4f6c_dd1d),
            fail_at: Some(at),
        };
        let err = from.feed_from(&mut source).unwrap_err();
        assert_eq!(err.to_string(), "the disk went away");
        assert!(source.pos >= at);
        // every byte the source gave was applied, and those only: the caller gives the
        // rest again from `bytes_read` (a followed file's span), as a whole feed would
        assert_eq!(
            from.reader.bytes_read, source.pos as u64,
            "what was read before is kept"
        );
        let timeline: i64 = from.finished.iter().map(|r| r.counts.timeline).sum();
        assert!(from.counts.timeline + timeline > 0);
        from.feed(&data[source.pos..]);
        from.finish();
        assert_eq!(runs_of(&from), runs_of(&whole(&data)));
    }

    #[test]
    fn a_run_maps_only_its_own_jobs() {
        // a daemon in a crash loop: many short runs, each with a job of its own and one that
        // every run has (its number in the file is an early one)
        let mut log = Vec::new();
        for r in 0..500 {
            for (w, job) in [format!("porep-1-{r}"), "porep-1-0".to_string()]
                .iter()
                .enumerate()
            {
                log.extend_from_slice(
                    format!(
                        "TIMELINE,{},GPU_START,{job},worker={w},partition=0\n",
                        1000 + w
                    )
                    .as_bytes(),
                );
            }
            log.extend_from_slice(b"TIMELINE,100000,GPU_END,porep-1-0,worker=1,partition=0\n");
        }
        let b = whole(&log);
        assert_eq!(b.finished.len(), 499);
        assert!(
            b.finished.iter().all(|run| run.job_of.is_empty()),
            "ended runs keep none"
        );
        assert_eq!(b.job_of.len(), 2);
        assert_eq!(b.recs.cols.jobs, vec!["porep-1-499", "porep-1-0"]);
        assert_eq!(b.finished[7].recs.cols.jobs, vec!["porep-1-7", "porep-1-0"]);
    }

    #[test]
    fn timing_lines_inside_a_cut_line_are_not_bounded_by_its_stamp() {
        // the cut line's stamp (2000) comes after a TIMELINE line inside it (1900) that
        // attributes the lines before; the batch line inside the cut was printed while the
        // cut line was being written, so the cut line's stamp must not bound it
        let log = b"TIMELINE,1000,GPU_START,porep-1-1,worker=0,partition=0
CUZK_TIMING: pre_lock_cpu_ms=5 mutex_wait_ms=0
TIMELINE,1600,GPU_QUEUE,porep-1-2,partition=0
CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=612
CUZK_TIMING: gpu_tid=0 barrier_wait_ms=0
TIMELINE,1605,GPU_QUEUE,porep-1-3,partition=0
TIMELINE,2000,GPU_QUEUE,porep-1-4,partTIMELINE,1900,GPU_QUEUE,porep-1-5,partition=0
CUZK_TIMING: gpu_tid=0 batch_add_ms=600
ition=0
CUZK_TIMING: gpu_tid=0 tail_msm_ms=80 gpu_total_ms=1292
CUZK_TIMING: mutex_held_ms=1292 total_start_fn_ms=1297
TIMELINE,2500,GPU_END,porep-1-1,worker=0,partition=0,gpu_ms=1500
";
        let b = whole(log);
        assert_eq!(b.counts.spliced, 1);
        assert_eq!(b.attributor().unattributed, 0);
        let c = &b.recs.cols;
        let i = (0..c.len())
            .find(|&i| c.known(col::GPU_START, i))
            .expect("the interval");
        assert_eq!(c.f[col::BATCH_ADD][i], 600.0);
        assert_eq!(c.f[col::MUTEX_HELD][i], 1292.0);
    }

    #[test]
    fn a_gpu_ordinal_past_the_thousands_maps_its_worker() {
        let b = whole(
            b"2026-03-16T09:12:37.123456Z  INFO cuzk: pipeline GPU worker started worker_id=0 gpu=5000
2026-03-16T09:12:37.123456Z  INFO cuzk: pipeline GPU worker started worker_id=1 gpu=65536
2026-03-16T09:12:37.123456Z  INFO cuzk: pipeline GPU worker started worker_id=2 gpu=65537
2026-03-16T09:12:37.123456Z  INFO cuzk: pipeline GPU worker started worker_id=3 gpu=4294967295
",
        );
        let map: Vec<(i64, i64)> = b.recs.worker_gpu.iter().map(|(&w, &g)| (w, g)).collect();
        assert_eq!(map, [(0, 5000), (1, 65536)]);
        assert_eq!(b.counts.malformed, 2, "past 2^16: malformed");
    }

    #[test]
    fn the_first_stdout_line_is_read_without_its_colours() {
        // the year is not known yet: the line is read as the colours leave it, even when a
        // colour code splits the words that say what it is
        let log = b"\x1b[2m2026-03-16T09:12:37.123456Z\x1b[0m \x1b[32m INFO\x1b[0m cuzk_core::engine: pipeline GPU worker\x1b[1m started\x1b[0m worker_id=0 gpu=3 sub_id=0
TIMELINE,100,GPU_START,porep-1-1,worker=0,partition=0
TIMELINE,200,GPU_END,porep-1-1,worker=0,partition=0
";
        let b = whole(log);
        assert_eq!(b.recs.worker_gpu.get(&0), Some(&3));
    }

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
    fn an_interval_ends_once() {
        let mut b = Builder::new(None);
        b.feed(
            b"TIMELINE,203,GPU_START,j1,worker=0,partition=0
TIMELINE,500,GPU_END,j1,worker=0,partition=0,gpu_ms=297
TIMELINE,600,GPU_END,j1,worker=0,partition=0,gpu_ms=397
TIMELINE,500,GPU_END,j1,worker=0,partition=0,gpu_ms=297
",
        );
        b.finish();
        assert_eq!((b.counts.timeline, b.counts.malformed), (2, 2));
        assert_eq!(b.recs.cols.f[col::GPU_END], vec![500.0]);
        // a retry (a new GPU_START) ends again, as an attempt of its own
        b.feed(b"TIMELINE,700,GPU_START,j1,worker=0,partition=0\nTIMELINE,900,GPU_END,j1,worker=0,partition=0\n");
        b.finish();
        assert_eq!(b.recs.cols.f[col::GPU_END], vec![500.0, 900.0]);
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
2026-03-16T09:12:37.123456Z  INFO cuzk: pipeline GPU worker started worker_id=0 gpu=5000000000 sub_id=0
");
        b.finish();
        assert_eq!(b.counts.malformed, 7);
        assert_eq!(b.counts.timeline, 1);
        assert!(b.recs.worker_gpu.is_empty());
        assert!(b.recs.cols.f[col::GPU_END].iter().all(|x| x.is_nan()));
    }

    /// `long_log` with a CPU path line of each kind after each batch_add line, and what an
    /// independent reading of its lines gives: (line, kind, value) of the figures, and every
    /// line start as (line number, offset).
    type CpuLog = (Vec<u8>, Vec<(u64, u8, i64)>, Vec<(u64, u64)>);

    fn with_cpu_lines() -> CpuLog {
        let mut out = Vec::new();
        let mut figures = Vec::new();
        let mut starts = vec![(1, 0)];
        let mut n = 0i64;
        let base = long_log(3000, 1700);
        let (whole, partial) = base.split_at(base.iter().rposition(|&b| b == b'\n').unwrap() + 1);
        for line in whole.split_inclusive(|&b| b == b'\n') {
            out.extend_from_slice(line);
            starts.push((starts.len() as u64 + 1, out.len() as u64));
            if line.starts_with(b"CUZK_TIMING: gpu_tid=0 batch_add_ms=") {
                for (kind, text) in [
                    (0u8, "prep_msm_ms={n}\n"),
                    (1, "b_g2_msm_ms={n} num_circuits=1\n"),
                ] {
                    n += 1;
                    figures.push((starts.len() as u64, kind, n));
                    out.extend_from_slice(b"CUZK_TIMING: ");
                    out.extend_from_slice(text.replace("{n}", &n.to_string()).as_bytes());
                    starts.push((starts.len() as u64 + 1, out.len() as u64));
                }
            }
        }
        out.extend_from_slice(partial);
        (out, figures, starts)
    }

    #[test]
    fn the_cpu_figures_and_line_starts_are_those_of_the_lines_however_fed() {
        let (data, figures, starts) = with_cpu_lines();
        // the line starts an index keeps: the first, then the first a step past the last kept
        let mut kept: Vec<(u64, u64)> = Vec::new();
        for &(line, offset) in &starts {
            if kept
                .last()
                .is_none_or(|&(_, o)| offset >= o + crate::lines::INDEX_STEP_BYTES)
            {
                kept.push((line, offset));
            }
        }
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut pieces = Builder::new(None);
        let mut pos = 0;
        while pos < data.len() {
            let end = (pos + 1 + rng.below(5000)).min(data.len());
            pieces.feed(&data[pos..end]);
            pos = end;
        }
        pieces.finish();
        let mut source = &data[..];
        let mut read = Builder::new(None);
        read.feed_from(&mut source).expect("a slice reads");
        read.finish();
        for b in [whole(&data), pieces, read] {
            assert_eq!(b.finished.len(), 1, "the restart is seen");
            let c = &b.cpu;
            let got: Vec<(u64, u8, i64)> = (0..c.len())
                .map(|k| (c.line[k], c.kind[k], c.value[k]))
                .collect();
            assert_eq!(got, figures);
            // each figure is of the run its line is in
            let restart = b.run_first_line;
            assert!(c
                .run
                .iter()
                .zip(&c.line)
                .all(|(&r, &l)| r == u32::from(l >= restart)));
            assert!(c.run.contains(&0) && c.run.contains(&1));
            let ix = &b.reader.index;
            let got: Vec<(u64, u64)> = ix
                .lines
                .iter()
                .copied()
                .zip(ix.offsets.iter().copied())
                .collect();
            assert_eq!(got, kept);
            assert_eq!(
                ix.signature(),
                &data[data.len() - crate::lines::SIGNATURE_BYTES..]
            );
        }
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
        assert_eq!(b.attributor().unattributed, 0);
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
    fn an_event_of_a_job_of_partitions_that_names_none_is_malformed() {
        // two SYNTH_START lines cut before their partition: each would have been a whole-proof
        // record beside the partitions, the second one a new attempt of the job
        let b = whole(
            b"TIMELINE,10,SYNTH_START,porep-1-5,partition=0
TIMELINE,11,SYNTH_START,porep-1-5,partition=1
TIMELINE,12,SYNTH_START,porep-1-5
TIMELINE,13,SYNTH_START,porep-1-5
TIMELINE,20,SYNTH_END,porep-1-5,synth_ms=8
TIMELINE,30,SYNTH_START,winpost-7,kind=winning-post
TIMELINE,40,SYNTH_END,winpost-7,synth_ms=10
",
        );
        let c = &b.recs.cols;
        assert_eq!(
            c.jobs,
            vec!["porep-1-5".to_string(), "winpost-7".to_string()]
        );
        assert_eq!(c.partition, vec![0, 1, -1]);
        let ends: Vec<Option<f64>> = c.f[col::SYNTH_END]
            .iter()
            .map(|x| (!x.is_nan()).then_some(*x))
            .collect();
        assert_eq!(ends, vec![None, None, Some(40.0)]);
        assert_eq!((b.counts.timeline, b.counts.malformed), (4, 3));
        assert_eq!(b.max_stamp, 40);
    }

    #[test]
    fn a_job_of_partitions_proved_whole_again_is_an_attempt_of_its_own() {
        // a retry the scheduler batched is proved whole under the same job id; a line cut
        // before its partition at the log's end still moves the log's time
        let b = whole(
            b"TIMELINE,10,SYNTH_START,porep-1-5,partition=0
TIMELINE,20,SYNTH_END,porep-1-5,partition=0,synth_ms=10
TIMELINE,30,GPU_START,porep-1-5,worker=0,partition=0
TIMELINE,100,SYNTH_START,porep-1-5,kind=porep-c2
TIMELINE,110,SYNTH_END,porep-1-5,synth_ms=10
TIMELINE,111,GPU_QUEUE,porep-1-5,monolithic
TIMELINE,120,GPU_START,porep-1-5,worker=1
TIMELINE,130,GPU_END,porep-1-5,worker=1,gpu_ms=10
TIMELINE,140,SYNTH_START,porep-1-5,
",
        );
        let c = &b.recs.cols;
        assert_eq!(
            c.jobs,
            vec!["porep-1-5".to_string(), "porep-1-5 (attempt 2)".to_string()]
        );
        assert_eq!(
            (c.job.clone(), c.partition.clone()),
            (vec![0, 1], vec![0, -1])
        );
        let whole: Vec<f64> = [
            col::SYNTH_START,
            col::SYNTH_END,
            col::QUEUED,
            col::GPU_START,
            col::GPU_END,
        ]
        .iter()
        .map(|&f| c.f[f][1])
        .collect();
        assert_eq!(whole, vec![100.0, 110.0, 111.0, 120.0, 130.0]);
        assert_eq!((b.counts.malformed, b.max_stamp), (1, 140));
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
        assert_eq!(b.reader.lines_read, 3);
    }

    #[test]
    fn a_huge_timeline_line_is_malformed_not_other() {
        // begun in one feed and held across many, or whole in one
        for whole in [false, true] {
            let mut b = Builder::new(None);
            let mut line = b"TIMELINE,2,GPU_START,j,worker=0,".to_vec();
            line.resize(MAX_LINE_BYTES + 10, b'x');
            b.feed(b"TIMELINE,1,SYNTH_START,j,partition=0\n");
            if whole {
                line.push(b'\n');
                b.feed(&line);
            } else {
                for piece in line.chunks(4096) {
                    b.feed(piece);
                }
                b.feed(b"\n");
            }
            b.finish();
            assert_eq!(
                (b.counts.timeline, b.counts.malformed, b.counts.other),
                (1, 1, 0)
            );
            assert_eq!(b.reader.lines_read, 2);
        }
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

    #[test]
    fn a_gpu_event_whose_detail_was_cut_is_not_an_event() {
        let mut b = Builder::new(None);
        b.feed(
            b"TIMELINE,10,GPU_START,porep-1-5,worker=0,partition=0\n\
TIMELINE,20,GPU_END,porep-1-5,worker=0,partition=0,gpu_ms=10\n\
TIMELINE,900,GPU_END,porep-1-5,\n",
        );
        b.finish();
        let c = &b.recs.cols;
        assert_eq!(c.f[col::GPU_END], vec![20.0]);
        assert_eq!(b.counts.malformed, 1);
    }
}
