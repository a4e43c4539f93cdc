//! Byte-level helpers: numbers, the places where a daemon line starts, capture prefixes,
//! ISO and journald times. Everything here is total: bad input gives `None`, never a panic.

/// A `TIMELINE,` line's marker.
pub const TIMELINE: &[u8] = b"TIMELINE,";

/// An integer as the daemon prints it (`123`, `-4`, surrounding spaces allowed); `None`
/// when it is not one or does not fit in 64 bits.
#[inline]
pub fn parse_int(raw: &[u8]) -> Option<i64> {
    // most numbers of a log are a few plain digits: no sign, no space, too short to overflow
    short_number(raw).or_else(|| parse_int_slowly(raw))
}

/// The number that `raw` spells in 1 to 18 plain digits and nothing else (None: anything
/// else, which `parse_int` may still read).
#[inline]
pub fn short_number(raw: &[u8]) -> Option<i64> {
    if raw.is_empty() || raw.len() > 18 {
        return None;
    }
    plain_digits(raw)
}

/// `parse_int` of what is not a few plain digits.
#[cold]
fn parse_int_slowly(raw: &[u8]) -> Option<i64> {
    let s = trim(raw);
    let (neg, digits) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    Some(if neg { -v } else { v })
}

/// The number that `raw` (at most 18 bytes) spells in plain digits, read in one pass (None:
/// a byte that is not a digit).
#[inline]
pub fn plain_digits(raw: &[u8]) -> Option<i64> {
    let mut v = 0i64;
    for &b in raw {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + i64::from(d); // 18 digits fit
    }
    Some(v)
}

/// A duration field: `123` or `123ms`.
pub fn parse_ms(raw: &[u8]) -> Option<i64> {
    parse_int(raw.strip_suffix(b"ms").unwrap_or(raw))
}

/// Eight bytes of `bytes` from `at` (which has eight), as one word.
fn word_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Whether `a` and `b` are the same bytes, compared a word at a time from their ends (where
/// the job ids of one log differ) and inline: for the short names compared on every line,
/// where a call to `bcmp` costs more than the comparison.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let mut k = n;
    while k >= 8 {
        k -= 8;
        if word_at(a, k) != word_at(b, k) {
            return false;
        }
    }
    // the first k (< 8) bytes: the first word covers them
    k == 0 || word_at(a, 0) == word_at(b, 0)
}

/// Whether `key=` occurs in `hay`, looked for at each `=` (a line holds a few): a search
/// for the whole of it costs more to set up than this costs.
#[inline]
pub fn holds_key(hay: &[u8], key: &[u8]) -> bool {
    let mut from = 0;
    while let Some(eq) = find_byte(&hay[from..], b'=') {
        let eq = from + eq;
        if hay[..eq].ends_with(key) {
            return true;
        }
        from = eq + 1;
    }
    false
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of each zero byte of `v`, exactly (no carry crosses a byte).
pub(crate) fn zero_bytes(v: u64) -> u64 {
    !(((v & LOW7) + LOW7) | v | LOW7)
}

/// The first `byte` of `hay`, eight bytes at a time: for the few bytes of a field, where
/// setting up memchr's search costs more than the search.
pub fn find_byte(hay: &[u8], byte: u8) -> Option<usize> {
    let n = hay.len();
    if n < 8 {
        return hay.iter().position(|&b| b == byte);
    }
    let pattern = u64::from_ne_bytes([byte; 8]);
    let at = |k: usize| {
        let m = zero_bytes(word_at(hay, k) ^ pattern);
        (m != 0).then(|| k + (m.trailing_zeros() / 8) as usize)
    };
    let mut k = 0;
    while k + 8 <= n {
        if let Some(found) = at(k) {
            return Some(found);
        }
        k += 8;
    }
    // the last eight bytes: those read already held none
    if k < n {
        at(n - 8)
    } else {
        None
    }
}

/// Whether `bytes` holds a `T`, a `C` or an ESC, sixteen bytes at a time: where the rest of
/// a line is known to begin no daemon line (`find_line_start` looks only at those bytes).
#[inline]
pub fn holds_marker(bytes: &[u8]) -> bool {
    crate::bytemask::holds_any(bytes, [b'T', b'C', 0x1b])
}

/// `raw` without leading and trailing ASCII whitespace.
pub fn trim(raw: &[u8]) -> &[u8] {
    let start = raw
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(raw.len());
    let end = raw
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &raw[start..end.max(start)]
}

/// Whether the literal `needle` occurs in `hay`. Its searcher is built once, on first use:
/// `memmem::find` would build one per call, which costs more than searching a log line.
#[macro_export]
macro_rules! contains {
    ($hay:expr, $needle:literal) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        FINDER.find($hay).is_some()
    }};
}

