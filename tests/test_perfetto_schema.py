"""The Perfetto protobuf trace read with Perfetto's own schema, not the project's decoder:
Perfetto's .proto files (tests/perfetto_protos/, cut down to the fields the export uses)
compiled by protoc at test time, every packet parsed as `perfetto.protos.Trace` with no
field the schema does not know, and the rules Perfetto's importer reads it by.

Order: the file is not sorted by time (one track's events after another's). Perfetto's
importer sorts all packets by timestamp, keeping file order among equal ones, at the end of
the file when no tracing-service flush events say it may sort a window at a time (the
export writes none; src/trace_processor/sorter/trace_sorter.h in google/perfetto); so only
the order inside a track matters, and there timestamps never go back, which makes
Perfetto's BEGIN/END pairing the same as the file's.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, unknown_fields
from google.protobuf.message import Message
from grpc_tools import protoc
from helpers import build

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers.export import write_trace
from parsers.model import LogModel
from parsers.perfetto import uint_field

PROTOS = Path(__file__).parent / "perfetto_protos"
SAMPLES = Path(__file__).parent / "samples"
SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE = 1, 2
SLICE_BEGIN, SLICE_END, COUNTER = 1, 2, 4


@pytest.fixture(scope="module")
def trace_class(tmp_path_factory: pytest.TempPathFactory) -> type[Message]:
    """`perfetto.protos.Trace`, from the vendored protos compiled now."""
    out = tmp_path_factory.mktemp("protos") / "trace.desc"
    args = ["protoc", f"-I{PROTOS}", "--include_imports", f"--descriptor_set_out={out}"]
    assert protoc.main([*args, "protos/perfetto/trace/trace.proto"]) == 0
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(file)
    cls: type[Message] = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("perfetto.protos.Trace")
    )
    return cls


def unknown(msg: Message, path: str = "trace") -> list[str]:
    """Where `msg` or a message inside it holds a field its schema does not know."""
    out = [f"{path}: field {f.field_number}" for f in unknown_fields.UnknownFieldSet(msg)]
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        if fd.is_repeated:
            for k, v in enumerate(value):
                out += unknown(v, f"{path}.{fd.name}[{k}]")
        else:
            out += unknown(value, f"{path}.{fd.name}")
    return out


def _interned_text(entry: Any) -> str:
    text: str = entry.str.decode() if entry.DESCRIPTOR.name == "InternedString" else entry.name
    return text


def read_trace(
    trace: Any, metadata: dict[str, Any] | None = None
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Check Perfetto's rules packet by packet; returns the slices (pid, tid, µs, dur µs,
    name, category, args) and counter values (pid, track name, µs, value) it holds (its
    metadata put in `metadata`)."""
    metadata = {} if metadata is None else metadata
    tracks: dict[int, Any] = {}
    # per sequence, per InternedData field, iid -> text
    interned: dict[int, dict[str, dict[int, str]]] = defaultdict(lambda: defaultdict(dict))
    cleared: set[int] = set()
    last_ns: dict[int, int] = {}  # per track
    open_slices: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    slices, counters = [], []
    for i, p in enumerate(trace.packet):
        assert p.HasField("trusted_packet_sequence_id") and p.trusted_packet_sequence_id, i
        seq, flags = p.trusted_packet_sequence_id, p.sequence_flags
        assert bool(flags & SEQ_INCREMENTAL_STATE_CLEARED) == (i == 0), i
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            cleared.add(seq)
        if p.HasField("interned_data"):
            assert seq in cleared and flags & SEQ_NEEDS_INCREMENTAL_STATE, i
            for fd, entries in p.interned_data.ListFields():
                for e in entries:
                    assert e.iid > 0, i  # 0 is "not set"
                    known = interned[seq][fd.name].setdefault(e.iid, _interned_text(e))
                    assert known == _interned_text(e), (i, fd.name, e.iid)
        if p.HasField("chrome_events"):  # the trace's metadata: once, of no instant
            assert i == 1 and not p.HasField("timestamp"), i
            for m in p.chrome_events.metadata:
                which = m.WhichOneof("value")
                assert which in ("string_value", "json_value") and m.name not in metadata, i
                value = getattr(m, which)
                metadata[m.name] = value if which == "string_value" else json.loads(value)
            continue
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            assert d.uuid not in tracks, i
            assert not d.HasField("parent_uuid") or d.parent_uuid in tracks, i
            tracks[d.uuid] = d
            continue
        e = p.track_event
        assert p.HasField("track_event") and p.HasField("timestamp"), i
        assert e.track_uuid in tracks, i  # described before it is used
        track = tracks[e.track_uuid]
        assert p.timestamp >= last_ns.get(e.track_uuid, 0), i
        last_ns[e.track_uuid] = p.timestamp
        assert p.timestamp % 1000 == 0, i  # the JSON trace's µs
        us = p.timestamp // 1000
        if e.type == COUNTER:
            assert track.HasField("counter") and e.HasField("double_counter_value"), i
            pid = tracks[track.parent_uuid].process.pid
            counters.append((pid, track.name, us, e.double_counter_value))
            continue
        assert not track.HasField("counter"), i
        if e.type == SLICE_END:
            assert open_slices[e.track_uuid], i  # an END pairs with a BEGIN
            begun = open_slices[e.track_uuid].pop()
            slices.append((*begun[:3], us - begun[2], *begun[3:]))
            continue
        assert e.type == SLICE_BEGIN and flags & SEQ_NEEDS_INCREMENTAL_STATE, i
        names = interned[seq]
        args = {}
        for a in e.debug_annotations:
            which = a.WhichOneof("value")
            value = getattr(a, which)
            if which == "string_value_iid":
                value = names["debug_annotation_string_values"][value]
            args[names["debug_annotation_names"][a.name_iid]] = value
        cats = ",".join(names["event_categories"][c] for c in e.category_iids)
        pid, tid = (
            (track.process.pid, 0)
            if track.HasField("process")
            else (tracks[track.parent_uuid].process.pid, track.sibling_order_rank)
        )
        event = (pid, tid, us, names["event_names"][e.name_iid], cats, _args(args))
        open_slices[e.track_uuid].append(event)
    assert not any(open_slices.values()), "a slice never ended"
    return slices, counters


