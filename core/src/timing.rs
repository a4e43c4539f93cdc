//! The C++ prover's timing lines (`CUZK_TIMING: ` / `CUZK_NTT_H: `): which line of a GPU
//! interval each one is, and its numbers.

use std::sync::LazyLock;

use memchr::memmem::Finder;

use crate::text::{parse_ms, trim};

// The lines of one GPU interval, in the order they are printed
// (docs/log-format.md#the-lines-of-one-gpu-interval). A holder moves forward through these stages.
pub const STAGE_LOCK: i8 = 0; // pre_lock_cpu_ms=.. mutex_wait_ms=..
pub const STAGE_POOL: i8 = 1; // d_a_cache allocated N MiB on gpu G (a GPU's first use)
pub const STAGE_PRESTAGE: i8 = 2; // prestage_setup=.. (phase-9 engines)
pub const STAGE_NTT_H: i8 = 3; // CUZK_NTT_H: d_b_alloc=.. total=..
pub const STAGE_NTT_MSM: i8 = 4; // gpu_tid=0 ntt_msm_h_ms=..
pub const STAGE_BARRIER: i8 = 5; // gpu_tid=0 barrier_wait_ms=..
pub const STAGE_BATCH: i8 = 6; // gpu_tid=0 batch_add_ms=..
pub const STAGE_TAIL: i8 = 7; // gpu_tid=0 tail_msm_ms=.. gpu_total_ms=..
pub const STAGE_HELD: i8 = 8; // mutex_held_ms=.. total_start_fn_ms=..
pub const STAGE_EPILOGUE: i8 = 9; // epilogue_ms=.. pre_destructor_ms=.. (February 2026)

/// A line's numbers (the second is absent for most stages).
pub type Values = [Option<i64>; 2];

/// The value of the last whitespace-separated `key=value` token naming `key` (a token's
/// key ends at its first `=`). Read in place: a line has a handful of tokens.
fn value_of<'a>(body: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    body.rsplit(u8::is_ascii_whitespace)
        .find(|t| t.len() > key.len() && t[key.len()] == b'=' && t.starts_with(key))
        .map(|t| &t[key.len() + 1..])
}

/// The first ASCII whitespace byte (`u8::is_ascii_whitespace`) at or after `k`, or the end.
fn token_end(body: &[u8], mut k: usize) -> usize {
    // eight bytes at a time while none is below 0x21, as every whitespace byte is (the test
    // is exact for "is any byte below": a word that has one is read byte by byte)
    while let Some(word) = body.get(k..k + 8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        if w.wrapping_sub(0x2121_2121_2121_2121) & !w & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        k += 8;
    }
    while k < body.len() && !body[k].is_ascii_whitespace() {
        k += 1;
    }
    k
}

/// `value_of` for several keys, the line read once (its tokens in order, the last naming a
/// key winning).
fn values_of<'a, const N: usize>(body: &'a [u8], keys: [&[u8]; N]) -> [Option<&'a [u8]>; N] {
    let mut out = [None; N];
    let mut k = 0;
    while k < body.len() {
        if body[k].is_ascii_whitespace() {
            k += 1;
            continue;
        }
        let start = k;
        k = token_end(body, k);
        let t = &body[start..k];
        for (key, slot) in keys.iter().zip(out.iter_mut()) {
            if t.len() > key.len() && t[key.len()] == b'=' && t.starts_with(key) {
                *slot = Some(&t[key.len() + 1..]);
            }
        }
    }
    out
}

/// The first two non-empty whitespace-separated tokens (empty when there are fewer).
fn first_two_tokens(body: &[u8]) -> [&[u8]; 2] {
    let mut out: [&[u8]; 2] = [b"", b""];
    let mut k = 0;
    for slot in &mut out {
        while k < body.len() && body[k].is_ascii_whitespace() {
            k += 1;
        }
        let start = k;
        k = token_end(body, k);
        *slot = &body[start..k];
    }
    out
}

fn need(body: &[u8], key: &[u8]) -> Option<i64> {
    parse_ms(value_of(body, key)?)
}

/// The number of a key `values_of` found (None: absent or not a number).
fn need_found(value: Option<&[u8]>) -> Option<i64> {
    parse_ms(value?)
}

