"""A log file caught up with in spans: the core reads the new bytes in place (`LogTail.poll`
with a span limit, `LogBuilder.feed_span`), and the model is the one a whole feed gives."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from conftest import SAMPLES
from helpers import bytes_fed
from test_follow import Collector, _comparable, wait_for, whole

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers._core import StopFlag
from parsers.builder import LogBuilder
from parsers.report import traced_dicts
from parsers.tail import SIGNATURE_BYTES, SPAN_MIN_BYTES, LogTail, Span, TailState
from tui.follow import InputState


def _big_log(seed: int) -> bytes:
    """A simulated log of a few spans."""
    _, data = simulate(SimConfig(seed=seed, proofs=300, gpus=2))
    assert len(data) > 3 * SPAN_MIN_BYTES
    return data


def _spans_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each span the core is given to read from now on."""
    lengths: list[int] = []
    real = LogBuilder.feed_span

    def counted(
        self: LogBuilder, fd: int, offset: int, length: int, stop: StopFlag | None = None
    ) -> int:
        lengths.append(length)
        return real(self, fd, offset, length, stop)

    monkeypatch.setattr(LogBuilder, "feed_span", counted)
    return lengths


def test_a_poll_gives_a_megabyte_or_more_as_a_span_and_less_as_bytes(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    data = bytes(range(256)) * (12 << 10)  # 3 MB
    log.write_bytes(data)
    tail = LogTail(log)
    try:
        first = tail.poll(span_limit=2 << 20)
        assert first.data == b"" and first.more and first.got
        assert first.span is not None
        assert (first.span.offset, first.span.length) == (0, 2 << 20)
        assert os.pread(first.span.fd, 16, 0) == data[:16]
        second = tail.poll(span_limit=2 << 20)
        assert second.span == Span(first.span.fd, 2 << 20, len(data) - (2 << 20))
        assert not second.more
        with log.open("ab") as out:
            out.write(b"a few more bytes\n")
        small = tail.poll(span_limit=2 << 20)
        assert small.span is None and small.data == b"a few more bytes\n"
        assert not tail.poll(span_limit=2 << 20).got
        # the bytes a span passed over are checked as read bytes are: rewritten, it restarts
        log.write_bytes(data[:-SIGNATURE_BYTES] + b"x" * SIGNATURE_BYTES + b"a few more bytes\n")
        again = tail.poll(span_limit=2 << 20)
        assert again.state is TailState.TRUNCATED and again.restart
        assert again.span is not None and again.span.offset == 0
    finally:
        tail.close()


def test_without_a_span_limit_a_poll_reads_as_ever(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    data = b"x" * (3 << 20)
    log.write_bytes(data)
    tail = LogTail(log)
    try:
        read = tail.poll(limit=len(data))
        assert read.span is None and read.data == data
    finally:
        tail.close()


def _failing_preads(monkeypatch: pytest.MonkeyPatch, fails: list[bool]) -> list[int]:
    """The tail's reads fail while `fails` says so (the first of it each time, then
    dropped); the offsets of those that failed."""
    real = os.pread
    failed: list[int] = []

    def pread(fd: int, n: int, offset: int) -> bytes:
        if fails and fails.pop(0):
            failed.append(offset)
            raise OSError(errno.EIO, "Input/output error")
        return real(fd, n, offset)

    monkeypatch.setattr("parsers.tail.os.pread", pread)
    return failed


def test_a_span_given_back_is_given_again_without_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the caller could not read of a span is given again at the next poll: given
    back whole or after bytes it read, the tail reads nothing (the disk that failed the
    caller may fail again), and the bytes it passed over still say whether the file was
    rewritten."""
    log = tmp_path / "d.log"
    data = bytes(range(256)) * (12 << 10)  # 3 MB
    log.write_bytes(data)
    tail = LogTail(log)
    try:
        first = tail.poll(span_limit=1 << 30).span
        assert first is not None and tail.position == len(data)
        every_read_fails = [True] * 100
        _failing_preads(monkeypatch, every_read_fails)
        tail.give_back(first)
        tail.give_back(first, data[:1000])
        monkeypatch.undo()
        again = tail.poll(span_limit=1 << 30)
        assert again.state is TailState.GROWING
        assert again.span == Span(first.fd, 1000, len(data) - 1000)
        # given back by a count: the signature is read where the rest begins
        tail.give_back(again.span, 500)
        assert tail.position == 1500
        log.write_bytes(data[:1000] + b"x" * 500 + data[1500:])
        rewritten = tail.poll(span_limit=1 << 30)
        assert rewritten.state is TailState.TRUNCATED and rewritten.restart
    finally:
        tail.close()


def test_a_span_whose_signature_cannot_be_read_is_not_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The poll that gives a span reads the bytes at its end (what the next poll checks):
    that read failing left the position past the span, never read. The first poll of a file
    lost up to a span silently; a later one said the file had been rewritten. It moves
    nothing now: the poll fails, and the next gives the same span."""
    log = tmp_path / "d.log"
    data = bytes(range(256)) * (12 << 10)
    log.write_bytes(data)
    for before in (0, 1 << 20):  # the first poll of the file, and a later one
        tail = LogTail(log)
        try:
            if before:
                assert tail.poll(span_limit=before).span is not None
            failed = _failing_preads(monkeypatch, [True])
            with pytest.raises(OSError):
                tail.poll(span_limit=1 << 30)
            assert failed and tail.position == before
            monkeypatch.undo()
            read = tail.poll(span_limit=1 << 30)
            assert read.state is TailState.GROWING and not read.restart
            assert read.span is not None
            assert (read.span.offset, read.span.length) == (before, len(data) - before)
        finally:
            tail.close()


def test_a_follower_whose_span_signature_fails_once_reads_every_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through the follower: one read error as the file's first span is given is
    said, and every byte is read after it, once."""
    data = _big_log(43)
    log = tmp_path / "d.log"
    log.write_bytes(data)
    failed = _failing_preads(monkeypatch, [True])
    c = Collector(log)
    try:
        _read_after_an_error(c, data)
        assert failed
    finally:
        c.stop()


def _read_after_an_error(c: Collector, data: bytes) -> None:
    """Wait for the follower to have read `data` whole after a read error: it said the input
    was unreadable, never that the file was rewritten, and its model is the whole feed's."""
    wait_for(
        lambda: (
            bool(c.updates)
            and c.last.loading is None
            and c.last.state is InputState.FOLLOWING
            and bytes_fed(c.live.builder) == len(data)
        )
    )
    states = [u.state for u in c.updates]
    assert InputState.UNREADABLE in states
    assert InputState.TRUNCATED not in states
    assert _comparable(c.last.model) == whole(data, flush=False)


def test_a_log_caught_up_with_in_spans_is_the_whole_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _big_log(41)
    log = tmp_path / "d.log"
    log.write_bytes(data)
    spans = _spans_read(monkeypatch)
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.loading is None)
        assert spans, "the core read the file in place"
        assert _comparable(c.last.model) == whole(data, flush=False)
        assert bytes_fed(c.live.builder) == len(data)
    finally:
        c.stop()


def test_a_span_that_fails_part_way_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read error part-way through a span (a flaky disk): the core took the bytes before
    it, the rest of the span is given at the next poll; the input is said to be unreadable
    meanwhile, nothing is counted twice, and nothing is read again (before, a new builder
    read every byte before the span again: a bad sector near the end of a long log cost
    half a core for as long as it stayed bad, and a second error then stopped following)."""
    data = _big_log(42)
    log = tmp_path / "d.log"
    log.write_bytes(data)
    real = LogBuilder.feed_span
    failed: list[int] = []

    def flaky(
        self: LogBuilder, fd: int, offset: int, length: int, stop: StopFlag | None = None
    ) -> int:
        if not failed and offset > 0:
            failed.append(offset)
            real(self, fd, offset, length // 2, stop)
            raise OSError(errno.EIO, "Input/output error")
        return real(self, fd, offset, length, stop)

    monkeypatch.setattr(LogBuilder, "feed_span", flaky)
    read_again: list[bool] = []
    monkeypatch.setattr(LogTail, "read_again", lambda self, chunk=0: read_again.append(True))
    c = Collector(log)
    try:
        _read_after_an_error(c, data)
        assert failed, "a span failed"
        assert c.live.core_restarts == 0  # not the core's failure
        assert not read_again, "what came before the span was read again"
    finally:
        c.stop()


def test_a_log_without_timeline_lines_is_read_here_for_its_tracing_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Until a TIMELINE line is read the tracing lines are looked at too (in Python): a span
    is read here then, not by the core alone."""
    filler = b"".join(b"other-service: line %d of something else\n" % k for k in range(40_000))
    assert len(filler) > SPAN_MIN_BYTES
    data = filler + (SAMPLES / "real" / "monolithic-merged.log").read_bytes()
    log = tmp_path / "d.log"
    log.write_bytes(data)
    in_core = _spans_read(monkeypatch)
    fed = LogBuilder(source="x")
    fed.feed(data)
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.loading is None)
        assert not in_core
        traced = traced_dicts(c.last.model)
        assert traced and traced == traced_dicts(fed.snapshot())
    finally:
        c.stop()
