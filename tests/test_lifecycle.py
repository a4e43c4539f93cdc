"""Ending the viewer in a real terminal: keys and signals all quit and remove temporary files."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import pty
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES
from helpers import drain, wait_for
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

from tui.terminal import TerminalOut


@pytest.mark.parametrize("how", ["q", "ctrl+c", "SIGTERM", "SIGHUP"])
def test_the_demo_ends_cleanly_and_leaves_no_temporary_file(tmp_path: Path, how: str) -> None:
    master, slave = pty.openpty()
    env = {**os.environ, "TMPDIR": str(tmp_path), "TERM": "xterm-256color"}
    env.pop("TEXTUAL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "--demo"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,  # its own terminal session, as in a real terminal
        cwd=Path(__file__).parent.parent,
    )
    os.close(slave)
    out: list[bytes] = []
    reader = threading.Thread(target=drain, args=(master, out), daemon=True)
    reader.start()
    try:
        wait_for(lambda: b"GPU0" in b"".join(out), "the first screen")
        if how == "q":
            os.write(master, b"q")
        elif how == "ctrl+c":
            os.write(master, b"\x03")
        else:
            proc.send_signal(getattr(signal, how))
        wait_for(lambda: proc.poll() is not None, "the app to end")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)
    assert list(tmp_path.iterdir()) == []
    assert b"Traceback" not in b"".join(out)


def _local_modes(fd: int) -> int:
    return int(termios.tcgetattr(fd)[3])


def _take_terminal() -> None:
    """In the child, after its new session: its standard input, the pty, made its
    controlling terminal, as a shell's terminal is (the command sets its modes only from
    the terminal's foreground group)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@dataclass
class _InTerminal:
    """`cuzk-tui` run in a pty of its own: the process, the pty's two sides, what it wrote,
    and the terminal's modes before it ran."""

    proc: subprocess.Popen[bytes]
    master: int
    slave: int
    out: list[bytes]
    before: list[Any]

    def modes(self) -> list[Any]:
        return termios.tcgetattr(self.slave)

    def until_unechoed(self) -> None:
        """Until the command's own modes: no echo, lines still read as lines (the viewer's
        are raw)."""
        deadline = time.monotonic() + 30
        while not (
            ~_local_modes(self.slave) & termios.ECHO and _local_modes(self.slave) & termios.ICANON
        ):
            assert time.monotonic() < deadline and self.proc.poll() is None, "the echo stayed on"
            time.sleep(0.001)


