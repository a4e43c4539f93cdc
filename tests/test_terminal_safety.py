"""What reaches the terminal and the clipboard, and what the terminal sends back: in a real pty,
hostile ids and names are never acted on, bad input and stop/continue never end the viewer."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import drain, wait_for
from hostile import job_line_set

from parsers.sanitize import ClipboardText, clipboard_text
from tui.ascii_glyphs import ERRORS, ascii_for
from tui.lanes import GAP_GLYPH, PHASE_GLYPHS

ROOT = Path(__file__).parent.parent
SAMPLES = Path(__file__).parent / "samples"
PASTE_JACK = "x\x1b[201~; echo PWNED > f\r"


@dataclass
class Viewer:
    """The viewer running in a pty: its process, the pty's side a user types on, its output."""

    proc: subprocess.Popen[bytes]
    master: int
    out: list[bytes] = field(default_factory=list)

    def screen(self) -> bytes:
        return b"".join(self.out)

    def wait_for_text(self, text: bytes, after: int = 0) -> None:
        wait_for(lambda: text in self.screen()[after:], f"{text!r} on the screen")

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TEXTUAL", "COLUMNS", "LINES")}
    return {**env, "TERM": "xterm-256color", **extra}


def _make_controlling() -> None:
    """In the child, in its new session: the pty on standard output becomes its terminal
    (/dev/tty), as a shell's terminal is for what it starts."""
    fcntl.ioctl(1, termios.TIOCSCTTY, 0)


def _closed_stdin() -> None:
    """In the child: the pty its terminal, its standard input closed."""
    _make_controlling()
    os.close(0)


@contextlib.contextmanager
def viewer(
    args: list[str],
    cwd: Path,
    stdin: int | None = None,
    stderr: int | None = None,
    controlling: bool = False,
    size: tuple[int, int] | None = None,
    env: dict[str, str] | None = None,
    stdin_closed: bool = False,
) -> Iterator[Viewer]:
    """`cuzk-tui ARGS` with its standard streams on a new pty (or `stdin`, `stderr`), in its
    own session; `controlling`: the pty is its terminal; `size`: the pty's (rows, columns);
    `stdin_closed`: started with its standard input closed (`<&-`; the pty its terminal)."""
    master, slave = pty.openpty()
    if size is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", *args],
        stdin=slave if stdin is None else stdin,
        stdout=slave,
        stderr=slave if stderr is None else stderr,
        env={**_env(**(env or {})), "PYTHONPATH": str(ROOT)},
        start_new_session=True,
        preexec_fn=_closed_stdin if stdin_closed else _make_controlling if controlling else None,
        cwd=cwd,
    )
    os.close(slave)
    running = Viewer(proc, master)
    threading.Thread(target=drain, args=(master, running.out), daemon=True).start()
    try:
        yield running
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)


def _clipboard_writes(screen: bytes) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(rb"\x1b\]52;c;([A-Za-z0-9+/=]*)\x07", screen)]


def test_y_copies_no_control_character_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "jack.log"
    log.write_bytes(
        b"pipeline GPU worker started worker_id=0 gpu=0\n"
        + job_line_set("before", 10)
        + job_line_set(PASTE_JACK, 2000)
    )
    with viewer([str(log)], tmp_path) as v:
        v.wait_for_text(b"GPU0")
        mark = len(v.screen())
        v.type(b"n")  # the gap before the job: its job id is the one copied
        v.wait_for_text(b"#1 GPU0", mark)
        mark = len(v.screen())
        v.type(b"y")
        wait_for(lambda: _clipboard_writes(v.screen()[mark:]), "the clipboard write")
        v.wait_for_text(b"left out", mark)
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    copied = _clipboard_writes(v.screen())
    assert copied == [b"x[201~; echo PWNED > f"]  # pasted, nothing in it runs
    assert not (tmp_path / "f").exists()
    assert "\u240a".encode() not in v.screen()  # the notice's own line break is a line break


