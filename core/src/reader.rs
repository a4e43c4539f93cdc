//! The reading half of the scan: bytes in (any chunking), whole lines read into items.
//!
//! Physical lines lose their capture prefix (journalctl, container time stamps); a line
//! that another line cut is rejoined with its rest; each whole line becomes an [`Item`]: a
//! TIMELINE event with its fields parsed, a C++ timing line classified, a stdout line, or
//! something else. Nothing here depends on the records of a run, so the reader can run on
//! its own thread ahead of the builder that applies the items (`Builder::feed`).

use rustc_hash::FxHashMap as HashMap;

use crate::lines::{cpu_values, LineIndex};
use crate::text::{self, Wall, TIMELINE};
use crate::timing::{classify, Timing};

/// The plausible range of a TIMELINE stamp (ms since engine start: about 31 years), of a
/// partition number and of a worker id. Outside it a line is malformed: counted, skipped.
pub const MAX_STAMP_MS: i64 = 1_000_000_000_000;
pub const MAX_PARTITION: i64 = 1_000_000;
pub const MAX_WORKER: i64 = 1_000_000;
/// A cut line waits this many physical lines for its rest, then is taken as it is.
const FRAGMENT_WAIT_LINES: usize = 16;
/// A physical line longer than this is not read: its bytes are skipped, never held (memory
/// stays bounded whatever the input). It is counted as malformed when it begins as a
/// TIMELINE or timing line (a line of the daemon's lost), else as other.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// The first bytes of a line too long to read that say what it began as.
const OVERSIZED_HEAD_BYTES: usize = 256;
/// The capture's form is decided from this many first lines (from four when they agree).
const CAPTURE_VOTES: u32 = 16;

/// The TIMELINE events, in the order of `Event`'s numbers.
pub const EVENTS: [&[u8]; 7] = [
    b"SYNTH_START",
    b"SYNTH_END",
    b"GPU_QUEUE",
    b"CHAN_SEND",
    b"GPU_PICKUP",
    b"GPU_START",
    b"GPU_END",
];
pub const EV_SYNTH_START: u8 = 0;
pub const EV_SYNTH_END: u8 = 1;
pub const EV_PICKUP: u8 = 4;
pub const EV_GPU_START: u8 = 5;
pub const EV_GPU_END: u8 = 6;

/// Bytes kept in a batch's `text`: `start..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    start: u32,
    end: u32,
}

/// The fields of a well-formed TIMELINE line.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub stamp: i64,
    pub event: u8,
    pub job: Span,
    /// The job's number in the file (the reader's, first seen first, whatever the run).
    pub job_no: u32,
    pub partition: Option<i64>,
    pub worker: Option<i64>,
    /// The partition came as `snap_partition=`.
    pub snap: bool,
    /// `kind=` of a SYNTH_START (non-empty).
    pub kind: Option<Span>,
}

/// One whole line, read.
#[derive(Clone, Copy, Debug)]
pub enum Item {
    /// A TIMELINE line: its first field as a number (what a restart is told by), and its
    /// fields when it is well formed (None: malformed).
    Timeline {
        line_no: u64,
        first: Option<i64>,
        event: Option<Event>,
    },
    /// A C++ timing line.
    Timing(Timing),
    /// A CPU path figure of the timing line before (`lines::cpu_values`).
    Cpu {
        line_no: u64,
        kind: u8,
        value: i64,
    },
    /// A stdout tracing line: whether it says the engine started and names cuzk, and its
    /// text when it may map workers to GPUs or give the wall clock.
    Stdout {
        line_no: u64,
        engine_start: bool,
        cuzk: bool,
        text: Option<Span>,
    },
    /// A line of something else (or a part of one).
    Other,
    /// A cut line was rejoined.
    Spliced,
    /// The capture prefix of the physical line being read, and its clock (None: no prefix).
    Prefix(Option<Option<Wall>>),
    /// The lines that landed inside a cut line follow; then `Outer`, the cut line itself,
    /// then `OuterDone`.
    Inners,
    Outer,
    OuterDone,
}

/// Items read from some bytes, with the texts they point into.
#[derive(Default)]
pub struct Batch {
    pub items: Vec<Item>,
    pub text: Vec<u8>,
}

impl Batch {
    pub fn clear(&mut self) {
        self.items.clear();
        self.text.clear();
    }

    /// The bytes of a span of this batch.
    pub fn get(&self, s: Span) -> &[u8] {
        &self.text[s.start as usize..s.end as usize]
    }

