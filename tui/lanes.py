"""What the Gantt draws, row by row: the rows of a model and the cells of each row.

Headless of the widget: each function takes the view's window (left edge, ms per cell,
width, gap threshold, selection) and returns one character and one style id per cell,
computed with numpy from the model's sorted columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from rich.cells import cell_len

from parsers._core import first_free_rows
from parsers.model import I64, PHASES, GpuStats, LogModel, Phase, ProofSpans
from parsers.proofs import FoundJob, failed_proofs, found_proofs, proof_ends
from parsers.rows import groups_of
from parsers.sanitize import visible
from tui import cells
from tui.axis import label_room, ticks

# the CSS class a phase is coloured by (tui/palettes.py), made from its key
PHASE_CLASSES = {p: f"gantt--{w.key.replace('_', '-')}" for p, w in PHASES.items()}
# the glyph of a cell a phase fills: phases differ by shape, not by colour alone
PHASE_GLYPHS = {
    Phase.PRE_LOCK: "▄",
    Phase.LOCK_WAIT: "╌",
    Phase.ALLOC: "▓",
    Phase.KERNEL: "█",
    Phase.BARRIER: "▒",
    Phase.CLEANUP: "▀",
    Phase.UNKNOWN: "?",
    Phase.IN_FLIGHT: "▸",
    Phase.FAILED: "✗",
}
_GLYPHS = np.array([PHASE_GLYPHS[Phase(k)] for k in range(len(PHASE_GLYPHS))])
GAP_GLYPH = "░"  # a busy-lane cell with no GPU interval in it


STYLE_NAMES: list[str | None] = [
    None,
    *PHASE_CLASSES.values(),
    "gantt--axis",
    "gantt--busy",
    "gantt--kernel-lane",
    "gantt--gap",
    "gantt--gap-selected",
    "gantt--synth",
    "gantt--proof",
    "gantt--proof-alt",
]
STYLE_IDS = {name: k for k, name in enumerate(STYLE_NAMES) if name is not None}
# a style id plus FOUND: the cell belongs to the job being looked for (drawn highlighted)
FOUND = len(STYLE_NAMES)
_PHASE_STYLE_IDS = np.array([STYLE_IDS[PHASE_CLASSES[Phase(k)]] for k in range(len(PHASE_CLASSES))])


Cells = tuple[np.ndarray, np.ndarray]  # one character and one style id per cell


@dataclass(frozen=True, slots=True)
class Window:
    """The part of time a view shows."""

    t0: float  # ms at the left edge
    scale: float  # ms per cell
    width: int  # cells
    threshold_ms: int  # gaps shorter than this are not marked
    selected: int | None  # index into model.gaps


def _start_in(text: str, width: int) -> str:
    """The longest start of `text` that fits `width` cells (not padded)."""
    out, used = [], 0
    for ch in text:
        w = cell_len(ch)
        if used + w > width:
            break
        out.append(ch)
        used += w
    return "".join(out)


def _end_in(text: str, width: int) -> str:
    """The longest end of `text` that fits `width` cells (not padded)."""
    out: list[str] = []
    used = 0
    for ch in reversed(text):
        w = cell_len(ch)
        if used + w > width:
            break
        out.append(ch)
        used += w
    return "".join(reversed(out))


def head_cells(text: str, width: int) -> str:
    """The longest start of `text` that fits `width` cells, padded to exactly `width`."""
    start = _start_in(text, width)
    return start + " " * (width - cell_len(start))


# a log's name where a window names it (the proof view's head, the log pane's title): cut in
# the middle beyond this many cells
LOG_NAME_CELLS = 40


def abbreviate(text: str, width: int) -> str:
    """`text` made visible (log text: no control reaches the terminal) in at most `width`
    terminal cells, cut in the middle (ids differ at both ends); wide characters count two."""
    text = visible(text)
    if cell_len(text) <= width:
        return text
    return _cut(text, width, width // 2)


SHARED_MIN = 3  # a start every id of a log shares is left out from this many characters


def shared_start(ids: Sequence[str]) -> str:
    """What every one of `ids` begins with (`porep-1000-` of Curio's ids of one miner)."""
    if len(ids) < 2:
        return ""
    low, high = min(ids), max(ids)  # every id sorts between: what they share, all share
    n = 0
    while n < min(len(low), len(high)) and low[n] == high[n]:
        n += 1
    return low[:n]


def abbreviate_past(text: str, width: int, shared: str) -> str:
    """`text` in `width` cells as `abbreviate` cuts it; but an id that begins with what every
    id of the log begins with (`shared`) is cut at its start instead: its end is what tells
    it apart (`…1000-293`, not `pore…-293`)."""
    if (
        len(shared) < SHARED_MIN
        or width < 2
        or not text.startswith(shared)
        or cell_len(visible(text)) <= width
    ):
        return abbreviate(text, width)
    own = visible(text[len(shared) :])
    if cell_len(own) <= width - 1:
        return _cut(visible(text), width, 0)
    return "…" + abbreviate(own, width - 1)


# a job id is shown whole in a window (the inspectors, the proof view, y's note) up to this
# many cells: ids run to a few dozen characters (a UUID: 36), a longer one (hostile input,
# 1 KB) is cut, short enough that it and its label fit an 80-column window's line
ID_CELLS = 56


def shown_id(job: str) -> str:
    """`job` made visible, whole up to ID_CELLS cells, else cut in the middle and its length
    said (y copies it whole)."""
    text = visible(job)
    if cell_len(text) <= ID_CELLS:
        return text
    return f"{abbreviate(text, ID_CELLS)} ({len(job)} characters)"


HOST_MIN_CELLS = 3  # a host's name in a GPU's label is cut to no fewer cells (`p…2:GPU0`)


@dataclass(frozen=True, slots=True, eq=False)
class HostNames:
    """The names of every host (or run) of a view (`hosts_of`), as shown, and what a cut
    name can leave out: the end every name shares from a dot on (`.log`), and the start
    they share. A name is cut where the cut tells the names apart (`start_cells`)."""

    names: tuple[str, ...] = ()
    start: str = ""
    end: str = ""
    _cuts: dict[int, int] = field(default_factory=dict)  # width -> how it is cut (`_way`)
    _apart: list[int] = field(default_factory=list)  # `apart_cells`, once asked

    def stem(self, name: str) -> str:
        """`name` without the end every name shares (`prover-east-01` of `….log`), unless
        that is another name of the view (`abc.log` of `abc.log.log` beside `abc.log`)."""
        end = self.end
        if not end or not name.endswith(end) or len(name) <= len(end):
            return name
        stem = name[: -len(end)]
        return name if stem in self.names else stem

    def cut(self, name: str, width: int) -> str:
        """`name`'s stem in `width` cells, cut where the cut tells the names apart: its
        start and end (`…east-01`, `pr…ast-01`), else a stretch of its middle (`…east…`,
        where the names differ only there: `prover-east-01`, `prover-west-01` at six cells)."""
        stem = self.stem(name)
        way = self._way(width)
        return _cut(stem, width, way) if way >= 0 else _middle(stem, width, ~way)

    def _way(self, width: int) -> int:
        """How `cut` cuts to `width` cells: the cells of a name's start kept before its `…`
        (`start_cells`), or ~k: the middle from its character k on. The first of the cuts
        that shows every name apart, trying first the end alone where the names share their
        start, else a third of the start and the rest from the end (a host's number ends
        its name), then the middle from where the names begin to differ (then earlier, then
        later); none does: that first one. Past SEARCHED_NAMES names (a daemon restarted
        thousands of times: `run 2417`) the first one, unsearched."""
        held = self._cuts.get(width)
        if held is not None:
            return held
        first = 0 if len(self.start) >= SHARED_MIN else (width - 1) // 3
        way = first
        if len(self.names) <= SEARCHED_NAMES:
            stems = {self.stem(name) for name in self.names}
            longest = max((len(stem) for stem in stems), default=0)
            # the middles near where the names begin to differ (a view of 256 hosts of
            # 200-character names searched every one in 2.4 s)
            differ = len(self.start)
            near = range(max(differ - MIDDLES_NEAR, 0), min(differ + MIDDLES_NEAR, longest))
            middles = sorted(
                (k for k in near if k > 0), key=lambda k: (k > differ, abs(k - differ))
            )
            ways = [first, *(h for h in range(width) if h != first), *(~k for k in middles)]
            way = next((w for w in ways if _apart(stems, width, w)), first)
        if len(self._cuts) < 64:  # a few widths a view: the header's lines, the columns
            self._cuts[width] = way
        return way

    def apart_cells(self) -> int:
        """The fewest cells (at least HOST_MIN_CELLS) a name is cut to that still show
        every name apart (HOST_MIN_CELLS where none does, or past SEARCHED_NAMES names)."""
        if not self._apart:
            stems = {self.stem(name) for name in self.names}
            widest = min(max((cell_len(stem) for stem in stems), default=0), APART_MAX_CELLS)
            fits = (
                w
                for w in range(HOST_MIN_CELLS, widest + 1)
                if len(self.names) <= SEARCHED_NAMES and _apart(stems, w, self._way(w))
            )
            self._apart.append(next(fits, HOST_MIN_CELLS))
        return self._apart[0]

    def start_cells(self, width: int) -> int:
        """How many cells of a name's start a cut to `width` cells keeps before its `…`
        (none where it is cut in the middle)."""
        return max(self._way(width), 0)


def _apart(stems: set[str], width: int, way: int) -> bool:
    """Whether every one of `stems` cut to `width` cells `way` (`HostNames._way`) reads
    apart from the others."""
    shown: set[str] = set()
    for stem in stems:
        cut = _cut(stem, width, way) if way >= 0 else _middle(stem, width, ~way)
        if cut in shown:
            return False
        shown.add(cut)
    return True


def _middle(text: str, width: int, start: int) -> str:
    """`text` in `width` cells: whole if it fits, else `…`, what fits of it from character
    `start` on, and `…` where more follows."""
    if cell_len(text) <= width:
        return text
    if width < 3 or start <= 0:
        return _cut(text, width, 0)
    rest = text[start:]
    cut = "…" + rest if cell_len(rest) < width else "…" + _start_in(rest, width - 2) + "…"
    return cut + " " * (width - cell_len(cut))


ONE_HOST = HostNames()
MIDDLES_NEAR = 16  # a middle cut begins at most this many characters from where names differ
APART_MAX_CELLS = 32  # a column of GPU labels is widened for names told apart up to this
SEARCHED_NAMES = 256  # the names a cut that tells them apart is looked for among


def _cut(text: str, width: int, head: int) -> str:
    """`text` in `width` cells: whole if it fits, else `head` cells of its start, `…`, and
    its end in the rest."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return head_cells(text, max(width, 0))
    # a wide character that does not fit its side leaves a cell: the end takes it (or the
    # start, the end's), and a cell neither can take goes after, never inside (`東 …og`)
    start = _start_in(text, min(head, width - 1))
    end = _end_in(text, width - 1 - cell_len(start))
    if cell_len(start) + cell_len(end) < width - 1:
        start = _start_in(text, width - 1 - cell_len(end))
    cut = start + "…" + end
    return cut + " " * (width - cell_len(cut))


def shared_end(names: Sequence[str]) -> str:
    """What every one of `names` ends with, from its first dot on (`.log` of logs named by
    their hosts): never a piece of a name's own part (`1.log` of `east-01.log` and
    `west-11.log` is `.log`: `prover-east-0` would read as another host)."""
    end = shared_start([name[::-1] for name in names])[::-1]
    dot = end.find(".")
    return "" if dot < 0 else end[dot:]


def host_in(name: str, width: int, hosts: HostNames = ONE_HOST) -> str:
    """A host's (or run's) name in `width` cells: whole if it fits, else without the end
    every name shares (`prover-east-01` of `prover-east-01.log`), else cut where the cut
    tells the view's names apart (`…east-01`, `pr…ast-01`, `…east…`: `HostNames.cut`)."""
    name = visible(name)
    if cell_len(name) <= width:
        return name
    return hosts.cut(name, width)


