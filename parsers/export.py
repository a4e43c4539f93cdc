"""Export the model: Trace Event Format JSON (Perfetto, chrome://tracing), Perfetto's own
protobuf trace, and CSV tables.

Each track's events are columns (parsers/trace_tracks.py) written a chunk at a time by the
core, never one Python object per event.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import IO, Any

from parsers import _core
from parsers.breakdown import busy_breakdown, busy_split_ms, estimated_keys, unmeasured_keys
from parsers.export_csv import CSV_FILES, check_csv_targets, csv_text, write_csv
from parsers.model import Breakdown, LogModel
from parsers.trace_tracks import (
    A0,
    ARGS,
    BOOL,
    CATEGORIES,
    CHUNK_ROWS,
    COUNTER,
    DUR,
    NAME,
    OPT_INT,
    PID,
    STR,
    TID,
    TS,
    VALUE,
    Process,
    TraceTracks,
    Track,
    string_table,
)
from parsers.writing import atomic_output

__all__ = [
    "CSV_FILES",
    "JSON_TRACE_LIMIT_BYTES",
    "PERFETTO_SUFFIXES",
    "busy_splits",
    "check_csv_targets",
    "csv_text",
    "is_perfetto",
    "trace_document",
    "trace_events",
    "write_csv",
    "write_trace",
]

# A JSON trace past this size may not open in Perfetto UI. Perfetto's documentation
# ("Visualising large traces", docs/visualization/large-traces.md in google/perfetto: "How
# big is too big?") gives 2 GB as the typical memory a browser allows the UI, and a trace's
# representation at run time as 2-4x the size of a protobuf trace. The JSON trace holds the
# same events in 2.5x the bytes of its protobuf (323 MB and 128 MB on the 100-hour simulated
# log): its events take 0.8-1.6x its size, beside its text being read, so past a quarter of
# the 2 GB the UI may run out of memory.
JSON_TRACE_LIMIT_BYTES = 512 * 2**20
PERFETTO_SUFFIXES = (".perfetto-trace", ".pftrace")


def is_perfetto(path: Path) -> bool:
    """Whether `path` names a Perfetto protobuf trace (by its suffix), not a JSON one."""
    return path.suffix.lower() in PERFETTO_SUFFIXES


def _meta_events(processes: Sequence[Process]) -> Iterator[dict[str, Any]]:
    """Every process's name and place (in pid order), every track's name."""
    for p in processes:
        yield {"name": "process_name", "ph": "M", "pid": p.pid, "tid": 0, "args": {"name": p.name}}
        yield {
            "name": "process_sort_index",
            "ph": "M",
            "pid": p.pid,
            "tid": 0,
            "args": {"sort_index": p.pid},
        }
        for tid, name in p.threads:
            yield {
                "name": "thread_name",
                "ph": "M",
                "pid": p.pid,
                "tid": tid,
                "args": {"name": name},
            }


def _event_dicts(track: Track, names: list[str]) -> Iterator[dict[str, Any]]:
    ints = [c.tolist() for c in track.ints]
    values = track.floats[VALUE].tolist()
    for r, kind in enumerate(track.kind.tolist()):
        name = names[ints[NAME][r]]
        if kind == COUNTER:
            yield {
                "name": name,
                "ph": "C",
                "ts": ints[TS][r],
                "pid": ints[PID][r],
                "tid": ints[TID][r],
                "args": {names[ints[A0][r]]: float(values[r])},
            }
            continue
        args: dict[str, Any] = {}
        for key, column, how in ARGS[kind]:
            args[key] = _arg(ints[column][r], how, names)
        yield {
            "name": name,
            "cat": CATEGORIES[kind],
            "ph": "X",
            "ts": ints[TS][r],
            "dur": ints[DUR][r],
            "pid": ints[PID][r],
            "tid": ints[TID][r],
            "args": args,
        }


def _arg(v: int, how: int, names: list[str]) -> Any:
    """An argument's value, from its column (see trace_tracks.ARGS)."""
    if how in (OPT_INT, STR) and v < 0:
        return None
    return names[v] if how == STR else bool(v) if how == BOOL else v


def trace_events(
    model: LogModel, t0: float = -math.inf, t1: float = math.inf
) -> Iterator[dict[str, Any]]:
    """The model as Trace Event Format events (times in µs on the log's ms clock), one dict
    each: every metadata event first, then each track's events (by process, then thread)
    by start, the longer first at one instant. For a few events (a test, a small window):
    the files are written from the columns."""
    tracks = TraceTracks(model, t0, t1)
    yield from _meta_events(tracks.processes)
    for track in tracks.tracks():
        yield from _event_dicts(track, tracks.names.items)


def trace_document(model: LogModel, t0: float = -math.inf, t1: float = math.inf) -> dict[str, Any]:
    """The whole JSON object Perfetto UI and chrome://tracing open."""
    return {
        "traceEvents": list(trace_events(model, t0, t1)),
        "displayTimeUnit": "ms",
        "otherData": other_data(model, t0, t1),
    }


