"""The model as CSV tables: intervals, phase segments, gaps, proofs and the busy split, their
rows written from the model's columns a chunk at a time by the core (as Python's csv module
writes them, but for the line end: the cells a spreadsheet and a shell can take, `\\n`
after each row, as awk, cut and sort split lines).

With a window [t0, t1), a table keeps the rows that overlap it, whole (a row is a record
of the log, not a piece of the timeline: its times stay as the log gives them); the busy
split is that of the window.
"""

from __future__ import annotations

import contextlib
import csv
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

import numpy as np
import numpy.typing as npt

from parsers import _core
from parsers.breakdown import (
    BUSY_KEYS,
    LOCK_KEYS,
    busy_breakdown,
    busy_split_ms,
    estimated_keys,
    lock_unmeasured,
    unmeasured_keys,
)
from parsers.model import CAUSES, PHASE_KEYS, PHASES, Breakdown, LogModel, Phase, ProofTable
from parsers.proofs import failed_proofs, proof_ends
from parsers.rows import distinct
from parsers.sanitize import visible
from parsers.trace_tracks import Names
from parsers.writing import (
    OutputBatch,
    WriteRefused,
    check_folder,
    check_target,
    same_file,
    through_links,
)

I64 = npt.NDArray[np.int64]
CSV_FILES = ("intervals.csv", "phases.csv", "gaps.csv", "proofs.csv", "busy_split.csv")
CSV_ROWS = 65_536  # rows formatted at a time
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# the core's value codes (core/src/rowtext.rs Value::from_code)
INT, OPT_INT, STR, CSV_FLOAT, ROUND3, INT_OR_NONE = 0, 1, 2, 5, 6, 7
NONE = np.iinfo(np.int64).min  # INT_OR_NONE's none