def gpu_label_in(label: str, width: int, hosts: HostNames = ONE_HOST) -> str:
    """A GPU's label in `width` cells: a host's name (`prover-node-02.log:GPU0`) cut as
    `host_in` cuts it, its `:GPU0` whole, so that two hosts' GPUs stay told apart (`feb1.log`
    and `feb2.log` were both `feb…og`, now `feb1` and `feb2`)."""
    host, colon, gpu = label.rpartition(":")
    if not colon:
        return abbreviate(label, width)
    room = max(width - cell_len(colon + gpu), HOST_MIN_CELLS)
    return host_in(host, room, hosts) + colon + gpu


def hosts_of(model: LogModel) -> HostNames:
    """The names of every host (or run) of `model`, as shown (none: one log)."""
    names = sorted({visible(key.name) for key in (model.gpu_keys or {}).values()})
    if len(names) < 2:
        return ONE_HOST
    return HostNames(tuple(names), shared_start(names), shared_end(names))


def gpu_label_least(label: str, hosts: HostNames = ONE_HOST) -> int:
    """The cells of a GPU's label worth keeping before anything else on its line: of a
    host's or a run's GPU, what `gpu_label_in` keeps however narrow (the fewest cells of
    the name that tell `hosts` apart, at least `HOST_MIN_CELLS`, then its `:GPU0`); a label
    of one GPU whole (`G` tells nothing)."""
    _, colon, gpu = label.rpartition(":")
    whole = cell_len(label)
    if not colon:
        return whole
    return min(whole, hosts.apart_cells() + cell_len(colon + gpu))