    fn keep(&mut self, bytes: &[u8]) -> Span {
        let start = self.text.len() as u32;
        self.text.extend_from_slice(bytes);
        Span {
            start,
            end: self.text.len() as u32,
        }
    }
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Capture {
    #[default]
    Undecided,
    Plain,
    Prefixed,
}

struct Fragment {
    head: Vec<u8>,
    line_no: u64,
    inners: Vec<(Vec<u8>, u64)>,
}

/// Reads a log's bytes into items; keeps what belongs to the file, not to a run.
#[derive(Default)]
pub struct Reader {
    pub bytes_read: u64,
    pub lines_read: u64,
    year: Option<i64>,
    tail: Vec<u8>,
    skipping: bool, // inside a line longer than MAX_LINE_BYTES: drop bytes until its newline
    fragment: Option<Fragment>,
    prefixed: bool, // the last Prefix item told of a prefix
    capture: Capture,
    /// Decided plain, the last physical line began with a capture's prefix before a daemon
    /// line (`later_prefix`): a second such line in a row is a capture's, not a cut line's.
    later: bool,
    votes: [u32; 2],
    jobs: JobNumbers,
    /// Where the lines start, and the last bytes read.
    pub index: LineIndex,
}

/// A number for each job id of the file, first seen first. Looked up here, on the thread
/// that reads, so that the thread that builds the records (the busier one) looks up a
/// number rather than hashing and comparing the name.
#[derive(Default)]
struct JobNumbers {
    numbers: HashMap<Vec<u8>, u32>,
    // the jobs of the last lines: a few jobs are proved at once, their lines interleaved,
    // and comparing a name with each costs less than hashing it and reading the table
    recent: [(Vec<u8>, u32); RECENT_JOBS],
    next: usize, // the slot of `recent` the next job looked up replaces
}

/// How many jobs `JobNumbers` keeps at hand.
const RECENT_JOBS: usize = 4;

impl JobNumbers {
    fn number(&mut self, job: &[u8]) -> u32 {
        // a slot's number is one more than the job's (0: an empty slot)
        if let Some((_, n)) =
            (self.recent.iter()).find(|(name, n)| *n > 0 && text::same_bytes(name, job))
        {
            return n.wrapping_sub(1);
        }
        let n = match self.numbers.get(job) {
            Some(&n) => n,
            None => {
                let n = self.numbers.len() as u32;
                self.numbers.insert(job.to_vec(), n);
                n
            }
        };
        let slot = &mut self.recent[self.next];
        slot.0.clear();
        slot.0.extend_from_slice(job);
        slot.1 = n.wrapping_add(1);
        self.next = (self.next + 1) % RECENT_JOBS;
        n
    }
}

fn current_year() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    // good enough for a guess: 365.2425-day years
    1970 + secs / 31_556_952
}

/// The event a TIMELINE field names, by its number in EVENTS.
fn event_number(field: &[u8]) -> Option<u8> {
    // a match on the bytes compares in place (a search of EVENTS compares each through memcmp)
    Some(match field {
        b"SYNTH_START" => 0,
        b"SYNTH_END" => 1,
        b"GPU_QUEUE" => 2,
        b"CHAN_SEND" => 3,
        b"GPU_PICKUP" => 4,
        b"GPU_START" => 5,
        b"GPU_END" => 6,
        _ => return None,
    })
}

/// The head of a TIMELINE line, `TIMELINE,<digits>,<EVENT>,`: its stamp (None: too long to
/// be read here), its second and third commas (after the stamp, after the event) and its
/// event.
#[derive(Clone, Copy)]
struct Head {
    stamp: Option<i64>,
    c2: usize,
    c3: usize,
    event: u8,
}

/// The head of `line` (None: not a TIMELINE line, or one of another head).
fn timeline_head(line: &[u8]) -> Option<Head> {
    let rest = line.strip_prefix(TIMELINE)?;
    let digits = text::find_byte(rest, b',')?;
    let stamp = &rest[..digits];
    let value = if digits <= 18 {
        Some(text::plain_digits(stamp)?)
    } else if stamp.iter().all(u8::is_ascii_digit) {
        None
    } else {
        return None;
    };
    if digits == 0 {
        return None;
    }
    let c2 = TIMELINE.len() + digits;
    let field = &line[c2 + 1..];
    let len = text::find_byte(field, b',')?;
    Some(Head {
        stamp: value,
        c2,
        c3: c2 + 1 + len,
        event: event_number(&field[..len])?,
    })
}

/// Where another daemon line could first begin inside `line`: past the head of a TIMELINE
/// line (`TIMELINE,<stamp>,<EVENT>,`) or the name of a timing line, where none can (no
/// `TI`, `CU`, ESC, or digits followed by `-` there), else at 1. Most of the capital T and
/// C a line start is searched by are in those heads.
fn inner_search_from(line: &[u8]) -> usize {
    if line.starts_with(TIMELINE) {
        return timeline_head(line).map_or(1, |head| head.c3 + 1);
    }
    [&b"CUZK_TIMING: "[..], b"CUZK_NTT_H: "]
        .iter()
        .find(|name| line.starts_with(name))
        .map_or(1, |name| name.len())
}

/// The `key=value` items of a TIMELINE detail (a bare word is a key with no value).
fn detail_pairs(detail: &[u8]) -> Vec<(&[u8], &[u8])> {
    detail
        .split(|&b| b == b',')
        .filter_map(|item| match memchr::memchr(b'=', item) {
            Some(eq) => Some((text::trim(&item[..eq]), text::trim(&item[eq + 1..]))),
            None => {
                let t = text::trim(item);
                (!t.is_empty()).then_some((t, &b""[..]))
            }
        })
        .collect()
}

/// The first item of a TIMELINE detail and the items after it (`a,b,c`: `a` and `b,c`).
fn first_item(detail: &[u8]) -> (&[u8], &[u8]) {
    match text::find_byte(detail, b',') {
        Some(comma) => (&detail[..comma], &detail[comma + 1..]),
        None => (detail, &[]),
    }
}

/// The last value of `key` (a TIMELINE detail's later items win).
fn kv_last<'a>(kv: &[(&[u8], &'a [u8])], key: &[u8]) -> Option<&'a [u8]> {
    kv.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// The fields of a TIMELINE line, its head read already when it is the common one (None:
