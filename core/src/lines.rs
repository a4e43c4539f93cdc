//! What the scan notes of the log's physical lines, so that nothing reads the log again for
//! them: the CPU thread's `prep_msm_ms=` / `b_g2_msm_ms=` figures with their line numbers (a
//! gap's CPU path nearby,
//! docs/analysis.md#why-a-gap-deeper-inspector-gap-list-the-reports-largest-gaps), and a sparse
//! index of line starts (a byte offset every INDEX_STEP_BYTES) with the last bytes read, by
//! which a reader of the file tells that the index is of the file it reads.

/// The kinds of CPU path figure.
pub const CPU_PREP_MSM: u8 = 0; // CUZK_TIMING: prep_msm_ms=1917
pub const CPU_B_G2_MSM: u8 = 1; // CUZK_TIMING: b_g2_msm_ms=1705 num_circuits=1
/// A line start is noted once it is this many bytes past the one noted before it.
pub const INDEX_STEP_BYTES: u64 = 1 << 18;
/// How many of the last bytes read are kept.
pub const SIGNATURE_BYTES: usize = 64;

/// The CPU path figures read: per figure its physical line, kind, value (ms) and run.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct CpuLines {
    pub line: Vec<u64>,
    pub kind: Vec<u8>,
    pub value: Vec<i64>,
    pub run: Vec<u32>,
    /// How many figures before `line[0]` were handed over and let go (`let_go_before`).
    pub let_go: usize,
}

impl CpuLines {
    pub fn push(&mut self, line: u64, kind: u8, value: i64, run: u32) {
        self.line.push(line);
        self.kind.push(kind);
        self.value.push(value);
        self.run.push(run);
    }

    /// The figures held (those let go not counted).
    pub fn len(&self) -> usize {
        self.line.len()
    }

    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }

    /// How many figures were read, those let go included.
    pub fn count(&self) -> usize {
        self.let_go + self.line.len()
    }

    /// Let go of the figures before the `upto`-th (the one reader of them holds those), and
    /// of the memory they took: a long log has millions, which would otherwise be held
    /// twice.
    pub fn let_go_before(&mut self, upto: usize) {
        let k = upto.saturating_sub(self.let_go).min(self.line.len());
        if k == 0 {
            return;
        }
        fn drop_head<T>(v: &mut Vec<T>, k: usize) {
            v.drain(..k);
            v.shrink_to_fit();
        }
        drop_head(&mut self.line, k);
        drop_head(&mut self.kind, k);
        drop_head(&mut self.value, k);
        drop_head(&mut self.run, k);
        self.let_go += k;
    }
}

/// Each `prep_msm_ms=<digits>` and `b_g2_msm_ms=<digits>` of a timing line's body, in
/// order (the leading digits of the value; one past i64 is left out).
pub fn cpu_values(body: &[u8], mut each: impl FnMut(u8, i64)) {
    // both keys end in `_msm_ms=`: looked for at each `=` of the line (a few), which costs
    // less than setting up a search for the whole tail
    let mut from = 0;
    while let Some(eq) = crate::text::find_byte(&body[from..], b'=') {
        let eq = from + eq;
        from = eq + 1;
        if !body[..eq].ends_with(b"_msm_ms") {
            continue;
        }
        let at = eq - 7; // where `_msm_ms=` begins
        let kind = match at.checked_sub(4).map(|k| &body[k..at]) {
            Some(b"prep") => CPU_PREP_MSM,
            Some(b"b_g2") => CPU_B_G2_MSM,
            _ => continue,
        };
        let digits = &body[at + 8..];
        let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            continue;
        }
        let value = digits[..n].iter().try_fold(0i64, |v, &d| {
            v.checked_mul(10)?.checked_add(i64::from(d - b'0'))
        });
        if let Some(value) = value {
            each(kind, value);
        }
    }
}

/// Where physical lines start: (line number, byte offset) of the first line, then of the
/// first line starting INDEX_STEP_BYTES or more past the one noted before (bounded: 16
/// bytes an entry, an entry for a quarter MB of log), and the last bytes read.
#[derive(Debug)]
pub struct LineIndex {
    pub lines: Vec<u64>,
    pub offsets: Vec<u64>,
    next: u64, // the next line start at or past this offset is noted
    signature: Vec<u8>,
}

impl Default for LineIndex {
    fn default() -> Self {
        LineIndex {
            lines: vec![1],
            offsets: vec![0],
            next: INDEX_STEP_BYTES,
            signature: Vec::with_capacity(2 * SIGNATURE_BYTES),
        }
    }
}

impl LineIndex {
    /// Line `line_no` starts at byte `offset` (called for every line, in order).
    #[inline]
    pub fn line_start(&mut self, line_no: u64, offset: u64) {
        if offset >= self.next {
            self.lines.push(line_no);
            self.offsets.push(offset);
            self.next = offset.saturating_add(INDEX_STEP_BYTES);
        }
    }