def cells_of(text: str) -> list[str]:
    """One string per terminal cell: a wide character, then an empty cell; zero-width ones
    (combining marks) are dropped, so a row of cells keeps its width."""
    out: list[str] = []
    for ch in text:
        w = cell_len(ch)
        if w == 1:
            out.append(ch)
        elif w == 2:
            out += [ch, ""]
    return out


@dataclass(frozen=True, slots=True)
class Row:
    """One scrollable row of the Gantt."""

    kind: str  # "busy", "kernel", "worker", "synth", "proofs", "title"
    label: str
    gpu: int = -1
    lane: int = -1  # index into model.lanes, or proof row
    sub_row: int = 0
    log: int | None = None  # a title, synthesis or proofs row of one of several logs


# a log of several with no GPU interval, no synthesis and no proof to draw, on its title row
NOTHING_TO_DRAW = "nothing to draw: no GPU interval, synthesis or proof"


def layout_rows(model: LogModel, proof_rows: int | dict[int, range]) -> list[Row]:
    """The rows drawn for `model`, top to bottom (`proof_rows`: how many proof rows; for a
    model of several logs, each log's proof rows, by its index: each log then has a title
    row, its GPUs' rows and its own synthesis and proofs rows, a log whose GPUs printed
    nothing too)."""
    model.needs_drawn("the viewer")
    rows: list[Row] = []
    lanes_of: dict[int, list[int]] = {}  # per GPU its lanes' indices, in one pass
    for k, lane in enumerate(model.lanes):
        lanes_of.setdefault(lane.gpu, []).append(k)

    def gpu_rows(g: int) -> None:
        # the gutter holds nine characters: a large ordinal goes without its "gpu" (several
        # logs: the ordinal its log printed; the title row names the log)
        ordinal = model.gpu_ordinal(g)
        name = f"gpu{ordinal}" if ordinal < 1000 else str(ordinal)
        rows.append(Row("busy", f"{name} busy", gpu=g))
        rows.append(Row("kernel", f"{name} kern", gpu=g))
        for k in lanes_of.get(g, ()):
            lane = model.lanes[k]
            label = f" w{lane.worker}" if lane.sub_row == 0 else f" w{lane.worker}'{lane.sub_row}"
            rows.append(Row("worker", label, gpu=g, lane=k, sub_row=lane.sub_row))

    if isinstance(proof_rows, dict):
        gpus_of: dict[int | None, list[int]] = {}  # per log its GPUs, in one pass
        for stats in model.gpus:
            gpus_of.setdefault(model.log_of(stats.gpu), []).append(stats.gpu)
        for log, _ in model.logs():
            rows.append(Row("title", "", log=log))
            mine = gpus_of.get(log, [])
            for gpu in mine:
                gpu_rows(gpu)
            if mine or len(model.synth_steps(log)[0]):  # a log without TIMELINE lines: none
                rows.append(Row("synth", "synthesis", log=log))
            for r, packed in enumerate(proof_rows.get(-1 if log is None else log, range(0))):
                rows.append(Row("proofs", "proofs" if r == 0 else "", lane=packed, log=log))
        return rows
    for g in model.gpus:
        gpu_rows(g.gpu)
    if model.gpus or not model.traced_jobs:  # traced jobs have no synthesis steps
        rows.append(Row("synth", "synthesis"))
    for r in range(proof_rows):
        rows.append(Row("proofs", "proofs" if r == 0 else "", lane=r))
    return rows


