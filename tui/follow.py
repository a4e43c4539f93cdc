"""Live follow: a thread reads the growing log, feeds the builder and hands snapshots on.

Change detection is watchdog (inotify) with a slow safety poll, or plain polling when
watchdog cannot watch (NFS, no inotify). Snapshots are throttled (at most ten a second,
and rarer when a snapshot itself is slow), so a burst of lines never floods the screen;
while nothing arrives the thread sleeps on an event.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import BinaryIO, Protocol, TypeVar

from parsers._core import CoreError, StopFlag
from parsers.builder import LogBuilder
from parsers.errors import CuzkError
from parsers.model import LogModel
from parsers.sanitize import visible
from parsers.sources import HEAD_BYTES, ignored_bytes, stdin_hint
from parsers.tail import SPAN_MIN_BYTES, LogTail, Span, TailRead, TailState
from parsers.writing import open_nameless

T = TypeVar("T")

MIN_UPDATE_S = 0.1  # at most ten screen updates a second
# a pipe that gives nothing for this long after a read has given what it held (its backlog)
PIPE_QUIET_S = 0.05
# ...and no more than the viewer can afford: updates (the snapshot and the screen's redraw)
# take this share of a core on average, with bursts of up to CPU_BURST_S seconds of CPU. A
# line now and then is shown at once (ten updates in a row of a 68-hour log fit in a burst,
# 30-60 ms each with the redraw); a log that keeps growing is shown as often as the share
# allows (every few seconds on a 100-hour log, many times a second on a short one). Over
# any 30 s its updates take at most 0.8 % + 0.9 s / 30 s = 3.8 % of a core, 0.8 % in the
# long run, as long as an update costs at most CPU_SHARE * MAX_WAIT_S (40 ms). The viewer
# beside them (reading the lines, the screen's clock, the toolkit) takes ~1 % of its own
# (benchmarks/bench_follow_cost.py): following costs at most ~2 % of a core in all.
CPU_SHARE = 0.008
CPU_BURST_S = 0.9
# A costly update (the settled part made again, ~0.7 s on a 68-hour log) is not paid back in
# full at CPU_SHARE: that made the next line wait up to 45 s (12.5 s seen). An update waits
# at most MAX_WAIT_S, or the time that keeps it to MAX_SHARE of a core if it cost more
# (0.7 s: 7 s). So updates that each cost more than 40 ms (a far longer log) take up to
# MAX_SHARE of a core, shown every MAX_WAIT_S or more.
MAX_WAIT_S = 5.0
MAX_SHARE = 0.10
IDLE_FLUSH_S = 1.0  # quiet this long: attribute the timing lines kept back for look-ahead
# a new run (the log truncated or rotated) is said this long, then the input is followed as
# ever: the exporter's input state said "truncated" for good after one logrotate
NEW_RUN_NOTE_S = 60.0
POLL_S = 0.2  # polling fallback
SAFETY_POLL_S = 1.0  # with watchdog: a poll now and then all the same
STDIN_READ = 1 << 20
# the spool (standard input, a decompressed file) leaves this share of its file system free,
# and never more than SPOOL_KEEP_MAX: a gzip bomb or `cat /dev/zero |` must not fill /tmp,
# and a small /tmp (a tmpfs of a few hundred MB) still takes a spool
SPOOL_KEEP_SHARE = 0.10
SPOOL_KEEP_MAX = 1 << 30
# a rename (logrotate) and a deletion look alike from here: the path names nothing now
MOVED = "file moved or deleted — showing what was read"
UNREADABLE = "cannot read the log: "
STOPPED = "stopped reading: "  # a stream read no further (its spool, a cut compressed file)
# the core failing (a bug) is survived this many times, each by reading the input again
MAX_CORE_RESTARTS = 3
# The reader shares the interpreter with the screen: it feeds the builder in slices and
# yields between them, so keys are answered during a burst.
# the core scans without holding the interpreter, so big slices cost the screen nothing
FEED_SLICE = 4 << 20
# A file's bytes are read by the core in spans of at most this much (the screen is told how
# far the read is between two): read in place, without the GIL, a third faster than fed. A
# span's end drains the core's threads: 32 MB spans read a 685 MB log in 1.04 s, 128 MB ones
# in 0.98 s (a quit does not wait for a span: the core stops at its next piece)
SPAN_BYTES = 128 << 20
# While a long file is read: how often the progress is shown, and when a model of what was
# read so far is made again (its cost times REMODEL_TIMES since the last one, at least
# MIN_REMODEL_S): mid-load models of a 685 MB log took 3.2 s of a 15.5 s load
PROGRESS_S = 0.25
REMODEL_TIMES = 20.0
MIN_REMODEL_S = 1.0
YIELD_S = 0.0005


class InputState(Enum):
    """What the follower knows of its input; `status_words` says it."""

    FOLLOWING = "following"  # all is well
    TRUNCATED = "truncated"  # a new run began in the same file
    ROTATED = "rotated"  # a new file at the path: a new run
    MOVED = "moved"  # the path names nothing: what was read stays shown
    UNREADABLE = "unreadable"  # the path cannot be read now (detail: why); retried
    UNAVAILABLE = "unavailable"  # the path names no regular file now (detail: what)
    STOPPED = "stopped"  # a stream is read no further (detail: why)
    CLOSED = "closed"  # the input ended
    CORE_RESTARTED = "core restarted"  # the core failed; the input was read again
    CORE_FAILED = "core failed"  # it failed again: following stopped


# states that end once the path is a readable regular file again
BACK_WHEN_READABLE = frozenset({InputState.MOVED, InputState.UNREADABLE, InputState.UNAVAILABLE})
# states that end NEW_RUN_NOTE_S after they began
NEW_RUN = frozenset({InputState.TRUNCATED, InputState.ROTATED})


def status_words(state: InputState, detail: str = "") -> str:
    """The state in words, as the status line shows it ("" while all is well)."""
    match state:
        case InputState.FOLLOWING:
            return ""
        case InputState.TRUNCATED:
            return "log was truncated — new run"
        case InputState.ROTATED:
            return "log was rotated — new run"
        case InputState.MOVED:
            return MOVED
        case InputState.UNREADABLE:
            return f"{UNREADABLE}{detail}"
        case InputState.UNAVAILABLE:
            return detail
        case InputState.STOPPED:
            return f"{STOPPED}{detail}"
        case InputState.CLOSED:
            return "input closed"
        case InputState.CORE_RESTARTED:
            return f"the core failed ({detail}); the log was read again from the start"
        case InputState.CORE_FAILED:
            return f"the core failed again ({detail}); stopped following (please report it)"


@dataclass(frozen=True, slots=True)
class Update:
    """What the follower tells the screen."""

    model: LogModel
    state: InputState = InputState.FOLLOWING
    detail: str = ""  # what `state` needs to be said (an error, what the path names)
    restarted: bool = False  # a new run began (truncation, rotation): reset the view
    loading: float | None = None  # share of the file read, while catching up
    finished: bool = False  # the input ended (standard input closed)
    # an update of the log as it grows, paid from the CPU budget (False: one of reading
    # what was there, whose redraw is not following it)
    following: bool = True
    note: str = ""  # lines that could not be read, said once and kept
    # bytes that were there when this model was made still wait to be read (a long file, a
    # pipe's backlog): its figures are those of a part of what is there
    behind: bool = False

    @property
    def status(self) -> str:
        """What happened to the input, in words ("" while all is well)."""
        words = status_words(self.state, self.detail)
        if self.note:
            return f"{words} · {self.note}" if words else self.note
        return words


class Source(Protocol):
    """Where the bytes come from."""

    name: str

    def poll(self) -> TailRead:
        """New bytes, and what happened to the input."""

    def wait(self, seconds: float) -> None:
        """Sleep until something may have arrived (or `seconds` passed)."""

    def wake(self) -> None:
        """End a wait now (to stop)."""

    def size_hint(self) -> int | None:
        """How many bytes there are to read in all, when known."""

    def encoding_hint(self) -> str | None:
        """Why the input shows nothing when its first bytes say (a pipe of compressed or
        UTF-16 data), else None."""

    def last_change(self) -> float | None:
        """When the input last grew (epoch seconds), when known."""

    def close(self) -> None:
        """Release what the source holds."""

    def read_again(self) -> Iterator[bytes]:
        """The bytes read so far, once more from the start (the core failed on them)."""

    def give_back(self, span: Span, taken: bytes | int = b"") -> None:
        """Give what of `span` was not read (after `taken`: its first bytes, or how many)
        again at the next poll (a source that gives no spans has nothing to do)."""


class FileSource:
    """A log file on disk, watched with watchdog when possible."""

    def __init__(self, path: Path) -> None:
        self.name = path.name
        self.path = path
        self.tail = LogTail(path)
        self._last_data = time.time()  # when a poll last read bytes (opened: now)
        self._mtime: float | None = None  # the file's modification time, last seen
        self._wake = threading.Event()
        self._observer: object | None = None
        self.watching = self._start_watch()

    def _start_watch(self) -> bool:
        try:
            from watchdog.events import FileSystemEvent, FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:  # pragma: no cover - watchdog is a dependency
            return False
        target = str(self.path.resolve())
        wake = self._wake

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                paths = {str(getattr(event, "src_path", "")), str(getattr(event, "dest_path", ""))}
                if target in paths:
                    wake.set()

        if target.startswith("/proc/") or target.endswith(" (deleted)"):
            return False  # a file with no name (the demo's, --replay's): no folder to watch
        observer = Observer()
        try:
            observer.schedule(Handler(), str(self.path.resolve().parent), recursive=False)
            observer.daemon = True
            observer.start()
        except (OSError, RuntimeError):
            # no inotify here (NFS, limits): polling it is. What the start began is stopped:
            # its threads left running kept the process from ending after a SIGTERM
            with contextlib.suppress(Exception):
                observer.stop()
                observer.join(timeout=1.0)
            return False
        self._observer = observer
        return True

    def poll(self) -> TailRead:
        """New bytes, and what happened to the file: a megabyte or more of them as a span,
        read by the core (`LiveLog`), not here."""
        read = self.tail.poll(span_limit=SPAN_BYTES)
        if read.got:
            self._last_data = time.time()
        return read

    def wait(self, seconds: float) -> None:
        """Sleep until watchdog says the file changed, or the poll interval passes."""
        self._wake.wait(min(seconds, SAFETY_POLL_S if self.watching else POLL_S))
        self._wake.clear()

    def wake(self) -> None:
        """End a wait now."""
        self._wake.set()

    def size_hint(self) -> int | None:
        """The file's size."""
        return self.tail.size()

    def encoding_hint(self) -> str | None:
        """None: a file's encoding is found from its name (`file_hint`), once."""
        return None

    def last_change(self) -> float | None:
        """The file's modification time: a log finished yesterday is idle from the start. A
        time in the future (a clock set wrong, `touch -d tomorrow`) says nothing of now: then
        when bytes last came. The path gone (moved, deleted): as it was when last seen, not
        unknown (a log idle for hours was said LIVE once deleted)."""
        with contextlib.suppress(OSError):
            self._mtime = os.stat(self.path).st_mtime
        mtime = self._mtime
        if mtime is None:
            return self._last_data
        return mtime if mtime <= time.time() else self._last_data

    def close(self) -> None:
        """Stop watching; close the file."""
        observer = self._observer
        if observer is not None:
            observer.stop()  # type: ignore[attr-defined]
        self.tail.close()

    def read_again(self) -> Iterator[bytes]:
        """The bytes read so far, from the file still open (whatever the path names now)."""
        return self.tail.read_again()

    def give_back(self, span: Span, taken: bytes | int = b"") -> None:
        """Give what of `span` was not read again at the next poll (`LogTail.give_back`)."""
        self.tail.give_back(span, taken)