/// The longest duration a timing line can plausibly carry (ms: about eleven days).
pub const MAX_DURATION_MS: i64 = 1_000_000_000;
/// The largest GPU ordinal a line can name: 2^16, past any machine's count (ordinals
/// numbered by a scheduler go past a few thousand), well within the model's i32 GPU column
/// and its several-hosts ids (host * 1000 + ordinal).
pub const MAX_GPU: i64 = 1 << 16;

/// What a C++ timing line is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timing {
    /// A line of a GPU interval's phases, with its numbers.
    Phase(i8, Values),
    /// A line that says nothing about the phases (setup, CPU threads, one-off messages).
    Other,
    /// A phase line that does not parse, or whose numbers are out of range.
    Bad,
}

/// The keys of the `gpu_tid=` lines about the phases.
const GPU_TID_KEYS: [&[u8]; 4] = [
    b"ntt_msm_h_ms=",
    b"barrier_wait_ms=",
    b"batch_add_ms=",
    b"tail_msm_ms=",
];

/// Whether a `gpu_tid=` line holds one of GPU_TID_KEYS anywhere. The daemon prints it
/// second: that token is looked at first, the whole line searched only if it is not one
/// (with searchers built once).
#[cfg(test)]
fn names_a_kernel_phase(body: &[u8]) -> bool {
    let [_, second] = first_two_tokens(body);
    names_a_kernel_phase_by(body, second)
}

/// `names_a_kernel_phase`, the line's second token found already.
fn names_a_kernel_phase_by(body: &[u8], second: &[u8]) -> bool {
    static FINDERS: LazyLock<[Finder<'static>; 4]> =
        LazyLock::new(|| GPU_TID_KEYS.map(Finder::new));
    GPU_TID_KEYS.iter().any(|k| second.starts_with(k))
        || FINDERS.iter().any(|f| f.find(body).is_some())
}

/// The number that `rest` begins with (1 to 18 plain digits) and what follows it.
#[inline]
fn number_then(rest: &[u8]) -> Option<(i64, &[u8])> {
    // the digits read and added up in one pass (a nineteenth is one too many)
    let (mut v, mut n) = (0i64, 0);
    for &b in rest {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if n == 18 {
            return None;
        }
        v = v * 10 + i64::from(d); // 18 digits fit
        n += 1;
    }
    (n > 0).then(|| (v, &rest[n..]))
}

/// The number after `key` at the start of `rest`, and what follows it.
#[inline]
fn keyed_number<'a>(rest: &'a [u8], key: &[u8]) -> Option<(i64, &'a [u8])> {
    number_then(rest.strip_prefix(key)?)
}

/// The kernel phases a `gpu_tid=` line names second, by their keys.
const GPU_TID_STAGES: [(&[u8], i8); 4] = [
    (b"ntt_msm_h_ms=", STAGE_NTT_MSM),
    (b"barrier_wait_ms=", STAGE_BARRIER),
    (b"batch_add_ms=", STAGE_BATCH),
    (b"tail_msm_ms=", STAGE_TAIL),
];

/// `classify` of the phase lines as the daemon prints them, read in one pass against their
/// shapes: `gpu_tid=<n> <phase>_ms=<n>` (then ` gpu_total_ms=<n>` for the tail),
/// `pre_lock_cpu_ms=<n> mutex_wait_ms=<n>`, `mutex_held_ms=<n>` (then
/// ` total_start_fn_ms=<n>`). None for any other line, which `classify` reads token by
/// token.
fn classify_plain(body: &[u8]) -> Option<Timing> {
    let (stage, vals, rest) = if let Some(rest) = body.strip_prefix(b"gpu_tid=") {
        let rest = number_then(rest)?.1.strip_prefix(b" ")?;
        let (key, stage) = GPU_TID_STAGES.iter().find(|(k, _)| rest.starts_with(k))?;
        let (v, rest) = number_then(&rest[key.len()..])?;
        match keyed_number(rest, b" gpu_total_ms=") {
            Some((total, rest)) if *stage == STAGE_TAIL => (*stage, [Some(v), Some(total)], rest),
            _ => (*stage, [Some(v), None], rest),
        }
    } else if let Some((cpu, rest)) = keyed_number(body, b"pre_lock_cpu_ms=") {
        let (wait, rest) = keyed_number(rest, b" mutex_wait_ms=")?;
        (STAGE_LOCK, [Some(cpu), Some(wait)], rest)
    } else if let Some((held, rest)) = keyed_number(body, b"mutex_held_ms=") {
        let rest = keyed_number(rest, b" total_start_fn_ms=").map_or(rest, |(_, r)| r);
        (STAGE_HELD, [Some(held), None], rest)
    } else {
        return None;
    };
    // the whole line read, its numbers in range (else `classify` says what it is)
    let in_range = vals.iter().flatten().all(|&v| v <= MAX_DURATION_MS);
    (rest.is_empty() && in_range).then_some(Timing::Phase(stage, vals))
}