/// malformed).
fn timeline_event(
    line: &[u8],
    head: Option<Head>,
    out: &mut Batch,
    jobs: &mut JobNumbers,
) -> Option<Event> {
    // the first four fields and the rest (as `splitn(5, ',')` gives them)
    let (stamp_raw, event, c3) = match head {
        Some(h) => (&line[TIMELINE.len()..h.c2], h.event, h.c3),
        None => {
            let mut commas = memchr::memchr_iter(b',', line);
            let (Some(c1), Some(c2), Some(c3)) = (commas.next(), commas.next(), commas.next())
            else {
                return None;
            };
            (&line[c1 + 1..c2], event_number(&line[c2 + 1..c3])?, c3)
        }
    };
    let c4 = text::find_byte(&line[c3 + 1..], b',').map(|c| c + c3 + 1);
    let job = &line[c3 + 1..c4.unwrap_or(line.len())];
    let mut detail: &[u8] = c4.map_or(&[][..], |c| &line[c + 1..]);
    let stamp = match head.and_then(|h| h.stamp) {
        Some(stamp) => stamp,
        None => text::parse_int(stamp_raw)?,
    };
    let mut partition: Option<i64> = None;
    let mut worker: Option<i64> = None;
    let mut snap = false;
    // the common heads first (`partition=<n>`, `worker=<n>[,partition=<n>]`); `detail` is
    // left at the items past those read
    if let Some(rest) = detail.strip_prefix(b"partition=") {
        let value;
        (value, detail) = first_item(rest);
        partition = Some(text::parse_int(value)?);
    } else if let Some(rest) = detail.strip_prefix(b"worker=") {
        let value;
        (value, detail) = first_item(rest);
        worker = Some(text::parse_int(value)?);
        if let Some(rest) = detail.strip_prefix(b"partition=") {
            let value;
            (value, detail) = first_item(rest);
            partition = Some(text::parse_int(value)?);
        }
    }
    if !detail.is_empty() {
        // (a bare word is a key without a value: `partition` alone names one too)
        let kv = detail_pairs(detail);
        let named = |key: &[u8]| kv.iter().filter(|(k, _)| *k == key).count();
        // an id named twice (or a partition and a snap partition): which one the daemon
        // meant cannot be told
        let partitions = named(b"partition") + named(b"snap_partition");
        if partitions + usize::from(partition.is_some()) > 1
            || named(b"worker") + usize::from(worker.is_some()) > 1
        {
            return None;
        }
        if partition.is_none() {
            let raw = kv_last(&kv, b"partition").or_else(|| {
                let s = kv_last(&kv, b"snap_partition");
                snap = s.is_some();
                s
            });
            partition = match raw {
                Some(raw) => Some(text::parse_int(raw)?),
                None => None,
            };
        }
        if let Some(raw) = kv_last(&kv, b"worker") {
            worker = Some(text::parse_int(raw)?);
        }
    }
    let plausible = (0..=MAX_STAMP_MS).contains(&stamp)
        && partition.is_none_or(|p| (0..=MAX_PARTITION).contains(&p))
        && worker.is_none_or(|w| (0..=MAX_WORKER).contains(&w));
    if !plausible {
        return None;
    }
    let mut kind = None;
    if event == EV_SYNTH_START && text::holds_key(detail, b"kind") {
        let kv = detail_pairs(detail);
        if let Some(k) = kv_last(&kv, b"kind").filter(|k| !k.is_empty()) {
            kind = Some(out.keep(k));
        }
    }
    Some(Event {
        stamp,
        event,
        job_no: jobs.number(job),
        job: out.keep(job),
        partition,
        worker,
        snap,
        kind,
    })
}

/// The longest line `common_timeline` reads: its masks are of 128 bytes.
const COMMON_LINE_BYTES: usize = 128;

/// The commas of `line` (at most COMMON_LINE_BYTES), and the bytes a daemon line can begin
/// with (T, C, ESC), a bit each, sixteen bytes at a time.
fn comma_and_marker_masks(line: &[u8]) -> (u128, u128) {
    let (mut commas, mut markers) = (0u128, 0u128);
    let mut add = |block: &[u8], from: usize, at: usize| {
        commas |= u128::from(crate::bytemask::mask16(block, from, [b','])) << at;
        markers |= u128::from(crate::bytemask::mask16(block, from, [b'T', b'C', 0x1b])) << at;
    };
    let mut at = 0;
    while at + 16 <= line.len() {
        add(line, at, at);
        at += 16;
    }
    if at < line.len() {
        // the last bytes, fewer than sixteen
        commas |= u128::from(crate::bytemask::tail_mask(line, at, [b','])) << at;
        markers |= u128::from(crate::bytemask::tail_mask(line, at, [b'T', b'C', 0x1b])) << at;
    }
    (commas, markers)
}

