"""Inputs that cannot be read as asked: standard input closed or write-only, no folder for
temporary files, options out of bounds, a file with nothing to read yet: one line, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest
from conftest import SAMPLES

from parsers import sources
from tui import cli, launch

ROOT = Path(__file__).parent.parent


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line of a failed command (exit 2, nothing on stdout, no traceback)."""
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cuzk-tui: error: "), proc.stderr
    return lines[0]


def run(args: list[str], stdin: BinaryIO | int | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


EXPORT = ["-", "--export-csv", tempfile.gettempdir()]  # nothing is written: nothing is read


@pytest.mark.parametrize("args", [["-", "--report"], ["-", "--report", "--json"], ["-"], EXPORT])
def test_a_write_only_standard_input_is_one_line(tmp_path: Path, args: list[str]) -> None:
    with (tmp_path / "out").open("wb") as write_only:  # as `cuzk-tui - 0>out`
        line = one_error_line(run(args, write_only))
    assert "standard input is open for writing only" in line


@pytest.mark.parametrize(
    ("args", "pipe"),
    [
        (["-", "--report"], "journalctl -u cuzk | cuzk-tui - --report"),
        (["-", "--report", "--json"], "journalctl -u cuzk | cuzk-tui - --report"),
        (["-", "--what-if", "gpu-workers=2"], "journalctl -u cuzk | cuzk-tui - ...)"),
        (EXPORT, "journalctl -u cuzk | cuzk-tui - ...)"),
        (["-", "--serve-metrics", "0"], "cuzk-tui - --serve-metrics"),
    ],
)
def test_standard_input_at_the_terminal_is_one_line(args: list[str], pipe: str) -> None:
    """`cuzk-tui - --report` typed at a shell: the report waited for a line, then for three
    ctrl+d (the peek at the head, the encoding's hint and the read each took one), where
    the viewer says at once that standard input is the terminal. Each mode says so now."""
    import pty

    master, slave = pty.openpty()
    try:
        line = one_error_line(run(args, slave))  # a hang is the run's timeout
    finally:
        os.close(slave)
        os.close(master)
    assert "reads the log from standard input, which is the terminal (try: " in line
    assert pipe in line


@pytest.mark.parametrize("args", [["-", "--report"], ["-"], EXPORT])
def test_a_closed_standard_input_is_one_line(args: list[str]) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, runpy; os.close(0); runpy.run_module('tui.cli', run_name='__main__')",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert "standard input is closed" in one_error_line(proc)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers-per-gpu", str(2**63)], "--workers-per-gpu: must be at most 65536"),
        (["--workers-per-gpu", str(10**30)], "--workers-per-gpu: must be at most 65536"),
        (["--replay", "1e-300"], "--replay: must be from 0.01 to 10000: 1e-300"),
        (["--replay", "inf"], "--replay: must be from 0.01 to 10000: inf"),
        (["--replay", "1e9"], "--replay: must be from 0.01 to 10000: 1e9"),
    ],
)
def test_numbers_out_of_bounds_are_one_line(args: list[str], message: str) -> None:
    line = one_error_line(run([str(SAMPLES / "tiny.log"), *args], subprocess.DEVNULL))
    assert message in line


@pytest.fixture
def no_temporary_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Every temporary file is made under a folder that does not exist."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    yield


@pytest.mark.usefixtures("no_temporary_folder")
@pytest.mark.parametrize("args", [["--demo"], ["--replay", "5", "LOG"], ["-"]])
def test_no_folder_for_temporary_files_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    read_end, write_end = os.pipe()
    os.close(write_end)
    # `-`: the piped log (the keys would come from the terminal)
    monkeypatch.setattr(launch, "_stdin_for_data", lambda: read_end)
    args = [str(SAMPLES / "tiny.log") if a == "LOG" else a for a in args]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("cuzk-tui: error: cannot make a temporary file (")
    assert err.endswith("set TMPDIR to a folder that can be written\n") and err.count("\n") == 1
    os.close(read_end)


def test_a_file_with_nothing_to_read_yet_has_no_head(monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc/kmsg: a non-blocking read returns None, not bytes."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    monkeypatch.setattr(sources, "_open_binary", lambda path: os.fdopen(os.dup(read_end), "rb"))
    assert sources.compression(Path("kmsg")) is None
    assert sources.file_hint(Path("kmsg")) is None
    os.close(read_end)
    os.close(write_end)
