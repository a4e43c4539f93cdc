"""Thousands of random keys, typed faster than the app answers, on a growing log: it never dies."""

from __future__ import annotations

import asyncio
import random
import string
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import SAMPLES
from textual import events
from textual.command import CommandList
from textual.message import Message
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Footer, Input

from cuzksim.config import DEMO_CONFIG
from cuzksim.engine import EngineSim
from parsers.builder import LogBuilder
from parsers.linesearch import LineSearch
from parsers.load import read_log
from parsers.rawlines import LineReader
from tui.app import HOLD_KEYS_S, HOLD_POLLS, CuzkApp, make_app
from tui.commands import ListedPalette
from tui.find import ProofScreen
from tui.follow import FileSource, LiveLog
from tui.gantt import GanttView
from tui.gaprows import GapRows
from tui.inspector import InspectorScreen
from tui.interval import IntervalScreen
from tui.logpane import LogPaneScreen
from tui.screens import AskScreen, FindScreen, GapListScreen, HelpScreen

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
# how long the app may take to act on the keys of the storm still queued or held after it
# (a thousand or two, acted on in order: those after a key that opens or closes a window
# wait for it to open or close, ~20 s on a 2-core machine); also a hang guard
BACKLOG_GUARD_S = 120.0


def _click(x: int, y: int) -> list[Message]:
    """A click of the left button at (x, y) of the screen: its press and its release."""
    return [
        kind(None, x, y, 0, 0, 1, False, False, False, x, y)
        for kind in (events.MouseDown, events.MouseUp)
    ]


def _key(name: str) -> events.Key:
    if len(name) == 1:
        return events.Key(name, name)
    if name.startswith("alt+"):  # `esc` and a key in one read, as the terminal parses it
        return events.Key(name, name[4:])
    chars = {"question_mark": "?", "slash": "/", "plus": "+", "enter": "\r"}
    return events.Key(name, chars.get(name))


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


def _two_lines(tmp_path: Path) -> CuzkApp:
    log = tmp_path / "two.log"
    log.write_bytes(
        b"TIMELINE,10,GPU_START,j,worker=0,partition=0\n"
        b"TIMELINE,20,GPU_END,j,worker=0,partition=0\n"
    )
    return make_app(LogBuilder(source="x").build(), LineReader(path=log))


async def _ended(app: CuzkApp) -> None:
    """Once it quit, let the app end by itself, as `cuzk-tui` does: App.run closes the
    screens once the app has handled what was queued before the end; leaving run_test now
    would close them while it still handles that (and a handler find no Gantt)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while app.is_running and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


async def _quits(app: CuzkApp) -> bool:
    deadline = time.monotonic() + HANG_GUARD_S
    while app.return_code is None and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await _ended(app)
    return app.return_code == 0


async def test_a_palette_asked_for_while_the_last_is_taken_down_opens_after_it() -> None:
    """ctrl+p as the palette closes: the new palette was opened beside the one being taken
    down, which still held the palette's id, and the app ended (DuplicateIds)."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        closing = app.screen
        assert isinstance(closing, ListedPalette)
        closing.dismiss()
        app.action_command_palette()
        for _ in range(5):
            await pilot.pause()
        assert isinstance(app.screen, ListedPalette) and app.screen is not closing
        assert [type(s).__name__ for s in app.screen_stack] == ["Screen", "ListedPalette"]


async def test_a_look_for_commands_on_a_palette_being_taken_down_ends_quietly() -> None:
    """A look for the commands matching the text, begun as the palette was taken down (its
    list gone), raised NoMatches in its worker, which ended the app."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        palette = app.screen
        assert isinstance(palette, ListedPalette)
        await palette.query_one(CommandList).remove()
        palette._gather_commands("zz")
        await pilot.pause()
        await pilot.pause()
        assert app.return_code is None


async def test_enter_on_a_gap_list_whose_rows_are_gone_ends_nothing() -> None:
    """`enter` reached the gap list while its rows were being taken down (seen once in 30
    palette storms): asking whether it closes the list raised NoMatches and ended the app."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        listing = app.screen
        assert isinstance(listing, GapListScreen)
        await listing.query_one(GapRows).remove()
        app.post_message(_key("enter"))
        await pilot.pause()
        await pilot.pause()
        assert app.return_code is None and app.screen is listing


