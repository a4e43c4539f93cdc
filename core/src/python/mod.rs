//! The Python module `parsers._core`: wiring over the core's modules. A failure of the core
//! reaches Python as one `CoreError`, never an abort; the Scanner is in `scanner`, the
//! functions over numpy columns in `functions`.

mod functions;
mod scanner;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use numpy::{PyArray1, ToPyArray};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::columns::{Columns, FLOAT_FIELDS, I32_FIELDS, I64_FIELDS};

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

/// Give the memory freed so far back to the system: the core's allocator's (columns the
/// core handed over and Python let go of are freed into it, not to the system) and, with
/// glibc, the C heap's (numpy's arrays).
#[pyfunction]
fn release_free_memory(py: Python<'_>) {
    py.detach(crate::release_free_memory);
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

/// The compiled core of cuzk-tui.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    crate::purge_at_once();
    m.add("CoreError", py.get_type::<CoreError>())?;
    // the columns' names, in the order the core keeps them: the Python side reads them
    // here rather than listing them again
    m.add("FLOAT_FIELDS", PyTuple::new(py, FLOAT_FIELDS)?)?;
    m.add("I32_FIELDS", PyTuple::new(py, I32_FIELDS)?)?;
    m.add("I64_FIELDS", PyTuple::new(py, I64_FIELDS)?)?;
    m.add_class::<scanner::Counts>()?;
    m.add_class::<scanner::RunFacts>()?;
    m.add_class::<scanner::Scanner>()?;
    m.add_class::<scanner::StopFlag>()?;
    m.add_function(wrap_pyfunction!(numpy_api, m)?)?;
    m.add_function(wrap_pyfunction!(release_free_memory, m)?)?;
    m.add_function(wrap_pyfunction!(functions::first_free_rows, m)?)?;
    m.add_function(wrap_pyfunction!(functions::lane_segments, m)?)?;
    m.add_function(wrap_pyfunction!(functions::reconstruct_segments, m)?)?;
    m.add_function(wrap_pyfunction!(functions::proof_rows_json, m)?)?;
    m.add_function(wrap_pyfunction!(functions::gap_rows_json, m)?)?;
    m.add_function(wrap_pyfunction!(functions::worker_sums, m)?)?;
    m.add_function(wrap_pyfunction!(functions::busy_split, m)?)?;
    m.add_class::<crate::rowtext::python::RowWriter>()?;
    m.add_class::<crate::search::python::PyLineRegex>()?;
    m.add_class::<crate::trackevent::python::TrackEventWriter>()?;
    Ok(())
}