class NoTemporaryFile(CuzkError):
    """No folder for temporary files can be written (TMPDIR, /tmp, /var/tmp, the current one)."""


def temporary_file(make: Callable[[], T]) -> T:
    """`make()`, tempfile.mkstemp or mkdtemp, its failure said in a sentence.

    Raises:
        NoTemporaryFile: nowhere to make it.
    """
    try:
        return make()
    except OSError as exc:
        raise NoTemporaryFile(
            f"cannot make a temporary file ({exc.strerror or exc}): "
            "set TMPDIR to a folder that can be written"
        ) from None


def nameless_file(named: Callable[[], tuple[int, Path]]) -> tuple[int, Path, Path | None]:
    """A new file for bytes the viewer keeps: its descriptor (open for writing), the path
    that opens it again, and its name while it has one (removed when it is closed). Where
    the system allows (O_TMPFILE) it has no name from the start, in the folder for temporary
    files; else it is `named()`'s (its descriptor and name), its name removed at once where
    /proc opens it (`nameless`).

    Raises:
        NoTemporaryFile: nowhere to make it (and what `named` raises).
    """
    folder = Path(temporary_file(tempfile.gettempdir))
    fd = temporary_file(lambda: open_nameless(folder))
    if fd is not None:
        return fd, Path(f"/proc/self/fd/{fd}"), None
    fd, name = named()
    path, kept = nameless(fd, name)
    return fd, path, kept