@pytest.mark.parametrize("keys", [b"n\r", b"i"])
def test_a_tab_in_a_log_line_reaches_the_terminal_as_spaces(tmp_path: Path, keys: bytes) -> None:
    """A job id with a tab: the gap and interval inspectors' raw lines wrote the tab as it
    was (their right border went, stale cells showed through where it moved the cursor)."""
    log = tmp_path / "t.log"
    log.write_bytes(
        b"pipeline GPU worker started worker_id=0 gpu=0\n"
        + job_line_set("before", 10)
        + job_line_set("jobA\tjobB", 2000)
    )
    with viewer([str(log)], tmp_path, size=(70, 160)) as v:  # room for the raw lines
        v.wait_for_text(b"GPU0")
        mark = len(v.screen())
        v.type(keys)
        # the job named in the inspector's words, then in its raw lines
        wait_for(lambda: v.screen()[mark:].count(b"jobB") >= 3, "the raw lines of the job")
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    assert b"\t" not in v.screen()


def test_clipboard_text_keeps_only_printable_characters_and_at_most_a_kibibyte() -> None:
    clip = clipboard_text("a\x1b[201~\x9b\x7f\u202eb\u2066c\u200bd\r\n")
    assert clip == ClipboardText("a[201~bcd", removed=8, cut=False)
    long = clipboard_text("é" * 600)  # two bytes each: cut between two characters
    assert long.cut and long.text == "é" * 512 and len(long.text.encode()) == 1024
    assert clipboard_text("62878710-8d53") == ClipboardText("62878710-8d53", 0, False)


