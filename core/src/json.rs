//! The report's gap and proof lists as JSON text, written as Python's `json.dumps(..., ensure_ascii=True)`
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
    pub rank: i64,
    pub gpu: i64,
    pub start: i64,
    pub end: i64,
    pub before: Side<'a>,
    pub after: Side<'a>,
    pub crosses: bool,
    pub cause: &'a str, // JSON text
}

/// `v` in decimal (a report writes a hundred thousand of them: no formatting machinery).
pub fn push_int(out: &mut String, v: i64) {
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    let mut n = v.unsigned_abs();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push('-');
    }
    for &d in &digits[k..] {
        out.push(char::from(d));
    }
}

fn push_side(out: &mut String, key: &str, side: &Side) {
    out.push('"');
    out.push_str(key);
    out.push_str("\": {\"job\": ");
    out.push_str(side.job);
    out.push_str(", \"worker\": ");
    push_int(out, side.worker);
    out.push_str(", \"partition\": ");
    if side.partition < 0 {
        out.push_str("null");
    } else {
        push_int(out, side.partition);
    }
    out.push('}');
}

/// Append one gap's object.
pub fn push_gap(out: &mut String, g: &Gap) {
    out.push_str("{\"rank\": ");
    push_int(out, g.rank);
    out.push_str(", \"gpu\": ");
    push_int(out, g.gpu);
    out.push_str(", \"start\": ");
    push_int(out, g.start);
    out.push_str(", \"end\": ");
    push_int(out, g.end);
    out.push_str(", \"duration_ms\": ");
    push_int(out, g.end.wrapping_sub(g.start));
    out.push_str(", ");
    push_side(out, "before", &g.before);
    out.push_str(", ");
    push_side(out, "after", &g.after);
    out.push_str(", \"crosses_proof_boundary\": ");
    out.push_str(if g.crosses { "true" } else { "false" });
    out.push_str(", \"cause\": ");
    out.push_str(g.cause);
    out.push('}');
}

/// One proof of the report's list.
pub struct ProofRow<'a> {
    pub job: &'a str,  // JSON text
    pub kind: &'a str, // JSON text
    pub partitions: i64,
    pub first: Option<i64>,
    pub last: Option<i64>,
    pub completed: bool,
    pub failed: bool,
    pub log: Option<&'a str>, // JSON text: the log it is from, of several
}

fn push_opt(out: &mut String, v: Option<i64>) {
    match v {
        Some(v) => push_int(out, v),
        None => out.push_str("null"),
    }
}

/// Append one proof's object.
pub fn push_proof(out: &mut String, p: &ProofRow) {
    out.push_str("{\"job\": ");
    out.push_str(p.job);
    out.push_str(", \"kind\": ");
    out.push_str(p.kind);
    out.push_str(", \"partitions\": ");
    push_int(out, p.partitions);
    out.push_str(", \"first_synth_start\": ");
    push_opt(out, p.first);
    out.push_str(", \"last_gpu_end\": ");
    push_opt(out, p.last);
    out.push_str(", \"completed\": ");
    out.push_str(if p.completed { "true" } else { "false" });
    out.push_str(", \"failed\": ");
    out.push_str(if p.failed { "true" } else { "false" });
    if let Some(log) = p.log {
        out.push_str(", \"log\": ");
        out.push_str(log);
    }
    out.push('}');
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
    fn integers_as_python_writes_them() {
        for v in [0, 7, -7, 10, 1234567890, i64::MAX, i64::MIN, -1] {
            let mut out = String::new();
            push_int(&mut out, v);
            assert_eq!(out, v.to_string());
        }
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
                rank: 2,
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
            "{\"rank\": 2, \"gpu\": 0, \"start\": 10, \"end\": 25, \"duration_ms\": 15, \
             \"before\": {\"job\": \"j\", \"worker\": 1, \"partition\": 3}, \
             \"after\": {\"job\": \"j\", \"worker\": 1, \"partition\": null}, \
             \"crosses_proof_boundary\": false, \"cause\": \"lock\"}"
        );
    }

    #[test]
    fn a_proof_is_one_object() {
        let mut out = String::new();
        let row = |first, completed, failed, log| ProofRow {
            job: "\"p\"",
            kind: "\"porep-c2\"",
            partitions: 10,
            first,
            last: None,
            completed,
            failed,
            log,
        };
        push_proof(&mut out, &row(Some(-5), true, false, None));
        out.push_str(", ");
        push_proof(&mut out, &row(None, false, true, Some("\"h\"")));
        assert_eq!(
            out,
            "{\"job\": \"p\", \"kind\": \"porep-c2\", \"partitions\": 10, \
             \"first_synth_start\": -5, \"last_gpu_end\": null, \"completed\": true, \
             \"failed\": false}, \
             {\"job\": \"p\", \"kind\": \"porep-c2\", \"partitions\": 10, \
             \"first_synth_start\": null, \"last_gpu_end\": null, \"completed\": false, \
             \"failed\": true, \"log\": \"h\"}"
        );
    }
}
