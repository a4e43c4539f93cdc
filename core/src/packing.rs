//! Greedy packing of intervals into rows where they do not overlap (the Gantt's worker
//! sub-rows and proof rows): a loop over every interval, too slow in Python for a long log.

/// Give each interval, in the order given, the first row whose last interval has ended by
/// its start (`touching`: an end equal to the start counts as ended); an interval that fits
/// no row opens a new one. An interval whose start is NaN gets no row (-1).
pub fn first_free_rows(starts: &[f64], ends: &[f64], touching: bool) -> Vec<i64> {
    let mut rows = Rows::new();
    starts
        .iter()
        .zip(ends)
        .map(|(&s, &e)| {
            if s.is_nan() {
                return -1;
            }
            let r = rows.first_free(s, touching).unwrap_or(rows.len);
            rows.set(r, e);
            r as i64
        })
        .collect()
}

/// Each row's last end, in a tree of minimums over the rows (a row not opened yet ends at
/// +inf: never free): the first row free at a start is found in time logarithmic in the
/// rows, not by a pass over them (intervals nested a hundred thousand deep, a hostile log,
/// had made the packing quadratic). The tree holds room for the rows opened, doubled as
/// more open: a worker's intervals need one row or two, and a tree as deep as the
/// intervals are many made every step cost their logarithm instead.
struct Rows {
    /// Leaves from `size` on; each inner node the least of its two children.
    tree: Vec<f64>,
    size: usize,
    /// Rows opened so far.
    len: usize,
}

/// The rows a new tree has room for.
const FIRST_ROOM: usize = 8;

impl Rows {
    fn new() -> Rows {
        Rows {
            tree: vec![f64::INFINITY; 2 * FIRST_ROOM],
            size: FIRST_ROOM,
            len: 0,
        }
    }

    /// Room for twice the rows: the leaves move to the new tree's, the inner nodes are
    /// made again.
    fn grow(&mut self) {
        let size = 2 * self.size;
        let mut tree = vec![f64::INFINITY; 2 * size];
        tree[size..size + self.size].copy_from_slice(&self.tree[self.size..]);
        for k in (1..size).rev() {
            tree[k] = tree[2 * k].min(tree[2 * k + 1]);
        }
        self.tree = tree;
        self.size = size;
    }

    /// Row `r`'s last interval ends at `end` (a NaN end: never free, as `NaN < s` is not).
    fn set(&mut self, r: usize, end: f64) {
        while r >= self.size {
            self.grow();
        }
        self.len = self.len.max(r + 1);
        let mut k = self.size + r;
        self.tree[k] = if end.is_nan() { f64::INFINITY } else { end };
        while k > 1 {
            k /= 2;
            self.tree[k] = self.tree[2 * k].min(self.tree[2 * k + 1]);
        }
    }

    /// The lowest row whose last interval ends before `s` (at or before it, `touching`).
    fn first_free(&self, s: f64, touching: bool) -> Option<usize> {
        let free = |end: f64| if touching { end <= s } else { end < s };
        // an unopened row is +inf: free only to a start of +inf touching, which is no row
        let free_here = |k: usize| free(self.tree[k]) && self.tree[k] < f64::INFINITY;
        if !free_here(1) {
            return None;
        }
        let mut k = 1;
        while k < self.size {
            k = if free_here(2 * k) { 2 * k } else { 2 * k + 1 };
        }
        Some(k - self.size)
    }
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

    /// The packing as a pass over every row: the rule the tree must give.
    fn by_scanning(starts: &[f64], ends: &[f64], touching: bool) -> Vec<i64> {
        let mut row_end: Vec<f64> = Vec::new();
        let mut out = Vec::new();
        for (&s, &e) in starts.iter().zip(ends) {
            if s.is_nan() {
                out.push(-1);
                continue;
            }
            let free = row_end
                .iter()
                .position(|&last| if touching { last <= s } else { last < s });
            let r = free.unwrap_or(row_end.len());
            if r == row_end.len() {
                row_end.push(e);
            } else {
                row_end[r] = e;
            }
            out.push(r as i64);
        }
        out
    }

    #[test]
    fn the_tree_packs_as_a_pass_over_the_rows_does() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..300 {
            let n = next(60) as usize;
            let mut starts = Vec::new();
            let mut ends = Vec::new();
            for _ in 0..n {
                let s = next(50) as f64;
                // unsorted starts, ties, NaN starts and ends, -inf starts (a lane's padding)
                starts.push(match next(20) {
                    0 => f64::NAN,
                    1 => f64::NEG_INFINITY,
                    _ => s,
                });
                ends.push(if next(25) == 0 {
                    f64::NAN
                } else {
                    s + next(30) as f64
                });
            }
            for touching in [true, false] {
                let want = by_scanning(&starts, &ends, touching);
                assert_eq!(first_free_rows(&starts, &ends, touching), want);
            }
        }
    }

    #[test]
    fn intervals_nested_deep_take_a_row_each_in_time_n_log_n() {
        let n = 200_000;
        let starts: Vec<f64> = (0..n).map(f64::from).collect();
        let ends: Vec<f64> = (0..n).map(|k| f64::from(2 * n - k)).collect();
        let rows = first_free_rows(&starts, &ends, true);
        assert!(rows.iter().enumerate().all(|(k, &r)| r == k as i64));
    }
}
