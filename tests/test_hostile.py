"""Hostile text through the sanitiser, the report and every viewer window: nothing reaches the
terminal raw, nothing breaks a column, the JSON stays exact, the input is never changed."""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import INJECTIONS, RAW_CONTROLS, corpus, injected_log, job_line_set
from rich.cells import cell_len

from parsers.load import read_log
from parsers.rawlines import LineReader
from parsers.sanitize import visible
from tui.app import CuzkApp, make_app
from tui.gantt import GanttView
from tui.gaprows import GapRows
from tui.inspector import styled_line
from tui.lanes import abbreviate, cells_of
from tui.screens import GapListScreen

ROOT = Path(__file__).parent.parent
MEMORY_LIMIT = 2 << 30  # a regression fails here instead of taking the machine


def _raw_controls(text: str) -> list[str]:
    return [repr(c) for c in text if ord(c) in RAW_CONTROLS]


# -- the sanitiser -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(INJECTIONS))
def test_no_character_a_terminal_acts_on_survives(name: str) -> None:
    out = visible(INJECTIONS[name])
    assert not _raw_controls(out)
    assert "\x1b" not in out and "\t" not in out and "\n" not in out
    for c in out:
        assert not 0x202A <= ord(c) <= 0x202E and not 0x2066 <= ord(c) <= 0x2069
        assert c not in "\u200b\u200c\u200d\ufeff\u2028\u2029"


def test_each_class_is_shown_as_a_visible_escape() -> None:
    assert visible("\x1b]2;t\x1b\\") == "␛]2;t␛\\"  # OSC ended by ST
    assert visible("\x1b]0;t\x07") == "␛]0;t␇"  # OSC ended by BEL
    assert visible("\x1b[2K\x1bPx\x1b_y\x1bXz\x1b^w") == "␛[2K␛Px␛_y␛Xz␛^w"  # CSI DCS APC SOS PM
    assert visible("\x9b1m") == "<U+009B>1m"  # C1 CSI
    assert visible("\x85\x9d\x9c") == "<U+0085><U+009D><U+009C>"
    assert visible("\u202e\u2066") == "<U+202E><U+2066>"  # bidi override, isolate
    assert visible("\u200b\u00ad") == "<U+200B><U+00AD>"  # zero width space, soft hyphen
    assert visible("\u2028") == "<U+2028>"
    assert visible("\x00\x7f\r\n\t") == "␀␡␍␊␉"
    assert visible("a\tb", keep_tab=True) == "a\tb"
    assert visible("\ud800") == "<U+D800>"  # a lone surrogate
    # what is safe is left alone, wide or not
    for text in ("plain-id 123", "証明ジョブ", "😀", "e\u0301", "ünïcödé", "[bold]x[/]"):
        assert visible(text) == text


def test_cutting_counts_terminal_cells() -> None:
    for text in ("証明ジョブ証明ジョブ証明ジョブ", "a😀b😀c😀d😀e😀", "e\u0301" * 30, "x" * 40):
        for width in range(0, 20):
            cut = abbreviate(text, width)
            assert cell_len(cut) <= max(width, 0)
            if cell_len(visible(text)) > width:
                assert cell_len(cut) == width  # exactly: a column stays aligned
                # a cell a wide character leaves goes after the cut, never beside its `…`
                # (`証明 …ブ` read as two words)
                shown = cut.rstrip(" ")
                assert " …" not in shown and "… " not in shown, (width, cut)
    assert abbreviate("\x1b]2;t\x07" * 5, 12).count("\x1b") == 0
    assert [c for c in cells_of("a中b") if c] == ["a", "中", "b"]
    assert len(cells_of("a中b")) == cell_len("a中b")


