//! The incremental scanner of one log as Python sees it, and the named results it returns.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use numpy::{PyArray1, PyReadonlyArray1, ToPyArray};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::builder::Builder;
use crate::columns::{FLOAT_FIELDS, I32_FIELDS, I64_FIELDS};

use super::{column_dicts, guarded, numpy_api, row_dicts, CoreError};

/// How many lines of each sort a run holds.
#[pyclass(frozen, get_all, module = "parsers._core")]
pub(super) struct Counts {
    timeline: i64,
    cuzk_timing: i64,
    stdout: i64,
    spliced: i64,
    malformed: i64,
    other: i64,
}

/// What a run's reading found besides its records.
#[pyclass(frozen, get_all, module = "parsers._core")]
pub(super) struct RunFacts {
    /// The latest TIMELINE stamp (-1: none).
    max_stamp: i64,
    /// A stdout line of the cuzk engine was read.
    engine_seen: bool,
    /// The engine prints lock lines: holders are known exactly.
    lock_lines_seen: bool,
    /// C++ timing lines that matched no GPU interval.
    unattributed: u64,
    /// Kernel time in those lines.
    unattributed_kernel_ms: f64,
    /// The kernel lines read: NTT, batch additions, tail MSMs.
    kernel_lines: (i64, i64, i64),
}

/// What is left to read of a regular file from where it stands (None: not a file).
pub(super) fn bytes_left(file: &mut std::fs::File) -> Option<u64> {
    use std::io::Seek;
    let meta = file.metadata().ok().filter(std::fs::Metadata::is_file)?;
    Some(meta.len().saturating_sub(file.stream_position().ok()?))
}

/// The open file `fd` as a File that does not close it (the descriptor stays the
/// caller's, who keeps it open during the call and closes it after).
fn borrowed_file(fd: i32) -> PyResult<std::mem::ManuallyDrop<std::fs::File>> {
    use std::os::fd::FromRawFd;
    if fd < 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "not a file descriptor",
        ));
    }
    // SAFETY: the caller keeps `fd` open during the call; the File is never dropped
    // (ManuallyDrop), so it does not close it.
    Ok(std::mem::ManuallyDrop::new(unsafe {
        std::fs::File::from_raw_fd(fd)
    }))
}

/// An OSError as Python raises it: errno and strerror set (its subclass by errno).
pub(super) fn os_error(e: std::io::Error) -> PyErr {
    match e.raw_os_error() {
        Some(code) => {
            let text = e.to_string();
            let suffix = format!(" (os error {code})");
            let strerror = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
            pyo3::exceptions::PyOSError::new_err((code, strerror))
        }
        None => pyo3::exceptions::PyOSError::new_err(e.to_string()),
    }
}

/// Columns of a live view with the records its open decisions changed.
pub(super) type LiveRows<'py> = (Bound<'py, PyDict>, Bound<'py, PyDict>, Vec<i64>);

/// The CPU path figures: line, kind, value, run.
pub(super) type CpuLineArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i32>>,
);

/// The line index: line numbers, offsets, bytes read, the last bytes read.
pub(super) type LineIndexParts<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    u64,
    Bound<'py, PyBytes>,
);

/// The incremental scanner of one log.
/// A flag that ends a span being read (`Scanner.feed_span`) from another thread: once set,
/// the read stops at its next piece, and every read given it reads nothing.
#[pyclass(frozen, module = "parsers._core")]
pub(super) struct StopFlag {
    flag: Arc<AtomicBool>,
}

#[pymethods]
impl StopFlag {
    #[new]
    fn new() -> Self {
        StopFlag {
            flag: Arc::new(AtomicBool::new(false)),
        }
    }

    fn set(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }
}

#[pyclass(module = "parsers._core")]
pub(super) struct Scanner {
    inner: Builder,
    runs_seen: usize,
    jobs_sent: usize,
    kinds_sent: usize,
    broken: bool,
    handed_over: bool, // the current run's columns were moved to Python (`hand_over`)
}

