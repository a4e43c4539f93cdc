"""A small reader of Perfetto protobuf traces, for the tests: the wire format by hand, and the
TrackEvent fields the export writes (field numbers from Perfetto's protos), read back as the
JSON trace's events so that the two can be compared."""

from __future__ import annotations

import struct
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

Fields = dict[int, list[Any]]  # field number -> its values (ints, bytes), in order


def fields(data: bytes) -> Fields:
    """Every field of one message: varints as ints, fixed64 as bytes, the rest as bytes."""
    out: Fields = defaultdict(list)
    pos = 0
    while pos < len(data):
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, pos = varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        if pos > len(data):
            raise ValueError("a field runs past its message")
        out[number].append(value)
    return out


def varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos


def signed(v: int) -> int:
    """An int64 sent as a varint."""
    return v - (1 << 64) if v >= 1 << 63 else v


def double(raw: bytes) -> float:
    value: float = struct.unpack("<d", raw)[0]
    return value


def one(f: Fields, number: int, default: Any = None) -> Any:
    values = f.get(number)
    return values[-1] if values else default


@dataclass
class Decoded:
    """A trace read back: its track descriptors, slices and counter values."""

    packets: list[Fields] = field(default_factory=list)
    tracks: dict[int, Fields] = field(default_factory=dict)  # uuid -> descriptor
    slices: list[dict[str, Any]] = field(default_factory=list)  # as JSON "X" events
    counters: list[tuple[int, str, int, float]] = field(default_factory=list)  # pid, name, µs, v

    def pid_tid(self, uuid: int) -> tuple[int, int]:
        """The JSON (pid, tid) of a track: its process's pid, and its rank under it."""
        track = self.tracks[uuid]
        if 3 in track:  # the process track itself
            return int(one(fields(one(track, 3)), 1)), 0
        parent = fields(one(self.tracks[one(track, 5)], 3))
        return int(one(parent, 1)), signed(one(track, 12, 0))


def decode(data: bytes) -> Decoded:
    """Read a whole trace; an interned id used before it is sent raises KeyError."""
    out = Decoded()
    interned: dict[int, dict[int, str]] = defaultdict(dict)  # InternedData field -> iid -> text
    open_slices: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for raw in fields(data)[1]:
        packet = fields(raw)
        out.packets.append(packet)
        if 60 in packet:
            desc = fields(one(packet, 60))
            out.tracks[one(desc, 1)] = desc
        for blob in packet.get(12, []):
            for number, entries in fields(blob).items():
                for entry in entries:
                    e = fields(entry)
                    iid, text = one(e, 1), one(e, 2).decode()
                    assert interned[number].get(iid, text) == text, "an iid sent twice differs"
                    interned[number][iid] = text
        if 11 not in packet:
            continue
        event = fields(one(packet, 11))
        kind, track, ts_ns = one(event, 9), one(event, 11), one(packet, 8)
        assert ts_ns % 1000 == 0
        if kind == 4:  # TYPE_COUNTER
            pid, _ = out.pid_tid(one(out.tracks[track], 5))
            name = one(out.tracks[track], 2).decode()
            out.counters.append((pid, name, ts_ns // 1000, double(one(event, 44))))
        elif kind == 1:  # TYPE_SLICE_BEGIN
            pid, tid = out.pid_tid(track)
            args: dict[str, Any] = {}
            for blob in event.get(4, []):
                a = fields(blob)
                key = interned[3][one(a, 1)]
                if 17 in a:
                    args[key] = interned[29][one(a, 17)]
                elif 2 in a:
                    args[key] = bool(one(a, 2))
                elif 5 in a:
                    args[key] = double(one(a, 5))
                else:
                    args[key] = signed(one(a, 4))
            open_slices[track].append(
                {
                    "name": interned[2][one(event, 10)],
                    "cat": interned[1][one(event, 3)],
                    "ph": "X",
                    "ts": ts_ns // 1000,
                    "pid": pid,
                    "tid": tid,
                    "args": args,
                }
            )
        elif kind == 2:  # TYPE_SLICE_END
            begun = open_slices[track].pop()
            begun["dur"] = ts_ns // 1000 - begun["ts"]
            out.slices.append(begun)
    assert not any(open_slices.values()), "a slice never ended"
    return out