@contextlib.contextmanager
def _in_terminal(*args: str, command: tuple[str, ...] = ("-m", "tui.cli")) -> Iterator[_InTerminal]:
    """`cuzk-tui ARGS` (`python COMMAND ARGS`) in a pty that is its controlling terminal,
    its output drained; ended and the pty closed after."""
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("TEXTUAL", None)
    proc = subprocess.Popen(
        [sys.executable, *command, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=_take_terminal,
        cwd=Path(__file__).parent.parent,
    )
    out: list[bytes] = []
    reader = threading.Thread(target=drain, args=(master, out), daemon=True)
    reader.start()
    try:
        yield _InTerminal(proc, master, slave, out, before)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(slave)
        reader.join(5)
        os.close(master)


@pytest.mark.parametrize(
    "logs", [["curio-mixed.log"], ["curio-mixed.log", "journal-2gpu.log"]], ids=["one", "two"]
)
def test_a_key_typed_while_the_viewer_starts_is_not_echoed(logs: list[str]) -> None:
    """A `q` typed before the viewer took the terminal was echoed onto the shell's line
    (the viewer read it all the same, and ended). The echo is off from the command's start:
    the key reaches the viewer alone, and the terminal's modes are the user's again after."""
    with _in_terminal(*(str(SAMPLES / x) for x in logs)) as term:
        term.until_unechoed()
        os.write(term.master, b"q")
        wait_for(lambda: term.proc.poll() is not None, "the viewer to end")
        assert term.proc.returncode == 0
        assert term.modes() == term.before
    shown = b"".join(term.out)
    assert b"\x1b[?1049h" in shown  # the viewer took the terminal
    assert b"q" not in shown.partition(b"\x1b[?1049h")[0]


def test_a_stopped_viewer_gives_the_shell_the_user_s_modes() -> None:
    """ctrl+z: the viewer gives the terminal back with the modes it found, which were the
    command's own (no echo) since it turned the echo off: the shell would have had none."""
    with _in_terminal("--no-follow", str(SAMPLES / "curio-mixed.log")) as term:
        wait_for(lambda: b"GPU0" in b"".join(term.out), "the first screen")
        assert not _local_modes(term.slave) & termios.ICANON  # the viewer's raw modes
        term.proc.send_signal(signal.SIGTSTP)
        wait_for(lambda: term.modes() == term.before, "the user's modes back")
        term.proc.send_signal(signal.SIGCONT)
        wait_for(lambda: not _local_modes(term.slave) & termios.ICANON, "the viewer's again")
        os.write(term.master, b"q")
        wait_for(lambda: term.proc.poll() is not None, "the viewer to end")
        assert term.modes() == term.before


def test_a_background_job_leaves_the_terminal_alone(tmp_path: Path) -> None:
    """Setting the terminal's modes from a background process group stops it (SIGTTOU):
    `cuzk-tui LOG --report > r.txt &` froze at its start. The echo is left alone there."""
    master, slave = pty.openpty()
    out = tmp_path / "said"
    code = (
        "import os, sys\n"
        "os.setsid()\n"
        "fd = os.open(os.ttyname(int(sys.argv[1])), os.O_RDWR)  # the session's terminal\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.setpgid(0, 0)  # a group of its own: in the background\n"
        "    for std in (0, 1, 2):\n"
        "        os.dup2(fd, std)\n"
        "    from tui.ttymodes import unechoed\n"
        "    modes = unechoed()\n"
        "    open(sys.argv[2], 'w').write(str(modes is None))\n"
        "    os._exit(0)\n"
        "_, status = os.waitpid(pid, os.WUNTRACED)\n"
        "if os.WIFSTOPPED(status):\n"
        "    os.kill(pid, 9)\n"
        "    os.waitpid(pid, 0)\n"
        "    raise SystemExit('stopped by signal %d' % os.WSTOPSIG(status))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(slave), str(out)],
            pass_fds=(slave,),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path(__file__).parent.parent,
        )
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "True"


# A shell's job control, in a child of its own: a session on the pty, the viewer started in
# a background group (`cuzk-tui LOG &`), then brought to the foreground (`fg`) or left when
# the shell goes (`exit`: the terminal hangs up on it). Prints the viewer's pid.
_JOB = """
import os, signal, sys, time
os.setsid()
fd = os.open(os.ttyname(int(sys.argv[1])), os.O_RDWR)  # the session's terminal
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    if sys.argv[2] == "orphan" and os.fork():  # `( cuzk-tui LOG & )`: its parent gone
        os._exit(0)
    os.setpgid(0, 0)  # a group of its own: in the background
    os.write(write, b"%d\\n" % os.getpid())
    for std in (0, 1):
        os.dup2(fd, std)
    os.dup2(os.open(sys.argv[3], os.O_WRONLY | os.O_CREAT), 2)
    os.execv(sys.executable, [sys.executable, "-m", "tui.cli", sys.argv[4], "--no-follow"])
print(int(os.read(read, 64)), flush=True)
if sys.argv[2] == "orphan":
    os.waitpid(pid, 0)
    time.sleep(60)  # the shell lives on (the test ends it), the viewer's group orphaned
_, status = os.waitpid(pid, os.WUNTRACED)
assert os.WIFSTOPPED(status), status  # in the background: stopped until `fg`
if sys.argv[2] == "fg":
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(fd, pid)
    os.kill(pid, signal.SIGCONT)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


@pytest.mark.parametrize("then", ["fg", "exit", "orphan"])
def test_a_viewer_started_in_the_background_waits_for_fg(then: str, tmp_path: Path) -> None:
    """`cuzk-tui LOG &` then `fg` came up blank and deaf (Textual gave up on the terminal
    it was stopped from); `cuzk-tui LOG &` then closing the terminal wrote three tracebacks.
    It waits, stopped, for `fg` and then runs as ever; a terminal gone meanwhile ends it
    quietly, as does a group no shell can bring to the front (`( cuzk-tui LOG & )`), which
    stopped for good."""
    master, slave = pty.openpty()
    err = tmp_path / "err"
    out: list[bytes] = []
    reader = threading.Thread(target=drain, args=(master, out), daemon=True)
    reader.start()
    shell = subprocess.Popen(
        [sys.executable, "-c", _JOB, str(slave), then, str(err), str(SAMPLES / "tiny.log")],
        pass_fds=(slave,),
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    viewer = 0
    try:
        assert shell.stdout is not None
        viewer = int(shell.stdout.readline())
        if then == "fg":
            wait_for(lambda: b"tiny.log" in b"".join(out), "the viewer drawn after fg")
            os.write(master, b"q")
            assert shell.stdout.readline().strip() == "0"
        if then == "orphan":  # it ends while the shell still runs
            wait_for(lambda: not _alive(viewer), "the orphaned viewer ended")
            assert shell.poll() is None
            shell.kill()
            return
        assert shell.wait(60) == 0
        # the shell gone: its terminal hung up on the stopped viewer, which ends
        wait_for(lambda: not _alive(viewer), "the viewer ended")
    finally:
        if shell.poll() is None:
            shell.kill()
        if viewer and _alive(viewer):  # a failure: not left stopped behind the tests
            os.kill(viewer, signal.SIGKILL)
        os.close(slave)
        reader.join(5)
        os.close(master)
    assert err.read_text() == ""


def _alive(pid: int) -> bool:
    """`pid` runs (not a zombie waiting for its parent)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_kill_as_the_viewer_starts_leaves_the_user_s_modes() -> None:
    """SIGTERM in the moment between the echo going off and the viewer's taking the
    terminal ended the process by the signal's default action, the echo left off."""
    logs = [str(SAMPLES / "curio-mixed.log"), str(SAMPLES / "journal-2gpu.log")]
    with _in_terminal(*logs) as term:
        term.until_unechoed()
        term.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: term.proc.poll() is not None, "the command to end")
        assert term.modes() == term.before
    assert b"Traceback" not in b"".join(term.out)