def test_raw_lines_keep_colour_and_nothing_else() -> None:
    line = styled_line(b"\x1b[31mred\x1b[0m \x1b]2;pwned\x07 \xe2\x80\xae \xc2\x9b2J")
    assert line.plain == "red ␛]2;pwned␇ <U+202E> <U+009B>2J"
    # SGR 31 drawn as the colour it stands for, on "red" only
    assert [(span.start, span.end, str(span.style)) for span in line.spans] == [(0, 3, "color(1)")]
    # what SGR can hide or disguise is not drawn: conceal (a log hid text in the log pane),
    # blink, reverse, strike, a background; the foreground colours and the weight are
    raw = b"\x1b[8mHIDDEN\x1b[0m \x1b[5;7;9;41mx\x1b[48;5;1;38;5;196;1my\x1b[2;38;2;1;2;3mz\x1b[m"
    line = styled_line(raw)
    assert line.plain == "HIDDEN xyz"
    assert [(span.start, span.end, str(span.style)) for span in line.spans] == [
        (8, 9, "bold color(196)"),
        (9, 10, "bold default"),  # #010203 is the default colour: black on black; no dim
    ]
    # black and white, and the colours near them, hide text on a dark or a light theme:
    # drawn in the default colour (the other extreme), every other colour as it is
    raw = b"\x1b[30ma\x1b[37mb\x1b[97mc\x1b[38;5;16md\x1b[38;5;231me\x1b[38;2;250;250;250mf"
    raw += b"\x1b[90mg\x1b[38;5;244mh\x1b[38;2;40;40;200mi\x1b[38;5mj"
    line = styled_line(raw)
    assert line.plain == "abcdefghij"
    styles = [str(span.style) for span in line.spans]
    assert styles == [*["default"] * 6, "color(8)", "color(244)", "#2828c8", "default"]
    # dim, and the darkest greys, drew text all but in the background's colour
    raw = b"\x1b[2;38;5;236mk\x1b[0m\x1b[2;90ml\x1b[0m\x1b[2;38;2;70;70;70mm\x1b[38;5;252mn"
    line = styled_line(raw)
    assert [str(span.style) for span in line.spans] == ["default", "color(8)", "default", "default"]


# -- the report, in a subprocess with a memory limit ---------------------------------------


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _report(path: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", str(path), "--report", *extra],
        capture_output=True,
        env=env,
        cwd=ROOT,
        preexec_fn=_limited,
        timeout=120,
        check=False,
    )


def _reject_constant(name: str) -> None:
    raise ValueError(f"not JSON: {name}")


def test_the_hostile_corpus_through_the_report(tmp_path: Path) -> None:
    for path in corpus(tmp_path):
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        text = _report(path)
        assert text.returncode == 0, (path.name, text.stderr[-500:])
        assert b"Traceback" not in text.stderr + text.stdout, path.name
        shown = text.stdout.decode("utf-8")  # valid UTF-8 whatever the input
        assert not _raw_controls(shown), (path.name, _raw_controls(shown)[:5])
        assert not _raw_controls(text.stderr.decode("utf-8")), path.name
        doc = _report(path, "--json")
        assert doc.returncode == 0, (path.name, doc.stderr[-500:])
        assert doc.stdout.isascii()  # every non-ASCII character travels as an escape
        json.loads(doc.stdout, parse_constant=_reject_constant)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before, path.name


def test_the_json_report_keeps_job_ids_exact(tmp_path: Path) -> None:
    log = tmp_path / "injected.log"
    log.write_bytes(injected_log())
    doc = json.loads(_report(log, "--json").stdout)
    jobs = {p["job"] for p in doc["proofs"]}
    for k, payload in enumerate(INJECTIONS.values()):
        assert f"job-{k}-{payload}" in jobs


def test_the_utf16_log_says_so(tmp_path: Path) -> None:
    log = tmp_path / "u.log"
    log.write_bytes(injected_log().decode().encode("utf-16"))
    out = _report(log)
    assert out.returncode == 0
    assert (
        out.stderr == b"cuzk-tui: this file is UTF-16: convert it with iconv -f UTF-16 -t UTF-8\n"
    )


def test_a_file_name_that_injects_is_shown_escaped(tmp_path: Path) -> None:
    missing = tmp_path / "x\x1b]2;pwned\x07\u202e"
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", str(missing), "--report"],
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 2
    assert b"\x1b" not in out.stderr and b"\x07" not in out.stderr
    assert "␛]2;pwned␇<U+202E>" in out.stderr.decode()


# -- every viewer window -------------------------------------------------------------------


def _hostile_app(tmp_path: Path) -> CuzkApp:
    log = tmp_path / "evil-\x1b]2;pwned\x07-\u202e.log"
    cjk = job_line_set("証明ジョブ-" * 6, 100_000) + job_line_set("😀" * 40, 100_400, worker=1)
    log.write_bytes(injected_log() + cjk)
    return make_app(read_log(log), LineReader(path=log))


