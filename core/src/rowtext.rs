//! Rows of columns as text: the trace's Trace Event Format JSON and the CSV tables, each row
//! written from a template of literal pieces and values, the values formatted as Python's
//! `json` and `csv` modules format them (so that the text is the bytes the dict-by-dict
//! writers made).
//!
//! A row is one of several kinds; each kind has its template: a literal piece, then a value
//! from a column, and so on, then a tail. Integer columns hold numbers and string ids (into a
//! table of strings already in their output form: JSON literals, or CSV cells).

/// How a value is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// An integer column, in decimal.
    Int,
    /// An integer column; a negative one is none (the null text).
    OptInt,
    /// A string id (an integer column); a negative one is none (the null text).
    Str,
    /// An integer column as `true` (not 0) or `false`.
    Bool,
    /// A float column as Python's json writes a float (`NaN`, `Infinity` beyond the finite).
    JsonFloat,
    /// A float column as Python's csv writes one, NaN being none (the null text).
    CsvFloat,
    /// A float column rounded to 3 decimals, as Python's `round(x, 3)`, then as csv writes it;
    /// NaN being none (the null text).
    Round3,
    /// An integer column; `i64::MIN` is none (the null text).
    IntOrNone,
}

impl Value {
    /// The code Python gives for each (parsers/export.py and export_csv.py name them).
    pub fn from_code(code: u8) -> Option<Value> {
        Some(match code {
            0 => Value::Int,
            1 => Value::OptInt,
            2 => Value::Str,
            3 => Value::Bool,
            4 => Value::JsonFloat,
            5 => Value::CsvFloat,
            6 => Value::Round3,
            7 => Value::IntOrNone,
            _ => return None,
        })
    }

    /// Whether the value comes from a float column.
    pub fn is_float(self) -> bool {
        matches!(self, Value::JsonFloat | Value::CsvFloat | Value::Round3)
    }
}

/// A literal piece, then a value of a column.
#[derive(Clone, Debug)]
pub struct Field {
    pub text: Vec<u8>,
    pub value: Value,
    pub column: usize,
}

/// One kind of row: its fields, then a literal tail.
#[derive(Clone, Debug, Default)]
pub struct Template {
    pub fields: Vec<Field>,
    pub tail: Vec<u8>,
}

/// A table of strings, each by its id: one buffer and where each one ends.
#[derive(Clone, Debug, Default)]
pub struct Strings {
    blob: Vec<u8>,
    ends: Vec<usize>,
}

impl Strings {
    /// The strings of `blob`, string k ending at `ends[k]` (each end at or after the last).
    pub fn new(blob: Vec<u8>, ends: Vec<usize>) -> Result<Strings, String> {
        let mut last = 0;
        for &e in &ends {
            if e < last || e > blob.len() {
                return Err("string ends out of order or past the table".into());
            }
            last = e;
        }
        Ok(Strings { blob, ends })
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String `k`, if there is one.
    pub fn get(&self, k: i64) -> Option<&[u8]> {
        let k = usize::try_from(k).ok()?;
        let end = *self.ends.get(k)?;
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        Some(&self.blob[start..end])
    }
}

/// The columns of some rows: each row's kind, integer and float columns of as many rows.
pub struct Rows<'a> {
    pub kind: &'a [u8],
    pub ints: &'a [&'a [i64]],
    pub floats: &'a [&'a [f64]],
}

impl Rows<'_> {
    /// Every column as long as `kind`.
    pub fn check(&self) -> Result<(), String> {
        let n = self.kind.len();
        let ints = self.ints.iter().map(|c| c.len());
        let floats = self.floats.iter().map(|c| c.len());
        if ints.chain(floats).all(|k| k == n) {
            Ok(())
        } else {
            Err("row columns differ in length".into())
        }
    }
}

/// Templates and the strings their rows name.
pub struct RowText {
    pub templates: Vec<Template>,
    pub strings: Strings,
    pub null: Vec<u8>,
}

impl RowText {
    /// Append `rows` to `out`, `separator` between two rows.
    pub fn write(&self, out: &mut Vec<u8>, rows: &Rows, separator: &[u8]) -> Result<(), String> {
        rows.check()?;
        for (r, &kind) in rows.kind.iter().enumerate() {
            let template = self
                .templates
                .get(usize::from(kind))
                .ok_or("a row of no such kind")?;
            if r > 0 {
                out.extend_from_slice(separator);
            }
            for field in &template.fields {
                out.extend_from_slice(&field.text);
                self.push_value(out, rows, field, r)?;
            }
            out.extend_from_slice(&template.tail);
        }
        Ok(())
    }

