//! The log pane's search: a regular expression matched against a log's own lines in time
//! linear in their length, whatever the pattern and the line.
//!
//! Python's `re` backtracks: `(x+x+)+y` against a line of forty `x` ran for minutes in one
//! call that holds the interpreter, and the viewer read no key and no signal meanwhile. The
//! `regex` crate never backtracks (no look-around, no backreferences: its syntax says so as
//! an error). A line is searched as the pane shows its text: its colours (SGR escapes) taken
//! out, bytes that are not UTF-8 read as U+FFFD, `^` and `$` at its ends.

use std::borrow::Cow;

use memchr::memchr;
use regex::{Regex, RegexBuilder};
use regex_syntax::hir::Look;

/// The most a compiled pattern may take (its program, and each of its lazy DFA's caches):
/// a pattern past it is refused as too large, never a machine's memory taken.
const SIZE_LIMIT: usize = 8 << 20;

/// A pattern as the pane searches with it.
pub struct LineRegex {
    regex: Regex,
    /// Whether a match of all the lines of a chunk at once is a match of one of them: not
    /// where the pattern anchors at the text's very start or end (`\A`, `\z`, `(?-m)^`),
    /// which each line has and the chunk has once.
    whole_chunks: bool,
}

impl LineRegex {
    /// `pattern` (`ignore_case`: letters match either case). Err: why it is not one, in
    /// one line (`unclosed group`).
    pub fn new(pattern: &str, ignore_case: bool) -> Result<LineRegex, String> {
        let regex = RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .multi_line(true)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| one_line(&e))?;
        let looks = regex_syntax::ParserBuilder::new()
            .case_insensitive(ignore_case)
            .multi_line(true)
            .build()
            .parse(pattern)
            .map(|hir| hir.properties().look_set())
            .map_err(|e| e.to_string())?;
        let whole_chunks = !looks.contains(Look::Start) && !looks.contains(Look::End);
        Ok(LineRegex {
            regex,
            whole_chunks,
        })
    }

    /// Whether one line (its end of line taken off) matches.
    pub fn matches_line(&self, line: &[u8]) -> bool {
        self.regex.is_match(&shown(line))
    }

    /// The first line of `data` (lines each ending in `\n`, the last maybe not) that
    /// matches, 0 for its first.
    pub fn first_line(&self, data: &[u8]) -> Option<usize> {
        if self.none_in(data) {
            return None;
        }
        lines(data).position(|line| self.matches_line(line))
    }

    /// The last line of `data` that matches.
    pub fn last_line(&self, data: &[u8]) -> Option<usize> {
        if self.none_in(data) {
            return None;
        }
        let mut last = None;
        for (k, line) in lines(data).enumerate() {
            if self.matches_line(line) {
                last = Some(k);
            }
        }
        last
    }

    /// Whether no line of `data` can match, known in one pass: lines that are UTF-8 with no
    /// colour are their text, and a match in one of them is a match in all of them together
    /// (`^` and `$` match at each line's ends; `whole_chunks`), so no match in all says none.
    fn none_in(&self, data: &[u8]) -> bool {
        if !self.whole_chunks || memchr(0x1b, data).is_some() {
            return false;
        }
        match std::str::from_utf8(data) {
            Ok(text) => !self.regex.is_match(text),
            Err(_) => false,
        }
    }

    /// A line as it is searched (`shown`: its colours out, bytes that are not UTF-8 as
    /// U+FFFD) and where it matches there: what the pane marks is what the search found.
    pub fn line_spans(&self, line: &[u8]) -> (String, Vec<(usize, usize)>) {
        let text = shown(line);
        let spans = self.spans(&text);
        (text.into_owned(), spans)
    }

    /// Where `text` matches, non-empty matches only, in characters.
    fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let (mut byte, mut chars) = (0usize, 0usize);
        for m in self.regex.find_iter(text) {
            if m.start() == m.end() {
                continue;
            }
            chars += text[byte..m.start()].chars().count();
            let start = chars;
            chars += text[m.start()..m.end()].chars().count();
            byte = m.end();
            out.push((start, chars));
        }
        out
    }
}

