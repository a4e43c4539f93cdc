"""The Perfetto protobuf trace holds what the JSON trace holds: read back by a decoder of
the wire format, its tracks, slices and counters are the JSON trace's."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from perfetto_decode import decode, fields, one, signed
from test_export_columns import MODELS

from parsers import export
from parsers.export import is_perfetto, write_trace
from parsers.model import LogModel
from tui import cli


def _json_content(doc: dict[str, Any]) -> tuple[list[Any], list[Any], dict[Any, str]]:
    """The JSON trace's slices (null arguments left out, as the protobuf leaves them),
    counter values (named as Perfetto names a JSON counter track) and track names."""
    slices, counters, names = [], [], {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            args = {k: v for k, v in e["args"].items() if v is not None}
            slices.append({**e, "args": args})
        elif e["ph"] == "C":
            ((key, value),) = e["args"].items()
            counters.append((e["pid"], f"{e['name']} {key}", e["ts"], value))
        elif e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e["name"] == "thread_name":
            names[e["pid"], e["tid"]] = e["args"]["name"]
        else:
            assert e["name"] == "process_sort_index" and e["args"]["sort_index"] == e["pid"]
    return slices, counters, names


def _key(e: dict[str, Any]) -> tuple[Any, ...]:
    return (e["pid"], e["tid"], e["ts"], -e["dur"], e["name"], json.dumps(e["args"]))


def _windows(model: LogModel) -> list[tuple[float, float]]:
    lo, hi = model.time_range
    return [(-math.inf, math.inf), (lo + (hi - lo) / 3, lo + (hi - lo) / 2)]


@pytest.mark.parametrize(("name", "model"), MODELS, ids=[n for n, _ in MODELS])
def test_the_protobuf_trace_holds_the_json_traces_events(
    name: str, model: LogModel, tmp_path: Path
) -> None:
    for t0, t1 in _windows(model):
        n_json = write_trace(model, tmp_path / "t.json", t0, t1)
        n_proto = write_trace(model, tmp_path / "t.perfetto-trace", t0, t1)
        assert n_proto == n_json
        doc = json.loads((tmp_path / "t.json").read_text())
        slices, counters, names = _json_content(doc)
        got = decode((tmp_path / "t.perfetto-trace").read_bytes())
        assert sorted(got.slices, key=_key) == sorted(slices, key=_key)
        assert sorted(got.counters) == sorted(counters)
        # the tracks: every JSON process and thread, named, in their places
        shown = {}
        for uuid, track in got.tracks.items():
            if 3 in track:
                process = fields(one(track, 3))
                shown[one(process, 1)] = one(process, 6).decode()
                assert signed(one(track, 12)) == one(process, 1)  # placed by pid
            elif uuid and 8 not in track and 2 in track:  # a named thread-like track
                shown[got.pid_tid(uuid)] = one(track, 2).decode()
        assert shown == names
        # one sequence; the first packet clears its state, every slice's begin needs it
        assert {one(p, 10) for p in got.packets} == {1}
        assert one(got.packets[0], 13) == 1
        begins = [p for p in got.packets if 11 in p and one(fields(one(p, 11)), 9) == 1]
        assert bool(begins) == bool(got.slices)  # a window after every event has none
        assert all(one(p, 13) == 2 for p in begins)


def test_interned_names_are_sent_once_and_the_file_is_smaller(tmp_path: Path) -> None:
    model = dict(MODELS)["random 17"]
    write_trace(model, tmp_path / "t.json")
    write_trace(model, tmp_path / "t.pftrace")
    data = (tmp_path / "t.pftrace").read_bytes()
    got = decode(data)
    sent = [
        one(fields(e), 2)
        for p in got.packets
        for blob in p.get(12, [])
        for entries in fields(blob).values()
        for e in entries
    ]
    kernel = [s for s in sent if s == b"kernel"]
    assert len(kernel) <= 2  # an event name and an argument value are two indices at most
    assert len(data) < (tmp_path / "t.json").stat().st_size / 2


def test_the_suffix_chooses_the_format(tmp_path: Path) -> None:
    assert is_perfetto(Path("a.perfetto-trace")) and is_perfetto(Path("B.PFTRACE"))
    assert not is_perfetto(Path("a.json")) and not is_perfetto(Path("perfetto-trace"))
    log = str(Path(__file__).parent / "samples" / "tiny.log")
    out = tmp_path / "run.perfetto-trace"
    assert cli.main([log, "--export-trace", str(out)]) == 0
    assert decode(out.read_bytes()).slices


def test_chunks_of_any_size_write_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = dict(MODELS)["failures"]
    for name in ("t.json", "t.perfetto-trace"):
        write_trace(model, tmp_path / f"whole-{name}")
    monkeypatch.setattr(export, "CHUNK_ROWS", 7)  # a slice opens in one chunk, ends in another
    for name in ("t.json", "t.perfetto-trace"):
        write_trace(model, tmp_path / f"cut-{name}")
        assert (tmp_path / f"cut-{name}").read_bytes() == (tmp_path / f"whole-{name}").read_bytes()