def other_data(model: LogModel, t0: float, t1: float) -> dict[str, Any]:
    """What the trace says of itself beside its events (the JSON trace's `otherData`, the
    protobuf trace's metadata): the log, the clock, the window, and each GPU's busy split
    with its estimated and unmeasured keys, as the JSON report gives them."""
    # a window's ends (null: unbounded on that side)
    ends = [t if math.isfinite(t) else None for t in (t0, t1)]
    window = {"window_ms": ends} if ends != [None, None] else {}
    return {
        "generator": "cuzk-tui",
        "source": model.source,
        "clock": "ms since the engine started (TIMELINE offsets), as µs",
        "wall_anchor": model.wall_anchor.isoformat() if model.wall_anchor else "",
        **window,
        # per GPU, where its busy time in the exported range went (the whole run's: the JSON
        # report's; a window's: that of busy_split.csv exported with it)
        "busy_split_ms": busy_splits(model, t0, t1),
        # per GPU, the keys of its split that are estimates (the screens' `≈`)
        "busy_split_estimates": {
            model.gpu_label(g): keys for g, keys in estimated_keys(model).items()
        },
        # and those its engine does not measure (0 ms: their time is unknown's)
        "busy_split_unmeasured": {
            model.gpu_label(g): keys for g, keys in unmeasured_keys(model).items()
        },
    }


def busy_splits(
    model: LogModel, t0: float = -math.inf, t1: float = math.inf
) -> dict[str, dict[str, float]]:
    """Per GPU (by label), its busy split in ms over [t0, t1): over the whole run, the JSON
    report's `busy_split_ms`."""
    split = busy_breakdown(model, t0, t1)
    return {
        model.gpu_label(g.gpu): busy_split_ms(split.get(g.gpu, Breakdown(g.gpu, 0.0, {})))
        for g in model.gpus
    }


def _json_templates() -> list[tuple[list[tuple[bytes, int, int]], bytes]]:
    """Each kind's event as the core fills it (its value codes: below)."""
    out = []
    for kind, cat in enumerate(CATEGORIES):
        fields: list[tuple[bytes, int, int]] = [(b'{"name":', _STR, NAME)]
        if kind == COUNTER:
            fields += [(b',"ph":"C","ts":', _INT, TS), (b',"pid":', _INT, PID)]
            fields += [
                (b',"tid":', _INT, TID),
                (b',"args":{', _STR, A0),
                (b":", _JSON_FLOAT, VALUE),
            ]
            out.append((fields, b"}}"))
            continue
        head = f',"cat":{json.dumps(cat)},"ph":"X","ts":'.encode()
        fields += [(head, _INT, TS), (b',"dur":', _INT, DUR), (b',"pid":', _INT, PID)]
        fields.append((b',"tid":', _INT, TID))
        lead = b',"args":{'
        for j, (key, column, how) in enumerate(ARGS[kind]):
            fields.append(
                ((lead if j == 0 else b",") + json.dumps(key).encode() + b":", how, column)
            )
        out.append((fields, (b"" if ARGS[kind] else lead) + b"}}"))
    return out


# the core's value codes (core/src/rowtext.rs Value::from_code); INT..BOOL are also
# trace_tracks' argument kinds
_INT, _OPT_INT, _STR, _BOOL, _JSON_FLOAT, _CSV_FLOAT, _ROUND3 = range(7)


def _write_json(tracks: TraceTracks, fh: IO[bytes]) -> tuple[int, int]:
    """Write the JSON document; returns (events, bytes)."""
    encode = json.JSONEncoder(separators=(",", ":")).encode
    blob, ends = string_table(tracks.names.items, lambda s: encode_basestring_ascii(s).encode())
    writer = _core.RowWriter(_json_templates(), blob, ends, b"null")
    head = '{"traceEvents":[' + encode(list(_meta_events(tracks.processes)))[1:-1]
    written = fh.write(head.encode())
    count = sum(1 for _ in _meta_events(tracks.processes))
    for track in tracks.tracks():
        for lo in range(0, len(track), CHUNK_ROWS):
            part = track.take(slice(lo, lo + CHUNK_ROWS)).contiguous()
            if count:
                written += fh.write(b",")
            written += fh.write(writer.rows(part.kind, list(part.ints), list(part.floats), b","))
            count += len(part)
    other = other_data(tracks.model, tracks.clip.t0, tracks.clip.t1)
    tail = '],"displayTimeUnit":"ms","otherData":' + encode(other) + "}\n"
    written += fh.write(tail.encode())
    return count, written


def write_trace(
    model: LogModel,
    path: Path,
    t0: float = -math.inf,
    t1: float = math.inf,
    inputs: Sequence[Path] = (),
    exclusive: bool = False,
) -> int:
    """Write the trace of [t0, t1) to `path`, as Perfetto's protobuf if its suffix says so
    (PERFETTO_SUFFIXES), else as the JSON document `trace_document` gives: whole or not at
    all, never over one of `inputs` (`exclusive`: only as a new file).

    Returns:
        How many events it holds (the JSON trace's count, metadata events among them).
    """
    return write_trace_sized(model, path, t0, t1, inputs, exclusive)[0]


def write_trace_sized(
    model: LogModel,
    path: Path,
    t0: float = -math.inf,
    t1: float = math.inf,
    inputs: Sequence[Path] = (),
    exclusive: bool = False,
) -> tuple[int, int]:
    """`write_trace`, and the size written in bytes."""
    tracks = TraceTracks(model, t0, t1)
    with atomic_output(path, inputs, binary=True, exclusive=exclusive) as fh:
        if is_perfetto(path):
            from parsers.perfetto import write_perfetto

            return write_perfetto(tracks, fh, other_data(model, tracks.clip.t0, tracks.clip.t1))
        return _write_json(tracks, fh)


def size_warning(path: Path, size: int, limit: int = JSON_TRACE_LIMIT_BYTES) -> str | None:
    """What to tell of a JSON trace of `size` bytes too large for Perfetto UI (None: fine)."""
    if is_perfetto(path) or size <= limit:
        return None
    return (
        f"{size / 2**20:.0f} MiB of JSON may be too large for Perfetto UI to open "
        f"(over {limit / 2**20:.0f} MiB): write {path.stem}.perfetto-trace instead, "
        "or export a window with --from/--to"
    )