/// Why a pattern is refused, in one line: the crate's syntax errors draw the pattern with a
/// caret over several lines, and end in `error: <why>`.
fn one_line(e: &regex::Error) -> String {
    match e {
        regex::Error::CompiledTooBig(_) => "too large".to_string(),
        _ => {
            let text = e.to_string();
            let why = text
                .lines()
                .rev()
                .find_map(|l| l.trim().strip_prefix("error: "))
                .unwrap_or(text.trim());
            // the crate's own words, where they run past a status line of 80 columns
            if why.starts_with("look-around") {
                "look-around is not supported".to_string()
            } else {
                why.to_string()
            }
        }
    }
}

/// The lines of `data`, each without its `\n` (no empty line after a last `\n`).
fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split_inclusive(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\n").unwrap_or(l))
}

/// A line's text as the pane shows it: read as UTF-8 (bytes that are not: U+FFFD), then its
/// colours taken out, as the pane reads a line before it draws its colours. An escape never
/// joins the bytes around it into one character: `\xe2 ESC[31m \x82` is two U+FFFD.
fn shown(line: &[u8]) -> Cow<'_, str> {
    let text = String::from_utf8_lossy(line);
    if !text.contains('\x1b') {
        return text;
    }
    Cow::Owned(without_colours(&text))
}

/// `text` without its SGR escapes (`ESC [ digits and ; m`), as the pane draws them.
fn without_colours(text: &str) -> String {
    let line = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut kept) = (0, 0);
    while let Some(at) = memchr(0x1b, &line[i..]).map(|k| i + k) {
        let mut j = at + 1;
        if line.get(j) == Some(&b'[') {
            j += 1;
            while j < line.len() && (line[j].is_ascii_digit() || line[j] == b';') {
                j += 1;
            }
            if line.get(j) == Some(&b'm') {
                out.push_str(&text[kept..at]); // ESC is ASCII: `at` is a character's start
                kept = j + 1;
                i = j + 1;
                continue;
            }
        }
        i = at + 1;
    }
    out.push_str(&text[kept..]);
    out
}

#[cfg(feature = "python")]
pub mod python {
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    use super::LineRegex;

    /// A pattern the log pane searches with (`search`: what it holds, and why).
    #[pyclass(name = "LineRegex", module = "parsers._core", frozen)]
    pub struct PyLineRegex {
        inner: LineRegex,
    }

    #[pymethods]
    impl PyLineRegex {
        #[new]
        fn new(pattern: &str, ignore_case: bool) -> PyResult<Self> {
            LineRegex::new(pattern, ignore_case)
                .map(|inner| PyLineRegex { inner })
                .map_err(PyValueError::new_err)
        }

        /// The first line of `data` that matches (0 its first), or None.
        fn first_line(&self, py: Python<'_>, data: &[u8]) -> Option<usize> {
            py.detach(|| self.inner.first_line(data))
        }

        /// The last line of `data` that matches, or None.
        fn last_line(&self, py: Python<'_>, data: &[u8]) -> Option<usize> {
            py.detach(|| self.inner.last_line(data))
        }