fn digits_at(line: &[u8], at: usize, n: usize) -> bool {
    line.len() >= at + n && line[at..at + n].iter().all(u8::is_ascii_digit)
}

/// `YYYY-MM-DDTHH:MM:SS` at `at`.
pub fn date_at(line: &[u8], at: usize) -> bool {
    // its nineteen bytes against the shape, a 0 for each digit (in a loop of known length:
    // every stdout line is asked)
    const SHAPE: &[u8; 19] = b"0000-00-00T00:00:00";
    let Some(date) = line.get(at..).and_then(|rest| rest.get(..19)) else {
        return false;
    };
    date.iter().zip(SHAPE).all(|(&b, &s)| match s {
        b'0' => b.is_ascii_digit(),
        _ => b == s,
    })
}

const LEVELS: [&[u8]; 5] = [b"TRACE", b"DEBUG", b"INFO", b"WARN", b"ERROR"];

/// ` *(TRACE|DEBUG|INFO|WARN|ERROR) ` at `at`.
pub fn level_at(line: &[u8], mut at: usize) -> bool {
    while line.get(at) == Some(&b' ') {
        at += 1;
    }
    LEVELS.iter().any(|lv| {
        line.len() > at + lv.len() && &line[at..at + lv.len()] == *lv && line[at + lv.len()] == b' '
    })
}

/// An ANSI SGR sequence `ESC [ [0-9;]* m` at `at`: its end.
fn sgr_end(line: &[u8], at: usize) -> Option<usize> {
    if line.get(at) != Some(&0x1b) || line.get(at + 1) != Some(&b'[') {
        return None;
    }
    let mut k = at + 2;
    while let Some(&b) = line.get(k) {
        if b == b'm' {
            return Some(k + 1);
        }
        if !(b.is_ascii_digit() || b == b';') {
            return None;
        }
        k += 1;
    }
    None
}

/// A stdout tracing line starts at `at`: its time, after any SGR sequences.
pub fn stdout_start_at(line: &[u8], mut at: usize) -> bool {
    while let Some(end) = sgr_end(line, at) {
        at = end;
    }
    date_at(line, at)
}

/// Where a daemon line begins at `at`: `TIMELINE,`, `CUZK_X: `, an SGR-coloured stdout
/// line's time, or a plain stdout line's time followed by its level.
pub fn line_start_at(line: &[u8], at: usize) -> bool {
    let rest = &line[at..];
    if rest.starts_with(TIMELINE) {
        return true;
    }
    if rest.starts_with(b"CUZK_") {
        let name = rest[5..]
            .iter()
            .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_')
            .count();
        return name > 0 && rest[5 + name..].starts_with(b": ");
    }
    if rest.first() == Some(&0x1b) {
        return sgr_end(line, at).is_some_and(|e| date_at(line, e));
    }
    if date_at(line, at) {
        let mut k = at + 19;
        if line.get(k) == Some(&b'.') {
            k += 1;
            let start = k;
            while line.get(k).is_some_and(u8::is_ascii_digit) {
                k += 1;
            }
            if k == start {
                return false;
            }
        }
        if line.get(k) == Some(&b'Z') {
            k += 1;
        }
        if line.get(k) != Some(&b' ') {
            return false;
        }
        return level_at(line, k);
    }
    false
}

