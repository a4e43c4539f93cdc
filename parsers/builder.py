"""The incremental log builder: bytes in (any chunking), a `LogModel` out.

The byte-level work (physical lines, capture prefixes, splices, parsing, the attribution of
the C++ timing lines) is done by the compiled core, `parsers._core`; this module keeps the
builder's Python interface and hands the core's columns to the analysis.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from parsers._core import Counts, RunFacts, Scanner, StopFlag
from parsers.analysis import LiveAnalysis, build_model
from parsers.linefacts import CpuLines, LineFacts, LineStarts
from parsers.model import F64, I32, I64, LineCounts
from parsers.records import FLOAT_FIELDS, Columns, LiveSnapshot
from parsers.regular import open_regular
from parsers.rows import distinct
from parsers.tracing import TracingScanner, with_traced

if TYPE_CHECKING:
    from parsers.model import LogModel

_EPOCH = datetime(1970, 1, 1)


# the longest a TIMELINE offset can be (the core's MAX_STAMP_MS): a wall clock this near the
# ends of the calendar (a log stamped 9999-12-31) has offsets past them, and is no clock
_LONGEST_OFFSET = timedelta(milliseconds=1_000_000_000_000)


def _wall(anchor: tuple[int, bool] | None) -> datetime | None:
    """The core's wall anchor (µs since 1970, zone known) as a datetime (naive: local); None
    when the calendar cannot hold every time of the run on that clock."""
    if anchor is None:
        return None
    us, aware = anchor
    try:
        wall = _EPOCH + timedelta(microseconds=us)
        _ = (wall - _LONGEST_OFFSET, wall + _LONGEST_OFFSET)
    except OverflowError:
        return None
    return wall.replace(tzinfo=UTC) if aware else wall


def counts_of(c: Counts) -> LineCounts:
    """The core's line counts as the model keeps them."""
    return LineCounts(
        timeline=c.timeline,
        cuzk_timing=c.cuzk_timing,
        stdout=c.stdout,
        spliced=c.spliced,
        malformed=c.malformed,
        other=c.other,
    )


