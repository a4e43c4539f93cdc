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
pub mod search;
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

/// mimalloc's `mi_option_purge_delay` (its v2 `mi_option_e`; libmimalloc-sys names no
/// constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed pages go back to the system at once, unless the user set MIMALLOC_PURGE_DELAY.
/// mimalloc keeps them 10 ms by default (100 ms in its arenas, where the columns' big
/// arrays live), and the columns a live snapshot hands to numpy are freed from another
/// thread, where they waited for that thread's next allocation: while the viewer split a
/// 685 MB log's rows, ~40 MB of the rows it had let go stayed resident, the viewer's peak.
pub fn purge_at_once() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mi_option_set writes one option word; any thread may call it.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
    }
}

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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// This process's resident bytes.
    fn resident() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
        let pages: usize = statm
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .expect("resident pages");
        pages * 4096
    }

    #[test]
    fn pages_freed_from_another_thread_go_back_at_once() {
        super::purge_at_once();
        for size in [8usize << 20, 48 << 20] {
            // made on one thread and freed on this one, as numpy frees a snapshot's columns
            let block = std::thread::spawn(move || vec![1u8; size])
                .join()
                .expect("a block");
            let before = resident();
            drop(block);
            let freed = before.saturating_sub(resident());
            assert!(freed >= size / 2, "{size} bytes freed, {freed} given back");
        }
    }
}