impl Scanner {
    /// Run `k` (None or the last: the run being read).
    fn at(&self, k: Option<usize>) -> &Builder {
        match k {
            Some(k) if k < self.inner.finished.len() => &self.inner.finished[k],
            _ => &self.inner,
        }
    }

    fn check(&self) -> PyResult<()> {
        if self.handed_over {
            return Err(CoreError::new_err(
                "cuzk-tui core: the records were handed over; this reader is finished",
            ));
        }
        if self.broken {
            return Err(CoreError::new_err(
                "cuzk-tui core: this reader failed earlier",
            ));
        }
        Ok(())
    }

    fn run<T>(&mut self, f: impl FnOnce(&mut Builder) -> T) -> PyResult<T> {
        self.check()?;
        let inner = &mut self.inner;
        let out = guarded(|| f(inner));
        self.broken = out.is_err();
        out
    }
}

#[pymethods]
impl Scanner {
    #[new]
    #[pyo3(signature = (workers_per_gpu=None))]
    fn new(workers_per_gpu: Option<i64>) -> Self {
        Scanner {
            inner: Builder::new(workers_per_gpu),
            runs_seen: 0,
            jobs_sent: 0,
            kinds_sent: 0,
            broken: false,
            handed_over: false,
        }
    }

    /// Take the next bytes of the log (any size, cut anywhere). The GIL is released
    /// while scanning, so the viewer keeps answering keys during a big load.
    fn feed(&mut self, py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<()> {
        let bytes = data.as_bytes();
        self.check()?;
        let inner = &mut self.inner;
        let out = py.detach(|| guarded(|| inner.feed(bytes)));
        self.broken = out.is_err();
        out
    }

    /// Read an open file from where it stands to its end (a regular file: its end when
    /// the call began), in pieces of 4 MB, without the GIL: the interpreter goes on
    /// meanwhile. The descriptor stays the caller's. Returns the bytes read; a read error
    /// is raised as OSError.
    fn feed_fd(&mut self, py: Python<'_>, fd: i32) -> PyResult<u64> {
        self.check()?;
        let mut file = borrowed_file(fd)?;
        let left = bytes_left(&mut file);
        if let Some(left) = left {
            self.inner.expect_bytes(left);
        }
        let inner = &mut self.inner;
        // read on a second thread, system calls and all, while this one applies and a third
        // attributes; a file no further than it reached when the read began (a log written
        // faster than it is read would never end)
        let out = py.detach(|| {
            guarded(|| match left {
                Some(left) => inner.feed_from(&mut (&*file).take(left)),
                None => inner.feed_from(&mut *file),
            })
        });
        self.broken = out.is_err();
        out?.map_err(os_error)
    }

    /// Read the bytes `offset..offset + length` of an open file (fewer where it ends first,
    /// or once `stop` is set, from any thread) without moving its position; a big span as
    /// `feed_fd` reads it, without the GIL. The descriptor stays the caller's. Returns the
    /// bytes read; a read error is raised as OSError, the bytes before it read.
    #[pyo3(signature = (fd, offset, length, stop=None))]
    fn feed_span(
        &mut self,
        py: Python<'_>,
        fd: i32,
        offset: u64,
        length: u64,
        stop: Option<PyRef<'_, StopFlag>>,
    ) -> PyResult<u64> {
        self.check()?;
        let file = borrowed_file(fd)?;
        let inner = &mut self.inner;
        let flag = stop.map(|s| Arc::clone(&s.flag));
        let stop = flag.as_deref();
        let out = py.detach(|| guarded(|| inner.feed_span(&file, offset, length, stop)));
        self.broken = out.is_err();
        out?.map_err(os_error)
    }

    /// End of input: attribute everything still waiting.
    fn finish(&mut self) -> PyResult<()> {
        self.run(Builder::finish)
    }

    /// Attribute the timing lines kept back (the input went quiet); whether there were any.
    fn flush_pending(&mut self) -> PyResult<bool> {
        self.run(Builder::flush_pending)
    }

    /// How many runs the log holds (the daemon restarted between them).
    fn run_count(&self) -> usize {
        self.inner.finished.len() + 1
    }

    /// The physical line run `run` began at.
    #[pyo3(signature = (run=None))]
    fn run_first_line(&self, run: Option<usize>) -> u64 {
        self.at(run).run_first_line
    }

    /// How many lines of each sort run `run` holds (None: the run being read).
    #[pyo3(signature = (run=None))]
    fn counts(&self, run: Option<usize>) -> Counts {
        let c = &self.at(run).counts;
        Counts {
            timeline: c.timeline,
            cuzk_timing: c.cuzk_timing,
            stdout: c.stdout,
            spliced: c.spliced,
            malformed: c.malformed,
            other: c.other,
        }
    }

    /// Every column of a run as a fresh numpy array, by name: (float64, int64 columns).
    /// The run being read shows the timing lines whose decision is still open as the
    /// attributor would give them now (they stay open: a later line may move them).
    #[pyo3(signature = (run=None))]
    fn columns<'py>(
        &mut self,
        py: Python<'py>,
        run: Option<usize>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        numpy_api(py)?;
        match run {
            Some(k) if k < self.inner.finished.len() => {
                self.check()?;
                column_dicts(py, &self.inner.finished[k].recs.cols)
            }
            _ => self.run(|b| b.with_open_decisions(|c, _| column_dicts(py, c)))?,
        }
    }