/// The first place at or after `from` where a daemon line begins.
pub fn find_line_start(line: &[u8], from: usize) -> Option<usize> {
    let mut best: Option<usize> = None;
    // every marker holds a 'T' (TIMELINE, the date's T), a 'C' (CUZK_) or an ESC
    for q in crate::bytemask::each_of(line.get(from..)?, [b'T', b'C', 0x1b]) {
        let q = from + q;
        if let Some(b) = best {
            if q > b + 10 {
                break;
            }
        }
        // a line begins at a T only as TIMELINE, at a C only as CUZK_, and a date's T
        // follows a digit: other places are not looked at further
        let next = line.get(q + 1).copied();
        let mut cands = [usize::MAX; 2];
        if match line[q] {
            b'T' => next == Some(b'I'),
            b'C' => next == Some(b'U'),
            _ => true,
        } {
            cands[0] = q;
        }
        if line[q] == b'T' && q >= from + 10 && line[q - 1].is_ascii_digit() {
            cands[1] = q - 10; // a date whose T this is
        }
        for c in cands {
            if c != usize::MAX && best.is_none_or(|b| c < b) && line_start_at(line, c) {
                best = Some(c);
            }
        }
    }
    best
}

/// Could `head` be the first part of a daemon line that another line cut?
pub fn plausible_head(head: &[u8]) -> bool {
    if head.is_empty() {
        return false;
    }
    head.starts_with(TIMELINE)
        || TIMELINE.starts_with(head)
        || head.starts_with(b"CUZK_")
        || b"CUZK_".starts_with(head)
        || head.starts_with(b"\x1b[")
        || date_head(head)
        || stdout_start_at(head, 0)
}

/// `\d{1,4}(-(\d{1,2}(-(\d{1,2}(T.*)?)?)?)?)?` matching the whole of `head`.
fn date_head(head: &[u8]) -> bool {
    let mut k = 0;
    let run = |k: &mut usize, max: usize| {
        let s = *k;
        while *k < head.len() && *k - s < max && head[*k].is_ascii_digit() {
            *k += 1;
        }
        *k - s
    };
    if run(&mut k, 4) == 0 {
        return false;
    }
    for _ in 0..2 {
        if k == head.len() {
            return true;
        }
        if head[k] != b'-' {
            return false;
        }
        k += 1;
        if k == head.len() {
            return true;
        }
        if run(&mut k, 2) == 0 {
            return false;
        }
    }
    k == head.len() || head[k] == b'T'
}

/// Remove SGR colour sequences.
pub fn strip_sgr(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let mut k = 0;
    while k < line.len() {
        if let Some(end) = sgr_end(line, k) {
            k = end;
        } else {
            out.push(line[k]);
            k += 1;
        }
    }
    out
}

/// The `key=value` pairs of a line (`[a-z_]+=\S+`), later keys winning.
pub fn kv_pairs(line: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out: Vec<(&[u8], &[u8])> = Vec::new();
    let mut pos = 0;
    while let Some(off) = memchr::memchr(b'=', &line[pos..]) {
        let q = pos + off;
        let mut p = q;
        while p > pos && (line[p - 1].is_ascii_lowercase() || line[p - 1] == b'_') {
            p -= 1;
        }
        let mut e = q + 1;
        while e < line.len() && !line[e].is_ascii_whitespace() {
            e += 1;
        }
        if p == q || e == q + 1 {
            pos = q + 1;
            continue;
        }
        out.push((&line[p..q], &line[q + 1..e]));
        pos = e;
    }
    out
}

/// The value of `key` among `pairs` (the last one).
pub fn kv_get<'a>(pairs: &[(&[u8], &'a [u8])], key: &[u8]) -> Option<&'a [u8]> {
    pairs.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// A wall-clock time: microseconds since 1970 (UTC when `aware`, else a local time that
/// names no zone, counted as if it were UTC).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wall {
    pub us: i64,
    pub aware: bool,
}