def drawn_proof_spans(model: LogModel) -> tuple[ProofSpans, np.ndarray]:
    """Each proof's spans (its first SYNTH_START, whether it completed, …), and where
    `proof_ends` ends its drawing."""
    spans = model.proof_spans
    if spans is None or len(spans) != len(model.proofs):
        spans = ProofSpans.of(model.proofs)
    return spans, proof_ends(model, spans.last, spans.completed, spans.seen)


def packed_rows(order: I64, starts: np.ndarray, ends: np.ndarray) -> list[I64]:
    """The proofs `order` (by start) packed greedily into rows that do not overlap."""
    row_of = first_free_rows(starts[order], ends[order], touching=False)
    n_rows = int(row_of.max()) + 1 if len(row_of) else 0
    # each row's members in start order, as the packing met them
    by_row = np.argsort(row_of, kind="stable")
    counts = np.bincount(row_of[row_of >= 0], minlength=n_rows)
    at = int(np.count_nonzero(row_of < 0))
    rows: list[I64] = []
    for n in counts.tolist():
        rows.append(order[by_row[at : at + n]])
        at += n
    return rows


# the LaneDrawing method that draws each kind of row
CELLS_OF_KIND = {
    "worker": "worker_cells",
    "busy": "busy_cells",
    "kernel": "kernel_cells",
    "synth": "synth_cells",
    "proofs": "proof_cells",
    "title": "title_cells",
}


