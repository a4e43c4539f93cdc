"""Live follow: growing, truncated, rotated, deleted files, partial lines, pipes, the app."""

from __future__ import annotations

import os
import random
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES
from helpers import bytes_fed
from textual.widgets import Static

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers.builder import LogBuilder
from parsers.model import LogModel
from parsers.rawlines import LineReader
from parsers.report import report_dict
from parsers.tail import LogTail, TailRead, TailState
from tui import follow
from tui.app import CuzkApp, ModelUpdated, make_app
from tui.follow import CpuBudget, FileSource, LiveLog, StreamSource, Update
from tui.gantt import GanttView
from tui.gaprows import GapRows
from tui.replay import replay_writer

WAIT_S = 15.0


def whole(data: bytes, flush: bool = True) -> dict[str, object]:
    """The report of a builder fed everything at once, as the follower would show it."""
    b = LogBuilder(source="x")
    b.feed(data)
    if flush:
        b.flush_pending()
    return _comparable(b.snapshot())


def _comparable(model: LogModel) -> dict[str, object]:
    doc = report_dict(model)
    doc["source"] = "x"
    return doc


def wait_for(condition: Callable[[], bool], timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


def following(source: follow.Source) -> tuple[list[Update], LiveLog, threading.Thread]:
    """A LiveLog of `source` running on a thread of its own, and the updates it gives."""
    updates: list[Update] = []
    live = LiveLog(source, updates.append)
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    return updates, live, thread


class Collector:
    """Runs a LiveLog in a thread and keeps its updates."""

    def __init__(self, path: Path) -> None:
        self.updates: list[Update] = []
        self.live = LiveLog(FileSource(path), self.updates.append)
        self.thread = threading.Thread(target=self.live.run, daemon=True)
        self.thread.start()

    @property
    def last(self) -> Update:
        return self.updates[-1]

    def stop(self) -> None:
        self.live.halt()
        self.thread.join(5)
        self.live.source.close()


def append_in_chunks(path: Path, data: bytes, seed: int, pause: float = 0.001) -> None:
    rng = random.Random(seed)
    pos = 0
    with path.open("ab") as out:
        while pos < len(data):
            size = rng.choice([1, 7, 100, 1000, 5000])
            out.write(data[pos : pos + size])
            out.flush()
            pos += size
            time.sleep(pause * rng.random())


def test_tail_reads_appends_and_a_partial_line_waits(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes(b"TIMELINE,1,SYNTH_START,j,partition=0\nTIMELINE,2,SYN")
    tail = LogTail(log)
    first = tail.poll()
    assert first.state is TailState.GROWING and first.data.endswith(b"TIMELINE,2,SYN")
    b = LogBuilder()
    b.feed(first.data)
    assert b.counts.timeline == 1 and b.partial_bytes == len(b"TIMELINE,2,SYN")
    with log.open("ab") as out:
        out.write(b"TH_END,j,partition=0,synth_ms=1\n")
    b.feed(tail.poll().data)
    assert b.counts.timeline == 2 and b.partial_bytes == 0
    assert tail.poll().data == b""
    tail.close()


def test_tail_notices_truncation_even_when_rewritten_past_the_old_end(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes(b"a" * 100 + b"\n")
    tail = LogTail(log)
    tail.poll()
    log.write_bytes(b"b" * 300 + b"\n")  # truncated and written again, longer than before
    read = tail.poll()
    assert read.state is TailState.TRUNCATED and read.restart and read.data == b"b" * 300 + b"\n"
    tail.close()


def test_tail_rotation_finishes_the_old_file_first(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes(b"old 1\n")
    tail = LogTail(log)
    assert tail.poll().data == b"old 1\n"
    with log.open("ab") as out:
        out.write(b"old 2\n")
    log.rename(tmp_path / "d.log.1")
    log.write_bytes(b"new 1\n")
    assert tail.poll().data == b"old 2\n"
    read = tail.poll()
    assert read.state is TailState.ROTATED and read.restart and read.data == b"new 1\n"
    tail.close()


def test_follower_model_equals_the_whole_file_model(tmp_path: Path) -> None:
    data = (SAMPLES / "curio-mixed.log").read_bytes()
    log = tmp_path / "d.log"
    log.touch()
    c = Collector(log)
    try:
        append_in_chunks(log, data, seed=3)
        expected = whole(data)
        wait_for(lambda: bool(c.updates) and _comparable(c.last.model) == expected)
    finally:
        c.stop()
    # updates were throttled, not one per chunk
    assert len(c.updates) < 200


def test_truncation_resets_to_the_new_run(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.model.summary.proofs_completed == 6)
        shown = c.last.model
        tiny = (SAMPLES / "tiny.log").read_bytes()
        with log.open("r+b") as out:  # copytruncate
            out.truncate(0)
        append_in_chunks(log, tiny, seed=1)
        wait_for(lambda: _comparable(c.last.model) == whole(tiny))
        assert any(u.restarted and u.status == "log was truncated — new run" for u in c.updates)
        # what was shown before is untouched (models are immutable snapshots)
        assert shown.summary.proofs_completed == 6
    finally:
        c.stop()


def test_a_new_run_is_said_for_a_while_then_the_log_is_followed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After one logrotate the input state stayed "rotated" for good (the exporter's alert on
    a state not "following" fired for ever); it is said NEW_RUN_NOTE_S, then it is
    "following" again, with no line written meanwhile."""
    from tui import follow

    monkeypatch.setattr(follow, "NEW_RUN_NOTE_S", 0.5)
    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.model.summary.proofs_completed == 6)
        log.rename(tmp_path / "d.log.1")
        log.write_bytes((SAMPLES / "tiny.log").read_bytes())
        wait_for(lambda: any(u.state is follow.InputState.ROTATED for u in c.updates))
        wait_for(lambda: c.last.state is follow.InputState.FOLLOWING and c.last.status == "")
    finally:
        c.stop()


def test_rotation_resets_and_deletion_keeps_what_was_read(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    tiny = (SAMPLES / "tiny.log").read_bytes()
    log.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    c = Collector(log)
    try:
        wait_for(lambda: bool(c.updates) and c.last.model.summary.proofs_completed == 6)
        log.rename(tmp_path / "d.log.1")
        log.write_bytes(tiny)
        wait_for(lambda: _comparable(c.last.model) == whole(tiny))
        assert any(u.restarted and "rotated" in u.status for u in c.updates)
        log.unlink()
        wait_for(lambda: c.last.status == "file moved or deleted — showing what was read")
        assert _comparable(c.last.model) == whole(tiny)
    finally:
        c.stop()


def test_a_pipe_is_behind_only_while_bytes_wait_or_before_its_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exporter serves no figure of a model that is `behind`. A pipe's every read said
    more was waiting: a daemon trickling a line at a time kept the exporter `reading` for
    ever; and a pipe quiet at first (journalctl starting) gave an empty model that was not
    behind, whose counters the backlog then made jump."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    read_fd, write_fd = os.pipe()
    _, data = simulate(SimConfig(seed=5, proofs=4, gpus=1))
    lines = data.splitlines(keepends=True)
    backlog, trickle = b"".join(lines[:-20]), lines[-20:]
    source = StreamSource(read_fd)
    updates, live, thread = following(source)
    try:
        time.sleep(0.5)  # nothing yet: whatever is published is behind
        assert updates and all(u.behind for u in updates)
        os.write(write_fd, backlog)
        for line in trickle[:10]:  # a line at a time, as a daemon writes
            time.sleep(0.15)
            os.write(write_fd, line)
        wait_for(lambda: not updates[-1].behind)  # what was written, read: not behind
        caught_up = next(u for u in updates if not u.behind)
        assert report_dict(caught_up.model)["lines"]["total"] >= backlog.count(b"\n")
        os.close(write_fd)
        thread.join(WAIT_S)
    finally:
        live.halt()
        source.close()
        os.close(read_fd)


def test_pipe_source_reads_until_closed_and_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    read_fd, write_fd = os.pipe()
    data = (SAMPLES / "tiny.log").read_bytes()
    source = StreamSource(read_fd)
    updates, _, thread = following(source)
    try:
        os.write(write_fd, data[:1000])
        time.sleep(0.05)
        os.write(write_fd, data[1000:])
        os.close(write_fd)
        thread.join(WAIT_S)
        assert not thread.is_alive()
        assert updates[-1].finished and updates[-1].status == "input closed"
        # the model of an input that ended is built whole, its lanes laid out whole: the
        # follower gathers their segments, not the screen's thread at its first draw
        lanes = updates[-1].model.lanes
        assert lanes and all(lane.gather is not None and lane._made for lane in lanes)
        b = LogBuilder(source="stdin")
        b.feed(data)
        assert report_dict(updates[-1].model) == report_dict(b.build())
        assert source.spool_path.read_bytes() == data  # raw lines for the inspector
        spool = os.stat(source.spool_path)
    finally:
        source.close()
        os.close(read_fd)
    # the spool had no name in its folder, and its closing removed it
    assert source.spool_folder == tmp_path and list(tmp_path.iterdir()) == []
    assert spool.st_nlink == 0


def test_replay_writes_the_log_again(tmp_path: Path) -> None:
    src = SAMPLES / "tiny.log"
    writer = replay_writer(src, speed=1_000_000.0)
    writer.start()
    assert writer.done.wait(WAIT_S)
    assert writer.path.read_bytes() == src.read_bytes()
    assert os.stat(writer.path).st_nlink == 0  # it has no name: a killed viewer leaves none
    writer.cleanup()
    assert writer.dir is None or not writer.dir.exists()


def _never_named(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file or folder made by name in the folder for temporary files, from now on."""
    made: list[str] = []

    def named(*args: object, **kwargs: object) -> None:
        made.append(repr(args))
        raise AssertionError("a temporary file made under a name")

    monkeypatch.setattr(tempfile, "mkstemp", named)
    monkeypatch.setattr(tempfile, "mkdtemp", named)
    return made


def test_the_spool_and_the_played_log_never_have_a_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a name removed just after it is made is there for a moment: a kill then leaves it, and
    # a watcher of the folder sees it. Where the system makes a file without one, none is made
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = _never_named(monkeypatch)
    read_fd, write_fd = os.pipe()
    source = StreamSource(read_fd)
    writer = replay_writer(SAMPLES / "tiny.log", speed=1_000_000.0)
    try:
        writer.start()
        assert writer.done.wait(WAIT_S)
        os.write(write_fd, b"TIMELINE,1,GPU_START,j,partition=0\n")
        wait_for(lambda: bool(source.poll().data) or source.spool_path.stat().st_size > 0)
        for path in (source.spool_path, writer.path):
            assert os.stat(path).st_nlink == 0
            assert os.readlink(path).endswith(" (deleted)")
        assert source.spool_path.read_bytes() == b"TIMELINE,1,GPU_START,j,partition=0\n"
        assert writer.path.read_bytes() == (SAMPLES / "tiny.log").read_bytes()
        assert list(tmp_path.iterdir()) == [] and made == []
    finally:
        writer.cleanup()
        source.close()
        os.close(read_fd)
        os.close(write_fd)


def test_without_nameless_files_the_name_goes_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a file system that makes no file without a name: one is made under a name, removed
    # where /proc opens it again, and nothing stays in the folder
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(follow, "open_nameless", lambda folder: None)  # the spool's and replay's
    source = StreamSource(os.open(os.devnull, os.O_RDONLY))
    writer = replay_writer(SAMPLES / "tiny.log", speed=1_000_000.0)
    try:
        writer.start()
        assert writer.done.wait(WAIT_S)
        assert writer.path.read_bytes() == (SAMPLES / "tiny.log").read_bytes()
        assert os.stat(source.spool_path).st_nlink == 0 and os.stat(writer.path).st_nlink == 0
        assert writer.dir is not None and not writer.dir.exists()
        assert list(tmp_path.iterdir()) == []
    finally:
        writer.cleanup()
        source.close()


async def _until(pilot: Any, done: Callable[[], bool]) -> None:
    """Let the app run until `done()` (at most WAIT_S)."""
    for _ in range(int(WAIT_S / 0.05)):
        await pilot.pause(0.05)
        if done():
            return


def _live_app(log: Path) -> CuzkApp:
    live = LiveLog(FileSource(log), lambda _: None)
    reader = LineReader(path=log, keep_open=True)  # as launch opens a followed file
    return make_app(LogBuilder(source=log.name).snapshot(), reader, live)


async def test_app_follows_a_file_written_by_another_thread(tmp_path: Path) -> None:
    data = (SAMPLES / "p12-gw2-merged.log").read_bytes()
    log = tmp_path / "d.log"
    log.touch()
    app = _live_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        writer = threading.Thread(target=append_in_chunks, args=(log, data, 7), daemon=True)
        writer.start()
        expected = whole(data)
        for _ in range(int(WAIT_S / 0.05)):
            await pilot.pause(0.05)
            if _comparable(app.model) == expected:
                break
        assert _comparable(app.model) == expected
        view = app.query_one(GanttView)
        assert view.pinned and "LIVE" in str(app.query_one("#summary", Static).render())
        # keys still work while following; panning pauses, End resumes
        await pilot.press("plus", "plus", "h")
        assert not view.pinned
        # the log is still live; nothing new arrived since the view stopped following it
        assert "LIVE" in str(app.query_one("#summary", Static).render())
        assert "new (f)" not in str(app.query_one("#summary", Static).render())
        await pilot.press("end")
        assert view.pinned
        await pilot.press("n")
        assert view.selected == 0 and not view.pinned
        await pilot.press("f")
        assert view.pinned
        writer.join()


async def test_app_says_the_log_was_truncated(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    app = _live_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(int(WAIT_S / 0.05)):
            await pilot.pause(0.05)
            if app.model.summary.proofs_completed == 6:
                break
        await pilot.press("n")
        with log.open("r+b") as out:
            out.truncate(0)
            out.write((SAMPLES / "tiny.log").read_bytes())
        for _ in range(int(WAIT_S / 0.05)):
            await pilot.pause(0.05)
            if app.model.summary.proofs_completed == 1:
                break
        header = str(app.query_one("#summary", Static).render())
        assert "log was truncated — new run" in header
        view = app.query_one(GanttView)
        assert view.pinned and view.selected is None  # a new run: follow it from the start


@pytest.mark.parametrize("keys", [("n", "enter"), ("n", "i"), ("n", "enter", "L")])
async def test_a_truncated_log_closes_what_showed_the_run_before(
    tmp_path: Path, keys: tuple[str, ...]
) -> None:
    """The inspector (or the interval inspector, or the log pane over it) open when the log
    was truncated: `L` or `n` then read a row of the run before in the new run's model
    (`IndexError: index 9 is out of bounds for axis 0 with size 0`, the viewer gone). The
    windows about the run before close; the keys act on the new run."""
    from tui.inspector import InspectorScreen
    from tui.interval import IntervalScreen
    from tui.logpane import LogPaneScreen

    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    app = _live_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await _until(pilot, lambda: app.model.summary.proofs_completed == 6)
        await pilot.press(*keys)
        await pilot.pause()
        shown = (InspectorScreen, IntervalScreen, LogPaneScreen)
        assert isinstance(app.screen, shown)
        log.write_bytes(b"")  # truncated
        await _until(pilot, lambda: app.model.counts.timeline == 0)
        await pilot.pause()
        assert app.model.counts.timeline == 0
        assert not any(isinstance(screen, shown) for screen in app.screen_stack)
        await pilot.press("L", "escape", "n", "i", "escape", "enter", "escape")
        await pilot.pause()
        assert app.is_running and app.return_code is None


async def test_a_truncation_while_a_search_is_typed_leaves_the_box_to_the_user(
    tmp_path: Path,
) -> None:
    """`/se` typed in the log pane when the log was truncated: the pane closed from under
    its box and the keys still typed went to the Gantt (`q` quit the viewer). The box
    stays and takes them; the windows under it stay, as safe as before."""
    from textual.widgets import Input

    from tui.logpane import LogPaneScreen

    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    app = _live_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await _until(pilot, lambda: app.model.summary.proofs_completed == 6)
        await pilot.press("n", "enter", "L", "slash", "s", "e")
        await pilot.pause()
        assert isinstance(app.screen, LogPaneScreen)
        log.write_bytes(b"")  # truncated
        await _until(pilot, lambda: app.model.counts.timeline == 0)
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, LogPaneScreen)
        assert app.screen.query_one(Input).value == "seq"
        await pilot.press("escape", "escape", "L", "escape", "n")  # the box, the pane, ...
        await pilot.pause()
        assert app.is_running


async def test_a_deleted_log_keeps_its_lines_in_the_inspector_and_the_pane(
    tmp_path: Path,
) -> None:
    """`rm` of the log shown: the inspector's raw lines said `cannot read the log: [Errno 2]
    No such file or directory`, the log pane `cannot be read again (read from a pipe or an
    archive…)`. What was read is kept, its lines too."""
    from tui.logpane import LogPaneScreen

    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "p9-c6.log").read_bytes())
    app = _live_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await _until(pilot, lambda: app.model.summary.proofs_completed == 6)
        log.unlink()
        await _until(pilot, lambda: "deleted" in str(app.query_one("#summary", Static).render()))
        await pilot.press("n", "enter")
        await pilot.pause()
        raw = str(app.screen.query_one("#gap-raw", Static).content)
        assert "cannot read" not in raw and "GPU_END" in raw, raw
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, LogPaneScreen)
        assert app.screen.lines.total > 0 and "cannot" not in app.screen.said


async def test_live_demo_grows_and_cleans_up() -> None:
    from tui.replay import demo_writer

    writer = demo_writer(speed=50.0)
    writer.start()
    source = FileSource(writer.path)
    live = LiveLog(source, lambda _: None)

    def cleanup() -> None:
        source.close()
        writer.cleanup()

    app = make_app(
        LogBuilder(source="demo").snapshot(), LineReader(path=writer.path), live, on_exit=cleanup
    )
    async with app.run_test(size=(120, 36)) as pilot:
        seen: list[int] = []
        for _ in range(int(WAIT_S / 0.1)):
            await pilot.pause(0.1)
            seen.append(app.model.counts.timeline)
            # on a loaded machine the first look may come after three proofs: watch on
            # until the log is seen to grow
            if app.model.summary.proofs_completed >= 3 and len(set(seen)) >= 2:
                break
        assert app.model.summary.proofs_completed >= 3
        assert len(set(seen)) >= 2  # it grew while we watched
        assert "LIVE" in str(app.query_one("#summary", Static).render())
    assert not writer.path.exists()


async def test_the_demo_not_followed_is_its_whole_run() -> None:
    """`--demo --no-follow` read the demo's replay at its first instant: an empty, FINISHED
    log that said it had no TIMELINE line. It is the demo's run whole."""
    from parsers.load import model_of_bytes
    from tui.launch import _open_source
    from tui.options import options_of, parse_args
    from tui.replay import DEMO_NAME, demo_bytes

    cleanups: list[Callable[[], None]] = []
    source, reader, ended = _open_source(
        options_of(parse_args(["--demo", "--no-follow"])), cleanups
    )
    try:
        assert ended is None and source.name == DEMO_NAME
        live = LiveLog(source, lambda _: None, follow=False)
        app = make_app(LogBuilder(source="").snapshot(), reader, live)
        async with app.run_test(size=(120, 36)) as pilot:
            for _ in range(int(WAIT_S / 0.1)):
                await pilot.pause(0.1)
                if "FINISHED" in str(app.query_one("#summary", Static).render()):
                    break
            whole = model_of_bytes(demo_bytes(), DEMO_NAME)
            assert app.model.summary.proofs_completed == whole.summary.proofs_completed > 10
            assert app.model.counts.timeline == whole.counts.timeline
            assert "FINISHED" in str(app.query_one("#summary", Static).render())
    finally:
        for cleanup in reversed(cleanups):
            cleanup()


def test_a_log_is_held_open_and_a_spool_is_not(tmp_path: Path) -> None:
    """The viewer's reader holds the log it shows open (deleted, it still gives its lines);
    never a spool of its own (a compressed log's, a pipe's): removed because it would fill
    the disk, it is freed at once."""
    import gzip

    from tui.launch import _open_source
    from tui.options import options_of, parse_args

    plain = tmp_path / "a.log"
    plain.write_bytes((SAMPLES / "tiny.log").read_bytes())
    packed = tmp_path / "b.log.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path, held in ((plain, True), (packed, False)):
        cleanups: list[Callable[[], None]] = []
        try:
            source, reader, _ = _open_source(options_of(parse_args([str(path)])), cleanups)
            assert reader.keep_open is held and (reader._file is not None) is held
            while not held and source.poll().data:
                pass  # the spool filled as the viewer's follower reads it
            assert reader.line_count() == plain.read_bytes().count(b"\n")
            assert (reader._file is not None) is held  # a spool's closed once read
        finally:
            for cleanup in reversed(cleanups):
                cleanup()


def test_polling_fallback_notices_appends(tmp_path: Path, monkeypatch: object) -> None:
    """Where watchdog cannot watch (NFS, no inotify), polling still sees new lines."""
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(FileSource, "_start_watch", lambda self: False)
    log = tmp_path / "d.log"
    log.write_bytes(b"")
    c = Collector(log)
    try:
        assert not c.live.source.watching  # type: ignore[attr-defined]
        data = (SAMPLES / "tiny.log").read_bytes()
        with log.open("ab") as out:
            out.write(data)
        wait_for(lambda: bool(c.updates) and _comparable(c.last.model) == whole(data))
    finally:
        c.stop()


async def test_gap_list_and_inspector_follow_new_data(tmp_path: Path) -> None:
    from tui.inspector import InspectorScreen
    from tui.screens import GapListScreen

    data = (SAMPLES / "p9-c6.log").read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    log = tmp_path / "d.log"
    log.write_bytes(data[:half])
    app = _live_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(int(WAIT_S / 0.05)):
            await pilot.pause(0.05)
            if app.model.gaps:
                break
        first_count = len(app.model.gaps)
        await pilot.press("g")
        assert isinstance(app.screen, GapListScreen)
        assert app.screen.query_one(GapRows).row_count == first_count
        with log.open("ab") as out:
            out.write(data[half:])
        for _ in range(int(WAIT_S / 0.05)):
            await pilot.pause(0.05)
            if len(app.model.gaps) == 59:
                break
        assert app.screen.query_one(GapRows).row_count == 59 > first_count
        await pilot.press("escape", "n", "enter")
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        assert app.screen.gap == app.model.gaps[0]


def test_a_read_error_is_reported_and_retried(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "tiny.log").read_bytes())
    source = FileSource(log)
    calls = {"n": 0}
    real_poll = source.poll

    def flaky() -> TailRead:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(5, "Input/output error")
        return real_poll()

    source.poll = flaky  # type: ignore[method-assign]  # a failing disk, for this test
    updates, live, thread = following(source)
    try:
        wait_for(
            lambda: any(u.status == "cannot read the log: Input/output error" for u in updates)
        )
        wait_for(
            lambda: _comparable(updates[-1].model) == whole((SAMPLES / "tiny.log").read_bytes())
        )
    finally:
        live.halt()
        thread.join(5)
        source.close()