# the command, its terminal's echo turned off and SIGTERM (or another signal, put in its
# place) sent to itself at that very moment, before the next line of Python runs
_KILLED_AS_THE_ECHO_GOES_OFF = """
import os, signal, sys, termios
import tui.ttymodes
from tui.cli import main

class Killing:
    def __getattr__(self, name):
        return getattr(termios, name)

    def tcsetattr(self, fd, when, modes):
        termios.tcsetattr(fd, when, modes)
        if not modes[3] & termios.ECHO:
            os.kill(os.getpid(), signal.SIGTERM)

tui.ttymodes.termios = Killing()
sys.argv[0] = "cuzk-tui"
main()
"""


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["SIGTERM", "SIGHUP", "SIGINT"]
)
def test_a_kill_the_moment_the_echo_goes_off_leaves_the_user_s_modes(sig: int) -> None:
    """The signal came between the echo going off and the handler that puts it back: the
    process ended by SIGTERM's default action, or ctrl+c's KeyboardInterrupt left
    `unechoed` before it returned the modes to put back; the echo stayed off. The signals
    wait for the handler now: the command ends by the signal's status, the modes back."""
    command = _KILLED_AS_THE_ECHO_GOES_OFF.replace("SIGTERM", signal.Signals(sig).name)
    with _in_terminal(str(SAMPLES / "curio-mixed.log"), command=("-c", command)) as term:
        wait_for(lambda: term.proc.poll() is not None, "the command to end")
        assert term.proc.returncode == 128 + sig
        assert term.modes() == term.before
    assert b"Traceback" not in b"".join(term.out)


def test_a_command_that_opens_no_viewer_is_told_by_its_options() -> None:
    from tui.cli import may_open_viewer
    from tui.ttymodes import Modes

    assert may_open_viewer(["a.log"]) and may_open_viewer(["a.log", "b.log", "--name", "x"])
    assert may_open_viewer(["--", "--report"])  # a log named so
    for args in (["--report"], ["a.log", "--rep"], ["--export-csv=d"], ["-h"], ["--vers"]):
        assert not may_open_viewer(args), args
    # the modes are put back once: a pager may have set its own since
    master, slave = pty.openpty()
    try:
        before = termios.tcgetattr(slave)
        modes = Modes(slave, before)
        modes.put_back()
        changed = termios.tcgetattr(slave)
        changed[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, changed)
        modes.put_back()
        assert termios.tcgetattr(slave) == changed
    finally:
        os.close(slave)
        os.close(master)