class Run:
    """What one run of the log holds, for the analysis (the daemon restarted between runs).

    Args:
        core: the compiled core.
        run: the run's index, or None for the run being read.
        source: the log's name.
        workers_per_gpu: as given to the builder.
    """

    def __init__(
        self, core: Scanner, run: int | None, source: str, workers_per_gpu: int | None
    ) -> None:
        self._core = core
        self._run = run
        self.source = source
        self.workers_per_gpu = workers_per_gpu
        self._jobs: list[str] = []
        self._kinds: list[str] = []
        self._names_run = 1  # the run the names are of (the core's run count then)

    def columns(self) -> Columns:
        """A copy of the run's records (the builder goes on writing its own)."""
        return self._wrap(*self._core.columns(self._run))

    def _wrap(
        self,
        floats: dict[str, F64],
        ints: dict[str, npt.NDArray[np.integer[Any]]],
        names: tuple[int, list[str], list[str]] | None = None,
    ) -> Columns:
        # names: the run count and the new names, when the core gave them already
        if self._run is None:
            runs = self._core.run_count() if names is None else names[0]
            if runs != self._names_run:
                # the daemon restarted: the new run numbers its jobs from 0 again
                self._names_run = runs
                self._jobs, self._kinds = [], []
            jobs, kinds = self._core.new_names() if names is None else names[1:]
            self._jobs.extend(jobs)
            self._kinds.extend(kinds)
        else:
            self._jobs, self._kinds = self._core.run_names(self._run)
        return Columns(
            floats={name: floats[name] for name in FLOAT_FIELDS},
            job=ints["job"].astype(np.int32, copy=False),
            partition=ints["partition"].astype(np.int32, copy=False),
            kind=ints["kind"].astype(np.int32, copy=False),
            worker=ints["worker"].astype(np.int32, copy=False),
            start_line=ints["start_line"].astype(np.int64, copy=False),
            end_line=ints["end_line"].astype(np.int64, copy=False),
            jobs=tuple(self._jobs),
            kinds=tuple(self._kinds),
        )

    @property
    def counts(self) -> LineCounts:
        """How many lines of each sort were read."""
        return counts_of(self._core.counts(self._run))

    @property
    def worker_gpu(self) -> dict[int, int]:
        """The worker → GPU map the log gave (stdout lines or spans)."""
        return dict(self._core.worker_gpu(self._run))

    def gpu_of(self, worker: int | None, known: dict[int, int] | None = None) -> int:
        """The GPU a worker runs on (stdout map, else --workers-per-gpu, else 0)."""
        if worker is None or worker < 0:
            return 0
        gpu = (self.worker_gpu if known is None else known).get(worker)
        if gpu is not None:
            return gpu
        if self.workers_per_gpu:
            return worker // self.workers_per_gpu
        return 0

    def gpus_of(self, workers: I32 | I64, table: dict[int, int] | None = None) -> I64:
        """`gpu_of` for an array of workers (-1 stays -1), without a table sized by ids
        (`table`: the worker → GPU map, when read already)."""
        if len(workers) == 0:
            return np.zeros(0, dtype=np.int64)
        # each distinct worker looked up once, then found by a binary search over the few:
        # numpy.unique's inverse sorts every row (~4 ms of a 157,000-row report, in line)
        known = distinct(workers)
        table = self.worker_gpu if table is None else table
        mapped = np.array(
            [self.gpu_of(w, table) if w >= 0 else -1 for w in known.tolist()], dtype=np.int64
        )
        out: I64 = mapped[np.searchsorted(known, workers)]
        return out

    @property
    def wall_anchor(self) -> datetime | None:
        """The wall clock of offset 0, when the log gives it (naive: a local time)."""
        return _wall(self._core.wall_anchor(self._run))

    def kernel_doubt_ms(self, gpu: int) -> tuple[float, float]:
        """Kernel ms given to `gpu` that another GPU could own, and kernel ms given
        elsewhere that it could own (the lines the log leaves ambiguous)."""
        return self._core.kernel_doubt(gpu, self._run)

    @property
    def max_stamp(self) -> int:
        """The latest TIMELINE stamp read (-1: none)."""
        return self._core.run_facts(self._run).max_stamp

    @property
    def engine_seen(self) -> bool:
        """A stdout line of the cuzk engine was read."""
        return self._core.run_facts(self._run).engine_seen

    @property
    def lock_lines_seen(self) -> bool:
        """The engine prints lock lines (since 2026-03-13): holders are known exactly."""
        return self._core.run_facts(self._run).lock_lines_seen

    @property
    def unattributed_timing_lines(self) -> int:
        """C++ timing lines that matched no GPU interval."""
        return self._core.run_facts(self._run).unattributed

    @property
    def unattributed_kernel_ms(self) -> float:
        """Kernel time in the timing lines that matched no GPU interval."""
        return self._core.run_facts(self._run).unattributed_kernel_ms

    @property
    def kernel_lines(self) -> tuple[int, int, int]:
        """The kernel lines read: NTT, batch additions, tail MSMs."""
        return self._core.run_facts(self._run).kernel_lines

    @property
    def partial_bytes(self) -> int:
        """Bytes of an incomplete last line waiting for its newline (the current run's)."""
        return self._core.partial_bytes if self._run is None else 0


