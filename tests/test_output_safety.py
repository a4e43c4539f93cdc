"""What the tool writes never costs the user a file: no export over a log it reads (by path,
symlink or hard link), no half-written file after a failure, no write through a planted
symlink or into a FIFO, no literal `~` folder, no spreadsheet formula from a log's ids."""

from __future__ import annotations

import contextlib
import csv
import errno
import gzip
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest
from conftest import SAMPLES
from hostile import job_line_set

from parsers.export import CSV_FILES, csv_text, write_csv, write_trace
from parsers.load import read_log
from parsers.writing import (
    STDIN,
    OutputBatch,
    PartlyWritten,
    WriteRefused,
    atomic_output,
    check_target,
    output_path,
    write_new,
    write_text_new,
)

TINY = SAMPLES / "tiny.log"
BIG = SAMPLES / "p12-c15-gw1.log"  # its exports are tens of kB: they fill a 64 kB disk
ROOT = Path(__file__).parent.parent


def run(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: IO[bytes] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**(env or os.environ), "PYTHONPATH": str(ROOT)},
        stdin=stdin,
        preexec_fn=preexec_fn,
        timeout=120,
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def only_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "v.log"
    shutil.copy(TINY, path)
    return path


# -- an export never replaces what it reads -------------------------------------------------


def _refused(result: subprocess.CompletedProcess[str], log: Path, before: str) -> None:
    assert result.returncode == 2, result
    assert "will not write" in only_line(result.stderr)
    assert digest(log) == before


def test_an_export_over_its_own_log_is_refused(log: Path) -> None:
    before = digest(log)
    _refused(run(str(log), "--export-trace", str(log)), log, before)


def test_an_export_through_a_symlink_or_hard_link_to_the_log_is_refused(log: Path) -> None:
    before = digest(log)
    (log.parent / "sym.json").symlink_to(log.name)
    os.link(log, log.parent / "hard.json")
    _refused(run(str(log), "--export-trace", str(log.parent / "sym.json")), log, before)
    _refused(run(str(log), "--export-trace", str(log.parent / "hard.json")), log, before)
    # the log named through a symlink, the export by its real name
    (log.parent / "alias.log").symlink_to(log)
    _refused(run(str(log.parent / "alias.log"), "--export-trace", str(log)), log, before)