/// Classify the text after `CUZK_TIMING: ` / `CUZK_NTT_H: `.
pub fn classify(body: &[u8], ntt_h: bool) -> Timing {
    if !ntt_h {
        if let Some(timing) = classify_plain(body) {
            return timing;
        }
    }
    classify_by_tokens(body, ntt_h)
}

/// `classify`, the line read token by token.
fn classify_by_tokens(body: &[u8], ntt_h: bool) -> Timing {
    let head = &body[..body.len().min(6)];
    // a gpu_tid line's tokens are found once, for both questions
    let gpu_tid = (!ntt_h && head == b"gpu_ti").then(|| first_two_tokens(body));
    let phase_line = ntt_h
        || matches!(head, b"pre_lo" | b"mutex_" | b"d_a_ca" | b"epilog")
        || body.starts_with(b"prestage_setup=")
        || gpu_tid.is_some_and(|[_, second]| names_a_kernel_phase_by(body, second));
    if !phase_line {
        return Timing::Other;
    }
    let values = match gpu_tid {
        Some(tokens) => gpu_tid_values(body, tokens),
        None => timing_values(body, ntt_h),
    };
    match values {
        Some((stage, vals)) => {
            let max = if stage == STAGE_POOL {
                MAX_GPU
            } else {
                MAX_DURATION_MS
            };
            if vals.iter().flatten().all(|v| (0..=max).contains(v)) {
                Timing::Phase(stage, vals)
            } else {
                Timing::Bad
            }
        }
        None => Timing::Bad,
    }
}

/// `timing_values` of a `gpu_tid=` line, its first two tokens found already.
fn gpu_tid_values(body: &[u8], [first, tok]: [&[u8]; 2]) -> Option<(i8, Values)> {
    if first.is_empty() || tok.is_empty() {
        return None;
    }
    let (key, value) = match memchr::memchr(b'=', tok) {
        Some(eq) => (&tok[..eq], &tok[eq + 1..]),
        None => (tok, &b""[..]),
    };
    match key {
        b"ntt_msm_h_ms" => Some((STAGE_NTT_MSM, [Some(parse_ms(value)?), None])),
        b"barrier_wait_ms" => Some((STAGE_BARRIER, [Some(parse_ms(value)?), None])),
        b"batch_add_ms" => Some((STAGE_BATCH, [Some(parse_ms(value)?), None])),
        b"tail_msm_ms" => {
            let tail = parse_ms(value)?;
            let total = match value_of(body, b"gpu_total_ms") {
                Some(v) => Some(parse_ms(v)?),
                None => None,
            };
            Some((STAGE_TAIL, [Some(tail), total]))
        }
        _ => None,
    }
}

/// The keys of a `CUZK_NTT_H` line, in the order the daemon prints them.
const NTT_H_KEYS: [&[u8]; 7] = [
    b"d_b_alloc=",
    b"ntt_kernels=",
    b"coset_intt_sync=",
    b"msm_init=",
    b"msm_invoke=",
    b"msm_dtor=",
    b"total=",
];

/// `timing_values` of a `CUZK_NTT_H` line as the daemon prints it, read in one pass against
/// its shape: each of NTT_H_KEYS followed by `<n>ms`, one space between. None for any other
/// line, which `timing_values` reads token by token.
fn ntt_h_plain(body: &[u8]) -> Option<Values> {
    let mut ms = [0i64; 7];
    let mut rest = body;
    for (k, key) in NTT_H_KEYS.iter().enumerate() {
        if k > 0 {
            rest = rest.strip_prefix(b" ")?;
        }
        let (v, after) = keyed_number(rest, key)?;
        ms[k] = v;
        rest = after.strip_prefix(b"ms")?;
    }
    let alloc = ms[0].checked_add(ms[3])?; // d_b_alloc + msm_init
    rest.is_empty().then_some([Some(alloc), Some(ms[6])])
}

