"""The command line: the report, the JSON document, errors with exit 2."""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLES, truth

from parsers.load import read_log
from tui import cli


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
    )


def test_json_report_has_the_schema_and_filters_gaps(capsys: pytest.CaptureFixture[str]) -> None:
    log = str(SAMPLES / "curio-mixed.log")
    assert cli.main([log, "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"schema", "source", "lines", "gpus", "workers", "gaps", "proofs", "summary"}
    assert doc["schema"] == 1 and doc["source"] == "curio-mixed.log"
    assert set(doc["workers"][0]["phases_ms"]) >= {
        "pre_lock",
        "lock_wait",
        "alloc",
        "kernel",
        "barrier",
        "cleanup",
    }
    every = doc["summary"]["gap_count"]
    assert every == len(truth("curio-mixed")["gaps"]) == len(doc["gaps"])
    assert cli.main([log, "--report", "--json", "--min-gap", "10000"]) == 0
    filtered = json.loads(capsys.readouterr().out)
    assert 0 < len(filtered["gaps"]) < every
    assert all(g["duration_ms"] >= 10000 for g in filtered["gaps"])
    assert filtered["summary"]["gap_count"] == every


def test_top_0_lists_no_gap_and_says_none_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    """`--top 0` printed `No gap` under a table that counts 43: it lists none, says nothing
    of there being none. Several logs: the all-hosts section too, which also says what
    became of the proofs that did not complete, as each host's section does."""
    log = str(SAMPLES / "curio-mixed.log")
    assert cli.main([log, "--report", "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert "Gaps: a GPU idle inside its span" in out
    assert "No gap" not in out and "Largest" not in out and "  1. " not in out
    logs = [log, str(SAMPLES / "journal-2gpu.log")]
    assert cli.main([*logs, "--report", "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert "No gap" not in out and "Largest" not in out and "  1. " not in out
    hosts, every = out.split("on 2 hosts", 1)
    each = [int(n) for n in re.findall(r"^not completed: (\d+) failed", hosts, re.MULTILINE)]
    assert len(each) == 2
    assert re.match(r"   span \S+\n", every), every[:40]  # the hosts' span together
    assert every.split("\n", 1)[1].lstrip("\n ").startswith(f"not completed: {sum(each)} failed")
    assert cli.main([*logs, "--report", "--top", "2"]) == 0
    assert "Largest 2 gaps of every host" in capsys.readouterr().out


def test_text_report_shows_the_honest_pair(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(SAMPLES / "p12-c15-gw1.log"), "--report", "--top", "3"]) == 0
    out = capsys.readouterr().out
    # 93.9 % of the span inside GPU intervals, 46.2 % in kernels (truth: 0.939295, 0.461692)
    assert "93.9 %" in out and "46.2 %" in out
    assert "Largest 3 gaps" in out and "  3. " in out and "  4. " not in out
    for phase in ("pre-lock", "lock wait", "alloc", "kernel", "barrier", "cleanup"):
        assert phase in out
    assert "mid-proof" in out and "boundary" in out
    assert "lines read: 2552" in out


def test_demo_report_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--demo", "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["gpus"]) == 2 and doc["summary"]["proofs_completed"] > 5
    assert doc["summary"]["unattributed_timing_lines"] <= 0.01 * doc["lines"]["cuzk_timing"]


def test_workers_per_gpu_splits_a_stderr_only_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "stderr.log"
    text = (SAMPLES / "curio-mixed.log").read_text()
    log.write_text("".join(line for line in text.splitlines(True) if "INFO" not in line))
    assert cli.main([str(log), "--report", "--json"]) == 0
    assert [g["gpu"] for g in json.loads(capsys.readouterr().out)["gpus"]] == [0]
    assert cli.main([str(log), "--report", "--json", "--workers-per-gpu", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    expected = truth("curio-mixed")
    assert [g["workers"] for g in doc["gpus"]] == [g["workers"] for g in expected["gpus"]]
    assert doc["summary"]["gap_count"] == expected["summary"]["gap_count"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/file.log", "--report"], "no such file: /no/such/file.log"),
        (["/", "--report"], "is a directory"),
        (["--report"], "no log given"),
        (["x.log", "--demo"], "not both"),
        (["x.log", "--bogus"], "unrecognized arguments: --bogus"),
        (["x.log", "--min-gap", "-3"], "must be 0 or more"),
        (["x.log", "--top", "ten"], "not a whole number"),
        (["x.log", "--workers-per-gpu", "0"], "must be 1 or more"),
        (["x.log", "--workers-per-gpu", "-3"], "must be 1 or more: -3"),
        (["x.log", "--json"], "--json goes with --report"),
        # options that did nothing where given, silently
        (["x.log", "--top", "3"], "--top goes with --report"),
        (["x.log", "--report", "--json", "--top", "3"], "the JSON lists every gap"),
        # --top with --compare --report said it goes with --report
        (["--compare", "a", "b", "--report", "--top", "3"], "not with --compare"),
        # a value that begins with a dash: argparse's `expected one argument`
        (["x.log", "--export-csv", "d", "--from", "-5s"], "not a time: '-5s'"),
        (["x.log", "--export-csv", "d", "--from", "1s", "--to", "-2"], "not a time: '-2'"),
        (["x.log", "--export-csv", "d", "--fro", "-5s"], "not a time: '-5s'"),  # shortened
        (["--compare", "a", "b", "--report", "--min-gap", "9"], "--min-gap goes with"),
        (
            ["x.log", "--min-gap", "500", "--export-csv", "d"],
            "--min-gap goes with --report of a log or",
        ),
        (["x.log", "--min-gap", "5", "--what-if", "gpu-workers=2"], "--min-gap goes with"),
        (["a.log", "b.log", "--name", "", "--name", "b"], "--name: give a name (it is empty)"),
        # --demo with --compare blamed logs that were not given
        (["--demo", "--compare", "a", "b"], "--demo shows the built-in log: not with --compare"),
        # int() and float() read other scripts' digits and underscores
        (["x.log", "--min-gap", "\u0663"], "not a whole number: '\u0663'"),
        (["x.log", "--top", "1_0"], "not a whole number: '1_0'"),
        (["x.log", "--replay", "\u0663"], "not a number: '\u0663'"),
        (["x.log", "--export-csv", "d", "--from", "\u0663s"], "not a time"),
        (["x.log", "--what-if", "gpu-workers=\u0663"], "gpu-workers=\u0663: not a whole number"),
        (["x.log", "--what-if", "gpu-speed=1_5"], "gpu-speed=1_5: not a number"),
    ],
)
def test_bad_paths_and_options_exit_2_with_one_line(args: list[str], message: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cuzk-tui: error: ") and message in lines[0]


def test_a_log_given_twice_as_hosts_is_refused(tmp_path: Path) -> None:
    """`cuzk-tui a.log a.log` counted two hosts of the same GPUs (every figure twice), and
    two logs of one --name could not be told apart; a run compared with itself still is."""
    log = SAMPLES / "tiny.log"
    (tmp_path / "link.log").symlink_to(log)
    os.link(log, tmp_path / "hard.log")
    other = SAMPLES / "p9-c6.log"
    for args, said in (
        ([str(log), str(log)], f"{log} is given twice: give each host's log once"),
        ([str(log), str(tmp_path / "link.log")], f"is the same file as {log}"),
        ([str(log), str(tmp_path / "hard.log")], f"is the same file as {log}"),
        ([str(log), str(other), "--name", "a", "--name", "a"], "--name a is given to two logs"),
    ):
        proc = run(*args, "--report")
        assert proc.returncode == 2, args
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], lines
    assert run("--compare", str(log), str(log), "--report").returncode == 0


def test_two_hosts_never_share_a_name(tmp_path: Path) -> None:
    """A restarted log is a host per run, `NAME run K`: beside a log named `a run 1` there
    were two hosts of that name, one in every table and file; a run compared with itself
    was two sides of one name in the CSV."""
    restarted = tmp_path / "restarted.log"
    restarted.write_bytes(
        (SAMPLES / "tiny.log").read_bytes() + (SAMPLES / "p12-gw2-merged.log").read_bytes()
    )
    log = SAMPLES / "tiny.log"
    proc = run(str(restarted), str(log), "--name", "a", "--name", "a run 1", "--report")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "cuzk-tui: error: two hosts are named a run 1 (a restarted log names a host per run, "
        "NAME run K): give the logs other names with --name"
    ]
    assert run(str(restarted), str(log), "--name", "a", "--name", "b", "--report").returncode == 0
    proc = run("--compare", str(log), str(log), "--name", "x", "--name", "x", "--report")
    assert proc.returncode == 2 and "--name x is given to both sides" in proc.stderr
    # one --name for the two sides was an IndexError's traceback
    for names in (["--name", "x"], ["--name", "x", "--name", "y", "--name", "z"]):
        proc = run("--compare", str(log), str(log), *names, "--report")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.startswith("cuzk-tui: error: --name given "), proc.stderr
        assert proc.stderr.count("\n") == 1
    out = tmp_path / "csv"
    assert run("--compare", str(log), str(log), "--export-csv", str(out)).returncode == 0
    with (out / "busy_split.csv").open() as f:
        gpus = [row["gpu"] for row in csv.DictReader(f)]
    assert gpus == ["tiny.log (before):GPU0", "tiny.log (after):GPU0"]
    out = tmp_path / "runs"
    side = f"{restarted}:2"
    assert run("--compare", side, side, "--export-csv", str(out)).returncode == 0
    with (out / "busy_split.csv").open() as f:
        hosts = {row["gpu"].split(":")[0] for row in csv.DictReader(f)}
    assert hosts == {"restarted.log run 2 (before)", "restarted.log run 2 (after)"}


def test_unreadable_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "secret.log"
    log.write_text("TIMELINE,1,SYNTH_START,j,partition=0\n")
    # as root every file is readable; the check is what is under test
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert cli.main([str(log), "--report"]) == 2
    assert capsys.readouterr().err == f"cuzk-tui: error: cannot read (permission denied): {log}\n"


def test_help_documents_every_option() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    for option in (
        "--demo",
        "--report",
        "--json",
        "--min-gap",
        "--top",
        "--workers-per-gpu",
        "--no-follow",
        "--replay",
    ):
        assert option in proc.stdout


def test_the_log_is_never_written(tmp_path: Path) -> None:
    log = tmp_path / "d.log"
    log.write_bytes((SAMPLES / "tiny.log").read_bytes())
    os.chmod(log, 0o444)
    before = (log.stat().st_mtime_ns, log.read_bytes())
    assert run(str(log), "--report").returncode == 0
    assert (log.stat().st_mtime_ns, log.read_bytes()) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--replay", "2"], "--replay needs a log file"),
        (["-", "--replay", "2"], "--replay needs a log file"),
        (["x.log", "--replay", "0"], "must be from 0.01 to 10000: 0"),
        (["x.log", "--replay", "fast"], "not a number"),
        (["x.log", "--replay", "2", "--no-follow"], "--no-follow reads it once"),
    ],
)
def test_bad_replay_options(args: list[str], message: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_report_from_standard_input() -> None:
    data = (SAMPLES / "tiny.log").read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "tui.cli", "-", "--report", "--json"],
        input=data,
        capture_output=True,
        check=True,
    )
    doc = json.loads(proc.stdout)
    assert doc["source"] == "stdin" and doc["summary"]["gap_count"] == 1


def test_a_fifo_is_not_a_log_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = run(str(fifo), "--report")
    assert proc.returncode == 2
    assert "not a regular file" in proc.stderr and "cuzk-tui -" in proc.stderr


def test_piped_report_prints_full_lines() -> None:
    # the reader is a pipe: no 80-column wrapping, no truncated labels
    proc = subprocess.run(
        [sys.executable, "-m", "tui.cli", str(SAMPLES / "p12-c15-gw1.log"), "--report"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "COLUMNS"},
        check=True,
    )
    out = proc.stdout
    for label in ("mid-proof", "boundary", "synthesis", "dispatch"):
        assert f"\n {label} " in out, label
    assert "…" not in out
    assert "before fa22d9f4-e974-481b-a49a-e6b6ae04e6b0  w0 p2" in out
    assert any(
        line.startswith("lines read:") and line.endswith("matched no GPU interval")
        for line in out.splitlines()
    )


@pytest.mark.parametrize(
    "logs",
    [["p12-gw2-merged.log"], ["p12-gw2-merged.log", "p9-c6.log"], ["--compare", "p9-c6.log"]],
)
def test_a_piped_report_ends_no_line_with_spaces(logs: list[str]) -> None:
    """Rich pads a table's lines to its width: in a file 37 of the report's 132 lines ended
    in spaces (8 were only spaces), a nuisance to diff and grep. Piped, they are trimmed,
    and that is all that changes."""
    args = [str(SAMPLES / x) if x.endswith(".log") else x for x in logs]
    if args[0] == "--compare":
        args.insert(1, str(SAMPLES / "p12-gw2-merged.log"))
    proc = run(*args, "--report")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) > 20
    assert not [line for line in lines if line.endswith(" ")]
    if len(logs) == 1:
        from rich.console import Console

        from parsers.rawlines import LineReader
        from tui.report import print_report

        drawn = Console(file=io.StringIO(), width=10_000)
        path = SAMPLES / logs[0]
        print_report(read_log(path), drawn, reader=LineReader(path=path))
        padded = drawn.file.getvalue().splitlines()  # type: ignore[attr-defined]
        assert sum(line.endswith(" ") for line in padded) > 10
        assert [line.rstrip(" ") for line in padded] == lines


