"""The log pane (`L`): the log's own lines by number, read a chunk at a time (whole-log
scrolling, the regex search, the jump to a line or a time), drawn with no control byte."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from test_line_index import awkward_log, facts_of
from textual.pilot import Pilot
from textual.widgets import Static

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers.builder import LogBuilder
from parsers.linesearch import LineSearch, compile_search
from parsers.linestamps import LineStamps
from parsers.load import read_log
from parsers.model import LogModel
from parsers.rawlines import LineReader
from tui.app import CuzkApp, make_app
from tui.gantt import GanttView
from tui.inspector import InspectorScreen
from tui.interval import IntervalScreen
from tui.loglines import LogLines
from tui.logpane import LogPaneScreen

SIZE = (120, 36)


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
    for _ in range(12):
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


# -- the search -------------------------------------------------------------------------


def _reader(tmp_path: Path, text: str) -> LineReader:
    path = tmp_path / "log.log"
    path.write_text(text)
    return LineReader(path=path)


def _run(search: LineSearch) -> int | None:
    steps = 0
    while not search.step():
        steps += 1
        assert steps < 10_000
    return search.found


def test_search_finds_the_next_and_the_previous_matching_line(tmp_path: Path) -> None:
    lines = [f"line {k} {'GPU_END' if k % 7 == 0 else 'other'}" for k in range(1, 3001)]
    reader = _reader(tmp_path, "\n".join(lines) + "\n")
    pattern = compile_search("gpu_end")  # no capital: case ignored
    for size in (64, 1 << 20):  # many chunks or one
        assert _run(LineSearch(reader, pattern, 1, True, size)) == 7
        assert _run(LineSearch(reader, pattern, 7, True, size)) == 14
        assert _run(LineSearch(reader, pattern, 14, False, size)) == 7
        assert _run(LineSearch(reader, pattern, 2999, False, size)) == 2996
        assert _run(LineSearch(reader, pattern, 2996, True, size)) is None
        assert _run(LineSearch(reader, pattern, 7, False, size)) is None
    assert _run(LineSearch(reader, compile_search("GPU_end"), 1)) is None  # a capital: exact


def test_a_search_until_a_line_searches_that_line_last(tmp_path: Path) -> None:
    """The pane's search on from the other end of the log stops at the line it began from,
    itself searched; a match past it is no match, in any chunk of the search."""
    lines = [f"line {k} {'GPU_END' if k % 7 == 0 else 'other'}" for k in range(1, 3001)]
    reader = _reader(tmp_path, "\n".join(lines) + "\n")
    pattern = compile_search("gpu_end")
    for size in (64, 1 << 20):
        assert _run(LineSearch(reader, pattern, 0, True, size, until=7)) == 7
        assert _run(LineSearch(reader, pattern, 0, True, size, until=6)) is None
        assert _run(LineSearch(reader, pattern, 3001, False, size, until=2996)) == 2996
        assert _run(LineSearch(reader, pattern, 3001, False, size, until=2997)) is None
        assert _run(LineSearch(reader, pattern, 0, True, size, until=2000)) == 7
        assert _run(LineSearch(reader, pattern, 3001, False, size, until=5)) == 2996


def test_a_match_runs_over_no_line_end(tmp_path: Path) -> None:
    reader = _reader(tmp_path, "alpha\nbeta\nalpha beta\n")
    # `\s+` takes the newline in the chunk: only the line that matches on its own counts
    assert _run(LineSearch(reader, compile_search(r"alpha\s+beta"), 0)) == 3
    assert _run(LineSearch(reader, compile_search(r"alpha\s+beta"), 4, forward=False)) == 3
    assert _run(LineSearch(reader, compile_search(r"^beta$"), 0)) == 2
    assert _run(LineSearch(reader, compile_search(r"ta$"), 2)) == 3  # `$` at a line's end
    assert _run(LineSearch(reader, compile_search(r"ha$"), 1)) is None


def test_colours_are_not_searched(tmp_path: Path) -> None:
    reader = _reader(tmp_path, "x\n\x1b[31mER\x1b[0mROR here\n")
    assert _run(LineSearch(reader, compile_search("ERROR"), 0)) == 2


def test_a_bad_regex_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^not a regular expression: unclosed group$"):
        compile_search("(gpu")
    # in words that fit a status line of 80 columns, a named backreference as a numbered one
    with pytest.raises(ValueError, match=r"^not a regular expression: look-around is not su"):
        compile_search("(?<=GPU_)END")
    for backreference in (r"(a)\1", "(?P<n>a)(?P=n)"):
        with pytest.raises(ValueError, match=r": backreferences are not supported$"):
            compile_search(backreference)


def test_a_pattern_too_large_says_what_to_write_instead(tmp_path: Path) -> None:
    """A Unicode class repeated (`\\w{300}`, a CID's length) is too large to compile within
    the bound; the refusal names the ASCII class, which compiles and finds the line."""
    with pytest.raises(ValueError) as refused:
        compile_search(r"bafy\w{300}x\d{300}")
    assert str(refused.value) == (
        r"too large; ASCII classes are smaller: \w as [A-Za-z0-9_], \d as [0-9]"
    )
    with pytest.raises(ValueError, match=r"^too large$"):
        compile_search("(a|b|c|d|e|f|g){1000}{1000}")  # no class to blame
    reader = _reader(tmp_path, "other\nbafy" + "k2" * 150 + "\n")
    assert _run(LineSearch(reader, compile_search("bafy[A-Za-z0-9_]{300}"), 0)) == 2


@pytest.mark.parametrize(
    "pattern",
    [
        "gpu_worker{",  # a tracing span, as the daemon's lines write them
        "gpu_worker{worker_id=0}",
        '{"job',
        "a{,3}b",
        "x{2}",
        r"x\<y",
        r"y\>",
        r"end\Z",
        "GPU_(START|END)",
        r"worker=\d+\b",
        "[]{]",
        "[^]a-z]",
        "ÉTÉ",
        "",
    ],
)
def test_a_pattern_matches_the_lines_python_s_re_matches(pattern: str) -> None:
    """The core's engine reads some of Python's syntax otherwise: `gpu_worker{` was an
    error (`{` starts a repetition there), `\\<` a word boundary. Each line matches as
    Python's re matches it (case ignored without a capital)."""
    lines = [
        'span gpu_worker{worker_id=0 gpu=0}: {"job": 1}',
        "TIMELINE,1,GPU_START,a,worker=12",
        "TIMELINE,2,GPU_END,a,worker=1x",
        "abb aaab b x<y xx y> the end",
        "été ÉTÉ ]{",
        "",
    ]
    flags = re.MULTILINE | (0 if any(c.isupper() for c in pattern) else re.IGNORECASE)
    python = re.compile(pattern, flags)
    ours = compile_search(pattern)
    for line in lines:
        data = line.encode() + b"\n"
        assert (ours.first_line(data) == 0) == (python.search(line) is not None), (pattern, line)


def test_a_pattern_that_backtracks_does_not_hold_the_search(tmp_path: Path) -> None:
    """`(x+x+)+y` against a line of `x`s: Python's `re` backtracks, 2^n steps in one call
    that holds the interpreter (the viewer read no key, no signal: only SIGKILL ended it).
    The core's engine matches in time linear in the line. Searched in a process of its own:
    were the search to backtrack again, the test fails at its timeout, not hangs."""
    log = tmp_path / "log.log"
    log.write_text("TIMELINE,1,GPU_START,a,worker=0\n" + "x" * 5000 + "y\n" + "x" * 5000 + "\n")
    code = (
        "import sys\n"
        "from parsers.linesearch import LineSearch, compile_search\n"
        "from parsers.rawlines import LineReader\n"
        "reader, pattern = LineReader(path=sys.argv[1]), compile_search('(x+x+)+y')\n"
        "def run(search):\n"
        "    while not search.step():\n"
        "        pass\n"
        "    return search.found\n"
        "print(run(LineSearch(reader, pattern, 0)), run(LineSearch(reader, pattern, 2)),\n"
        "      run(LineSearch(reader, pattern, 4, forward=False)),\n"
        "      pattern.line_spans(b'x' * 5000))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(log)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parent.parent,
        check=True,
    )
    assert done.stdout.split() == ["2", "None", "2", f"('{'x' * 5000}',", "[])"]


# -- lines by time ----------------------------------------------------------------------


def test_a_time_finds_its_first_line_and_a_line_its_partition() -> None:
    model = read_log(SAMPLES / "p9-c6.log")
    t = model.parts
    stamps = LineStamps.of(t)
    done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    i = int(np.flatnonzero(done)[3])
    assert stamps.at_line(int(t.end_line[i])) == (i, float(t.gpu_end[i]))
    assert stamps.at_line(int(t.start_line[i])) == (i, float(t.gpu_start[i]))
    # the first GPU_START or GPU_END at or after a time: no stamp between it and the time
    ms = float(t.gpu_start[i]) - 0.5
    line = stamps.first_at_or_after(ms)
    assert line is not None
    found = stamps.at_line(line)
    assert found is not None and found[1] >= ms
    earlier = stamps.ms[(stamps.ms >= ms) & (stamps.ms < found[1])]
    assert not len(earlier)
    assert stamps.first_at_or_after(float(np.nanmax(t.gpu_end)) + 1) is None


# -- the pane ---------------------------------------------------------------------------


def _app(path: Path) -> tuple[CuzkApp, LogModel]:
    model = read_log(path)
    return make_app(model, LineReader(path=path)), model


def _rows(app: CuzkApp) -> list[str]:
    lines = app.screen.query_one(LogLines)
    return [lines.render_line(y).text for y in range(lines.size.height)]


def _numbered(app: CuzkApp, line: int) -> str:
    """The row showing line `line`."""
    return next(r for r in _rows(app) if re.match(rf"\s*{line} ", r))


async def _settle(pilot: object) -> None:
    for _ in range(3):
        await pilot.pause()  # type: ignore[attr-defined]


async def test_l_at_a_gap_shows_its_gpu_end_line_numbered() -> None:
    path = SAMPLES / "p9-c6.log"
    app, model = _app(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "L")
        await _settle(pilot)
        assert isinstance(app.screen, LogPaneScreen)
        gap = app.gantt.selected_gap
        assert gap is not None
        end_line = int(model.parts.end_line[gap.before.index])
        lines = app.screen.query_one(LogLines)
        assert lines.cursor == end_line
        raw = path.read_bytes().split(b"\n")[end_line - 1].decode()
        assert "GPU_END" in raw
        assert raw[:60] in _numbered(app, end_line)
        await pilot.press("escape")
        await _settle(pilot)
        assert app.screen.query(GanttView)


async def test_l_in_the_inspector_opens_over_it_and_esc_goes_back() -> None:
    app, model = _app(SAMPLES / "p9-c6.log")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "n", "enter")
        await _settle(pilot)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        await pilot.press("L")
        await _settle(pilot)
        assert isinstance(app.screen, LogPaneScreen)
        end_line = int(model.parts.end_line[inspector.gap.before.index])
        assert app.screen.query_one(LogLines).cursor == end_line
        await pilot.press("escape")
        await _settle(pilot)
        shown: object = app.screen
        assert shown is inspector