EVIL_NAMES = ["a\x1b]0;PWNED\x07", "b\nsecond line\u202e"]


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        env={**_env(**env), "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def _named(*extra: str) -> subprocess.CompletedProcess[bytes]:
    logs = [str(SAMPLES / "tiny.log"), str(SAMPLES / "p9-c6.log")]
    return _cli(*logs, "--name", EVIL_NAMES[0], "--name", EVIL_NAMES[1], *extra)


def test_host_names_reach_the_report_visible_and_the_json_exact(tmp_path: Path) -> None:
    done = _named("--report")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    hosts = [line for line in out.splitlines() if " host " in line]
    assert [h.split(": times on")[0] for h in hosts] == [
        "━━ host a␛]0;PWNED␇",
        "━━ host b␊second line<U+202E>",
    ]
    doc = json.loads(_named("--report", "--json").stdout)
    assert [h["name"] for h in doc["hosts"]] == EVIL_NAMES
    # a file name on stderr: a log without TIMELINE lines beside another
    empty = tmp_path / "x\x1b]0;PWNED\x07.log"
    empty.write_bytes(b"nothing here\n")
    said = _cli(str(empty), str(SAMPLES / "tiny.log"), "--report")
    assert b"x\xe2\x90\x9b]0;PWNED\xe2\x90\x87.log" in said.stderr
    assert b"\x1b" not in said.stderr and b"\x07" not in said.stderr


def test_host_names_reach_the_viewer_visible(tmp_path: Path) -> None:
    logs = [str(SAMPLES / "tiny.log"), str(SAMPLES / "p9-c6.log")]
    args = [*logs, "--name", EVIL_NAMES[0], "--name", EVIL_NAMES[1]]
    with viewer(args, tmp_path) as v:
        v.wait_for_text("a␛]0;PWNED␇".encode())
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    screen = v.screen()
    assert b"\x1b]0;" not in screen and "\u202e".encode() not in screen
    assert "b␊second line<U+202E>".encode() in screen


def test_input_the_parser_cannot_read_is_dropped_not_fatal(tmp_path: Path) -> None:
    with viewer([str(SAMPLES / "tiny.log")], tmp_path) as v:
        v.wait_for_text(b"GPU0")
        v.type(b"\x1b[55555555u")  # a key code past the last character: chr() raises
        v.type(b"\x1b[99999999999999999999999A")  # past a C long: OverflowError
        mark = len(v.screen())
        v.type(b"?")  # the keys still answer: the help opens (its first key: ? itself)
        v.wait_for_text(b"this help", mark)
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    assert v.proc.returncode == 0
    assert b"Traceback" not in v.screen() and b"Error" not in v.screen()


@pytest.mark.parametrize(
    ("typed", "keys"),
    [
        ("\x1b/q", ["escape", "slash", "q"]),  # the esc was lost
        ("\x1b:", ["escape", "colon"]),
        ("\x1b?", ["escape", "question_mark"]),
        ("\x1b\r", ["escape", "enter"]),
        ("\x1b ", ["escape", "space"]),
        ("\x1b1", ["escape", "1"]),  # was ¡
        ("a\x1b-", ["a", "escape", "minus"]),  # was –
        # as Textual reads them
        ("\x1bq", ["alt+q"]),  # the app splits it unless alt+q is bound
        ("\x1bb", ["ctrl+left"]),  # word left in a text box
        ("\x1b\t", ["shift+tab"]),
        ("\x1b\x7f", ["ctrl+w"]),
        ("\x1b", ["escape"]),
        ("\x1b\x1b", ["escape", "escape"]),
        ("\x1b[A", ["up"]),
        # the start of a sequence given back, as Textual does: no `escape` of its own
        ("\x1b[", ["left_square_bracket"]),
        ("\x1b[?62;c", ["left_square_bracket", "question_mark", "6", "2", "semicolon", "c"]),
        ("\x1b\\", ["backslash"]),
        ("\x1bOP", ["f1"]),
    ],
)
def test_esc_and_a_key_that_is_not_a_letter_in_one_read_are_both_keys(
    typed: str, keys: list[str]
) -> None:
    from textual import events

    from tui.terminal import tolerant_parser

    parser = tolerant_parser()
    read = [*parser.feed(typed), *parser.feed("")]
    assert [e.key for e in read if isinstance(e, events.Key)] == keys


def test_a_sequence_cut_between_two_reads_makes_no_escape() -> None:
    """A down arrow whose `ESC [` and `B` come apart (a slow link), longer than the parser
    waits: its characters are given back as keys, with no `escape` (which would close the
    window on top) before them."""
    import time

    from textual import constants, events

    from tui.terminal import tolerant_parser

    parser = tolerant_parser()
    read = list(parser.feed("\x1b["))
    time.sleep(constants.ESCAPE_DELAY + 0.1)
    read += [*parser.tick(), *parser.feed("B"), *parser.feed("")]
    keys = [e.key for e in read if isinstance(e, events.Key)]
    assert keys == ["left_square_bracket", "B"], keys


def test_esc_then_slash_in_one_read_after_the_gap_list_opens_the_find_box(tmp_path: Path) -> None:
    """`g`, then `esc / q` in one read (typed fast, or over SSH): the parser lost the `esc`,
    the `/` went to the gap list, and the `q` quit. The gap list closes, the find box opens
    and the `q` is typed in it, as when the keys come one by one."""
    with viewer([str(SAMPLES / "curio-mixed.log")], tmp_path, size=(36, 120)) as v:
        v.wait_for_text(b"GPU0")
        v.type(b"g")
        v.wait_for_text(b"longest first")
        mark = len(v.screen())
        v.type(b"\x1b/q")
        v.wait_for_text(b"find a job", mark)
        assert v.proc.poll() is None
        v.type(b"\x1b")
        v.wait_for_text(b"GPU0", mark)
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    assert v.proc.returncode == 0


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_each_stop_and_continue_leaves_one_set_of_threads_and_q_quits(tmp_path: Path) -> None:
    with viewer([str(SAMPLES / "tiny.log")], tmp_path) as v:
        v.wait_for_text(b"GPU0")
        pid = v.proc.pid
        before = _threads(pid)
        for _ in range(5):
            v.proc.send_signal(signal.SIGSTOP)
            wait_for(lambda: _state(pid) == "T", "the viewer to stop")
            mark = len(v.screen())
            v.proc.send_signal(signal.SIGCONT)
            v.wait_for_text(b"GPU0", mark)  # redrawn: the handler has run
        assert _threads(pid) == before
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    assert v.proc.returncode == 0


@pytest.mark.parametrize("logs", [["tiny.log"], ["tiny.log", "p9-c6.log"]])
def test_without_a_terminal_the_viewer_says_so_and_exits_2(tmp_path: Path, logs: list[str]) -> None:
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as o, err.open("wb") as e:
        done = subprocess.run(
            [sys.executable, "-m", "tui.cli", *(str(SAMPLES / log) for log in logs)],
            stdin=subprocess.DEVNULL,
            stdout=o,
            stderr=e,
            env={**_env(), "PYTHONPATH": str(ROOT)},
            start_new_session=True,  # no terminal, as under cron
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert err.read_text() == "cuzk-tui: error: the viewer needs a terminal; try --report\n"
    assert out.read_bytes() == b""


def test_with_stderr_to_a_file_the_viewer_draws_on_the_terminal(tmp_path: Path) -> None:
    err = tmp_path / "err"
    with err.open("wb") as e, viewer([str(SAMPLES / "tiny.log")], tmp_path, stderr=e.fileno()) as v:
        v.wait_for_text(b"GPU0")
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    assert v.proc.returncode == 0
    assert err.read_bytes() == b""
    assert b"\x1b[?1049l" in v.screen()  # the terminal given back: out of the alternate screen


def test_with_stdin_from_dev_null_the_keys_come_from_the_terminal(tmp_path: Path) -> None:
    with (
        open(os.devnull, "rb") as null,
        viewer([str(SAMPLES / "tiny.log")], tmp_path, stdin=null.fileno(), controlling=True) as v,
    ):
        v.wait_for_text(b"GPU0")
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "q to end the viewer")
    assert v.proc.returncode == 0


def test_with_stdin_closed_the_keys_come_from_the_terminal(tmp_path: Path) -> None:
    """`cuzk-tui a.log <&-` ended in a Textual traceback (`'NoneType' object has no
    attribute 'fileno'`, its driver asked the closed standard input for the keys)."""
    with viewer([str(SAMPLES / "tiny.log"), "--no-follow"], tmp_path, stdin_closed=True) as v:
        v.wait_for_text(b"GPU0")
        mark = len(v.screen())
        v.type(b"n")
        v.wait_for_text(b"#1 GPU0", mark)  # a key read
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "q to end the viewer")
    assert v.proc.returncode == 0 and b"Traceback" not in v.screen()


