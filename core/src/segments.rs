//! Every GPU interval split into phase segments from its attributed timing lines
//! (docs/analysis.md#phase-segments). The arithmetic is numpy's: a NaN (the log said
//! nothing) spreads through sums, maxima and minima, and a segment with a NaN end is none.

use crate::columns::{self as col, FLOAT_COUNT};

/// The phases, numbered as `parsers.model.Phase`.
pub const PRE_LOCK: i8 = 0;
pub const LOCK_WAIT: i8 = 1;
pub const ALLOC: i8 = 2;
pub const KERNEL: i8 = 3;
pub const BARRIER: i8 = 4;
pub const CLEANUP: i8 = 5;
pub const UNKNOWN: i8 = 6;
pub const IN_FLIGHT: i8 = 7;
pub const FAILED: i8 = 8;

/// The columns the segments are made from (by `columns` index: gpu_start, gpu_end and the
/// timing fields; NaN where the log said nothing), and where each failed prove is drawn to
/// (NaN: not failed).
pub struct Inputs<'a> {
    pub f: [&'a [f64]; FLOAT_COUNT],
    pub failed_end: Option<&'a [f64]>,
}

/// Segments in interval order and, within one, in time order; and per interval where it
/// took and released the lock (NaN: unknown) and where it is drawn to.
#[derive(Default, Debug, PartialEq)]
pub struct Segments {
    pub start: Vec<f64>,
    pub end: Vec<f64>,
    pub phase: Vec<i8>,
    pub part: Vec<i64>,
    pub lock: Vec<f64>,
    pub unlock: Vec<f64>,
    pub drawn_end: Vec<f64>,
}

/// numpy's maximum and minimum: NaN when either is NaN; of two equal values (0 and -0) the
/// second.
fn max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b {
        a
    } else {
        b
    }
}

fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b {
        a
    } else {
        b
    }
}

/// numpy's nan_to_num.
fn or_zero(a: f64) -> f64 {
    if a.is_nan() {
        0.0
    } else if a == f64::INFINITY {
        f64::MAX
    } else if a == f64::NEG_INFINITY {
        f64::MIN
    } else {
        a
    }
}

fn known(a: f64) -> bool {
    !a.is_nan()
}

/// The most segments an interval is split into.
const MOST_PER_INTERVAL: usize = 10;

