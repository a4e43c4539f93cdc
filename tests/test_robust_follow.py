"""The follower and the raw-line reader survive what can happen to a followed path."""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path

import pytest
from helpers import bytes_fed
from test_follow import Collector, wait_for

from parsers import rawlines, tail
from parsers._core import CoreError
from parsers.builder import LogBuilder
from parsers.load import read_log
from parsers.rawlines import LineReader
from parsers.regular import NotARegularFile, open_regular
from parsers.tail import LogTail, TailState
from tui.follow import InputState

LINES = (
    b"TIMELINE,10,SYNTH_START,j,partition=0\n"
    b"TIMELINE,20,GPU_START,j,worker=0,partition=0\n"
    b"TIMELINE,30,GPU_END,j,worker=0,partition=0,gpu_ms=10\n"
)
MORE = (
    b"TIMELINE,40,GPU_START,k,worker=0,partition=0\n"
    b"TIMELINE,50,GPU_END,k,worker=0,partition=0,gpu_ms=10\n"
)


def _replace_with(path: Path, make: str) -> None:
    """Swap the path for a FIFO or a directory (the open file stays as it was)."""
    path.unlink()
    if make == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()


def _restore(path: Path, data: bytes) -> None:
    if path.is_dir():
        path.rmdir()
    else:
        path.unlink()
    path.write_bytes(data)


@pytest.mark.parametrize("make", ["fifo", "directory"])
def test_the_follower_waits_out_a_fifo_or_a_directory_and_recovers(
    tmp_path: Path, make: str
) -> None:
    log = tmp_path / "d.log"
    log.write_bytes(LINES)
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.model.counts.timeline == 3)
        _replace_with(log, make)
        c.live.source.wake()
        wait_for(lambda: "the log's path is now" in c.last.status)
        assert ("FIFO" if make == "fifo" else "directory") in c.last.status
        assert c.last.model.counts.timeline == 3  # what was read is kept
        _restore(log, LINES + MORE)
        c.live.source.wake()
        wait_for(lambda: c.last.model.counts.timeline == 5)
        assert c.last.status == "log was rotated — new run"
    finally:
        c.stop()  # returns: no blocking open of the FIFO holds the thread
    assert not c.thread.is_alive()


def test_the_follower_says_an_unreadable_file_and_recovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # root reads a chmod 000 file all the same: refuse the open as the kernel would for others
    real_open = open_regular
    refused = threading.Event()
    refused.set()

    def refusing_open(path: Path) -> int:
        if refused.is_set():
            raise PermissionError(13, "Permission denied")
        return real_open(path)

    log = tmp_path / "u.log"
    log.write_bytes(LINES)
    c = Collector(log)
    monkeypatch.setattr(tail, "open_regular", refusing_open)
    try:
        wait_for(lambda: bool(c.updates) and c.last.model.counts.timeline == 3)
        log.unlink()
        log.write_bytes(LINES + MORE)
        log.chmod(0)
        c.live.source.wake()
        wait_for(lambda: c.last.status == "cannot read the log: Permission denied")
        log.chmod(0o644)
        refused.clear()
        c.live.source.wake()
        wait_for(lambda: c.last.model.counts.timeline == 5)
        assert "cannot read" not in c.last.status
    finally:
        c.stop()


def test_opening_a_fifo_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile, match="FIFO"):
        LogTail(fifo)
    with pytest.raises(OSError, match="FIFO"):
        LineReader(path=fifo).lines(1, 3)


def test_a_line_the_builder_cannot_take_does_not_end_following(tmp_path: Path) -> None:
    log = tmp_path / "bad.log"
    log.write_bytes(LINES)
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.model.counts.timeline == 3)
        with log.open("ab") as out:
            out.write(b"TIMELINE,35,GPU_START,bad,worker=-7,partition=0\n")
        c.live.source.wake()
        # the core counts it malformed (a worker id out of range); whatever a builder does
        # with a line, following goes on
        with log.open("ab") as out:
            out.write(MORE)
        c.live.source.wake()
        wait_for(
            lambda: (
                c.live.errors > 0
                or (c.last.model.counts.timeline == 5 and c.last.model.counts.malformed == 1)
            )
        )
        assert c.thread.is_alive()
        if c.live.errors:
            wait_for(lambda: "a line could not be read (IndexError" in c.last.status)
            assert c.last.status.count("could not be read") == 1  # said once
        seen = len(c.updates)
        with log.open("ab") as out:
            out.write(b"TIMELINE,60,SYNTH_START,m,partition=0\n")
        c.live.source.wake()
        wait_for(lambda: bytes_fed(c.live.builder) == log.stat().st_size)
        wait_for(lambda: len(c.updates) > seen)  # still publishing
        assert c.thread.is_alive()
    finally:
        c.stop()


