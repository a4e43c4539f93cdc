//! Perfetto's native trace format, the TrackEvent part: slices and counter values as
//! TracePackets, in the protobuf wire format written by hand.
//!
//! Field numbers are those of Perfetto's protos (protos/perfetto/trace/trace.proto,
//! trace_packet.proto, track_event/track_event.proto, track_event/debug_annotation.proto,
//! interned_data/interned_data.proto). Every event name, category, argument name and string
//! argument value is interned: sent once on the packet sequence, in the interned_data of
//! the first packet that uses it, then named by its id.

use crate::rowtext::{Rows, Strings};

// Trace
const TRACE_PACKET: u32 = 1;
// TracePacket
const TIMESTAMP: u32 = 8;
const SEQUENCE_ID: u32 = 10; // trusted_packet_sequence_id
const TRACK_EVENT: u32 = 11;
const INTERNED_DATA: u32 = 12;
const SEQUENCE_FLAGS: u32 = 13;
/// SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE: the packet names interned data.
pub const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
// TrackEvent
const CATEGORY_IIDS: u32 = 3;
const DEBUG_ANNOTATIONS: u32 = 4;
const TYPE: u32 = 9;
const NAME_IID: u32 = 10;
const TRACK_UUID: u32 = 11;
const DOUBLE_COUNTER_VALUE: u32 = 44;
const TYPE_SLICE_BEGIN: u64 = 1;
const TYPE_SLICE_END: u64 = 2;
const TYPE_COUNTER: u64 = 4;
// DebugAnnotation
const ANNOTATION_NAME_IID: u32 = 1;
const BOOL_VALUE: u32 = 2;
const INT_VALUE: u32 = 4;
const DOUBLE_VALUE: u32 = 5;
const STRING_VALUE_IID: u32 = 17;
// InternedData: the index of each sort of interned string, and its field; every entry is
// {iid = 1, name (or str) = 2}
const EVENT_NAMES: usize = 0;
const EVENT_CATEGORIES: usize = 1;
const ANNOTATION_NAMES: usize = 2;
const STRING_VALUES: usize = 3;
const INTERNED_FIELDS: [u32; 4] = [2, 1, 3, 29];

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LENGTH: u32 = 2;

/// An argument's value, from an integer or float column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    Int,
    /// Negative: none (the argument is left out).
    OptInt,
    /// A string id; negative: none (left out).
    Str,
    Bool,
    Float,
}

impl Arg {
    /// The code Python gives for each (see parsers/perfetto.py).
    pub fn from_code(code: u8) -> Option<Arg> {
        Some(match code {
            0 => Arg::Int,
            1 => Arg::OptInt,
            2 => Arg::Str,
            3 => Arg::Bool,
            4 => Arg::Float,
            _ => return None,
        })
    }
}

/// An argument of a slice: its name (a string id) and where its value is.
#[derive(Clone, Debug)]
pub struct Annotation {
    pub name: i64,
    pub value: Arg,
    pub column: usize,
}

/// One kind of slice: its category (a string id) and its arguments.
#[derive(Clone, Debug)]
pub struct SliceKind {
    pub category: i64,
    pub annotations: Vec<Annotation>,
}

/// The packets of one sequence: what it has interned so far.
pub struct Encoder {
    strings: Strings,
    kinds: Vec<SliceKind>,
    iids: [Vec<u64>; 4], // per string id, its id in each index (0: not sent yet)
    next: [u64; 4],
    sequence: u64,
    interned: Vec<u8>,
    event: Vec<u8>,
    scratch: Vec<u8>,
    packet: Vec<u8>,
    open: Vec<u64>, // the ends of the slices begun on `open_track` and not ended yet
    open_track: u64,
}

/// Append `v` as a base-128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_tag(out: &mut Vec<u8>, field: u32, wire: u32) {
    put_varint(out, u64::from(field << 3 | wire));
}

/// Append a varint field.
pub fn put_uint(out: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(out, field, VARINT);
    put_varint(out, v);
}

/// Append a length-delimited field (a string, bytes or a message).
pub fn put_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_tag(out, field, LENGTH);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn put_double(out: &mut Vec<u8>, field: u32, x: f64) {
    put_tag(out, field, FIXED64);
    out.extend_from_slice(&x.to_le_bytes());
}

/// A time in µs as ns (TracePacket.timestamp is unsigned: a time before 0 is refused).
fn ns(us: i64) -> Result<u64, String> {
    us.checked_mul(1000)
        .and_then(|v| u64::try_from(v).ok())
        .ok_or_else(|| format!("a time of {us} µs cannot be a Perfetto timestamp"))
}

