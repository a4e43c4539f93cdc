"""The log pane (`L`): the log's own lines by number, read a chunk at a time."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_line_index import awkward_log, facts_of

from parsers.rawlines import LineReader

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