async def test_l_in_the_interval_inspector_opens_at_its_gpu_start() -> None:
    """`L` in the interval inspector did nothing (the help says `L` works from the
    inspector): it opens the pane at the interval's GPU_START, over the inspector."""
    path = SAMPLES / "p12-gw2-merged.log"
    app, model = _app(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "i")
        await _settle(pilot)
        inspector = app.screen
        assert isinstance(inspector, IntervalScreen)
        await pilot.press("n", "L")  # typed ahead of the window as a user types
        await _settle(pilot)
        assert isinstance(app.screen, LogPaneScreen)
        start = int(model.parts.start_line[inspector.index])
        assert app.screen.query_one(LogLines).cursor == start
        assert "GPU_START" in path.read_bytes().split(b"\n")[start - 1].decode()
        await pilot.press("escape")
        await _settle(pilot)
        shown: object = app.screen
        assert shown is inspector


def _long_log(tmp_path: Path) -> Path:
    _, data = simulate(SimConfig(seed=5, proofs=8, stdout="ansi"))
    path = tmp_path / "long.log"
    path.write_bytes(data)
    return path


async def test_paging_reaches_the_last_line_and_home_the_first(tmp_path: Path) -> None:
    path = _long_log(tmp_path)
    total = path.read_bytes().count(b"\n")
    assert total > 1500  # some eighty screens at 80 x 24
    app, _ = _app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("L")
        await _settle(pilot)
        lines = app.screen.query_one(LogLines)
        assert lines.total == total
        await pilot.press("home")
        await _settle(pilot)
        assert lines.cursor == 1 and _rows(app)[0].lstrip().startswith("1 ")
        pages = 0
        while lines.cursor < total:
            await pilot.press("pagedown")
            pages += 1
            assert pages < total
        await _settle(pilot)
        assert pages >= total // lines.rows_in_view - 1
        last = path.read_bytes().split(b"\n")[total - 1]
        assert _numbered(app, total).startswith(f" {total} ")  # a space from the border
        assert re.sub(rb"\x1b\[[0-9;]*m", b"", last)[:40].decode() in _numbered(app, total)
        await pilot.press("home")
        await _settle(pilot)
        assert lines.cursor == 1
        await pilot.press("end")
        await _settle(pilot)
        assert lines.cursor == total