def test_a_csv_folder_that_holds_the_log_is_refused_before_any_file_is_written(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    log = folder / "gaps.csv"
    shutil.copy(TINY, log)
    before = digest(log)
    _refused(run(str(log), "--export-csv", str(folder)), log, before)
    assert sorted(p.name for p in folder.iterdir()) == ["gaps.csv"]  # intervals.csv not made
    # intervals.csv a symlink to the log
    log2 = tmp_path / "x.log"
    shutil.copy(TINY, log2)
    other = tmp_path / "other"
    other.mkdir()
    (other / "intervals.csv").symlink_to(log2)
    _refused(run(str(log2), "--export-csv", str(other)), log2, digest(log2))


def test_an_empty_export_name_is_refused_and_the_current_folder_kept(tmp_path: Path) -> None:
    """`--export-csv ""` (a script's unset variable) wrote the five CSV files into the
    current folder, replacing its gaps.csv; `--export-trace ""` said `is a folder:  `."""
    mine = tmp_path / "gaps.csv"
    mine.write_text("a user's own table\n")
    for option in ("--export-csv", "--export-trace", "--screenshot-dir"):
        for empty in ("", " "):
            result = run(str(TINY), option, empty, cwd=tmp_path)
            assert result.returncode == 2, result
            assert f"{option}: give a name (it is empty)" in only_line(result.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gaps.csv"]
    assert mine.read_text() == "a user's own table\n"


def test_an_output_name_that_cannot_be_used_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """`~nosuchuser/x` raised RuntimeError from expanduser, a 300-character name OSError
    from is_dir, and a folder that cannot be searched PermissionError: each printed a
    traceback and exit 1. Each is one line and exit 2, nothing written."""
    long = "a" * 300
    for option, name, said in (
        ("--export-trace", "~nosuchuser-cuzk/x.json", "no home folder for ~nosuchuser-cuzk"),
        ("--export-csv", "~nosuchuser-cuzk/csv", "no home folder for ~nosuchuser-cuzk"),
        ("--screenshot-dir", "~nosuchuser-cuzk/s", "no home folder for ~nosuchuser-cuzk"),
        ("--export-trace", f"{long}.json", "File name too long"),
        ("--export-csv", long, "File name too long"),
        ("--screenshot-dir", long, "File name too long"),
    ):
        result = run(str(TINY), option, name, cwd=tmp_path)
        assert result.returncode == 2, result
        line = only_line(result.stderr)
        assert line.startswith(f"cuzk-tui: error: {option}: ") and said in line, line
    assert list(tmp_path.iterdir()) == []


def test_an_output_folder_that_cannot_be_searched_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the last, where the folder refuses a look inside (root passes any permission, so
    the refusal is made here)."""
    from parsers.errors import OptionError
    from tui.options import options_of, parse_args

    def refused(self: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_dir", refused)
    for option in ("--export-trace", "--export-csv", "--screenshot-dir"):
        args = [str(TINY), option, str(tmp_path / "x")]
        with pytest.raises(OptionError, match=f"^{option}: cannot use .*: Permission denied$"):
            options_of(parse_args(args))


def test_a_trace_named_as_one_of_the_csv_files_is_refused(tmp_path: Path) -> None:
    """`--export-csv c5 --export-trace c5/gaps.csv` wrote the trace, then replaced it with
    the CSV, said both were written and exited 0: the trace asked for was lost."""
    folder = tmp_path / "c5"
    folder.mkdir()
    (tmp_path / "link.csv").symlink_to(folder / "proofs.csv")
    for trace in ("c5/gaps.csv", "c5/../c5/busy_split.csv", "link.csv"):
        result = run(str(TINY), "--export-csv", "c5", "--export-trace", trace, cwd=tmp_path)
        assert result.returncode == 2, result
        assert "is a file --export-csv writes" in only_line(result.stderr)
    assert list(folder.iterdir()) == []
    ok = run(str(TINY), "--export-csv", "c5", "--export-trace", "c5/trace.json", cwd=tmp_path)
    assert ok.returncode == 0 and (folder / "trace.json").is_file()


def test_compare_gzip_and_stdin_inputs_are_protected(tmp_path: Path, log: Path) -> None:
    b = tmp_path / "b.log"
    shutil.copy(TINY, b)
    before = digest(b)
    _refused(run("--compare", str(log), str(b), "--export-trace", str(b)), b, before)
    gz = tmp_path / "v.log.gz"
    gz.write_bytes(gzip.compress(TINY.read_bytes()))
    _refused(run(str(gz), "--export-trace", str(gz)), gz, digest(gz))
    with log.open("rb") as stdin:
        result = run("-", "--export-trace", str(log), stdin=stdin)
    _refused(result, log, digest(TINY))


def test_check_target_in_process(log: Path) -> None:
    with pytest.raises(WriteRefused, match="being read"):
        check_target(log, [log])
    (log.parent / "h").hardlink_to(log)
    with pytest.raises(WriteRefused, match="being read"):
        check_target(log.parent / "h", [log])
    with log.open("rb") as fh:
        saved = os.dup(0)
        try:
            os.dup2(fh.fileno(), 0)
            with pytest.raises(WriteRefused, match="standard input"):
                check_target(log, [STDIN])
        finally:
            os.dup2(saved, 0)
            os.close(saved)
    check_target(log.parent / "new.json", [log, STDIN])  # a new file: fine


# -- a failed write leaves the old file whole ------------------------------------------------


@contextlib.contextmanager
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 kB tmpfs (we are root on the project's machines)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    assert done.returncode == 0, f"cannot mount a small tmpfs: {done.stderr!r}"
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_leaves_the_previous_exports_whole(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        trace, folder = disk / "t.json", disk / "csv"
        first = run(str(TINY), "--export-trace", str(trace), "--export-csv", str(folder))
        assert first.returncode == 0, first.stderr
        before = {p.name: digest(p) for p in [trace, *folder.iterdir()]}
        for args in (["--export-trace", str(trace)], ["--export-csv", str(folder)]):
            result = run(str(BIG), *args)
            assert result.returncode == 2
            assert "No space left on device" in only_line(result.stderr)
        after = {p.name: digest(p) for p in [trace, *folder.iterdir()]}
        assert after == before  # every old file whole, and no temporary file left
        json.loads(trace.read_text())
        assert sorted(os.listdir(disk)) == ["csv", "t.json"]
        # a new folder made for an export that failed is not left
        result = run(str(BIG), "--export-csv", str(disk / "new"))
        assert result.returncode == 2 and "nothing was replaced" in only_line(result.stderr)
        assert sorted(os.listdir(disk)) == ["csv", "t.json"]


def test_a_file_size_limit_midway_leaves_the_old_trace_whole(tmp_path: Path) -> None:
    """The same promise without a mount: the kernel refuses the write past a size limit."""
    trace = tmp_path / "t.json"
    assert run(str(TINY), "--export-trace", str(trace)).returncode == 0
    before = digest(trace)

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    result = run(str(BIG), "--export-trace", str(trace), preexec_fn=limit)
    line = only_line(result.stderr)
    assert result.returncode == 2 and f"cannot write the export {trace}: " in line, line
    assert digest(trace) == before
    assert os.listdir(tmp_path) == ["t.json"]


def test_a_batch_puts_nothing_in_place_when_one_file_fails(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("old a")
    b.write_text("old b")
    with pytest.raises(OSError, match="disk full"), OutputBatch() as batch:
        with batch.open(a) as fh:
            fh.write("new a")
        with batch.open(b) as fh:
            fh.write("new")
            raise OSError(errno.ENOSPC, "disk full")
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "b.csv"]


def _five(folder: Path, batch: OutputBatch) -> list[Path]:
    """Five files written through `batch` over old ones (two of them new to the folder)."""
    paths = [folder / f"{k}.csv" for k in range(5)]
    for path in paths[:3]:
        path.write_text(f"old {path.stem}")
    for path in paths:
        with batch.open(path) as fh:
            fh.write(f"new {path.stem}")
    return paths


def _without_links(
    monkeypatch: pytest.MonkeyPatch, fails: Callable[[int], bool], error: OSError
) -> None:
    """A file system without hard links, whose k-th rename (from 1) fails where `fails(k)`."""

    def no_links(*_: object, **__: object) -> None:
        raise OSError(errno.EPERM, "no hard links")

    replace = os.replace
    calls: list[str] = []

    def renamed(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        calls.append(str(dst))
        if fails(len(calls)):
            raise error
        replace(src, dst)

    monkeypatch.setattr(os, "link", no_links)
    monkeypatch.setattr(os, "replace", renamed)


@pytest.mark.parametrize("failure", [OSError(errno.EPERM, "not permitted"), KeyboardInterrupt()])
def test_a_target_that_cannot_be_replaced_puts_the_others_back(
    failure: BaseException, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files of a batch went into place one by one: the third refused (an immutable
    file, a bind mount) or an interrupt there left the first two new, the rest old, and the
    error said nothing was replaced. All are put back as they were now, and no hidden file
    is left beside them."""
    replace = os.replace
    calls: list[str] = []

    def third_fails(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        calls.append(str(dst))
        if len(calls) == 3:
            raise failure
        replace(src, dst)

    batch = OutputBatch()
    paths = _five(tmp_path, batch)
    monkeypatch.setattr(os, "replace", third_fails)
    with pytest.raises(type(failure)):
        batch.commit()
    assert [p.read_text() if p.exists() else None for p in paths] == [
        "old 0",
        "old 1",
        "old 2",
        None,
        None,
    ]
    assert sorted(os.listdir(tmp_path)) == ["0.csv", "1.csv", "2.csv"]


def test_a_file_system_without_hard_links_still_swaps_all_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the old file cannot be kept by a hard link it is moved aside, and put back
    when a later target fails."""
    batch = OutputBatch()
    paths = _five(tmp_path, batch)
    replace = os.replace
    _without_links(monkeypatch, lambda k: k == 4, OSError(errno.EBUSY, "busy"))
    with pytest.raises(OSError, match="busy"):
        batch.commit()
    assert [p.read_text() if p.exists() else None for p in paths[:3]] == ["old 0", "old 1", "old 2"]
    assert sorted(os.listdir(tmp_path)) == ["0.csv", "1.csv", "2.csv"]
    monkeypatch.setattr(os, "replace", replace)
    batch = OutputBatch()
    paths = _five(tmp_path, batch)
    batch.commit()
    assert [p.read_text() for p in paths] == [f"new {k}" for k in range(5)]
    assert sorted(os.listdir(tmp_path)) == [f"{k}.csv" for k in range(5)]


@pytest.mark.parametrize("to", ["process", "another thread"])
def test_a_signal_during_the_swap_acts_once_every_file_is_in_place(
    to: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM between two renames left a mix of new and old files: it waits for the swap.
    Blocked on this thread only, it went to another (numpy's, a reader's), and its handler
    ran here all the same, mid-swap."""
    seen: list[list[str]] = []

    def handler(signum: int, frame: object) -> None:
        seen.append([p.read_text() for p in paths])
        raise KeyboardInterrupt

    replace = os.replace
    idle = threading.Event()
    other = threading.Thread(target=idle.wait, daemon=True)
    other.start()

    def signalled(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        replace(src, dst)
        if to == "process":
            os.kill(os.getpid(), signal.SIGTERM)  # after the first rename
        else:
            assert other.ident is not None
            signal.pthread_kill(other.ident, signal.SIGTERM)

    batch = OutputBatch()
    paths = _five(tmp_path, batch)
    before = signal.signal(signal.SIGTERM, handler)
    try:
        monkeypatch.setattr(os, "replace", signalled)
        with pytest.raises(KeyboardInterrupt):
            batch.commit()
    finally:
        signal.signal(signal.SIGTERM, before)
        idle.set()
    assert seen[:1] == [[f"new {k}" for k in range(5)]]


def test_an_old_file_that_cannot_be_put_back_is_kept_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without hard links each old file is moved aside; a failure that then kept one from
    being put back removed it with the rest: the user's file was gone. It stays, under its
    hidden name, and the error says where."""

    batch = OutputBatch()
    paths = _five(tmp_path, batch)
    # the third file's rename fails, then every put-back
    _without_links(monkeypatch, lambda k: k > 2, OSError(errno.EIO, "input/output error"))
    with pytest.raises(PartlyWritten) as caught:
        batch.commit()
    kept = dict(caught.value.stranded)
    assert set(kept) == set(paths[:3])  # two new over theirs, the third moved aside for it
    assert sorted(p.read_text() for p in kept.values()) == ["old 0", "old 1", "old 2"]
    assert "the old 2.csv is kept as" in str(caught.value)


def test_a_target_that_became_a_folder_is_refused_not_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target made a folder after its last check (a race) was renamed aside, to make
    room, and left hidden; it is refused, and the folder stays where it was."""
    import parsers.writing

    batch = OutputBatch()
    target = tmp_path / "a.csv"
    with batch.open(target) as fh:
        fh.write("new")
    target.mkdir()
    (target / "inside").write_text("keep")
    monkeypatch.setattr(parsers.writing, "check_target", lambda *_: None)  # checked before
    with pytest.raises(WriteRefused, match="not a regular file"):
        batch.commit()
    assert (target / "inside").read_text() == "keep"
    assert sorted(os.listdir(tmp_path)) == ["a.csv"]


def test_a_name_as_long_as_a_name_may_be_can_be_written(tmp_path: Path) -> None:
    """The temporary file beside a 250-byte name (`.NAME.XXXXXXXX.tmp`) passed the 255
    bytes a name may hold: no export to such a name could be written."""
    for length in (250, 255):
        target = tmp_path / ("a" * (length - 5) + ".json")
        with atomic_output(target) as fh:
            fh.write("new")
        with atomic_output(target) as fh:
            fh.write("newer")  # over an old one: its old file kept under a hidden name
        assert target.read_text() == "newer"
    assert len(os.listdir(tmp_path)) == 2


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text("x")
    old.chmod(0o600)
    with atomic_output(old) as fh:
        fh.write("y")
    assert old.stat().st_mode & 0o777 == 0o600 and old.read_text() == "y"
    mask = os.umask(0o027)
    try:
        with atomic_output(tmp_path / "new.json") as fh:
            fh.write("z")
    finally:
        os.umask(mask)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640


def _stalled_export(target: Path, export: str, nohup: bool = False) -> subprocess.Popen[str]:
    """`cuzk-tui BIG EXPORT TARGET` in a process of its own whose writer stalls once its
    first file is written (a slow disk, stood in for by a sleeping fsync), returned once it
    has stalled (`nohup`: SIGHUP ignored, as nohup leaves it)."""
    code = (
        "import os, signal, sys, time\n"
        # SIGINT as a terminal's ctrl+c finds it: a test run started in the background (`&`)
        # has it ignored, and the command (rightly) leaves an ignored SIGINT ignored
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        f"{'signal.signal(signal.SIGHUP, signal.SIG_IGN)' if nohup else 'pass'}\n"
        "flag = sys.argv[1] + '.started'\n"
        "def slow(fd):\n"
        "    open(flag, 'w').close()\n"
        "    time.sleep(60)\n"
        "os.fsync = slow\n"
        "from tui.cli import main\n"
        "sys.argv = ['cuzk-tui', sys.argv[2], sys.argv[3], sys.argv[1]]\n"
        "raise SystemExit(main())\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(target), str(BIG), export],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    started = Path(str(target) + ".started")
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    return proc


@pytest.mark.parametrize(
    ("sig", "export"),
    [
        (signal.SIGINT, "--export-trace"),
        (signal.SIGTERM, "--export-trace"),
        (signal.SIGHUP, "--export-csv"),
        (signal.SIGKILL, "--export-trace"),
        (signal.SIGKILL, "--export-csv"),
    ],
)
def test_ctrl_c_during_an_export_is_quiet_and_leaves_nothing(
    tmp_path: Path, sig: signal.Signals, export: str
) -> None:
    """SIGINT while the trace is being written: status 130, no traceback, the old file whole
    and no temporary file (a slow disk is stood in for by a stopped writer). SIGTERM and
    SIGHUP (a `kill`, a closed SSH session) left hundreds of MB of `.t.json.*.tmp` behind,
    with the shell's status for them; they end the export as ctrl+c does now. SIGKILL (or
    the OOM killer) cannot be caught: the file being written has no name until it is whole
    (O_TMPFILE, on the file systems that have it: this test's has)."""
    trace = tmp_path / "t.json"
    trace.write_text("{}")
    if export == "--export-csv":
        trace.unlink()
        trace.mkdir()  # the CSV folder, with an old file of its own
        (trace / "gaps.csv").write_text("{}")
    proc = _stalled_export(trace, export)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        # seen twice in full CI runs on a loaded machine, never alone: the interrupt not
        # acted on within 30 s. A second ctrl+c, as a user would press it; the figures
        # checked below are the same
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == (-sig if sig == signal.SIGKILL else 128 + sig)
    assert err == ""
    if export == "--export-csv":
        assert os.listdir(trace) == ["gaps.csv"] and (trace / "gaps.csv").read_text() == "{}"
    else:
        assert trace.read_text() == "{}"
    assert sorted(os.listdir(tmp_path)) == ["t.json", "t.json.started"]


def test_an_export_under_nohup_goes_on_after_a_hang_up(tmp_path: Path) -> None:
    """`nohup cuzk-tui LOG --export-trace t.json &`, then the SSH session closes: SIGHUP is
    ignored, as nohup set it, and the export goes on (SIGTERM still ends it cleanly)."""
    trace = tmp_path / "t.json"
    proc = _stalled_export(trace, "--export-trace", nohup=True)
    proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    assert proc.poll() is None  # still writing
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM and err == ""
    assert sorted(os.listdir(tmp_path)) == ["t.json.started"]


# -- never through a symlink, never into a FIFO, never a literal ~ ---------------------------


def test_the_palette_export_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    """A shared folder where someone planted the predictable name as a symlink to a file of
    root's: the export goes to a new name and the file is untouched."""
    secret = tmp_path / "secret"
    secret.write_text("keep me")
    secret.chmod(0o600)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "trace.json").symlink_to(secret)
    model = read_log(TINY)
    path, n = write_new(shared, "trace", ".json", lambda p: write_trace(model, p, exclusive=True))
    assert path == shared / "trace-2.json" and n > 0
    assert secret.read_text() == "keep me"
    assert (shared / "trace.json").is_symlink()
    json.loads(path.read_text())
    # a second export of the same range is a third file, not the second one overwritten
    again, _ = write_new(shared, "trace", ".json", lambda p: write_trace(model, p, exclusive=True))
    assert again == shared / "trace-3.json"


def test_an_exclusive_write_refuses_a_name_taken_meanwhile(tmp_path: Path) -> None:
    target = tmp_path / "x.svg"
    with pytest.raises(FileExistsError), atomic_output(target, exclusive=True) as fh:
        fh.write("mine")
        target.symlink_to(tmp_path / "elsewhere")  # planted while we wrote
    assert target.is_symlink() and not (tmp_path / "elsewhere").exists()
    assert os.listdir(tmp_path) == ["x.svg"]
    write_text_new(tmp_path / "y.svg", "<svg/>")
    with pytest.raises(FileExistsError):
        write_text_new(tmp_path / "y.svg", "<svg/>")


def test_a_fifo_or_a_device_as_a_target_is_refused_at_once(tmp_path: Path, log: Path) -> None:
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/null"):
        result = run(str(log), "--export-trace", target)
        assert result.returncode == 2
        assert "not a regular file" in only_line(result.stderr)
    folder = tmp_path / "csv"
    folder.mkdir()
    os.mkfifo(folder / "gaps.csv")
    result = run(str(log), "--export-csv", str(folder))
    assert result.returncode == 2 and "FIFO" in only_line(result.stderr)
    assert sorted(os.listdir(folder)) == ["gaps.csv"]


def test_an_export_writes_through_a_symlink_and_leaves_the_link(tmp_path: Path, log: Path) -> None:
    """As `>` does: the file a link names is replaced (or made), never the link itself."""
    (tmp_path / "real").mkdir()
    link = tmp_path / "t.json"
    link.symlink_to("real/t.json")  # a name that does not exist yet
    folder_link = tmp_path / "csv"
    folder_link.symlink_to("real")
    for _ in range(2):  # made, then replaced
        result = run(str(log), "--export-trace", str(link), "--export-csv", str(folder_link))
        assert result.returncode == 0, result.stderr
        assert link.is_symlink() and os.readlink(link) == "real/t.json"
        assert folder_link.is_symlink()
    doc = json.loads((tmp_path / "real" / "t.json").read_text())
    assert doc["traceEvents"]
    assert (tmp_path / "real" / "gaps.csv").read_text().startswith("rank,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["csv", "real", "t.json", "v.log"]


def test_a_link_to_a_descriptor_or_a_dash_is_refused(tmp_path: Path, log: Path) -> None:
    """`/dev/stdout` with standard output a file: renamed over, the link in /dev became a
    file (as root), and the file `>>` appended to would have lost what it held."""
    out = tmp_path / "out.txt"
    out.write_text("kept\n")
    fd_link = tmp_path / "fd.json"
    fd_link.symlink_to("/proc/self/fd/1")
    loop = tmp_path / "loop.json"
    loop.symlink_to("loop.json")
    # a CSV file that is a link, and a folder that is one, are judged before the log is read
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "gaps.csv").symlink_to("/dev/stdout")
    (tmp_path / "dangling").mkdir()
    (tmp_path / "dangling" / "gaps.csv").symlink_to(tmp_path / "nowhere" / "gaps.csv")
    (tmp_path / "proc").symlink_to("/proc")
    IN_PROC = "it is in /proc (a process's descriptors, the kernel's files), not a file"
    cases = [
        (["--export-csv", str(tmp_path / "csv")], IN_PROC),
        (["--export-csv", str(tmp_path / "proc")], IN_PROC),
        (
            ["--export-csv", str(tmp_path / "dangling")],
            f"links into no folder ({tmp_path}/nowhere)",
        ),
        (["--export-trace", str(fd_link)], IN_PROC),
        (["--export-trace", "/dev/stdout"], IN_PROC),
        (["--export-csv", "/dev/fd"], IN_PROC),
        (["--export-trace", str(loop)], "too many levels of symbolic links"),
        (["--export-trace", "-"], "--export-trace: give a file's name"),
        (["--export-csv", "-"], "--export-csv: give a folder's name"),
    ]
    for args, said in cases:
        with out.open("a") as stdout:
            result = subprocess.run(
                [sys.executable, "-m", "tui.cli", str(log), *args],
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                timeout=120,
            )
        assert result.returncode == 2, (args, result.stderr)
        assert said in only_line(result.stderr), args
        assert fd_link.is_symlink() and out.read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        *("csv", "dangling", "fd.json", "loop.json", "out.txt", "proc", "v.log")
    ]
    assert [p.name for p in (tmp_path / "csv").iterdir()] == ["gaps.csv"]


def test_a_link_another_user_made_in_a_shared_folder_is_not_followed(
    tmp_path: Path, log: Path
) -> None:
    """In a sticky world-writable folder (/tmp) another user's link `trace.json` pointing
    at the user's `precious.conf`: the export followed it (resolving links itself, past the
    kernel's protected_symlinks) and replaced the file. Refused, as the kernel refuses
    `>`; the user's own link there is written through."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    precious = tmp_path / "precious.conf"
    precious.write_text("secret\n")
    planted = shared / "trace.json"
    planted.symlink_to(precious)
    os.lchown(planted, 54321, 54321)  # another user's
    theirs = shared / "out"
    theirs.symlink_to(tmp_path)
    os.lchown(theirs, 54321, 54321)
    for args in (
        ["--export-trace", str(planted)],
        ["--export-csv", str(theirs)],
        # a folder of the path that is their link: followed by realpath, not judged
        ["--export-trace", str(theirs / "precious.conf")],
        ["--export-trace", str(theirs / "x" / ".." / "precious.conf")],
    ):
        result = run(str(log), *args)
        assert result.returncode == 2, result.stderr
        assert "a link another user made in" in only_line(result.stderr)
    assert precious.read_text() == "secret\n"
    assert not (tmp_path / "gaps.csv").exists()
    mine = shared / "mine.json"
    mine.symlink_to(tmp_path / "mine.json")
    assert run(str(log), "--export-trace", str(mine)).returncode == 0
    assert json.loads((tmp_path / "mine.json").read_text())["traceEvents"]


def test_an_export_whose_words_cannot_be_said_is_still_written(tmp_path: Path, log: Path) -> None:
    """Standard error full: the `wrote ...` line failed, and the export was said to have
    failed with `nothing was replaced` (status 1) though every file had been replaced."""
    out = tmp_path / "csv"
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "tui.cli", str(log), "--export-csv", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=full,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
    assert result.returncode == 0
    assert (out / "gaps.csv").read_text().startswith("rank,")


def test_two_csv_files_that_are_one_file_are_refused(tmp_path: Path, log: Path) -> None:
    """`gaps.csv` a link to `phases.csv` in the folder: both were written, the gaps over the
    phases, and `wrote ... phases.csv, gaps.csv` said all was well. Refused before anything
    is read; a batch refuses a file it writes once already (the palette's exports too)."""
    from parsers.writing import OutputBatch, WriteRefused

    folder = tmp_path / "csv"
    folder.mkdir()
    (folder / "phases.csv").write_text("kept\n")
    (folder / "gaps.csv").symlink_to("phases.csv")
    result = run(str(log), "--export-csv", str(folder))
    assert result.returncode == 2
    line = only_line(result.stderr)
    assert "gaps.csv: it is the same file as phases.csv" in line, line
    assert (folder / "phases.csv").read_text() == "kept\n"
    assert sorted(p.name for p in folder.iterdir()) == ["gaps.csv", "phases.csv"]
    with pytest.raises(WriteRefused, match="written once already"), OutputBatch() as batch:
        for name in ("phases.csv", "gaps.csv"):
            with batch.open(folder / name) as fh:
                fh.write(name)
    assert (folder / "phases.csv").read_text() == "kept\n"


def test_a_tilde_is_the_home_folder_and_a_deleted_working_folder_is_one_line(
    tmp_path: Path, log: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "HOME": str(home)}
    result = run(str(log), "--export-csv", "~/x", cwd=work, env=env)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(home / "x")) == sorted(CSV_FILES)
    assert os.listdir(work) == []  # no literal ./~
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.run(
        [
            "sh",
            "-c",
            f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -m tui.cli '
            f'"{log}" --export-trace t.json',
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2
    assert "current folder no longer exists" in only_line(proc.stderr)
    cwd = os.getcwd()
    spare = tmp_path / "spare"
    spare.mkdir()
    os.chdir(spare)
    try:
        spare.rmdir()
        with pytest.raises(WriteRefused, match="no longer exists"):
            output_path("relative.json")
        assert output_path("/abs/x.json") == Path("/abs/x.json")
    finally:
        os.chdir(cwd)


# -- CSV cells --------------------------------------------------------------------------------


def test_csv_cells_carry_no_formula_and_no_control(tmp_path: Path) -> None:
    hostile = [
        '=HYPERLINK("http://evil.example")',  # a job id ends at a comma: none inside
        "+cmd|' /C calc'!A0",
        "-2+3",
        "@SUM(A1)",
        "\tlead",
        "job\x1b]0;t\x07\r",
        "plain-job",
    ]
    log = tmp_path / "h.log"
    data = b"pipeline GPU worker started worker_id=0 gpu=0\n" + b"".join(
        job_line_set(job, 1000 + 1000 * k) for k, job in enumerate(hostile)
    )
    log.write_bytes(data)
    folder = tmp_path / "csv"
    write_csv(read_log(log), folder, [log])
    raw = "".join((folder / name).read_text(encoding="utf-8") for name in CSV_FILES)
    assert "\x1b" not in raw and "\x07" not in raw
    assert "\r" not in raw  # rows end in \n; a \r in a cell is shown as ␍
    jobs = set()
    for name in ("intervals.csv", "phases.csv", "proofs.csv"):
        with (folder / name).open(newline="", encoding="utf-8") as fh:
            jobs |= {row["job"] for row in csv.DictReader(fh)}
    for cell in jobs:
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    assert '\'=HYPERLINK("http://evil.example")' in jobs
    assert "'-2+3" in jobs and "plain-job" in jobs and "job␛]0;t␇␍" in jobs
    assert csv_text("a=b") == "a=b" and csv_text("-") == "'-"


def test_traces_name_the_logs_jobs_as_the_csv_does(tmp_path: Path) -> None:
    """A job id's controls reached the protobuf trace as raw bytes, and its bidi override
    both traces, where Perfetto's page drew text reordered: both name the job as the CSV
    does, every control and format character visible."""
    job = "job\x1b]52;c;cm0gLXJm\x07\u202eabc\u009b2J"
    log = tmp_path / "h.log"
    log.write_bytes(b"pipeline GPU worker started worker_id=0 gpu=0\n" + job_line_set(job, 1000))
    model = read_log(log)
    for name in ("t.json", "t.perfetto-trace"):
        out = tmp_path / name
        write_trace(model, out, inputs=[log])
        data = out.read_bytes()
        if name.endswith(".json"):  # its strings as a reader of the JSON gets them
            data = json.dumps(json.loads(data), ensure_ascii=False).encode()
            for raw in ("\x1b", "\x07", "\u202e", "\u009b"):
                assert raw.encode() not in data, (name, raw)
        # the protobuf's strings are its bytes (its lengths and numbers may be any byte)
        for raw in ("\x1b]52", "\x07\u202e", "\u202eabc", "\u009b2J"):
            assert raw.encode() not in data, (name, raw)
        assert "job␛]52;c;cm0gLXJm␇<U+202E>abc<U+009B>2J".encode() in data, name


# -- the viewer's own files ---------------------------------------------------------------------


async def test_the_viewers_exports_and_screenshots_are_new_files_each_time(tmp_path: Path) -> None:
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.commands import export_visible

    model = read_log(TINY)
    app = make_app(model, LineReader(path=TINY), screenshot_dir=tmp_path)
    app.inputs = (TINY,)
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        export_visible(app)
        (first,) = tmp_path.glob("cuzk-trace-*.json")
        assert first.name.startswith("cuzk-trace-tiny.log-")
        # the next export's name, planted as a symlink by someone else
        (tmp_path / f"{first.stem}-2.json").symlink_to(victim)
        export_visible(app)
        names = {p.name for p in tmp_path.glob("cuzk-trace-*.json")}
        assert names == {first.name, f"{first.stem}-2.json", f"{first.stem}-3.json"}
        assert victim.read_text() == "keep me"
        assert app.deliver_screenshot("shot.svg") == str(tmp_path / "shot.svg")
        assert app.deliver_screenshot("shot.svg") == str(tmp_path / "shot-2.svg")
        assert (tmp_path / "shot.svg").read_text().startswith("<svg")
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_non_utf8_file_name_exports_to_valid_utf8_csv(tmp_path: Path) -> None:
    odd = os.fsdecode(b"a\xff.log")
    shutil.copy(TINY, tmp_path / odd)
    shutil.copy(TINY, tmp_path / "b.log")
    folder = tmp_path / "csv"
    result = run(odd, "b.log", "--export-csv", str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    gpus = (folder / "gaps.csv").read_bytes().decode("utf-8")  # valid UTF-8, or this raises
    assert "a<U+DCFF>.log:GPU0" in gpus and "b.log:GPU0" in gpus


def test_an_exclusive_write_without_hard_links_claims_the_name_and_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without hard links (FAT, some FUSE): the new file is put in place by
    renaming over an exclusive claim of its name, and no temporary file is left."""

    def no_links(src: object, dst: object, **_: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    write_text_new(tmp_path / "y.svg", "<svg/>")
    assert (tmp_path / "y.svg").read_text() == "<svg/>"
    assert os.listdir(tmp_path) == ["y.svg"]
    with pytest.raises(FileExistsError):
        write_text_new(tmp_path / "y.svg", "<svg/>")

    # the file made without a name is copied under one: a disk full then leaves no empty
    # claim of the new name, and nothing else
    def full(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil, "copyfileobj", full)
    with pytest.raises(OSError, match="No space"):
        write_text_new(tmp_path / "z.svg", "<svg/>")
    assert os.listdir(tmp_path) == ["y.svg"]
    monkeypatch.undo()
    monkeypatch.setattr(os, "link", no_links)

    # the rename over the claim failing (a file system gone read-only): the empty claim
    # was left under the new name, as if written
    def refused(*_: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(OSError, match="Read-only"):
        write_text_new(tmp_path / "w.svg", "<svg/>")
    assert os.listdir(tmp_path) == ["y.svg"]


# -- the same rules for Perfetto's protobuf trace ----------------------------------------------


def test_a_perfetto_trace_over_the_log_is_refused_and_a_failure_leaves_the_old_one(
    tmp_path: Path, log: Path
) -> None:
    before = digest(log)
    (log.parent / "sym.perfetto-trace").symlink_to(log.name)
    _refused(run(str(log), "--export-trace", str(log.parent / "sym.perfetto-trace")), log, before)
    trace = tmp_path / "t.pftrace"
    assert run(str(TINY), "--export-trace", str(trace)).returncode == 0
    old = digest(trace)

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2_000, 2_000))

    result = run(str(BIG), "--export-trace", str(trace), preexec_fn=limit)
    assert result.returncode == 2 and "cannot write the export" in only_line(result.stderr)
    assert digest(trace) == old
    assert sorted(os.listdir(tmp_path)) == ["sym.perfetto-trace", "t.pftrace", "v.log"]


def test_a_name_made_of_log_names_keeps_one_underscore_for_what_it_drops() -> None:
    from parsers.writing import safe_stem

    assert safe_stem("hostA.log + hostB2.log") == "hostA.log_hostB2.log"  # was `___`
    assert safe_stem("log\x1b]2;x\x07 run 2") == "log_2_x_run_2"  # a control is no character
    assert safe_stem("证明") == "log" and safe_stem("") == "log" and safe_stem("...") == "log"
    assert safe_stem("a" * 200) == "a" * 80
    for text in ("a/b", "a\\b", "a\x00b", "a\nb", ".hidden", "x:y"):
        stem = safe_stem(text)
        assert "/" not in stem and "\\" not in stem and "\x00" not in stem
        assert not stem.startswith(".") and ":" not in stem