class LaneDrawing:
    """The rows of one model and how to draw each, for any window."""

    def __init__(self, model: LogModel) -> None:
        self.model = model
        proofs, self.proof_ends = drawn_proof_spans(model)
        self.proof_starts, self.proof_completed = proofs.first, proofs.completed
        spans = (self.proof_starts, self.proof_ends)
        order = np.argsort(self.proof_starts, kind="stable")
        # several logs: each log's proofs packed on rows of its own (by GpuKey.host)
        host_rows: dict[int, range] | None = None
        self.log_names = dict(model.logs())  # as drawn, by log (the title rows read them)
        self._hosts = hosts_of(model)
        if model.gpu_keys is not None and model.proof_hosts is not None:
            host_rows = {}
            packed: list[I64] = []
            # each log's proofs in start order, grouped in one pass (a daemon restarted
            # thousands of times is as many logs)
            at = np.arange(len(order), dtype=np.int64)
            of_log = dict(groups_of(model.proof_hosts[order], at))
            for k in self.log_names:
                assert k is not None  # several logs
                mine = of_log.get(k)
                rows_k = [] if mine is None else packed_rows(order[mine], *spans)
                host_rows[k] = range(len(packed), len(packed) + len(rows_k))
                packed.extend(rows_k)
            self.proof_rows = packed
        else:
            self.proof_rows = packed_rows(order, *spans)
        self.proof_failed = failed_proofs(model)
        # per proof row: the members and their spans as arrays, sorted (rows never overlap)
        self._proof_row_arrays = [
            (m, self.proof_starts[m], self.proof_ends[m]) for m in self.proof_rows
        ]
        self.rows = layout_rows(model, len(self.proof_rows) if host_rows is None else host_rows)
        # per row, the log whose group it is in (None: one log), as its title row opened it
        self.row_logs: list[int | None] = []
        group: int | None = None
        for spec in self.rows:
            group = spec.log if spec.kind == "title" else group
            self.row_logs.append(group)
        # the logs whose title row is all their group holds (an empty log, one of none but
        # other lines): the title says so, not an empty group under it
        self.bare_logs = {
            spec.log
            for k, spec in enumerate(self.rows)
            if spec.kind == "title"
            and (k + 1 == len(self.rows) or self.rows[k + 1].kind == "title")
        }
        gaps = model.gaps
        gap_gpu = gaps.gpu
        gap_start = gaps.start.astype(np.float64)
        gap_end = gaps.end.astype(np.float64)
        self._gpu_stats: dict[int, GpuStats] = {g.gpu: g for g in model.gpus}
        # the log has not grown for a while (the header's IDLE): its last stamp is not now,
        # and nothing says where now is
        self.quiet = False
        self.found: np.ndarray = np.zeros(0, dtype=np.int64)  # partitions highlighted
        self.found_jobs: frozenset[FoundJob] = frozenset()
        self._found_proofs = np.zeros(len(model.proofs), dtype=bool)  # of found_jobs
        self._gap_index: dict[int, np.ndarray] = {}
        self._gap_starts: dict[int, np.ndarray] = {}
        self._gap_ends: dict[int, np.ndarray] = {}
        by_gpu = dict(groups_of(gap_gpu, np.arange(len(gap_gpu), dtype=np.int64)))
        for g in model.gpus:
            idx = by_gpu.get(g.gpu, np.zeros(0, dtype=np.int64))
            self._gap_index[g.gpu] = idx
            self._gap_starts[g.gpu] = gap_start[idx]
            self._gap_ends[g.gpu] = gap_end[idx]

    def set_found(self, partitions: np.ndarray, jobs: frozenset[FoundJob]) -> None:
        """Highlight these partitions (indices into model.parts) and the proofs `jobs`."""
        self.found = np.asarray(partitions, dtype=np.int64)
        self.found_jobs = jobs
        # read once, not a proof made per member at each drawing
        self._found_proofs = found_proofs(self.model, jobs)

    def row_cells(self, spec: Row, w: Window) -> Cells:
        """Characters and style ids of one lane row (ids + FOUND where a found job is)."""
        times = cells.sample_times(w.t0, w.scale, w.width)
        # the method by its name: bound methods kept on the drawing would make a cycle, and
        # the drawing (with its model) would wait for the cyclic collector to be freed
        chars, styles = getattr(self, CELLS_OF_KIND[spec.kind])(spec, w, times)
        if len(self.found) or self.found_jobs:
            mask = self._found_cells(spec, w)
            styles = np.where(mask, styles + FOUND, styles)
        return chars, styles

    def title_cells(self, spec: Row, w: Window, times: np.ndarray) -> Cells:
        """A log's name across the row, opening its group of lanes."""
        name = self.log_names.get(spec.log, "")
        if spec.log in self.bare_logs:
            name += f" · {NOTHING_TO_DRAW}"
        # one entry per cell: a wide character's name (`東京-01.log`) keeps the row's width
        cut = cells_of(f"── {_start_in(name, max(w.width - 4, 0))} ")[: w.width]
        cut += ["─"] * (w.width - len(cut))
        chars = np.array(cut, dtype="<U1")
        return chars, np.full(w.width, STYLE_IDS["gantt--axis"], dtype=np.int64)

    def _found_cells(self, spec: Row, w: Window) -> np.ndarray:
        """Cells of this row that show the job being looked for."""
        t = self.model.parts
        found = self.found
        if spec.kind == "worker":
            lane = self.model.lanes[spec.lane]
            keep = np.isin(lane.partition, found)
            starts, ends = lane.starts[keep], lane.ends[keep]
        elif spec.kind in ("busy", "kernel"):
            on_gpu = found[t.gpu[found] == spec.gpu]
            starts, ends = t.gpu_start[on_gpu], t.gpu_end[on_gpu]
        elif spec.kind == "synth":
            hosts = self.model.job_hosts
            if spec.log is not None and hosts is not None:
                found = found[hosts[t.job[found]] == spec.log]  # this log's own
            starts, ends = t.synth_start[found], t.synth_end[found]
        elif spec.kind == "proofs" and spec.lane < len(self.proof_rows):
            members = self.proof_rows[spec.lane]
            chosen = members[self._found_proofs[members]]
            starts, ends = self.proof_starts[chosen], self.proof_ends[chosen]
        else:
            return np.zeros(w.width, dtype=bool)
        ok = ~(np.isnan(starts) | np.isnan(ends))
        a = np.floor((starts[ok] - w.t0) / w.scale).astype(np.int64)
        b = np.maximum(np.ceil((ends[ok] - w.t0) / w.scale).astype(np.int64), a + 1)
        return cells.mark_spans(a, b, w.width)

    @property
    def now_drawn(self) -> bool:
        """The log's last stamp is drawn as now: the log is growing, and grew lately."""
        return not self.model.finished and not self.quiet

    def group_at(self, top: int, width: int) -> str:
        """The name, cut to `width` cells, of the log whose lanes begin the view at row `top`
        when their title row is above it ("" when the title shows, or for one log): said
        in the axis's gutter, where a host's `gpu0 busy` would else be nobody's."""
        if not 0 <= top < len(self.rows) or self.rows[top].kind == "title":
            return ""
        log = self.row_logs[top]
        if log is None:
            return ""
        return host_in(self.log_names.get(log, ""), width, self._hosts)

    def axis_cells(self, row: int, w: Window) -> tuple[str, np.ndarray, np.ndarray]:
        """The time axis: tick labels (row 0) or tick marks and the now marker (row 1)."""
        tw = w.width
        chars = np.full(tw, " " if row == 0 else "─", dtype="<U1")
        # a log with no interval yet has no time to show: no ticks (`0ms 1ms 2ms` said a
        # scale of nothing), no now
        timed = len(self.model.parts) > 0
        marks = ticks(w.t0, w.scale, tw) if timed else []
        if row == 0:
            free = 0  # labels never overlap
            for cell, _, label in marks:
                # a label starts at its tick; one with no room before the edge ends at it,
                # two spaces after the one before (one would read as a label at its tick)
                start = cell if cell + len(label) <= tw else cell + 1 - len(label)
                if start >= free + (start != cell):
                    chars[start : start + len(label)] = list(label)
                    free = start + label_room(label)
            label_text = "time"
        else:
            for cell, _, _ in marks:
                chars[cell] = "┴"
            now_cell = int((self.model.now_ms - w.t0) / w.scale)
            if 0 <= now_cell < tw and self.now_drawn and timed:
                chars[now_cell] = "▼"
            label_text = ""
        return label_text, chars, np.full(tw, STYLE_IDS["gantt--axis"], dtype=np.int64)

    def worker_cells(self, spec: Row, w: Window, times: np.ndarray) -> Cells:
        tw = w.width
        lane = self.model.lanes[spec.lane]
        samples = np.full(len(times), cells.EMPTY, dtype=np.int64)
        failed_ends, lone_running = [], []
        t = self.model.parts
        for chunk in lane.chunks:  # apart in time: each sample falls in one at most
            seg = chunk.part(*chunk.covering(w.t0, w.t0 + tw * w.scale))
            if len(seg):
                got = cells.sample_segments(seg.starts, seg.ends, seg.phases, times)
                samples = np.where(got != cells.EMPTY, got, samples)
                # each interval's last segment (read per interval, not per segment: a lane
                # zoomed out holds a million): of a failed prove, where it ends; of a prove
                # running with no length yet (begun on the log's last stamp), where it is
                last = np.flatnonzero(np.append(seg.partition[1:] != seg.partition[:-1], True))
                part, ends = seg.partition[last], seg.ends[last]
                # (read from a live model's parts: no column put together at each update)
                failed = t.take("failed", part)
                failed_ends.append(ends[failed])
                lone = ~failed & (ends == seg.starts[last]) & np.isnan(t.take("gpu_end", part))
                lone_running.append(ends[lone])
        kind = cells.dominant(samples, tw, len(PHASE_CLASSES))
        grid = (samples != cells.EMPTY).reshape(tw, cells.SUB)
        styles = np.where(kind == cells.EMPTY, 0, _PHASE_STYLE_IDS[np.maximum(kind, 0)])
        # a full cell shows its phase's own glyph; edges keep their eighth blocks
        full = grid.all(axis=1)
        chars = np.where(full, _GLYPHS[np.maximum(kind, 0)], cells.coverage_chars(grid))
        if failed_ends:
            # a failed prove whose lines explain it to its end (kernels that ran, then the
            # prove failed) has no failed segment: its last cell is ✗ all the same
            ends = np.concatenate(failed_ends)
            at = np.ceil((ends - w.t0) / w.scale).astype(np.int64) - 1
            at = at[(at >= 0) & (at < tw)]
            chars[at] = PHASE_GLYPHS[Phase.FAILED]
            styles[at] = _PHASE_STYLE_IDS[Phase.FAILED]
        if lone_running:
            # drawn in the cell it began in, where nothing else is: `+1 running` is seen
            at = np.floor((np.concatenate(lone_running) - w.t0) / w.scale).astype(np.int64)
            at = at[(at >= 0) & (at < tw)]
            at = at[chars[at] == " "]
            chars[at] = PHASE_GLYPHS[Phase.IN_FLIGHT]
            styles[at] = _PHASE_STYLE_IDS[Phase.IN_FLIGHT]
        return chars, styles

    def _gap_spans(self, gpu: int, w: Window) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cell ranges [a, b) and indices of this GPU's visible gaps at or above the threshold."""
        tw = w.width
        starts = self._gap_starts.get(gpu, np.zeros(0))
        idx = self._gap_index.get(gpu, np.zeros(0, dtype=np.int64))
        ends = self._gap_ends.get(gpu, np.zeros(0))
        t1 = w.t0 + tw * w.scale
        # gaps of one GPU never overlap: both starts and ends are sorted
        i = int(np.searchsorted(ends, w.t0, side="right"))
        j = int(np.searchsorted(starts, t1, side="left"))
        s, e, ix = starts[i:j], ends[i:j], idx[i:j]
        keep = (e - s) >= w.threshold_ms
        s, e, ix = s[keep], e[keep], ix[keep]
        a = np.floor((s - w.t0) / w.scale).astype(np.int64)
        b = np.maximum(np.ceil((e - w.t0) / w.scale).astype(np.int64), a + 1)
        return a, b, ix

    def busy_cells(self, spec: Row, w: Window, times: np.ndarray) -> Cells:
        tw = w.width
        gpu = self._gpu_stats[spec.gpu]
        inside = cells.sample_blocks(gpu.busy.starts, gpu.busy.ends, times).reshape(tw, cells.SUB)
        edges = w.t0 + np.arange(tw + 1, dtype=np.float64) * w.scale
        busy = np.diff(cells.covered_before(gpu.busy.starts, gpu.busy.ends, edges))
        lo, hi = gpu.span if gpu.span is not None else (0, 0)
        in_span = np.diff(np.clip(edges, lo, hi))
        idle = in_span - busy
        partly = idle > w.scale * 1e-6
        share = np.where(in_span > 0, busy / np.maximum(in_span, 1e-12), 0.0)
        # a cell with idle time in it is a bar as high as its busy share (never full)
        level = np.clip(np.round(share * cells.SUB).astype(np.int64), 0, cells.SUB - 1)
        level = np.where((busy > 0) & (level == 0), 1, level)
        bars = np.where(level == 0, GAP_GLYPH, cells.level_chars(level))
        chars = np.where(partly, bars, cells.coverage_chars(inside))
        styles = np.full(tw, STYLE_IDS["gantt--busy"], dtype=np.int64)
        # red where a gap at or above the threshold takes at least half the cell
        a, b, ix = self._gap_spans(spec.gpu, w)
        marked = cells.mark_spans(a, b, tw) & partly
        styles = np.where(marked & (share < 0.5), STYLE_IDS["gantt--gap"], styles)
        if w.selected is not None and w.selected in ix:
            k = int(np.flatnonzero(ix == w.selected)[0])
            sel = cells.mark_spans(a[k : k + 1], b[k : k + 1], tw) & marked
            styles = np.where(sel, STYLE_IDS["gantt--gap-selected"], styles)
            if not (sel & (share < 0.5)).any():
                # a gap in no more than half of any cell (n at a wide zoom): its cells show
                # the gap, not their busy bars, so that the gap the status line names is seen
                chars = np.where(sel, GAP_GLYPH, chars)
        return chars, styles

    def kernel_cells(self, spec: Row, w: Window, times: np.ndarray) -> Cells:
        tw = w.width
        gpu = self._gpu_stats[spec.gpu]
        inside = cells.sample_blocks(gpu.kernel.starts, gpu.kernel.ends, times).reshape(
            tw, cells.SUB
        )
        # how much of each cell the kernels fill, as a bar height
        fill = inside.sum(axis=1).astype(np.int64)
        return cells.level_chars(fill), np.full(tw, STYLE_IDS["gantt--kernel-lane"], dtype=np.int64)

    def synth_cells(self, spec: Row, w: Window, times: np.ndarray) -> Cells:
        tw = w.width
        m = self.model
        centres = times.reshape(tw, cells.SUB)[:, cells.SUB // 2]
        steps = m.synth_steps(spec.log)  # a log's own, in a model of several
        counts = cells.step_values(steps[0], steps[1], centres)
        # the log says nothing after its last line: synthesis under way is drawn up to it,
        # not to the view's edge (a daemon just begun drew a minute of it)
        ends = m.log_ends
        end = m.now_ms if spec.log is None or ends is None else ends[spec.log]
        counts[centres > end] = 0
        peak = max(int(steps[1].max()) if len(steps[1]) else 0, 1)
        level = np.ceil(counts * cells.SUB / peak).astype(np.int64)
        return cells.level_chars(level), np.full(tw, STYLE_IDS["gantt--synth"], dtype=np.int64)

    def proof_cells(self, spec: Row, w: Window, times: np.ndarray) -> Cells:
        tw = w.width
        chars = np.full(tw, " ", dtype="<U1")
        styles = np.zeros(tw, dtype=np.int64)
        if spec.lane >= len(self.proof_rows):
            return chars, styles
        members, starts, ends = self._proof_row_arrays[spec.lane]
        # proofs on one row never overlap: starts and ends are both sorted
        t1 = w.t0 + tw * w.scale
        i = int(np.searchsorted(ends, w.t0, side="left"))
        j = int(np.searchsorted(starts, t1, side="right"))
        if j <= i:
            return chars, styles
        a = np.floor((starts[i:j] - w.t0) / w.scale).astype(np.int64)
        b = np.floor((ends[i:j] - w.t0) / w.scale).astype(np.int64)
        if len(a) > tw:
            # zoomed far out: per cell, the last proof that began by then, if still running
            cell = np.arange(tw)
            which = np.searchsorted(a, cell, side="right") - 1
            which = np.where((which >= 0) & (b[np.maximum(which, 0)] >= cell), which, -1)
        else:
            which = np.full(tw, -1, dtype=np.int64)
            for k in np.argsort(b - a, kind="stable").tolist():  # wider spans win a shared cell
                lo, hi = max(int(a[k]), 0), min(int(b[k]) + 1, tw)
                if hi > lo:
                    which[lo:hi] = k
        drawn = which >= 0
        parity = (members[i:j][np.maximum(which, 0)] + np.maximum(which, 0)) % 2
        styles = np.where(
            drawn,
            np.where(parity == 0, STYLE_IDS["gantt--proof"], STYLE_IDS["gantt--proof-alt"]),
            0,
        )
        chars = np.where(drawn, "━", " ")
        wide = np.flatnonzero(b - a >= 1)  # two cells hold its ends, ┣┫
        end_at: dict[int, str] = {}  # the end drawn in a cell (proofs in start order)
        for k in wide[:tw].tolist():
            lo, hi = int(a[k]), int(b[k])
            proof = self.model.proofs[members[i + k]]
            if 0 <= lo < tw:
                # the cell the proof before ends in: ╋ (a ✗ says more, and stays)
                before = end_at.get(lo)
                chars[lo] = "┣" if before is None else ("╋" if before == "┫" else before)
            if 0 <= hi < tw:
                failed = self.proof_failed[members[i + k]]
                chars[hi] = end_at[hi] = "┫" if proof.completed else ("✗" if failed else "▶")
            room = min(hi, tw) - max(lo + 1, 0)
            if room >= 6:
                label = cells_of(f" {abbreviate(proof.job, room - 2)} ")
                first = max(lo + 1, 0)
                label = label[: tw - first]
                if label and cell_len(label[-1]) == 2:
                    label[-1] = " "  # its second cell was cut: half a wide character is none
                chars[first : first + len(label)] = label
        # a job in one cell: its ✗ when it failed, its ▶ while it runs (a proof just begun
        # at the right edge was a lone ━, neither begun nor under way)
        one = (b == a) & (b >= 0) & (b < tw)
        mine = members[i:j]
        failed = self.proof_failed[mine] & one
        chars[b[one & ~failed & ~self.proof_completed[mine]]] = "▶"
        chars[b[failed]] = "✗"
        return chars, styles