def _pickup_lines(path: Path) -> list[int]:
    """The numbers of the log's GPU_PICKUP lines (what `/GPU_PICK` finds)."""
    data = path.read_bytes().split(b"\n")
    return [k + 1 for k, line in enumerate(data) if b"GPU_PICKUP" in line]


async def _searched_from_the_top(pilot: Pilot[None], app: CuzkApp) -> LogPaneScreen:
    """The log pane opened on its first line, `/GPU_PICK` searched."""
    await pilot.press("L", "home")
    await _settle(pilot)
    screen = app.screen
    assert isinstance(screen, LogPaneScreen)
    await pilot.press("slash", *"GPU_PICK", "enter")
    await _settle(pilot)
    return screen


async def test_slash_finds_and_n_and_shift_n_step(tmp_path: Path) -> None:
    """Typed slowly, and in one burst faster than a search ends (key repeat, a paste):
    there each `n` steps from where the one before it left the cursor (each used to stop
    the search still running and start again from the same line: four moved one match)."""
    from textual import events

    path = _long_log(tmp_path)
    data = path.read_bytes().split(b"\n")
    want = _pickup_lines(path)
    assert len(want) > 6
    app, _ = _app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _searched_from_the_top(pilot, app)
        lines = screen.query_one(LogLines)
        assert lines.cursor == want[0]
        await pilot.press("n")
        await _settle(pilot)
        assert lines.cursor == want[1]
        await pilot.press("n")
        await _settle(pilot)
        await pilot.press("N")
        await _settle(pilot)
        assert lines.cursor == want[1]
        assert f"line {want[1]:,}" in screen.said
        # past the last match: on from the top, and said so; back past the first, from the
        # bottom
        await pilot.press("end", "n")
        await _settle(pilot)
        end = len(data) - 1
        assert lines.cursor == want[0]
        assert screen.said == f"/GPU_PICK: line {want[0]:,} (from the top: none below line {end:,})"
        await pilot.press("N")
        await _settle(pilot)
        assert lines.cursor == want[-1]
        assert screen.said == (
            f"/GPU_PICK: line {want[-1]:,} (from the bottom: none above line {want[0]:,})"
        )
        await pilot.press("home", "slash", *"GPU_PICK", "enter")
        await _settle(pilot)
        assert lines.cursor == want[0]
        for key in ("n", "n", "n", "n", "N"):
            app.post_message(events.Key(key, key))
        for _ in range(50):
            await pilot.pause()
            if screen.searching is None and not screen.queued:
                break
        assert lines.cursor == want[3], (lines.cursor, want[:6])
        assert f"line {want[3]:,}" in screen.said