/// The common TIMELINE line read in one pass: `TIMELINE,<stamp>,<EVENT>,<job>` then nothing,
/// `,partition=<n>...` or `,worker=<n>,partition=<n>...` (plain numbers), no line beginning
/// past its head, no id named again, no `kind=` to keep. What `timeline_event` gives it,
/// where that reading would be taken (`physical`); None for any other line, which is read
/// that way, and then nothing was done.
fn common_timeline(line: &[u8], out: &mut Batch, jobs: &mut JobNumbers) -> Option<Event> {
    if line.len() > COMMON_LINE_BYTES || !line.starts_with(TIMELINE) {
        return None;
    }
    let (mut commas, markers) = comma_and_marker_masks(line);
    let mut next_comma = || {
        let at = commas.trailing_zeros() as usize;
        commas &= commas.wrapping_sub(1);
        (at < line.len()).then_some(at)
    };
    next_comma(); // TIMELINE's own
    let c1 = next_comma()?;
    let c2 = next_comma()?;
    let stamp = text::short_number(&line[TIMELINE.len()..c1])?;
    let event = event_number(&line[c1 + 1..c2])?;
    if markers >> c2 >> 1 != 0 {
        return None; // a line may begin past the head: `physical` looks
    }
    let c3 = next_comma();
    let job = &line[c2 + 1..c3.unwrap_or(line.len())];
    let (mut partition, mut worker) = (None, None);
    let mut rest: &[u8] = b""; // the detail past what was read of it
    if let Some(c3) = c3 {
        let detail = &line[c3 + 1..];
        let c4 = next_comma();
        // the text from `from` to the comma `c` (or the line's end)
        let upto = |from: usize, c: Option<usize>| &line[from..c.unwrap_or(line.len())];
        if detail.starts_with(b"partition=") {
            partition = Some(text::short_number(upto(c3 + 11, c4))?);
            rest = c4.map_or(b"", |c| &line[c + 1..]);
        } else if detail.starts_with(b"worker=") {
            let c4 = c4?; // worker=<n> alone: the detail's items are read one by one
            worker = Some(text::short_number(upto(c3 + 8, Some(c4)))?);
            if !line[c4 + 1..].starts_with(b"partition=") {
                return None;
            }
            let c5 = next_comma();
            partition = Some(text::short_number(upto(c4 + 11, c5))?);
            rest = c5.map_or(b"", |c| &line[c + 1..]);
        } else if !detail.is_empty() {
            return None;
        }
    }
    let plausible = stamp <= MAX_STAMP_MS
        && partition.is_none_or(|p| p <= MAX_PARTITION)
        && worker.is_none_or(|w| w <= MAX_WORKER);
    // an id perhaps named again (malformed: `partition =5` too, whose key `timeline_event`
    // trims) or a kind to keep: `timeline_event` reads the line
    let mentions = |word: &[u8]| rest.windows(word.len()).any(|w| w == word);
    if !plausible
        || mentions(b"partition")
        || mentions(b"worker")
        || (event == EV_SYNTH_START && text::holds_key(rest, b"kind"))
    {
        return None;
    }
    Some(Event {
        stamp,
        event,
        job_no: jobs.number(job),
        job: out.keep(job),
        partition,
        worker,
        snap: false,
        kind: None,
    })
}

/// What a stdout line says, by the words it holds.
#[derive(Debug, PartialEq, Eq)]
struct StdoutWords {
    /// `cuzk`
    cuzk: bool,
    /// `starting cuzk engine`
    engine_start: bool,
    /// `worker started` or `gpu_worker`
    names_worker: bool,
}

/// The words of `stdout_words`, the line read once: each holds a `k`, at a place known, so
/// the `k`s of the line are all that is looked at (a search for each word would read the
/// line through four times).
fn stdout_words(line: &[u8]) -> StdoutWords {
    let mut w = StdoutWords {
        cuzk: false,
        engine_start: false,
        names_worker: false,
    };
    let at = |p: usize, back: usize, word: &[u8]| p >= back && line[p - back..].starts_with(word);
    for p in crate::bytemask::each_of(line, [b'k']) {
        if at(p, 3, b"cuzk") {
            w.cuzk = true;
            w.engine_start |= at(p, 12, b"starting cuzk engine");
        } else if at(p, 3, b"worker") {
            w.names_worker |= at(p, 3, b"worker started") || at(p, 7, b"gpu_worker");
        }
    }
    w
}

impl Reader {
    /// Bytes of an incomplete last line waiting for its newline.
    pub fn partial_bytes(&self) -> usize {
        self.tail.len()
    }

    /// Read the next bytes of the log (any size, cut anywhere) into `out`.
    pub fn read(&mut self, data: &[u8], out: &mut Batch) {
        if data.is_empty() {
            return;
        }
        let base = self.bytes_read; // the offset of data[0] in the log
        self.bytes_read += data.len() as u64;
        self.index.saw(data);
        let mut pos = 0;
        if self.skipping || !self.tail.is_empty() {
            // finish the line the last bytes began
            let Some(nl) = memchr::memchr(b'\n', data) else {
                self.hold(data, out);
                return;
            };
            self.hold(&data[..nl], out);
            self.lines_read += 1;
            self.index
                .line_start(self.lines_read + 1, base + nl as u64 + 1);
            if self.skipping {
                self.skipping = false;
            } else {
                let line = std::mem::take(&mut self.tail);
                self.physical(&line, self.lines_read, out);
            }
            pos = nl + 1;
        }
        let rest = &data[pos..];
        let mut start = 0;
        for nl in crate::bytemask::each_byte(rest, b'\n') {
            self.lines_read += 1;
            let next_start = base + (pos + nl) as u64 + 1;
            self.index.line_start(self.lines_read + 1, next_start);
            let line = &rest[start..nl];
            if line.len() > MAX_LINE_BYTES {
                let head = &line[..OVERSIZED_HEAD_BYTES];
                let item = self.oversized(head, self.lines_read);
                out.items.push(item);
            } else {
                self.physical(line, self.lines_read, out);
            }
            start = nl + 1;
        }
        self.hold(&rest[start..], out);
    }

    /// End of input: a cut line still waiting for its rest is taken as it is (a partial
    /// last line stays unread).
    pub fn finish(&mut self, out: &mut Batch) {
        self.flush_fragment(out);
    }

