"""The Gantt view: one ScrollView drawn line by line from the model's columns.

Rows: a fixed time axis, then per GPU a busy lane (gaps marked), a kernel lane and one
lane per worker (a sub-row where split proving overlaps intervals), then synthesis
and proofs. Time runs horizontally under the view's own zoom (`scale`, ms per cell)
and left edge (`t0`); lanes scroll vertically.
"""

from __future__ import annotations

import itertools
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

from parsers.model import Gap, LogModel
from tui.lanes import PHASE_CLASSES, STYLE_NAMES, LaneDrawing, Row, Window

LABEL_WIDTH = 10
AXIS_ROWS = 2
THRESHOLDS_MS = (0, 10, 50, 100, 250, 500, 1000, 2000, 5000)
ZOOM_FACTOR = 2.0
MIN_SCALE = 0.05  # ms per cell, fully zoomed in
PAN_FRACTION = 0.25
# a selected gap is shown at GAP_SHARE of the width unless it already takes
# between GAP_SHARE_MIN and GAP_SHARE_MAX of it (then the zoom stays)
GAP_SHARE, GAP_SHARE_MIN, GAP_SHARE_MAX = 0.3, 0.05, 0.7


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
        Binding("N", "previous_gap", "Prev", show=False),
        Binding("right_square_bracket", "raise_threshold", "Min gap", key_display="]"),
        Binding("left_square_bracket", "lower_threshold", "Min gap −", show=False),
        Binding("enter", "inspect", "Inspect"),
        Binding("plus,equals_sign", "zoom_in", "Zoom", key_display="+"),
        Binding("minus", "zoom_out", "Out", key_display="-"),
        Binding("0", "fit", "Fit"),
        Binding("left,h", "pan(-1)", "Pan", show=False),
        Binding("right,l", "pan(1)", "Pan", show=False),
        Binding("end,f", "follow", "Follow"),
    ]

    class ViewChanged(Message):
        """Zoom, pan, threshold or selection changed (the header shows them)."""

    class InspectGap(Message):
        """The user asked for the inspector on a gap."""

        def __init__(self, gap: Gap) -> None:
            super().__init__()
            self.gap = gap

    def __init__(self, model: LogModel, *, live: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self.live = live  # the log is growing: the view can follow "now"
        self.pinned = live  # following: the right edge stays at now
        self.autofit = True  # following the whole run (until the user zooms)
        self.t0 = 0.0
        self.scale = 1000.0
        self.threshold_ms = 0
        self.selected: int | None = None  # index into model.gaps
        self.generation = 0
        self._drawing = LaneDrawing(model)
        self._cache: LRUCache[tuple[object, ...], Strip] = LRUCache(256)
        self._styles: dict[str, Style] = {}
        self._cell_styles: dict[tuple[int, bool], Style] = {}  # (style id, in band) -> style
        self._table: list[Style] = []
        self._fitted = False
        self._prepare()

    # -- model --------------------------------------------------------------------------

    def _prepare(self) -> None:
        self._drawing = LaneDrawing(self.model)
        self.virtual_size = Size(self.size.width, len(self._drawing.rows) + AXIS_ROWS)
        self.generation += 1
        self._cache.clear()

    def set_model(self, model: LogModel, restarted: bool = False) -> None:
        """Show a newer model of the same log.

        Args:
            model: the new model.
            restarted: a new run began (truncation, rotation): forget the selection and
                follow again.
        """
        selected_gap = None if restarted else self.selected_gap
        self.model = model
        self._prepare()
        self.selected = None
        if selected_gap is not None:
            for i, gap in enumerate(model.gaps):
                if gap.gpu == selected_gap.gpu and gap.start == selected_gap.start:
                    self.selected = i
                    break
        if restarted and self.live:
            self.pinned, self.autofit = True, True
        if self.pinned:
            self._show_now()
        else:
            self.refresh()

    def _show_now(self) -> None:
        """Following: fit the whole run, or keep the zoom with now near the right edge."""
        if self.autofit:
            self.fit(keep_pinned=True)
            return
        width_ms = self.timeline_width * self.scale
        self.t0 = self.model.now_ms - width_ms * 0.92
        self._changed()

    @property
    def rows(self) -> list[Row]:
        """The scrollable rows, top to bottom."""
        return self._drawing.rows

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
        self.virtual_size = Size(self.size.width, len(self._drawing.rows) + AXIS_ROWS)
        if not self._fitted and self.size.width > LABEL_WIDTH:
            self._fitted = True
            self.fit(keep_pinned=True)
        elif self.pinned:
            self._show_now()
        self._changed()

    def fit(self, keep_pinned: bool = False) -> None:
        """Show the whole run (a user's fit on a live log follows it again)."""
        if self.live and not keep_pinned:
            self.pinned, self.autofit = True, True
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
        """Zoom by `factor` (>1 zooms in) around the selected gap, the centre, or now."""
        self.autofit = False
        gap = self.selected_gap
        if gap is not None:
            centre = (gap.start + gap.end) / 2
        else:
            centre = self.t0 + self.timeline_width * self.scale / 2
        lo, hi = self.model.time_range
        max_scale = max((hi - lo) * 2 / self.timeline_width, MIN_SCALE)
        self.scale = min(max(self.scale / factor, MIN_SCALE), max_scale)
        if self.pinned:
            self._show_now()
        else:
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
        self.pinned = False
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
        self.pinned = False
        self.t0 += direction * self.timeline_width * self.scale * PAN_FRACTION
        self._changed()

    def action_follow(self) -> None:
        """Follow the end of the log again."""
        self.pinned = True
        self._show_now()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`follow` applies to growing logs only."""
        if action == "follow":
            return self.live
        return True

    # -- drawing ------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        """Theme changed: styles and cached strips are stale."""
        super().notify_style_update()
        self._styles.clear()
        self._cell_styles.clear()
        self._table = []
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

    def _window(self, width: int) -> Window:
        return Window(
            self.t0, self.scale, max(1, width - LABEL_WIDTH), self.threshold_ms, self.selected
        )

    def _render_row(self, row: int, width: int) -> Strip:
        w = self._window(width)
        if row < AXIS_ROWS:
            label, chars, styles = self._drawing.axis_cells(row, w)
            return self._strip(label, chars, styles, w.width)
        index = row - AXIS_ROWS
        rows = self._drawing.rows
        if index >= len(rows):
            return Strip.blank(width, self._cell_style(0, False))
        spec = rows[index]
        chars, styles = self._drawing.row_cells(spec, w)
        label = spec.label
        if spec.kind == "synth":
            peak = int(self.model.synth_counts.max()) if len(self.model.synth_counts) else 0
            label = f"synth ≤{peak}"
        return self._strip(label, chars, styles, w.width)

    def _band_mask(self, tw: int) -> np.ndarray:
        """Cells under the selected gap (drawn on a lighter background on every row)."""
        band = np.zeros(tw, dtype=bool)
        gap = self.selected_gap
        if gap is not None:
            a = int(np.floor((gap.start - self.t0) / self.scale))
            b = int(np.ceil((gap.end - self.t0) / self.scale))
            band[max(a, 0) : max(min(b, tw), 0)] = True
        return band

    def _strip(self, label: str, chars: np.ndarray, styles: np.ndarray, tw: int) -> Strip:
        """Label and cells as a Strip, one Segment per run of equal style.

        Args:
            label: the row's name (cut to the gutter).
            chars: one character per cell.
            styles: per cell an index into STYLE_NAMES (0: nothing drawn).
            tw: number of cells.
        """
        band = self._band_mask(tw)
        key = styles.astype(np.int64) * 2 + band
        starts = np.flatnonzero(np.diff(key, prepend=-1))
        bounds = [*starts.tolist(), tw]
        text = "".join(chars.tolist())
        table = self._style_table()
        segments = [
            Segment(label[: LABEL_WIDTH - 1].ljust(LABEL_WIDTH), self._cell_style(-1, False))
        ]
        segments += [
            Segment(text[a:b], table[k])
            for (a, b), k in zip(itertools.pairwise(bounds), key[starts].tolist(), strict=True)
        ]
        return Strip(segments)

    def _style_table(self) -> list[Style]:
        """Every cell style, indexed by style id * 2 + in band (rebuilt when the theme changes)."""
        if not self._table:
            self._table = [
                self._cell_style(sid, band)
                for sid in range(len(STYLE_NAMES))
                for band in (False, True)
            ]
        return self._table

    def _cell_style(self, style_id: int, in_band: bool) -> Style:
        """The full style of a cell (-1: the label gutter), cached until the theme changes."""
        key = (style_id, in_band)
        style = self._cell_styles.get(key)
        if style is None:
            base = self.rich_style
            name = "gantt--label" if style_id < 0 else STYLE_NAMES[style_id]
            style = base if name is None else base + self._style(name)
            if in_band and style.bgcolor == base.bgcolor:
                style = style + Style(bgcolor=self._style("gantt--band").bgcolor)
            self._cell_styles[key] = style
        return style
