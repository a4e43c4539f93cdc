//! cuzk-tui's compiled core: the byte-level work on a cuzk daemon log.
//!
//! Bytes go in (any chunking), per-partition columns come out as numpy arrays. The crate
//! owns physical lines, capture prefixes, splice rejoining, the parsing of TIMELINE,
//! CUZK_TIMING, CUZK_NTT_H and stdout lines, and the attribution of timing lines to GPU
//! intervals. The model, the analysis, the report and the viewer stay in Python.

pub mod attribution;
pub mod builder;
pub mod bytemask;
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
mod python;

/// The next number of a xorshift sequence: the choices of the tests' generated inputs.
#[cfg(test)]
pub(crate) fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// The scan makes and drops many small allocations (the attributor's ways): mimalloc makes
/// them cheap.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Give the pages freed so far back to the system: the core's (mimalloc keeps them a while
/// for reuse; after a big read they would count as memory the scan keeps) and, with glibc,
/// the C heap's, where numpy's arrays live (glibc returns only the top of a heap: the
/// arrays a snapshot made and dropped stay resident, ~100 MB after a 685 MB log is read).
pub fn release_free_memory() {
    // SAFETY: mi_collect only walks the allocator's own structures; any thread may call it.
    unsafe { libmimalloc_sys::mi_collect(true) }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes glibc's own arena locks; any thread may call it.
        unsafe {
            malloc_trim(0);
        }
    }
}