/// Split every interval into segments that tile [gpu_start, drawn end] (drawn end: its
/// GPU_END, or where a failed or running interval is drawn to, `now` for a running one); a
/// stretch the log does not explain is UNKNOWN, never guessed.
pub fn reconstruct(c: &Inputs, now: f64) -> Segments {
    let n = c.f[col::GPU_START].len();
    // room for the most an interval can have: memory is only taken where it is written,
    // and the columns never grow (growing would copy them, and touch twice the memory)
    let most = n * MOST_PER_INTERVAL;
    let mut out = Segments {
        start: Vec::with_capacity(most),
        end: Vec::with_capacity(most),
        phase: Vec::with_capacity(most),
        part: Vec::with_capacity(most),
        lock: Vec::with_capacity(n),
        unlock: Vec::with_capacity(n),
        drawn_end: Vec::with_capacity(n),
    };
    for i in 0..n {
        let start = c.f[col::GPU_START][i];
        let has_start = known(start);
        let is_open = has_start && !known(c.f[col::GPU_END][i]);
        let failed_at = c.failed_end.map_or(f64::NAN, |f| f[i]);
        let failed = known(failed_at);
        let mut end = if is_open {
            max(now, start)
        } else {
            c.f[col::GPU_END][i]
        };
        if failed {
            end = max(failed_at, start);
        }
        let open_kind = if failed {
            FAILED
        } else if is_open {
            IN_FLIGHT
        } else {
            UNKNOWN
        };

        let (pre, wait) = (c.f[col::PRE_LOCK][i], c.f[col::MUTEX_WAIT][i]);
        let has_pre = known(pre);
        let prestage = c.f[col::PRESTAGE][i];
        let ps0 = or_zero(prestage);
        let ntt = c.f[col::NTT_MSM_H][i];
        let bt = c.f[col::BATCH_ADD][i] + c.f[col::TAIL_MSM][i];
        let gpu_total = c.f[col::GPU_TOTAL][i];
        let mut barrier = c.f[col::BARRIER][i];
        if !known(barrier) && known(gpu_total) && known(ntt) && known(bt) {
            barrier = max(0.0, gpu_total - ntt - bt);
        }

        // where the lock was taken: from the lock line, else back from the end of the kernels
        let mut lock = start + pre + wait;
        let kernel_end = if known(c.f[col::PRE_DESTRUCTOR][i]) {
            start + c.f[col::PRE_DESTRUCTOR][i] - or_zero(c.f[col::EPILOGUE][i])
        } else {
            c.f[col::GPU_END][i]
        };
        if !known(lock) {
            lock = kernel_end - gpu_total - ps0;
        }
        let valid = has_start && known(lock) && lock >= start - 1.0 && lock <= end;

        let alloc_in = c.f[col::NTT_ALLOC][i] + max(0.0, ntt - c.f[col::NTT_TOTAL][i]);
        let has_ntt = known(ntt);
        let has_bar = has_ntt && known(barrier);
        let explained = has_bar && known(bt);
        let a0 = or_zero(alloc_in);
        let c1 = lock + ps0;
        let c2 = c1 + ntt;
        let c3 = c2 + barrier;
        let c4 = c3 + bt;
        let cursor = if explained {
            c4
        } else if has_bar {
            c3
        } else if has_ntt {
            c2
        } else {
            c1
        };
        let unlock = if known(c.f[col::MUTEX_HELD][i]) {
            lock + c.f[col::MUTEX_HELD][i]
        } else if explained {
            c4
        } else {
            f64::NAN
        };
        let has_unlock = known(unlock);
        // the NTT span less its allocation is kernel; without the allocation line it is
        // unknown, except in engines that print no allocation at all (no lock line)
        let ntt_phase = if known(alloc_in) || known(prestage) || !has_pre {
            KERNEL
        } else {
            UNKNOWN
        };
        let tail_phase = if !has_unlock {
            open_kind
        } else if failed {
            FAILED
        } else if is_open {
            IN_FLIGHT
        } else {
            CLEANUP
        };
        let tail_start = if has_unlock {
            max(unlock, cursor)
        } else {
            cursor
        };

        // (start, end, phase, shown), in time order; all but the first need a valid lock
        let rows: [(f64, f64, i8, bool); MOST_PER_INTERVAL] = [
            (start, end, open_kind, has_start && !valid),
            (
                start,
                if has_pre { start + pre } else { lock },
                if has_pre { PRE_LOCK } else { UNKNOWN },
                valid,
            ),
            (start + pre, lock, LOCK_WAIT, valid && has_pre),
            (lock, c1, ALLOC, valid),
            (c1, c1 + a0, ALLOC, valid && has_ntt),
            (c1 + a0, c2, ntt_phase, valid && has_ntt),
            (c2, c3, BARRIER, valid && has_bar),
            (c3, c4, KERNEL, valid && explained),
            (
                cursor,
                if has_unlock { unlock } else { cursor },
                UNKNOWN,
                valid && has_unlock,
            ),
            (tail_start, end, tail_phase, valid),
        ];
        let first = out.start.len();
        for (s, e, phase, shown) in rows {
            if !shown {
                continue;
            }
            let (s, e) = (max(s, start), min(e, end));
            if e > s {
                out.start.push(s);
                out.end.push(e);
                out.phase.push(phase);
                out.part.push(i as i64);
            }
        }
        if has_start && out.start.len() == first {
            // an interval of no length (a failed prove drawn to its start: nothing says how
            // long it ran) keeps one segment of none, so that a lane, the trace and the CSV
            // each hold every interval
            out.start.push(start);
            out.end.push(start);
            out.phase.push(open_kind);
            out.part.push(i as i64);
        }
        out.lock.push(if valid { lock } else { f64::NAN });
        out.unlock.push(if valid { unlock } else { f64::NAN });
        out.drawn_end.push(if has_start { end } else { f64::NAN });
    }
    out
}

/// The segments of some records, one after another (a Gantt lane's).
#[derive(Debug, Default, PartialEq)]
pub struct Gathered {
    pub start: Vec<f64>,
    pub end: Vec<f64>,
    pub phase: Vec<i8>,
    /// Each segment's record.
    pub part: Vec<i32>,
}

