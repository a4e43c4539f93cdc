"""The spool of standard input or of a decompressed log: bounded by the free space of its
folder, its failure shown (not a silently short run), removed whatever its disk does."""

from __future__ import annotations

import contextlib
import gzip
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import wait_for
from test_viewer import SIZE, live_app, text_of, until_finished

from parsers.sources import open_log
from tui import follow
from tui.follow import LiveLog, StreamSource, Update
from tui.gantt import GanttView

ROOT = Path(__file__).resolve().parent.parent
SPOOL_FS_BYTES = 8 << 20


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A tmpfs of SPOOL_FS_BYTES where every temporary file goes."""
    mount = tmp_path / "tmp"
    mount.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SPOOL_FS_BYTES}", "tmpfs", str(mount)], check=True
    )
    monkeypatch.setattr(tempfile, "tempdir", str(mount))
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def zeros_into(fd: int) -> None:
    """`cat /dev/zero` into a pipe, until its reader goes."""
    block = bytes(1 << 16)
    with contextlib.suppress(OSError):
        while True:
            os.write(fd, block)
    os.close(fd)


def source_of(kind: str, folder: Path) -> StreamSource:
    """Endless zeros from a pipe, or a gzip bomb (64 KB that decompress to 64 MB)."""
    if kind == "pipe":
        read_end, write_end = os.pipe()
        threading.Thread(target=zeros_into, args=(write_end,), daemon=True).start()
        return StreamSource(read_end)
    bomb = folder.parent / "bomb.log.gz"
    bomb.write_bytes(gzip.compress(bytes(64 << 20)))
    return StreamSource(open_log(bomb), name=bomb.name)


def read_to_the_end(source: StreamSource) -> Update:
    """The follower's last update, once it says the input finished."""
    updates: list[Update] = []
    live = LiveLog(source, updates.append)
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: updates and updates[-1].finished, "the input to finish")
    finally:
        live.halt()
        thread.join(10)
    return updates[-1]


@pytest.mark.parametrize("kind", ["pipe", "gzip bomb"])
def test_the_spool_stops_before_it_fills_its_disk(small_disk: Path, kind: str) -> None:
    source = source_of(kind, small_disk)
    try:
        last = read_to_the_end(source)
        assert last.status == f"stopped reading: the spool would fill {small_disk}"
        st = os.statvfs(small_disk)
        assert st.f_bavail * st.f_frsize >= follow.SPOOL_KEEP_SHARE * SPOOL_FS_BYTES
        assert source.spool_path.stat().st_size > 0
    finally:
        if source.fd >= 0:
            os.close(source.fd)  # the writer sees its reader go
        source.close()
    assert list(small_disk.iterdir()) == []


def test_a_spool_that_cannot_be_written_is_said_and_still_removed(
    small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # something else fills the disk between the check and the write
    monkeypatch.setattr(StreamSource, "_room_for", lambda self, size: True)
    source = source_of("gzip bomb", small_disk)
    try:
        last = read_to_the_end(source)
        assert last.status == (
            f"stopped reading: cannot write the spool in {small_disk}: No space left on device"
        )
    finally:
        source.close()  # its last flush fails for want of space: the spool goes all the same
    assert list(small_disk.iterdir()) == []


def test_the_spool_is_removed_when_its_last_flush_fails(
    small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(StreamSource, "_room_for", lambda self, size: True)
    with (small_disk / "filler").open("wb") as filler, contextlib.suppress(OSError):
        while True:  # another program fills the disk
            filler.write(bytes(1 << 16))
            filler.flush()
    read_end, write_end = os.pipe()
    source = StreamSource(read_end)
    os.write(write_end, b"TIMELINE,1,SYNTH_START,j,partition=0\n")  # kept in the write buffer
    read = source.poll()
    assert read.data == b"" and source.stopped.endswith("No space left on device")
    source.close()  # flushes what is buffered: ENOSPC again, and the spool goes all the same
    assert [p.name for p in small_disk.iterdir()] == ["filler"]
    os.close(read_end)
    os.close(write_end)
    (small_disk / "filler").unlink()


async def test_the_viewer_shows_why_it_stopped_reading(small_disk: Path) -> None:
    source = source_of("gzip bomb", small_disk)
    app = live_app(source, True, source.spool_path)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot)
        said = f"stopped reading: the spool would fill {small_disk}"
        assert "FINISHED" in text_of(app, "#summary") and said in text_of(app, "#summary")
        # in place of the Gantt: not "no TIMELINE lines", but why there are none
        assert app.query_one(GanttView).empty_message == said
    source.close()


SPOOLING_CHILD = """
import os, sys, time
from tui.follow import StreamSource
from parsers.rawlines import LineReader
read_end, write_end = os.pipe()
source = StreamSource(read_end)
os.write(write_end, b"first line\\nsecond line\\n")
while not source.poll().data:
    pass
lines = LineReader(path=source.spool_path).lines(1, 2)
print([r.data.decode() for r in lines], flush=True)
time.sleep(60)
"""


DEMO_CHILD = """
import time
from parsers.rawlines import LineReader
from tui.replay import demo_writer
writer = demo_writer(speed=1e6)
writer.start()
writer.done.wait(60)
lines = LineReader(path=writer.path).lines(1, 2)
print([b"starting cuzk engine" in lines[0].data, len(lines)], flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize(
    ("child", "first"),
    [
        (SPOOLING_CHILD, "['first line', 'second line']"),
        (DEMO_CHILD, "[True, 2]"),
    ],
    ids=["standard input", "demo"],
)
def test_a_killed_process_leaves_no_temporary_file(tmp_path: Path, child: str, first: str) -> None:
    # SIGKILL or the OOM killer runs no clean-up: `journalctl -f | cuzk-tui -` or
    # `cuzk-tui --demo` killed so must not leave what they wrote in TMPDIR; the file has
    # no name, yet its lines are read
    process = subprocess.Popen(
        [sys.executable, "-c", child],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == first
        assert list(tmp_path.iterdir()) == []
    finally:
        process.kill()
        process.wait(10)
    assert list(tmp_path.iterdir()) == []


def test_a_spool_where_it_cannot_lose_its_name_is_removed_when_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no /proc (another system): the spool keeps its name until it is closed
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(follow, "nameless", lambda fd, name: (name, name))
    monkeypatch.setattr(follow, "open_nameless", lambda folder: None)
    read_end, write_end = os.pipe()
    source = StreamSource(read_end)
    os.write(write_end, b"a line\n")
    while not source.poll().data:
        pass
    assert source.spool_path.parent == tmp_path and source.spool_path.read_bytes() == b"a line\n"
    source.close()
    assert list(tmp_path.iterdir()) == []
    os.close(read_end)
    os.close(write_end)