def csv_text(text: str) -> str:
    """A text cell safe to open in a spreadsheet and to `cat`: controls made visible, and a
    cell a spreadsheet would take for a formula (OWASP: one starting with = + - @, a tab or
    a carriage return) led by an apostrophe, which spreadsheets show as text."""
    text = visible(text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_number(x: float) -> int | float:
    """`x` as the CSV writes a number: a whole number as an integer (`14130`), any other as
    Python writes it (`0.375`): no column mixes `156374` and `111536.0` (the core's
    `push_csv_number` writes the same)."""
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else x


def quoted(cell: str) -> str:
    """`cell` as csv's default dialect writes it: in quotes (its own doubled) when it holds
    the delimiter, a quote or a line break."""
    if any(c in cell for c in ',"\r\n'):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def check_csv_targets(folder: Path, inputs: Sequence[Path] = ()) -> list[Path]:
    """The CSV files `write_csv` would write in `folder`, each checked as a target.

    Raises:
        WriteRefused: `folder` is not a folder, or one of its files is an input or not a
            regular file.
    """
    check_folder(folder)
    out = [folder / name for name in CSV_FILES]
    seen: list[tuple[Path, Path]] = []  # (a file written, what it names)
    for path in out:
        # a file that is a symlink is written through (see OutputBatch.open): what it names
        # is checked, before anything is read
        named = through_links(path)
        if os.path.islink(path) and not named.parent.is_dir():  # a new folder: made later
            raise WriteRefused(f"will not write {path}: it links into no folder ({named.parent})")
        check_target(named, inputs)
        for other, its in seen:
            # two of the files one file: the second written would replace the first's table
            if same_file(its, named):
                raise WriteRefused(
                    f"will not write {path}: it is the same file as {other.name} ({named}), "
                    "which is written too"
                )
        seen.append((path, named))
    return out


def write_csv(
    model: LogModel,
    folder: Path,
    inputs: Sequence[Path] = (),
    t0: float = -math.inf,
    t1: float = math.inf,
) -> list[Path]:
    """Write intervals, phase segments, gaps, proofs and the busy split as CSV files in
    `folder` (all of them whole or none; every target is checked against `inputs` before
    anything is written); with a window [t0, t1), the rows that overlap it."""
    out = check_csv_targets(folder, inputs)
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with OutputBatch(inputs) as batch:
            tables = _Tables(model, t0, t1)
            for path, write in zip(out, tables.writers(), strict=True):
                with batch.open(path, binary=True) as fh:
                    write(fh)
    except BaseException:
        # nothing written: the folders made for it go too (each only if still empty)
        for made_folder in made:
            with contextlib.suppress(OSError):
                made_folder.rmdir()
        raise
    return out


def _overlap(s: np.ndarray, e: np.ndarray, t0: float, t1: float) -> npt.NDArray[np.bool_]:
    """Which spans [s, e] overlap [t0, t1) (a NaN end: the span is open)."""
    if not (math.isfinite(t0) or math.isfinite(t1)):
        return np.ones(len(s), dtype=bool)
    end = np.where(np.isnan(e), np.inf, e)
    return (end >= t0) & (s < t1)


Template = tuple[list[tuple[bytes, int, int]], bytes]


def _template(values: Sequence[tuple[int, int]]) -> list[Template]:
    """One row of cells: (value code, column) each, comma-separated."""
    fields = [(b"" if k == 0 else b",", how, col) for k, (how, col) in enumerate(values)]
    return [(fields, b"\n")]


class _Tables:
    """The five tables of a model (over a window), each written by a function of a file."""

    def __init__(self, model: LogModel, t0: float, t1: float) -> None:
        self.model = model
        self.t0, self.t1 = t0, t1
        t = model.parts
        names = Names()
        self.empty = names.id("")
        self.jobs = names.extend([csv_text(j) for j in t.jobs])
        self.kinds = names.extend([csv_text(k) for k in t.kinds])
        gpus = distinct(np.concatenate((t.gpu.astype(np.int64), model.gaps.gpu.astype(np.int64))))
        self.gpu_ids = np.full(int(gpus.max()) + 2 if len(gpus) else 1, -1, dtype=np.int64)
        for g in gpus[gpus >= 0].tolist():
            self.gpu_ids[g] = names.id(csv_text(model.gpu_label(g)))
        self.phase_ids = np.array(
            [names.id(PHASES[Phase(p)].key) if p in PHASES else -1 for p in range(max(Phase) + 1)],
            dtype=np.int64,
        )
        self.causes = np.array([names.id(c or "") for c in CAUSES], dtype=np.int64)
        proofs = ProofTable.of(model.proofs)
        self.proofs, self.proof_failed = proofs, failed_proofs(model)
        self.proof_jobs = names.extend([csv_text(j) for j in proofs.jobs])
        self.proof_kinds = names.extend([csv_text(k) for k in proofs.kinds])
        # of several logs or runs, the log each proof is from (a job id two share is two
        # proofs: parsers/proofs.py), named as the model names its logs
        self.proof_logs: I64 | None = None
        self.job_logs: I64 | None = None  # ... and each job of the partitions'
        if model.proof_hosts is not None and model.job_hosts is not None:
            base = names.extend([csv_text(name) for _, name in model.logs()])
            self.proof_logs = base + model.proof_hosts.astype(np.int64)
            self.job_logs = base + model.job_hosts.astype(np.int64)
        cells = [quoted(s).encode("utf-8", "surrogateescape") for s in names.items]
        ends = np.cumsum(np.fromiter((len(c) for c in cells), dtype=np.int64, count=len(cells)))
        self.blob, self.ends = b"".join(cells), ends

    def writers(self) -> list[Callable[[IO[bytes]], None]]:
        return [self._intervals, self._phases, self._gaps, self._proofs, self._busy_split]

    def _rows(
        self,
        fh: IO[bytes],
        header: Sequence[str],
        template: list[Template],
        n: int,
        columns: Callable[[int, int], tuple[list[I64], list[np.ndarray]]],
    ) -> None:
        """Write the header, then rows 0..n in chunks, `columns(lo, hi)` giving each chunk's
        (integer columns, float columns)."""
        fh.write((",".join(header) + "\n").encode())
        writer = _core.RowWriter(template, self.blob, self.ends, b"")
        kinds = np.zeros(CSV_ROWS, dtype=np.uint8)
        for lo in range(0, n, CSV_ROWS):
            hi = min(lo + CSV_ROWS, n)
            ints, floats = columns(lo, hi)
            fh.write(writer.rows(kinds[: hi - lo], ints, floats, b""))

    def _job(self, rows: I64) -> I64:
        return self.jobs + self.model.parts.job[rows].astype(np.int64)

    def _gpu(self, rows: I64) -> I64:
        gpu = self.model.parts.gpu[rows].astype(np.int64)
        return np.where(gpu >= 0, self.gpu_ids[gpu], -1)

    def _intervals(self, fh: IO[bytes]) -> None:
        t = self.model.parts
        times = ("synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end")
        stamps = np.column_stack([getattr(t, c) for c in times]) if len(t) else np.zeros((0, 6))
        first = (
            np.nanmin(np.where(np.isnan(stamps), np.inf, stamps), axis=1)
            if len(t)
            else stamps[:, 0]
        )
        last = (
            np.nanmax(np.where(np.isnan(stamps), -np.inf, stamps), axis=1)
            if len(t)
            else stamps[:, 0]
        )
        keep = np.flatnonzero(
            _overlap(first, np.where(np.isinf(last), np.nan, last), self.t0, self.t1)
        )
        logs = self.job_logs
        header = [
            *("index", "job", "partition", "kind", "worker", "gpu", *times, "failed"),
            *("lock_acquired", "unlock", "start_line", "end_line"),
            *(f"{k}_ms" for k in PHASE_KEYS),
            *(("log",) if logs is not None else ()),  # of several logs, the one it is from
        ]
        ints = [(INT, 0), (STR, 1), (OPT_INT, 2), (STR, 3), (OPT_INT, 4), (STR, 5)]
        floats = [(CSV_FLOAT, k) for k in range(6)]
        tail = [(INT, 6), (CSV_FLOAT, 6), (CSV_FLOAT, 7), (OPT_INT, 7), (OPT_INT, 8)]
        sums = [(ROUND3, 8 + k) for k in range(len(PHASE_KEYS))]
        sums += [(STR, 9)] if logs is not None else []
        lock_columns = np.array([k for k, key in enumerate(PHASE_KEYS) if key in LOCK_KEYS])

        def columns(lo: int, hi: int) -> tuple[list[I64], list[np.ndarray]]:
            rows = keep[lo:hi]
            kind = t.kind[rows].astype(np.int64)
            ints = [
                rows,
                self._job(rows),
                t.partition[rows].astype(np.int64),
                np.where(kind >= 0, self.kinds + kind, -1),
                t.worker[rows].astype(np.int64),
                self._gpu(rows),
                t.failed[rows].astype(np.int64),
                # the GPU_START's and GPU_END's lines (0: none), empty where there is none
                _line_or_none(t.start_line[rows]),
                _line_or_none(t.end_line[rows]),
                *((logs[t.job[rows]],) if logs is not None else ()),
            ]
            floats = [getattr(t, c)[rows] for c in times]
            floats += [t.lock_acquired[rows], t.unlock[rows]]
            sums = _phase_sums(self.model, rows)
            # no lock line gave its pre-lock and lock wait: none, not 0
            sums[np.ix_(lock_unmeasured(self.model, rows), lock_columns)] = np.nan
            # a partition that never started on a GPU has no phase at all: none, not 0
            sums[np.isnan(t.gpu_start[rows])] = np.nan
            floats += list(sums.T)
            return ints, [np.ascontiguousarray(f, dtype=np.float64) for f in floats]

        self._rows(fh, header, _template(ints + floats + tail + sums), len(keep), columns)

    def _phases(self, fh: IO[bytes]) -> None:
        t = self.model.parts
        part = t.seg_rows()
        keep = np.flatnonzero(_overlap(t.seg_start, t.seg_end, self.t0, self.t1))
        header = ["index", "job", "partition", "worker", "gpu", "phase", "start", "end", "ms"]
        cells = [(INT, 0), (STR, 1), (OPT_INT, 2), (OPT_INT, 3), (STR, 4), (STR, 5)]
        cells += [(CSV_FLOAT, 0), (CSV_FLOAT, 1), (ROUND3, 2)]

        def columns(lo: int, hi: int) -> tuple[list[I64], list[np.ndarray]]:
            segs = keep[lo:hi]
            rec = part[segs]
            phase = t.seg_phase[segs].astype(np.int64)
            ints = [
                rec,
                self._job(rec),
                t.partition[rec].astype(np.int64),
                t.worker[rec].astype(np.int64),
                self._gpu(rec),
                self.phase_ids[phase],
            ]
            s, e = t.seg_start[segs], t.seg_end[segs]
            return ints, [s, e, e - s]

        self._rows(fh, header, _template(cells), len(keep), columns)

    def _gaps(self, fh: IO[bytes]) -> None:
        gaps = self.model.gaps
        t = self.model.parts
        ranks = gaps.ranks()
        keep = np.flatnonzero(
            _overlap(gaps.start.astype(np.float64), gaps.end.astype(np.float64), self.t0, self.t1)
        )
        header = [
            *("rank", "gpu", "start", "end", "ms", "cause", "crosses_proof_boundary"),
            *("before_job", "before_worker", "before_partition"),
            *("after_job", "after_worker", "after_partition", "after_queued"),
        ]
        cells = [(INT, k) for k in range(7)]
        cells[1] = (STR, 1)
        cells[5] = (STR, 5)
        cells += [(STR, 7), (INT, 8), (OPT_INT, 9), (STR, 10), (INT, 11), (OPT_INT, 12)]
        cells.append((INT_OR_NONE, 13))

        def columns(lo: int, hi: int) -> tuple[list[I64], list[np.ndarray]]:
            g = keep[lo:hi]
            before, after = gaps.before[g], gaps.after[g]
            gpu = gaps.gpu[g].astype(np.int64)
            ints = [
                ranks[g],
                np.where(gpu >= 0, self.gpu_ids[gpu], -1),
                gaps.start[g],
                gaps.end[g],
                gaps.end[g] - gaps.start[g],
                self.causes[gaps.cause[g].astype(np.int64)],
                gaps.crosses[g].astype(np.int64),
                self._job(before),
                t.worker[before].astype(np.int64),
                t.partition[before].astype(np.int64),
                self._job(after),
                t.worker[after].astype(np.int64),
                t.partition[after].astype(np.int64),
                gaps.after_queued[g].astype(np.int64),
            ]
            return ints, []

        self._rows(fh, header, _template(cells), len(keep), columns)

    def _proofs(self, fh: IO[bytes]) -> None:
        p = self.proofs
        # a window keeps the proofs the trace and the proofs lane draw in it: a proof that
        # did not complete ends where they end it (its last stamp, or its log's end)
        ends = proof_ends(self.model, p.last, p.completed, p.seen)
        keep = np.flatnonzero(_overlap(p.first, ends, self.t0, self.t1))
        if math.isfinite(self.t0) or math.isfinite(self.t1):
            keep = keep[~np.isnan(p.first[keep])]  # a proof never begun is in no window
        logs = self.proof_logs
        header = [
            *("job", "kind", "partitions", "first_synth_start", "last_gpu_end"),
            *("completed", "failed"),
            *(("log",) if logs is not None else ()),
        ]
        cells = [
            *((STR, 0), (STR, 1), (INT, 2), (INT_OR_NONE, 3), (INT_OR_NONE, 4)),
            *((INT, 5), (INT, 6)),
            *(((STR, 7),) if logs is not None else ()),
        ]

        def stamp(x: np.ndarray) -> I64:
            whole: I64 = np.trunc(np.nan_to_num(x)).astype(np.int64)  # as Proof's int()
            out: I64 = np.where(np.isnan(x), NONE, whole)
            return out

        def columns(lo: int, hi: int) -> tuple[list[I64], list[np.ndarray]]:
            k = keep[lo:hi]
            kind = p.kind[k]
            ints = [
                self.proof_jobs + p.job[k],
                np.where(kind >= 0, self.proof_kinds + kind, self.empty),
                p.partitions[k],
                stamp(p.first[k]),
                stamp(p.last[k]),
                p.completed[k].astype(np.int64),
                self.proof_failed[k].astype(np.int64),
                *((logs[k],) if logs is not None else ()),
            ]
            return ints, []

        self._rows(fh, header, _template(cells), len(keep), columns)

    def _busy_split(self, fh: IO[bytes]) -> None:
        model = self.model
        split = busy_breakdown(model, self.t0, self.t1)
        text = _LineText()
        w = csv.writer(text, lineterminator="\n")
        # the phases that are estimates (the screens' `≈`), and over the whole run the
        # least and most kernel time the log allows where it leaves kernel an estimate
        w.writerow(
            [
                "gpu",
                "timeline_busy_ms",
                *(f"{k}_ms" for k in BUSY_KEYS),
                "estimates",
                "kernel_ms_least",
                "kernel_ms_most",
                "unmeasured",
            ]
        )
        whole = not (math.isfinite(self.t0) or math.isfinite(self.t1))
        estimated, unmeasured = estimated_keys(model), unmeasured_keys(model)
        for g in model.gpus:
            b = split.get(g.gpu, Breakdown(g.gpu, 0.0, {}))
            busy = g.busy_ms if whole else round(b.busy_ms, 3)
            figures = [busy, *busy_split_ms(b).values()]
            ranged = whole and g.kernel_is_estimate
            least, most = (
                (csv_number(round(x, 3)) for x in g.kernel_range_ms) if ranged else ("", "")
            )
            w.writerow(
                [
                    csv_text(model.gpu_label(g.gpu)),
                    *(csv_number(x) for x in figures),
                    " ".join(estimated[g.gpu]),
                    least,
                    most,
                    " ".join(unmeasured[g.gpu]),
                ]
            )
        fh.write("".join(text.lines).encode("utf-8", "surrogateescape"))


class _LineText:
    """What a csv writer writes, kept as lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, line: str) -> None:
        self.lines.append(line)


def _line_or_none(lines: np.ndarray) -> I64:
    """Line numbers as a CSV writes them: -1 (an empty cell) where the core has none (0)."""
    lines = lines.astype(np.int64)
    return np.where(lines > 0, lines, -1)


def _phase_sums(model: LogModel, rows: I64) -> np.ndarray:
    """Per record of `rows`, its segments' length per phase of PHASE_KEYS (summed in
    segment order, as one bincount per record would)."""
    t = model.parts
    a, b = t.seg_offsets[rows], t.seg_offsets[rows + 1]
    n = len(rows)
    counts = b - a
    seg = np.repeat(a - np.concatenate(([0], np.cumsum(counts)[:-1])), counts) + np.arange(
        int(counts.sum())
    )
    row = np.repeat(np.arange(n), counts)
    flat = row * len(Phase) + t.seg_phase[seg].astype(np.int64)
    lengths = t.seg_end[seg] - t.seg_start[seg]
    # floats whatever the segments (with none at all bincount gives integers, which the
    # unmeasured phases' NaN cannot be written into)
    sums = np.bincount(flat, weights=lengths, minlength=n * len(Phase)).astype(np.float64)
    out: np.ndarray = sums.reshape(n, len(Phase))[:, : len(PHASE_KEYS)]
    return out