    /// Records `rows` of the run being read (all of them if None) as numpy columns, as
    /// `columns` shows them, and the records that open decisions changed in that view
    /// (what a later line may still change): (float64, int64 columns, changed records).
    #[pyo3(signature = (rows=None))]
    fn live_rows<'py>(
        &mut self,
        py: Python<'py>,
        rows: Option<Bound<'py, PyAny>>,
    ) -> PyResult<LiveRows<'py>> {
        numpy_api(py)?; // before the array is read: reading it needs the API
        let rows: Option<Vec<i64>> = match rows {
            Some(r) => Some(
                r.extract::<PyReadonlyArray1<'py, i64>>()?
                    .as_array()
                    .to_vec(),
            ),
            None => None,
        };
        self.run(|b| {
            b.with_open_decisions(|c, open| {
                let open: Vec<i64> = open.iter().map(|&i| i as i64).collect();
                let (f, i) = match &rows {
                    Some(rows) => row_dicts(py, c, rows)?,
                    None => column_dicts(py, c)?,
                };
                Ok((f, i, open))
            })
        })?
    }

    /// What a live snapshot of the run being read needs, in one call: the records
    /// written since the last call (`take_touched`), how many there are, records `rows`
    /// and those from `first_new` on as `live_rows` gives them (all if `rows` is None), the
    /// new job and kind names (`new_names`) and the run's facts (`counts`, `run_facts`,
    /// `worker_gpu`, `wall_anchor`, `partial_bytes`, every GPU's `kernel_doubt`).
    #[pyo3(signature = (rows=None, first_new=0))]
    fn live_snapshot<'py>(
        &mut self,
        py: Python<'py>,
        rows: Option<PyReadonlyArray1<'py, i64>>,
        first_new: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        numpy_api(py)?;
        let out = PyDict::new(py);
        out.set_item("runs", self.run_count())?;
        out.set_item("touched", self.take_touched()?)?;
        let n = self.record_count();
        out.set_item("records", n)?;
        let rows: Option<Vec<i64>> = rows.map(|r| {
            let mut v = r.as_array().to_vec();
            v.extend((first_new..n).filter_map(|i| i64::try_from(i).ok()));
            v
        });
        let (floats, ints, open) = self.run(|b| {
            b.with_open_decisions(|c, open| {
                let open: Vec<i64> = open.iter().map(|&i| i as i64).collect();
                let (f, i) = match &rows {
                    Some(rows) => row_dicts(py, c, rows)?,
                    None => column_dicts(py, c)?,
                };
                Ok::<_, PyErr>((f, i, open))
            })
        })??;
        out.set_item("floats", floats)?;
        out.set_item("ints", ints)?;
        out.set_item("open", open)?;
        out.set_item("names", self.new_names())?;
        out.set_item("counts", self.counts(None))?;
        out.set_item("facts", self.run_facts(None))?;
        out.set_item("worker_gpu", self.worker_gpu(None))?;
        out.set_item("wall_anchor", self.wall_anchor(None))?;
        out.set_item("partial_bytes", self.partial_bytes())?;
        let a = self.inner.attributor();
        let mut doubt = a.kernel_doubt.clone();
        for (g, [less, more]) in a.open_doubt() {
            let d = doubt.entry(g).or_default();
            d[0] += less;
            d[1] += more;
        }
        let doubt: Vec<(i64, f64, f64)> = doubt.iter().map(|(g, d)| (*g, d[0], d[1])).collect();
        out.set_item("kernel_doubt", doubt)?;
        Ok(out)
    }

    /// The records of the run being read that were written since the last call (not
    /// counting new ones), or None when there were too many to list (treat all as
    /// written).
    fn take_touched(&mut self) -> PyResult<Option<Vec<i64>>> {
        self.run(|b| {
            b.take_touched()
                .map(|v| v.into_iter().map(|i| i as i64).collect())
        })
    }

    /// How many records the run being read has.
    fn record_count(&self) -> usize {
        self.inner.recs.cols.len()
    }

    /// End of input, for a caller that reads the log once: attribute what waits, then
    /// move the current run's columns into numpy arrays without copying them (the core
    /// keeps none, so the analysis does not run beside a second copy). The reader cannot
    /// be fed or asked for columns again; its counts and names stay readable.
    fn hand_over<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        numpy_api(py)?;
        self.run(Builder::finish)?;
        let c = &mut self.inner.recs.cols;
        let floats = PyDict::new(py);
        for (name, v) in FLOAT_FIELDS.iter().zip(c.f.iter_mut()) {
            floats.set_item(*name, PyArray1::from_vec(py, std::mem::take(v)))?;
        }
        let ints = PyDict::new(py);
        for (name, v) in I32_FIELDS.iter().zip(c.i32s_mut()) {
            ints.set_item(*name, PyArray1::from_vec(py, std::mem::take(v)))?;
        }
        for (name, v) in I64_FIELDS.iter().zip(c.i64s_mut()) {
            ints.set_item(*name, PyArray1::from_vec(py, std::mem::take(v)))?;
        }
        self.handed_over = true;
        Ok((floats, ints))
    }

    /// Every job id and kind name of a finished run.
    fn run_names(&self, run: usize) -> (Vec<String>, Vec<String>) {
        let c = &self.at(Some(run)).recs.cols;
        (c.jobs.clone(), c.kinds.clone())
    }

    /// The job ids and kind names of the current run added since the last call.
    fn new_names(&mut self) -> (Vec<String>, Vec<String>) {
        if self.runs_seen != self.inner.finished.len() {
            self.runs_seen = self.inner.finished.len();
            self.jobs_sent = 0;
            self.kinds_sent = 0;
        }
        let c = &self.inner.recs.cols;
        let jobs = c.jobs[self.jobs_sent..].to_vec();
        let kinds = c.kinds[self.kinds_sent..].to_vec();
        self.jobs_sent = c.jobs.len();
        self.kinds_sent = c.kinds.len();
        (jobs, kinds)
    }

    /// The worker → GPU map the log gave (stdout lines or spans).
    #[pyo3(signature = (run=None))]
    fn worker_gpu(&self, run: Option<usize>) -> Vec<(i64, i64)> {
        self.at(run)
            .recs
            .worker_gpu
            .iter()
            .map(|(w, g)| (*w, *g))
            .collect()
    }

    /// The wall clock of offset 0: (microseconds since 1970, zone known), if any.
    #[pyo3(signature = (run=None))]
    fn wall_anchor(&self, run: Option<usize>) -> Option<(i64, bool)> {
        self.at(run).wall_anchor.map(|w| (w.us, w.aware))
    }

    /// (kernel ms another GPU could own, kernel ms it could own) for a GPU: of the
    /// decisions taken, and (a live snapshot) of those still open.
    #[pyo3(signature = (gpu, run=None))]
    fn kernel_doubt(&self, gpu: i64, run: Option<usize>) -> (f64, f64) {
        let a = self.at(run).attributor();
        let [less, more] = a.kernel_doubt.get(&gpu).copied().unwrap_or_default();
        let [open_less, open_more] = a.open_doubt().get(&gpu).copied().unwrap_or_default();
        (less + open_less, more + open_more)
    }

    /// What run `run`'s reading found besides its records (None: the run being read).
    #[pyo3(signature = (run=None))]
    fn run_facts(&self, run: Option<usize>) -> RunFacts {
        let b = self.at(run);
        let a = b.attributor();
        RunFacts {
            max_stamp: b.max_stamp,
            engine_seen: b.engine_seen,
            lock_lines_seen: a.lock_lines_seen,
            unattributed: a.unattributed,
            unattributed_kernel_ms: a.unattributed_kernel_ms,
            kernel_lines: (b.kernel_lines[0], b.kernel_lines[1], b.kernel_lines[2]),
        }
    }

    /// The CPU path figures of the whole file from the `since`-th on, in the order read:
    /// (physical line, kind (0 prep_msm_ms, 1 b_g2_msm_ms), value in ms, run). Those before
    /// the `since`-th are let go: the caller holds them (asking for them again is an error).
    #[pyo3(signature = (since=0))]
    fn cpu_lines<'py>(&mut self, py: Python<'py>, since: usize) -> PyResult<CpuLineArrays<'py>> {
        numpy_api(py)?;
        let c = &mut self.inner.cpu;
        if since < c.let_go {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "the CPU path figures before the {}th were let go",
                c.let_go
            )));
        }
        c.let_go_before(since);
        let from = (since - c.let_go).min(c.len());
        let line: Vec<i64> = c.line[from..].iter().map(|&n| n as i64).collect();
        let kind: Vec<i8> = c.kind[from..].iter().map(|&k| k as i8).collect();
        let run: Vec<i32> = c.run[from..].iter().map(|&r| r as i32).collect();
        Ok((
            PyArray1::from_vec(py, line),
            PyArray1::from_vec(py, kind),
            c.value[from..].to_pyarray(py),
            PyArray1::from_vec(py, run),
        ))
    }

    /// Let go the CPU path figures before the `upto`-th: the caller took them into its own
    /// (asking for them again is an error). Without it, those of the last `cpu_lines` are
    /// held until the next: a log read once and shown (nothing more comes) held them twice.
    fn let_go_cpu_lines(&mut self, upto: usize) {
        self.inner.cpu.let_go_before(upto);
    }

    /// The sparse index of the file's line starts: (line numbers, their byte offsets,
    /// bytes read, the last bytes read).
    fn line_index<'py>(&self, py: Python<'py>) -> PyResult<LineIndexParts<'py>> {
        numpy_api(py)?;
        let r = &self.inner.reader;
        let lines: Vec<i64> = r.index.lines.iter().map(|&n| n as i64).collect();
        let offsets: Vec<i64> = r.index.offsets.iter().map(|&n| n as i64).collect();
        Ok((
            PyArray1::from_vec(py, lines),
            PyArray1::from_vec(py, offsets),
            r.bytes_read,
            PyBytes::new(py, r.index.signature()),
        ))
    }

    #[getter]
    fn bytes_read(&self) -> u64 {
        self.inner.reader.bytes_read
    }
    #[getter]
    fn lines_read(&self) -> u64 {
        self.inner.reader.lines_read
    }
    #[getter]
    fn max_stamp(&self) -> i64 {
        self.inner.max_stamp
    }
    #[getter]
    fn partial_bytes(&self) -> usize {
        self.inner.partial_bytes()
    }
    #[getter]
    fn engine_seen(&self) -> bool {
        self.inner.engine_seen
    }
    #[getter]
    fn lock_lines_seen(&self) -> bool {
        self.inner.attributor().lock_lines_seen
    }
    #[getter]
    fn unattributed(&self) -> u64 {
        self.inner.attributor().unattributed
    }
    #[getter]
    fn unattributed_kernel_ms(&self) -> f64 {
        self.inner.attributor().unattributed_kernel_ms
    }
}
