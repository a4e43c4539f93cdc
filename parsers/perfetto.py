"""The trace as Perfetto's native protobuf (a `.perfetto-trace`): the same processes, tracks,
slices and counters as the JSON trace, in a fraction of its size.

The file is a `Trace`: a stream of TracePackets on one packet sequence. First the track
descriptors: a process track per JSON pid (its name, its place by pid), under it a track
per JSON tid (its name, its place by tid) and a counter track per counter (named as
Perfetto names a JSON counter: the event's name, a space, its argument's key), each uuid a
small number given in order. Then each track's events, as the core encodes them
(core/src/trackevent.rs): a JSON complete event is a TYPE_SLICE_BEGIN and a TYPE_SLICE_END
packet, its arguments debug annotations (a null one left out), a counter event a
TYPE_COUNTER packet; names, categories, argument names and string values interned. Times
are the JSON trace's µs, as ns.

After the root track, one packet holds the trace's metadata (the JSON trace's `otherData`:
the busy split and its estimated and unmeasured keys among it) as a ChromeEventBundle's
metadata, which Perfetto's trace processor puts in its metadata table.

Field numbers: Perfetto's protos/perfetto/trace/trace_packet.proto,
chrome/chrome_trace_event.proto,
track_event/track_descriptor.proto, track_event/process_descriptor.proto and
track_event/counter_descriptor.proto.
"""

from __future__ import annotations

import json
from typing import IO, Any

import numpy as np

from parsers import _core
from parsers.rows import distinct
from parsers.trace_tracks import (
    ARGS,
    CATEGORIES,
    CHUNK_ROWS,
    COUNTER,
    NAME,
    TraceTracks,
    string_table,
)

SEQUENCE = 1  # trusted_packet_sequence_id of every packet
SEQ_INCREMENTAL_STATE_CLEARED = 1
# TracePacket
PACKET, TIMESTAMP, SEQUENCE_ID, SEQUENCE_FLAGS, TRACK_DESCRIPTOR = 1, 8, 10, 13, 60
CHROME_EVENTS = 5
# ChromeEventBundle, ChromeMetadata
METADATA, METADATA_NAME, STRING_VALUE, JSON_VALUE = 2, 1, 2, 5
# TrackDescriptor
UUID, NAME_FIELD, PROCESS, PARENT_UUID, COUNTER_FIELD = 1, 2, 3, 5, 8
CHILD_ORDERING, SIBLING_ORDER_RANK, PROCESS_ORDERING = 11, 12, 19
EXPLICIT, PROCESS_ORDERING_EXPLICIT = 3, 1
# ProcessDescriptor
PROCESS_PID, PROCESS_NAME = 1, 6


def varint(v: int) -> bytes:
    """`v` (0 or more, or a negative int64 as two's complement) as a base-128 varint."""
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def uint_field(field: int, v: int) -> bytes:
    """A varint field."""
    return varint(field << 3) + varint(v)


def bytes_field(field: int, data: bytes) -> bytes:
    """A length-delimited field (a string, bytes, a message)."""
    return varint(field << 3 | 2) + varint(len(data)) + data


def text(s: str) -> bytes:
    """A string field's bytes: UTF-8 (a lone surrogate, from a file name, replaced)."""
    return s.encode("utf-8", "replace")


class _Uuids:
    """Each track's uuid, given in order from 1 (small numbers: short varints)."""

    def __init__(self) -> None:
        self._given: dict[tuple[int, int, str], int] = {}

    def of(self, pid: int, tid: int = -1, counter: str = "") -> int:
        """The uuid of the process track of `pid` (`tid` -1), of its track `tid`, or of
        its counter track `counter`."""
        key = (pid, tid, counter)
        uuid = self._given.get(key)
        if uuid is None:
            uuid = self._given[key] = len(self._given) + 1
        return uuid


def _packet(body: bytes, flags: int = 0) -> bytes:
    head = uint_field(SEQUENCE_ID, SEQUENCE)
    if flags:
        head += uint_field(SEQUENCE_FLAGS, flags)
    return bytes_field(PACKET, head + body)


def _descriptor(fields: bytes, flags: int = 0) -> bytes:
    return _packet(bytes_field(TRACK_DESCRIPTOR, fields), flags)


def _kinds(tracks: TraceTracks) -> list[tuple[int, list[tuple[int, int, int]]]]:
    """Each kind of slice as the core takes it: its category and arguments (string ids)."""
    names = tracks.names
    return [
        (names.id(cat), [(names.id(key), how, column) for key, column, how in ARGS[kind]])
        for kind, cat in enumerate(CATEGORIES)
    ]