async def _pane_at_end(app: CuzkApp, pilot: Pilot[None]) -> tuple[LogPaneScreen, LogLines]:
    """The log pane opened and moved to the log's last line: the screen and its lines."""
    await pilot.press("L", "end")
    await _settle(pilot)
    screen = app.screen
    assert isinstance(screen, LogPaneScreen)
    return screen, screen.query_one(LogLines)


async def test_a_match_in_lines_written_since_the_pane_opened_is_shown(tmp_path: Path) -> None:
    path = tmp_path / "growing.log"
    path.write_bytes(SAMPLES.joinpath("p9-c6.log").read_bytes())
    app, _ = _app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen, lines = await _pane_at_end(app, pilot)
        total = lines.total
        with path.open("ab") as out:
            out.write(b"a line written later\nthe NEW_MARKER line\n")
        await pilot.press("slash", *"NEW_MARKER", "enter")
        await _settle(pilot)
        assert lines.total == total + 2
        assert lines.cursor == total + 2
        assert "the NEW_MARKER line" in _numbered(app, total + 2)
        # N from the top wraps from the log's last line now, not the pane's count of it
        await pilot.press("home", "slash", *"LATER_MARKER", "enter")
        await _settle(pilot)
        assert screen.said == "/LATER_MARKER: no match in the log"
        with path.open("ab") as out:
            out.write(b"the LATER_MARKER line\n")
        await pilot.press("N")
        await _settle(pilot)
        assert lines.cursor == total + 3, screen.said
        assert (
            screen.said == f"/LATER_MARKER: line {total + 3:,} (from the bottom: none above line 1)"
        )