def test_a_follower_halted_mid_read_makes_no_model_of_the_closed_file(tmp_path: Path) -> None:
    """Quitting the viewer while it reads a long log closes the file under the read: the
    follower made a model of all it had read, to say the file was unreadable to nobody
    (~0.8 s of a core on a 685 MB log, which `q` waited for)."""
    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "tiny.log").read_bytes())
    source = FileSource(log)
    updates: list[Update] = []
    live = LiveLog(source, updates.append)
    real_poll = source.poll
    built = {"n": 0}
    real_snapshot = live.builder.snapshot

    def counted(finished: bool = False, drawn: bool = True) -> LogModel:
        built["n"] += 1
        return real_snapshot(finished, drawn)

    def closed_under_the_read() -> TailRead:
        if updates:  # a first model was shown: the user quits
            live.halt()
            source.close()
            raise OSError(9, "Bad file descriptor")
        return real_poll()

    source.poll = closed_under_the_read  # type: ignore[method-assign]
    live.builder.snapshot = counted  # type: ignore[method-assign]
    thread = threading.Thread(target=live.run, daemon=True)
    t0 = time.perf_counter()
    thread.start()
    thread.join(5)
    assert not thread.is_alive() and time.perf_counter() - t0 < 2
    assert len(updates) == 1 and built["n"] == 1  # the first model, and nothing after
    assert "cannot read" not in updates[-1].status