def _screen_text(app: CuzkApp) -> str:
    """What the screen shows: the screenshot's text, its SVG tags and entities undone."""
    svg = app.export_screenshot()
    body = svg[svg.index("<g class") :]  # after the style sheet
    return html.unescape(re.sub(r"<[^>]+>", "", body)).replace("\xa0", " ")


async def test_no_window_of_the_viewer_shows_a_raw_control(tmp_path: Path) -> None:
    app = _hostile_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        seen = [_screen_text(app)]
        assert "evil-␛]2;pwned␇-<U+202E>.log" in seen[0]  # the header names the file, escaped
        gantt = app.query_one(GanttView)
        for y in range(gantt.size.height):  # wide ids never push a lane past its width
            assert gantt.render_line(y).cell_length == gantt.size.width
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, GapListScreen)
        assert app.screen.query_one(GapRows).row_count > 0
        seen.append(_screen_text(app))
        await pilot.press("enter")  # jump to the longest gap
        await pilot.press("enter")  # inspect it
        await pilot.pause()
        seen.append(_screen_text(app))
        await pilot.press("escape", "slash", *"job-1", "enter")
        await pilot.pause()
        seen.append(_screen_text(app))
        await pilot.press("escape", "slash", "x", "\x1b", "enter")
        await pilot.pause()
        seen.append(_screen_text(app))
        app.notify("\x1b]52;c;eA==\x07 [bold]x", title="\u202e")
        await pilot.pause()
        seen.append(_screen_text(app))
        for n, text in enumerate(seen):
            assert not _raw_controls(text), (n, _raw_controls(text)[:5])
            assert "\u202e" not in text and "\u2066" not in text
        assert any("␛]2;pwned" in text for text in seen[1:4])  # job ids are shown, escaped


def test_ticks_are_bounded_whatever_the_span_and_scale() -> None:
    from tui.axis import ticks

    for t0, scale, width in [(1e19, 17.0, 110), (2.0**63, 0.05, 200), (-1e300, 1e-300, 80)]:
        out = ticks(t0, scale, width)
        assert len(out) <= width // 12 + 2
        assert [cell for cell, _, _ in out] == sorted({cell for cell, _, _ in out})
    assert ticks(0.0, float("nan"), 80) == [] and ticks(float("inf"), 1.0, 80) == []


@pytest.mark.parametrize("stamp", [10**19, 9_223_372_036_854_775_000, 900_000_000_000])
async def test_huge_stamps_open_and_zoom_to_the_floor(tmp_path: Path, stamp: int) -> None:
    log = tmp_path / "huge.log"
    log.write_bytes(job_line_set("a", stamp) + job_line_set("b", stamp + 10**9))
    model = read_log(log)
    # outside the plausible range (about 31 years of offsets) a line is malformed, skipped
    assert bool(model.gpus) == (stamp < 10**12)
    assert model.counts.malformed == (0 if stamp < 10**12 else model.counts.total)
    app = make_app(model, LineReader(path=log))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        gantt = app.query_one(GanttView)
        await pilot.press(*["plus"] * 45)  # past the floor
        assert gantt.scale == gantt.min_scale
        await pilot.press("n", "enter", "escape", *["minus"] * 3, "right", "0")
        assert app.return_code is None and gantt.scale == gantt.max_scale


@pytest.mark.parametrize("extra", ["--report", ""])
def test_a_closed_standard_input_is_one_line(extra: str) -> None:
    proc = subprocess.run(
        f"{sys.executable} -m tui.cli - {extra} <&-",
        shell=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "cuzk-tui: error: standard input is closed: nothing to read (give a log file)\n"
    )


def test_symlink_loops_and_dangling_symlinks_say_so(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    for name, said in (("a", "symlink loop: "), ("dangling", "no such file: ")):
        proc = subprocess.run(
            [sys.executable, "-m", "tui.cli", str(tmp_path / name), "--report"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert proc.returncode == 2
        assert proc.stderr.startswith(f"cuzk-tui: error: {said}"), proc.stderr
        assert len(proc.stderr.splitlines()) == 1


async def test_the_viewer_says_a_log_is_utf16(tmp_path: Path) -> None:
    from parsers.sources import UTF16_HINT, file_hint

    log = tmp_path / "u.log"
    log.write_bytes(injected_log().decode().encode("utf-16"))
    app = make_app(read_log(log), LineReader(path=log))
    app.encoding_hint = file_hint(log)  # as run_app does for a file
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.query_one(GanttView).empty_message == UTF16_HINT