async def test_the_matches_of_a_search_are_marked_in_the_lines_drawn(tmp_path: Path) -> None:
    """The marks are the core's matches, in characters of the line as drawn (an `é` before a
    match, a tab expanded), and a line that backtracking would hold on draws at once."""
    path = tmp_path / "marks.log"
    path.write_bytes(
        SAMPLES.joinpath("p9-c6.log").read_bytes()
        + "é\tGPU_end and gpu_END\n".encode()
        + b"x" * 3000
        + b"\n"
    )
    app, _ = _app(path)
    async with app.run_test(size=SIZE) as pilot:
        _, lines = await _pane_at_end(app, pilot)
        await pilot.press("slash", *"gpu_end|(x+x+)+y", "enter")
        await _settle(pilot)
        marked = lines.get_component_rich_style("loglines--match")
        (row, long_row) = lines.reader.lines(lines.total - 1, lines.total)
        text = lines.line_text(row)
        spans = [text.plain[sp.start : sp.end] for sp in text.spans if sp.style == marked]
        assert spans == ["GPU_end", "gpu_END"]
        long = lines.line_text(long_row)
        assert not [sp for sp in long.spans if sp.style == marked]


async def test_a_match_after_colours_and_bad_bytes_is_marked_where_it_is_drawn(
    tmp_path: Path,
) -> None:
    """The pane marks what the core's search found, in the text the core searched: a colour
    between two bytes that are no character leaves each its own U+FFFD, as drawn."""
    path = tmp_path / "bad.log"
    path.write_bytes(
        SAMPLES.joinpath("p9-c6.log").read_bytes() + b"\xe2\x1b[31m\x82 MARK\x1b[0m here MARK\n"
    )
    app, _ = _app(path)
    async with app.run_test(size=SIZE) as pilot:
        _, lines = await _pane_at_end(app, pilot)
        await pilot.press("home", "slash", *"\\W\\W MARK", "enter")
        await _settle(pilot)
        assert lines.cursor == lines.total  # found, from the first line
        (row,) = lines.reader.lines(lines.total, lines.total)
        text = lines.line_text(row)
        marked = lines.get_component_rich_style("loglines--match")
        spans = [text.plain[sp.start : sp.end] for sp in text.spans if sp.style == marked]
        assert text.plain.startswith("\ufffd\ufffd MARK")
        assert spans == ["\ufffd\ufffd MARK"]