def test_a_follower_halted_while_the_core_reads_a_span_does_not_wait_for_it(
    tmp_path: Path,
) -> None:
    """A quit while the core reads a span of a long file (up to SPAN_BYTES: a second and
    more from a slow disk) waited for the whole span: the core is told to stop at once and
    reads no further."""
    _, data = simulate(SimConfig(seed=3, proofs=40, concurrency=4))
    log = tmp_path / "d.log"
    log.write_bytes(data * 8)  # a span read on the core's threads
    source = FileSource(log)
    updates: list[Update] = []
    live = LiveLog(source, updates.append)
    spans: list[tuple[int, int, int]] = []
    shown: list[int] = []
    real_feed = live.builder.feed_span

    def halted_as_it_reads(fd: int, offset: int, length: int, stop: object = None) -> int:
        shown.append(len(updates))
        live.halt()  # the user quits as the span's read begins
        read = real_feed(fd, offset, length, stop)  # type: ignore[arg-type]
        spans.append((offset, length, read))
        return read

    live.builder.feed_span = halted_as_it_reads  # type: ignore[method-assign]
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    source.close()
    assert len(spans) == 1 and spans[0][1] > (1 << 20) and spans[0][2] == 0
    assert live.builder.bytes_read == spans[0][0]  # nothing of the span
    assert len(updates) == shown[0]  # nor a model after the quit