    /// Keep the start of an unfinished line, up to MAX_LINE_BYTES.
    fn hold(&mut self, bytes: &[u8], out: &mut Batch) {
        if self.skipping {
            return;
        }
        if self.tail.len() + bytes.len() > MAX_LINE_BYTES {
            let mut head = std::mem::take(&mut self.tail);
            head.truncate(OVERSIZED_HEAD_BYTES);
            let more = OVERSIZED_HEAD_BYTES - head.len();
            head.extend_from_slice(&bytes[..more.min(bytes.len())]);
            self.skipping = true;
            let item = self.oversized(&head, self.lines_read + 1);
            out.items.push(item);
            return;
        }
        self.tail.extend_from_slice(bytes);
    }

    /// What a line too long to read is counted as, by its first bytes `head`: a malformed
    /// TIMELINE or timing line when it begins as one (under the capture's prefix), else
    /// other.
    fn oversized(&self, head: &[u8], line_no: u64) -> Item {
        let mut line = head;
        if self.capture != Capture::Plain {
            let year = self.year.unwrap_or_else(current_year);
            if let Some((n, _)) = text::capture_prefix(line, year) {
                line = &line[n..];
            }
        }
        if line.starts_with(TIMELINE) {
            Item::Timeline {
                line_no,
                first: None,
                event: None,
            }
        } else if line.starts_with(b"CUZK_TIMING: ") || line.starts_with(b"CUZK_NTT_H: ") {
            Item::Timing(Timing::Bad)
        } else {
            Item::Other
        }
    }

    // -- physical lines ---------------------------------------------------------------------

    fn physical(&mut self, raw: &[u8], line_no: u64, out: &mut Batch) {
        if self.prefixed {
            out.items.push(Item::Prefix(None));
            self.prefixed = false;
        }
        let mut line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let capture = self.capture;
        if capture == Capture::Plain {
            // a capture's prefix on a log that began without one (a restarted daemon captured
            // anew): taken off where a daemon line follows it on two lines in a row (one
            // such line alone is as likely a line cut after its time by another)
            let later = self.later_prefix(line);
            if let (Some((n, wall)), true) = (later, self.later) {
                out.items.push(Item::Prefix(Some(wall)));
                self.prefixed = true;
                line = &line[n..];
            }
            self.later = later.is_some();
        } else {
            let mut found = false;
            if !(line.starts_with(TIMELINE)
                || line.starts_with(b"CUZK_")
                || line.first() == Some(&0x1b))
            {
                let year = self.year.unwrap_or_else(current_year);
                if let Some((n, wall)) = text::capture_prefix(line, year) {
                    out.items.push(Item::Prefix(Some(wall)));
                    self.prefixed = true;
                    found = true;
                    line = &line[n..];
                }
            }
            if capture == Capture::Undecided && !line.is_empty() && !line.starts_with(b"-- ") {
                self.vote(found);
            }
        }
        if let Some(frag) = self.fragment.as_mut() {
            let inner = (!text::line_start_at(line, 0)).then(|| text::find_line_start(line, 1));
            match inner {
                // more of the cut line, and a line cut into it: held a while (a log whose
                // every line looks so, a capture's prefix it does not know, is not held
                // to its end: the cut line is taken as it is past FRAGMENT_WAIT_LINES)
                Some(Some(m)) if frag.inners.len() < FRAGMENT_WAIT_LINES => {
                    frag.head.extend_from_slice(&line[..m]);
                    frag.inners.push((line[m..].to_vec(), line_no));
                    return;
                }
                Some(Some(_)) => self.flush_fragment(out),
                // the rest of the cut line
                Some(None) => {
                    let frag = self.fragment.take().expect("a fragment");
                    out.items.push(Item::Spliced);
                    let mut whole = frag.head;
                    whole.extend_from_slice(line);
                    self.rejoined(&whole, frag.line_no, frag.inners, out);
                    return;
                }
                None => {}
            }
        }
        if let Some(frag) = self.fragment.as_mut() {
            let m = text::find_line_start(line, 1);
            if frag.inners.len() < FRAGMENT_WAIT_LINES
                && m.is_none_or(|m| !text::plausible_head(&line[..m]))
            {
                let rest = match m {
                    Some(m) => {
                        out.items.push(Item::Other);
                        &line[m..]
                    }
                    None => line,
                };
                frag.inners.push((rest.to_vec(), line_no));
                return;
            }
            self.flush_fragment(out);
        }
        // the common lines, read straight away when no line begins past their head (where
        // `find_line_start` would look): a TIMELINE line, the common one in one pass, another
        // with its head read once; a timing line
        if let Some(event) = common_timeline(line, out, &mut self.jobs) {
            out.items.push(Item::Timeline {
                line_no,
                first: Some(event.stamp),
                event: Some(event),
            });
            return;
        }
        if let Some(head) = timeline_head(line) {
            if !text::holds_marker(&line[head.c3 + 1..]) {
                self.timeline(line, Some(head), line_no, out);
                return;
            }
        } else if let Some(body) = line.strip_prefix(b"CUZK_TIMING: ") {
            if !text::holds_marker(body) {
                self.timing(body, false, line_no, out);
                return;
            }
        }
        match text::find_line_start(line, inner_search_from(line)) {
            None => self.logical(line, line_no, out),
            Some(m) => {
                let head = &line[..m];
                if text::plausible_head(head) {
                    self.fragment = Some(Fragment {
                        head: head.to_vec(),
                        line_no,
                        inners: vec![(line[m..].to_vec(), line_no)],
                    });
                } else {
                    out.items.push(Item::Other); // text of something else before a daemon line
                    self.logical(&line[m..], line_no, out);
                }
            }
        }
    }

