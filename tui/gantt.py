"""The Gantt view: one ScrollView drawn line by line from the model's columns.

Rows: a fixed time axis, then per GPU a busy lane (gaps marked), a kernel lane and one
lane per worker (a sub-row where split proving overlaps intervals), then synthesis
and proofs. Time runs horizontally under the view's own zoom (`scale`, ms per cell)
and left edge (`t0`); lanes scroll vertically.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from parsers.model import Gap, LogModel, Phase
from tui import cells
from tui.axis import ticks

LABEL_WIDTH = 10
AXIS_ROWS = 2
THRESHOLDS_MS = (0, 10, 50, 100, 250, 500, 1000, 2000, 5000)
ZOOM_FACTOR = 2.0
MIN_SCALE = 0.05  # ms per cell, fully zoomed in
PAN_FRACTION = 0.25
# a selected gap is shown at GAP_SHARE of the width unless it already takes
# between GAP_SHARE_MIN and GAP_SHARE_MAX of it (then the zoom stays)
GAP_SHARE, GAP_SHARE_MIN, GAP_SHARE_MAX = 0.3, 0.05, 0.7

PHASE_CLASSES = {
    Phase.PRE_LOCK: "gantt--pre-lock",
    Phase.LOCK_WAIT: "gantt--lock-wait",
    Phase.ALLOC: "gantt--alloc",
    Phase.KERNEL: "gantt--kernel",
    Phase.BARRIER: "gantt--barrier",
    Phase.CLEANUP: "gantt--cleanup",
    Phase.UNKNOWN: "gantt--unknown",
    Phase.IN_FLIGHT: "gantt--in-flight",
}
PHASE_NAMES = {
    Phase.PRE_LOCK: "pre-lock",
    Phase.LOCK_WAIT: "lock wait",
    Phase.ALLOC: "alloc",
    Phase.KERNEL: "kernel",
    Phase.BARRIER: "barrier",
    Phase.CLEANUP: "cleanup",
    Phase.UNKNOWN: "unknown",
    Phase.IN_FLIGHT: "running",
}


@dataclass(frozen=True, slots=True)
class Row:
    """One scrollable row of the Gantt."""

    kind: str  # "busy", "kernel", "worker", "synth", "proofs", "title"
    label: str
    gpu: int = -1
    lane: int = -1  # index into model.lanes, or proof row
    sub_row: int = 0


def layout_rows(model: LogModel, proof_rows: int) -> list[Row]:
    """The rows drawn for `model`, top to bottom."""
    rows: list[Row] = []
    for g in model.gpus:
        rows.append(Row("busy", f"gpu{g.gpu} busy", gpu=g.gpu))
        rows.append(Row("kernel", f"gpu{g.gpu} kern", gpu=g.gpu))
        for k, lane in enumerate(model.lanes):
            if lane.gpu == g.gpu:
                label = (
                    f" w{lane.worker}" if lane.sub_row == 0 else f" w{lane.worker}'{lane.sub_row}"
                )
                rows.append(Row("worker", label, gpu=g.gpu, lane=k, sub_row=lane.sub_row))
    rows.append(Row("synth", "synthesis"))
    for r in range(proof_rows):
        rows.append(Row("proofs", "proofs" if r == 0 else "", lane=r))
    return rows


def pack_proofs(model: LogModel) -> tuple[list[list[int]], np.ndarray, np.ndarray]:
    """Proof spans packed greedily into rows that do not overlap.

    Returns (rows of proof indices, starts, ends) with spans from first SYNTH_START
    to last GPU_END (or `now` for proofs still running).
    """
    starts = np.array(
        [p.first_synth_start if p.first_synth_start is not None else np.nan for p in model.proofs],
        dtype=np.float64,
    )
    ends = np.array(
        [
            p.last_gpu_end if p.completed and p.last_gpu_end is not None else model.now_ms
            for p in model.proofs
        ],
        dtype=np.float64,
    )
    rows: list[list[int]] = []
    row_end: list[float] = []
    for i in np.argsort(starts, kind="stable").tolist():
        if np.isnan(starts[i]):
            continue
        for r, last in enumerate(row_end):
            if last < starts[i]:
                rows[r].append(i)
                row_end[r] = ends[i]
                break
        else:
            rows.append([i])
            row_end.append(ends[i])
    return rows, starts, ends


class GanttView(ScrollView, can_focus=True):
    """Per-GPU, per-worker timeline of the GPU intervals and their phases."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *PHASE_CLASSES.values(),
        "gantt--label",
        "gantt--axis",
        "gantt--busy",
        "gantt--kernel-lane",
        "gantt--gap",
        "gantt--gap-selected",
        "gantt--band",
        "gantt--synth",
        "gantt--proof",
        "gantt--proof-alt",
        "gantt--now",
    }

    DEFAULT_CSS = """
    GanttView {
        background: $surface;
        color: $text;
        scrollbar-size-horizontal: 0;
    }
    GanttView > .gantt--label { color: $text; text-style: bold; }
    GanttView > .gantt--axis { color: $text-muted; }
    GanttView > .gantt--pre-lock { color: #5f87af; }
    GanttView > .gantt--lock-wait { color: #d75f5f; }
    GanttView > .gantt--alloc { color: #d7af00; }
    GanttView > .gantt--kernel { color: #5fd75f; }
    GanttView > .gantt--barrier { color: #af5fd7; }
    GanttView > .gantt--cleanup { color: #00afaf; }
    GanttView > .gantt--unknown { color: #8a8a8a; }
    GanttView > .gantt--in-flight { color: #eeeeee; text-style: italic; }
    GanttView > .gantt--busy { color: #87afd7; }
    GanttView > .gantt--kernel-lane { color: #5fd75f; }
    GanttView > .gantt--gap { color: #ff5f5f; }
    GanttView > .gantt--gap-selected { color: #ffffff; background: #d70000; text-style: bold; }
    GanttView > .gantt--band { background: #3a3a3a; }
    GanttView > .gantt--synth { color: #d7875f; }
    GanttView > .gantt--proof { color: #87afff; }
    GanttView > .gantt--proof-alt { color: #d7afff; }
    GanttView > .gantt--now { color: #ffff5f; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_gap", "Next gap"),
        Binding("N", "previous_gap", "Prev gap"),
        Binding("]", "raise_threshold", "Gap ≥ +"),
        Binding("[", "lower_threshold", "Gap ≥ −", key_display="["),
        Binding("enter", "inspect", "Inspect"),
        Binding("plus,equals_sign", "zoom_in", "Zoom +", key_display="+"),
        Binding("minus", "zoom_out", "Zoom −", key_display="-"),
        Binding("0", "fit", "Fit"),
        Binding("left,h", "pan(-1)", "Pan", show=False),
        Binding("right,l", "pan(1)", "Pan", show=False),
    ]

    class ViewChanged(Message):
        """Zoom, pan, threshold or selection changed (the header shows them)."""

    class InspectGap(Message):
        """The user asked for the inspector on a gap."""

        def __init__(self, gap: Gap) -> None:
            super().__init__()
            self.gap = gap

    def __init__(self, model: LogModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self.t0 = 0.0
        self.scale = 1000.0
        self.threshold_ms = 0
        self.selected: int | None = None  # index into model.gaps
        self.generation = 0
        self._rows: list[Row] = []
        self._proof_rows: list[list[int]] = []
        self._proof_starts = np.zeros(0)
        self._proof_ends = np.zeros(0)
        self._gap_starts: dict[int, np.ndarray] = {}
        self._gap_index: dict[int, np.ndarray] = {}
        self._cache: LRUCache[tuple[object, ...], Strip] = LRUCache(256)
        self._styles: dict[str, Style] = {}
        self._fitted = False
        self._prepare()

    # -- model --------------------------------------------------------------------------

    def _prepare(self) -> None:
        self._proof_rows, self._proof_starts, self._proof_ends = pack_proofs(self.model)
        self._rows = layout_rows(self.model, len(self._proof_rows))
        self._gap_starts = {}
        self._gap_index = {}
        for g in self.model.gpus:
            idx = np.array(
                [i for i, gap in enumerate(self.model.gaps) if gap.gpu == g.gpu], dtype=np.int64
            )
            self._gap_index[g.gpu] = idx
            self._gap_starts[g.gpu] = np.array(
                [self.model.gaps[i].start for i in idx.tolist()], dtype=np.float64
            )
        self.virtual_size = Size(self.size.width, len(self._rows) + AXIS_ROWS)
        self.generation += 1
        self._cache.clear()

    def set_model(self, model: LogModel) -> None:
        """Show a newer model of the same log (the view stays where it is)."""
        selected_gap = self.selected_gap
        self.model = model
        self._prepare()
        self.selected = None
        if selected_gap is not None:
            for i, gap in enumerate(model.gaps):
                if gap.gpu == selected_gap.gpu and gap.start == selected_gap.start:
                    self.selected = i
                    break
        self.refresh()

    @property
    def rows(self) -> list[Row]:
        """The scrollable rows, top to bottom."""
        return self._rows

    @property
    def selected_gap(self) -> Gap | None:
        """The gap the user is on."""
        return None if self.selected is None else self.model.gaps[self.selected]

    @property
    def timeline_width(self) -> int:
        """Cells available for time (the width less the label gutter)."""
        return max(1, self.size.width - LABEL_WIDTH)

    # -- view ---------------------------------------------------------------------------

    def on_resize(self) -> None:
        """Refit on the first real size; later keep the zoom and redraw."""
        self.virtual_size = Size(self.size.width, len(self._rows) + AXIS_ROWS)
        if not self._fitted and self.size.width > LABEL_WIDTH:
            self._fitted = True
            self.fit()
        self._changed()

    def fit(self) -> None:
        """Show the whole run."""
        lo, hi = self.model.time_range
        span = max(hi - lo, 1.0)
        self.scale = max(MIN_SCALE, span * 1.02 / self.timeline_width)
        self.t0 = lo - span * 0.01
        self._changed()

    def center_on(self, t: float) -> None:
        """Scroll so that time `t` is in the middle."""
        self.t0 = t - self.timeline_width * self.scale / 2
        self._changed()

    def zoom(self, factor: float) -> None:
        """Zoom by `factor` (>1 zooms in) around the selected gap, or the centre."""
        gap = self.selected_gap
        centre = (
            (gap.start + gap.end) / 2 if gap else self.t0 + self.timeline_width * self.scale / 2
        )
        lo, hi = self.model.time_range
        max_scale = max((hi - lo) * 2 / self.timeline_width, MIN_SCALE)
        self.scale = min(max(self.scale / factor, MIN_SCALE), max_scale)
        self.center_on(centre)

    def _changed(self) -> None:
        self.generation += 1
        self.refresh()
        self.post_message(self.ViewChanged())

    # -- actions ------------------------------------------------------------------------

    def _visible_gaps(self) -> list[int]:
        return [i for i, g in enumerate(self.model.gaps) if g.duration_ms >= self.threshold_ms]

    def select_gap(self, index: int) -> None:
        """Select a gap and centre it, zoomed so that it and its neighbours show."""
        self.selected = index
        gap = self.model.gaps[index]
        share = gap.duration_ms / (self.timeline_width * self.scale)
        if not GAP_SHARE_MIN <= share <= GAP_SHARE_MAX:
            self.scale = max(MIN_SCALE, gap.duration_ms / (self.timeline_width * GAP_SHARE))
        self.center_on((gap.start + gap.end) / 2)

    def action_next_gap(self) -> None:
        """Select the next gap at or above the threshold."""
        self._step_gap(1)

    def action_previous_gap(self) -> None:
        """Select the previous gap at or above the threshold."""
        self._step_gap(-1)

    def _step_gap(self, direction: int) -> None:
        shown = self._visible_gaps()
        if not shown:
            self.notify(f"no gap of {self.threshold_ms} ms or more", severity="warning")
            return
        if self.selected is None:
            pick = shown[0] if direction > 0 else shown[-1]
        else:
            later = [
                i for i in shown if (i > self.selected if direction > 0 else i < self.selected)
            ]
            if not later:
                self.notify("last gap" if direction > 0 else "first gap")
                return
            pick = later[0] if direction > 0 else later[-1]
        self.select_gap(pick)

    def action_raise_threshold(self) -> None:
        """Only gaps of the next larger threshold count."""
        higher = [t for t in THRESHOLDS_MS if t > self.threshold_ms]
        if higher:
            self.threshold_ms = higher[0]
            self._changed()

    def action_lower_threshold(self) -> None:
        """Gaps of the next smaller threshold count too."""
        lower = [t for t in THRESHOLDS_MS if t < self.threshold_ms]
        if lower:
            self.threshold_ms = lower[-1]
            self._changed()

    def action_inspect(self) -> None:
        """Open the inspector on the selected gap."""
        gap = self.selected_gap
        if gap is None:
            self.notify("select a gap first: n", severity="warning")
            return
        self.post_message(self.InspectGap(gap))

    def action_zoom_in(self) -> None:
        """Zoom in."""
        self.zoom(ZOOM_FACTOR)

    def action_zoom_out(self) -> None:
        """Zoom out."""
        self.zoom(1 / ZOOM_FACTOR)

    def action_fit(self) -> None:
        """Fit the whole run."""
        self.fit()

    def action_pan(self, direction: int) -> None:
        """Move a quarter of the view left or right."""
        self.t0 += direction * self.timeline_width * self.scale * PAN_FRACTION
        self._changed()

    # -- drawing ------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        """Theme changed: styles and cached strips are stale."""
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name)
        return style

    def render_line(self, y: int) -> Strip:
        """One screen line: the axis (fixed) or a lane."""
        width = self.size.width
        scroll_y = int(self.scroll_offset.y)
        row = y if y < AXIS_ROWS else y + scroll_y
        key = (self.generation, row, width, self.t0, self.scale, self.threshold_ms, self.selected)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(row, width)
            self._cache[key] = strip
        return strip

    def _render_row(self, row: int, width: int) -> Strip:
        tw = max(1, width - LABEL_WIDTH)
        base = self.rich_style
        if row < AXIS_ROWS:
            return self._axis(row, tw, width)
        index = row - AXIS_ROWS
        if index >= len(self._rows):
            return Strip.blank(width, base)
        spec = self._rows[index]
        times = cells.sample_times(self.t0, self.scale, tw)
        if spec.kind == "worker":
            chars, styles = self._worker_cells(spec, times, tw)
        elif spec.kind == "busy":
            chars, styles = self._busy_cells(spec, times, tw)
        elif spec.kind == "kernel":
            chars, styles = self._kernel_cells(spec, times, tw)
        elif spec.kind == "synth":
            chars, styles = self._synth_cells(times, tw)
        else:
            chars, styles = self._proof_cells(spec, tw)
        self._overlay_band(styles, tw)
        label = spec.label[: LABEL_WIDTH - 1].ljust(LABEL_WIDTH)
        if spec.kind == "synth":
            peak = int(self.model.synth_counts.max()) if len(self.model.synth_counts) else 0
            label = f"synth ≤{peak}"[: LABEL_WIDTH - 1].ljust(LABEL_WIDTH)
        return _strip(label, self._style("gantt--label"), chars, styles, base)

    def _band(self, tw: int) -> tuple[int, int] | None:
        gap = self.selected_gap
        if gap is None:
            return None
        a = int(np.floor((gap.start - self.t0) / self.scale))
        b = int(np.ceil((gap.end - self.t0) / self.scale))
        a, b = max(a, 0), min(b, tw)
        return (a, b) if b > a else None

    def _overlay_band(self, styles: list[Style], tw: int) -> None:
        band = self._band(tw)
        if band is None:
            return
        band_bg = Style(bgcolor=self._style("gantt--band").bgcolor)
        for c in range(*band):
            if styles[c].bgcolor is None:  # a marked gap keeps its own colour
                styles[c] = styles[c] + band_bg

    def _axis(self, row: int, tw: int, width: int) -> Strip:
        style = self._style("gantt--axis")
        chars = [" "] * tw
        if row == 0:
            for cell, _, label in ticks(self.t0, self.scale, tw):
                if cell + len(label) <= tw and all(
                    ch == " " for ch in chars[cell : cell + len(label) + 1]
                ):
                    chars[cell : cell + len(label)] = list(label)
            head = "time".ljust(LABEL_WIDTH)
        else:
            chars = ["─"] * tw
            for cell, _, _ in ticks(self.t0, self.scale, tw):
                chars[cell] = "┴" if cell < tw else chars[cell]
            now_cell = int((self.model.now_ms - self.t0) / self.scale)
            if 0 <= now_cell < tw and not self.model.finished:
                chars[now_cell] = "▼"
            head = "".ljust(LABEL_WIDTH)
        styles = [style] * tw
        self._overlay_band(styles, tw)
        return _strip(head, self._style("gantt--label"), chars, styles, self.rich_style)

    def _worker_cells(self, spec: Row, times: np.ndarray, tw: int) -> tuple[list[str], list[Style]]:
        lane = self.model.lanes[spec.lane]
        i, j = lane.covering(self.t0, self.t0 + tw * self.scale)
        samples = cells.sample_segments(lane.starts[i:j], lane.ends[i:j], lane.phases[i:j], times)
        kind, covered = cells.dominant(samples, tw, len(PHASE_CLASSES))
        grid = (samples != cells.EMPTY).reshape(tw, cells.SUB)
        chars: list[str] = []
        styles: list[Style] = []
        blank = self.rich_style
        for c in range(tw):
            k = int(kind[c])
            if k == cells.EMPTY:
                chars.append(" ")
                styles.append(blank)
            else:
                chars.append(cells.coverage_char(grid[c]) if covered[c] < cells.SUB else "█")
                styles.append(self._style(PHASE_CLASSES[Phase(k)]))
        return chars, styles

    def _busy_cells(self, spec: Row, times: np.ndarray, tw: int) -> tuple[list[str], list[Style]]:
        gpu = next(g for g in self.model.gpus if g.gpu == spec.gpu)
        inside = cells.sample_blocks(gpu.busy.starts, gpu.busy.ends, times).reshape(tw, cells.SUB)
        busy_style = self._style("gantt--busy")
        gap_style = self._style("gantt--gap")
        sel_style = self._style("gantt--gap-selected")
        chars = [cells.coverage_char(inside[c]) for c in range(tw)]
        styles = [busy_style] * tw
        # every gap at or above the threshold is marked, even one narrower than a cell
        idx = self._gap_index.get(spec.gpu, np.zeros(0, dtype=np.int64))
        for gi in idx.tolist():
            gap = self.model.gaps[gi]
            if gap.duration_ms < self.threshold_ms:
                continue
            a = int(np.floor((gap.start - self.t0) / self.scale))
            b = int(np.ceil((gap.end - self.t0) / self.scale))
            if b <= 0 or a >= tw:
                continue
            style = sel_style if gi == self.selected else gap_style
            for c in range(max(a, 0), min(max(b, a + 1), tw)):
                if not inside[c].all():
                    chars[c] = "░" if not inside[c].any() else "▒"
                    styles[c] = style
        return chars, styles

    def _kernel_cells(self, spec: Row, times: np.ndarray, tw: int) -> tuple[list[str], list[Style]]:
        gpu = next(g for g in self.model.gpus if g.gpu == spec.gpu)
        inside = cells.sample_blocks(gpu.kernel.starts, gpu.kernel.ends, times).reshape(
            tw, cells.SUB
        )
        # kernel lane: how much of each cell the kernels fill, as a bar height
        fill = inside.sum(axis=1)
        style = self._style("gantt--kernel-lane")
        return [cells.LOWER_EIGHTHS[int(f)] for f in fill], [style] * tw

    def _synth_cells(self, times: np.ndarray, tw: int) -> tuple[list[str], list[Style]]:
        m = self.model
        centres = times.reshape(tw, cells.SUB)[:, cells.SUB // 2]
        counts = cells.step_values(m.synth_times, m.synth_counts, centres)
        peak = max(int(m.synth_counts.max()) if len(m.synth_counts) else 0, 1)
        level = np.ceil(counts * 8 / peak).astype(np.int64)
        style = self._style("gantt--synth")
        return [cells.LOWER_EIGHTHS[min(int(v), 8)] for v in level], [style] * tw

    def _proof_cells(self, spec: Row, tw: int) -> tuple[list[str], list[Style]]:
        chars = [" "] * tw
        styles = [self.rich_style] * tw
        if spec.lane >= len(self._proof_rows):
            return chars, styles
        styles_alt = (self._style("gantt--proof"), self._style("gantt--proof-alt"))
        for n, i in enumerate(self._proof_rows[spec.lane]):
            a = int(np.floor((self._proof_starts[i] - self.t0) / self.scale))
            b = int(np.floor((self._proof_ends[i] - self.t0) / self.scale))
            if b < 0 or a >= tw:
                continue
            proof = self.model.proofs[i]
            style = styles_alt[(i + n) % 2]
            for c in range(max(a, 0), min(b + 1, tw)):
                chars[c] = "━"
                styles[c] = style
            if 0 <= a < tw:
                chars[a] = "┣"
            if 0 <= b < tw:
                chars[b] = "┫" if proof.completed else ("✗" if self.model.finished else "▶")
            label = f" {proof.job} "
            room = min(b, tw) - max(a + 1, 0)
            if room >= 6:
                text = label if len(label) <= room else label[: room - 1] + "…"
                start = max(a + 1, 0)
                for k, ch in enumerate(text):
                    chars[start + k] = ch
        return chars, styles


def _strip(
    label: str, label_style: Style, chars: list[str], styles: list[Style], base: Style
) -> Strip:
    """Join a label and cells into a Strip, one Segment per run of equal style."""
    segments = [Segment(label, label_style)]
    run_start = 0
    for c in range(1, len(chars) + 1):
        if c == len(chars) or styles[c] != styles[run_start]:
            segments.append(Segment("".join(chars[run_start:c]), base + styles[run_start]))
            run_start = c
    return Strip(segments)