@pytest.mark.parametrize("args", [["--version"], ["--bad"], ["--report", "curio-mixed.log"]])
def test_a_command_without_the_viewer_leaves_the_terminal_s_modes_as_they_were(
    args: list[str],
) -> None:
    argv = [str(SAMPLES / x) if x.endswith(".log") else x for x in args]
    with _in_terminal(*argv) as term:
        assert term.proc.wait(30) == (2 if args == ["--bad"] else 0)
        assert term.modes() == term.before


@contextlib.contextmanager
def _hung_up_terminal() -> Iterator[io.TextIOWrapper]:
    """The app's side of a terminal whose other side has gone (an SSH connection dropped)."""
    master, slave = pty.openpty()
    os.close(master)
    tty = open(slave, "w", encoding="utf-8", closefd=True)  # noqa: SIM115
    try:
        yield tty
    finally:
        with contextlib.suppress(OSError):  # what is still buffered cannot be written
            tty.close()


def test_writes_to_a_terminal_that_hung_up_are_dropped() -> None:
    with _hung_up_terminal() as tty:
        with pytest.raises(OSError):
            tty.write("x" * 10)
            tty.flush()
        out = TerminalOut(tty)
        assert out.write("screen") == len("screen")  # the first write fails inside
        out.flush()
        assert out.gone
        assert out.write("more") == 4


def test_the_screen_writer_does_not_block_after_a_hang_up() -> None:
    """Textual's writer thread dies on a failed write and its bounded queue then blocks the
    app for ever; through TerminalOut it keeps draining."""
    with _hung_up_terminal() as tty:
        writer = WriterThread(TerminalOut(tty))  # type: ignore[arg-type]
        writer.start()
        done = threading.Event()

        def frames() -> None:
            for _ in range(10 * MAX_QUEUED_WRITES):
                writer.write("\x1b[H" + "█" * 2000)
            writer.stop()
            done.set()

        threading.Thread(target=frames, daemon=True).start()
        assert done.wait(10), "the app would hang writing to the screen"


def test_the_exit_watchdog_cleans_up_and_ends_a_stuck_process(tmp_path: Path) -> None:
    marker = tmp_path / "cleaned"
    code = (
        "import time, tui.terminal as t\n"
        "t.EXIT_GRACE_S = 0.2\n"
        f"t.exit_watchdog(lambda: open({str(marker)!r}, 'w').close(), 129)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=Path(__file__).parent.parent, timeout=30, check=False
    )
    assert proc.returncode == 129
    assert marker.exists()


# Loading numpy's C API runs Python code. A signal's handler may raise there (SIGTERM while the
# viewer starts raises SystemExit; Ctrl-C raises KeyboardInterrupt): the core must pass that
# exception on, where rust-numpy would panic and the user see "internal error" and a traceback.
INTERRUPTED_LOAD = """
import sys
import numpy
import numpy.lib

real = numpy.lib.NumpyVersion

def interrupted(*args):
    raise {exc}

numpy.lib.NumpyVersion = interrupted
from parsers import _core

scanner = _core.Scanner()
scanner.feed(b"TIMELINE,1000,GPU_START,porep-1-1,worker=0\\n")
for what, call in [
    ("columns", scanner.columns),
    ("live rows", scanner.live_rows),
    ("some live rows", lambda: scanner.live_rows(numpy.arange(1))),
    ("analysis import", lambda: __import__("parsers.analysis")),
]:
    try:
        call()
    except {exc_name}:
        print(what, "raised as itself")
numpy.lib.NumpyVersion = real
floats, ints = scanner.columns()  # once loaded, as always
print("then", len(floats["gpu_start"]), "record")
"""


@pytest.mark.parametrize(
    "exc,name", [("SystemExit(143)", "SystemExit"), ("KeyboardInterrupt", "KeyboardInterrupt")]
)
def test_an_interrupt_while_numpy_loads_is_raised_as_itself(exc: str, name: str) -> None:
    code = INTERRUPTED_LOAD.format(exc=exc, exc_name=name)
    root = Path(__file__).parent.parent
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "columns raised as itself",
        "live rows raised as itself",
        "some live rows raised as itself",
        "analysis import raised as itself",
        "then 1 record",
    ]
    assert "panicked" not in done.stderr
