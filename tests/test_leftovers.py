"""--demo's log, --replay's copy and the stdin spool are removed however the viewer ends."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from conftest import SAMPLES
from helpers import drain, wait_for

ROOT = Path(__file__).parent.parent


def _controlling_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pty (stderr), as
    in an SSH session: /dev/tty works, and a hang-up sends SIGHUP."""
    os.setsid()
    fcntl.ioctl(2, termios.TIOCSCTTY, 0)


def _held(pid: int, folder: Path) -> list[str]:
    """The files in `folder` that process `pid` holds open, as the system names them."""
    held = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if target.startswith(f"{folder}/"):
            held.append(target)
    return held


@pytest.mark.parametrize("how", ["q", "SIGTERM", "SIGHUP", "hangup", "SIGTERM at once"])
@pytest.mark.parametrize("mode", ["demo", "replay", "stdin"])
def test_no_temporary_file_is_left_behind(tmp_path: Path, mode: str, how: str) -> None:
    spool_dir = tmp_path / "tmp"
    spool_dir.mkdir()
    master, slave = pty.openpty()
    env = {**os.environ, "TMPDIR": str(spool_dir), "TERM": "xterm-256color"}
    env.pop("TEXTUAL", None)
    log = SAMPLES / "curio-mixed.log"
    argv = {"demo": ["--demo"], "replay": [str(log), "--replay", "5"], "stdin": ["-"]}[mode]
    pipe_r, pipe_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", *argv],
        stdin=pipe_r if mode == "stdin" else slave,
        stdout=slave,
        stderr=slave,
        env=env,
        preexec_fn=_controlling_terminal,
        cwd=ROOT,
    )
    os.close(slave)
    os.close(pipe_r)
    if mode == "stdin":
        os.write(pipe_w, log.read_bytes()[:20_000])  # and the pipe stays open: still live
    out: list[bytes] = []
    threading.Thread(target=drain, args=(master, out), daemon=True).start()
    try:
        wait_for(lambda: _held(proc.pid, spool_dir), "the temporary file")
        # it has no name (a SIGKILL would leave nothing): the system says it is deleted
        assert all(t.endswith(" (deleted)") for t in _held(proc.pid, spool_dir))
        assert list(spool_dir.rglob("*.log")) == []
        if how == "SIGTERM at once":
            # the file exists, the screen may not yet: the signal must not skip the clean-up
            proc.send_signal(signal.SIGTERM)
        else:
            wait_for(lambda: b"GPU0" in b"".join(out), "the first screen")
        if mode == "replay" and how == "q":
            # the header says the log is played, not followed (it said LIVE)
            wait_for(lambda: b"REPLAY 5x" in b"".join(out), "the replay's state")
        if how == "q":
            os.write(master, b"q")
        elif how == "hangup":
            os.close(master)  # the terminal goes away: an SSH connection dropped
            master = -1
        elif how != "SIGTERM at once":
            proc.send_signal(getattr(signal, how))
        wait_for(lambda: proc.poll() is not None, "the app to end")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if master >= 0:
            os.close(master)
        os.close(pipe_w)
    assert list(spool_dir.rglob("*")) == []
    assert b"Traceback" not in b"".join(out)