    /// Where a daemon line begins after a capture's prefix on a line of a log decided plain
    /// (None: no prefix, or none before a daemon line). Most lines of a plain log are let
    /// go at their first bytes: a daemon line's own head, or a stdout line's time followed
    /// by its level's padding (`…Z  INFO`).
    fn later_prefix(&self, line: &[u8]) -> Option<(usize, Option<Wall>)> {
        let first = *line.first()?;
        if !(first.is_ascii_digit() || first.is_ascii_uppercase()) || line.starts_with(b"CUZK_") {
            return None;
        }
        if line.starts_with(TIMELINE) {
            return None;
        }
        let space = text::find_byte(&line[..line.len().min(48)], b' ')?;
        if first.is_ascii_digit() && line.get(space + 1) == Some(&b' ') {
            return None; // a plain stdout line's own time
        }
        let year = self.year.unwrap_or_else(current_year);
        let (n, wall) = text::capture_prefix(line, year)?;
        text::line_start_at(line, n).then_some((n, wall))
    }

    /// Decide from the first lines whether the capture puts a prefix on every line.
    fn vote(&mut self, prefixed: bool) {
        self.votes[usize::from(prefixed)] += 1;
        let n = self.votes[0] + self.votes[1];
        if n >= CAPTURE_VOTES || (n >= 4 && self.votes.contains(&0)) {
            self.capture = if self.votes[1] > self.votes[0] {
                Capture::Prefixed
            } else {
                Capture::Plain
            };
        }
    }

    fn flush_fragment(&mut self, out: &mut Batch) {
        if let Some(frag) = self.fragment.take() {
            self.rejoined(&frag.head, frag.line_no, frag.inners, out);
        }
    }

    /// A cut line made whole, and the lines that landed inside it. Those were printed while
    /// it was being written, around its stamp but not necessarily after it: they are read
    /// first, and its stamp does not bound them.
    fn rejoined(
        &mut self,
        line: &[u8],
        line_no: u64,
        inners: Vec<(Vec<u8>, u64)>,
        out: &mut Batch,
    ) {
        out.items.push(Item::Inners);
        for (inner, no) in &inners {
            self.logical(inner, *no, out);
        }
        out.items.push(Item::Outer);
        self.logical(line, line_no, out);
        out.items.push(Item::OuterDone);
    }

    // -- whole lines ------------------------------------------------------------------------

    fn logical(&mut self, line: &[u8], line_no: u64, out: &mut Batch) {
        if line.starts_with(TIMELINE) {
            self.timeline(line, timeline_head(line), line_no, out);
        } else if let Some(body) = line.strip_prefix(b"CUZK_TIMING: ") {
            self.timing(body, false, line_no, out);
        } else if let Some(body) = line.strip_prefix(b"CUZK_NTT_H: ") {
            self.timing(body, true, line_no, out);
        } else {
            let first = line.first().copied().unwrap_or(0);
            if first == 0x1b || (first.is_ascii_digit() && text::stdout_start_at(line, 0)) {
                let item = self.stdout(line, line_no, out);
                out.items.push(item);
            } else {
                out.items.push(Item::Other);
            }
        }
    }

    /// A TIMELINE line (`head`: its head, when it is the common one).
    fn timeline(&mut self, line: &[u8], head: Option<Head>, line_no: u64, out: &mut Batch) {
        let event = timeline_event(line, head, out, &mut self.jobs);
        // offsets jumping back by more than disorder explains: the daemon restarted (the
        // stamp is the first field, read again only when the line is malformed)
        let first = event.map(|e| e.stamp).or_else(|| {
            line[TIMELINE.len()..]
                .split(|&b| b == b',')
                .next()
                .and_then(text::parse_int)
        });
        out.items.push(Item::Timeline {
            line_no,
            first,
            event,
        });
    }

    /// A timing line's body (the text after `CUZK_TIMING: `, or `CUZK_NTT_H: `).
    fn timing(&mut self, body: &[u8], ntt_h: bool, line_no: u64, out: &mut Batch) {
        let timing = classify(body, ntt_h);
        out.items.push(Item::Timing(timing));
        if timing == Timing::Other && !ntt_h {
            cpu_values(body, |kind, value| {
                out.items.push(Item::Cpu {
                    line_no,
                    kind,
                    value,
                });
            });
        }
    }

