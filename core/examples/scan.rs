//! Scan a log with the core alone and print how long it took: `cargo run --release
//! --no-default-features --example scan -- LOG`.

use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("a log path");
    let size = std::fs::metadata(&path).expect("a readable log").len() as usize;
    let t0 = Instant::now();
    let mut b = _core::builder::Builder::new(None);
    // as the report reads a file: from its first byte to its last, on the core's threads
    let mut file = std::fs::File::open(&path).expect("a readable log");
    b.feed_from(&mut file).expect("the log read to its end");
    b.finish();
    let secs = t0.elapsed().as_secs_f64();
    let c = &b.recs.cols;
    let cols: usize = c.f.iter().map(|v| v.capacity() * 8).sum::<usize>()
        + c.i32s().iter().map(|v| v.capacity() * 4).sum::<usize>()
        + c.i64s().iter().map(|v| v.capacity() * 8).sum::<usize>();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS"))
        .unwrap_or("");
    println!("columns {} MB (capacity), {rss}", cols / 1_000_000);
    println!(
        "{} MB, {} records, {:?}, unattributed {}: {:.2} s ({:.0} MB/s)",
        size / 1_000_000,
        b.recs.cols.len(),
        b.counts,
        b.attributor().unattributed,
        secs,
        size as f64 / 1e6 / secs
    );
}