@pytest.mark.parametrize("seed", range(4))
async def test_a_key_storm_on_the_palette_never_kills_the_app(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+p, its text, enter, escape and backspace in bursts: a palette opened while the
    last one was being taken down (DuplicateIds), and a look for commands begun on a palette
    being taken down (NoMatches in its worker), each ended the app about once in 30 such
    storms. Quitting is one of the palette's commands: a storm may end with status 0, never
    with an error."""
    monkeypatch.chdir(tmp_path)  # the palette's screenshot and export write here
    rng = random.Random(seed)
    keys = []
    for _ in range(900):
        r = rng.random()
        if r < 0.12:
            keys.append("ctrl+p")
        elif r < 0.45:
            keys.append("enter" if r < 0.30 else "escape")
        elif r < 0.55:
            keys.append("backspace")
        else:
            keys.append(rng.choice("zbsyg"))  # none of these matches the quit command
    app, _ = _mixed()
    burst = rng.choice([5, 20, 60])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        for start in range(0, len(keys), burst):
            for name in keys[start : start + burst]:
                app.post_message(_key(name))
            await asyncio.sleep(0.005)
            if app.return_code is not None:
                break
        await pilot.pause(1.0)
    assert app.return_code in (None, 0)


async def test_a_palette_taken_down_during_its_look_for_commands_keeps_the_app(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The palette taken down while its worker looks for commands: Textual's look then
    finds no list to fill (NoMatches) and the worker's failure ended the app (seen once in
    a full test run under load, the storm above)."""
    from textual.command import CommandList, CommandPalette

    looks: list[str] = []

    async def taken_down(palette: CommandPalette, search_value: str) -> None:
        looks.append(search_value)
        await palette.query_one(CommandList).remove()  # the palette going away
        palette.query_one(CommandList)  # what Textual's look does next: NoMatches

    monkeypatch.setattr(CommandPalette._gather_commands, "__wrapped__", taken_down)
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press("z", "b")
        await pilot.pause(0.5)
        assert looks and app.return_code is None
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert app.screen is app.screen_stack[0]
    assert app.return_code in (None, 0)


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
            # close whatever is open, then quit: q is bound on every screen but the find box;
            # typed behind the storm's keys still queued or held, and given HANG_GUARD_S
            # from the moment the app has acted on those (before, the clock ran while it
            # read them: a speed test on a loaded machine)
            read = threading.Event()
            app.call_later(read.set)  # queued after the storm's last key, before the escapes
            app.post_message(_key("escape"))
            app.post_message(_key("escape"))
            app.post_message(_key("q"))
            deadline = time.monotonic() + BACKLOG_GUARD_S
            while not (read.is_set() and not app.holding_keys) and app.return_code is None:
                assert time.monotonic() < deadline, "the app stopped reading keys"
                await asyncio.sleep(0.02)
            deadline = time.monotonic() + HANG_GUARD_S
            while app.return_code is None and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert app.return_code == 0, (
                f"q did not quit after the storm: {app.screen_stack} {app.focused}"
            )
            await _ended(app)
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


@pytest.mark.parametrize(
    ("opening", "closing"),
    [
        (["slash"], ["escape"]),  # the find box
        (["L", "colon"], ["escape"]),  # the log pane's prompt: q quits from the pane
        (["L", "colon"], ["escape", "escape"]),  # the prompt, then the pane
        (["L", "slash"], ["escape", "escape"]),
    ],
)
async def test_keys_typed_after_the_escape_that_closes_a_box_go_below_it(
    tmp_path: Path, opening: list[str], closing: list[str]
) -> None:
    """A text box is open; `escape` and `q` are typed in one burst, before the app answers
    the first. Textual gives each key to the focused widget as it reads it, and acts on a
    binding once the key comes back up: the `q` went into the box the `escape` was closing,
    and the viewer stayed open (the storm's `q did not quit`)."""
    app = _two_lines(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        for name in opening:  # one at a time, each answered
            app.post_message(events.Key(name, {"slash": "/", "colon": ":"}.get(name, name)))
            await pilot.pause()
        assert isinstance(app.focused, Input), (app.screen_stack, app.focused)
        for name in [*closing, "q"]:  # one burst
            app.post_message(_key(name))
        assert await _quits(app), f"q went astray: {app.screen_stack} {app.focused}"


async def test_q_typed_while_a_find_box_is_on_its_way_quits(tmp_path: Path) -> None:
    """`q` typed on the Gantt while the find box a `/` asked for is still on its way up to
    the app (the storm saw it behind a backlog of keys): it came back up after the box had
    opened, was acted on there, where it is no key, and the viewer stayed open."""
    app = _two_lines(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(_key("q"))  # the app gives it to the Gantt ...
        app.gantt.post_message(GanttView.FindJob())  # ... behind the `/`'s request
        assert await _quits(app), f"q went astray: {app.screen_stack} {app.focused}"


async def test_q_is_still_text_in_a_text_box(tmp_path: Path) -> None:
    """`q` acts as it is read, except in a box that has the keys: there it is a letter."""
    app = _two_lines(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        for name in ("slash", "q", "q"):
            app.post_message(_key(name))
            await pilot.pause()
        assert app.return_code is None
        assert isinstance(app.screen, FindScreen)
        assert app.screen.query_one(Input).value == "qq"
        app.post_message(events.Key("ctrl+c", None))  # ctrl+c quits from the box
        assert await _quits(app)


@pytest.mark.parametrize("quit_key", ["q", "ctrl+c"])
@pytest.mark.parametrize("window", ["inspector", "find box", "interval"])
async def test_a_window_asked_for_before_quitting_does_not_open(quit_key: str, window: str) -> None:
    """`enter` (or `/`, `i`) then `q` typed faster than the app answers: the Gantt's request
    for the window reached the app after the `q`. Once exit() is called Textual mounts
    nothing, so the window opened empty, its on_mount found none of its widgets, and the
    viewer ended with a traceback (NoMatches) and status 1 (the storm saw it)."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(events.Key(quit_key, "q" if quit_key == "q" else None))
        if window == "inspector":
            app.post_message(GanttView.InspectGap(app.model.gaps[0]))
        elif window == "find box":
            app.post_message(GanttView.FindJob())
        else:
            app.post_message(GanttView.InspectInterval(0))
        await _quits(app)
    assert app.return_code == 0


async def test_a_key_on_its_way_back_once_the_app_is_ending_is_dropped(tmp_path: Path) -> None:
    """A key given to a widget before `q` was read comes back up to the app after it: it is
    not acted on (here `?` in the log pane, which would open the help over it, empty)."""
    app = _two_lines(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(_key("L"))
        await pilot.pause()
        assert isinstance(app.screen, LogPaneScreen)
        back = _key("question_mark")
        back._set_forwarded()  # as Textual marks a key it gave to a widget
        app.post_message(_key("q"))
        app.post_message(back)
        await _quits(app)
    assert app.return_code == 0


def _calls(obj: object, name: str) -> list[str]:
    """The texts `obj.name(text)` is called with from now on (each call still made)."""
    seen: list[str] = []
    method = getattr(obj, name)

    def spy(text: str) -> None:
        seen.append(text)
        method(text)

    setattr(obj, name, spy)
    return seen


def _mixed() -> tuple[CuzkApp, str]:
    """The viewer on curio-mixed.log, and its first proof's job id."""
    path = SAMPLES / "curio-mixed.log"
    model = read_log(path)
    return make_app(model, LineReader(path=path)), model.proofs[0].job


def _typed(text: str) -> list[events.Key]:
    """The keys of `text` as a terminal sends them."""
    names = {"/": "slash", "-": "minus", ":": "colon", " ": "space", ".": "full_stop"}
    return [events.Key(names.get(ch, ch), ch) for ch in text]


async def test_a_job_id_typed_after_slash_in_one_burst_goes_to_the_find_box() -> None:
    """`/` and a job id typed faster than the app answers (a paste, a slow link): the keys
    after the `/` reached the Gantt before the box was up, as commands (`n` stepped a gap,
    `g` opened the gap list and the box never came). They are held for the box now."""
    app, job = _mixed()
    assert any(ch in job for ch in "ngbrf")  # letters the Gantt binds
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in [*_typed("/" + job), events.Key("enter", "\r")]:
            app.post_message(key)
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, ProofScreen), app.screen_stack  # the find's answer
        assert app.gantt.selected_gap is None  # no `n` reached the Gantt
        assert [f.job for f in app.gantt.found_jobs[:1]] == [job]
        app.post_message(events.Key("escape", None))
        await pilot.pause()
        assert len(app.screen_stack) == 1, app.screen_stack
        # a burst that closes the box: `esc` closes it, the `q` after it quits
        for key in [*_typed("/nq"), events.Key("escape", None), events.Key("q", "q")]:
            app.post_message(key)
        assert await _quits(app), f"q went astray: {app.screen_stack} {app.focused}"


async def test_keys_after_an_enter_with_nothing_typed_go_on_to_the_box() -> None:
    """`enter` in the find box with nothing typed leaves the box up (it closed it, and the
    keys typed next went to the Gantt as commands); the keys after it wait only until it is
    read, not for the hold's whole second: the job id typed next is looked for at once."""
    app, job = _mixed()
    looks: list[int] = []
    poll = app._poll_hold

    def counted() -> None:
        looks.append(1)
        poll()

    app._poll_hold = counted  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        burst = [*_typed("/"), events.Key("enter", "\r"), *_typed(job), events.Key("enter", "\r")]
        for key in burst:
            app.post_message(key)
        for _ in range(200):
            if isinstance(app.screen, ProofScreen):
                break
            await pilot.pause(0.01)
        assert isinstance(app.screen, ProofScreen), app.screen_stack  # the find's answer
        assert [f.job for f in app.gantt.found_jobs[:1]] == [job]
        assert len(looks) < HOLD_POLLS // 2, len(looks)  # not held until the hold gave up


async def test_keys_held_for_a_find_box_that_cannot_open_still_reach_the_gantt() -> None:
    """The keys after a `/` are held only until the box opens: when it cannot, they are
    acted on where they were typed, in order."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(_key("slash"))  # the keys after it are held ...
        app.post_message(GanttView.InspectGap(app.model.gaps[0]))  # ... a window opens first
        app.post_message(_key("n"))
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen), app.screen_stack  # no find box on it
        # the `n` went to the inspector, as typed there: it stepped the Gantt to a gap
        assert app.gantt.selected_gap is not None


async def test_a_job_id_pasted_right_after_slash_goes_to_the_find_box() -> None:
    """A bracketed paste that comes with the `/` (before the box is up) is held for the
    box as keys are: it went to the Gantt, which takes no paste, and was lost."""
    app, job = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(_key("slash"))
        app.post_message(events.Paste(job))
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, FindScreen), app.screen_stack
        assert app.screen.query_one(Input).value == job


async def _find_then_quit() -> None:
    """`/`, a job id, `enter` and `q` in one burst: the job is looked for, then the app
    quits."""
    app, job = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        found = _calls(app, "find")
        for key in [*_typed("/" + job), events.Key("enter", "\r"), events.Key("q", "q")]:
            app.post_message(key)
        assert await _quits(app), f"q went astray: {app.screen_stack} {app.focused}"
    assert found == [job]


async def test_a_stalled_app_still_hands_the_keys_after_enter_to_what_is_below(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A loaded host stalls the app, for longer than the hold's limit, as the find box
    takes its `enter`. The hold of the keys after it, counted in wall time, ended at its
    first look after the stall, with the box still up, and the `q` was typed into it; it
    counts the looks the app made now. Then the `q` came as the find's answer mounted,
    and the quit found its widgets half removed (a traceback); it waits for that screen
    to take the focus now."""
    submitted = AskScreen.on_input_submitted

    def slow_submit(screen: AskScreen, event: Input.Submitted) -> None:
        time.sleep(HOLD_KEYS_S * 1.5)  # the whole app stalls: one thread, one loop
        submitted(screen, event)

    monkeypatch.setattr(AskScreen, "on_input_submitted", slow_submit)
    await _find_then_quit()


async def test_keys_typed_after_the_enter_that_closes_the_find_box_go_below_it() -> None:
    """`/`, a job id, `enter` and `q` in one burst: the keys held for the box were all
    handed to it at once, so the `q` was typed into the box `enter` was closing (the find
    looked for the job id with a `q` after it). The keys after `enter` wait until the box
    has closed, and go where they would have gone had they been typed then."""
    await _find_then_quit()


def _helps_opened(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per help window mounted from now on."""
    opened: list[int] = []
    mount = HelpScreen.on_mount

    def counted(screen: HelpScreen) -> None:
        opened.append(1)
        mount(screen)

    monkeypatch.setattr(HelpScreen, "on_mount", counted)
    return opened


async def test_q_after_keys_held_down_quits_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`?` held down (a hundred of them) then `q`: the `q` waited for the help to open and
    close fifty times (7.8 s), though nothing those keys open could take it as text. It
    quits at once, the keys held before it dropped."""
    opened = _helps_opened(monkeypatch)
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in [*["question_mark"] * 100, "q"]:
            app.post_message(_key(key))
        assert await _quits(app), app.screen_stack
    assert len(opened) <= 1, len(opened)  # the first may have opened


@pytest.mark.parametrize("keys", [["y", "q"], ["enter", "y", "q"]])
async def test_q_right_after_y_quits_once_the_id_is_copied(
    monkeypatch: pytest.MonkeyPatch, keys: list[str]
) -> None:
    """A gap selected, then `y q` in one burst (or `enter y q`: the `y` held until the
    inspector is up): `y` copies the job id to the clipboard, which outlives the app. The
    `q`, a binding acted on as the app reads it, quit before the `y` had come back up from
    the widget it was given to (and a held `y` was dropped with the keys held before a `q`);
    the id was never copied. The `q` now waits for the keys before it."""
    import tui.commands

    copied: list[int] = []
    copy = tui.commands.copy_id

    def counted(app: CuzkApp) -> None:
        copied.append(1)
        copy(app)

    monkeypatch.setattr(tui.commands, "copy_id", counted)
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(_key("n"))
        await pilot.pause(0.3)
        for key in keys:
            app.post_message(_key(key))
        assert await _quits(app), app.screen_stack
    assert copied == [1]


async def test_q_right_after_the_palettes_screenshot_quits_once_it_is_saved(
    tmp_path: Path,
) -> None:
    """`screenshot enter q` in the palette in one burst: the screenshot is taken 0.1 s after
    the palette closes (so that the palette is not in it), and the `q` quit before that;
    nothing was saved. The `q` waits for it."""
    path = SAMPLES / "curio-mixed.log"
    app = make_app(read_log(path), LineReader(path=path), screenshot_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(events.Key("ctrl+p", None))
        await pilot.pause(0.3)
        for key in [*_typed("screenshot"), events.Key("enter", "\r"), _key("q")]:
            app.post_message(key)
        assert await _quits(app), app.screen_stack
    assert len(list(tmp_path.glob("cuzk-tui-*.svg"))) == 1


async def test_keys_typed_after_c_wait_for_the_comparison() -> None:
    """With --compare, `c ctrl+p` in one burst: the palette opened over the Gantt before
    the comparison, which then never opened (a window opens over no other). The keys after
    `c` wait for its window, as after `enter` on the Gantt."""
    from parsers.hosts import START, merge
    from tui.compare import CompareScreen

    a, b = read_log(SAMPLES / "p12-c15-gw1.log"), read_log(SAMPLES / "tiny.log")
    m = merge([a, b], ["before", "after"], START)
    app = make_app(m.model, LineReader(data=b""), compared=(a, b))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(_key("c"))
        app.post_message(events.Key("ctrl+p", None))
        deadline = time.monotonic() + HANG_GUARD_S
        while not isinstance(app.focused, Input):
            assert time.monotonic() < deadline, app.screen_stack
            await pilot.pause(0.02)
        assert [type(s) for s in app.screen_stack[1:]] == [CompareScreen, ListedPalette]


async def _wheel_after_g(paced: bool) -> tuple[float, list[str], object]:
    """`g`, the wheel turned twice over the middle of the screen, `enter` (`paced`: each
    answered; else in one burst): the Gantt's scale, the windows, the gap selected."""
    app, _ = _mixed()
    async with app.run_test(size=(120, 36)) as pilot:
        wheel = [
            events.MouseScrollUp(None, 60, 12, 0, -1, 0, False, False, False, 60, 12)
            for _ in range(2)
        ]
        await _setup_then(app, pilot, [], ["g", *wheel, "enter"], paced)
        stack = [type(s).__name__ for s in app.screen_stack]
        return app.gantt.scale, stack, app.gantt.selected_gap


async def test_the_wheel_turned_after_g_is_held_for_the_gap_list() -> None:
    """`g`, two turns of the wheel and `enter` in one write: the keys after `g` were held
    for the gap list, the wheel was not, and zoomed the Gantt below it. It is held with
    the keys; the burst ends as the same input given slowly."""
    paced = await _wheel_after_g(paced=True)
    assert await _wheel_after_g(paced=False) == paced


async def _click_after_g(click: bool, paced: bool) -> tuple[list[str], object]:
    """`g`, a click on the middle of the screen (`click`), `enter` (`paced`: each
    answered; else in one burst): the windows and the gap selected."""
    app, _ = _mixed()
    async with app.run_test(size=(120, 36)) as pilot:
        press = _click(60, 20)
        await _setup_then(app, pilot, [], ["g", *(press if click else []), "enter"], paced)
        return [type(s).__name__ for s in app.screen_stack], app.gantt.selected_gap


async def test_a_click_after_g_is_held_for_the_gap_list() -> None:
    """`g`, a click on a row of the gap list and `enter` in one write: the click went to
    the Gantt below the list, and `enter` chose the first gap. It is held with the keys:
    the click puts the list's cursor on its row, which `enter` chooses, as given slowly."""
    paced = await _click_after_g(click=True, paced=True)
    assert paced != await _click_after_g(click=False, paced=True)  # the click chose a row
    assert await _click_after_g(click=True, paced=False) == paced


async def _footer_slash(help_first: bool, last: str, paced: bool) -> tuple[list[str], object]:
    """A click on the footer's `/` and `last` (`help_first`: the help open, and `escape`
    before the click, which lands under the help, on the Gantt's screen once it closes;
    `paced`: each answered; else in one burst): the windows and the focused box's text."""
    app, _ = _mixed()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        shown = app.screen.query_one(Footer).walk_children(Widget)
        region = next(w.region for w in shown if getattr(w, "key", None) == "slash")
        x, y = region.x + 1, region.y
        press = _click(x, y)
        setup, first = (["question_mark"], ["escape"]) if help_first else ([], [])
        await _setup_then(app, pilot, setup, [*first, *press, last], paced)
        return [type(s).__name__ for s in app.screen_stack], getattr(app.focused, "value", None)


@pytest.mark.parametrize("help_first", [True, False])
@pytest.mark.parametrize("last", ["n", "q"])
async def test_a_click_on_the_footer_acts_in_its_turn(help_first: bool, last: str) -> None:
    """A click on a key of the footer acts as that key in its turn, held with the keys
    typed ahead or not: the footer's key posts its key to the app, which came behind the
    keys read with the click, so `n` reached the Gantt before `/` opened the find box (and
    `q` quit)."""
    paced = await _footer_slash(help_first, last, paced=True)
    assert paced == (["Screen", "FindScreen"], last)
    assert await _footer_slash(help_first, last, paced=False) == paced


async def _window_footer_click(paced: bool) -> tuple[list[str], object]:
    """`g`, a click on the gap list's footer key `esc` (found with the list opened once
    before) and `n` (`paced`: each answered; else in one burst): the windows and the gap
    selected."""
    app, _ = _mixed()
    async with app.run_test(size=(120, 36)) as pilot:
        await _setup_then(app, pilot, ["g"], [], paced=True)
        shown = app.screen.query_one(Footer).walk_children(Widget)
        region = next(w.region for w in shown if getattr(w, "key", None) == "escape")
        x, y = region.x + 1, region.y
        await _setup_then(app, pilot, ["escape"], [], paced=True)
        assert app.screen is app.screen_stack[0]
        press = _click(x, y)
        await _setup_then(app, pilot, [], ["g", *press, "n"], paced)
        return [type(s).__name__ for s in app.screen_stack], app.gantt.selected_gap


async def test_a_click_on_the_footer_of_a_window_a_key_opened_acts_in_its_turn() -> None:
    """`g`, a click on the gap list's `esc Close` and `n` in one write: the click was held
    for the list, then handed out before the list's footer had placed its keys, and was
    lost (the list stayed open). It waits for the footer's keys."""
    paced = await _window_footer_click(paced=True)
    assert paced[0] == ["Screen"] and paced[1] is not None
    assert await _window_footer_click(paced=False) == paced


async def _palette_click(click: bool, paced: bool) -> tuple[object, ...]:
    """ctrl+p, then (`click`) a click on the palette's list (found with the palette opened
    once before) (`paced`: each answered; else in one burst): what the app shows."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await _setup_then(app, pilot, ["ctrl+p"], [], paced=True)
        listed = app.screen.query_one(CommandList).region
        x, y = listed.x + 4, listed.y + 2
        await _setup_then(app, pilot, ["escape"], [], paced=True)
        press = _click(x, y)
        await _setup_then(app, pilot, [], ["ctrl+p", *(press if click else [])], paced)
        stack = [type(s).__name__ for s in app.screen_stack]
        return stack, app.show_breakdown, app.gantt.scale, app.gantt.selected_gap


async def test_a_click_on_the_palettes_list_waits_for_the_list() -> None:
    """ctrl+p and a click on one of the commands it lists, in one write: the click was
    handed out once the palette's input had the focus, before its list was made, and chose
    nothing. It waits for the list."""
    paced = await _palette_click(click=True, paced=True)
    assert paced != await _palette_click(click=False, paced=True)  # the click chose one
    assert await _palette_click(click=True, paced=False) == paced


@pytest.mark.parametrize("box_key", ["slash", "ctrl+p"])
async def test_q_after_held_keys_that_may_open_a_box_waits_its_turn(
    monkeypatch: pytest.MonkeyPatch, box_key: str
) -> None:
    """`? ?`, then `/` (or the palette's ctrl+p) and `q` in one burst: the `q` is the box's
    text, as had the keys been typed slowly; it does not quit. (A ctrl+p handed out from a
    hold let the `q` after it reach the Gantt before the palette was up: the app quit as the
    palette mounted, with a NoMatches traceback. The keys after ctrl+p wait for its input.)"""
    opened = _helps_opened(monkeypatch)
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in [_key("question_mark"), _key("question_mark"), _key(box_key), _key("q")]:
            app.post_message(key)
        deadline = time.monotonic() + HANG_GUARD_S
        while not (isinstance(app.focused, Input) and app.focused.value == "q"):
            assert app.return_code is None, "q quit"
            assert time.monotonic() < deadline, (app.screen_stack, app.focused)
            await pilot.pause(0.01)
        assert len(opened) == 1


async def _gap_after(keys: list[list[events.Key]]) -> tuple[object, object]:
    """The gap the Gantt selects after the bursts of `keys` (each burst posted at once,
    then answered), and the one it selected after the next-to-last burst."""
    app, _ = _mixed()
    selected = []
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for burst in keys:
            for key in burst:
                app.post_message(key)
            deadline = time.monotonic() + HANG_GUARD_S
            await pilot.pause()
            while len(app.screen_stack) > 1 and burst[-1].key != "g":
                assert time.monotonic() < deadline, app.screen_stack
                await asyncio.sleep(0.01)
            for _ in range(5):
                await pilot.pause()
            selected.append(app.gantt.selected_gap)
    return selected[-1], selected[-2] if len(selected) > 1 else None


@pytest.mark.parametrize("bursts", [[["g", "enter", "n"]], [["g"], ["enter", "n"]]])
async def test_keys_typed_after_the_enter_that_closes_the_gap_list_go_below_it(
    bursts: list[list[str]],
) -> None:
    """`g`, `enter`, `n` typed faster than the app answers: the `n` reached the gap list
    that `enter` was closing (it takes no `n`) and was lost, where it should have stepped
    the Gantt from the gap chosen to the next. It waits for the list to close now."""
    paced, chosen = await _gap_after([[_key("g")], [_key("enter")], [_key("n")]])
    assert paced is not None and chosen is not None and paced != chosen  # `n` steps
    typed, _ = await _gap_after([[_key(k) for k in b] for b in bursts])
    assert typed == paced


async def _after_gap_list(keys: list[str], pause: float | None) -> tuple[object, ...]:
    """The windows open and the gap selected after `g`, then `keys` (`pause`: after each)."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(_key("g"))
        await pilot.pause(0.3)
        stack, _ = await _answered(app, pilot, keys, pause)
        return stack, app.gantt.selected_gap


async def test_keys_typed_after_the_enter_that_opens_the_inspector_reach_it() -> None:
    """`g`, then `enter enter escape` in one burst: the second `enter` asks the Gantt to
    inspect the gap chosen, and the `escape` reached the Gantt (it clears nothing) before
    the inspector opened, which stayed open. The keys after it wait for the window."""
    keys = ["enter", "enter", "escape"]
    paced = await _after_gap_list(keys, 0.3)
    assert paced[0] == ["Screen"] and paced[1] is not None
    assert await _after_gap_list(keys, None) == paced


async def test_escape_and_a_key_that_come_in_one_read_are_both_acted_on() -> None:
    """`esc` and `n` typed together (one read over SSH) reach the app as alt+n, which
    nothing binds: the gap list stayed open, and the `n` was lost. They are `esc`, then
    `n`: the list closes and the Gantt steps to the next gap, as when typed apart."""
    paced, _ = await _gap_after([[_key("g")], [_key("escape")], [_key("n")]])
    assert paced is not None
    typed, _ = await _gap_after([[_key("g")], [_key("alt+n")]])
    assert typed == paced


async def test_escape_and_q_typed_together_in_the_find_box_close_it_and_quit() -> None:
    """The same in the find box: alt+q was neither text nor a key it binds, and the box
    stayed open."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in [*_typed("/ab"), _key("alt+q")]:
            app.post_message(key)
        assert await _quits(app), f"alt+q went astray: {app.screen_stack} {app.focused}"


async def _after_find(after: list[str], paced: bool) -> tuple[list[str], str | None]:
    """The windows open and the text of the box on top after `/job enter`, then `after`
    (`paced`: once the proof is shown, a key at a time; else all in the same burst)."""
    app, job = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in [*_typed("/" + job), _key("enter")]:
            app.post_message(key)
        if paced:
            deadline = time.monotonic() + HANG_GUARD_S
            while not (isinstance(app.screen, ProofScreen) and app.focused is not None):
                assert time.monotonic() < deadline, app.screen_stack
                await asyncio.sleep(0.01)
        return await _answered(app, pilot, after, 0.2 if paced else None)


async def _answered(
    app: CuzkApp, pilot: Pilot[None], keys: list[str], pause: float | None
) -> tuple[list[str], str | None]:
    """The windows open and the text of the box on top once `keys` have been typed (a
    `pause` after each, or all in one burst) and answered: no key is held, and the app
    has handled what came before."""
    for name in keys:
        app.post_message(_key(name))
        if pause is not None:
            await pilot.pause(pause)
    await pilot.pause(0.3)
    deadline = time.monotonic() + HANG_GUARD_S
    while app.holding_keys:
        assert time.monotonic() < deadline, "the keys are held for ever"
        await asyncio.sleep(0.01)
    await pilot.pause(0.3)
    box = app.screen.query(Input)
    return [type(s).__name__ for s in app.screen_stack], box.first().value if box else None


async def test_find_typed_again_after_the_escape_that_closes_the_proof_go_to_a_new_box() -> None:
    """`/job enter`, then `escape /gn` in one burst: a release of the keys held for the
    find box, queued when the proof opened, handed out the keys held after the `escape`
    while the proof was still up (the `/` did not open a box, the `g` opened the gap
    list). A release now hands out only the keys of the hold it was queued for."""
    after = ["escape", "slash", "g", "n"]
    paced = await _after_find(after, paced=True)
    assert paced == (["Screen", "FindScreen"], "gn")
    assert await _after_find(after, paced=False) == paced


async def _palette(
    command: str, keys: list[str], paced: bool
) -> tuple[object, list[str], str | None]:
    """ctrl+p and `command` typed, then `keys` (`paced`: one at a time): the selected
    gap, the windows open and the text of the box on top."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(events.Key("ctrl+p", None))
        await pilot.pause(0.3)
        for key in _typed(command):
            app.post_message(key)
            await pilot.pause()
        await pilot.pause(0.5)
        stack, box = await _answered(app, pilot, keys, 0.3 if paced else None)
        return app.gantt.selected_gap, stack, box


@pytest.mark.parametrize(
    ("command", "keys"),
    [("Gap list", ["enter", "enter", "n"]), ("Find a job", ["enter", *"porep-"])],
)
async def test_keys_typed_after_the_palettes_enter_wait_for_the_window_it_opens(
    command: str, keys: list[str]
) -> None:
    """The palette's `enter` and the keys after it in one burst: those waited only for
    the palette's box to close, and went to the Gantt before the command (which Textual
    runs once the palette has closed) opened its window (the job id typed for the find
    box stepped gaps). They wait for the window now."""
    paced = await _palette(command, keys, paced=True)
    assert paced[1][-1] in ("Screen", "FindScreen")
    assert await _palette(command, keys, paced=False) == paced


async def _palette_enter(
    first: str | None, text: str, paced: bool
) -> tuple[int | None, list[str], bool]:
    """ctrl+p (after `first`), then `text` and `enter` (`paced`: a key at a time, each
    answered): the app's return code, the windows open, whether the busy split shows."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        setup = [first] if first is not None else []
        keys = [*_typed(text), events.Key("enter", "\r")]
        await _setup_then(app, pilot, [*setup, events.Key("ctrl+p", None)], keys, paced)
        stack = [type(s).__name__ for s in app.screen_stack]
        return app.return_code, stack, app.show_breakdown


@pytest.mark.parametrize(
    ("first", "text"), [(None, "zzzz"), ("g", "gap list"), (None, "busy"), ("g", "quit")]
)
async def test_the_palettes_enter_typed_with_its_text_acts_on_that_text(
    first: str | None, text: str
) -> None:
    """The palette's text and `enter` in one burst: the `enter` chose from the list of an
    earlier text, still shown while the palette looked for the text's commands. `zzzz`
    (no command) ran the busy split, the first listed for `z`; `gap list` in the gap list
    (where the palette offers fewer commands) quit the app. It acts as typed slowly now."""
    paced = await _palette_enter(first, text, paced=True)
    assert await _palette_enter(first, text, paced=False) == paced
    if text in ("zzzz", "gap list"):
        assert paced[0] is None and paced[1][-1] == "ListedPalette", paced  # no match


@pytest.mark.parametrize("settled", [False, True])
@pytest.mark.parametrize("text", ["zzzz", "busy"])
async def test_the_palettes_enter_with_nothing_listed_holds_no_key(
    monkeypatch: pytest.MonkeyPatch, text: str, settled: bool
) -> None:
    """`ctrl+p zzzz enter escape` in one burst: the `enter` had nothing to choose and closed
    nothing, yet the `escape` after it waited the whole hold (50 looks, a second) for the
    palette to close. It waits only until the `enter` is acted on now. An `enter` that
    chooses a command (`busy`) still holds the keys after it until the palette is gone."""
    looks = [0]
    poll = CuzkApp._poll_hold

    def counted(app: CuzkApp) -> None:
        looks[0] += 1
        poll(app)

    monkeypatch.setattr(CuzkApp, "_poll_hold", counted)
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        shown = app.show_breakdown
        if settled:
            # the text typed, and the look's "No matches found" shown, before the burst
            await _setup_then(app, pilot, [events.Key("ctrl+p", None), *_typed(text)], [], True)
            await pilot.pause(1.0)
            looks[0] = 0
            keys = [events.Key("enter", "\r"), _key("escape")]
            await _setup_then(app, pilot, [], keys, paced=False)
        else:
            keys = [*_typed(text), events.Key("enter", "\r"), _key("escape")]
            await _setup_then(app, pilot, [events.Key("ctrl+p", None)], keys, paced=False)
        stack = [type(s).__name__ for s in app.screen_stack]
        toggled = app.show_breakdown != shown
    assert stack == ["Screen"]  # the escape closed the palette, or the command ran
    assert toggled == (text == "busy")  # the busy split's command ran, and only then
    if text == "zzzz":
        assert looks[0] <= 10, looks


def _input(item: str | Message) -> Message:
    """A key by its name or its character, or the event given."""
    if not isinstance(item, str):
        return item
    return _typed(item)[0] if len(item) == 1 else _key(item)


async def _setup_then(
    app: CuzkApp,
    pilot: Pilot[None],
    setup: Sequence[str | Message],
    keys: Sequence[str | Message],
    paced: bool,
) -> None:
    """`setup` typed a key at a time, then `keys` (`paced`: a key at a time, each answered;
    else in one burst), and time for the app to answer them."""
    await pilot.pause()
    for item in setup:
        app.post_message(_input(item))
        await pilot.pause(0.3)
    for item in keys:
        app.post_message(_input(item))
        if paced:
            await pilot.pause(0.4)
    for _ in range(10):
        await pilot.pause(0.1)


async def _box_text(setup: list[str], keys: list[str], paced: bool) -> tuple[list[str], str]:
    """The windows open and the text of the box that has the focus after `_setup_then`."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await _setup_then(app, pilot, setup, keys, paced)
        focused = app.focused
        assert isinstance(focused, Input), (app.screen_stack, focused)
        return [type(s).__name__ for s in app.screen_stack], focused.value


@pytest.mark.parametrize(
    ("setup", "keys", "text"),
    [
        (["slash"], ["g", "backspace", "p"], "p"),  # was g
        (["slash"], ["a", "b", "left", "c"], "acb"),  # was abc
        (["slash"], ["a", "b", "ctrl+u", "c"], "c"),  # was empty
        (["L", "slash"], ["a", "b", "left", "c"], "acb"),  # the log pane's prompt
        (["ctrl+p"], ["g", "a", "x", "backspace", "p"], "gap"),  # the palette's: was gax
        (["ctrl+p"], ["a", "b", "left", "c"], "acb"),  # was abc
    ],
)
async def test_a_boxs_own_keys_in_a_burst_act_in_the_order_typed(
    setup: list[str], keys: list[str], text: str
) -> None:
    """In a text box, the keys it binds (cursor moves, deletions) typed in one burst with
    letters acted only once they had come back up to the app, after the letters typed
    after them. They act in order now, as typed slowly."""
    paced = await _box_text(setup, keys, paced=True)
    assert paced[1] == text
    assert await _box_text(setup, keys, paced=False) == paced


def _window_state(app: CuzkApp) -> list[str]:
    """The windows open, what the one on top shows (its gap, interval or log line) and
    what has the focus (a box: with its text)."""
    screen = app.screen
    out = [type(s).__name__ for s in app.screen_stack]
    if isinstance(screen, InspectorScreen):
        out.append(f"gap at {screen.gap.start}")
    elif isinstance(screen, IntervalScreen | ProofScreen):
        out.append(f"index {screen.index}")
    elif isinstance(screen, LogPaneScreen):
        out.append(f"line {screen.lines.cursor}")
    focused = app.focused
    out.append(f"{type(focused).__name__} {getattr(focused, 'value', '')}")
    return out


async def _over_window(setup: list[str], keys: list[str], paced: bool) -> list[str]:
    """The state of the windows (`_window_state`) after `_setup_then`."""
    app, _ = _mixed()
    async with app.run_test(size=(120, 36)) as pilot:
        await _setup_then(app, pilot, setup, keys, paced)
        return _window_state(app)


@pytest.mark.parametrize(
    ("setup", "keys"),
    [
        (["n", "enter"], ["n", "n", "L"]),  # the log of the first gap, not the third
        (["slash", *"1000-1", "enter"], ["n", "n", "i"]),  # the first match's interval
    ],
)
async def test_keys_typed_after_n_in_a_window_act_on_what_it_stepped_to(
    setup: list[str], keys: list[str]
) -> None:
    """`n`/`N` in the inspector and the proof view asked the app for the next gap or match
    by a message, acted on once the keys after them had been: `n n L` in one burst showed
    the log of the gap the inspector was on before, `n n i` the first match's interval.
    They step as the key is read now; the burst ends as the keys typed slowly do."""
    paced = await _over_window(setup, keys, paced=True)
    assert await _over_window(setup, keys, paced=False) == paced


FIND_14 = ["slash", *"1000-14", "enter"]


@pytest.mark.parametrize(
    ("setup", "keys"),
    [
        (["n", "enter"], ["L", "colon", "1", "2", "enter"]),  # the pane's prompt lost its text
        (FIND_14, ["i", "n", "n"]),  # the proof view stepped, closed
        (FIND_14, ["1", "n", "n"]),  # the proof view stepped, closed: no window left
        (["L"], ["question_mark", "escape", "slash", "x"]),  # the `/` went to the help
    ],
)
async def test_keys_typed_after_a_key_that_opens_a_window_over_a_window_reach_it(
    setup: list[str], keys: list[str]
) -> None:
    """Over a window, the keys that open another (`L` in the inspector, `i` and a gap's
    number in the proof view, `?` in the log pane) and the keys after them in one burst:
    those reached the window below before the new one was up. They wait for it now, as
    after `L`, `g` or `?` on the Gantt; the burst ends as the keys typed slowly do."""
    paced = await _over_window(setup, keys, paced=True)
    assert await _over_window(setup, keys, paced=False) == paced


async def test_the_escape_that_stops_the_log_panes_search_holds_no_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a search running, `escape` in the log pane stops it, and the pane stays: the
    keys after it waited a second for the pane to close."""

    def endless(search: LineSearch) -> bool:  # a search of a long log, still under way
        time.sleep(0.0005)
        return False

    monkeypatch.setattr(LineSearch, "step", endless)
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(_key("L"))
        await pilot.pause(0.3)
        pane = app.screen
        assert isinstance(pane, LogPaneScreen)
        for key in [*_typed("/zzz"), _key("enter")]:
            app.post_message(key)
            await pilot.pause()
        assert pane.searching is not None
        app.post_message(_key("escape"))
        app.post_message(_key("n"))
        await pilot.pause()
        await pilot.pause()
        assert not app.holding_keys
        pane._stop_search()  # the `n` began another endless search
        assert app.screen is pane


async def test_a_paste_held_once_no_screen_is_left_is_dropped(tmp_path: Path) -> None:
    """Keys held when the last screen goes (the app ending) are dropped: a paste among
    them was handed to Textual, which looked for the focused widget and raised
    ScreenStackError."""
    app = _two_lines(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(_key("slash"))
        app.post_message(events.Paste("abc"))  # held for the box
        stack = app._screen_stacks[app._current_mode]
        saved = list(stack)
        await asyncio.sleep(0)
        assert app.holding_keys
        stack.clear()
        try:
            await app._check_hold()
        finally:
            stack.extend(saved)
        assert not app.holding_keys


async def test_keys_typed_after_the_enter_of_the_log_panes_prompt_go_below_it(
    tmp_path: Path,
) -> None:
    """The same in the log pane: `:2`, `enter`, `q` in one burst jumps to line 2, then
    quits (the `q` was typed into the prompt: `2q`, a line number not understood)."""
    app = _two_lines(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(_key("L"))
        await pilot.pause()
        pane = app.screen
        assert isinstance(pane, LogPaneScreen)
        jumped = _calls(pane, "jump")
        for key in [*_typed(":2"), events.Key("enter", "\r"), events.Key("q", "q")]:
            app.post_message(key)
        assert await _quits(app), f"q went astray: {app.screen_stack} {app.focused}"
    assert jumped == ["2"]


@pytest.mark.parametrize("typed", ["L:2", "L/TIMELINE"])
async def test_keys_typed_with_the_key_that_opens_the_log_pane_reach_it(
    tmp_path: Path, typed: str
) -> None:
    """`L` and the keys after it in one burst: those reached the app before the pane had
    its widgets (its prompt's keys were lost). They wait for the pane now."""
    app = _two_lines(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in _typed(typed):
            app.post_message(key)
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, LogPaneScreen), app.screen_stack
        box = app.screen.query_one(Input)
        assert app.focused is box
        assert box.value == typed[2:]


async def test_a_line_number_typed_with_the_key_that_opens_the_log_pane_is_shown() -> None:
    """`L:12` and `enter` in one burst: the jump came before the pane had placed its cursor
    on the line it opens at, which then moved it away (the status said line 12, the view
    showed lines 33-52). The keys wait for the pane to be placed."""
    app, _ = _mixed()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in [*_typed("L:12"), events.Key("enter", "\r")]:
            app.post_message(key)
        deadline = time.monotonic() + HANG_GUARD_S
        while not app.screen.query("LogLines") and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        await pilot.pause()
        pane = app.screen
        assert isinstance(pane, LogPaneScreen), app.screen_stack
        assert pane.at.line != 12  # the line it opens at is another
        lines = pane.lines
        assert lines.cursor == 12
        assert lines.top <= 12 < lines.top + lines.size.height


def test_a_palette_not_composed_yet_has_had_nothing_chosen() -> None:
    """The app asks a palette just pushed (or being taken down) whether its last enter did
    nothing, while it has no list: that ended the app once in a storm (NoMatches), under
    load. Nothing is known to be done with then: the keys wait for the next look."""
    assert ListedPalette().chose_nothing(0) is False