async def test_a_match_far_along_a_long_line_is_brought_into_view(tmp_path: Path) -> None:
    """The view moves sideways to a match off its right edge (a long tracing line), back to
    a match near a line's start, and says when a match lies past what is drawn of a line."""
    path = tmp_path / "wide.log"
    path.write_bytes(
        SAMPLES.joinpath("p9-c6.log").read_bytes()
        + b"a" * 300
        + b" FAR_MARK here\n"
        + b"NEAR_MARK at the start\n"
        + b"b" * 5000
        + b" FAR_MARK past what is drawn\n"
        + b"TABS"
        + b"\t" * 30
        + b"\x03NEEDLE end\n"
    )
    app, _ = _app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, lines = await _pane_at_end(app, pilot)
        total = lines.total
        await pilot.press("home", "slash", *"FAR_MARK", "enter")
        await _settle(pilot)
        assert lines.cursor == total - 3 and lines.x > 0
        assert "FAR_MARK here" in _numbered(app, total - 3)
        assert screen.said == f"/FAR_MARK: line {total - 3:,}"
        # a `:` jump shows the lines from their start: scrolled sideways still, the line
        # jumped to showed blank or cut at the left
        side = lines.x
        await pilot.press("colon", *"zz", "enter")  # no such line or time: nothing moves
        await _settle(pilot)
        assert lines.cursor == total - 3 and lines.x == side
        await pilot.press("colon", *"5", "enter")
        await _settle(pilot)
        assert lines.cursor == 5 and lines.x == 0
        await pilot.press("end", "slash", *"FAR_MARK", "enter")
        await _settle(pilot)
        assert lines.cursor == total - 3 and lines.x > 0
        await pilot.press("slash", *"NEAR_MARK", "enter")
        await _settle(pilot)
        assert lines.cursor == total - 2 and lines.x == 0
        assert "NEAR_MARK at the start" in _numbered(app, total - 2)
        await pilot.press("slash", *"FAR_MARK", "enter")
        await _settle(pilot)
        assert lines.cursor == total - 1 and lines.x == 0
        assert screen.said == (
            f"/FAR_MARK: line {total - 1:,} (match beyond the 4,096 bytes shown)"
        )
        # a tab and a control character in the pattern: matched as the search matches them,
        # placed where they are drawn (the tabs as spaces, the control as a picture)
        await pilot.press("slash", *"\\t\\x03needle", "enter")
        await _settle(pilot)
        assert lines.cursor == total and lines.x > 200
        assert screen.said == f"/\\t\\x03needle: line {total:,}"
        assert "NEEDLE end" in _numbered(app, total)
        (row,) = lines.reader.lines(total, total)
        text = lines.line_text(row)
        marked = lines.get_component_rich_style("loglines--match")
        (span,) = [sp for sp in text.spans if sp.style == marked]
        assert text.plain[span.start : span.end].endswith("NEEDLE")
        assert text.plain[span.start : span.end].startswith(" ")  # the tab, drawn


async def test_a_bad_regex_is_a_message() -> None:
    app, _ = _app(SAMPLES / "p9-c6.log")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("L", "slash", *"[gpu", "enter")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, LogPaneScreen)
        assert screen.said.startswith("/[gpu: not a regular expression")
        await pilot.press("n")
        await _settle(pilot)
        assert "nothing searched yet" in screen.said
        # what was typed is shown as typed: `[red]` is a character class, not markup
        await pilot.press("slash", *"[red]zzz", "enter")
        await _settle(pilot)
        shown = str(screen.query_one("#logpane-status", Static).render())
        assert shown.startswith("/[red]zzz: no match"), shown