impl Encoder {
    /// An encoder for the sequence `sequence`, its strings (raw UTF-8) and slice kinds.
    pub fn new(strings: Strings, kinds: Vec<SliceKind>, sequence: u32) -> Encoder {
        let n = strings.len();
        Encoder {
            strings,
            kinds,
            iids: std::array::from_fn(|_| vec![0; n]),
            next: [1; 4],
            sequence: u64::from(sequence),
            interned: Vec::new(),
            event: Vec::new(),
            scratch: Vec::new(),
            packet: Vec::new(),
            open: Vec::new(),
            open_track: 0,
        }
    }

    /// String `id`'s interning id in `index`, put in this packet's interned data the first
    /// time.
    fn intern(&mut self, index: usize, id: i64) -> Result<u64, String> {
        let k = usize::try_from(id)
            .ok()
            .filter(|&k| k < self.strings.len())
            .ok_or("no such string")?;
        let slot = &mut self.iids[index][k];
        if *slot == 0 {
            *slot = self.next[index];
            self.next[index] += 1;
            let text = self.strings.get(id).ok_or("no such string")?;
            self.scratch.clear();
            put_uint(&mut self.scratch, 1, *slot);
            put_bytes(&mut self.scratch, 2, text);
            put_bytes(&mut self.interned, INTERNED_FIELDS[index], &self.scratch);
        }
        Ok(*slot)
    }

    /// Append the packet of the event made so far, at `ts_ns` (`interned`: it names
    /// interned strings, so it needs the sequence's state).
    fn flush(&mut self, out: &mut Vec<u8>, ts_ns: u64, interned: bool) {
        self.packet.clear();
        put_uint(&mut self.packet, TIMESTAMP, ts_ns);
        put_uint(&mut self.packet, SEQUENCE_ID, self.sequence);
        if interned {
            put_uint(
                &mut self.packet,
                SEQUENCE_FLAGS,
                SEQ_NEEDS_INCREMENTAL_STATE,
            );
        }
        if !self.interned.is_empty() {
            put_bytes(&mut self.packet, INTERNED_DATA, &self.interned);
            self.interned.clear();
        }
        put_bytes(&mut self.packet, TRACK_EVENT, &self.event);
        put_bytes(out, TRACE_PACKET, &self.packet);
    }

    fn begin(
        &mut self,
        out: &mut Vec<u8>,
        track: u64,
        rows: &Rows,
        r: usize,
    ) -> Result<(), String> {
        let kind = self
            .kinds
            .get(usize::from(rows.kind[r]))
            .ok_or("a slice of no such kind")?
            .clone();
        let name = self.intern(EVENT_NAMES, rows.ints[2][r])?;
        let category = self.intern(EVENT_CATEGORIES, kind.category)?;
        self.event.clear();
        put_uint(&mut self.event, TYPE, TYPE_SLICE_BEGIN);
        put_uint(&mut self.event, TRACK_UUID, track);
        put_uint(&mut self.event, NAME_IID, name);
        put_uint(&mut self.event, CATEGORY_IIDS, category);
        let missing = || "an argument names no such column".to_string();
        let mut annotation = Vec::new();
        for a in &kind.annotations {
            annotation.clear();
            if a.value == Arg::Float {
                let x = rows.floats.get(a.column).ok_or_else(missing)?[r];
                put_uint(
                    &mut annotation,
                    ANNOTATION_NAME_IID,
                    self.intern(ANNOTATION_NAMES, a.name)?,
                );
                put_double(&mut annotation, DOUBLE_VALUE, x);
            } else {
                let v = rows.ints.get(a.column).ok_or_else(missing)?[r];
                if v < 0 && matches!(a.value, Arg::OptInt | Arg::Str) {
                    continue; // none: JSON's null, left out
                }
                put_uint(
                    &mut annotation,
                    ANNOTATION_NAME_IID,
                    self.intern(ANNOTATION_NAMES, a.name)?,
                );
                match a.value {
                    Arg::Str => {
                        let iid = self.intern(STRING_VALUES, v)?;
                        put_uint(&mut annotation, STRING_VALUE_IID, iid);
                    }
                    Arg::Bool => put_uint(&mut annotation, BOOL_VALUE, u64::from(v != 0)),
                    _ => put_uint(&mut annotation, INT_VALUE, v as u64), // int64: two's complement
                }
            }
            put_bytes(&mut self.event, DEBUG_ANNOTATIONS, &annotation);
        }
        self.flush(out, ns(rows.ints[0][r])?, true);
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<u8>, track: u64, ts_ns: u64) {
        self.event.clear();
        put_uint(&mut self.event, TYPE, TYPE_SLICE_END);
        put_uint(&mut self.event, TRACK_UUID, track);
        self.flush(out, ts_ns, false);
    }

