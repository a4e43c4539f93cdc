"""The Prometheus exporter (`cuzk-tui LOG --serve-metrics HOST:PORT`): the viewer's follower
without the viewer, its latest model served on /metrics (the families: parsers/metrics.py).

Headless: Textual is not imported. The follower (tui/follow.py `LiveLog`) runs in the main
thread with its CPU budget; the HTTP server answers on a thread of its own, and a scrape
reads the latest model (its figures made once per model, their cost charged to the budget).
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from socketserver import ThreadingMixIn
from types import FrameType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from parsers.errors import CoreFailure, CuzkError
from parsers.load import check_log_path, check_stdin
from parsers.metrics import (
    Carried,
    Figures,
    LogHealth,
    families,
    figures_of,
    health_families,
    settled_limit,
)
from parsers.model import LogModel
from parsers.sanitize import visible
from parsers.sources import compression
from tui.follow import CpuBudget, FileSource, InputState, LiveLog, Source, StreamSource, Update
from tui.options import Options

# the follower's states, and the exporter's own before it has read what the log held when it
# started: until then it serves no figure (see LiveCollector)
READING = "reading"
STATES = (READING, *(s.value for s in InputState))
SIGINT_STATUS = 130  # the shell's status for a command ended by ctrl+c
# how long the log has been quiet counts in steps of this: a model's figures are made once
# while lines come, and again at most this often while the log is quiet (settled_limit)
QUIET_STEP_S = 10.0
# a client that sends nothing for this long is dropped (a scrape's request is one packet),
# and at most this many connections are served at once: each idle connection held a thread
# for ever, and hundreds of them slowed the server to refusing connections
REQUEST_TIMEOUT_S = 10.0
REQUEST_DEADLINE_S = 30.0
MAX_CONNECTIONS = 64

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment


class LiveCollector(Collector):
    """The metrics of the follower's latest model, made when Prometheus scrapes.

    `take` is the follower's `on_update`; `collect` runs on the server's thread.

    Args:
        host: the `host` label.
    """

    def __init__(self, host: str) -> None:
        self.host = host
        self._lock = threading.Lock()
        self._update: Update | None = None
        self._figures: tuple[tuple[LogModel, float], Figures] | None = None  # the latest made
        self.carried = Carried()
        self._read = False  # a model of all the log held when the exporter started was made
        # how often a new run began, by how (the states that say it)
        self._new_runs = dict.fromkeys((InputState.TRUNCATED.value, InputState.ROTATED.value), 0)
        self.source: Source | None = None
        self.budget: CpuBudget | None = None

    @property
    def latest(self) -> Update | None:
        """The follower's latest update."""
        with self._lock:
            return self._update

    def take(self, update: Update) -> None:
        """The follower's new update: a new run carries the counters of the last one on,
        all of that one's time counted (no line of it comes any more)."""
        with self._lock:
            if update.restarted and self._update is not None:
                ended = self._figures_of(self._update.model, math.inf)
                self.carried.new_run(ended.counters)
            if update.restarted and update.state.value in self._new_runs:
                self._new_runs[update.state.value] += 1
            self._update = update
            self._read = self._read or not update.behind

    def _figures_of(self, model: LogModel, quiet_s: float = 0.0) -> Figures:
        """The model's figures (the lock held), made once per model and settled limit
        (parsers/metrics.py `settled_limit`); what they cost is charged to the follower's
        CPU budget, as the viewer's redraw is."""
        limit = settled_limit(model, quiet_s * 1000)
        if self._figures is not None:
            (made_of, made_limit), figures = self._figures
            if made_of is model and made_limit == limit:
                return figures
        cpu = time.thread_time()
        figures = figures_of(model, quiet_s * 1000)
        if self.budget is not None:
            self.budget.charge(time.thread_time() - cpu)
        self._figures = ((model, limit), figures)
        return figures

    def _quiet_s(self) -> float | None:
        """Seconds since the input last grew (None: not known)."""
        changed = self.source.last_change() if self.source is not None else None
        return None if changed is None else max(0.0, time.time() - changed)

    def _quiet_steps_s(self, quiet_s: float | None) -> float:
        """`quiet_s` in whole QUIET_STEP_S (0: not known)."""
        return 0.0 if quiet_s is None else QUIET_STEP_S * (quiet_s // QUIET_STEP_S)

    def describe(self) -> Iterable[Metric]:
        """Nothing to check at registration (the families depend on the log)."""
        return ()

    def collect(self) -> Iterable[Metric]:
        """The families of the latest model. Before the log as it was when the exporter
        started has been read, only the state, `reading`: a counter served from a part of
        the log would be below the one a previous exporter served, and Prometheus takes a
        counter that went down for a reset and counts all of it again."""
        quiet_s = self._quiet_s()
        with self._lock:
            update = self._update
            if update is None or not self._read:
                reading = LogHealth(READING, STATES, None, tuple(self._new_runs.items()))
                return list(health_families(reading, self.host))
            figures = self._figures_of(update.model, self._quiet_steps_s(quiet_s))
            counted = self.carried.counted(figures.counters)
            new_runs = tuple(self._new_runs.items())
        health = LogHealth(update.state.value, STATES, quiet_s, new_runs)
        return list(families(figures, counted, self.host, health))


def open_source(log: str) -> Source:
    """The log to follow: a file, or standard input (not spooled: the exporter shows no
    raw line, and `journalctl -f |` runs for weeks).

    Raises: CuzkError: it cannot be followed.
    """
    if log == "-":
        check_stdin("journalctl -u cuzk -f | cuzk-tui - --serve-metrics ...")
        return StreamSource(0, spool=False)
    path = check_log_path(log)
    if compression(path) is not None:
        raise CuzkError(f"a compressed log does not grow: {log} (try --report)")
    try:
        return FileSource(path)
    except OSError as exc:
        raise CuzkError(f"cannot read {log}: {exc.strerror or exc}") from None


def url_of(server: WSGIServer) -> str:
    """Where the server answers, as a URL (an IPv6 address in brackets)."""
    raw, port = server.server_address[:2]
    host = raw if isinstance(raw, str) else raw.decode()
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/metrics"


class ScrapeHandler(WSGIRequestHandler):
    """A request: no line logged per scrape; a client idle for REQUEST_TIMEOUT_S dropped,
    and one not done in `deadline_s` (a byte now and then keeps a timeout at bay) cut."""

    timeout = REQUEST_TIMEOUT_S
    deadline_s = REQUEST_DEADLINE_S

    def setup(self) -> None:
        super().setup()
        self._deadline = threading.Timer(self.deadline_s, self._cut)
        self._deadline.daemon = True
        self._deadline.start()

    def _cut(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        self._deadline.cancel()
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class BoundedServer(ThreadingMixIn, WSGIServer):
    """A thread per connection, at most MAX_CONNECTIONS at once (one more is closed at
    once: Prometheus retries at its next scrape)."""

    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client dropped at the timeout, or gone (reset, a broken pipe), is nothing to
        say: socketserver printed a traceback on standard error for each. Anything else is
        one line."""
        kind, exc = sys.exc_info()[:2]
        if isinstance(exc, OSError):
            return
        name = kind.__name__ if kind is not None else "error"
        print(f"cuzk-tui: a scrape from {client_address[0]} failed: {name}", file=sys.stderr)


NOT_FOUND = b"not found: the metrics are at /metrics\n"
ALLOWED = "GET, HEAD, OPTIONS"  # the methods /metrics answers


def metrics_only(app: WSGIApplication) -> WSGIApplication:
    """`app` on /metrics; any other path is 404 (the client's library answered every path
    with the metrics: a mistyped scrape path looked right)."""

    def serve(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        # a request line's absolute form (`GET http://host/metrics`) is its path too
        if urlsplit(environ.get("PATH_INFO", "")).path != "/metrics":
            start_response(
                "404 Not Found",
                [
                    ("Content-Type", "text/plain; charset=utf-8"),
                    ("Content-Length", str(len(NOT_FOUND))),
                ],
            )
            return [NOT_FOUND]
        method = environ.get("REQUEST_METHOD")
        if method not in ("GET", "HEAD"):
            # the client's library leaves HEAD out of what it says it allows
            allowed = ("Allow", ALLOWED)
            if method == "OPTIONS":
                start_response("200 OK", [allowed, ("Content-Length", "0")])
                return []
            start_response("405 Method Not Allowed", [allowed, ("Content-Length", "0")])
            return []
        if method == "HEAD":
            # a health check's HEAD: the GET's status and headers, no body (the client's
            # library answers 405)
            said: list[tuple[str, list[tuple[str, str]]]] = []

            def keep(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
                said.append((status, headers))
                return lambda data: None

            body = b"".join(app({**environ, "REQUEST_METHOD": "GET"}, keep))
            status, headers = said[0]
            length = [h for h in headers if h[0].lower() != "content-length"]
            start_response(status, [*length, ("Content-Length", str(len(body)))])
            return []
        return app(environ, start_response)

    return serve


def bind(address: tuple[str, int], registry: CollectorRegistry) -> WSGIServer:
    """Serve `registry` on `address` (on a thread of its own).

    Raises: CuzkError: the address cannot be bound (in use, not this machine's, no right).
    """
    host, port = address

    class Server(BoundedServer):
        pass

    try:
        # the address's own family (an IPv6 address needs AF_INET6)
        Server.address_family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        server = make_server(
            host, port, metrics_only(make_wsgi_app(registry)), Server, ScrapeHandler
        )
    except OSError as exc:
        shown = f"[{host}]" if ":" in host else host
        why = exc.strerror or str(exc) or type(exc).__name__
        raise CuzkError(f"cannot serve metrics on {shown}:{port}: {why}") from None
    threading.Thread(target=server.serve_forever, name="cuzk-tui-metrics", daemon=True).start()
    return server


def host_label(options: Options) -> str:
    """The `host` label: --name, else this machine's name; controls shown as pictures (a
    scrape read in a terminal acts on none) and bytes that are not UTF-8 as `<U+DCFF>` (the
    text format is UTF-8: such a name failed every scrape with a 500)."""
    return visible(options.name[0] if options.name else socket.gethostname())


def run_exporter(options: Options) -> int:
    """Follow the log and serve its metrics until SIGTERM (status 0) or SIGINT (130), or
    until standard input ends (0).

    Raises: CuzkError: the log cannot be followed or the address not bound; CoreFailure:
    the core failed again on the log.
    """
    assert options.log is not None and options.serve_metrics is not None  # options_of
    collector = LiveCollector(host_label(options))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    source = open_source(options.log)
    try:
        server = bind(options.serve_metrics, registry)
    except CuzkError:
        source.close()
        raise
    live = LiveLog(source, collector.take, options.workers_per_gpu)
    collector.source, collector.budget = source, live.budget
    ended_by: list[int] = []

    def end(signum: int, frame: FrameType | None) -> None:
        ended_by.append(signum)
        live.halt()

    previous = {sig: signal.signal(sig, end) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        print(
            f"cuzk-tui: serving metrics on {url_of(server)}{_reach(server)}",
            file=sys.stderr,
            flush=True,
        )
        live.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.shutdown()
        server.server_close()
        source.close()
    if ended_by:
        return SIGINT_STATUS if ended_by[0] == signal.SIGINT else 0
    return _ended(collector.latest, options.log)


def _reach(server: WSGIServer) -> str:
    """What a bound address that only this machine reaches needs said (`:9464` is every
    address to Go's servers, Prometheus's own exporters among them; here it is 127.0.0.1)."""
    host, port = server.server_address[:2]
    if isinstance(host, str) and _loopback(host):
        every = f"[::]:{port}" if ":" in host else f"0.0.0.0:{port}"
        return f" (this machine only: {every} serves others)"
    return ""


def _loopback(host: str) -> bool:
    """Whether `host` is a loopback address (127.0.0.0/8, ::1)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _ended(update: Update | None, log: str) -> int:
    """The follower stopped by itself: the core failed for good, or the input ended."""
    if update is not None and update.state is InputState.CORE_FAILED:
        raise CoreFailure(f"the core failed on {log}: {update.detail}")
    if update is not None and update.state is InputState.STOPPED:
        raise CuzkError(f"stopped reading {log}: {update.detail}")
    name = "standard input" if log == "-" else visible(Path(log).name)
    print(f"cuzk-tui: {name} ended: stopped serving metrics", file=sys.stderr)
    return 0