def write_perfetto(tracks: TraceTracks, fh: IO[bytes], other: dict[str, Any]) -> tuple[int, int]:
    """Write the trace, `other` its metadata (the JSON trace's `otherData`); returns (the
    JSON trace's event count, bytes written).

    Raises:
        ValueError: a time before 0 (a Perfetto timestamp is unsigned).
    """

    kinds = _kinds(tracks)  # before the table is made: names the categories and keys
    uuids = _Uuids()
    names = tracks.names.items
    count = 0
    # the root track: processes in the order of their tracks' ranks (their pids)
    root = uint_field(UUID, 0) + uint_field(PROCESS_ORDERING, PROCESS_ORDERING_EXPLICIT)
    written = fh.write(_descriptor(root, SEQ_INCREMENTAL_STATE_CLEARED))
    written += fh.write(_metadata(other))
    for p in tracks.processes:
        count += 2 + len(p.threads)  # its metadata events in the JSON trace
        process = uint_field(PROCESS_PID, p.pid) + bytes_field(PROCESS_NAME, text(p.name))
        fields = uint_field(UUID, uuids.of(p.pid)) + bytes_field(PROCESS, process)
        fields += uint_field(CHILD_ORDERING, EXPLICIT) + uint_field(SIBLING_ORDER_RANK, p.pid)
        written += fh.write(_descriptor(fields))
        for tid, name in p.threads:
            written += fh.write(_child(uuids, p.pid, uuids.of(p.pid, tid), name, tid))
    blob, ends = string_table(names, text)
    writer = _core.TrackEventWriter(kinds, blob, ends, SEQUENCE)
    counter_keys = dict(tracks.counter_names)
    named = {(p.pid, tid) for p in tracks.processes for tid, _ in p.threads}
    for track in tracks.tracks():
        count += len(track)
        is_counter = track.kind == COUNTER
        if is_counter.any():
            which = track.ints[NAME][is_counter]
            values = np.ascontiguousarray(track.floats[0][is_counter])
            ts = np.ascontiguousarray(track.ints[0][is_counter])
            for n in distinct(which).tolist():
                mine = which == n
                name = f"{names[n]} {names[counter_keys[n]]}"
                uuid = uuids.of(track.pid, counter=name)
                written += fh.write(_child(uuids, track.pid, uuid, name, -1, counter=True))
                written += fh.write(writer.counters(uuid, ts[mine], values[mine]))
        slices = track.take(np.flatnonzero(~is_counter)) if is_counter.any() else track
        if len(slices) == 0:
            continue
        uuid = uuids.of(track.pid, track.tid)
        if (track.pid, track.tid) not in named:  # a track the JSON trace leaves unnamed
            written += fh.write(_child(uuids, track.pid, uuid, "", track.tid))
            named.add((track.pid, track.tid))
        for lo in range(0, len(slices), CHUNK_ROWS):
            part = slices.take(slice(lo, lo + CHUNK_ROWS)).contiguous()
            data, _ = writer.slices(uuid, part.kind, list(part.ints), list(part.floats))
            written += fh.write(data)
        written += fh.write(writer.close())
    return count, written


def _metadata(other: dict[str, Any]) -> bytes:
    """The packet of the trace's metadata: each entry of the JSON trace's `otherData` (a
    string as a string, anything else as its JSON), which Perfetto's trace processor puts
    in its metadata table as `cr-<name>`. No timestamp: it is of no instant."""
    entries = b""
    for name, value in other.items():
        field = (
            bytes_field(STRING_VALUE, text(value))
            if isinstance(value, str)
            else bytes_field(JSON_VALUE, text(json.dumps(value, separators=(",", ":"))))
        )
        entries += bytes_field(METADATA, bytes_field(METADATA_NAME, text(name)) + field)
    return _packet(bytes_field(CHROME_EVENTS, entries))


def _child(
    uuids: _Uuids, pid: int, uuid: int, name: str, rank: int, counter: bool = False
) -> bytes:
    """The descriptor of a track under the process track of `pid`, placed by `rank`."""
    fields = uint_field(UUID, uuid) + uint_field(PARENT_UUID, uuids.of(pid))
    if name:
        fields += bytes_field(NAME_FIELD, text(name))
    if counter:
        fields += bytes_field(COUNTER_FIELD, b"")
    return _descriptor(fields + uint_field(SIBLING_ORDER_RANK, rank))