def nameless(fd: int, name: Path) -> tuple[Path, Path | None]:
    """The file `fd` opened under `name`, its name removed at once where the system gives
    another way to open it (Linux's /proc/self/fd): a process killed (SIGKILL, the OOM
    killer) leaves no spool behind. Returns the path that opens it and its name, if it still
    has one (removed when it is closed)."""
    proc = Path(f"/proc/self/fd/{fd}")
    try:
        ours, theirs = os.fstat(fd), os.stat(proc)
        if (ours.st_dev, ours.st_ino) != (theirs.st_dev, theirs.st_ino):
            return name, name
        name.unlink()
    except OSError:
        return name, name
    return proc, None


def _named_spool() -> tuple[int, Path]:
    """A spool under a name of its own in the folder for temporary files."""
    fd, name = temporary_file(lambda: tempfile.mkstemp(prefix="cuzk-tui-stdin-", suffix=".log"))
    return fd, Path(name)


class StreamSource:
    """A pipe (standard input) or a decompressing reader: read to its end, spooled to a
    temporary file for the raw lines.

    Args:
        stream: a pipe's file descriptor (waited on with select), or a binary file object.
        name: shown as the log's name.
        spool: keep what was read (False: no raw line is shown, and a pipe read for weeks
            fills no disk; the input cannot be read again if the core fails).
    """

    def __init__(self, stream: int | BinaryIO, name: str = "stdin", spool: bool = True) -> None:
        self.name = name
        self.fd = stream if isinstance(stream, int) else -1
        self.stream = None if isinstance(stream, int) else stream
        self._spool: BinaryIO | None = None
        self._spool_name: Path | None = None  # the spool's name while it has one
        if spool:  # spool_path names the spool only where there is one
            fd_spool, self.spool_path, self._spool_name = nameless_file(_named_spool)
            self.spool_folder = Path(tempfile.gettempdir())
            self._spool = os.fdopen(fd_spool, "wb")
        self.closed = False
        self.stopped = ""  # why reading stopped before the input's end, in words
        self.left_out = ""  # what of the input was not read though it was read to its end
        self._last_data: float | None = None
        self._head = bytearray()  # the input's first bytes, for `encoding_hint`
        self._error: Exception | None = None  # met after bytes `_decompressed` gave first

    def _stop(self, why: str) -> TailRead:
        """Read no more: the model keeps what the spool holds, and `why` is shown."""
        self.closed, self.stopped = True, why
        return TailRead(b"", TailState.DELETED)

    def _room_for(self, size: int) -> bool:
        """The spool may grow by `size` bytes and leave its file system enough free."""
        st = os.statvfs(self.spool_folder)
        keep = min(SPOOL_KEEP_MAX, SPOOL_KEEP_SHARE * st.f_blocks * st.f_frsize)
        return st.f_bavail * st.f_frsize - size >= keep

    def _read(self) -> bytes | None:
        """The next bytes (empty: the end; None: nothing yet from the pipe)."""
        if self.stream is not None:
            return self._decompressed()
        ready, _, _ = select.select([self.fd], [], [], POLL_S)
        return os.read(self.fd, STDIN_READ) if ready else None

    def _decompressed(self) -> bytes:
        """Up to STDIN_READ bytes of the file object (empty: its end). A compressed copy cut
        short raises at its end, and read(n) drops what it had decompressed for that call
        with it (a small log's whole text): it is read a decompressed chunk at a time
        (read1), and what came before the error is given first, the error at the next call."""
        assert self.stream is not None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        read1 = getattr(self.stream, "read1", None)
        if read1 is None:
            return self.stream.read(STDIN_READ) or b""
        parts: list[bytes] = []
        size = 0
        while size < STDIN_READ:
            try:
                chunk: bytes = read1(STDIN_READ - size)
            except Exception as exc:
                if not parts:
                    raise
                self._error = exc
                break
            if not chunk:
                break
            parts.append(chunk)
            size += len(chunk)
        return b"".join(parts)

    def poll(self) -> TailRead:
        """Whatever the input has now (a pipe is waited on at most a poll interval)."""
        if self.closed:
            return TailRead(b"", TailState.GROWING)
        try:
            data = self._read()
        except Exception as exc:
            # a compressed file cut short (EOFError) or corrupt (each decompressor has its
            # own error), a pipe that failed: what was read is shown, and why it stopped
            what = "standard input" if self.stream is None else self.name
            return self._stop(f"cannot read {what}: {_reason(exc)}")
        if data is None:
            return TailRead(b"", TailState.GROWING)
        if not data:
            note = None if self.stream is None else ignored_bytes(self.stream)
            if note is not None:  # read to its end all the same: a note, not a stop
                self.left_out = f"{visible(self.name)}: {note}"
            self.closed = True
            return TailRead(b"", TailState.DELETED)
        self._last_data = time.time()
        if len(self._head) < HEAD_BYTES:
            self._head += data[: HEAD_BYTES - len(self._head)]
        more = self._more_now()
        if self._spool is None:
            return TailRead(data, TailState.GROWING, more=more)
        folder = self.spool_folder
        try:
            if not self._room_for(len(data)):
                return self._stop(f"the spool would fill {folder}")
            self._spool.write(data)
            self._spool.flush()
        except OSError as exc:  # ENOSPC, EIO: the spool is short of what was read
            return self._stop(f"cannot write the spool in {folder}: {_reason(exc)}")
        return TailRead(data, TailState.GROWING, more=more)

    def _more_now(self) -> bool:
        """Whether more bytes come at once: a pipe's that come within PIPE_QUIET_S (a writer
        blocked on a full pipe fills it again in far less; one that gives a line now and
        then is followed, not read as a backlog), a compressed file's until its end."""
        if self.stream is not None:
            return True
        try:
            ready, _, _ = select.select([self.fd], [], [], PIPE_QUIET_S)
        except (OSError, ValueError):
            return False
        return bool(ready)

    def wait(self, seconds: float) -> None:
        """poll() already waits on the pipe."""

    def wake(self) -> None:
        """poll() waits at most a poll interval anyway."""

    def size_hint(self) -> int | None:
        """Unknown for a pipe."""
        return None

    def encoding_hint(self) -> str | None:
        """`stdin_hint` of a pipe's first bytes: compressed or UTF-16 data is read as it
        comes, as the report reads it (a decompressing reader's bytes are the log's own)."""
        if self.stream is not None or not self._head:
            return None
        return stdin_hint(bytes(self._head))

    def last_change(self) -> float | None:
        """When the last bytes came."""
        return self._last_data

    def close(self) -> None:
        """Remove the spool (and close a decompressing reader), whatever its last flush does
        (a full disk fails it: the spool must go all the same)."""
        try:
            if self._spool is not None:
                self._spool.close()
        except OSError:
            pass  # what was not written is not needed: the file goes
        finally:
            if self._spool_name is not None:
                self._spool_name.unlink(missing_ok=True)
            if self.stream is not None:
                self.stream.close()

    def read_again(self) -> Iterator[bytes]:
        """The bytes read so far, from the spool that holds them.

        Raises: OSError: there is no spool.
        """
        if self._spool is None:
            raise OSError(errno.ESPIPE, "what was read was not kept")
        self._spool.flush()
        with open(self.spool_path, "rb") as fh:
            while data := fh.read(STDIN_READ):
                yield data

    def give_back(self, span: Span, taken: bytes | int = b"") -> None:
        """A stream gives no spans: nothing to give again."""


