//! Greedy packing of intervals into rows where they do not overlap (the Gantt's worker
//! sub-rows and proof rows): a loop over every interval, too slow in Python for a long log.

/// Give each interval, in the order given, the first row whose last interval has ended by
/// its start (`touching`: an end equal to the start counts as ended); an interval that fits
/// no row opens a new one. An interval whose start is NaN gets no row (-1).
pub fn first_free_rows(starts: &[f64], ends: &[f64], touching: bool) -> Vec<i64> {
    let mut row_end: Vec<f64> = Vec::new();
    starts
        .iter()
        .zip(ends)
        .map(|(&s, &e)| {
            if s.is_nan() {
                return -1;
            }
            let free = row_end
                .iter()
                .position(|&last| if touching { last <= s } else { last < s });
            let r = match free {
                Some(r) => {
                    row_end[r] = e;
                    r
                }
                None => {
                    row_end.push(e);
                    row_end.len() - 1
                }
            };
            r as i64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_intervals_open_rows() {
        let s = [0.0, 1.0, 5.0, 5.0, f64::NAN, 6.0];
        let e = [5.0, 6.0, 9.0, 7.0, 1.0, 8.0];
        assert_eq!(first_free_rows(&s, &e, true), vec![0, 1, 0, 2, -1, 1]);
        // an end equal to the start is still running
        assert_eq!(first_free_rows(&s, &e, false), vec![0, 1, 2, 3, -1, 0]);
    }

    #[test]
    fn nothing_in_nothing_out() {
        assert!(first_free_rows(&[], &[], true).is_empty());
    }
}
