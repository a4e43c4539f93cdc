//! cuzk-tui's compiled core: the byte-level work on a cuzk daemon log.
//!
//! Bytes go in (any chunking), per-partition columns come out as numpy arrays. The crate
//! owns physical lines, capture prefixes, splice rejoining, the parsing of TIMELINE,
//! CUZK_TIMING, CUZK_NTT_H and stdout lines, and the attribution of timing lines to GPU
//! intervals. The model, the analysis, the report and the viewer stay in Python.

pub mod attribution;
pub mod builder;
pub mod columns;
pub mod json;
pub mod lines;
pub mod mirror;
pub mod packing;
pub mod reader;
pub mod rowtext;
pub mod segments;
pub mod sums;
pub mod text;
pub mod timing;
pub mod trackevent;

#[cfg(feature = "python")]
mod python {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicBool, Ordering};

    use numpy::{PyArray1, PyReadonlyArray1, ToPyArray};
    use pyo3::exceptions::PyRuntimeError;
    use pyo3::prelude::*;
    use pyo3::types::{PyBytes, PyDict, PyTuple};

    use crate::builder::Builder;
    use crate::columns::{Columns, FLOAT_COUNT, FLOAT_FIELDS, I32_FIELDS, I64_FIELDS};

    pyo3::create_exception!(
        _core,
        CoreError,
        PyRuntimeError,
        "The core failed (a bug caught at its boundary); the reader that raised it is unusable."
    );

    /// A panic is a bug, never the user's problem: it reaches Python as one CoreError (the
    /// builder is then unusable), not as an abort.
    fn guarded<T>(f: impl FnOnce() -> T) -> PyResult<T> {
        catch_unwind(AssertUnwindSafe(f))
            .map_err(|_| CoreError::new_err("cuzk-tui core: internal error while reading the log"))
    }

    /// How many lines of each sort a run holds.
    #[pyclass(frozen, get_all, module = "parsers._core")]
    struct Counts {
        timeline: i64,
        cuzk_timing: i64,
        stdout: i64,
        spliced: i64,
        malformed: i64,
        other: i64,
    }

    /// What a run's reading found besides its records.
    #[pyclass(frozen, get_all, module = "parsers._core")]
    struct RunFacts {
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
    }

    /// Load numpy's C API where a failure can still be returned. rust-numpy loads it on first
    /// use and panics if that fails; loading it runs Python code, where a signal's handler may
    /// raise (SIGTERM while the viewer starts, Ctrl-C), and that exception must reach the
    /// caller as itself, not as a panic. Once loaded, no Python code runs to reach it.
    #[pyfunction]
    fn numpy_api(py: Python<'_>) -> PyResult<()> {
        static READY: AtomicBool = AtomicBool::new(false);
        if !READY.load(Ordering::Acquire) {
            numpy::get_array_module(py)?; // the version check and the import, fallible
            PyArray1::<u8>::zeros(py, 0, false); // the API table itself, now cached
            READY.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Numpy copies of every column, by name: (float64, int64 columns).
    fn column_dicts<'py>(
        py: Python<'py>,
        c: &Columns,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let floats = PyDict::new(py);
        for (name, v) in FLOAT_FIELDS.iter().zip(c.f.iter()) {
            let arr: Bound<'py, PyArray1<f64>> = v.to_pyarray(py);
            floats.set_item(*name, arr)?;
        }
        let ints = PyDict::new(py);
        for (name, v) in I32_FIELDS.iter().zip(c.i32s()) {
            let arr: Bound<'py, PyArray1<i32>> = v.to_pyarray(py);
            ints.set_item(*name, arr)?;
        }
        for (name, v) in I64_FIELDS.iter().zip(c.i64s()) {
            let arr: Bound<'py, PyArray1<i64>> = v.to_pyarray(py);
            ints.set_item(*name, arr)?;
        }
        Ok((floats, ints))
    }

    /// Numpy copies of records `rows` of every column, by name (out-of-range rows skipped).
    fn row_dicts<'py>(
        py: Python<'py>,
        c: &Columns,
        rows: &[i64],
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let n = c.len();
        let keep: Vec<usize> = rows
            .iter()
            .filter_map(|&r| usize::try_from(r).ok().filter(|&r| r < n))
            .collect();
        let floats = PyDict::new(py);
        for (name, v) in FLOAT_FIELDS.iter().zip(c.f.iter()) {
            let picked: Vec<f64> = keep.iter().map(|&r| v[r]).collect();
            floats.set_item(*name, PyArray1::from_vec(py, picked))?;
        }
        let ints = PyDict::new(py);
        for (name, v) in I32_FIELDS.iter().zip(c.i32s()) {
            let picked: Vec<i32> = keep.iter().map(|&r| v[r]).collect();
            ints.set_item(*name, PyArray1::from_vec(py, picked))?;
        }
        for (name, v) in I64_FIELDS.iter().zip(c.i64s()) {
            let picked: Vec<i64> = keep.iter().map(|&r| v[r]).collect();
            ints.set_item(*name, PyArray1::from_vec(py, picked))?;
        }
        Ok((floats, ints))
    }

    /// What is left to read of a regular file from where it stands (None: not a file).
    fn bytes_left(file: &mut std::fs::File) -> Option<u64> {
        use std::io::Seek;
        let meta = file.metadata().ok().filter(std::fs::Metadata::is_file)?;
        Some(meta.len().saturating_sub(file.stream_position().ok()?))
    }

    /// An OSError as Python raises it: errno and strerror set (its subclass by errno).
    fn os_error(e: std::io::Error) -> PyErr {
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
    type LiveRows<'py> = (Bound<'py, PyDict>, Bound<'py, PyDict>, Vec<i64>);

    /// The CPU path figures: line, kind, value, run.
    type CpuLineArrays<'py> = (
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i8>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i32>>,
    );

    /// The line index: line numbers, offsets, bytes read, the last bytes read.
    type LineIndexParts<'py> = (
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
        u64,
        Bound<'py, PyBytes>,
    );

    /// The incremental scanner of one log.
    #[pyclass(module = "parsers._core")]
    struct Scanner {
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

        /// Read an open file from where it stands to its end (in pieces of 4 MB, without
        /// the GIL: the interpreter goes on meanwhile). The descriptor stays the caller's.
        /// Returns the bytes read; a read error is raised as OSError.
        fn feed_fd(&mut self, py: Python<'_>, fd: i32) -> PyResult<u64> {
            use std::os::fd::FromRawFd;
            self.check()?;
            if fd < 0 {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "not a file descriptor",
                ));
            }
            // SAFETY: the caller keeps `fd` open during the call and closes it after; the
            // File is never dropped (ManuallyDrop), so it does not close it.
            let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
            if let Some(left) = bytes_left(&mut file) {
                self.inner.expect_bytes(left);
            }
            let inner = &mut self.inner;
            // read on a second thread, system calls and all, while this one applies and a third
            // attributes
            let out = py.detach(|| guarded(|| inner.feed_from(&mut *file)));
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
            }
        }

        /// The CPU path figures of the whole file from the `since`-th on, in the order read:
        /// (physical line, kind (0 prep_msm_ms, 1 b_g2_msm_ms), value in ms, run).
        #[pyo3(signature = (since=0))]
        fn cpu_lines<'py>(&self, py: Python<'py>, since: usize) -> PyResult<CpuLineArrays<'py>> {
            numpy_api(py)?;
            let c = &self.inner.cpu;
            let from = since.min(c.len());
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

    /// Each interval's row when packed greedily (see `packing::first_free_rows`).
    #[pyfunction]
    #[pyo3(signature = (starts, ends, touching=true))]
    fn first_free_rows<'py>(
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
        Ok(PyArray1::from_vec(
            py,
            crate::packing::first_free_rows(s, e, touching),
        ))
    }

    type WorkerSumArrays<'py> = (
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
    fn worker_sums<'py>(
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

    type BusySplitArrays<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>);

    /// Per GPU, its busy time split by phase (see `sums::busy_split`): per record gpu_start,
    /// gpu_end and GPU, per segment start, end, phase and record, the phases by precedence
    /// and how many phases there are. Returns (GPU ordinals, the sums: `phases` a GPU).
    #[pyfunction]
    #[allow(clippy::too_many_arguments)]
    fn busy_split<'py>(
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
        let s = py.detach(|| guarded(|| crate::sums::busy_split(&inputs, gpu, &order, phases)))?;
        Ok((
            PyArray1::from_vec(py, s.gpus),
            PyArray1::from_vec(py, s.sums),
        ))
    }

    type SegmentArrays<'py> = (
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
    fn reconstruct_segments<'py>(
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
    fn gap_rows_json<'py>(
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
        let (cause, crosses) = (cause.as_array(), crosses.as_array());
        let (before, after) = (before.as_array(), after.as_array());
        let (job, worker, partition) = (job.as_array(), worker.as_array(), partition.as_array());
        let n = gpu.len();
        let lengths = [
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
    /// of kind `kinds[kind[k]]` (-1: ""), its stamps NaN when not said (null).
    #[pyfunction]
    #[allow(clippy::too_many_arguments)]
    fn proof_rows_json<'py>(
        job: PyReadonlyArray1<'py, i64>,
        kind: PyReadonlyArray1<'py, i64>,
        partitions: PyReadonlyArray1<'py, i64>,
        first: PyReadonlyArray1<'py, f64>,
        last: PyReadonlyArray1<'py, f64>,
        completed: PyReadonlyArray1<'py, bool>,
        jobs: &Bound<'py, pyo3::PyAny>,
        kinds: Vec<String>,
    ) -> PyResult<String> {
        let (job, kind, partitions) = (job.as_array(), kind.as_array(), partitions.as_array());
        let (first, last, completed) = (first.as_array(), last.as_array(), completed.as_array());
        let n = job.len();
        let lengths = [
            kind.len(),
            partitions.len(),
            first.len(),
            last.len(),
            completed.len(),
        ];
        same_lengths("proof", n, &lengths)?;
        let kinds: Vec<String> = kinds.iter().map(|k| crate::json::quoted(k)).collect();
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
                },
            );
        }
        Ok(out)
    }

    /// ValueError unless every length of `others` is `n` (the columns of one `what` list).
    fn same_lengths(what: &str, n: usize, others: &[usize]) -> PyResult<()> {
        if others.iter().all(|&k| k == n) {
            return Ok(());
        }
        Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{what} columns differ in length"
        )))
    }

    /// The compiled core of cuzk-tui.
    #[pymodule]
    fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
        let py = m.py();
        m.add("CoreError", py.get_type::<CoreError>())?;
        // the columns' names, in the order the core keeps them: the Python side reads them
        // here rather than listing them again
        m.add("FLOAT_FIELDS", PyTuple::new(py, FLOAT_FIELDS)?)?;
        m.add("I32_FIELDS", PyTuple::new(py, I32_FIELDS)?)?;
        m.add("I64_FIELDS", PyTuple::new(py, I64_FIELDS)?)?;
        m.add_class::<Counts>()?;
        m.add_class::<RunFacts>()?;
        m.add_class::<Scanner>()?;
        m.add_function(wrap_pyfunction!(numpy_api, m)?)?;
        m.add_function(wrap_pyfunction!(first_free_rows, m)?)?;
        m.add_function(wrap_pyfunction!(reconstruct_segments, m)?)?;
        m.add_function(wrap_pyfunction!(proof_rows_json, m)?)?;
        m.add_function(wrap_pyfunction!(gap_rows_json, m)?)?;
        m.add_function(wrap_pyfunction!(worker_sums, m)?)?;
        m.add_function(wrap_pyfunction!(busy_split, m)?)?;
        m.add_class::<crate::rowtext::python::RowWriter>()?;
        m.add_class::<crate::trackevent::python::TrackEventWriter>()?;
        Ok(())
    }
}

/// The scan makes and drops many small allocations (the attributor's ways): mimalloc makes
/// them cheap.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Give the pages freed so far back to the system (mimalloc keeps them a while for reuse;
/// after a big read they would count as memory the scan keeps).
pub fn release_free_memory() {
    // SAFETY: mi_collect only walks the allocator's own structures; any thread may call it.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