def test_a_reader_that_leaves_a_piped_report_early_is_not_an_error() -> None:
    """`cuzk-tui LOG --report | head -2`: status 0, nothing on standard error, however soon
    the reader leaves (the lines are written in one piece, after Rich has drawn them)."""
    log = SAMPLES / "p12-gw2-merged.log"
    for _ in range(5):
        proc = subprocess.run(
            f"{sys.executable} -m tui.cli {log} --report | head -2 >/dev/null;"
            " exit ${PIPESTATUS[0]}",
            shell=True,
            executable="/bin/bash",
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert (proc.returncode, proc.stderr) == (0, "")


def test_report_to_a_full_disk_or_a_closed_stdout_is_one_line() -> None:
    """... of several logs, a comparison and a run of a restarted log (LOG:N) too, which
    ended in `AttributeError: 'NoneType' object has no attribute 'isatty'`."""
    log = str(SAMPLES / "curio-mixed.log")
    other = str(SAMPLES / "tiny.log")
    for redirect in (">/dev/full", ">&-"):
        for logs, extra in itertools.product(
            (log, f"{log} {other}", f"--compare {log} {other}", f"{log}:1"), ("", "--json")
        ):
            proc = subprocess.run(
                f"{sys.executable} -m tui.cli {logs} --report {extra} {redirect}",
                shell=True,
                capture_output=True,
                text=True,
            )
            assert proc.returncode == 1, (redirect, proc.stderr)
            assert "Traceback" not in proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            assert proc.stderr.startswith("cuzk-tui: error:")


def test_gzip_and_zstd_logs_read_like_the_plain_log(tmp_path: Path) -> None:
    import gzip

    import zstandard

    plain = SAMPLES / "curio-mixed.log"
    gz = tmp_path / "daemon.log.1.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    zst = tmp_path / "daemon.log.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    docs = []
    for path in (plain, gz, zst):
        proc = run(str(path), "--report", "--json")
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        doc = json.loads(proc.stdout)
        doc.pop("source")
        docs.append(doc)
    assert docs[0] == docs[1] == docs[2]
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gz.read_bytes()[:-50])
    proc = run(str(cut), "--report")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_file_that_is_not_a_cuzk_log_says_so(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("shopping list\neggs\nmilk\n")
    proc = run(str(text), "--report")
    assert proc.returncode == 0
    assert proc.stderr == "cuzk-tui: no TIMELINE lines: is this a cuzk daemon log?\n"
    proc = run(str(SAMPLES / "tiny.log"), "--report")
    assert proc.stderr == ""


@pytest.mark.parametrize(
    "script,args",
    [
        ("bench_core.py", ["--scales", "10000,x"]),
        ("bench_core.py", ["--runs", "0"]),
        ("bench_viewer.py", ["--cpu-seconds", "-1"]),
        ("bench_live.py", ["--ingest-mb", "0"]),
        ("bench_render.py", ["--repeats", "z"]),
        ("bench_report.py", ["--log", "/no/such/log"]),
        ("soak_follow.py", ["--rate", "nan"]),
        ("sweep_attribution.py", ["ten"]),
        ("sweep_attribution.py", ["--drop", "cpp", "--rate", "1.5"]),
        ("sweep_attribution.py", ["--drop", "stdout"]),
    ],
)
def test_a_benchmark_refuses_a_bad_option_before_any_work(script: str, args: list[str]) -> None:
    root = Path(__file__).parent.parent
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"{script}: error: ")


