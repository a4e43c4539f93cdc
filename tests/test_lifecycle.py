"""Ending the viewer in a real terminal: keys and signals all quit and remove temporary files."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import drain, wait_for


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
        wait_for(lambda: list(tmp_path.glob("cuzk-tui-*/demo.log")), "the demo log")
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
