"""A log file caught up with in spans: the core reads the new bytes in place (`LogTail.poll`
with a span limit, `LogBuilder.feed_span`), and the model is the one a whole feed gives."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from conftest import SAMPLES
from test_follow import Collector, _comparable, wait_for, whole

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
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

    def counted(self: LogBuilder, fd: int, offset: int, length: int) -> int:
        lengths.append(length)
        return real(self, fd, offset, length)

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


def test_rewind_gives_a_span_again(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes(b"y" * (2 << 20))
    tail = LogTail(log)
    try:
        span = tail.poll(span_limit=1 << 30).span
        assert span is not None and tail.position == 2 << 20
        tail.rewind(span.offset)
        assert tail.poll(span_limit=1 << 30).span == span
    finally:
        tail.close()


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
        assert c.live.builder.bytes_read == len(data)
    finally:
        c.stop()


def test_a_span_that_fails_part_way_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read error part-way through a span (a flaky disk): the bytes before it were taken,
    so what came before the span is read again by a new builder, the span at the next poll;
    the input is said to be unreadable meanwhile, and nothing is counted twice."""
    data = _big_log(42)
    log = tmp_path / "d.log"
    log.write_bytes(data)
    real = LogBuilder.feed_span
    failed: list[int] = []

    def flaky(self: LogBuilder, fd: int, offset: int, length: int) -> int:
        if not failed and offset > 0:
            failed.append(offset)
            real(self, fd, offset, length // 2)
            raise OSError(errno.EIO, "Input/output error")
        return real(self, fd, offset, length)

    monkeypatch.setattr(LogBuilder, "feed_span", flaky)
    c = Collector(log)
    try:
        wait_for(
            lambda: (
                bool(c.updates)
                and c.last.loading is None
                and c.last.state is InputState.FOLLOWING
                and c.live.builder.bytes_read == len(data)
            )
        )
        assert failed, "a span failed"
        states = [u.state for u in c.updates]
        assert InputState.UNREADABLE in states
        assert _comparable(c.last.model) == whole(data, flush=False)
        assert c.live.builder.bytes_read == len(data)
        assert c.live.core_restarts == 0  # not the core's failure
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
