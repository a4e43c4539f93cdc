"""`cuzk-tui LOG --serve-metrics HOST:PORT`: its options, its end, and a real Prometheus
server scraping it while the log grows."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest
from conftest import SAMPLES
from helpers import wait_for

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers.builder import LogBuilder
from parsers.load import model_of_bytes
from parsers.metrics import BUSY, SPAN, figures_of
from parsers.report import report_dict
from tui.cli import main
from tui.exporter import STATES, LiveCollector
from tui.follow import InputState, Update

ROOT = Path(__file__).resolve().parent.parent
LOG = SAMPLES / "p9-c6.log"
SERVING = re.compile(rb"serving metrics on (http://\S+/metrics)")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--serve-metrics", "host:"], "not HOST:PORT"),
        (["--serve-metrics", "::1:9100"], "IPv6 address in brackets"),
        (["--serve-metrics", "h:70000"], "at most 65535"),
        (["--serve-metrics", ":9100", "--report"], "not with --report"),
        (["--serve-metrics", ":9100", "--export-csv", "out"], "not with --report"),
        (["--serve-metrics", ":9100", "--no-follow"], "follows a log"),
        (["--serve-metrics", ":9100", "--replay", "2"], "follows a log"),
        ([str(LOG), "--serve-metrics", ":9100"], "follows one log (2 given)"),
    ],
)
def test_options_that_do_not_go_with_serving_are_one_line_and_status_2(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(LOG), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_compare_and_demo_do_not_serve(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--compare", str(LOG), str(LOG), "--serve-metrics", ":9100"]) == 2
    assert main(["--demo", "--serve-metrics", ":9100"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "not with --report, --compare" in err[0] and "not with --demo" in err[1]


def test_a_port_in_use_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main([str(LOG), "--serve-metrics", f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert f"cannot serve metrics on 127.0.0.1:{port}: " in err and err.count("\n") == 1


def test_an_address_not_of_this_machine_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(LOG), "--serve-metrics", "192.0.2.1:9100"]) == 2  # TEST-NET-1
    assert "cannot serve metrics on 192.0.2.1:9100: " in capsys.readouterr().err


def test_a_compressed_log_is_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    packed = tmp_path / "cuzk.log.gz"
    packed.write_bytes(gzip.compress(LOG.read_bytes()))
    assert main([str(packed), "--serve-metrics", "127.0.0.1:0"]) == 2
    assert "a compressed log does not grow" in capsys.readouterr().err


def test_serving_imports_no_textual() -> None:
    code = (
        "import sys, tui.cli, tui.exporter\n"
        "print(','.join(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@contextmanager
def exporter(*args: str, stdin: int | IO[bytes] | None = None) -> Iterator[tuple[Any, str]]:
    """The exporter on a free port: the process and its /metrics URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", *args, "--serve-metrics", "127.0.0.1:0"],
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(),
        cwd=ROOT,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        found = SERVING.search(first)
        assert found, first
        yield proc, found.group(1).decode()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        text: str = response.read().decode()
        return text


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_a_signal_ends_it_cleanly(sig: signal.Signals, status: int, tmp_path: Path) -> None:
    log = tmp_path / "cuzk.log"
    log.write_bytes(LOG.read_bytes())
    with exporter(str(log), "--name", "rig") as (proc, url):
        wait_for(lambda: "cuzk_gpu_kernel_utilization{" in fetch(url), "the first model")
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == status
        rest = proc.stderr.read().decode()
    assert "Traceback" not in rest and rest == "", rest


def test_a_name_with_controls_or_bytes_not_utf8_is_a_label_shown_safely(tmp_path: Path) -> None:
    """--name with bytes that are not UTF-8 answered every scrape with a 500 and printed a
    traceback per scrape; ESC, BEL and bidi characters reached the label raw. The label
    shows them as pictures, and the scrape is whole."""
    log = tmp_path / "cuzk.log"
    log.write_bytes(LOG.read_bytes())
    name = os.fsdecode(b"rig\xff\x1b]52;c;YQ==\x07\xe2\x80\xae")  # as argv gives it
    with exporter(str(log), "--name", name) as (proc, url):
        wait_for(lambda: "cuzk_gpu_kernel_utilization{" in fetch(url), "the first model")
        text = fetch(url)
        assert 'host="rig<U+DCFF>␛]52;c;YQ==␇<U+202E>"' in text
        assert all(c.isprintable() or c == "\n" for c in text)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        rest = proc.stderr.read().decode()
    assert rest == "", rest