    /// Append slices of `track` as BEGIN and END packets: `rows` by start, the longer
    /// first at one start (ints[0] start µs, ints[1] duration µs, ints[2] name id, the
    /// others the arguments' columns), a track given in one call or in several in a row,
    /// then `close`d. A slice inside the one before it is its child; one that begins inside
    /// it and ends after it cannot nest, and is counted.
    ///
    /// Returns:
    ///     How many slices could not nest.
    pub fn slices(&mut self, out: &mut Vec<u8>, track: u64, rows: &Rows) -> Result<u64, String> {
        rows.check()?;
        if rows.ints.len() < 3 {
            return Err("slices need start, duration and name columns".into());
        }
        if !self.open.is_empty() && self.open_track != track {
            return Err("a track's slices began before the last one was closed".into());
        }
        self.open_track = track;
        let mut crossing = 0;
        for r in 0..rows.kind.len() {
            let start = ns(rows.ints[0][r])?;
            let end = ns(rows.ints[0][r]
                .checked_add(rows.ints[1][r])
                .ok_or("a slice past time")?)?;
            while let Some(&top) = self.open.last() {
                if top > start {
                    break;
                }
                self.end(out, track, top);
                self.open.pop();
            }
            if self.open.last().is_some_and(|&top| end > top) {
                crossing += 1;
            }
            self.begin(out, track, rows, r)?;
            self.open.push(end);
        }
        Ok(crossing)
    }

    /// Append the END packets of the slices of the track still open.
    pub fn close(&mut self, out: &mut Vec<u8>) {
        while let Some(top) = self.open.pop() {
            self.end(out, self.open_track, top);
        }
    }