async def test_colon_goes_to_a_line_and_to_a_time() -> None:
    path = SAMPLES / "p9-c6.log"
    app, model = _app(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("L", "colon", *"500", "enter")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, LogPaneScreen)
        lines = screen.query_one(LogLines)
        assert lines.cursor == 500
        assert _numbered(app, 500).startswith(" 500 ")
        # 12.5s: the first GPU_START or GPU_END at or after 12 500 ms on the log's clock
        t = model.parts
        stamps = [
            (s, int(line)) for s, line in zip(t.gpu_start, t.start_line, strict=True) if s >= 12_500
        ]
        stamps += [
            (e, int(line)) for e, line in zip(t.gpu_end, t.end_line, strict=True) if e >= 12_500
        ]
        first = min(stamps)[1]
        await pilot.press("colon", *"12.5s", "enter")
        await _settle(pilot)
        assert lines.cursor == first
        row = path.read_bytes().split(b"\n")[first - 1]
        assert row.startswith(b"TIMELINE,") and int(row.split(b",")[1]) >= 12_500
        await pilot.press("colon", *"soon", "enter")
        await _settle(pilot)
        assert screen.said.startswith(":soon: not a time")
        assert lines.cursor == first
        # `²` and `٣` are digits to str.isdigit: `²` ended the viewer (int() refused it)
        for typed in ("\u00b2", "\u0663"):
            screen.jump(typed)
            await _settle(pilot)
            assert screen.said.startswith(f":{typed}: not a time"), screen.said
            assert lines.cursor == first
        # a line number as the pane writes it (`line 1,337`) was `not a time`
        screen.jump("1,000")
        await _settle(pilot)
        assert lines.cursor == min(1000, lines.total) != first
        assert screen.said.startswith(f"line {lines.cursor:,}")
        at = lines.cursor
        for typed in ("1,00", "1,000,0"):  # not as numbers are grouped: a time or nothing
            screen.jump(typed)
            await _settle(pilot)
            assert lines.cursor == at, typed


async def test_the_gantt_follows_the_cursor_onto_a_gap_edge() -> None:
    app, model = _app(SAMPLES / "p9-c6.log")
    async with app.run_test(size=SIZE) as pilot:
        gaps = model.gaps
        k = int(np.argmax(gaps.duration))
        end_line = int(model.parts.end_line[gaps.before[k]])
        await pilot.press("L", "colon", *str(end_line), "enter")
        await _settle(pilot)
        gantt = app.gantt
        assert gantt.selected == k  # the gap that line begins is selected, and in view
        assert (
            gantt.t0 <= gaps[k].start < gaps[k].end <= gantt.t0 + gantt.timeline_width * gantt.scale
        )


