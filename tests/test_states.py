"""States that tell the truth: `reading N %` while behind a growing log, a modification time
in the future is not "now", a report in a terminal is never cut to nothing (COLUMNS=0)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest
from conftest import SAMPLES
from helpers import drain, wait_for

import tui.follow
from tui.follow import FileSource, LiveLog, Update

ROOT = Path(__file__).parent.parent
READ_BYTES = 8 << 20  # the most a poll takes here (the core's spans are made this small)
BURST_BYTES = 5 * READ_BYTES  # five reads' worth: the follower is behind for a while


def test_the_follower_says_how_far_it_is_while_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a burst seen part-written is still more than one read: behind whatever the machine
    monkeypatch.setattr(tui.follow, "SPAN_BYTES", READ_BYTES)
    path = tmp_path / "fast.log"
    sample = (SAMPLES / "p9-c6.log").read_bytes()
    path.write_bytes(sample)
    updates: list[Update] = []
    live = LiveLog(FileSource(path), updates.append)
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: updates and updates[-1].loading is None, "the log read")
        time.sleep(0.5)  # the follower is idle, its last update well behind it
        seen = len(updates)
        filler = b"INFO a busy daemon writes many lines that are no TIMELINE line at all\n"
        lines = BURST_BYTES // len(filler)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, filler * lines)  # one write: five reads' worth are there at once
        finally:
            os.close(fd)
        os.utime(path, (time.time() - 3600, time.time() - 3600))  # its writer is done
        wait_for(
            lambda: updates[-1].loading is None and updates[-1].model.counts.other == lines,
            "the burst read",
        )
        behind = [u.loading for u in updates[seen:] if u.loading is not None]
        assert behind and all(0.0 < share < 1.0 for share in behind)
        assert updates[-1].model.counts.timeline == sample.count(b"TIMELINE,")
    finally:
        live.halt()
        thread.join(10)
        live.source.close()


def test_a_modification_time_in_the_future_is_not_now(tmp_path: Path) -> None:
    path = tmp_path / "future.log"
    path.write_bytes((SAMPLES / "tiny.log").read_bytes())
    tomorrow = time.time() + 86400
    os.utime(path, (tomorrow, tomorrow))
    source = FileSource(path)
    try:
        assert source.poll().data
        last = source.last_change()
        assert last is not None and last <= time.time()
    finally:
        source.close()


def test_a_log_deleted_stays_as_idle_as_it_was(tmp_path: Path) -> None:
    """A log quiet for two hours, then deleted, was said LIVE (its age unknown once its path
    named nothing): its age is that of its last change, as when it was there."""
    path = tmp_path / "old.log"
    path.write_bytes((SAMPLES / "tiny.log").read_bytes())
    hours_ago = time.time() - 7200
    os.utime(path, (hours_ago, hours_ago))
    source = FileSource(path)
    try:
        assert source.poll().data
        assert source.last_change() == hours_ago
        path.unlink()
        source.poll()
        assert source.last_change() == hours_ago
    finally:
        source.close()


def report_in_a_terminal(columns: int, env_columns: str) -> str:
    """The text report of tiny.log in a pty `columns` wide, with COLUMNS=`env_columns`."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "COLUMNS": env_columns, "TERM": "xterm-256color"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", str(SAMPLES / "tiny.log"), "--report"],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    out: list[bytes] = []
    reader = threading.Thread(target=drain, args=(master, out), daemon=True)
    reader.start()
    try:
        assert proc.wait(60) == 0
        reader.join(10)
    finally:
        os.close(master)
    return re.sub(r"\x1b\[[0-9;]*m", "", b"".join(out).decode()).replace("\r", "")


@pytest.mark.parametrize("env_columns", ["0", "3", "-5", "wide"])
def test_a_report_in_a_terminal_is_never_cut_to_nothing(env_columns: str) -> None:
    text = report_in_a_terminal(100, env_columns)
    assert "proofs 1 completed / 1 started   run span 1m11s" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_a_terminal_narrower_than_forty_columns_gets_forty() -> None:
    text = report_in_a_terminal(20, "")
    assert max(len(line) for line in text.splitlines()) == 40
