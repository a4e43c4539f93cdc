//! The report's gap list as JSON text, written as Python's `json.dumps(..., ensure_ascii=True)`
//! writes it with its default separators (`, ` and `: `), so that a report made here and one
//! made from dicts are the same bytes.

use std::fmt::Write;

/// `s` as a JSON string, escaped as Python's json module escapes it with ensure_ascii: the
/// printable ASCII characters as they are, the usual short escapes, everything else as
/// `\uXXXX` (lowercase; two of them for a character beyond the BMP).
pub fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// `s` as a JSON string (see `push_str`).
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_str(&mut out, s);
    out
}

/// One side of a gap: the interval's job (JSON text), worker and partition (< 0: none).
pub struct Side<'a> {
    pub job: &'a str,
    pub worker: i64,
    pub partition: i64,
}

/// One gap of the report's list.
pub struct Gap<'a> {
    pub gpu: i64,
    pub start: i64,
    pub end: i64,
    pub before: Side<'a>,
    pub after: Side<'a>,
    pub crosses: bool,
    pub cause: &'a str, // JSON text
}

fn push_side(out: &mut String, key: &str, side: &Side) {
    let _ = write!(
        out,
        "\"{key}\": {{\"job\": {}, \"worker\": {}, \"partition\": ",
        side.job, side.worker
    );
    if side.partition < 0 {
        out.push_str("null");
    } else {
        let _ = write!(out, "{}", side.partition);
    }
    out.push('}');
}

/// Append one gap's object.
pub fn push_gap(out: &mut String, g: &Gap) {
    let _ = write!(
        out,
        "{{\"gpu\": {}, \"start\": {}, \"end\": {}, \"duration_ms\": {}, ",
        g.gpu,
        g.start,
        g.end,
        g.end - g.start
    );
    push_side(out, "before", &g.before);
    out.push_str(", ");
    push_side(out, "after", &g.after);
    let _ = write!(
        out,
        ", \"crosses_proof_boundary\": {}, \"cause\": {}}}",
        g.crosses, g.cause
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_python_does() {
        assert_eq!(quoted("porep-1-2"), "\"porep-1-2\"");
        assert_eq!(quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(quoted("\n\r\t\u{8}\u{c}"), "\"\\n\\r\\t\\b\\f\"");
        assert_eq!(quoted("\u{1}\u{7f}"), "\"\\u0001\\u007f\"");
        assert_eq!(quoted("é😀\u{202e}"), "\"\\u00e9\\ud83d\\ude00\\u202e\"");
    }

    #[test]
    fn a_gap_is_one_object() {
        let mut out = String::new();
        let side = |partition| Side {
            job: "\"j\"",
            worker: 1,
            partition,
        };
        push_gap(
            &mut out,
            &Gap {
                gpu: 0,
                start: 10,
                end: 25,
                before: side(3),
                after: side(-1),
                crosses: false,
                cause: "\"lock\"",
            },
        );
        assert_eq!(
            out,
            "{\"gpu\": 0, \"start\": 10, \"end\": 25, \"duration_ms\": 15, \
             \"before\": {\"job\": \"j\", \"worker\": 1, \"partition\": 3}, \
             \"after\": {\"job\": \"j\", \"worker\": 1, \"partition\": null}, \
             \"crosses_proof_boundary\": false, \"cause\": \"lock\"}"
        );
    }
}
