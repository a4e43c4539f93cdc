"""The raw lines read through the core's line index (parsers/linefacts.py) are those the
reader finds by counting the file's lines itself; an index of another file, or of the file
before it was truncated and written again, is not used."""

from __future__ import annotations

import gzip
import os
import random
from pathlib import Path

import numpy as np
import pytest

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers.builder import LogBuilder
from parsers.linefacts import CpuLines, LineFacts
from parsers.load import read_log
from parsers.rawlines import BLOCK_BYTES, LineReader
from parsers.tail import LogTail, TailState


def facts_of(data: bytes, chunk: int = 1 << 16) -> LineFacts:
    """What the core notes of `data`, fed in pieces (as the viewer feeds a file)."""
    builder = LogBuilder(source="t")
    for pos in range(0, len(data), chunk):
        builder.feed(data[pos : pos + chunk])
    facts = builder.snapshot().line_facts
    assert facts is not None
    return facts


def awkward_log(seed: int) -> bytes:
    """A simulated log with lines longer than a block, CRLF endings in places, empty lines,
    and a last line without its newline."""
    _, data = simulate(SimConfig(seed=seed, proofs=80, stdout="ansi", splice=0.05))
    rng = random.Random(seed)
    lines = data.split(b"\n")[:-1]
    out = []
    for line in lines:
        r = rng.random()
        if r < 0.002:
            out.append(b"x" * rng.choice([BLOCK_BYTES - 1, BLOCK_BYTES, 3 * BLOCK_BYTES + 7]))
        elif r < 0.01:
            out.append(b"")
        out.append(line + (b"\r" if r > 0.9 else b""))
    return b"\n".join(out) + b"\nTIMELINE,99999999,GPU_ST"


def same_lines(path: Path, facts: LineFacts, total: int, rng: random.Random) -> None:
    for _ in range(60):
        first = rng.randint(-2, total + 3)
        last = first + rng.choice([0, 1, 5, 40, 3000])
        limit = rng.choice([BLOCK_BYTES, 100])
        indexed = LineReader(path=path, facts=facts).lines(first, last, limit)
        assert indexed == LineReader(path=path).lines(first, last, limit), (first, last)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_ranges_read_alike_with_the_core_index(seed: int, tmp_path: Path) -> None:
    data = awkward_log(seed)
    path = tmp_path / "awkward.log"
    path.write_bytes(data)
    facts = facts_of(data)
    assert len(facts.starts.lines) > 8  # the index has entries past the first line
    rng = random.Random(seed)
    same_lines(path, facts, data.count(b"\n") + 1, rng)
    # and read from memory (the demo)
    for _ in range(20):
        first = rng.randint(1, data.count(b"\n"))
        assert LineReader(data=data, facts=facts).lines(first, first + 9) == LineReader(
            data=data
        ).lines(first, first + 9)


def test_the_core_index_is_one_block_away(tmp_path: Path) -> None:
    _, run = simulate(SimConfig(seed=8, proofs=30))
    data = run * 16  # the daemon restarted 15 times
    path = tmp_path / "run.log"
    path.write_bytes(data)
    assert len(data) > 8 * BLOCK_BYTES
    facts = read_log(path).line_facts
    assert facts is not None
    near_end = data.count(b"\n") - 50
    read: list[int] = []

    class Counting(LineReader):
        def _read(self, offset: int, size: int) -> bytes:
            out = super()._read(offset, size)
            read.append(len(out))
            return out

    rows = Counting(path=path, facts=facts).lines(near_end - 30, near_end + 30)
    assert [r.number for r in rows] == list(range(near_end - 30, near_end + 31))
    # the core's last bytes checked, then a block or two; counting lines reads the file
    assert sum(read) <= 2 * BLOCK_BYTES + 64
    read.clear()
    Counting(path=path).lines(near_end - 30, near_end + 30)
    assert sum(read) >= len(data) - BLOCK_BYTES