class LogBuilder(Run):
    """Feed bytes as they come; `snapshot()` or `build()` gives the model.

    Args:
        source: a name for the log (shown in reports).
        workers_per_gpu: for logs without the stdout worker lines: worker W is on GPU
            W // workers_per_gpu. None puts every unmapped worker on GPU 0.
    """

    def __init__(
        self, source: str = "", workers_per_gpu: int | None = None, scanner: Scanner | None = None
    ) -> None:
        # scanner: one that has already read (some of) the log, e.g. a ReadAhead's
        super().__init__(scanner or Scanner(workers_per_gpu), None, source, workers_per_gpu)
        self._run_models: dict[int, LogModel] = {}  # finished runs do not change
        self._final: Columns | None = None  # the columns the core handed over
        self.live = LiveAnalysis()
        # the jobs of the tracing lines, read while no TIMELINE line has been (after one,
        # the TIMELINE figures tell the proofs and the scanner is dropped)
        self._tracing: TracingScanner | None = TracingScanner()
        self._cpu = CpuLines()  # the core's CPU path figures, fetched as they come

    # -- input --------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the log (any size, cut anywhere)."""
        if data:
            self._core.feed(bytes(data))
            self.feed_tracing(data)

    @property
    def reads_spans(self) -> bool:
        """Bytes of a file can be given by place (`feed_span`): the tracing lines are no
        longer looked at (a TIMELINE line was read), so the core alone reads them."""
        return self._tracing_wanted() is None

    def feed_span(self, fd: int, offset: int, length: int, stop: StopFlag | None = None) -> int:
        """Take the next bytes of the log: `length` bytes from `offset` of the open file
        `fd` (fewer where it ends first, or once `stop` is set: from another thread, a
        reader that quits), read by the core without the GIL, while `reads_spans`. Returns
        the bytes read.

        Raises: OSError (the file could not be read: the bytes before the error were taken),
            CoreError.
        """
        return self._core.feed_span(fd, offset, length, stop)

    @property
    def timeline_seen(self) -> bool:
        """A TIMELINE line has been read."""
        return self._core.run_count() > 1 or self._core.counts(None).timeline > 0

    def _tracing_wanted(self) -> TracingScanner | None:
        """The tracing scanner while no TIMELINE line has been read (once one has, it is
        dropped: None)."""
        if self._tracing is not None and self.timeline_seen:
            self._tracing = None
        return self._tracing

    def feed_tracing(self, data: bytes) -> None:
        """Give the tracing scanner bytes the core has read, while no TIMELINE line has been."""
        tracing = self._tracing_wanted()
        if tracing is not None:
            tracing.feed(bytes(data))

    def read_tracing(self, path: Path) -> None:
        """Read the tracing lines of a file the core read by itself (a ReadAhead's), when it
        held no TIMELINE line."""
        tracing = self._tracing_wanted()
        if tracing is None:
            return
        fd = open_regular(path)
        try:
            while chunk := os.read(fd, 1 << 22):
                tracing.feed(chunk)
        finally:
            os.close(fd)

    def live_snapshot(self, rows: I64 | None, first_new: int) -> LiveSnapshot:
        """Records `rows` and those from `first_new` on (all of them if `rows` is None), and
        the run's facts, in one call to the core."""
        d = self._core.live_snapshot(rows, first_new)
        facts: RunFacts = d["facts"]
        jobs, kinds = d["names"]
        return LiveSnapshot(
            runs=d["runs"],
            touched=d["touched"],
            records=d["records"],
            columns=self._wrap(d["floats"], d["ints"], (d["runs"], jobs, kinds)),
            open_rows=d["open"],
            counts=counts_of(d["counts"]),
            max_stamp=facts.max_stamp,
            engine_seen=facts.engine_seen,
            lock_lines_seen=facts.lock_lines_seen,
            unattributed_timing_lines=facts.unattributed,
            unattributed_kernel_ms=facts.unattributed_kernel_ms,
            kernel_lines=facts.kernel_lines,
            worker_gpu=dict(d["worker_gpu"]),
            wall_anchor=_wall(d["wall_anchor"]),
            partial_bytes=d["partial_bytes"],
            kernel_doubt={g: (less, more) for g, less, more in d["kernel_doubt"]},
        )

    def record_count(self) -> int:
        """How many records the run being read has (without copying any)."""
        return self._core.record_count()

    def finish(self) -> None:
        """End of input: attribute the waiting timing lines (a partial last line stays unread)."""
        self._core.finish()

    def flush_pending(self) -> bool:
        """Attribute the timing lines kept back for look-ahead (the input went quiet).

        Returns True if there were any.
        """
        return self._core.flush_pending()

    def snapshot(self, finished: bool = False, drawn: bool = True) -> LogModel:
        """The model of what was read so far.

        Args:
            finished: the log is complete (what is under way as it ends is running
                when the log ends, not failed: docs/analysis.md#what-is-read-from-the-log).
            drawn: with the lanes and the synthesis steps (a finished model for the JSON
                report does without: its `lanes` and `synth_times` are empty).
        """
        models = self._runs(finished, drawn)
        facts = self.line_facts()
        if len(models) == 1:
            return replace(models[0], line_facts=facts)
        # the daemon restarted: each run apart, one after the other on the time axis
        from parsers.hosts import RUNS, merge

        names = [f"run {k + 1}" for k in range(len(models))]
        merged = merge(models, names, align=RUNS).model
        return replace(
            merged,
            source=self.source,
            run_lines=self.run_lines(),
            run_anchors=tuple(m.wall_anchor for m in models),
            line_facts=facts,
        )

    def line_facts(self) -> LineFacts:
        """What the core noted of the log's physical lines so far (CPU path figures, line
        starts): the figures read since the last call are fetched, not all of them."""
        # the records handed over (`build(release=True)`): nothing more is read
        self._cpu.extend(*self._core.cpu_lines(self._cpu.count), final=self._final is not None)
        self._core.let_go_cpu_lines(self._cpu.count)  # held here now, not twice
        lines, offsets, read, signature = self._core.line_index()
        starts = LineStarts(tuple(lines.tolist()), tuple(offsets.tolist()), read, signature)
        return LineFacts(self._cpu.figures(), starts)

    def _runs(self, finished: bool, drawn: bool) -> list[LogModel]:
        """Each run's model, the current one last (as `snapshot`)."""
        runs = self._core.run_count()
        current = (
            build_model(self, finished=True, drawn=drawn)
            if finished or self._final is not None
            else self.live.model(self)
        )
        if runs == 1 and self._tracing is not None:
            current = with_traced(current, self._tracing.result())
        models = []
        for k in range(runs - 1):
            model = self._run_models.get(k)
            if model is None:
                run = Run(self._core, k, self.source, self.workers_per_gpu)
                model = build_model(run, finished=True, drawn=drawn, stopped=True)
                if drawn:  # kept for the snapshots to come
                    self._run_models[k] = model
            models.append(model)
        return [*models, current]

    def run_lines(self) -> tuple[int, ...]:
        """The physical line each run begins at."""
        runs = self._core.run_count()
        return (
            *(self._core.run_first_line(k) for k in range(runs - 1)),
            self._core.run_first_line(),
        )

    def build_runs(self, drawn: bool = True) -> list[LogModel]:
        """End of input: each run's finished model apart, in file order (one for a log whose
        daemon never restarted); to put the runs beside other logs' (parsers/hosts.py)."""
        self.finish()
        facts = self.line_facts()
        models = self._runs(finished=True, drawn=drawn)
        if len(models) == 1:
            return [replace(models[0], line_facts=facts)]
        starts = self.run_lines()
        return [
            replace(m, line_facts=replace(facts, run=k), first_line=starts[k])
            for k, m in enumerate(models)
        ]

    def build(self, release: bool = False, drawn: bool = True) -> LogModel:
        """End of input: attribute what waits and return the finished model.

        Args:
            release: the log is read once (the report): the core hands its columns over
                instead of copying them, so the analysis does not run beside a second copy;
                the builder cannot be fed again.
            drawn: with the lanes and the synthesis steps (the JSON report does without).
        """
        # the input's end first: only then is every run known (lines held back to tell the
        # capture's form may hold a restart: counted before, a second run's report failed
        # on columns already handed over)
        self.finish()
        if release and self._final is None and self._core.run_count() == 1:
            self._final = self._wrap(*self._core.hand_over())
        return self.snapshot(finished=True, drawn=drawn)

    def columns(self) -> Columns:
        """The records: a copy, or what the core handed over (`build(release=True)`)."""
        return self._final if self._final is not None else super().columns()

    # -- what the analysis reads (the current run: Run's methods) -----------------------------

    @property
    def bytes_read(self) -> int:
        """Bytes fed so far."""
        return self._core.bytes_read

    @property
    def lines_read(self) -> int:
        """Physical lines read so far."""
        return self._core.lines_read