    /// Append a counter track's values: one COUNTER packet each.
    pub fn counters(
        &mut self,
        out: &mut Vec<u8>,
        track: u64,
        ts_us: &[i64],
        values: &[f64],
    ) -> Result<(), String> {
        if ts_us.len() != values.len() {
            return Err("counter columns differ in length".into());
        }
        for (&t, &v) in ts_us.iter().zip(values) {
            self.event.clear();
            put_uint(&mut self.event, TYPE, TYPE_COUNTER);
            put_uint(&mut self.event, TRACK_UUID, track);
            put_double(&mut self.event, DOUBLE_COUNTER_VALUE, v);
            self.flush(out, ns(t)?, false);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_base_128() {
        let mut out = Vec::new();
        for v in [0, 1, 127, 128, 300, u64::MAX] {
            put_varint(&mut out, v);
        }
        let mut want = vec![0, 1, 127, 0x80, 1, 0xac, 2];
        want.extend([0xff; 9]);
        want.push(1);
        assert_eq!(out, want);
    }

    fn encoder() -> Encoder {
        let strings = Strings::new(b"slicecatjob".to_vec(), vec![5, 8, 11]).unwrap();
        let kind = SliceKind {
            category: 1,
            annotations: vec![Annotation {
                name: 2,
                value: Arg::Int,
                column: 3,
            }],
        };
        Encoder::new(strings, vec![kind], 7)
    }

    #[test]
    fn nested_slices_end_inside_out_and_strings_are_sent_once() {
        let mut enc = encoder();
        let (ts, dur, name, arg) = ([0i64, 0, 5], [10i64, 5, 5], [0i64, 0, 0], [1i64, -2, 3]);
        let ints: [&[i64]; 4] = [&ts, &dur, &name, &arg];
        let rows = Rows {
            kind: &[0, 0, 0],
            ints: &ints,
            floats: &[],
        };
        let mut out = Vec::new();
        assert_eq!(enc.slices(&mut out, 9, &rows).unwrap(), 0);
        assert!(enc.slices(&mut out, 8, &rows).is_err()); // track 9 is still open
        enc.close(&mut out);
        // begin 0 (interns slice, cat, job), begin 0, end 5, begin 5, end 10, end 10
        let slice = b"slice".as_slice();
        let count = out.windows(slice.len()).filter(|w| *w == slice).count();
        assert_eq!(count, 1);
        let packets = out.iter().filter(|&&b| b == 0x0a).count();
        assert!(packets >= 6);
    }

    #[test]
    fn a_slice_that_cannot_nest_is_counted_and_a_negative_time_refused() {
        let mut enc = encoder();
        let (ts, dur, name, arg) = ([0i64, 5], [10i64, 10], [0i64, 0], [0i64, 0]);
        let ints: [&[i64]; 4] = [&ts, &dur, &name, &arg];
        let rows = Rows {
            kind: &[0, 0],
            ints: &ints,
            floats: &[],
        };
        assert_eq!(enc.slices(&mut Vec::new(), 1, &rows).unwrap(), 1);
        enc.close(&mut Vec::new());
        let before = [-1i64];
        let ints: [&[i64]; 4] = [&before, &before, &name[..1], &arg[..1]];
        let rows = Rows {
            kind: &[0],
            ints: &ints,
            floats: &[],
        };
        assert!(enc.slices(&mut Vec::new(), 1, &rows).is_err());
    }
}

#[cfg(feature = "python")]
pub mod python {
    use numpy::PyReadonlyArray1;
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    use super::{Annotation, Arg, Encoder, SliceKind};
    use crate::rowtext::python::strings;
    use crate::rowtext::Rows;

    fn bad(e: String) -> PyErr {
        PyValueError::new_err(e)
    }

    /// One slice kind as Python gives it: its category's string id, and (name string id,
    /// value code, column) per argument.
    type KindArg = (i64, Vec<(i64, u8, usize)>);

    /// TrackEvent packets of one sequence (see `trackevent`): made once with the strings
    /// and slice kinds of an export, then asked for a track's packets at a time.
    #[pyclass(module = "parsers._core")]
    pub struct TrackEventWriter {
        inner: Encoder,
    }

    #[pymethods]
    impl TrackEventWriter {
        #[new]
        fn new(
            kinds: Vec<KindArg>,
            blob: &[u8],
            ends: PyReadonlyArray1<'_, i64>,
            sequence: u32,
        ) -> PyResult<Self> {
            let mut made = Vec::with_capacity(kinds.len());
            for (category, args) in kinds {
                let mut annotations = Vec::with_capacity(args.len());
                for (name, code, column) in args {
                    let value =
                        Arg::from_code(code).ok_or_else(|| bad("no such argument code".into()))?;
                    annotations.push(Annotation {
                        name,
                        value,
                        column,
                    });
                }
                made.push(SliceKind {
                    category,
                    annotations,
                });
            }
            Ok(TrackEventWriter {
                inner: Encoder::new(strings(blob, &ends)?, made, sequence),
            })
        }

        /// Slices of a track as packets (see `Encoder::slices`; then `close`): (the
        /// packets, how many slices could not nest).
        fn slices<'py>(
            &mut self,
            py: Python<'py>,
            track: u64,
            kind: PyReadonlyArray1<'py, u8>,
            ints: Vec<PyReadonlyArray1<'py, i64>>,
            floats: Vec<PyReadonlyArray1<'py, f64>>,
        ) -> PyResult<(Bound<'py, PyBytes>, u64)> {
            let kind = kind.as_slice()?;
            let ints = ints
                .iter()
                .map(|c| c.as_slice())
                .collect::<Result<Vec<_>, _>>()?;
            let floats = floats
                .iter()
                .map(|c| c.as_slice())
                .collect::<Result<Vec<_>, _>>()?;
            let inner = &mut self.inner;
            let out = py.detach(|| {
                let rows = Rows {
                    kind,
                    ints: &ints,
                    floats: &floats,
                };
                let mut out = Vec::with_capacity(kind.len() * 64);
                inner.slices(&mut out, track, &rows).map(|n| (out, n))
            });
            let (out, crossing) = out.map_err(bad)?;
            Ok((PyBytes::new(py, &out), crossing))
        }

        /// The END packets of the slices still open on the last track given.
        fn close<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
            let mut out = Vec::new();
            self.inner.close(&mut out);
            PyBytes::new(py, &out)
        }

        /// A counter track's values as packets.
        fn counters<'py>(
            &mut self,
            py: Python<'py>,
            track: u64,
            ts_us: PyReadonlyArray1<'py, i64>,
            values: PyReadonlyArray1<'py, f64>,
        ) -> PyResult<Bound<'py, PyBytes>> {
            let (ts, values) = (ts_us.as_slice()?, values.as_slice()?);
            let inner = &mut self.inner;
            let out = py.detach(|| {
                let mut out = Vec::with_capacity(ts.len() * 32);
                inner.counters(&mut out, track, ts, values).map(|()| out)
            });
            Ok(PyBytes::new(py, &out.map_err(bad)?))
        }
    }
}