async def test_a_follower_failure_keeps_the_viewer(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "tiny.log").read_bytes())
    app = _live_app(log)
    assert app.live is not None

    def broken() -> None:
        raise RuntimeError("boom")

    app.live.run = broken  # type: ignore[method-assign]  # a bug, for this test
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(40):
            await pilot.pause(0.05)
            if app.status:
                break
        assert app.status == "stopped following: RuntimeError: boom"
        assert "stopped following" in str(app.query_one("#summary", Static).render())
        await pilot.press("question_mark")  # still answering keys
        await pilot.press("escape", "q")


def test_a_live_snapshot_shows_timing_lines_still_being_decided() -> None:
    """While the log grows, the attributor keeps its last few hundred decisions open (the
    lines after them may settle them). A snapshot must show them as they stand, not leave
    their intervals 'unknown': the live kernel figure is the one the same bytes give once
    the input goes quiet."""
    for seed in range(4):
        _, data = simulate(SimConfig(seed=seed, gpus=2, gw=2, proofs=4, stdout="plain"))
        cut = data[: len(data) * (seed + 2) // 6]
        cut = cut[: cut.rindex(b"\n") + 1]
        live = LogBuilder(source="t")
        live.feed(cut)
        growing = live.snapshot()
        quiet = LogBuilder(source="t")
        quiet.feed(cut)
        assert quiet.flush_pending()
        settled = quiet.snapshot()
        assert [g.kernel_util for g in growing.gpus] == [g.kernel_util for g in settled.gpus]
        unknown = sum(w.phases_ms["unknown"] for w in growing.workers)
        kernel = sum(w.phases_ms["kernel"] for w in growing.workers)
        assert kernel > 0 and unknown < 0.05 * kernel, (seed, unknown, kernel)
        # the snapshot decided nothing: more bytes are read as if it had not been taken
        live.feed(data[len(cut) :])
        whole = LogBuilder(source="t")
        whole.feed(data)
        assert report_dict(live.build()) == report_dict(whole.build())


def test_the_cpu_budget_lets_bursts_through_and_spaces_a_steady_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    budget = CpuBudget(share=0.03, burst=1.0, max_wait=5.0, max_share=0.1)
    # updates of 0.1 s CPU: ten go at once, the eleventh waits for what they overspent
    for _ in range(10):
        assert budget.wait_s() == 0.0
        budget.charge(0.1)
    budget.charge(0.1)
    assert budget.wait_s() == pytest.approx(0.1 / 0.03)
    clock[0] += 0.1 / 0.03
    assert budget.wait_s() == pytest.approx(0.0, abs=1e-9)
    # a steady stream: one update per cost / share, whatever the rate the lines come at
    spent = 0.0
    start = clock[0]
    while clock[0] - start < 600:
        wait = budget.wait_s()
        clock[0] += max(wait, 0.2)
        if budget.wait_s() == 0.0:
            budget.charge(0.1)
            spent += 0.1
    assert spent / (clock[0] - start) <= 0.03 + 1.0 / 600
    # a costly update is paid back by waiting max_wait, or its cost / max_share if longer
    for cost, waited in ((0.3, 5.0), (2.0, 2.0 / 0.1), (100.0, 100.0 / 0.1)):
        clock[0] += 100.0
        assert budget.wait_s() == 0.0  # full again
        budget.charge(budget.tokens)  # the burst spent...
        assert budget.wait_s() == 0.0  # ...by updates that went
        budget.charge(cost)
        assert budget.wait_s() == pytest.approx(waited)
    # updates that each cost more than share * max_wait: shown every max_wait, or less
    # often, never taking more than max_share of a core
    for cost in (0.2, 0.5, 2.0, 4.0):
        budget.refill()
        spent, start = 0.0, clock[0]
        while clock[0] - start < 600:
            clock[0] += max(budget.wait_s(), 0.2)
            if budget.wait_s() == 0.0:
                budget.charge(cost)
                spent += cost
        expected = cost / max(5.0, cost / 0.1)  # and the burst once: 1 s in 600
        assert spent / (clock[0] - start) == pytest.approx(expected + 1.0 / 600, rel=0.05)


def test_the_viewer_charges_its_redraws_to_the_follower(tmp_path: Path) -> None:
    """Each model the follower hands on is paid for by the screen too (its update and the
    redraw after it), so a fast-growing long log cannot take the viewer's CPU."""
    path = tmp_path / "g.log"
    _, data = simulate(SimConfig(seed=3, proofs=6))
    path.write_bytes(data)

    async def go() -> tuple[int, list[float]]:
        live = LiveLog(FileSource(path), lambda _: None)
        app = make_app(LogBuilder(source="g").snapshot(), LineReader(path=path), live)
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(300):
                await pilot.pause(0.02)
                if app.loading is None and app.model.gpus:
                    break
            paid: list[float] = []
            charge = live.budget.charge

            def record(seconds: float) -> None:
                if threading.current_thread() is threading.main_thread():
                    paid.append(seconds)
                charge(seconds)

            live.budget.charge = record  # type: ignore[method-assign]
            # the redraw of what the file held is not following it: not charged
            app.post_message(ModelUpdated(Update(app.model, following=False)))
            await pilot.pause(0.3)
            unpaid = len(paid)
            app.post_message(ModelUpdated(Update(app.model)))
            await pilot.pause(0.3)
            live.halt()
            return unpaid, paid

    import asyncio

    unpaid, paid = asyncio.run(go())
    assert unpaid == 0
    assert paid and all(p > 0.0 for p in paid)


def test_only_updates_of_a_growing_log_are_following_it(tmp_path: Path) -> None:
    """Reading what the file held (and its first whole model) is not charged as following:
    its costly first redraw must not hold back the first line appended after it."""
    path = tmp_path / "h.log"
    _, data = simulate(SimConfig(seed=4, proofs=8))
    cut = data.rindex(b"TIMELINE", 0, len(data) // 2)
    path.write_bytes(data[:cut])
    c = Collector(path)
    try:
        wait_for(lambda: bool(c.updates) and c.last.loading is None)
        read = list(c.updates)
        assert not any(u.following for u in read)
        with path.open("ab") as out:
            out.write(data[cut:])
        wait_for(lambda: len(c.updates) > len(read))
        wait_for(lambda: c.last.model.counts.timeline == data.count(b"TIMELINE,"))
        assert all(u.following for u in c.updates[len(read) :])
    finally:
        c.stop()


def test_a_long_read_shows_its_progress_without_remaking_the_model(tmp_path: Path) -> None:
    """While a file already written is read, a model of what was read so far is made once
    early and then only after many times its cost: the updates between say how far the read
    is, with the last model (a mid-load model of a 685 MB log cost 2.5 s of a 15 s load)."""
    _, data = simulate(SimConfig(seed=31, proofs=40, gpus=2))
    log = tmp_path / "d.log"
    log.write_bytes(data)
    source = FileSource(log)
    real_poll = source.tail.poll

    def slow_poll(limit: int = 0, span_limit: int = 0) -> TailRead:
        time.sleep(0.03)  # a slow disk: the read takes many progress updates
        return real_poll(16 << 10)  # read here, in small pieces

    source.tail.poll = slow_poll  # type: ignore[method-assign]
    updates, live, thread = following(source)
    try:
        wait_for(lambda: bool(updates) and updates[-1].loading is None)
    finally:
        live.halt()
        thread.join(5)
        source.close()
    loading = [u for u in updates if u.loading is not None]
    assert len(loading) >= 3, "the read took several polls"
    progress = [u.loading for u in loading if u.loading is not None]
    assert progress == sorted(progress) and progress[0] < progress[-1]
    models = {id(u.model) for u in loading}
    assert len(models) < len(loading), "progress updates reuse the last model"
    # the exporter serves no figure of a part of the file (tui/exporter.py)
    assert all(u.behind for u in loading) and not updates[-1].behind
    assert _comparable(updates[-1].model) == whole(data, flush=False)


async def test_a_progress_update_changes_the_status_line_only(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "tiny.log").read_bytes())
    model = LogBuilder(source="d.log")
    model.feed(log.read_bytes())
    shown = model.snapshot()
    app = make_app(shown, LineReader(path=log), None)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(GanttView)
        before = app.updates
        app.post_message(ModelUpdated(Update(shown, loading=0.5, following=False)))
        await pilot.pause()
        assert app.updates == before + 1
        assert app.model is shown and view.model is shown
        assert app.state_text() == "reading 50 %"
        assert "reading 50 %" in str(app.query_one("#summary", Static).render())


def test_a_watch_that_cannot_start_leaves_no_thread_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's file has no name: watching its folder failed after the watch's threads had
    started, and they ran on, so a SIGTERM as the viewer started left a process that never
    ended. A nameless file is polled from the start, and a watch that fails is stopped."""
    from watchdog.observers.api import BaseObserver

    before = set(threading.enumerate())
    writer = replay_writer(SAMPLES / "tiny.log", speed=1_000_000.0)
    writer.start()
    source = FileSource(writer.path)
    assert not source.watching
    source.close()
    writer.cleanup()
    assert set(threading.enumerate()) <= before

    started = BaseObserver.start

    def start_then_fail(self: BaseObserver) -> None:
        started(self)  # its threads run: then the failure
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(BaseObserver, "start", start_then_fail)
    log = tmp_path / "d.log"
    log.write_bytes(b"")
    source = FileSource(log)
    assert not source.watching
    source.close()
    wait_for(lambda: set(threading.enumerate()) <= before)  # the watch's threads ended


def test_the_lines_before_a_truncation_are_shown_before_the_new_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log truncated within the update interval of its last lines: the run that ended was
    carried on by the metrics as the last model shown, without them (a truncation 0.05 s
    after the last write carried 3 of 4 proofs)."""
    monkeypatch.setattr(follow, "MIN_UPDATE_S", 3.0)  # the lines read are not shown soon
    _, data = simulate(SimConfig(seed=3, proofs=4, gpus=1))
    log = tmp_path / "d.log"
    cut = data.rindex(b"GPU_END")
    cut = data.index(b"\n", cut) + 1 - 200  # the last GPU_END held back
    log.write_bytes(data[:cut])
    source = FileSource(log)
    updates, live, thread = following(source)
    try:
        wait_for(lambda: bool(updates) and updates[-1].loading is None)
        shown = len(updates)
        with log.open("ab") as fh:
            fh.write(data[cut:])
        wait_for(lambda: bytes_fed(live.builder) == len(data))  # read, not shown
        assert len(updates) == shown
        log.write_bytes(b"")  # truncated
        wait_for(lambda: any(u.restarted for u in updates))
    finally:
        live.halt()
        thread.join(5)
        source.close()
    k = next(i for i, u in enumerate(updates) if u.restarted)
    assert _comparable(updates[k - 1].model)["summary"] == whole(data)["summary"]
