"""Thousands of random keys, typed faster than the app answers, on a growing log: it never dies."""

from __future__ import annotations

import asyncio
import random
import string
import threading
import time
from pathlib import Path

import pytest
from textual import events

from cuzksim.config import DEMO_CONFIG
from cuzksim.engine import EngineSim
from parsers.builder import LogBuilder
from parsers.rawlines import LineReader
from tui.app import CuzkApp, make_app
from tui.follow import FileSource, LiveLog

# every key a screen binds (q and ctrl+c, which quit, come last, on purpose)
BOUND_KEYS = [
    "question_mark",
    "g",
    "b",
    "n",
    "N",
    "enter",
    "slash",
    "escape",
    "right_square_bracket",
    "left_square_bracket",
    "plus",
    "equals_sign",
    "minus",
    "0",
    "left",
    "right",
    "h",
    "l",
    "up",
    "down",
    "j",
    "k",
    "end",
    "f",
    "tab",
    "home",
    "pageup",
    "pagedown",
    "backspace",
]
# sequences that used to kill the app (ScreenStackError), typed as one burst
KNOWN_BAD = [
    ["g", "enter", "enter"],
    ["g", "escape", "enter", "escape"],
    ["n", "enter", "escape", "escape", "enter", "enter"],
    ["slash", "a", "enter", "escape", "escape"],
    ["question_mark", "question_mark", "question_mark", "escape"],
]
HANG_GUARD_S = 5.0  # a generous bound: this is a hang guard, not a speed test


def _key(name: str) -> events.Key:
    if len(name) == 1:
        return events.Key(name, name)
    return events.Key(name, {"question_mark": "?", "slash": "/", "plus": "+"}.get(name))


def _writer(path: Path, stop: threading.Event) -> None:
    """Append the simulated run's lines in small bursts, as a daemon would."""
    sim = EngineSim(DEMO_CONFIG)
    lines = (line.encode() + b"\n" for _, line in sim.lines())
    with path.open("ab") as out:
        while not stop.is_set():
            batch = b"".join(line for _, line in zip(range(40), lines, strict=False))
            if not batch:
                return
            out.write(batch)
            out.flush()
            time.sleep(0.01)


def _app(path: Path) -> CuzkApp:
    live = LiveLog(FileSource(path), lambda _: None)
    return make_app(LogBuilder(source=path.name).snapshot(), LineReader(path=path), live)


async def _storm(app: CuzkApp, keys: list[str], burst: int) -> None:
    """Post the keys as a terminal would, `burst` at a time, without waiting for answers."""
    for start in range(0, len(keys), burst):
        for name in keys[start : start + burst]:
            app.post_message(_key(name))
        await asyncio.sleep(0.005)
        assert app.return_code is None, f"the app ended during the storm at key {start}"


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_a_key_storm_on_a_growing_log_never_kills_the_app(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    rng = random.Random(size[0])
    log = tmp_path / "growing.log"
    log.write_bytes(b"")
    stop = threading.Event()
    writer = threading.Thread(target=_writer, args=(log, stop), daemon=True)
    writer.start()
    keys = [k for seq in KNOWN_BAD for k in seq]
    printable = string.ascii_letters + string.digits + string.punctuation.replace("q", "")
    for _ in range(2500):
        keys.append(rng.choice(BOUND_KEYS) if rng.random() < 0.7 else rng.choice(printable))
    keys = [k for k in keys if k not in ("q", "Q")]  # quitting comes at the end
    app = _app(log)
    try:
        async with app.run_test(size=size) as pilot:
            await pilot.pause(0.2)
            await _storm(app, keys, burst=rng.choice([5, 20, 60]))
            # a held key: one key repeated as fast as a terminal repeats it
            for held in ("enter", "escape", "g", "plus", "n"):
                await _storm(app, [held] * 150, burst=50)
            await pilot.pause(0.5)
            assert app.return_code is None
            assert app.model.counts.total > 0  # it kept reading while the keys came
            # close whatever is open, then quit: q is bound on every screen but the find box
            app.post_message(_key("escape"))
            app.post_message(_key("escape"))
            app.post_message(_key("q"))
            deadline = time.monotonic() + HANG_GUARD_S
            while app.return_code is None and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert app.return_code == 0, (
                f"q did not quit after the storm: {app.screen_stack} {app.focused}"
            )
    finally:
        stop.set()
        writer.join(5)


async def test_a_key_left_once_no_screen_is_left_is_dropped(tmp_path: Path) -> None:
    """Ending, Textual closes every screen while keys typed faster than it answers are still
    queued; such a key used to end the app with ScreenStackError (the storm saw it on a
    loaded machine). It is dropped."""
    log = tmp_path / "one.log"
    log.write_bytes(b"TIMELINE,10,GPU_START,j,worker=0,partition=0\n")
    app = make_app(LogBuilder(source="x").build(), LineReader(path=log))
    async with app.run_test(size=(80, 24)):
        stack = app._screen_stacks[app._current_mode]  # the app's own, as Textual ends it
        saved = list(stack)
        stack.clear()
        try:
            await app.on_event(_key("n"))  # no ScreenStackError
        finally:
            stack.extend(saved)