def test_a_file_that_grew_after_the_index_was_made(tmp_path: Path) -> None:
    data = awkward_log(4)
    cut = data.index(b"\n", len(data) // 2) + 1
    path = tmp_path / "growing.log"
    path.write_bytes(data[: cut + 17])  # and a partial line
    facts = facts_of(data[: cut + 17])
    with path.open("ab") as fh:
        fh.write(data[cut + 17 :])
    same_lines(path, facts, data.count(b"\n") + 1, random.Random(4))


def _other_log(seed: int) -> bytes:
    """A few MB of log (runs of the simulator one after the other: the daemon restarted)."""
    _, data = simulate(SimConfig(seed=seed, proofs=8, stdout="plain"))
    return data * 12


def test_an_index_of_a_replaced_file_is_not_used(tmp_path: Path) -> None:
    old, new = _other_log(11), _other_log(12)
    path = tmp_path / "rotated.log"
    path.write_bytes(old)
    facts = facts_of(old)
    assert LineReader(path=path, facts=facts).lines(400, 420) == LineReader(path=path).lines(
        400, 420
    )
    # logrotate: another file at the path; copytruncate: the same file, emptied and written
    # again, past where the core had read; and one shorter than that
    replaced = tmp_path / "next.log"
    replaced.write_bytes(new + new)
    os.replace(replaced, path)
    assert len(facts.starts.lines) > 4
    with_index = LineReader(path=path, facts=facts)
    assert with_index.lines(2000, 2010) == LineReader(path=path).lines(2000, 2010)
    with path.open("r+b") as fh:
        fh.truncate(0)
        fh.write(new + old)
    far = facts.starts.lines[-1] - 5
    assert LineReader(path=path, facts=facts).lines(far, far + 10) == LineReader(path=path).lines(
        far, far + 10
    )
    # (the index would have given other lines: the check is what keeps them out)
    trusting = LineReader(path=path)
    trusting._offsets, trusting._first_line = list(facts.starts.offsets), list(facts.starts.lines)
    trusting._indexed_to = facts.starts.offsets[-1]
    assert trusting.lines(far, far + 10) != LineReader(path=path).lines(far, far + 10)
    with path.open("r+b") as fh:
        fh.truncate(len(old) // 2)
    half = facts.starts.lines[len(facts.starts.lines) // 3]
    assert LineReader(path=path, facts=facts).lines(half, half + 5) == LineReader(path=path).lines(
        half, half + 5
    )


def test_following_a_log_truncated_and_written_again(tmp_path: Path) -> None:
    first, second = _other_log(21), _other_log(22)
    path = tmp_path / "live.log"
    path.write_bytes(first)
    tail = LogTail(path)
    builder = LogBuilder(source="live")
    reader = LineReader(path=path)

    def follow() -> bool:
        nonlocal builder
        restarted = False
        while True:
            read = tail.poll()
            if read.restart:
                builder, restarted = LogBuilder(source="live"), True
            if read.data:
                builder.feed(read.data)
            if not read.more:
                return restarted

    follow()
    stale = builder.snapshot().line_facts
    assert stale is not None
    with path.open("r+b") as fh:  # copytruncate, then the daemon writes on
        fh.truncate(0)
        fh.write(second + first)
    # a model made before the follower saw it still carries the old index: not used
    assert LineReader(path=path, facts=stale).lines(700, 710) == LineReader(path=path).lines(
        700, 710
    )
    assert follow(), "the follower starts a new run"
    assert tail.poll().state is TailState.GROWING
    reader.reset()  # as the viewer does on a new run
    facts = builder.snapshot().line_facts
    assert facts is not None
    reader.adopt(facts)
    total = (second + first).count(b"\n")
    for first_line in (1, total // 3, total - 40):
        assert reader.lines(first_line, first_line + 40) == LineReader(path=path).lines(
            first_line, first_line + 40
        )
    # the core's index was taken (then counted on past its last entry)
    assert reader._first_line[: len(facts.starts.lines)] == list(facts.starts.lines)
    tail.close()


def test_a_compressed_log_s_index_is_of_its_text(tmp_path: Path) -> None:
    data = _other_log(31)
    packed = tmp_path / "run.log.gz"
    packed.write_bytes(gzip.compress(data))
    facts = read_log(packed).line_facts
    assert facts is not None and len(facts.starts.lines) > 1
    # the viewer reads a compressed log's lines from its spool: the text itself
    spool = tmp_path / "spool.log"
    spool.write_bytes(data)
    same_lines(spool, facts, data.count(b"\n"), random.Random(31))
    # the compressed bytes themselves are not the text the index was made of
    on_gz = LineReader(path=packed, facts=facts)
    assert on_gz.lines(50, 60) == LineReader(path=packed).lines(50, 60)
    assert on_gz._weighed is facts.starts  # weighed, and left
    assert on_gz._offsets[: len(facts.starts.offsets)] != list(facts.starts.offsets)


def test_cpu_figures_that_come_after_a_long_read_are_not_copied_with_it() -> None:
    """The figures of a long log's first read are held with room after them: the few that
    the next snapshot adds are written there, not copied with all the others into a new
    buffer while the model shown still holds the old one."""
    lines = CpuLines()
    n = 100_000
    lines.extend(
        np.arange(1, n + 1, dtype=np.int64),
        np.zeros(n, dtype=np.int8),
        np.arange(n, dtype=np.int64),
        np.zeros(n, dtype=np.int32),
    )
    shown = lines.figures()
    more = np.array([n + 1, n + 2], dtype=np.int64)
    lines.extend(more, np.ones(2, dtype=np.int8), more, np.ones(2, dtype=np.int32))
    now = lines.figures()
    assert len(shown) == n and len(now) == n + 2
    assert np.shares_memory(shown.line, now.line) and np.shares_memory(shown.value, now.value)
    assert now.line[-2:].tolist() == [n + 1, n + 2] and shown.line[-1] == n


def test_the_figures_of_a_log_read_once_are_held_as_given() -> None:
    """A log read once (the report) has all its figures at once: they are held as the core
    made them, not copied into room for more, and read as figures copied would be."""
    n = 1_000
    line = np.arange(1, n + 1, dtype=np.int64)
    line[[3, 4]] = line[[4, 3]]  # a line cut by another, read once rejoined
    kind, value, run = np.zeros(n, np.int8), np.arange(n, dtype=np.int64), np.zeros(n, np.int32)
    held, copied = CpuLines(), CpuLines()
    held.extend(line, kind, value, run, final=True)
    copied.extend(line.copy(), kind.copy(), value.copy(), run.copy())
    a, b = held.figures(), copied.figures()
    assert len(a) == len(b) == n
    for x, y in ((a.line, b.line), (a.kind, b.kind), (a.value, b.value), (a.run, b.run)):
        assert np.array_equal(x, y)
    assert held.medians(n) == copied.medians(n)
    # in line order, they are the very arrays given
    ordered = CpuLines()
    ordered.extend(np.arange(1, n + 1, dtype=np.int64), kind, value, run, final=True)
    assert np.shares_memory(ordered.figures().value, value)


def test_a_deleted_or_renamed_log_still_gives_its_lines(tmp_path: Path) -> None:
    """A log deleted while it is shown: its lines were `No such file or directory` in the
    inspector and `cannot be read again (read from a pipe…)` in the log pane. The file read
    once stays open; `reset` (the log truncated or replaced) opens the path again."""
    from parsers.rawlines import LineReader

    log = tmp_path / "d.log"
    log.write_bytes(b"one\ntwo\nthree\n")
    reader = LineReader(path=log, keep_open=True)  # as the viewer follows it
    assert [r.data for r in reader.lines(1, 2)] == [b"one", b"two"]
    log.unlink()
    assert [r.data for r in reader.lines(2, 3)] == [b"two", b"three"]
    assert reader.line_count() == 3
    log.write_bytes(b"new\n")  # another file at the path (rotated): held once reset
    assert [r.data for r in reader.lines(1, 1)] == [b"one"]
    reader.reset()
    log.unlink()  # deleted before a line of it was read: held since the reset
    assert [r.data for r in reader.lines(1, 3)] == [b"new"]
    reader.reset()  # nothing at the path now: an error at the read, not at the reset
    with pytest.raises(FileNotFoundError):
        reader.lines(1, 1)
    # read once (a report, each host of many): the file is not held between reads
    log.write_bytes(b"x\n")
    once = LineReader(path=log)
    assert [r.data for r in once.lines(1, 1)] == [b"x"] and once._file is None
