//! Where given bytes are in a block of sixteen, as a bit mask: SSE2 on x86_64 (part of every
//! x86_64 target: no detection at run time), two words at a time elsewhere. The scan looks
//! for newlines and for the bytes a daemon line can begin with on every line of a log; a
//! search set up per line (memchr's) costs more than the search itself on lines of a few
//! dozen bytes.

/// Bit k of the result: byte k of the sixteen at `at` is one of `bytes`. `hay` has sixteen
/// bytes from `at`.
#[inline(always)]
pub fn mask16<const N: usize>(hay: &[u8], at: usize, bytes: [u8; N]) -> u32 {
    let block: &[u8; 16] = hay[at..at + 16].try_into().unwrap_or(&[0; 16]);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
            _mm_setzero_si128,
        };
        // SAFETY: SSE2 is part of every x86_64 target; the unaligned load reads the sixteen
        // bytes of `block`, which it borrows.
        unsafe {
            let v = _mm_loadu_si128(block.as_ptr().cast());
            let mut hits = _mm_setzero_si128();
            for b in bytes {
                hits = _mm_or_si128(hits, _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)));
            }
            (_mm_movemask_epi8(hits) as u32) & 0xffff
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        mask16_portable(block, bytes)
    }
}

/// `mask16` of a block, two words at a time (where there is no SSE2; compiled and tested
/// everywhere): each byte equal to one of `bytes` made a zero byte, its high bit then
/// gathered into the mask.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn mask16_portable<const N: usize>(block: &[u8; 16], bytes: [u8; N]) -> u32 {
    let mut mask = 0u32;
    for (half, word) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        let mut zeros = 0u64;
        for b in bytes {
            zeros |= crate::text::zero_bytes(w ^ u64::from_ne_bytes([b; 8]));
        }
        // the eight high bits, into the low byte (no carry crosses a byte)
        let bits = ((zeros >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32;
        mask |= bits << (8 * half);
    }
    mask
}

/// Whether `hay` holds one of `bytes`.
#[inline]
pub fn holds_any<const N: usize>(hay: &[u8], bytes: [u8; N]) -> bool {
    let n = hay.len();
    if n < 16 {
        return hay.iter().any(|x| bytes.contains(x));
    }
    let mut k = 0;
    while k + 16 <= n {
        if mask16(hay, k, bytes) != 0 {
            return true;
        }
        k += 16;
    }
    // the last sixteen bytes: those read already held none
    k < n && mask16(hay, n - 16, bytes) != 0
}

/// The places of `byte` in `hay`, in order, sixty-four bytes a mask.
pub fn each_byte(hay: &[u8], byte: u8) -> impl Iterator<Item = usize> + '_ {
    places(hay, move |hay, at| {
        let mut mask = 0u64;
        if at + 64 <= hay.len() {
            for k in 0..4 {
                mask |= u64::from(mask16(hay, at + 16 * k, [byte])) << (16 * k);
            }
            return (mask, at + 64);
        }
        for (k, &x) in hay[at..].iter().enumerate() {
            mask |= u64::from(x == byte) << k;
        }
        (mask, hay.len())
    })
}

/// The places a mask of each block of `hay` gives, in order: `block(hay, at)` is the mask
/// of the block from `at` (bit 0 for `at`) and where the next block starts.
fn places<F: Fn(&[u8], usize) -> (u64, usize)>(hay: &[u8], block: F) -> Places<'_, F> {
    Places {
        hay,
        read: block,
        block: 0,
        mask: 0,
        next: 0,
    }
}

/// The iterator of `places`.
struct Places<'a, F> {
    hay: &'a [u8],
    read: F,      // a block's mask, and where the next block starts
    block: usize, // where the block that `mask` is of starts
    mask: u64,    // its places not given yet, a bit each
    next: usize,  // where the next block starts
}

impl<F: Fn(&[u8], usize) -> (u64, usize)> Iterator for Places<'_, F> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            if self.next >= self.hay.len() {
                return None;
            }
            self.block = self.next;
            (self.mask, self.next) = (self.read)(self.hay, self.block);
        }
        let k = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(self.block + k)
    }
}