    /// These bytes were read after all the others.
    pub fn saw(&mut self, data: &[u8]) {
        if data.len() >= SIGNATURE_BYTES {
            self.signature.clear();
            self.signature
                .extend_from_slice(&data[data.len() - SIGNATURE_BYTES..]);
            return;
        }
        self.signature.extend_from_slice(data);
        let extra = self.signature.len().saturating_sub(SIGNATURE_BYTES);
        if extra > 0 {
            self.signature.drain(..extra);
        }
    }

    /// The last SIGNATURE_BYTES bytes read (fewer when fewer were).
    pub fn signature(&self) -> &[u8] {
        &self.signature
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(body: &[u8]) -> Vec<(u8, i64)> {
        let mut out = Vec::new();
        cpu_values(body, |k, v| out.push((k, v)));
        out
    }

    #[test]
    fn figures_let_go_are_counted_and_their_memory_given_back() {
        let mut c = CpuLines::default();
        for k in 0..100_000u64 {
            c.push(k + 1, (k % 2) as u8, k as i64, 0);
        }
        c.let_go_before(99_990);
        assert_eq!((c.count(), c.len(), c.let_go), (100_000, 10, 99_990));
        assert_eq!(c.line[0], 99_991);
        assert!(c.line.capacity() < 1_000 && c.value.capacity() < 1_000);
        c.let_go_before(5); // held already: nothing changes
        c.push(100_001, 0, 7, 1);
        c.let_go_before(200_000); // past the last: every one let go
        assert_eq!((c.count(), c.len()), (100_001, 0));
    }

    #[test]
    fn the_cpu_figures_of_a_line_are_read_in_order() {
        assert_eq!(values(b"prep_msm_ms=1917"), [(CPU_PREP_MSM, 1917)]);
        assert_eq!(
            values(b"b_g2_msm_ms=1705 num_circuits=1"),
            [(CPU_B_G2_MSM, 1705)]
        );
        assert_eq!(
            values(b"prep_msm_ms=1b_g2_msm_ms=2 prep_msm_ms=3ms"),
            [(CPU_PREP_MSM, 1), (CPU_B_G2_MSM, 2), (CPU_PREP_MSM, 3)]
        );
        // no digits, another key, a value past i64, the key's tail alone: none
        for body in [
            &b"prep_msm_ms="[..],
            b"prep_msm_ms=x1",
            b"tail_msm_ms=5",
            b"_msm_ms=5",
            b"prep_msm_ms=99999999999999999999",
            b"async_dealloc_ms=9",
        ] {
            assert_eq!(values(body), [], "{}", String::from_utf8_lossy(body));
        }
    }

    /// `cpu_values` as it was written first: a search for the keys' common tail.
    fn values_by_search(body: &[u8]) -> Vec<(u8, i64)> {
        let mut out = Vec::new();
        for at in memchr::memmem::find_iter(body, b"_msm_ms=") {
            let kind = match at.checked_sub(4).map(|k| &body[k..at]) {
                Some(b"prep") => CPU_PREP_MSM,
                Some(b"b_g2") => CPU_B_G2_MSM,
                _ => continue,
            };
            let digits = &body[at + 8..];
            let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
            let value = digits[..n].iter().try_fold(0i64, |v, &d| {
                v.checked_mul(10)?.checked_add(i64::from(d - b'0'))
            });
            if let (true, Some(value)) = (n > 0, value) {
                out.push((kind, value));
            }
        }
        out
    }

    #[test]
    fn the_cpu_figures_are_those_a_search_for_the_keys_finds() {
        let pieces: [&[u8]; 12] = [
            b"prep",
            b"b_g2",
            b"_msm_ms=",
            b"_msm_ms",
            b"=",
            b"17",
            b"99999999999999999999",
            b" ",
            b"ms=",
            b"p",
            b"_msm",
            b"x=1",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..50_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut body = Vec::new();
            for k in 0..(seed % 8) as usize {
                body.extend_from_slice(pieces[((seed >> (4 * k + 8)) % 12) as usize]);
            }
            assert_eq!(
                values(&body),
                values_by_search(&body),
                "{}",
                String::from_utf8_lossy(&body)
            );
        }
    }

    #[test]
    fn a_line_start_is_noted_a_step_past_the_last() {
        let mut ix = LineIndex::default();
        ix.line_start(2, 10);
        ix.line_start(3, INDEX_STEP_BYTES + 5);
        ix.line_start(4, INDEX_STEP_BYTES + 6);
        ix.line_start(9, 2 * INDEX_STEP_BYTES + 5);
        assert_eq!(ix.lines, [1, 3, 9]);
        assert_eq!(
            ix.offsets,
            [0, INDEX_STEP_BYTES + 5, 2 * INDEX_STEP_BYTES + 5]
        );
    }

    #[test]
    fn the_signature_is_the_last_bytes_whatever_the_pieces() {
        let data: Vec<u8> = (0..300u32).map(|i| (i % 251) as u8).collect();
        for piece in [1, 7, 63, 64, 65, 300] {
            let mut ix = LineIndex::default();
            for chunk in data.chunks(piece) {
                ix.saw(chunk);
            }
            assert_eq!(ix.signature(), &data[data.len() - SIGNATURE_BYTES..]);
        }
        let mut short = LineIndex::default();
        short.saw(b"ab");
        short.saw(b"c");
        assert_eq!(short.signature(), b"abc");
    }
}