    fn stdout(&mut self, raw: &[u8], line_no: u64, out: &mut Batch) -> Item {
        let StdoutWords {
            cuzk,
            engine_start,
            names_worker: raw_names_worker,
        } = stdout_words(raw);
        let names_worker = |line: &[u8]| {
            crate::contains!(line, b"worker started") || crate::contains!(line, b"gpu_worker")
        };
        let mapping =
            |line: &[u8]| crate::contains!(line, b"starting cuzk engine") || names_worker(line);
        let raw_maps = || engine_start || raw_names_worker;
        let mut kept = None;
        // the year is read off the first stdout line (colours removed); after that, only
        // lines that may map workers to GPUs or give the wall clock are kept for the builder
        if self.year.is_none() || raw_maps() {
            let stripped;
            let line = if memchr::memchr(0x1b, raw).is_some() {
                stripped = text::strip_sgr(raw);
                &stripped[..]
            } else {
                raw
            };
            if self.year.is_none() && line.len() >= 4 {
                if let Some(y) = text::parse_int(&line[..4]) {
                    self.year = Some(y);
                }
            }
            if mapping(line) {
                kept = Some(out.keep(line));
            }
        }
        Item::Stdout {
            line_no,
            engine_start,
            cuzk,
            text: kept,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xorshift;

    #[test]
    fn the_words_of_a_stdout_line_are_found_as_searches_find_them() {
        let pieces: [&[u8]; 10] = [
            b"cuzk",
            b"starting ",
            b"engine",
            b"worker",
            b" started",
            b"gpu_",
            b"k",
            b"kk",
            b"x",
            b"starting cuzk engine",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..50_000 {
            xorshift(&mut seed);
            let mut line = Vec::new();
            for k in 0..(seed % 7) as usize {
                line.extend_from_slice(pieces[((seed >> (4 * k + 8)) % 10) as usize]);
            }
            let cuzk = crate::contains!(&line, b"cuzk");
            let want = StdoutWords {
                cuzk,
                engine_start: cuzk && crate::contains!(&line, b"starting cuzk engine"),
                names_worker: crate::contains!(&line, b"worker started")
                    || crate::contains!(&line, b"gpu_worker"),
            };
            assert_eq!(
                stdout_words(&line),
                want,
                "{}",
                String::from_utf8_lossy(&line)
            );
        }
    }

    #[test]
    fn each_event_is_numbered_by_its_place_in_events() {
        for (k, name) in EVENTS.iter().enumerate() {
            assert_eq!(event_number(name), u8::try_from(k).ok());
        }
        assert_eq!(event_number(b"GPU_STAR"), None);
        assert_eq!(event_number(b"GPU_START,"), None);
    }

    #[test]
    fn a_timeline_line_read_by_its_head_gives_what_its_commas_give() {
        let stamps: [&[u8]; 6] = [b"1282", b"0", b"99999999999999999999", b"12a", b"", b" 5"];
        let events: [&[u8]; 6] = [
            b"GPU_START",
            b"SYNTH_START",
            b"GPU_STAR",
            b"GPU_END",
            b"CHAN_SEND",
            b"GPU_START,",
        ];
        let details: [&[u8]; 12] = [
            b"porep-1-2",
            b",",
            b",partition=",
            b"partition=",
            b",worker=",
            b"worker=",
            b"3",
            b"-1",
            b",kind=snap",
            b",snap_partition=4",
            b"=",
            b" ",
        ];
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        let mut heads = 0;
        for _ in 0..100_000 {
            xorshift(&mut seed);
            let pick = |shift: u32, n: usize| ((seed >> shift) % n as u64) as usize;
            let mut line = b"TIMELINE,".to_vec();
            line.extend_from_slice(stamps[pick(4, 6)]);
            line.push(b',');
            line.extend_from_slice(events[pick(8, 6)]);
            line.push(b',');
            for k in 0..pick(12, 8) {
                line.extend_from_slice(details[pick(16 + 4 * k as u32, 12)]);
            }
            let Some(head) = timeline_head(&line) else {
                continue;
            };
            heads += 1;
            let read = |head: Option<Head>| {
                let (mut out, mut jobs) = (Batch::default(), JobNumbers::default());
                timeline_event(&line, head, &mut out, &mut jobs).map(|e| {
                    let kind = e.kind.map(|k| out.get(k).to_vec());
                    let job = out.get(e.job).to_vec();
                    (e.stamp, e.event, job, e.partition, e.worker, e.snap, kind)
                })
            };
            assert_eq!(
                read(Some(head)),
                read(None),
                "{}",
                String::from_utf8_lossy(&line)
            );
        }
        assert!(heads > 20_000, "{heads} lines with a head");
    }

    #[test]
    fn the_common_timeline_line_is_read_in_one_pass_as_its_head_reads_it() {
        let stamps: [&[u8]; 6] = [b"1282", b"0", b"999999999999999999", b"12a", b"", b"7"];
        let events: [&[u8]; 5] = [
            b"GPU_START",
            b"SYNTH_START",
            b"GPU_END",
            b"GPU_STAR",
            b"CHAN_SEND",
        ];
        let jobs: [&[u8]; 7] = [
            b"porep-1-2",
            b"ps-porep-1000-2-230623",
            b"",
            b"a T",
            b"j\x1b",
            b"CUZK_TIMING: x", // a line begins right past the head
            b"Tx",
        ];
        let details: [&[u8]; 16] = [
            b",partition=",
            b"partition=",
            b",worker=",
            b"worker=",
            b"3",
            b"12",
            b"-1",
            b" 4",
            b",kind=snap",
            b"kind=",
            b",snap_partition=4",
            b",gpu_ms=5",
            b"=",
            b",",
            b"9999999",
            b"x",
        ];
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        let (mut common, mut lines) = (0, 0);
        for _ in 0..300_000 {
            xorshift(&mut seed);
            let pick = |shift: u32, n: usize| ((seed >> shift) % n as u64) as usize;
            let mut line = b"TIMELINE,".to_vec();
            line.extend_from_slice(stamps[pick(4, 6)]);
            line.push(b',');
            line.extend_from_slice(events[pick(8, 5)]);
            if pick(12, 8) > 0 {
                line.push(b',');
                line.extend_from_slice(jobs[pick(15, 7)]);
            }
            if pick(60, 2) == 0 {
                // as the daemon prints them, and near misses
                let shapes: [&[u8]; 13] = [
                    b",partition=3",
                    b",worker=0,partition=5",
                    b",worker=1,partition=12,gpu_ms=55",
                    b",partition=4,synth_ms=9",
                    b",partition=4,kind=x",
                    b",worker=1,partition=",
                    b",worker=1",
                    b"",
                    b",partition=4,partition=5",
                    b",worker=1,partition=2,worker=3",
                    b",partition=4,x_partition=5",
                    b",partition=4,partition =5",
                    b",worker=0,partition=4,worker\t=1",
                ];
                line.extend_from_slice(shapes[pick(18, 13)]);
            } else {
                for k in 0..pick(18, 7) {
                    line.extend_from_slice(details[pick(21 + 4 * k as u32, 16)]);
                }
            }
            if pick(50, 9) == 0 {
                line.resize(120 + pick(54, 20), b'p'); // around the longest line read so
            }
            lines += 1;
            let (mut fast_out, mut fast_jobs) = (Batch::default(), JobNumbers::default());
            let Some(fast) = common_timeline(&line, &mut fast_out, &mut fast_jobs) else {
                assert!(fast_out.text.is_empty() && fast_jobs.numbers.is_empty());
                continue;
            };
            common += 1;
            // the reading `physical` takes otherwise: the head, no marker past it, the fields
            let head = timeline_head(&line).expect("a head");
            assert!(!text::holds_marker(&line[head.c3 + 1..]));
            let (mut out, mut jobs) = (Batch::default(), JobNumbers::default());
            let e = timeline_event(&line, Some(head), &mut out, &mut jobs).expect("an event");
            let show = String::from_utf8_lossy(&line);
            assert_eq!(
                (
                    fast.stamp,
                    fast.event,
                    fast.partition,
                    fast.worker,
                    fast.snap
                ),
                (e.stamp, e.event, e.partition, e.worker, e.snap),
                "{show}"
            );
            assert_eq!(fast_out.get(fast.job), out.get(e.job), "{show}");
            assert_eq!(
                (fast.job_no, fast.kind, e.kind),
                (e.job_no, None, None),
                "{show}"
            );
        }
        assert!(
            common > lines / 20,
            "{common} of {lines} lines read in one pass"
        );
    }

    #[test]
    fn a_timeline_line_naming_an_id_twice_is_malformed() {
        let read = |line: &[u8]| {
            let (mut out, mut jobs) = (Batch::default(), JobNumbers::default());
            let fast = common_timeline(line, &mut out, &mut jobs).map(|e| (e.partition, e.worker));
            let e = timeline_event(line, timeline_head(line), &mut out, &mut jobs);
            (fast, e.map(|e| (e.partition, e.worker)))
        };
        for line in [
            &b"TIMELINE,5,GPU_START,j,partition=4,partition=5"[..],
            b"TIMELINE,5,GPU_START,j,partition=4,partition=4",
            b"TIMELINE,5,GPU_START,j,worker=0,partition=4,partition=5",
            b"TIMELINE,5,GPU_START,j,worker=0,partition=4,worker=1",
            b"TIMELINE,5,GPU_START,j,worker=0,worker=1",
            b"TIMELINE,5,GPU_START,j,gpu_ms=3,partition=4,partition=5",
            b"TIMELINE,5,GPU_START,j,partition=4,snap_partition=5",
            b"TIMELINE,5,GPU_START,j,snap_partition=4, partition = 5",
            b"TIMELINE,5,GPU_START,j,worker=0,synth_ms=3,worker=0",
            b"TIMELINE,5,GPU_START,j,partition=4,partition =5",
            b"TIMELINE,5,GPU_START,j,partition=4,partition",
            b"TIMELINE,5,GPU_START,j,worker=0,worker",
            b"TIMELINE,5,GPU_START,j,worker=0,partition=4,worker\t=1",
        ] {
            assert_eq!(
                read(line),
                (None, None),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // each id once, in any order, beside keys that only end like one
        for (line, ids) in [
            (
                &b"TIMELINE,5,GPU_START,j,worker=0,partition=4"[..],
                (Some(4), Some(0)),
            ),
            (
                b"TIMELINE,5,GPU_START,j,partition=4,worker=0",
                (Some(4), Some(0)),
            ),
            (
                b"TIMELINE,5,GPU_START,j,partition=4,x_partition=5",
                (Some(4), None),
            ),
            (b"TIMELINE,5,GPU_START,j,gpu_ms=1,worker=2", (None, Some(2))),
            (b"TIMELINE,5,GPU_START,j,snap_partition=3", (Some(3), None)),
        ] {
            assert_eq!(read(line).1, Some(ids), "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_line_start_is_searched_past_heads_that_cannot_hold_one() {
        let head = b"TIMELINE,1301,GPU_START,";
        for tail in [
            &b"porep-1-2,worker=0,partition=3"[..],
            b"TIMELINE,5,GPU_END,j",
        ] {
            let line = [&head[..], tail].concat();
            assert_eq!(inner_search_from(&line), head.len());
            // whatever begins right after the head is still found
            let found = text::find_line_start(&line, inner_search_from(&line));
            assert_eq!(found, text::find_line_start(&line, 1));
        }
        assert_eq!(
            inner_search_from(b"CUZK_TIMING: gpu_tid=0 tail_msm_ms=5"),
            13
        );
        assert_eq!(inner_search_from(b"CUZK_NTT_H: total=5ms"), 12);
        // a head that is not one of those: searched from the second byte
        for line in [
            &b"TIMELINE,12,GPU_STTIMELINE,7,GPU_END,j"[..],
            b"TIMELINE,,GPU_START,j",
            b"TIMELINE,1x,GPU_START,j",
            b"TIMELINE,12,GPU_START",
            b"CUZK_TIMING:x",
            b"2026-03-16T09:12:37Z  INFO cuzk",
        ] {
            assert_eq!(
                inner_search_from(line),
                1,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let cut = b"TIMELINE,12,GPU_STTIMELINE,7,GPU_END,j";
        assert_eq!(text::find_line_start(cut, inner_search_from(cut)), Some(18));
    }
}
