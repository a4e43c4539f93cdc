"""Compressed logs (gzip, zstd, bzip2, xz) read like the plain log, a copy cut short or corrupt
is said in one line, and an encoding the parser cannot read is named (UTF-16, UTF-32)."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys
import tempfile
import threading
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard
from conftest import SAMPLES
from test_viewer import SIZE, live_app, text_of, until_finished

from parsers.load import model_of_bytes
from parsers.sources import MAGICS, UTF16_HINT, UTF32_HINT, open_log, stdin_hint, utf16_hint
from tui.follow import StreamSource
from tui.gantt import GanttView

ROOT = Path(__file__).parent.parent
PLAIN = SAMPLES / "curio-mixed.log"
COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gz": gzip.compress,
    "zst": zstandard.ZstdCompressor().compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def compressed(tmp_path: Path, suffix: str, cut: int = 0) -> Path:
    """The plain sample compressed, its last `cut` bytes dropped (a copy cut short)."""
    path = tmp_path / f"daemon.log.{suffix}"
    data = COMPRESSORS[suffix](PLAIN.read_bytes())
    path.write_bytes(data[: len(data) - cut])
    return path


def json_report(path: Path) -> dict[str, object]:
    proc = run(str(path), "--report", "--json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    doc.pop("source")
    return doc


@pytest.mark.parametrize("suffix", ["bz2", "xz"])
def test_bzip2_and_xz_logs_read_like_the_plain_log(tmp_path: Path, suffix: str) -> None:
    assert json_report(compressed(tmp_path, suffix)) == json_report(PLAIN)


def test_a_zstd_log_of_several_frames_is_read_to_its_end(tmp_path: Path) -> None:
    lines = PLAIN.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    compress = zstandard.ZstdCompressor().compress
    path = tmp_path / "two-frames.log.zst"  # as `cat a.zst b.zst`
    path.write_bytes(compress(b"".join(lines[:half])) + compress(b"".join(lines[half:])))
    assert json_report(path) == json_report(PLAIN)


def test_a_gzip_log_of_several_members_is_read_to_its_end(tmp_path: Path) -> None:
    lines = PLAIN.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    path = tmp_path / "two-members.log.gz"  # as `cat a.gz b.gz`, NUL padding after each
    path.write_bytes(
        gzip.compress(b"".join(lines[:half])) + bytes(9) + gzip.compress(b"".join(lines[half:]))
    )
    assert json_report(path) == json_report(PLAIN)


def test_trailing_garbage_after_a_gzip_log_is_ignored_and_said(tmp_path: Path) -> None:
    """As `gzip -d` reads it ("decompression OK, trailing garbage ignored"): the gzip module
    refused the whole file (`Not a gzipped file (b'ga')`, status 2)."""
    path = tmp_path / "rotated.log.gz"
    path.write_bytes(gzip.compress(PLAIN.read_bytes()) + b"garbage after the data\n")
    note = "cuzk-tui: rotated.log.gz: trailing garbage after its gzip data ignored"
    for args in (["--report"], ["--report", "--json"], ["--export-csv", str(tmp_path / "d")]):
        proc = run(str(path), *args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.splitlines()[0].startswith(note), proc.stderr
    plain = run(str(PLAIN), "--report", "--json")
    doc = json.loads(run(str(path), "--report", "--json").stdout)
    assert doc.pop("source") == path.name
    assert doc == {k: v for k, v in json.loads(plain.stdout).items() if k != "source"}


def test_the_trailing_garbage_note_is_said_safely_and_never_stops_the_work(
    tmp_path: Path,
) -> None:
    """The note wrote a file name's escapes raw to the terminal; with standard error full
    it ended the JSON report (status 1, nothing on standard output) and the export before
    anything was written; --what-if said nothing of it."""
    path = tmp_path / "a\x1b]0;PWNED\x07b.log.gz"
    path.write_bytes(gzip.compress(PLAIN.read_bytes()) + b"garbage\n")
    proc = run(str(path), "--what-if", "gpu-workers=2")
    assert proc.returncode == 0 and "trailing garbage" in proc.stderr, proc.stderr
    for args in (["--report"], ["--what-if", "gpu-workers=2"], ["--export-csv", str(tmp_path)]):
        said = run(str(path), *args).stderr
        assert "\x1b" not in said and "\x07" not in said and "a␛]0;PWNED␇b.log.gz" in said
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "tui.cli", str(path), "--report", "--json"],
            stdout=subprocess.PIPE,
            stderr=full,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0 and json.loads(done.stdout)["gaps"]


async def test_the_viewer_says_trailing_garbage_was_ignored(tmp_path: Path) -> None:
    path = tmp_path / "rotated.log.gz"
    path.write_bytes(gzip.compress(PLAIN.read_bytes()) + b"garbage\n")
    source = StreamSource(open_log(path), name=path.name)
    app = live_app(source, True, source.spool_path)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot)
        header = text_of(app, "#summary")
        shown = app.model
    source.close()
    assert "trailing garbage after its gzip data ignored" in header
    assert "stopped reading" not in header  # read to its end: a note, not a stop
    assert len(shown.proofs) == len(model_of_bytes(PLAIN.read_bytes(), path.name).proofs)
    # a log of no TIMELINE line says so where the lanes would be, not the note
    path.write_bytes(gzip.compress(b"hello\nworld\n") + b"garbage\n")
    source = StreamSource(open_log(path), name=path.name)
    app = live_app(source, True, source.spool_path)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot)
        await pilot.pause()
        said = app.query_one(GanttView).empty_message
        header = text_of(app, "#summary")
    source.close()
    assert "no TIMELINE" in said and "trailing garbage" in header, (said, header)


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_a_compressed_log_cut_short_is_one_line(tmp_path: Path, suffix: str) -> None:
    path = compressed(tmp_path, suffix, cut=40)
    proc = run(str(path), "--report")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith(f"cuzk-tui: error: cannot read {path}: Compressed file ended")
    assert proc.stderr.count("\n") == 1


# three bytes changed in a zstd frame with no checksum (zstandard's default) may decompress
# to other bytes, read as the lines they make: only the formats that check their data
DAMAGED = [(s, "block") for s in sorted(COMPRESSORS)] + [
    (s, "three bytes") for s in ("bz2", "gz", "xz")
]


@pytest.mark.parametrize(("suffix", "damage"), DAMAGED)
def test_a_corrupt_compressed_log_is_one_line(tmp_path: Path, suffix: str, damage: str) -> None:
    """A gzip file whose deflate data was damaged (three bytes at 100) ended every command
    but the viewer with zlib's traceback; each compression's damage is one line, status 2."""
    path = compressed(tmp_path, suffix)
    data = bytearray(path.read_bytes())
    if damage == "block":
        data[60:400] = bytes(range(256)) + bytes(84)
    else:
        data[100:103] = b"\x00\x13\xff"
    path.write_bytes(bytes(data))
    for args in (["--report"], ["--report", "--json"], ["--export-csv", str(tmp_path / "d")]):
        proc = run(str(path), *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.startswith(f"cuzk-tui: error: cannot read {path}: ")
        assert proc.stderr.count("\n") == 1


def _decodable(path: Path, suffix: str) -> bytes:
    """What of a compressed file cut short decompresses (as `zcat` writes before its error)."""
    data = path.read_bytes()
    if suffix == "gz":
        return zlib.decompressobj(31).decompress(data)
    if suffix == "xz":
        return lzma.LZMADecompressor().decompress(data)
    out: bytes = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return out


@pytest.mark.parametrize("suffix", ["zst", "gz", "xz"])
async def test_the_viewer_says_a_compressed_log_is_cut_short(tmp_path: Path, suffix: str) -> None:
    """... and shows what of it decompresses: it showed nothing of a log under a MB (the
    read that met the cut dropped what it had decompressed, all of it)."""
    path = compressed(tmp_path, suffix, cut=40)
    text = _decodable(path, suffix)
    whole = text[: text.rfind(b"\n") + 1]
    # a zstd block is decompressed whole: the sample is one, and none of it decodes
    assert (len(whole) > len(PLAIN.read_bytes()) // 2) == (suffix != "zst")
    source = StreamSource(open_log(path), name=path.name)
    app = live_app(source, True, source.spool_path)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot)
        header = text_of(app, "#summary")
        assert "FINISHED" in header
        assert f"stopped reading: cannot read {path.name}: Compressed file ended" in header
        shown = app.model
    source.close()
    want = model_of_bytes(whole, path.name)
    assert shown.counts.timeline == want.counts.timeline
    assert len(shown.proofs) == len(want.proofs)
    assert (len(want.proofs) > 0) == (suffix != "zst")


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
async def test_the_viewer_says_piped_compressed_data_is_compressed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """`cat log.gz | cuzk-tui -` showed `no TIMELINE lines` where the report says which
    compression it is: the viewer says what the report says."""
    kind = {"gz": "gzip", "zst": "zstd", "bz2": "bzip2", "xz": "xz"}[suffix]
    said, hint = await _viewer_of_a_pipe(
        tmp_path, monkeypatch, COMPRESSORS[suffix](PLAIN.read_bytes())
    )
    assert said == hint == stdin_hint(MAGICS[kind])
    assert f"standard input is {kind}-compressed" in said


async def test_the_viewer_of_a_plain_pipe_gives_no_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said, hint = await _viewer_of_a_pipe(tmp_path, monkeypatch, b"not a daemon line\n" * 50)
    assert hint is None
    assert "no TIMELINE" in said


async def _viewer_of_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> tuple[str, str | None]:
    """What the viewer of a pipe that carries `data` says in the Gantt's place once the
    pipe is closed, and its source's hint."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    read_fd, write_fd = os.pipe()
    writer = threading.Thread(target=_write_all, args=(write_fd, data), daemon=True)
    writer.start()
    source = StreamSource(read_fd)
    app = live_app(source, True, source.spool_path)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot)
        await pilot.pause()
        said = app.query_one(GanttView).empty_message
    writer.join()
    source.close()
    return said, source.encoding_hint()