def test_dash_with_the_terminal_as_stdin_says_so_and_exits_2(tmp_path: Path) -> None:
    with viewer(["-"], tmp_path, controlling=True) as v:
        wait_for(lambda: v.proc.poll() is not None, "the viewer to refuse")
        wait_for(lambda: b"\n" in v.screen(), "its line")
    assert v.proc.returncode == 2
    assert v.screen().startswith(b"cuzk-tui: error: - reads the log from standard input")
    assert v.screen().count(b"\n") == 1


def test_the_terminal_size_wins_over_columns_and_lines(tmp_path: Path) -> None:
    args = [str(SAMPLES / "tiny.log")]
    with viewer(args, tmp_path, size=(30, 100), env={"COLUMNS": "40", "LINES": "10"}) as v:
        v.wait_for_text(b"\x1b[30;1H")  # the bottom row of 30 is drawn
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")


def test_a_dumb_terminal_gets_no_24_bit_colour(tmp_path: Path) -> None:
    with viewer([str(SAMPLES / "tiny.log")], tmp_path, env={"TERM": "dumb"}) as v:
        v.wait_for_text(b"GPU0")
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    assert b"38;2;" not in v.screen() and b"48;2;" not in v.screen()


def test_an_ellipsis_in_ascii_is_a_cut_inside_a_name_and_a_stop_in_prose() -> None:
    """With --ascii a name cut in the middle read as another name (`curio-m.ed.log`); drawn
    `~` everywhere, prose trailed off oddly (`searching~ line`). Inside a word it is `~`, at
    a word's end `.`, one cell either way."""
    cases = {
        "curio-m…ed.log": "curio-m~ed.log",
        "nod…:GPU2": "nod~:GPU2",
        "searching… line 12": "searching. line 12",
        "… 3 lines left out …": ". 3 lines left out .",
        "more…": "more.",
    }
    for text, drawn in cases.items():
        assert text.encode("ascii", ERRORS) == drawn.encode()