/// The segments of records `members`, in their order, each record's in its own order: a
/// record `i`'s are `offsets[i]..offsets[i + 1]` of `start`, `end` and `phase`. None when a
/// record or a segment is not there (the columns do not go together), or a record's number
/// does not fit an i32.
pub fn gather(
    members: &[i64],
    offsets: &[i64],
    start: &[f64],
    end: &[f64],
    phase: &[i8],
) -> Option<Gathered> {
    let bounds = |i: i64| -> Option<(usize, usize)> {
        let i = usize::try_from(i).ok()?;
        let lo = usize::try_from(*offsets.get(i)?).ok()?;
        let hi = usize::try_from(*offsets.get(i + 1)?).ok()?;
        (lo <= hi && hi <= start.len().min(end.len()).min(phase.len())).then_some((lo, hi))
    };
    let mut total = 0usize;
    for &i in members {
        let (lo, hi) = bounds(i)?;
        i32::try_from(i).ok()?;
        total += hi - lo;
    }
    let mut out = Gathered {
        start: Vec::with_capacity(total),
        end: Vec::with_capacity(total),
        phase: Vec::with_capacity(total),
        part: Vec::with_capacity(total),
    };
    for &i in members {
        let (lo, hi) = bounds(i)?;
        out.start.extend_from_slice(&start[lo..hi]);
        out.end.extend_from_slice(&end[lo..hi]);
        out.phase.extend_from_slice(&phase[lo..hi]);
        out.part.resize(out.part.len() + (hi - lo), i as i32);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_gathers_its_records_segments_in_order() {
        let offsets = [0i64, 2, 2, 5];
        let start = [0.0, 1.0, 10.0, 11.0, 12.0];
        let end = [1.0, 2.0, 11.0, 12.0, 13.0];
        let phase = [1i8, 2, 3, 4, 5];
        let g = gather(&[2, 0, 1], &offsets, &start, &end, &phase).expect("gathered");
        assert_eq!(g.start, [10.0, 11.0, 12.0, 0.0, 1.0]);
        assert_eq!(g.end, [11.0, 12.0, 13.0, 1.0, 2.0]);
        assert_eq!(g.phase, [3, 4, 5, 1, 2]);
        assert_eq!(g.part, [2, 2, 2, 0, 0]);
        assert_eq!(
            gather(&[], &offsets, &start, &end, &phase),
            Some(Gathered::default())
        );
        // a record or segment that is not there: nothing, never a panic
        for members in [&[3i64][..], &[-1], &[0, 7]] {
            assert_eq!(gather(members, &offsets, &start, &end, &phase), None);
        }
        assert_eq!(gather(&[2], &offsets, &start[..4], &end, &phase), None);
        assert_eq!(gather(&[0], &[2, 1], &start, &end, &phase), None);
    }

    fn one(values: &[(&str, f64)], now: f64, failed: Option<f64>) -> Segments {
        let cols: Vec<Vec<f64>> = col::FLOAT_FIELDS
            .iter()
            .map(|name| {
                let v = values.iter().find(|(k, _)| k == name);
                vec![v.map_or(f64::NAN, |(_, v)| *v)]
            })
            .collect();
        let failed = failed.map(|f| vec![f]);
        let inputs = Inputs {
            f: std::array::from_fn(|k| &cols[k][..]),
            failed_end: failed.as_deref(),
        };
        reconstruct(&inputs, now)
    }

    #[test]
    fn a_whole_interval_tiles_its_span() {
        let s = one(
            &[
                ("gpu_start", 210.0),
                ("gpu_end", 2000.0),
                ("pre_lock", 5.0),
                ("mutex_wait", 0.0),
                ("ntt_alloc", 10.0),
                ("ntt_total", 612.0),
                ("ntt_msm_h", 612.0),
                ("barrier", 100.0),
                ("batch_add", 600.0),
                ("tail_msm", 80.0),
                ("gpu_total", 1392.0),
                ("mutex_held", 1392.0),
            ],
            0.0,
            None,
        );
        assert_eq!(
            s.phase,
            vec![PRE_LOCK, ALLOC, KERNEL, BARRIER, KERNEL, CLEANUP]
        );
        assert_eq!(s.start[0], 210.0);
        assert_eq!(*s.end.last().unwrap(), 2000.0);
        for k in 1..s.start.len() {
            assert_eq!(s.start[k], s.end[k - 1], "segments touch");
        }
        assert_eq!((s.lock[0], s.unlock[0]), (215.0, 1607.0));
    }

    #[test]
    fn what_the_log_does_not_say_is_unknown_or_running() {
        // no timing line at all: one unknown segment; running: drawn to now
        let s = one(&[("gpu_start", 100.0), ("gpu_end", 400.0)], 0.0, None);
        assert_eq!(
            (s.phase, s.start, s.end),
            (vec![UNKNOWN], vec![100.0], vec![400.0])
        );
        let s = one(&[("gpu_start", 100.0)], 250.0, None);
        assert_eq!((s.phase, s.end), (vec![IN_FLIGHT], vec![250.0]));
        let s = one(&[("gpu_start", 100.0)], 250.0, Some(180.0));
        assert_eq!((s.phase, s.end), (vec![FAILED], vec![180.0]));
        // no start: nothing drawn
        let s = one(&[("gpu_end", 400.0)], 0.0, None);
        assert!(s.phase.is_empty() && s.drawn_end[0].is_nan());
    }

    #[test]
    fn an_interval_of_no_length_keeps_one_segment_of_none() {
        // a failed prove drawn to its start (no next start, no unlock): it was left out of
        // the lanes and the trace while the CSV listed it
        let s = one(&[("gpu_start", 100.0)], 250.0, Some(100.0));
        assert_eq!(
            (s.phase, s.start, s.end),
            (vec![FAILED], vec![100.0], vec![100.0])
        );
        let s = one(&[("gpu_start", 100.0), ("gpu_end", 100.0)], 0.0, None);
        assert_eq!(
            (s.phase, s.start, s.end),
            (vec![UNKNOWN], vec![100.0], vec![100.0])
        );
    }
}