def _write_all(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-le", "utf-32-be"])
def test_a_utf32_log_is_called_utf32(tmp_path: Path, encoding: str) -> None:
    log = tmp_path / "u.log"
    log.write_bytes(PLAIN.read_text().encode(encoding))
    proc = run(str(log), "--report")
    assert proc.returncode == 0
    assert proc.stderr == f"cuzk-tui: {UTF32_HINT}\n"


@pytest.mark.parametrize(
    ("encoding", "hint"),
    [("utf-16", UTF16_HINT), ("utf-16-be", UTF16_HINT), ("utf-32-le", UTF32_HINT), ("utf-8", None)],
)
def test_the_hint_names_the_encoding(encoding: str, hint: str | None) -> None:
    head = "TIMELINE,1163,SYNTH_START,j,partition=0\n".encode(encoding)[:64]
    assert utf16_hint(head) == hint


def test_compare_of_a_utf16_log_gives_the_hint(tmp_path: Path) -> None:
    log = tmp_path / "u.log"
    log.write_bytes(PLAIN.read_text().encode("utf-16"))
    proc = run("--compare", str(log), str(PLAIN), "--report")
    assert f"cuzk-tui: u.log: {UTF16_HINT}\n" in proc.stderr


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_compressed_standard_input_is_said_so(suffix: str) -> None:
    """`cat log.gz | cuzk-tui - --report` said `no TIMELINE lines: is this a cuzk daemon
    log?` of a daemon's log: standard input is read as text (a file is read compressed as
    it is). It says which compression, and how to read it, in one line and exit 2 (it
    printed a report of nothing, and exit 0)."""
    kind = {"gz": "gzip", "zst": "zstd", "bz2": "bzip2", "xz": "xz"}[suffix]
    proc = subprocess.run(
        [sys.executable, "-m", "tui.cli", "-", "--report"],
        input=COMPRESSORS[suffix](PLAIN.read_bytes()),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    said = proc.stderr.decode()
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert said == f"cuzk-tui: error: {stdin_hint(MAGICS[kind])}\n"
    assert f"standard input is {kind}-compressed: pipe it through " in said


def test_the_text_report_is_the_same_compressed_or_piped(tmp_path: Path) -> None:
    """The largest gaps' CPU path was left out of the text report of a compressed log and of
    standard input (the viewer showed it): the figures are the core's, whatever the form."""
    plain = SAMPLES / "p9-c6.log"
    want = run(str(plain), "--report").stdout.split("\n", 1)[1]
    assert want.count("CPU path printed on lines") == 10
    for suffix in sorted(COMPRESSORS):
        path = tmp_path / f"p9-c6.log.{suffix}"
        path.write_bytes(COMPRESSORS[suffix](plain.read_bytes()))
        assert run(str(path), "--report").stdout.split("\n", 1)[1] == want, suffix
    piped = subprocess.run(
        [sys.executable, "-m", "tui.cli", "-", "--report"],
        input=plain.read_bytes(),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert piped.stdout.decode().split("\n", 1)[1] == want