/// The mask of the last `hay.len() - at` bytes of `hay` (fewer than sixteen), bit 0 for the
/// byte at `at`: read as the block that ends with `hay` where it has sixteen bytes (no copy),
/// else byte by byte.
#[inline]
pub fn tail_mask<const N: usize>(hay: &[u8], at: usize, bytes: [u8; N]) -> u32 {
    let n = hay.len();
    debug_assert!(at <= n && n - at < 16);
    if n >= 16 {
        // the block's first 16 - (n - at) bytes are before `at`: shifted out
        mask16(hay, n - 16, bytes) >> (16 - (n - at))
    } else {
        (hay[at..].iter().enumerate()).fold(0, |m, (k, x)| m | u32::from(bytes.contains(x)) << k)
    }
}

/// The places in `hay` of any of `bytes`, in order, sixteen bytes a mask.
pub fn each_of<const N: usize>(hay: &[u8], bytes: [u8; N]) -> impl Iterator<Item = usize> + '_ {
    places(hay, move |hay, at| {
        if at + 16 <= hay.len() {
            (u64::from(mask16(hay, at, bytes)), at + 16)
        } else {
            (u64::from(tail_mask(hay, at, bytes)), hay.len())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xorshift;

    /// Bytes drawn from a few, `newline` among them one time in `every`.
    fn hay(seed: &mut u64, n: usize, every: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let r = xorshift(seed);
                if r % every == 0 {
                    b'\n'
                } else {
                    [b'a', b'T', b'C', 0x1b, 0x0b, 0x8a, 0x00, 0xff, 0x54 ^ 0x80]
                        [(r >> 8) as usize % 9]
                }
            })
            .collect()
    }

    #[test]
    fn a_block_s_mask_is_the_mask_byte_by_byte() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..50_000 {
            let h = hay(&mut seed, 40, 5);
            let at = (xorshift(&mut seed) % 25) as usize;
            let block: &[u8; 16] = h[at..at + 16].try_into().expect("16 bytes");
            let three = [b'T', b'C', 0x1b];
            let by_byte = |bytes: &[u8]| {
                (block.iter().enumerate())
                    .fold(0u32, |m, (k, x)| m | u32::from(bytes.contains(x)) << k)
            };
            assert_eq!(mask16(&h, at, three), by_byte(&three));
            assert_eq!(mask16_portable(block, three), by_byte(&three));
            assert_eq!(mask16(&h, at, [b'\n']), by_byte(b"\n"));
            assert_eq!(mask16_portable(block, [b'\n']), by_byte(b"\n"));
        }
    }

    #[test]
    fn each_byte_finds_what_memchr_finds() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let n = (xorshift(&mut seed) % 300) as usize;
            let every = 1 + xorshift(&mut seed) % 90;
            let h = hay(&mut seed, n, every);
            let want: Vec<usize> = memchr::memchr_iter(b'\n', &h).collect();
            assert_eq!(each_byte(&h, b'\n').collect::<Vec<_>>(), want, "{h:?}");
        }
    }

    #[test]
    fn each_of_finds_what_memchr3_finds() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let n = (xorshift(&mut seed) % 300) as usize;
            let every = 1 + xorshift(&mut seed) % 90;
            let h = hay(&mut seed, n, every);
            let want: Vec<usize> = memchr::memchr3_iter(b'T', b'C', 0x1b, &h).collect();
            let found: Vec<usize> = each_of(&h, [b'T', b'C', 0x1b]).collect();
            assert_eq!(found, want, "{h:?}");
            let at = (xorshift(&mut seed) % 16) as usize;
            if at <= n && n - at < 16 {
                let by_byte = (h[at..].iter().enumerate())
                    .fold(0u32, |m, (k, x)| m | u32::from(*x == b'T') << k);
                assert_eq!(tail_mask(&h, at, [b'T']), by_byte, "{h:?} {at}");
            }
        }
    }

    #[test]
    fn holds_any_answers_as_a_search_does() {
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        for _ in 0..50_000 {
            let n = (xorshift(&mut seed) % 80) as usize;
            let h = hay(&mut seed, n, 7);
            // most of the time only bytes none of the three
            let h: Vec<u8> = if xorshift(&mut seed) % 3 == 0 {
                h
            } else {
                h.iter()
                    .map(|&b| if b"TC\x1b".contains(&b) { b'x' } else { b })
                    .collect()
            };
            let want = h.iter().any(|b| b"TC\x1b".contains(b));
            assert_eq!(holds_any(&h, [b'T', b'C', 0x1b]), want, "{h:?}");
            let nl = h.contains(&b'\n');
            assert_eq!(holds_any(&h, [b'\n']), nl, "{h:?}");
        }
    }
}