def _reason(exc: BaseException) -> str:
    """An exception in words: an OSError's strerror, else its message, else its type."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


class CpuBudget:
    """A token bucket of CPU seconds: filled at `share` of the wall clock up to `burst`,
    drained by what updates cost (`charge`: the snapshot, and the screen's redraw with the
    new model). Reading the log is not counted: a log that grows fast is read at once all
    the same; only its screen updates are spaced."""

    def __init__(
        self,
        share: float = CPU_SHARE,
        burst: float = CPU_BURST_S,
        max_wait: float = MAX_WAIT_S,
        max_share: float = MAX_SHARE,
    ) -> None:
        self.share = share
        self.burst = burst
        self.max_wait = max_wait
        self.max_share = max_share
        self._lock = threading.Lock()
        self.refill()

    def refill(self) -> None:
        """Full again, counting from now (what reading the file cost is not following it)."""
        with self._lock:
            self.tokens = self.burst
            self._wall = time.monotonic()
            self._spent = 0.0  # charged since an update last could go

    def charge(self, seconds: float) -> None:
        """An update cost this much CPU (any thread). What it owes is paid back by waiting
        max_wait at most, or spent / max_share if longer."""
        with self._lock:
            self._spent += seconds
            wait = max(self.max_wait, self._spent / self.max_share)
            self.tokens = max(-self.share * wait, self.tokens - seconds)

    def wait_s(self) -> float:
        """How long until an update may go (0: now)."""
        with self._lock:
            wall = time.monotonic()
            self.tokens = min(self.burst, self.tokens + self.share * (wall - self._wall))
            self._wall = wall
            if self.tokens >= 0:
                self._spent = 0.0
                return 0.0
            return -self.tokens / self.share


class LiveLog:
    """Reads a source until stopped, calling `on_update` with throttled snapshots.

    Args:
        source: the input.
        on_update: called (from the reading thread) with each new Update.
        workers_per_gpu: passed to the builder.
        follow: keep reading after the end (False: read what there is, then stop).
        ended: says when the writer of a growing file is done (the demo, --replay): once
            read to its end, the input is finished.
    """

    def __init__(
        self,
        source: Source,
        on_update: Callable[[Update], None],
        workers_per_gpu: int | None = None,
        follow: bool = True,
        ended: Callable[[], bool] | None = None,
    ) -> None:
        self.source = source
        self.ended = ended
        self.on_update = on_update
        self.workers_per_gpu = workers_per_gpu
        self.follow = follow
        self.builder = self._new_builder()
        self.stop = threading.Event()
        self._read_stop = StopFlag()  # set with `stop`: the span being read ends at once
        self._snapshot_cost = 0.0
        self._snapshot_bytes = 0  # bytes read when the last model was made
        self.budget = CpuBudget()
        self._last_model: LogModel | None = None
        self.errors = 0  # exceptions from the builder, survived (tests and the soak read it)
        self._error_note = ""  # said once, then kept in the status
        self.core_restarts = 0  # times the core failed and the input was read again
        self._core_failure = ""  # why the core failed, once it failed for good
        self._core_note = ""  # why the core failed, when the input was read again
        # a new run began and no update has said so yet (each publish that can says it)
        self._restarted = False

    def halt(self) -> None:
        """Ask the loop to end (it does within a poll, or within a piece of a span)."""
        self.stop.set()
        self._read_stop.set()
        self.source.wake()

    def _new_builder(self) -> LogBuilder:
        return LogBuilder(source=self.source.name, workers_per_gpu=self.workers_per_gpu)

    def _failed(self, exc: Exception) -> None:
        """A line the builder could not take: count it, say so once, follow on.

        Any exception, not a known few: whatever one bad line does to the builder must not
        end following (the lines after it are read all the same).
        """
        self.errors += 1
        if not self._error_note:
            self._error_note = f"a line could not be read ({type(exc).__name__}: {exc}); skipped"

    def _feed(self, data: bytes) -> bool:
        """Feed `data`; False when the core failed on it and could not be brought back."""
        for pos in range(0, len(data), FEED_SLICE):
            try:
                self.builder.feed(data[pos : pos + FEED_SLICE])
            except CoreError as exc:
                # the scanner refuses every call after a failure: the read again covers
                # what is left of `data` (the source has it all)
                return self._read_again(exc)
            except Exception as exc:
                self._failed(exc)
            if len(data) > FEED_SLICE:
                time.sleep(YIELD_S)  # let the screen thread take the interpreter
        return True

    def _feed_read(self, read: TailRead) -> tuple[bool, bool]:
        """Feed what a poll gave (its bytes, or a span of the file to read). Whether the
        core took them (False as for `_feed`), and whether bytes were given back to the
        source for the next poll.

        Raises: OSError: a span could not be read (the bytes before it are read again, the
            span at the next poll).
        """
        span = read.span
        if span is None:
            return self._feed(read.data), False
        if not self.builder.reads_spans:
            # the tracing lines are looked at too: a first piece is read here, the rest
            # given back (the core reads it once a TIMELINE line was read)
            try:
                data = os.pread(span.fd, min(span.length, SPAN_MIN_BYTES), span.offset)
            except OSError:
                self.source.give_back(span)
                raise
            self.source.give_back(span, data)
            return self._feed(data), len(data) < span.length
        before = self.builder.bytes_read
        try:
            self.builder.feed_span(span.fd, span.offset, span.length, self._read_stop)
        except CoreError as exc:
            return self._read_again(exc), False
        except OSError:
            # the core took the bytes it read before the error, as a feed of them would
            # have: the next poll gives the rest of the span again
            self.source.give_back(span, self.builder.bytes_read - before)
            raise
        return True, False

    def _read_again(self, exc: CoreError) -> bool:
        """The core failed (a bug): a new scanner reads what was read from the start. False
        when it fails again on those bytes, or has failed too often: following stops."""
        why = f"{exc}"
        if self.core_restarts >= MAX_CORE_RESTARTS:
            self._core_failure = why
            return False
        self.core_restarts += 1
        if not self._refeed(why):
            return False
        self._core_note = why
        return True

    def _refeed(self, why: str) -> bool:
        """A new builder fed what the source gave so far, again; False when the core fails
        on it or it cannot be read again (said; `why`: what made it needed)."""
        self.builder = self._new_builder()  # the last model stays shown until the next
        try:
            for chunk in self.source.read_again():
                self.builder.feed(chunk)
        except CoreError as again:
            self._core_failure = f"{again}"
            return False
        except OSError as error:  # the bytes cannot be had again: nothing to follow
            cannot = f"the log cannot be read again: {_reason(error)}"
            self._core_failure = f"{why}; {cannot}" if why else cannot
            return False
        return True

    def _flush(self) -> bool:
        """Attribute the timing lines kept back; whether there were any (the core failing
        here is a failure of the read: the input is read again)."""
        try:
            return self.builder.flush_pending()
        except CoreError as exc:
            self._read_again(exc)
            return True

    def _publish(
        self,
        state: tuple[InputState, str],
        loading: float | None,
        finished: bool,
        following: bool = True,
        progress_only: bool = False,
        behind: bool = False,
    ) -> None:
        """Hand the screen a model of what was read (`progress_only`, while a long file is
        read: the last model again, with how far the read is; `behind`: bytes that were
        there wait to be read), saying a new run that no update has said yet. `state`: the
        input's, and what it needs to be said."""
        if self.stop.is_set():
            # halted (the viewer quit, perhaps mid-read, and closed the file): nobody waits
            # for a model, and one of a long log takes a second to make
            return
        restarted, self._restarted = self._restarted, False
        if self._core_failure:
            # the scanner refuses every call: the last model that could be made stays
            model = self._last_model or LogBuilder(source=self.source.name).snapshot()
            failed = InputState.CORE_FAILED, self._core_failure
            self.on_update(Update(model, *failed, restarted, None, True, False, self._error_note))
            return
        if self._core_note and state[0] is InputState.FOLLOWING:
            state = (InputState.CORE_RESTARTED, self._core_note)
        if progress_only and self._last_model is not None:
            self.on_update(
                Update(
                    self._last_model,
                    *state,
                    restarted,
                    loading,
                    False,
                    False,
                    self._error_note,
                    behind=behind,
                )
            )
            return
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            model = self.builder.build() if finished else self.builder.snapshot()
            # the lanes' segments gathered here (the core, without the GIL), not on the
            # screen's thread at its first draw
            for lane in model.lanes:
                _ = lane.chunks
            self._last_model = model
        except Exception as exc:
            # keep showing the last model that could be built
            self._failed(exc)
            model = self._last_model or LogBuilder(source=self.source.name).snapshot()
        self._snapshot_cost = time.perf_counter() - start
        self._snapshot_bytes = self.builder.bytes_read
        self.budget.charge(time.thread_time() - cpu)
        self.on_update(
            Update(
                model,
                *state,
                restarted,
                loading,
                finished,
                following,
                self._error_note,
                behind=behind and not finished,
            )
        )

    def _nothing_from_pipe(self) -> bool:
        """A stream (standard input) that has given no byte yet."""
        return isinstance(self.source, StreamSource) and self.builder.bytes_read == 0

    def _unreadable(self, state: tuple[InputState, str], exc: OSError) -> tuple[InputState, str]:
        """A read failed (a flaky disk, a file whose permissions changed): said, then a wait
        before the next try. The state it leaves."""
        if self.stop.is_set():
            return state  # halted: the file was closed under the read, not lost
        unreadable = (InputState.UNREADABLE, f"{exc.strerror or exc}")
        if state != unreadable:
            state = unreadable
            # a new run not said yet is said now; what the file holds past the error is not
            # known: behind (the exporter serves no figure of a first read cut short)
            self._publish(state, None, finished=False, behind=True)
        self.source.wait(POLL_S * 5)
        return state

    def run(self) -> None:
        """The reading loop (run it in a thread)."""
        state: tuple[InputState, str] = (InputState.FOLLOWING, "")
        dirty = True
        self._restarted = False
        new_run_at = 0.0  # when the log was last truncated or rotated
        last_publish = 0.0
        last_model = 0.0  # when a model was last made while a long file was read
        last_data = time.perf_counter()
        size = self.source.size_hint()
        while not self.stop.is_set():
            # asked before the poll: a writer done then has nothing left that this poll misses
            writer_done = self.ended is not None and self.ended()
            try:
                read = self.source.poll()
            except OSError as exc:
                state = self._unreadable(state, exc)
                continue
            if read.restart:
                if dirty:
                    # the lines of the run that ended that no update has shown yet: shown
                    # (and counted by the metrics) before the new run's
                    self._flush()
                    self._publish(state, None, finished=False)
                self.builder = self._new_builder()
                self._last_model, self._error_note, self._core_note = None, "", ""
                self._restarted, dirty = True, True
                truncated = read.state is TailState.TRUNCATED
                state = (InputState.TRUNCATED if truncated else InputState.ROTATED, "")
                new_run_at = time.perf_counter()
            elif read.state is TailState.DELETED and isinstance(self.source, StreamSource):
                # a pipe closed, or a compressed file read to its end (or reading stopped)
                if self.source.left_out and not self._error_note:
                    self._error_note = self.source.left_out  # said as a skipped line is
                if self.source.stopped:
                    state = (InputState.STOPPED, self.source.stopped)
                elif self.source.fd >= 0:
                    state = (InputState.CLOSED, "")
                self._publish(state, None, True)
                return
            elif read.state is TailState.DELETED:
                if state[0] is not InputState.MOVED:
                    state, dirty = (InputState.MOVED, ""), True
            elif read.state is TailState.UNAVAILABLE:
                if state != (InputState.UNAVAILABLE, read.note):
                    state, dirty = (InputState.UNAVAILABLE, read.note), True
            elif state[0] in BACK_WHEN_READABLE:
                state, dirty = (InputState.FOLLOWING, ""), True  # a readable file is back
            elif state[0] in NEW_RUN and time.perf_counter() - new_run_at >= NEW_RUN_NOTE_S:
                state, dirty = (InputState.FOLLOWING, ""), True  # the new run is said
            given_back = False  # bytes the poll gave were given back: read them at once
            if read.got:
                try:
                    fed, given_back = self._feed_read(read)
                except OSError as exc:
                    state = self._unreadable(state, exc)
                    continue
                if not fed:
                    self._publish(state, None, finished=True)
                    return  # the core failed again: the last model stays, following stops
                dirty = True
                last_data = time.perf_counter()
            elif time.perf_counter() - last_data >= IDLE_FLUSH_S and self._flush():
                dirty = True
            catching_up = read.more or given_back
            if catching_up and size is None and (hint := self.source.size_hint()):
                # behind a log that grows faster than it is read (or that grew by more than a
                # read at once): say how far at once, as when it was opened, not LIVE or IDLE
                # (a pipe has no size: it is shown as it comes)
                size, last_publish, last_model = hint, 0.0, 0.0
            now = time.perf_counter()
            # updates as often as the CPU budget allows (a snapshot of a long log costs ~10 ms,
            # the screen's update a few times that)
            interval = max(MIN_UPDATE_S, (now - last_publish) + self.budget.wait_s())
            if catching_up and size:
                # reading what was already there: say how far, build the model at the end.
                # A model of what was read so far costs in proportion to it (seconds, on a
                # long log): one is made only while it costs under a twentieth of the time
                # since the last one, else the last model is shown with the progress
                if last_publish == 0.0 or now - last_publish >= PROGRESS_S:
                    read_now = self.builder.bytes_read
                    guess = self._snapshot_cost * read_now / max(self._snapshot_bytes, 1)
                    again = last_model == 0.0 or (
                        now - last_model >= max(MIN_REMODEL_S, REMODEL_TIMES * guess)
                    )
                    self._publish(
                        state,
                        min(1.0, read_now / size),
                        finished=False,
                        following=False,
                        progress_only=not again,
                        behind=True,
                    )
                    dirty, last_publish = False, time.perf_counter()
                    if again:
                        last_model = last_publish
                continue
            # the file read to its end (size still set): its figures at once
            if dirty and (size is not None or now - last_publish >= interval):
                if not self.follow and not catching_up:
                    self._publish(state, None, finished=True)
                    return
                self._publish(
                    state,
                    None,
                    finished=False,
                    following=size is None,
                    # a pipe that has given nothing yet may be about to give its backlog
                    # (journalctl starting): what it holds is not read yet either
                    behind=catching_up or self._nothing_from_pipe(),
                )
                dirty, last_publish = False, time.perf_counter()
                if size is not None:
                    self.budget.refill()  # the file is read: following starts now
                size = None
            if catching_up:
                continue
            if writer_done and not read.got and not dirty:
                self._flush()
                self._publish(state, None, finished=True)
                return
            wait = max(interval - (time.perf_counter() - last_publish), 0.0) if dirty else 3600.0
            if state[0] in NEW_RUN:  # woken to end the new run's note, lines or not
                wait = min(wait, max(new_run_at + NEW_RUN_NOTE_S - time.perf_counter(), 0.0))
            self.source.wait(wait)
