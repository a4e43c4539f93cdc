"""The log pane (`L`): the log's own lines by number, read a chunk at a time (whole-log
scrolling, the regex search, the jump to a line or a time), drawn with no control byte."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from test_line_index import awkward_log, facts_of

from parsers.linesearch import LineSearch, compile_search
from parsers.linestamps import LineStamps
from parsers.load import read_log
from parsers.rawlines import LineReader

SIZE = (120, 36)


# -- the reader's chunks ----------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("indexed", [False, True])
def test_chunks_forward_and_back_hold_every_line_once(
    seed: int, indexed: bool, tmp_path: Path
) -> None:
    data = awkward_log(seed)  # lines longer than a block, CRLF, an unfinished last line
    path = tmp_path / "awkward.log"
    path.write_bytes(data)
    facts = facts_of(data) if indexed else None
    lines = data.split(b"\n")[:-1]
    assert LineReader(path=path, facts=facts).line_count() == len(lines)
    rng = random.Random(seed)
    for _ in range(25):
        size = rng.choice([100, 4096, 1 << 20])
        first = rng.randint(1, len(lines) + 2)
        forward: list[bytes] = []
        expect = first
        for start, chunk in LineReader(path=path, facts=facts).chunks(first, size):
            assert start == expect
            got = chunk.split(b"\n")
            assert got[-1] == b""  # whole lines only
            forward += got[:-1]
            expect += len(got) - 1
        assert forward == [line[:size] for line in lines[first - 1 :]]
        last = rng.randint(0, len(lines) + 2)
        back: list[bytes] = []
        end = min(last, len(lines)) + 1
        for start, chunk in LineReader(path=path, facts=facts).chunks_back(last, size):
            got = chunk.split(b"\n")[:-1]
            assert start + len(got) == end  # each stretch ends where the one after began
            back = got + back
            end = start
        assert end == 1 or last < 1
        whole = lines[: max(last, 0)]
        assert len(back) == len(whole)
        # a stretch longer than `size` is read in chunks: its long lines cut as `chunks` cuts
        assert all(
            b == w or (len(b) == size and w.startswith(b)) for b, w in zip(back, whole, strict=True)
        )


# -- the search -------------------------------------------------------------------------


def _reader(tmp_path: Path, text: str) -> LineReader:
    path = tmp_path / "log.log"
    path.write_text(text)
    return LineReader(path=path)


def _run(search: LineSearch) -> int | None:
    steps = 0
    while not search.step():
        steps += 1
        assert steps < 10_000
    return search.found


def test_search_finds_the_next_and_the_previous_matching_line(tmp_path: Path) -> None:
    lines = [f"line {k} {'GPU_END' if k % 7 == 0 else 'other'}" for k in range(1, 3001)]
    reader = _reader(tmp_path, "\n".join(lines) + "\n")
    pattern = compile_search("gpu_end")  # no capital: case ignored
    for size in (64, 1 << 20):  # many chunks or one
        assert _run(LineSearch(reader, pattern, 1, True, size)) == 7
        assert _run(LineSearch(reader, pattern, 7, True, size)) == 14
        assert _run(LineSearch(reader, pattern, 14, False, size)) == 7
        assert _run(LineSearch(reader, pattern, 2999, False, size)) == 2996
        assert _run(LineSearch(reader, pattern, 2996, True, size)) is None
        assert _run(LineSearch(reader, pattern, 7, False, size)) is None
    assert _run(LineSearch(reader, compile_search("GPU_end"), 1)) is None  # a capital: exact


def test_a_match_runs_over_no_line_end(tmp_path: Path) -> None:
    reader = _reader(tmp_path, "alpha\nbeta\nalpha beta\n")
    # `\s+` takes the newline in the chunk: only the line that matches on its own counts
    assert _run(LineSearch(reader, compile_search(r"alpha\s+beta"), 0)) == 3
    assert _run(LineSearch(reader, compile_search(r"alpha\s+beta"), 4, forward=False)) == 3
    assert _run(LineSearch(reader, compile_search(r"^beta$"), 0)) == 2
    assert _run(LineSearch(reader, compile_search(r"ta$"), 2)) == 3  # `$` at a line's end
    assert _run(LineSearch(reader, compile_search(r"ha$"), 1)) is None


def test_colours_are_not_searched(tmp_path: Path) -> None:
    reader = _reader(tmp_path, "x\n\x1b[31mER\x1b[0mROR here\n")
    assert _run(LineSearch(reader, compile_search("ERROR"), 0)) == 2


def test_a_bad_regex_is_one_line() -> None:
    with pytest.raises(ValueError, match="not a regular expression: missing \\)"):
        compile_search("(gpu")


# -- lines by time ----------------------------------------------------------------------


def test_a_time_finds_its_first_line_and_a_line_its_partition() -> None:
    model = read_log(SAMPLES / "p9-c6.log")
    t = model.parts
    stamps = LineStamps.of(t)
    done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    i = int(np.flatnonzero(done)[3])
    assert stamps.at_line(int(t.end_line[i])) == (i, float(t.gpu_end[i]))
    assert stamps.at_line(int(t.start_line[i])) == (i, float(t.gpu_start[i]))
    # the first GPU_START or GPU_END at or after a time: no stamp between it and the time
    ms = float(t.gpu_start[i]) - 0.5
    line = stamps.first_at_or_after(ms)
    assert line is not None
    found = stamps.at_line(line)
    assert found is not None and found[1] >= ms
    earlier = stamps.ms[(stamps.ms >= ms) & (stamps.ms < found[1])]
    assert not len(earlier)
    assert stamps.first_at_or_after(float(np.nanmax(t.gpu_end)) + 1) is None