def test_raw_lines_longer_than_a_block_count_as_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rawlines, "BLOCK_BYTES", 64)
    rng = random.Random(3)
    for _ in range(200):
        lines = [
            bytes(rng.choice(b"abc\x1b") for _ in range(rng.choice([0, 1, 5, 63, 64, 65, 200])))
            for _ in range(rng.randrange(1, 30))
        ]
        data = b"".join(line + b"\n" for line in lines)
        reader = LineReader(data=data)
        first = rng.randrange(1, len(lines) + 1)
        last = rng.randrange(first, len(lines) + 3)
        got = reader.lines(first, last, limit=10)
        want = lines[first - 1 : last]
        assert [r.number for r in got] == list(range(first, first + len(want)))
        assert [r.length for r in got] == [len(x) for x in want]
        assert all(r.data == x[: min(10, 64)] for r, x in zip(got, want, strict=True))
        assert all(r.cut == (len(x) > 10) for r, x in zip(got, want, strict=True))


def test_the_lines_after_a_megabyte_line_are_found(tmp_path: Path) -> None:
    log = tmp_path / "long.log"
    log.write_bytes(b"first\n" + b"x" * (3 << 20) + b"\nafter\nlast\n")
    got = LineReader(path=log).lines(2, 4, limit=4096)
    assert [(r.number, r.data[:5], r.length) for r in got] == [
        (2, b"xxxxx", 3 << 20),
        (3, b"after", 5),
        (4, b"last", 4),
    ]
    assert got[0].cut and len(got[0].data) == 4096


def test_a_deleted_or_renamed_log_says_moved_or_deleted(tmp_path: Path) -> None:
    log = tmp_path / "r.log"
    log.write_bytes(LINES)
    t = LogTail(log)
    t.poll()
    log.rename(tmp_path / "r.log.1")
    assert t.poll().state is TailState.DELETED
    t.close()


class FailingCore:
    """LogBuilder.feed made to fail as the core fails: the builder that raised CoreError
    refuses every later feed (as a scanner after a panic does). The broken builders are
    held, not their ids: a freed builder's id is given to the next one made."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fail_next = threading.Event()
        self.always = False
        self.broken: list[LogBuilder] = []
        real_feed = LogBuilder.feed

        def feed(builder: LogBuilder, data: bytes) -> None:
            if any(b is builder for b in self.broken):
                raise CoreError("cuzk-tui core: this reader failed earlier")
            if self.always or self.fail_next.is_set():
                self.fail_next.clear()
                self.broken.append(builder)
                raise CoreError("cuzk-tui core: internal error while reading the log")
            real_feed(builder, data)

        monkeypatch.setattr(LogBuilder, "feed", feed)


def test_a_failure_of_the_core_is_survived_by_reading_the_log_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = FailingCore(monkeypatch)
    log = tmp_path / "c.log"
    log.write_bytes(LINES)
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.model.counts.timeline == 3)
        core.fail_next.set()
        with log.open("ab") as out:
            out.write(MORE)
        c.live.source.wake()
        wait_for(lambda: c.last.model.counts.timeline == 5)
        assert c.live.core_restarts == 1
        assert c.last.state is InputState.CORE_RESTARTED
        assert c.last.status == (
            "the core failed (cuzk-tui core: internal error while reading the log); "
            "the log was read again from the start"
        )
        # the model is that of the whole log read once, not what the broken reader had
        whole = read_log(log)
        assert c.last.model.counts == whole.counts
        assert len(c.last.model.parts) == len(whole.parts)
        assert c.last.model.summary.gaps == whole.summary.gaps
        with log.open("ab") as out:
            out.write(b"TIMELINE,70,SYNTH_START,n,partition=0\n")
        c.live.source.wake()
        wait_for(lambda: c.last.model.counts.timeline == 6)  # and it follows on
        assert c.thread.is_alive()
    finally:
        c.stop()


def test_a_core_that_fails_again_stops_following_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = FailingCore(monkeypatch)
    log = tmp_path / "f.log"
    log.write_bytes(LINES)
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.model.counts.timeline == 3)
        core.always = True
        with log.open("ab") as out:
            out.write(MORE)
        c.live.source.wake()
        wait_for(lambda: c.last.state is InputState.CORE_FAILED)
        c.thread.join(5)
        assert not c.thread.is_alive()  # the loop ended: no retry for ever
        assert c.last.finished
        assert c.last.model.counts.timeline == 3  # the last model that could be made
        assert c.last.status == (
            "the core failed again (cuzk-tui core: internal error while reading the log); "
            "stopped following (please report it)"
        )
        assert c.live.core_restarts == 1
    finally:
        c.stop()