    fn push_value(
        &self,
        out: &mut Vec<u8>,
        rows: &Rows,
        field: &Field,
        r: usize,
    ) -> Result<(), String> {
        let missing = || "a template names no such column".to_string();
        if field.value.is_float() {
            let x = rows.floats.get(field.column).ok_or_else(missing)?[r];
            match field.value {
                Value::JsonFloat => push_json_float(out, x),
                Value::CsvFloat | Value::Round3 if x.is_nan() => out.extend_from_slice(&self.null),
                Value::CsvFloat => push_csv_number(out, x),
                _ => push_csv_number(out, round3(x)),
            }
            return Ok(());
        }
        let v = rows.ints.get(field.column).ok_or_else(missing)?[r];
        match field.value {
            Value::OptInt | Value::Str if v < 0 => out.extend_from_slice(&self.null),
            Value::IntOrNone if v == i64::MIN => out.extend_from_slice(&self.null),
            Value::Str => out.extend_from_slice(self.strings.get(v).ok_or("no such string")?),
            Value::Bool => out.extend_from_slice(if v != 0 { b"true" } else { b"false" }),
            _ => push_int(out, v),
        }
        Ok(())
    }
}

/// The largest magnitude below which every whole f64 is an exact i64 (2^53).
const EXACT_WHOLE: f64 = 9_007_199_254_740_992.0;

/// `x` as the CSV writes a number: a whole number as an integer (`14130`), any other as
/// Python's `repr` (`0.375`), so that no column mixes `156374` and `111536.0`
/// (parsers/export_csv.py's `csv_number` writes the same).
pub fn push_csv_number(out: &mut Vec<u8>, x: f64) {
    if x.fract() == 0.0 && x.abs() < EXACT_WHOLE {
        push_int(out, x as i64);
    } else {
        push_repr(out, x);
    }
}

/// `v` in decimal.
pub fn push_int(out: &mut Vec<u8>, v: i64) {
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
        out.push(b'-');
    }
    out.extend_from_slice(&digits[k..]);
}

/// `x` as Python's `repr` writes a float: the fewest significant digits that read back as
/// `x`, the closest to `x` of those (Ryū's digits, as David Gay's that Python uses); in
/// positional notation from 1e-4 to 1e16, else with an exponent of a sign and at least two
/// digits (`1e-05`, `1e+16`).
pub fn push_repr(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    if x.is_sign_negative() {
        out.push(b'-');
    }
    let x = x.abs();
    if x == 0.0 {
        out.extend_from_slice(b"0.0");
        return;
    }
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(x).as_bytes();
    // Ryū's text as significant digits and the power of ten of the first one
    let (mantissa, power) = match text.iter().position(|&c| c == b'e') {
        Some(e) => (&text[..e], parse_exponent(&text[e + 1..])),
        None => (text, 0),
    };
    let point = mantissa
        .iter()
        .position(|&c| c == b'.')
        .unwrap_or(mantissa.len());
    let mut digits = [0u8; 40];
    let mut n = 0;
    let mut exponent = point as i32 - 1 + power;
    for &c in mantissa.iter().filter(|&&c| c != b'.') {
        if n == 0 && c == b'0' {
            exponent -= 1; // a leading zero
        } else if n < digits.len() {
            digits[n] = c;
            n += 1;
        }
    }
    push_digits(out, &digits[..n], exponent);
}

fn parse_exponent(text: &[u8]) -> i32 {
    let (sign, digits) = match text.split_first() {
        Some((b'-', rest)) => (-1, rest),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i32, |v, &d| v * 10 + i32::from(d - b'0'))
}

/// The decimal `d.ddd` x 10^exponent (its digits given), laid out as Python's repr lays it out.
fn push_digits(out: &mut Vec<u8>, digits: &[u8], exponent: i32) {
    let end = digits.iter().rposition(|&c| c != b'0').map_or(0, |k| k + 1);
    let digits = if end == 0 {
        b"0".as_slice()
    } else {
        &digits[..end]
    };
    if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            let whole = exponent as usize + 1;
            if digits.len() <= whole {
                out.extend_from_slice(digits);
                out.extend(std::iter::repeat_n(b'0', whole - digits.len()));
                out.extend_from_slice(b".0");
            } else {
                out.extend_from_slice(&digits[..whole]);
                out.push(b'.');
                out.extend_from_slice(&digits[whole..]);
            }
        } else {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-exponent - 1) as usize));
            out.extend_from_slice(digits);
        }
        return;
    }
    out.push(digits[0]);
    if digits.len() > 1 {
        out.push(b'.');
        out.extend_from_slice(&digits[1..]);
    }
    out.push(b'e');
    out.push(if exponent < 0 { b'-' } else { b'+' });
    if exponent.abs() < 10 {
        out.push(b'0');
    }
    push_int(out, i64::from(exponent.abs()));
}