const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A calendar time as microseconds since 1970 (`None` when it is no valid date).
pub fn civil_us(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, us: i64) -> Option<i64> {
    if !(1..=9999).contains(&y)
        || !(1..=12).contains(&mo)
        || d < 1
        || d > days_in_month(y, mo)
        || h > 23
        || mi > 59
        || s > 59
    {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((((days * 24 + h) * 60 + mi) * 60 + s) * 1_000_000 + us)
}

fn num(line: &[u8], at: usize, n: usize) -> Option<i64> {
    if digits_at(line, at, n) {
        parse_int(&line[at..at + n])
    } else {
        None
    }
}

/// Fractional seconds `[.,]digits` at `at` (1-9 digits): (microseconds, end).
fn fraction(line: &[u8], at: usize, commas: bool) -> (i64, usize) {
    let sep = line.get(at);
    if sep != Some(&b'.') && !(commas && sep == Some(&b',')) {
        return (0, at);
    }
    let start = at + 1;
    let mut k = start;
    while k < line.len() && k - start < 9 && line[k].is_ascii_digit() {
        k += 1;
    }
    if k == start {
        return (0, at);
    }
    let mut us = 0i64;
    for i in 0..6 {
        us = us * 10
            + line
                .get(start + i)
                .filter(|_| start + i < k)
                .map_or(0, |b| i64::from(b - b'0'));
    }
    (us, k)
}

/// `host ident[pid]: ` at `at` (the tail of a journalctl prefix): its end.
fn host_ident_end(line: &[u8], at: usize) -> Option<usize> {
    // a host name is letters, digits, `-`, `.` and `_` (a TIMELINE line cut inside a
    // window-PoSt id, `TIMELINE,..,wdpost-1000-4-[225 CUZK_TIMING: ..`, is not a host)
    let mut k = at;
    while k < line.len() && (line[k].is_ascii_alphanumeric() || b"-._".contains(&line[k])) {
        k += 1;
    }
    if k == at || line.get(k) != Some(&b' ') {
        return None;
    }
    k += 1;
    let id = k;
    while k < line.len() && !line[k].is_ascii_whitespace() && line[k] != b':' && line[k] != b'[' {
        k += 1;
    }
    if k == id {
        return None;
    }
    if line.get(k) == Some(&b'[') {
        let d = k + 1;
        let mut e = d;
        while e < line.len() && line[e].is_ascii_digit() {
            e += 1;
        }
        if e > d && line.get(e) == Some(&b']') {
            k = e + 1;
        }
    }
    if line.get(k) == Some(&b':') && line.get(k + 1) == Some(&b' ') {
        Some(k + 2)
    } else {
        None
    }
}

/// An ISO time `YYYY-MM-DDTHH:MM:SS[.f][Z|±HH[:]MM]` at the start: (wall, end, has zone).
pub fn iso_time(line: &[u8], commas: bool) -> Option<(Option<Wall>, usize, bool)> {
    if !date_at(line, 0) {
        return None;
    }
    let (us, mut k) = fraction(line, 19, commas);
    let mut offset_min: Option<i64> = None;
    match line.get(k) {
        Some(b'Z') => {
            offset_min = Some(0);
            k += 1;
        }
        Some(&c) if c == b'+' || c == b'-' => {
            let h = num(line, k + 1, 2);
            let colon = line.get(k + 3) == Some(&b':');
            let m = num(line, k + 3 + usize::from(colon), 2);
            if let (Some(h), Some(m)) = (h, m) {
                let sign = if c == b'-' { -1 } else { 1 };
                offset_min = Some(sign * (h * 60 + m));
                k += 5 + usize::from(colon);
            }
        }
        _ => {}
    }
    let wall = (|| {
        let us_local = civil_us(
            num(line, 0, 4)?,
            num(line, 5, 2)?,
            num(line, 8, 2)?,
            num(line, 11, 2)?,
            num(line, 14, 2)?,
            num(line, 17, 2)?,
            us,
        )?;
        Some(match offset_min {
            Some(off) => Wall {
                us: us_local - off * 60_000_000,
                aware: true,
            },
            None => Wall {
                us: us_local,
                aware: false,
            },
        })
    })();
    Some((wall, k, offset_min.is_some()))
}

/// A capture prefix at the start of a physical line: journalctl `short`/`short-precise`
/// (`Mar 16 09:12:37[.338119] host ident[pid]: `), `short-iso`, or an ISO time first
/// (`docker logs -t`). Returns its length and clock (the clock needs the year for
/// journalctl's short forms). A stdout tracing line's own time is not a prefix.
pub fn capture_prefix(line: &[u8], year: i64) -> Option<(usize, Option<Wall>)> {
    let first = *line.first()?;
    if first.is_ascii_digit() {
        let (wall, k, zoned) = iso_time(line, true)?;
        if line.get(k) != Some(&b' ') {
            return None;
        }
        if let Some(end) = host_ident_end(line, k + 1) {
            return Some((end, wall));
        }
        if !zoned || level_at(line, k) {
            return None; // a stdout tracing line's own time, not a prefix
        }
        return Some((k + 1, wall));
    }
    if !first.is_ascii_uppercase() || line.len() < 16 {
        return None;
    }
    let month = MONTHS.iter().position(|m| line.starts_with(m))? as i64 + 1;
    if line[3] != b' ' {
        return None;
    }
    // the day: `16`, ` 6`, or `6`
    let (day, k) = if line[4] == b' ' && line[5].is_ascii_digit() && line[6] == b' ' {
        (i64::from(line[5] - b'0'), 6)
    } else if digits_at(line, 4, 2) && line[6] == b' ' {
        (parse_int(&line[4..6])?, 6)
    } else if line[4].is_ascii_digit() && line[5] == b' ' {
        (i64::from(line[4] - b'0'), 5)
    } else {
        return None;
    };
    let t = k + 1;
    if !(digits_at(line, t, 2)
        && line.get(t + 2) == Some(&b':')
        && digits_at(line, t + 3, 2)
        && line.get(t + 5) == Some(&b':')
        && digits_at(line, t + 6, 2))
    {
        return None;
    }
    let (us, e) = fraction(line, t + 8, false);
    if line.get(e) != Some(&b' ') {
        return None;
    }
    let end = host_ident_end(line, e + 1)?;
    let wall = civil_us(
        year,
        month,
        day,
        num(line, t, 2)?,
        num(line, t + 3, 2)?,
        num(line, t + 6, 2)?,
        us,
    )
    .map(|us| Wall { us, aware: false });
    Some((end, wall))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_of_any_size_never_panic() {
        assert_eq!(parse_int(b" 42 "), Some(42));
        assert_eq!(parse_int(b"-7"), Some(-7));
        assert_eq!(parse_int(b"99999999999999999999999"), None);
        assert_eq!(parse_int(b""), None);
        assert_eq!(parse_int(b"1e3"), None);
        assert_eq!(parse_ms(b"12ms"), Some(12));
        assert_eq!(
            parse_int(b"999999999999999999"),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"9223372036854775808"), None);
        assert_eq!(parse_int(b"-9223372036854775808"), None);
        assert_eq!(parse_int(b"007"), Some(7));
        assert_eq!(parse_int(b"+7"), Some(7));
        assert_eq!(parse_int(b"-"), None);
        assert_eq!(parse_int(b"1 2"), None);
    }

    #[test]
    fn bytes_compared_a_word_at_a_time_are_equal_as_slices_are() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            crate::xorshift(&mut seed);
            let n = (seed % 40) as usize;
            let a: Vec<u8> = (0..n)
                .map(|k| b"ab"[(seed >> (k % 60)) as usize & 1])
                .collect();
            let mut b = a.clone();
            match (seed >> 40) % 4 {
                0 => {}
                1 if n > 0 => b[(seed >> 44) as usize % n] ^= 1, // one byte anywhere differs
                2 => b.push(b'a'),
                _ => {
                    b.pop();
                }
            }
            assert_eq!(same_bytes(&a, &b), a == b, "{a:?} {b:?}");
        }
    }

    #[test]
    fn a_key_is_found_at_its_equals_sign_as_a_search_finds_it() {
        let pieces: [&[u8]; 8] = [b"kind", b"=", b"ki", b"nd", b",", b"x", b"kind=", b"=="];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..50_000 {
            crate::xorshift(&mut seed);
            let mut hay = Vec::new();
            for k in 0..(seed % 7) as usize {
                hay.extend_from_slice(pieces[((seed >> (3 * k + 8)) % 8) as usize]);
            }
            let want = memchr::memmem::find(&hay, b"kind=").is_some();
            assert_eq!(
                holds_key(&hay, b"kind"),
                want,
                "{}",
                String::from_utf8_lossy(&hay)
            );
        }
    }

    #[test]
    fn a_date_is_told_by_its_shape_as_by_each_field() {
        // as it was written first: field by field
        let by_fields = |line: &[u8], at: usize| {
            digits_at(line, at, 4)
                && line.get(at + 4) == Some(&b'-')
                && digits_at(line, at + 5, 2)
                && line.get(at + 7) == Some(&b'-')
                && digits_at(line, at + 8, 2)
                && line.get(at + 10) == Some(&b'T')
                && digits_at(line, at + 11, 2)
                && line.get(at + 13) == Some(&b':')
                && digits_at(line, at + 14, 2)
                && line.get(at + 16) == Some(&b':')
                && digits_at(line, at + 17, 2)
        };
        let date = b"x2026-03-16T09:12:37.5Z";
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        for _ in 0..100_000 {
            crate::xorshift(&mut seed);
            let mut line = date[..(seed % 24) as usize].to_vec();
            // a byte or two changed: a digit, a separator, another byte
            for k in 0..(seed >> 8) % 3 {
                if !line.is_empty() {
                    let at = ((seed >> (12 + 8 * k)) as usize) % line.len();
                    line[at] = b"9-T:x\x00"[((seed >> (40 + 4 * k)) % 6) as usize];
                }
            }
            for at in 0..3 {
                let show = String::from_utf8_lossy(&line);
                assert_eq!(date_at(&line, at), by_fields(&line, at), "{show} {at}");
            }
        }
        assert!(date_at(date, 1) && !date_at(date, 0));
    }

    #[test]
    fn a_byte_is_found_eight_at_a_time_where_a_search_finds_it() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // a few kinds of byte, the high ones too (no carry may cross a byte)
        let kinds = [
            b',', b'T', b'C', 0x1b, b'a', 0x80, 0xff, 0x00, b'+', b'a', b'a',
        ];
        for _ in 0..20_000 {
            let n = (next() % 40) as usize;
            let bytes: Vec<u8> = (0..n)
                .map(|_| kinds[(next() % kinds.len() as u64) as usize])
                .collect();
            for byte in [b',', b'T', 0x00, 0xff, 0x80] {
                assert_eq!(
                    find_byte(&bytes, byte),
                    bytes.iter().position(|&b| b == byte),
                    "{bytes:?} {byte}"
                );
            }
            assert_eq!(
                holds_marker(&bytes),
                memchr::memchr3(b'T', b'C', 0x1b, &bytes).is_some(),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn line_starts() {
        let l = b"TIMELINE,77CUZK_TIMING: pre_lock_cpu_ms=1 mutex_wait_ms=2";
        assert_eq!(find_line_start(l, 1), Some(11));
        let s = b"2026-03-16T09:12:37.123456Z  INFO cuzk: x";
        assert!(line_start_at(s, 0));
        let a = b"TIMELINE,5,GPU_\x1b[2m2026-03-16T09:12:37.123456Z\x1b[0m";
        assert_eq!(find_line_start(a, 1), Some(15));
        let plain = b"xx2026-03-16T09:12:37.1Z ERROR cuzk: y";
        assert_eq!(find_line_start(plain, 1), Some(2));
        assert_eq!(find_line_start(b"2026-03-16T09:12:37Z no level", 1), None);
    }

    /// `find_line_start` as it was written first: every T, C and ESC tried.
    fn find_line_start_trying_all(line: &[u8], from: usize) -> Option<usize> {
        let mut best: Option<usize> = None;
        for q in memchr::memchr3_iter(b'T', b'C', 0x1b, line.get(from..)?) {
            let q = from + q;
            if best.is_some_and(|b| q > b + 10) {
                break;
            }
            let mut cands = [q, usize::MAX];
            if line[q] == b'T' && q >= from + 10 {
                cands[1] = q - 10;
            }
            for c in cands {
                if c != usize::MAX && best.is_none_or(|b| c < b) && line_start_at(line, c) {
                    best = Some(c);
                }
            }
        }
        best
    }

    #[test]
    fn a_line_start_is_found_wherever_trying_every_candidate_finds_it() {
        let pieces: [&[u8]; 16] = [
            b"TIMELINE,",
            b"CUZK_TIMING: ",
            b"CUZK_",
            b"2026-03-16T09:12:37Z  INFO ",
            b"2026-03-16T09:12:37.5 WARN ",
            b"2026-03-16",
            b"T09:12:37Z ",
            b"\x1b[2m",
            b"\x1b",
            b"T",
            b"C",
            b"TI",
            b"CU",
            b"7",
            b"x ",
            b"INFO ",
        ];
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        for _ in 0..100_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut line = Vec::new();
            for k in 0..(seed % 8) as usize {
                line.extend_from_slice(pieces[((seed >> (4 * k + 8)) % 16) as usize]);
            }
            for from in [0, 1, 2, 11] {
                assert_eq!(
                    find_line_start(&line, from),
                    find_line_start_trying_all(&line, from),
                    "{} from {from}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
    }

    #[test]
    fn heads() {
        assert!(plausible_head(b"TIMEL"));
        assert!(plausible_head(b"TIMELINE,12,GPU_"));
        assert!(plausible_head(b"2026-0"));
        assert!(plausible_head(b"\x1b[2m20"));
        assert!(!plausible_head(b"hello "));
    }

    #[test]
    fn prefixes() {
        let (n, w) =
            capture_prefix(b"Mar 16 09:12:37 gpu-host-1 cuzk[41231]: TIMELINE,1", 2026).unwrap();
        assert_eq!(n, 40);
        assert_eq!(w.unwrap().us, civil_us(2026, 3, 16, 9, 12, 37, 0).unwrap());
        let (n, w) = capture_prefix(b"Mar  6 09:12:37.338119 h c: x", 2026).unwrap();
        assert_eq!(n, 28);
        assert_eq!(w.unwrap().us % 1_000_000, 338_119);
        let (_, w) = capture_prefix(b"2026-03-16T09:12:37+0100 h cuzk[1]: x", 0).unwrap();
        assert!(w.unwrap().aware);
        // a TIMELINE line cut inside a window-PoSt id (its spaces) by a timing line
        let cut = b"2026-03-16T09:12:37.1Z TIMELINE,8561,GPU_START,w-[225 CUZK_TIMING: a=1";
        assert_eq!(capture_prefix(cut, 0).unwrap().0, 23);
        let (n, _) = capture_prefix(b"2026-03-16T09:12:37.123456789Z TIMELINE,1", 0).unwrap();
        assert_eq!(n, 31);
        assert!(capture_prefix(b"2026-03-16T09:12:37.123456Z  INFO cuzk: x", 0).is_none());
        assert!(capture_prefix(b"2026-03-16T09:12:37.1Z ERROR cuzk_core::engine: x", 0).is_none());
        assert!(capture_prefix(b"Feb 30 09:12:37 h c: x", 2026)
            .unwrap()
            .1
            .is_none());
    }

    #[test]
    fn pairs() {
        let p = kv_pairs(b"x worker_id=0 gpu=3 sub_id=1 a= =b");
        assert_eq!(kv_get(&p, b"gpu"), Some(&b"3"[..]));
        assert_eq!(kv_get(&p, b"worker_id"), Some(&b"0"[..]));
        assert_eq!(kv_get(&p, b"a"), None);
    }
}