def _args(args: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in args.items() if v is not None}, sort_keys=True)


def json_trace(doc: dict[str, Any]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The JSON trace's slices and counter values, as `read_trace` gives them."""
    slices, counters = [], []
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            head = (e["pid"], e["tid"], e["ts"], e["dur"], e["name"], e["cat"])
            slices.append((*head, _args(e["args"])))
        elif e["ph"] == "C":
            ((key, value),) = e["args"].items()
            counters.append((e["pid"], f"{e['name']} {key}", e["ts"], value))
    return slices, counters


def _models() -> list[tuple[str, LogModel]]:
    failing = SimConfig(seed=11, proofs=8, gpus=2, fail=0.1, fail_prove=0.1, mix=0.3)
    out = [("simulated 2 GPUs, failures", build(simulate(failing)[1]))]
    for path in sorted(SAMPLES.glob("*.log")):
        out.append((path.name, build(path.read_bytes())))
    return out


MODELS = _models()


@pytest.mark.parametrize(("name", "model"), MODELS, ids=[n for n, _ in MODELS])
def test_perfettos_schema_reads_the_trace_and_it_holds_the_json_traces_events(
    name: str, model: LogModel, tmp_path: Path, trace_class: type[Message]
) -> None:
    lo, hi = model.time_range
    for t0, t1 in [(-math.inf, math.inf), (lo + (hi - lo) / 3, lo + (hi - lo) / 2)]:
        write_trace(model, tmp_path / "t.json", t0, t1)
        write_trace(model, tmp_path / "t.perfetto-trace", t0, t1)
        data = (tmp_path / "t.perfetto-trace").read_bytes()
        trace = trace_class.FromString(data)
        assert unknown(trace) == []
        assert len(trace.SerializeToString()) == len(data)  # nothing dropped or skipped
        metadata: dict[str, Any] = {}
        slices, counters = read_trace(trace, metadata)
        doc = json.loads((tmp_path / "t.json").read_text())
        want_slices, want_counters = json_trace(doc)
        assert sorted(slices) == sorted(want_slices)
        assert sorted(counters) == sorted(want_counters)
        # what the JSON trace says of itself, the busy split with its estimates among it
        assert metadata == doc["otherData"] and "busy_split_estimates" in metadata
        if t0 == -math.inf:
            assert slices and counters
            failed = any(s[4].endswith(" (failed)") for s in slices)
            assert failed or not name.startswith("simulated")  # its failed intervals too


def test_a_field_the_schema_does_not_know_is_found(trace_class: type[Message]) -> None:
    trace: Any = trace_class()
    # a packet, and a TrackEvent inside another, each with a varint field numbered 1000
    extra = uint_field(1000, 7)
    trace.packet.add().MergeFromString(extra)
    trace.packet.add().track_event.MergeFromString(extra)
    assert unknown(trace) == [
        "trace.packet[0]: field 1000",
        "trace.packet[1].track_event: field 1000",
    ]