/// `x` as Python's json writes a float.
pub fn push_json_float(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else {
        push_repr(out, x);
    }
}

/// Python's `round(x, 3)`: the exact value of `x` rounded to 3 decimals (ties to even),
/// then the float nearest that decimal.
pub fn round3(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if x.abs() < 4e12 {
        // x * 1000 exactly is p + err (a fused multiply-add gives the part lost); its
        // nearest whole number is q, a tie going to the even one; q / 1000 is one rounding
        let p = x * 1000.0;
        let err = x.mul_add(1000.0, -p);
        let floor = p.floor();
        let above = ((p - floor) - 0.5) + err; // the sign of frac(x * 1000) - 1/2, exact
        let q = if above > 0.0 || (above == 0.0 && floor % 2.0 != 0.0) {
            floor + 1.0
        } else {
            floor
        };
        return (q / 1000.0).copysign(x); // -0.0004 rounds to -0.0, as in Python
    }
    let text = format!("{x:.3}"); // the exact value rounded, ties to even, as Python's
    text.parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(x: f64) -> String {
        let mut out = Vec::new();
        push_repr(&mut out, x);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_as_python_writes_them() {
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (3600123.0, "3600123.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (1e22, "1e+22"),
            (1e-300, "1e-300"),
            (961228602553078.2, "961228602553078.2"), // Rust's shortest ends in 3
            (5e-324, "5e-324"),
            (123.0, "123.0"),
            (f64::INFINITY, "inf"),
        ];
        for (x, text) in cases {
            assert_eq!(repr(x), text);
        }
    }

    #[test]
    fn rounding_to_three_decimals_ties_to_even() {
        assert_eq!(round3(0.0625), 0.062);
        assert_eq!(round3(0.0015), 0.002); // 0.0015 is a little above its decimal
        assert_eq!(round3(1234.56789), 1234.568);
        assert_eq!(repr(round3(-0.0001)), "-0.0");
        assert_eq!(round3(2.675), 2.675); // 2.67499999... keeps its digits
        assert_eq!(round3(1.0005), 1.0); // 1.000499999...
        assert_eq!(round3(4.5e12 + 0.0625), 4500000000000.062);
    }

    #[test]
    fn a_row_is_its_template_filled() {
        let strings = Strings::new(b"\"a\"\"bc\"".to_vec(), vec![3, 7]).unwrap();
        let field = |text: &str, value, column| Field {
            text: text.as_bytes().to_vec(),
            value,
            column,
        };
        let text = RowText {
            templates: vec![Template {
                fields: vec![
                    field("{\"n\":", Value::Str, 0),
                    field(",\"p\":", Value::OptInt, 1),
                    field(",\"b\":", Value::Bool, 1),
                    field(",\"v\":", Value::JsonFloat, 0),
                ],
                tail: b"}".to_vec(),
            }],
            strings,
            null: b"null".to_vec(),
        };
        let (names, parts) = ([1i64, -1], [3i64, -2]);
        let values = [2.0, f64::NAN];
        let ints: [&[i64]; 2] = [&names, &parts];
        let floats: [&[f64]; 1] = [&values];
        let rows = Rows {
            kind: &[0, 0],
            ints: &ints,
            floats: &floats,
        };
        let mut out = Vec::new();
        text.write(&mut out, &rows, b",").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"n\":\"bc\",\"p\":3,\"b\":true,\"v\":2.0},{\"n\":null,\"p\":null,\"b\":true,\"v\":NaN}"
        );
    }

    #[test]
    fn csv_numbers_are_whole_as_integers_else_as_python_writes_them() {
        let csv = |x: f64| {
            let mut out = Vec::new();
            push_csv_number(&mut out, x);
            String::from_utf8(out).unwrap()
        };
        for (x, text) in [
            (14130.0, "14130"),
            (-0.0, "0"),
            (0.375, "0.375"),
            (1e16, "1e+16"),
            (9_007_199_254_740_991.0, "9007199254740991"),
            (f64::INFINITY, "inf"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(csv(x), text, "{x}");
        }
    }

    #[test]
    fn bad_rows_are_errors_not_panics() {
        let text = RowText {
            templates: vec![Template {
                fields: vec![Field {
                    text: vec![],
                    value: Value::Str,
                    column: 3,
                }],
                tail: vec![],
            }],
            strings: Strings::default(),
            null: vec![],
        };
        let col = [0i64];
        let ints: [&[i64]; 1] = [&col];
        let mut out = Vec::new();
        let rows = |kind| Rows {
            kind,
            ints: &ints,
            floats: &[],
        };
        assert!(text.write(&mut out, &rows(&[0]), b"").is_err()); // no column 3
        assert!(text.write(&mut out, &rows(&[1]), b"").is_err()); // no kind 1
        assert!(Strings::new(vec![], vec![2]).is_err());
    }
}

#[cfg(feature = "python")]
pub mod python {
    use numpy::PyReadonlyArray1;
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    use super::{Field, RowText, Rows, Strings, Template, Value};

    /// One template as Python gives it: (literal piece, value code, column) each, the tail.
    type TemplateArg<'py> = (Vec<(Bound<'py, PyBytes>, u8, usize)>, Bound<'py, PyBytes>);

    fn bad(e: String) -> PyErr {
        PyValueError::new_err(e)
    }

    /// The strings of a table: one buffer, and where each string ends in it.
    pub fn strings(blob: &[u8], ends: &PyReadonlyArray1<'_, i64>) -> PyResult<Strings> {
        let ends = ends
            .as_slice()?
            .iter()
            .map(|&e| usize::try_from(e).map_err(|_| bad("a negative string end".into())))
            .collect::<PyResult<Vec<_>>>()?;
        Strings::new(blob.to_vec(), ends).map_err(bad)
    }

    /// Rows as text (see `rowtext`): made once with the templates and the strings of an
    /// export, then asked for its rows a chunk at a time.
    #[pyclass(module = "parsers._core", frozen)]
    pub struct RowWriter {
        inner: RowText,
    }

    #[pymethods]
    impl RowWriter {
        #[new]
        fn new(
            templates: Vec<TemplateArg<'_>>,
            blob: &[u8],
            ends: PyReadonlyArray1<'_, i64>,
            null: &[u8],
        ) -> PyResult<Self> {
            let mut made = Vec::with_capacity(templates.len());
            for (fields, tail) in templates {
                let mut out = Vec::with_capacity(fields.len());
                for (text, code, column) in fields {
                    let value =
                        Value::from_code(code).ok_or_else(|| bad("no such value code".into()))?;
                    out.push(Field {
                        text: text.as_bytes().to_vec(),
                        value,
                        column,
                    });
                }
                made.push(Template {
                    fields: out,
                    tail: tail.as_bytes().to_vec(),
                });
            }
            if made.len() > 256 {
                return Err(bad("at most 256 kinds of row".into()));
            }
            Ok(RowWriter {
                inner: RowText {
                    templates: made,
                    strings: strings(blob, &ends)?,
                    null: null.to_vec(),
                },
            })
        }

        /// The rows (each one's kind, its integer and float columns) as text, `separator`
        /// between two rows.
        fn rows<'py>(
            &self,
            py: Python<'py>,
            kind: PyReadonlyArray1<'py, u8>,
            ints: Vec<PyReadonlyArray1<'py, i64>>,
            floats: Vec<PyReadonlyArray1<'py, f64>>,
            separator: &[u8],
        ) -> PyResult<Bound<'py, PyBytes>> {
            let kind = kind.as_slice()?;
            let ints = ints
                .iter()
                .map(|c| c.as_slice())
                .collect::<Result<Vec<_>, _>>()?;
            let floats = floats
                .iter()
                .map(|c| c.as_slice())
                .collect::<Result<Vec<_>, _>>()?;
            let inner = &self.inner;
            let out = py.detach(|| {
                let rows = Rows {
                    kind,
                    ints: &ints,
                    floats: &floats,
                };
                let mut out = Vec::with_capacity(kind.len() * 96);
                inner.write(&mut out, &rows, separator).map(|()| out)
            });
            Ok(PyBytes::new(py, &out.map_err(bad)?))
        }
    }
}