        /// The line's text as searched (colours out, bytes that are not UTF-8 as U+FFFD)
        /// and each non-empty match in it, (start, end) in characters.
        fn line_spans(&self, py: Python<'_>, line: &[u8]) -> (String, Vec<(usize, usize)>) {
            py.detach(|| self.inner.line_spans(line))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> LineRegex {
        LineRegex::new(p, false).expect("a pattern")
    }

    #[test]
    fn lines_match_on_their_own_and_at_their_ends() {
        let data = b"alpha\nbeta\nalpha beta\n";
        assert_eq!(re(r"alpha\s+beta").first_line(data), Some(2));
        assert_eq!(re(r"^beta$").first_line(data), Some(1));
        assert_eq!(re(r"ta$").last_line(data), Some(2));
        assert_eq!(re(r"ha$").first_line(data), Some(0));
        assert_eq!(re("^$").first_line(data), None); // no line after the last newline
        assert_eq!(re("^$").first_line(b"a\n\nb"), Some(1));
        assert_eq!(re("b").last_line(b"a\nb"), Some(1)); // a last line without its newline
    }

    #[test]
    fn colours_are_not_searched_and_bad_bytes_are_replacement_characters() {
        assert_eq!(
            re("ERROR").first_line(b"x\n\x1b[31mER\x1b[0mROR\n"),
            Some(1)
        );
        assert_eq!(re("a\u{fffd}b").first_line(b"a\xffb\n"), Some(0));
        assert_eq!(re("a.b").first_line(b"a\xffb\n"), Some(0));
        assert_eq!(re("31m").first_line(b"\x1b[31mx\n"), None);
        assert_eq!(re("\x1b\\[2J").first_line(b"\x1b[2J\n"), Some(0)); // not a colour: kept
    }

    #[test]
    fn case_is_ignored_when_asked() {
        let data = b"x\nGPU_END\n";
        assert_eq!(
            LineRegex::new("gpu_end", true).unwrap().first_line(data),
            Some(1)
        );
        assert_eq!(re("gpu_end").first_line(data), None);
    }

    #[test]
    fn a_pattern_python_backtracks_on_takes_linear_time() {
        // a backtracking engine takes 2^n steps here: this would never end
        let mut data = b"x".repeat(100_000);
        data.push(b'\n');
        assert_eq!(re("(x+x+)+y").first_line(&data), None);
        assert_eq!(re("(x+x+)+").first_line(&data), Some(0));
    }

    #[test]
    fn the_one_pass_over_a_chunk_says_what_line_by_line_says() {
        let chunks: [&[u8]; 6] = [
            b"alpha\nbeta\nalpha beta\n",
            b"a\n\nb",
            b"GPU_END x\r\nGPU_START\n",
            b"x\n\x1b[31mER\x1b[0mROR\n",
            b"a\xffb\nab\n",
            b"",
        ];
        let patterns = [
            r"alpha\s+beta",
            "^$",
            "^b",
            "a$",
            r"x\r$",
            "ERROR",
            "a.b",
            "nothing",
            r"(?s)a.+b",
            r"\Ab",
            r"(?-m)^b",
            r"a\z",
            r"(?-m)a$",
        ];
        for p in patterns {
            let r = re(p);
            for data in chunks {
                let each: Vec<usize> = lines(data)
                    .enumerate()
                    .filter(|(_, l)| r.matches_line(l))
                    .map(|(k, _)| k)
                    .collect();
                assert_eq!(r.first_line(data), each.first().copied(), "{p} {data:?}");
                assert_eq!(r.last_line(data), each.last().copied(), "{p} {data:?}");
            }
        }
    }

    #[test]
    fn spans_are_in_characters_and_skip_empty_matches() {
        assert_eq!(re("b+").spans("éabbé b"), vec![(2, 4), (6, 7)]);
        assert!(re("x*").spans("abc").is_empty());
    }

    #[test]
    fn a_line_is_marked_where_the_search_finds_it() {
        // colours out, a bad byte as U+FFFD: the text the pane marks is the one searched
        let line = b"\x1b[31mER\x1b[0mROR at \xff ERROR";
        let (text, spans) = re("ERROR").line_spans(line);
        assert_eq!(text, "ERROR at \u{fffd} ERROR");
        assert_eq!(spans, vec![(0, 5), (11, 16)]);
        assert_eq!(re("ERROR").first_line(line), Some(0));
        let (text, spans) = re("31m").line_spans(b"\x1b[31mx");
        assert_eq!((text.as_str(), spans), ("x", vec![]));
        assert_eq!(re("31m").first_line(b"\x1b[31mx"), None);
        // a colour between two bytes that are no character: each its own U+FFFD, as drawn
        let (text, spans) = re("X").line_spans(b"\xe2\x1b[31m\x82 X\x1b[m\x1b[2J");
        assert_eq!(text, "\u{fffd}\u{fffd} X\x1b[2J");
        assert_eq!(spans, vec![(3, 4)]);
    }

    #[test]
    fn a_bad_or_huge_pattern_says_why_in_one_line() {
        let why = LineRegex::new("(gpu", false).err().expect("refused");
        assert_eq!(why, "unclosed group");
        let why = LineRegex::new("(?<=a)b", false).err().expect("refused");
        assert_eq!(why, "look-around is not supported");
        let huge = LineRegex::new(r"\w{1000}\w{1000}\w{1000}", false).err();
        assert_eq!(huge.as_deref(), Some("too large"));
    }
}