def test_the_demo_tells_the_story_the_readme_opens_with() -> None:
    """The TIMELINE intervals look ~90 % busy while the kernels run under half the time, and
    the run lasts a minute at the demo's 20x (time to read the README's next sentence)."""
    from tui.replay import DEMO_SPEED

    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "--demo", "--report", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    doc = json.loads(out)
    for g in doc["gpus"]:
        assert 0.88 <= g["timeline_util"] <= 0.97, g
        assert 0.42 <= g["kernel_util"] <= 0.52, g
    assert doc["summary"]["run_span_ms"] / DEMO_SPEED >= 55_000
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert "about 93 %" in readme and "about 47 %" in readme


def test_a_restarted_log_s_report_says_when_its_last_run_began(tmp_path: Path) -> None:
    """The header gave the first run's engine start under the last run's proofs and rate
    (a walkthrough read the two as one run's): it says when the last run began too."""
    from rich.console import Console

    from tui.report import print_report

    path = tmp_path / "restarted.log"
    path.write_bytes(
        (SAMPLES / "tiny.log").read_bytes() + (SAMPLES / "p12-gw2-merged.log").read_bytes()
    )
    model = read_log(path)
    alone = [read_log(SAMPLES / n) for n in ("tiny.log", "p12-gw2-merged.log")]
    assert model.run_anchors == tuple(m.wall_anchor for m in alone)
    out = io.StringIO()
    print_report(model, Console(file=out, width=200))
    first, last = (f"{m.wall_anchor:%Y-%m-%d %H:%M:%S.%f}"[:-3] for m in alone)
    said = f"\nengine started {first} UTC\nthe last run's engine started {last} UTC\n"
    assert said in out.getvalue()
    single = io.StringIO()
    print_report(alone[0], Console(file=single, width=200))
    assert f"engine started {first} UTC\n" in single.getvalue()