def test_the_phase_glyphs_have_distinct_ascii_stand_ins_one_cell_each() -> None:
    glyphs = [*PHASE_GLYPHS.values(), GAP_GLYPH]
    stand_ins = [ascii_for(g) for g in glyphs]
    assert len(set(stand_ins)) == len(glyphs)
    assert all(len(s) == 1 and s.isascii() and s.isprintable() for s in stand_ins)
    # the busy lane's low heights are not a phase's (`_ pre-lock` beside `busy #=___`); a
    # proof's start, end and seam each their own (`+-+` read all three alike)
    assert ascii_for("▄") not in {ascii_for(c) for c in "▁▂▃"}
    assert [ascii_for(c) for c in "┣━┫╋"] == ["[", "-", "]", "+"]
    # an arrow between two figures is `->`, as wide (the space after it taken): `>` alone
    # said `32.05 > 32.61 s/proof`; an arrow among others stays one cell
    for shown, drawn in (
        ("32.05 → 32.61 s/proof", "32.05 ->32.61 s/proof"),
        ("↑↓←→ go", "^v<> go"),
    ):
        assert shown.encode("ascii", ERRORS).decode() == drawn and len(drawn) == len(shown)
    assert [ascii_for(c) for c in "─│┴╭…≈证\u0301é"] == [
        "-",
        "|",
        "+",
        "+",
        "~",
        "~",
        "??",
        "",
        "e",
    ]


@pytest.mark.parametrize(
    "how",
    [
        ["--ascii"],
        ["PYTHONIOENCODING=ascii"],
        ["PYTHONIOENCODING=latin-1"],
        # Python's UTF-8 mode wrote UTF-8 under the C locale, control pictures and all
        ["LC_ALL=C"],
        ["LC_ALL=POSIX"],
    ],
)
def test_the_report_writes_ascii_where_the_terminal_asks_for_it(how: list[str]) -> None:
    env = dict(x.split("=", 1) for x in how if "=" in x)
    done = _cli(str(SAMPLES / "p9-c6.log"), "--report", *(x for x in how if "=" not in x), **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii() and b"\\u" not in done.stdout
    assert b"proofs 6 completed / 6 started" in done.stdout


@pytest.mark.parametrize("how", [["--ascii"], ["PYTHONIOENCODING=ascii"], ["LC_ALL=C"]])
def test_the_viewer_draws_ascii_where_the_terminal_asks_for_it(
    tmp_path: Path, how: list[str]
) -> None:
    env = dict(x.split("=", 1) for x in how if "=" in x)
    args = [str(SAMPLES / "p9-c6.log"), *(x for x in how if "=" not in x)]
    with viewer(args, tmp_path, env=env) as v:
        v.wait_for_text(b"GPU0")
        v.type(b"?")  # the help, then its end: the legend of every glyph
        v.wait_for_text(b"this help")
        v.type(b"\x1b[F")  # end
        v.wait_for_text(b"What each percentage is a share of")
        v.type(b"q")
        wait_for(lambda: v.proc.poll() is not None, "the viewer to end")
    assert v.proc.returncode == 0
    assert v.screen().isascii() and b"\\u25" not in v.screen()
