//! Time the scan's stages on one thread, the log read into memory first: `cargo run
//! --release --no-default-features --example stages -- LOG [ROUNDS]`. Prints the best of
//! ROUNDS (default 3) for: splitting lines alone, the reader alone, and the whole scan
//! (reader, builder and attribution on this thread, as a viewer's small feeds run).

use std::time::Instant;

use _core::builder::Builder;
use _core::reader::{Batch, Reader};

/// Pieces as the core's threaded read hands them over.
const PIECE_BYTES: usize = 1 << 18;

fn best_of(rounds: usize, mut f: impl FnMut() -> u64) -> (f64, u64) {
    let mut best = f64::INFINITY;
    let mut out = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out)
}

fn main() {
    let path = std::env::args().nth(1).expect("a log path");
    let rounds: usize = std::env::args()
        .nth(2)
        .map_or(3, |r| r.parse().expect("a number of rounds"));
    // a third argument names the one stage to time (for a profiler): lines, reader, scan
    let only = std::env::args().nth(3);
    let runs = |stage: &str| only.as_deref().is_none_or(|o| o == stage);
    let data = std::fs::read(&path).expect("a readable log");
    let mb = data.len() as f64 / 1e6;
    let report = |name: &str, (secs, n): (f64, u64)| {
        println!("{name:<28} {secs:>7.3} s {:>7.0} MB/s  ({n})", mb / secs);
    };
    if runs("lines") {
        report(
            "lines (memchr)",
            best_of(rounds, || memchr::memchr_iter(b'\n', &data).count() as u64),
        );
    }
    if runs("reader") {
        report(
            "reader",
            best_of(rounds, || {
                let mut reader = Reader::default();
                let mut batch = Batch::default();
                let mut items = 0;
                for piece in data.chunks(PIECE_BYTES) {
                    batch.clear();
                    reader.read(piece, &mut batch);
                    items += batch.items.len() as u64;
                }
                batch.clear();
                reader.finish(&mut batch);
                items + batch.items.len() as u64
            }),
        );
    }
    if runs("scan") {
        report(
            "whole scan, one thread",
            best_of(rounds, || {
                let mut b = Builder::new(None);
                for piece in data.chunks(PIECE_BYTES) {
                    b.feed(piece);
                }
                b.finish();
                b.recs.cols.len() as u64
            }),
        );
    }
}
