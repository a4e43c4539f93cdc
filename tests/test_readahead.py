"""The report's read-ahead: the core reads a plain file on its own thread while the analysis
loads; what it reads is what feeding the file gives, and a read error reaches the caller."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

import parsers.later
import parsers.load
import parsers.readahead
import tui.cli
from cuzksim.config import random_config
from cuzksim.logs import simulate
from parsers._core import CoreError, Scanner
from parsers.builder import LogBuilder
from parsers.load import read_log
from parsers.readahead import ReadAhead
from parsers.report import report_dict

SAMPLES = sorted((Path(__file__).parent / "samples").glob("*.log"))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_a_file_read_ahead_gives_the_fed_model(path: Path) -> None:
    ahead = ReadAhead(path, None)
    model = LogBuilder(path.name, None, ahead.scanner()).build(release=True)
    assert report_dict(model) == report_dict(read_log(path))


def test_a_log_bigger_than_a_read_is_read_whole(tmp_path: Path) -> None:
    _, data = simulate(random_config(7))
    path = tmp_path / "big.log"
    with path.open("wb") as out:
        while out.tell() < 9 << 20:  # more than two of the core's 4 MB reads, cut anywhere
            out.write(data)
    scanner = ReadAhead(path).scanner()
    assert scanner.bytes_read == path.stat().st_size
    assert report_dict(LogBuilder("big.log", None, scanner).build(release=True)) == report_dict(
        read_log(path)
    )


def test_a_read_error_is_raised_in_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    try:
        with pytest.raises(OSError) as raised:
            Scanner().feed_fd(fd)
        assert raised.value.errno == errno.EISDIR
        assert raised.value.strerror == os.strerror(errno.EISDIR)
    finally:
        os.close(fd)
    log = tmp_path / "x.log"
    log.write_bytes(b"TIMELINE,1,GPU_START,j,worker=0,partition=0\n")
    # the file turns out unreadable once the reading thread reads it
    monkeypatch.setattr(parsers.readahead, "open_regular", lambda _: os.open(folder, os.O_RDONLY))
    with pytest.raises(OSError):
        ReadAhead(log).scanner()
    assert tui.cli.main([str(log), "--report", "--json"]) == 2
    assert capsys.readouterr().err == f"cuzk-tui: error: cannot read {log}: Is a directory\n"


def test_a_failure_of_the_core_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"TIMELINE,1,GPU_START,j,worker=0,partition=0\n")

    def broken(self: ReadAhead) -> Scanner:
        raise CoreError("cuzk-tui core: internal error while reading the log")

    monkeypatch.setattr(ReadAhead, "scanner", broken)
    assert tui.cli.main([str(log), "--report", "--json"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "cuzk-tui: error: cuzk-tui core: internal error while reading the log (please report it)\n"
    )


def test_a_file_that_cannot_be_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"TIMELINE,1,GPU_START,j,worker=0,partition=0\n")

    def eio(_: Path) -> str | None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(parsers.load, "compression", eio)  # its first bytes cannot be read
    assert tui.cli.main([str(log), "--report", "--json"]) == 2
    assert (
        capsys.readouterr().err == f"cuzk-tui: error: cannot read {log}: {os.strerror(errno.EIO)}\n"
    )


def test_without_a_thread_to_start_the_file_is_read_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class NoThread:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def start(self) -> None:
            raise RuntimeError("can't start new thread")

    monkeypatch.setattr(parsers.later, "threading", SimpleNamespace(Thread=NoThread))
    path = SAMPLES[0]
    model = LogBuilder(path.name, None, ReadAhead(path).scanner()).build(release=True)
    assert report_dict(model) == report_dict(read_log(path))


def test_a_log_written_while_it_is_read_is_read_as_it_was_when_the_read_began(
    tmp_path: Path,
) -> None:
    """`--report` on a log written faster than it is parsed read on past the size the file
    had, chasing the writer, and never ended. The read stops where the file ended when it
    began: what is written meanwhile is the next report's."""
    import threading

    from cuzksim.scale_logs import write_one_worker_log

    path = write_one_worker_log(tmp_path / "big.log", 60_000)
    size = path.stat().st_size
    lines = path.read_bytes().count(b"\n")
    stop = threading.Event()

    def write() -> None:  # on, until the read ends (or 200 MB: the code before chased it)
        with path.open("ab") as out:
            for _ in range(4000):
                if stop.is_set():
                    return
                out.write(b"TIMELINE,999999999,GPU_QUEUE,later,partition=0\n" * 1000)
                out.flush()

    writer = threading.Thread(target=write)
    scanner = Scanner(None)
    fd = os.open(path, os.O_RDONLY)
    writer.start()
    try:
        read = scanner.feed_fd(fd)
    finally:
        stop.set()
        writer.join()
        os.close(fd)
    scanner.finish()
    # the file as it was when the read began: no shorter than before the writer started, and
    # not what the writer went on writing
    assert size <= read < path.stat().st_size
    assert scanner.lines_read == path.read_bytes()[:read].count(b"\n") >= lines