async def test_a_hostile_line_is_drawn_with_no_control_character(tmp_path: Path) -> None:
    hostile = (
        "\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b[2J \x9b31m \x9d8;;x\x9c "
        "\u202eevil\u202c \u2066iso\u2069 \x00\x08\x7f end"
    )
    text = (
        "TIMELINE,1,SYNTH_START,j,partition=0\n"
        "TIMELINE,5,GPU_START,j,worker=0,partition=0\n"
        f"{hostile}\n"
        "TIMELINE,9,GPU_END,j,worker=0,partition=0,gpu_ms=4\n"
    )
    path = tmp_path / "hostile.log"
    path.write_text(text)
    builder = LogBuilder(source="hostile.log")
    builder.feed(path.read_bytes())
    app = make_app(builder.build(), LineReader(path=path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("L", "colon", "3", "enter")
        await _settle(pilot)
        lines = app.screen.query_one(LogLines)
        assert lines.cursor == 3
        segments = list(lines.render_line(2))
        drawn = "".join(s.text for s in segments)
        bad = [
            c
            for c in drawn
            if ord(c) < 0x20
            or 0x7F <= ord(c) < 0xA0
            or 0x2066 <= ord(c) <= 0x2069
            or 0x202A <= ord(c) <= 0x202E
        ]
        assert not bad, bad
        assert "red ␛]0;title␇ ␛[2J <U+009B>31m" in drawn
        assert "<U+202E>evil<U+202C>" in drawn and "␀␈␡ end" in drawn
        red = [s for s in segments if s.text.startswith("red")]
        assert red and red[0].style is not None and red[0].style.color is not None
        assert "red" in str(red[0].style.color.name) or red[0].style.color.number == 1


async def test_lines_that_cannot_be_read_are_said_in_one_line() -> None:
    model = read_log(SAMPLES / "p9-c6.log")
    app = make_app(model, LineReader(data=b""))  # a packed log that was not kept
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("L")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, LogPaneScreen)
        assert "cannot be read again" in screen.said


async def test_a_line_number_typed_after_colon_in_one_burst_goes_to_the_prompt() -> None:
    """`:` and a number typed faster than the pane answers: the prompt took the focus only
    once the keys already typed had gone to the lines (`1` `2` lost, `n`, `q` acted on)."""
    from textual import events

    path = SAMPLES / "p9-c6.log"
    app, _ = _app(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("L")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, LogPaneScreen)
        for key in ("colon", "1", "2", "enter"):
            app.post_message(events.Key(key, {"colon": ":", "enter": "\r"}.get(key, key)))
        await _settle(pilot)
        assert screen.query_one(LogLines).cursor == 12
        for key in ("slash", "G", "P", "U", "enter"):
            app.post_message(events.Key(key, {"slash": "/", "enter": "\r"}.get(key, key)))
        await _settle(pilot)
        assert screen.said.startswith("/GPU"), screen.said
        assert app.screen is screen


async def test_the_pane_of_several_logs_says_which_log_it_shows() -> None:
    """With two logs the pane's title said `the log's own lines: 1,712`: of which?"""
    from parsers.hosts import HostLines, merge

    names = ["journal-2gpu.log", "curio-mixed.log"]
    merged = merge([read_log(SAMPLES / n) for n in names], names)
    reader = HostLines(merged, [LineReader(path=SAMPLES / n) for n in names])
    app = make_app(merged.model, reader)
    seen: set[int] = set()
    async with app.run_test(size=(120, 36)) as pilot:
        for k in range(len(merged.model.gaps)):
            await pilot.press("n")
            gap = app.gantt.selected_gap
            assert gap is not None
            host = merged.model.gpu_keys[gap.gpu].host  # type: ignore[index]
            await pilot.press("L")
            await pilot.pause()
            pane = app.screen
            assert isinstance(pane, LogPaneScreen)
            title = str(pane.query_one(LogLines).border_title)
            lines = (SAMPLES / names[host]).read_bytes().count(b"\n")
            assert title == f"the log's own lines: {lines:,} · {names[host]}", (k, title)
            await pilot.press("escape")
            await pilot.pause()
            seen.add(host)
            if len(seen) == 2:
                break
    assert seen == {0, 1}
    # one log: the title as it was
    one = make_app(read_log(SAMPLES / names[0]), LineReader(path=SAMPLES / names[0]))
    async with one.run_test(size=(120, 36)) as pilot:
        await pilot.press("n", "L")
        await pilot.pause()
        title = str(one.screen.query_one(LogLines).border_title)
        assert title.startswith("the log's own lines: ") and "·" not in title


async def test_a_long_answer_to_colon_is_said_whole_at_80_columns() -> None:
    """`:abc` said `not a time: 'abc' (give 850ms, … 12:30[:05[.250]] or 2026-03-16 1…`:
    the forms a time may take, the useful part, cut on a status line of one row. The
    status wraps (up to four lines) while it says something long."""
    from parsers.timespec import FORMS

    app, _ = _app(SAMPLES / "p9-c6.log")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("L", "colon", *"abc", "enter")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, LogPaneScreen)
        status = screen.query_one("#logpane-status", Static)
        assert 1 < status.size.height <= 4
        shown = " ".join(
            "".join(seg.text for seg in status.render_line(y)).strip()
            for y in range(status.size.height)
        )
        assert FORMS.split()[-1] in shown and "…" not in shown, shown
        # a bare number is a line number in the pane: not offered as a number of ms
        assert "give a line number, or a time: 850ms" in shown and "number of ms" not in shown
        await pilot.press("colon", *"5", "enter")
        await _settle(pilot)
        assert status.size.height == 1  # the lines take the room back