def test_idle_connections_are_dropped_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each connection that sent nothing held a thread for ever (200 held 206 threads, and
    650 slowed the server to refusing connections). A client idle for the request timeout
    is dropped, and past MAX_CONNECTIONS at once a new one is closed at once, while a
    scrape after them is answered."""
    from prometheus_client import CollectorRegistry

    from tui import exporter

    monkeypatch.setattr(exporter.ScrapeHandler, "timeout", 0.5)
    monkeypatch.setattr(exporter.ScrapeHandler, "deadline_s", 1.5)
    monkeypatch.setattr(exporter, "MAX_CONNECTIONS", 3)
    said = io.StringIO()
    monkeypatch.setattr(sys, "stderr", said)
    server = exporter.bind(("127.0.0.1", 0), CollectorRegistry())
    try:
        url = exporter.url_of(server)
        port = server.server_address[1]
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]
        time.sleep(0.1)  # taken by the server: each holds one of the three places
        extra = socket.create_connection(("127.0.0.1", port), timeout=10)
        assert extra.recv(1) == b""  # closed at once: no place left
        started = time.monotonic()
        for conn in idle:
            assert conn.recv(1) == b""  # dropped once idle for the timeout
            conn.close()
        assert time.monotonic() - started < 5
        extra.close()
        wait_for(lambda: fetch(url) is not None, "a scrape once the places are free")
        # a byte now and then keeps the timeout at bay, not the deadline
        slow = socket.create_connection(("127.0.0.1", port), timeout=10)
        started = time.monotonic()
        with contextlib.suppress(OSError):
            for byte in b"GET /metrics HTTP/1.1\r\n":
                slow.sendall(bytes([byte]))
                time.sleep(0.3)
        assert slow.recv(1) == b"" and time.monotonic() - started < 5
        slow.close()
    finally:
        server.shutdown()
        server.server_close()
    assert said.getvalue() == ""  # a dropped client is no traceback on standard error


def test_standard_input_is_followed_and_its_end_ends_serving() -> None:
    with exporter("-", "--name", "rig", stdin=subprocess.PIPE) as (proc, url):
        proc.stdin.write(LOG.read_bytes())
        proc.stdin.flush()
        expected = report_dict(model_of_bytes(LOG.read_bytes(), "x"))["summary"]

        def done() -> bool:
            m = re.search(r'cuzk_proofs_completed_total\{host="rig"\} (\S+)', fetch(url))
            return m is not None and float(m.group(1)) == expected["proofs_completed"]

        wait_for(done, "the proofs of standard input")
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        rest = proc.stderr.read().decode()
    assert rest == "cuzk-tui: standard input ended: stopped serving metrics\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _query(base: str, expr: str, at: float | None = None) -> list[dict[str, Any]]:
    args = {"query": expr} | ({} if at is None else {"time": f"{at:.3f}"})
    with urllib.request.urlopen(f"{base}/api/v1/query?{urllib.parse.urlencode(args)}") as r:
        doc = json.load(r)
    assert doc["status"] == "success", doc
    result: list[dict[str, Any]] = doc["data"]["result"]
    return result


def _value(base: str, expr: str, at: float | None = None) -> float | None:
    result = _query(base, expr, at)
    return float(result[0]["value"][1]) if len(result) == 1 else None


def _settled_counters(data: bytes) -> dict[tuple[str, tuple[str, ...]], float]:
    """What the exporter counts of `data` once the log has been quiet for a minute."""
    b = LogBuilder(source="x")
    b.feed(data)
    b.flush_pending()
    return figures_of(b.snapshot(), quiet_ms=3_600_000).counters


def _age(path: Path) -> None:
    """The log last written an hour ago: all it says is settled."""
    old = time.time() - 3600
    os.utime(path, (old, old))


def test_a_real_prometheus_scrapes_the_figures_and_the_window(tmp_path: Path) -> None:
    """A Prometheus server scrapes the exporter every second while the log grows: its
    kernel utilization is the report's, the counters rise, and rate(kernel) / rate(span)
    over a window is the kernel time over the span that window added."""
    prometheus = shutil.which("prometheus")
    assert prometheus is not None, "prometheus is missing: apt-get install prometheus"
    data = LOG.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    head = data[:cut]
    log = tmp_path / "cuzk.log"
    log.write_bytes(head)
    _age(log)
    kernel = (BUSY, ("0", "kernel"))
    span = (SPAN, ("0",))
    before, after = _settled_counters(head), _settled_counters(data)
    util = [report_dict(model_of_bytes(x, "x"))["gpus"][0]["kernel_util"] for x in (head, data)]
    assert util[0] != util[1]
    with exporter(str(log), "--name", "rig") as (proc, url):
        port = _free_port()
        target = urllib.parse.urlparse(url).netloc
        (tmp_path / "prom.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"scrape_configs: [{{job_name: cuzk, static_configs: [{{targets: ['{target}']}}]}}]\n"
        )
        with open(tmp_path / "prometheus.out", "wb") as out:
            server = subprocess.Popen(
                [
                    prometheus,
                    f"--config.file={tmp_path / 'prom.yml'}",
                    f"--storage.tsdb.path={tmp_path / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        base = f"http://127.0.0.1:{port}"
        try:

            def value(expr: str, at: float | None = None) -> float | None:
                try:
                    return _value(base, expr, at)
                except OSError:  # not listening yet
                    return None

            wait_for(lambda: value('up{job="cuzk"}') == 1, "the target up")
            gauge = 'cuzk_gpu_kernel_utilization{host="rig",gpu="0"}'
            busy = 'cuzk_gpu_busy_seconds_total{host="rig",gpu="0",phase="kernel"}'
            wait_for(lambda: value(gauge) == util[0], "the report's kernel utilization")
            wait_for(lambda: value(busy) == pytest.approx(before[kernel]), "the counters")
            window_from = time.time()
            time.sleep(2.5)  # scrapes of the first half, inside the window
            with open(log, "ab") as fh:
                fh.write(data[cut:])
            _age(log)
            wait_for(lambda: value(gauge) == util[1], "the whole log's kernel utilization")
            wait_for(lambda: value(busy) == pytest.approx(after[kernel]), "the counters rose")
            assert after[kernel] > before[kernel]
            lines = 'cuzk_log_lines_total{host="rig",kind="timeline"}'
            assert value(lines) == report_dict(model_of_bytes(data, "x"))["lines"]["timeline"]
            at = time.time()
            window = f"{int((at - window_from) * 1000)}ms"
            ratio = value(
                f"rate({busy}[{window}]) / ignoring(phase) rate(cuzk_gpu_span_seconds_total"
                f'{{host="rig",gpu="0"}}[{window}])',
                at,
            )
            added = (after[kernel] - before[kernel]) / (after[span] - before[span])
            assert ratio == pytest.approx(added, rel=1e-9)
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


def test_only_the_metrics_path_serves_the_metrics() -> None:
    """The client library answered every path with the metrics: a mistyped scrape path
    (`/metric`, `/foo`) looked right. Any path but /metrics is 404, and says where they are."""
    from prometheus_client import CollectorRegistry

    from tui import exporter

    server = exporter.bind(("127.0.0.1", 0), CollectorRegistry())
    try:
        url = exporter.url_of(server)
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
        base = url.removesuffix("/metrics")
        for path in ("/", "/metric", "/foo", "/metrics/x"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(base + path, timeout=10)
            assert refused.value.code == 404
            assert refused.value.read() == exporter.NOT_FOUND
        # a request line in the absolute form HTTP/1.1 servers must take (RFC 9112, 3.2.2)
        port = server.server_address[1]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(f"GET http://127.0.0.1:{port}/metrics HTTP/1.0\r\n\r\n".encode())
            assert conn.recv(64).startswith(b"HTTP/1.0 200")
    finally:
        server.shutdown()
        server.server_close()


def test_a_head_request_is_answered_as_the_get_without_its_body() -> None:
    """Health checks and load balancers ask with HEAD: it was 405 Method Not Allowed."""
    from prometheus_client import CollectorRegistry, Counter

    from tui import exporter

    registry = CollectorRegistry()
    Counter("cuzk_test_total", "a test counter", registry=registry).inc(3)
    server = exporter.bind(("127.0.0.1", 0), registry)
    try:
        url = exporter.url_of(server)
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
        assert b"cuzk_test_total 3.0" in body
        head = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(head, timeout=10) as response:
            assert response.status == 200
            assert response.headers["Content-Length"] == str(len(body))
            assert response.headers["Content-Type"].startswith("text/plain")
            assert response.read() == b""
        # what is allowed says HEAD too (the client's library said "OPTIONS,GET")
        options = urllib.request.Request(url, method="OPTIONS")
        with urllib.request.urlopen(options, timeout=10) as response:
            assert response.headers["Allow"] == "GET, HEAD, OPTIONS"
        post = urllib.request.Request(url, data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(post, timeout=10)
        assert refused.value.code == 405
        assert refused.value.headers["Allow"] == "GET, HEAD, OPTIONS"
    finally:
        server.shutdown()
        server.server_close()


def _served(collector: LiveCollector) -> dict[tuple[str, tuple[str, ...]], float]:
    return {
        (sample.name, tuple(sample.labels.values())): sample.value
        for family in collector.collect()
        for sample in family.samples
    }


def test_no_figure_is_served_before_the_log_as_it_was_is_read() -> None:
    """A restarted exporter served the counters of the part of the log read so far: lower
    than the last exporter's, which Prometheus takes for a reset, and the whole log was
    counted again (rate() of kernel seconds 2.0 on one GPU)."""
    _, data = simulate(SimConfig(seed=5, proofs=6, gpus=1))
    part = LogBuilder(source="t")
    part.feed(data[: len(data) // 3])
    collector = LiveCollector("rig")
    assert _served(collector) == {("cuzk_log_input_state", ("rig", "reading")): 1.0} | {
        ("cuzk_log_input_state", ("rig", s)): 0.0 for s in STATES if s != "reading"
    } | {("cuzk_log_new_runs_total", ("rig", how)): 0.0 for how in ("truncated", "rotated")}
    collector.take(Update(part.snapshot(), loading=0.33, following=False, behind=True))
    before = _served(collector)
    assert before[("cuzk_log_input_state", ("rig", "reading"))] == 1.0
    assert not any(name.startswith("cuzk_gpu") for name, _ in before)
    whole = model_of_bytes(data, "t")
    collector.take(Update(whole, following=False))
    after = _served(collector)
    assert after[("cuzk_log_input_state", ("rig", "reading"))] == 0.0
    assert after[("cuzk_log_input_state", ("rig", "following"))] == 1.0
    assert after[(SPAN + "_total", ("rig", "0"))] == figures_of(whole).counters[(SPAN, ("0",))]
    # a burst read later (behind again) shows what is read: the counters only go up
    collector.take(Update(whole, behind=True))
    assert (SPAN + "_total", ("rig", "0")) in _served(collector)


def test_a_new_run_counts_all_of_the_last_one() -> None:
    """A rotated or truncated log: the run that ended is counted to its end, not up to a
    minute before its last line (a rotation lost 40 s of span from every counter)."""
    _, data = simulate(SimConfig(seed=3, proofs=4, gpus=1))
    growing = LogBuilder(source="t")
    growing.feed(data)
    growing.flush_pending()
    last = growing.snapshot()
    collector = LiveCollector("rig")
    collector.take(Update(last))
    settled = _served(collector)[(SPAN + "_total", ("rig", "0"))]
    whole = figures_of(last, quiet_ms=math.inf).counters[(SPAN, ("0",))]
    assert settled < whole
    collector.take(Update(LogBuilder(source="t").snapshot(), restarted=True))
    assert _served(collector)[(SPAN + "_total", ("rig", "0"))] == pytest.approx(whole)


def test_an_address_only_this_machine_reaches_is_said_so() -> None:
    """`--serve-metrics :9464` binds 127.0.0.1 (Go's servers take `:9464` for every
    address): the line that gives the URL says who can reach it."""
    from prometheus_client import CollectorRegistry

    from tui import exporter

    server = exporter.bind(("127.0.0.1", 0), CollectorRegistry())
    try:
        port = server.server_address[1]
        assert exporter._reach(server) == f" (this machine only: 0.0.0.0:{port} serves others)"
    finally:
        server.shutdown()
        server.server_close()
    # an IPv6 loopback is told of the IPv6 address of every interface
    six = type("Bound", (), {"server_address": ("::1", 9464, 0, 0)})()
    assert exporter._reach(six) == " (this machine only: [::]:9464 serves others)"
    server = exporter.bind(("0.0.0.0", 0), CollectorRegistry())
    try:
        assert exporter._reach(server) == ""
    finally:
        server.shutdown()
        server.server_close()


def test_each_new_run_is_counted_by_how_it_began() -> None:
    """The input state says `truncated` or `rotated` for a minute only: a scrape a minute
    apart could miss it. A counter of new runs, by how, cannot be missed."""
    empty = LogBuilder(source="t").snapshot()
    collector = LiveCollector("rig")
    collector.take(Update(empty))
    truncated, rotated = InputState.TRUNCATED, InputState.ROTATED
    for state in (truncated, rotated, truncated):
        collector.take(Update(empty, state, restarted=True))
        collector.take(Update(empty, state))  # the same run, later: not another
    served = _served(collector)
    assert served[("cuzk_log_new_runs_total", ("rig", "truncated"))] == 2
    assert served[("cuzk_log_new_runs_total", ("rig", "rotated"))] == 1