/// Parse the text after `CUZK_TIMING: ` / `CUZK_NTT_H: ` into (stage, numbers).
///
/// `None` for the lines that say nothing about the phases (setup, the CPU threads, async
/// dealloc, one-off messages) and for lines that do not parse.
pub fn timing_values(body: &[u8], ntt_h: bool) -> Option<(i8, Values)> {
    if ntt_h {
        if let Some(vals) = ntt_h_plain(body) {
            return Some((STAGE_NTT_H, vals));
        }
        let [alloc, msm_init, total] = values_of(body, [b"d_b_alloc", b"msm_init", b"total"]);
        let alloc = need_found(alloc)?.checked_add(match msm_init {
            Some(v) => parse_ms(v)?,
            None => 0,
        })?;
        return Some((STAGE_NTT_H, [Some(alloc), Some(need_found(total)?)]));
    }
    let head = &body[..body.len().min(6)];
    match head {
        b"gpu_ti" => gpu_tid_values(body, first_two_tokens(body)),
        b"pre_lo" => {
            let [cpu, wait] = values_of(body, [b"pre_lock_cpu_ms", b"mutex_wait_ms"]);
            Some((
                STAGE_LOCK,
                [Some(need_found(cpu)?), Some(need_found(wait)?)],
            ))
        }
        b"mutex_" => {
            let [held] = values_of(body, [b"mutex_held_ms"]);
            Some((STAGE_HELD, [Some(need_found(held)?), None]))
        }
        b"presta" if body.starts_with(b"prestage_setup=") => {
            let keys: [&[u8]; 4] = [b"sync_ms", b"trim_ms", b"alloc_ms", b"upload_ms"];
            if keys.iter().all(|k| value_of(body, k).is_some()) {
                let mut sum = 0i64;
                for k in keys {
                    sum = sum.checked_add(need(body, k)?)?;
                }
                return Some((STAGE_PRESTAGE, [Some(sum), None]));
            }
            if value_of(body, b"prestage_setup")?.starts_with(b"skip") {
                return Some((STAGE_PRESTAGE, [Some(0), None]));
            }
            let total = match value_of(body, b"total_ps_ms") {
                Some(v) => Some(parse_ms(v)?),
                None => None,
            };
            Some((STAGE_PRESTAGE, [total, None]))
        }
        b"d_a_ca" => {
            // printed under the lock by the first holder of a GPU (and at a proof-type change)
            let last = trim(body).rsplit(u8::is_ascii_whitespace).next()?;
            Some((STAGE_POOL, [Some(crate::text::parse_int(last)?), None]))
        }
        b"epilog" => {
            let pre = match value_of(body, b"pre_destructor_ms") {
                Some(v) => Some(parse_ms(v)?),
                None => None,
            };
            Some((STAGE_EPILOGUE, [Some(need(body, b"epilogue_ms")?), pre]))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ntt_h_line_is_read_in_one_pass_as_token_by_token() {
        let pieces: [&[u8]; 14] = [
            b"d_b_alloc=656ms",
            b"ntt_kernels=311ms",
            b"coset_intt_sync=119ms",
            b"msm_init=0ms",
            b"msm_invoke=266ms",
            b"msm_dtor=0ms",
            b"total=1355ms",
            b"total=7",
            b"msm_init=99999999999999999ms",
            b"d_b_alloc=ms",
            b"total=1ms1ms",
            b"x=1",
            b"total=-4ms",
            b"msm_init=999999999999999999ms",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let (mut plain, mut lines) = (0, 0);
        for _ in 0..200_000 {
            crate::xorshift(&mut seed);
            let mut body = Vec::new();
            for k in 0..7 {
                if k > 0 {
                    body.extend_from_slice(if (seed >> (50 + k)) % 16 == 0 {
                        b"  "
                    } else {
                        b" "
                    });
                }
                // most pieces the daemon's, in its order
                let piece = match (seed >> (3 * k + 4)) % 8 {
                    0 => 7 + ((seed >> (2 * k + 30)) % 7) as usize,
                    _ => k,
                };
                body.extend_from_slice(pieces[piece]);
            }
            if (seed >> 61) == 0 {
                body.push(b' ');
            }
            lines += 1;
            let by_tokens = {
                let [alloc, msm_init, total] =
                    values_of(&body, [b"d_b_alloc", b"msm_init", b"total"]);
                (|| {
                    let alloc = need_found(alloc)?.checked_add(match msm_init {
                        Some(v) => parse_ms(v)?,
                        None => 0,
                    })?;
                    Some([Some(alloc), Some(need_found(total)?)])
                })()
            };
            if let Some(vals) = ntt_h_plain(&body) {
                plain += 1;
                assert_eq!(Some(vals), by_tokens, "{}", String::from_utf8_lossy(&body));
            }
        }
        assert!(
            plain > lines / 20,
            "{plain} of {lines} lines read in one pass"
        );
    }

    #[test]
    fn a_number_is_read_in_one_pass_as_its_digits_counted_read_it() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            crate::xorshift(&mut seed);
            let n = (seed % 24) as usize;
            let rest: Vec<u8> = (0..n)
                .map(|k| b"0123456789 x/"[((seed >> (2 * k + 8)) % 13) as usize])
                .map(|b| if seed >> 62 == 0 { b } else { b.min(b'9') }) // runs of digits
                .collect();
            // as it was read first: the leading digits (19 at most) counted, then parsed
            let digits = rest
                .iter()
                .take(19)
                .take_while(|b| b.is_ascii_digit())
                .count();
            let want = crate::text::short_number(&rest[..digits]).map(|v| (v, &rest[digits..]));
            assert_eq!(
                number_then(&rest),
                want,
                "{}",
                String::from_utf8_lossy(&rest)
            );
        }
    }

    #[test]
    fn a_plain_phase_line_is_classified_as_token_by_token() {
        let pieces: [&[u8]; 20] = [
            b"gpu_tid=0",
            b"gpu_tidx=1",
            b"ntt_msm_h_ms=1440",
            b"barrier_wait_ms=0",
            b"batch_add_ms=655",
            b"tail_msm_ms=84",
            b"gpu_total_ms=2624",
            b"pre_lock_cpu_ms=34",
            b"mutex_wait_ms=1735",
            b"mutex_held_ms=2624",
            b"total_start_fn_ms=2659",
            b"x=1",
            b"batch_add_ms=99999999999999999",
            b"tail_msm_ms=1ms",
            b"tail_msm_ms=",
            b"Z=3",
            b"=5",
            b"xntt_msm_h_ms=5",
            b"mutex_wait_ms=-1",
            b"gpu_total_ms=1000000001",
        ];
        let seps: [&[u8]; 6] = [b" ", b" ", b" ", b" ", b"  ", b"\t"];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let (mut plain, mut lines) = (0, 0);
        for _ in 0..300_000 {
            crate::xorshift(&mut seed);
            let mut body = Vec::new();
            for k in 0..1 + (seed % 5) as usize {
                if k > 0 {
                    body.extend_from_slice(seps[((seed >> (40 + 2 * k)) % 6) as usize]);
                }
                // most lines begin as the phase lines do
                let first = [0, 1, 7, 9, 8][((seed >> 3) % 5) as usize];
                let piece = if k == 0 && seed % 5 > 0 {
                    first
                } else {
                    ((seed >> (5 * k + 8)) % 20) as usize
                };
                body.extend_from_slice(pieces[piece]);
            }
            if (seed >> 60) == 0 {
                body.push(b' ');
            }
            lines += 1;
            if let Some(t) = classify_plain(&body) {
                plain += 1;
                let show = String::from_utf8_lossy(&body);
                assert_eq!(t, classify_by_tokens(&body, false), "{show}");
            }
        }
        // the lines as the daemon prints them are all read in one pass
        for body in [
            &b"gpu_tid=0 tail_msm_ms=84 gpu_total_ms=2624"[..],
            b"gpu_tid=0 tail_msm_ms=84",
            b"gpu_tid=1 batch_add_ms=655",
            b"gpu_tid=0 ntt_msm_h_ms=1440",
            b"gpu_tid=0 barrier_wait_ms=0",
            b"pre_lock_cpu_ms=34 mutex_wait_ms=1735",
            b"mutex_held_ms=2624 total_start_fn_ms=2659",
            b"mutex_held_ms=2624",
        ] {
            let want = classify_by_tokens(body, false);
            assert!(matches!(want, Timing::Phase(..)));
            assert_eq!(classify_plain(body), Some(want));
        }
        assert!(
            plain > lines / 100,
            "{plain} of {lines} lines read in one pass"
        );
    }

    #[test]
    fn one_pass_reads_every_key_as_a_search_per_key_would() {
        // lines made of a few pieces (keys, `=`, numbers, whitespace of every kind)
        let pieces: [&[u8]; 12] = [
            b"total",
            b"d_b_alloc",
            b"=",
            b"12",
            b"ms",
            b" ",
            b"\t",
            b"\x0b",
            b"\r",
            b"x",
            b"total=",
            b"",
        ];
        let keys: [&[u8]; 3] = [b"total", b"d_b_alloc", b"x"];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut body = Vec::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = (seed % 9) as usize;
            if seed % 3 == 0 {
                body.extend_from_slice(b"gpu_tid=0_long\xff\x80_first_token");
            }
            for k in 0..n {
                body.extend_from_slice(pieces[((seed >> (5 * k + 8)) % 12) as usize]);
            }
            let found = values_of(&body, keys);
            for (key, got) in keys.iter().zip(found) {
                assert_eq!(got, value_of(&body, key), "{body:?}");
            }
            let mut toks = body
                .split(u8::is_ascii_whitespace)
                .filter(|t| !t.is_empty());
            let want = [toks.next().unwrap_or(b""), toks.next().unwrap_or(b"")];
            assert_eq!(first_two_tokens(&body), want, "{body:?}");
        }
    }

    #[test]
    fn every_line_of_an_interval() {
        assert_eq!(
            timing_values(b"pre_lock_cpu_ms=12 mutex_wait_ms=840", false),
            Some((STAGE_LOCK, [Some(12), Some(840)]))
        );
        assert_eq!(
            timing_values(
                b"d_b_alloc=720ms ntt_kernels=287ms msm_init=1ms total=1372ms",
                true
            ),
            Some((STAGE_NTT_H, [Some(721), Some(1372)]))
        );
        assert_eq!(
            timing_values(b"gpu_tid=0 ntt_msm_h_ms=1497", false),
            Some((STAGE_NTT_MSM, [Some(1497), None]))
        );
        assert_eq!(
            timing_values(b"gpu_tid=0 tail_msm_ms=82 gpu_total_ms=2629", false),
            Some((STAGE_TAIL, [Some(82), Some(2629)]))
        );
        assert_eq!(
            timing_values(b"mutex_held_ms=2629 total_start_fn_ms=2656", false),
            Some((STAGE_HELD, [Some(2629), None]))
        );
        assert_eq!(
            timing_values(b"d_a_cache allocated 4096 MiB on gpu 3", false),
            Some((STAGE_POOL, [Some(3), None]))
        );
        assert_eq!(timing_values(b"prep_msm_ms=1917", false), None);
        assert_eq!(timing_values(b"gpu_tid=0 ntt_msm_h_ms=1e400", false), None);
        assert_eq!(timing_values(b"gpu_tid=0", false), None);
        assert_eq!(classify(b"gpu_tid=0 ntt_msm_h_ms=abc", false), Timing::Bad);
        assert_eq!(classify(b"gpu_tid=0 ntt_msm_h_ms=-5", false), Timing::Bad);
        assert_eq!(
            classify(b"gpu_tid=0 ntt_msm_h_ms=99999999999", false),
            Timing::Bad
        );
        assert_eq!(classify(b"prep_msm_ms=1917", false), Timing::Other);
        // a key not in second place is found all the same (the line is then read by its
        // second token: not a phase it knows, so a bad line, not another kind of line)
        assert!(names_a_kernel_phase(b"gpu_tid=0 ntt_msm_h_ms=5"));
        assert!(names_a_kernel_phase(b"gpu_tid=0  x=1 batch_add_ms=5"));
        assert!(!names_a_kernel_phase(b"gpu_tid=0 msm_h_ms=5"));
        assert_eq!(classify(b"gpu_tid=0 x=1 tail_msm_ms=5", false), Timing::Bad);
        assert_eq!(classify(b"gpu_tid=0 x=1", false), Timing::Other);
        assert_eq!(
            classify(b"d_a_cache allocated 4096 MiB on gpu 5000000000", false),
            Timing::Bad
        );
        assert_eq!(
            timing_values(b"d_a_cache allocated 4096 MiB on gpu 65536", false),
            Some((STAGE_POOL, [Some(65536), None]))
        );
        assert_eq!(
            classify(b"pre_lock_cpu_ms=1 mutex_wait_ms=2", false),
            Timing::Phase(STAGE_LOCK, [Some(1), Some(2)])
        );
        assert_eq!(
            timing_values(
                b"prestage_setup=ok sync_ms=1 trim_ms=2 alloc_ms=2 upload_ms=9 total_ps_ms=16",
                false
            ),
            Some((STAGE_PRESTAGE, [Some(14), None]))
        );
    }
}
