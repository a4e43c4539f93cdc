"""The Gantt view: one ScrollView drawn line by line from the model's columns.

Rows: a fixed time axis, then per GPU a busy lane (gaps marked), a kernel lane and one
lane per worker (a sub-row where split proving overlaps intervals), then synthesis
and proofs. Time runs horizontally under the view's own zoom (`scale`, ms per cell)
and left edge (`t0`); lanes scroll vertically.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from typing import ClassVar

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from parsers.durations import duration
from parsers.model import Gap, LogModel, ProofTable
from parsers.proofs import FoundJob, job_numbers, proof_of
from parsers.rows import groups_of
from parsers.sanitize import visible
from tui.ascii_glyphs import spelled
from tui.cells import SUB
from tui.interval import interval_at, job_intervals, pick_interval, same_interval
from tui.lanes import FOUND, PHASE_CLASSES, STYLE_NAMES, LaneDrawing, Row, Window, head_cells
from tui.palettes import palette_css

LABEL_WIDTH = 10
AXIS_ROWS = 2
# the titles of `r`'s notices: the next one takes the place of the one showing
RUNS_NOTICE, LOGS_NOTICE = "runs", "logs"
STEP_NOTICES = frozenset({RUNS_NOTICE, LOGS_NOTICE})
GPU_ROW_KINDS = frozenset({"busy", "kernel", "worker"})  # the rows that are one GPU's own
# the most rows of the sentence said in place of the GPU lanes, wrapped (the longest, 170
# cells, takes three at 80 columns)
MESSAGE_ROWS = 3


def message_rows(text: str, width: int) -> list[str]:
    """`text` wrapped into at most MESSAGE_ROWS rows of `width` (the last cut with `…`)."""
    rows = textwrap.wrap(text, max(width, 8), break_on_hyphens=False) or [""]
    if len(rows) > MESSAGE_ROWS:
        last = " ".join(rows[MESSAGE_ROWS - 1 :])
        rows = [*rows[: MESSAGE_ROWS - 1], last[: max(width, 8) - 1] + "…"]
    return rows


THRESHOLDS_MS = (0, 10, 50, 100, 250, 500, 1000, 2000, 5000)
ZOOM_FACTOR = 2.0
WHEEL_FACTOR = 2**0.5  # a wheel notch zooms by half of what `+` does (wheels send many)
WHEEL_LINES = 3  # shift + wheel scrolls the lanes this many rows
MIN_SCALE = 0.05  # ms per cell, fully zoomed in
# far from 0 a float's resolution is coarse (2 ms near 1e19): a cell's samples must still differ
MIN_SAMPLE_ULPS = 4 * SUB
MARGIN = 0.02  # zoom-out and pan stop this share of the run beyond its ends
NOW_AT = 0.92  # following zoomed in, now is drawn this far across the view
# past the run's end a view zoomed in goes at most this share of itself (room for now's
# place while following), never more than the run's margin
PAST_END = 1.25 * (1 - NOW_AT)
# a growing log's run shorter than this is drawn over this much time from its start: a
# daemon that has just begun (its first lines a millisecond apart) drew a scale of
# milliseconds, its synthesis across the whole width, rescaled with every line
LIVE_MIN_SPAN_MS = 60_000.0
PAN_FRACTION = 0.25
# a selected gap keeps the zoom unless it takes more than GAP_SHARE_MAX of the width;
# then it is shown at GAP_SHARE of it
GAP_SHARE, GAP_SHARE_MAX = 0.3, 0.8
# a gap chosen to be looked at (the gap list) is shown at least this many cells wide, the
# view zoomed in as far as that needs (a 1 ms gap is no cell of a whole run's view)
GAP_CELLS_MIN = 4


def synth_label(peak: int, encoding: str | None) -> str:
    """The synthesis lane's name with its scale, `synth ≤10`, in the gutter whole (a peak of
    100 would have been cut to `synth ≤10`), spelled for `encoding` (tui/ascii_glyphs.py)."""
    for form in (f"synth ≤{peak}", f"synth≤{peak}", f"syn≤{peak}", f"≤{peak}"):
        label = spelled(form, encoding)
        if len(label) <= LABEL_WIDTH - 1:
            return label
    return label


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
        "gantt--found",
    }

    DEFAULT_CSS = f"""
    GanttView {{
        background: $surface;
        color: $text;
        scrollbar-size-horizontal: 0;
    }}
    GanttView > .gantt--label {{ color: $text; text-style: bold; }}
    GanttView > .gantt--axis {{ color: $text-muted; }}
    GanttView > .gantt--in-flight {{ text-style: italic; }}
    GanttView > .gantt--failed {{ text-style: bold; }}
    GanttView > .gantt--gap-selected {{ color: #ffffff; background: #d70000; text-style: bold; }}
    GanttView > .gantt--band {{ background: #3a3a3a; }}
    GanttView > .gantt--found {{ background: #005f5f; }}
    GanttView > .gantt--now {{ color: #ffff5f; }}
    {palette_css()}
    """

    # only what a newcomer needs is in the footer; `?` lists every key
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_gap", "Next gap"),
        Binding("N", "previous_gap", "Prev gap", show=False),
        # while a job found with / is highlighted, n / N step its intervals instead
        Binding("n", "next_found", "Next interval"),
        Binding("N", "previous_found", "Prev interval", show=False),
        Binding("enter", "inspect", "Inspect"),
        Binding("i", "inspect_interval", "Interval", show=False),  # in the help (80 columns)
        Binding("slash", "find", "Find job", key_display="/"),
        Binding("escape", "clear", "Clear", show=False),
        Binding("right_square_bracket", "raise_threshold", "Min gap +", show=False),
        Binding("left_square_bracket", "lower_threshold", "Min gap −", show=False),
        Binding("plus,equals_sign", "zoom_in", "Zoom in", show=False),
        Binding("minus", "zoom_out", "Zoom out", show=False),
        Binding("0", "fit", "Fit", show=False),
        Binding("r", "next_run", "Next run", show=False),
        Binding("left,h", "pan(-1)", "Pan", show=False),
        Binding("right,l", "pan(1)", "Pan", show=False),
        Binding("end,f", "follow", "Follow", show=False),
    ]

    class ViewChanged(Message):
        """Zoom, pan, threshold or selection changed (the header shows them)."""

    class FindJob(Message):
        """The user asked to look for a job."""

    class InspectGap(Message):
        """The user asked for the inspector on a gap."""

        def __init__(self, gap: Gap) -> None:
            super().__init__()
            self.gap = gap

    class InspectInterval(Message):
        """The user asked for the interval inspector on a GPU interval."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index  # into model.parts

    def __init__(self, model: LogModel, *, live: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self.live = live  # the log is growing: the view can follow "now"
        self.pinned = live  # following: the right edge stays at now
        self.autofit = True  # showing the whole run (until the user zooms, pans or selects)
        self.last_run_only = True  # a log with restarts opens on its last run (until `0`)
        self._run_spans: tuple[LogModel, list[tuple[int, float, float]]] | None = None
        self._log_shown: int | None = None  # of several logs, the one `r` showed last
        self.t0 = 0.0
        self.scale = 1000.0
        self.threshold_ms = 0
        self.selected: int | None = None  # index into model.gaps
        self.selected_part: int | None = None  # a GPU interval (index into model.parts)
        self.generation = 0
        self._drawing = LaneDrawing(model)
        self._cache: LRUCache[tuple[object, ...], Strip] = LRUCache(256)
        self._styles: dict[str, Style] = {}
        self._cell_styles: dict[tuple[int, bool], Style] = {}  # (style id, in band) -> style
        self._table: list[Style] = []
        self._fitted = False
        self.found_jobs: tuple[FoundJob, ...] = ()  # the proofs a search matched, by time
        self.found_index = 0  # the match shown
        self.empty_message = ""  # said in place of the lanes when there are none
        self.quiet = False  # the log has not grown for a while: its last stamp is not now
        self._prepare()

    # -- model --------------------------------------------------------------------------

    def _prepare(self) -> None:
        self._drawing = LaneDrawing(self.model)
        self._drawing.quiet = self.quiet
        self._apply_found()
        self.virtual_size = Size(self.content_width, self._virtual_height())
        self.generation += 1
        self._cache.clear()

    def set_quiet(self, quiet: bool) -> None:
        """The log has not grown for a while (`quiet`): its last stamp is no longer drawn
        as now; or it grows again."""
        if quiet == self.quiet:
            return
        self.quiet = self._drawing.quiet = quiet
        self.generation += 1
        self.refresh()

    def set_model(self, model: LogModel, restarted: bool = False) -> None:
        """Show a newer model of the same log.

        Args:
            model: the new model.
            restarted: a new run began (truncation, rotation): forget the selection and
                follow again.
        """
        selected_gap = None if restarted else self.selected_gap
        old, part = self.model, None if restarted else self.selected_part
        self.model = model
        self.selected_part = None if part is None else same_interval(old, model, part)
        self._prepare()
        self.selected = None
        if selected_gap is not None:
            self.selected = model.gaps.index_of(selected_gap.gpu, selected_gap.start)
        if restarted:
            self.found_jobs = ()
            self._apply_found()
            if self.live:
                self.pinned, self.autofit = True, True
        if self.pinned:
            self._show_now()
        elif self.autofit:
            # nobody moved the view yet: it shows the whole of what has been read
            self.fit(keep_pinned=True)
        else:
            self._clamp()
            self.refresh()

    def _show_now(self) -> None:
        """Following: fit the whole run, or keep the zoom with now near the right edge."""
        if self.autofit:
            self.fit(keep_pinned=True)
            return
        width_ms = self.timeline_width * self.scale
        self.t0 = self.model.now_ms - width_ms * NOW_AT
        self._clamp()
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
    def content_width(self) -> int:
        """Cells the rows are drawn in: the width less the vertical scrollbar's, which
        covers the last cells of every row once the lanes outgrow the height."""
        return max(0, self.size.width - self.scrollbar_size_vertical)

    @property
    def timeline_width(self) -> int:
        """Cells available for time (the rows' width less the label gutter)."""
        return max(1, self.content_width - LABEL_WIDTH)

    # -- view ---------------------------------------------------------------------------

    def on_resize(self) -> None:
        """Refit on the first real size; later keep the zoom and redraw."""
        self.virtual_size = Size(self.content_width, self._virtual_height())
        if (not self._fitted or self.autofit) and self.content_width > LABEL_WIDTH:
            self._fitted = True
            self.fit(keep_pinned=True)
        elif self.pinned:
            self._show_now()
        else:
            self._clamp()  # wider, the same zoom would show time past the run's ends
            self._keep_selection_in_view()
        self._changed()

    def _virtual_height(self) -> int:
        """The axis and the rows (no GPU lanes: rows for the sentence that says why). Of a
        restarted daemon's runs, blank rows after the last run's lanes where they are fewer
        than the view is high: its title comes to the top (`r`, the view it opens on), where
        the run before's last rows filled the top, under an axis that named that run."""
        rows = self._drawing.rows
        height = len(rows) + (0 if self.model.gpus else MESSAGE_ROWS)
        if self.model.restarted:
            titles = [k for k, row in enumerate(rows) if row.kind == "title"]
            if titles:
                height = max(height, titles[-1] + max(1, self.size.height - AXIS_ROWS))
        return height + AXIS_ROWS

    def _keep_selection_in_view(self) -> None:
        """Narrowed (the inspector opened beside the view, a smaller terminal), the view
        still shows the selected gap or interval: centred on it if it left the view."""
        start: float
        end: float
        if self.selected is not None:
            gap = self.model.gaps[self.selected]
            start, end = gap.start, gap.end
        elif self.selected_part is not None:
            start, end = self.model.parts.drawn_span(self.selected_part)
        else:
            return
        if start < self.t0 or end > self.t0 + self.timeline_width * self.scale:
            self.center_on((start + end) / 2)

    def watch_show_vertical_scrollbar(self) -> None:
        """The scrollbar came or went (the lanes outgrew the height, or fit in it again): the
        time is laid out again in the width it leaves, as on a resize."""
        self.on_resize()

    def fit(self, keep_pinned: bool = False) -> None:
        """Show the whole run (a user's fit on a live log follows it again). A log in which
        the daemon restarted opens on its last run, until the user fits the whole log."""
        if self.live and not keep_pinned:
            self.pinned, self.autofit = True, True
        if not keep_pinned:
            self.autofit = True
            self.last_run_only = False
        lo, hi = self.time_range
        runs = self.run_spans() if self.last_run_only else []
        if runs:
            lo = runs[-1][1]
            self.call_after_refresh(self.scroll_to_run, runs[-1][0])
        self._frame(lo, hi)

    def _frame(self, lo: float, hi: float) -> None:
        """Zoom so that [lo, hi] fills the view, with the usual margin (for the whole run:
        the widest zoom)."""
        width = max(hi - lo, 1.0)
        self.scale = min(
            max(width * (1 + MARGIN) / self.timeline_width, self.min_scale), self.max_scale
        )
        self.t0 = lo - width * MARGIN / 2
        self._clamp()
        self._changed()

    def run_spans(self) -> list[tuple[int, float, float]]:
        """Each run's time span, when the daemon restarted in the log (else empty): (the
        run, its first and last time) of each run that holds anything, its GPUs, synthesis
        or proofs; the runs are laid one after the other, each on its own lanes."""
        if not self.model.restarted:
            return []
        held = self._run_spans
        if held is not None and held[0] is self.model:  # the header asks at each tick
            return held[1]
        spans = self.log_spans()
        self._run_spans = (self.model, spans)
        return spans

    def show_span(self, lo: float, hi: float) -> None:
        """Zoom so that [lo, hi] fills the view (with the usual margin)."""
        self.autofit = False
        if self.live:
            self.pinned = False
        self._frame(lo, hi)

    def current_run(self) -> int | None:
        """The run in the middle of the view (None: one run)."""
        spans = self.run_spans()
        if not spans:
            return None
        centre = self.t0 + self.timeline_width * self.scale / 2

        def away(span: tuple[int, float, float]) -> float:
            _, lo, hi = span
            return 0.0 if lo <= centre <= hi else min(abs(centre - lo), abs(centre - hi))

        return min(spans, key=away)[0]

    @property
    def time_range(self) -> tuple[float, float]:
        """The time the view can show: the run's, at least LIVE_MIN_SPAN_MS of it while the
        log grows."""
        lo, hi = self.model.time_range
        if self.model.finished:
            return lo, hi
        runs = self.run_spans()  # a daemon just restarted: its new run's first minute
        return lo, max(hi, (runs[-1][1] if runs else lo) + LIVE_MIN_SPAN_MS)

    @property
    def min_scale(self) -> float:
        """The deepest zoom: MIN_SCALE, or coarser where the stamps are too large for it."""
        lo, hi = self.time_range
        magnitude = max(abs(lo), abs(hi)) if math.isfinite(lo) and math.isfinite(hi) else 0.0
        return max(MIN_SCALE, math.ulp(magnitude) * MIN_SAMPLE_ULPS)

    @property
    def max_scale(self) -> float:
        """The zoom that shows the whole run with its margin: zooming out stops there."""
        lo, hi = self.time_range
        span = max(hi - lo, 1.0)
        return max(self.min_scale, span * (1 + MARGIN) / self.timeline_width)

    @property
    def is_zoomed(self) -> bool:
        """Part of the run is out of view."""
        lo, hi = self.time_range
        return self.t0 > lo or self.t0 + self.timeline_width * self.scale < hi

    def _clamp(self) -> None:
        """Keep the zoom and the left edge inside the run (and its margin). Before its
        start, where nothing ever is, at most the share of the view the margin is on the
        whole run, so that a view zoomed in on the first seconds shows no time before 0;
        past its end at most PAST_END of the view (where following puts now), so that a
        view zoomed in on a days-long run is not panned hours past its end."""
        self.scale = min(max(self.scale, self.min_scale), self.max_scale)
        lo, hi = self.time_range
        margin = max(hi - lo, 1.0) * MARGIN / 2
        width_ms = self.timeline_width * self.scale
        before = min(margin, width_ms * MARGIN / (2 * (1 + MARGIN)))
        after = min(margin, width_ms * PAST_END)
        self.t0 = min(max(self.t0, lo - before), max(hi + after - width_ms, lo - before))

    def center_on(self, t: float) -> None:
        """Scroll so that time `t` is in the middle (as near as the run's ends allow)."""
        self.t0 = t - self.timeline_width * self.scale / 2
        self._clamp()
        self._changed()

    def zoom(self, factor: float) -> None:
        """Zoom by `factor` (>1 zooms in) around the selected gap when in view, else the centre."""
        self.autofit = False
        gap = self.selected_gap
        t1 = self.t0 + self.timeline_width * self.scale
        centre = (self.t0 + t1) / 2
        if gap is not None and gap.end >= self.t0 and gap.start <= t1:
            centre = (gap.start + gap.end) / 2
        self.scale = min(max(self.scale / factor, self.min_scale), self.max_scale)
        if self.pinned:
            self._show_now()
        else:
            self.center_on(centre)

    def zoom_at(self, x: int, factor: float) -> None:
        """Zoom by `factor` (>1 zooms in) keeping the time under screen column `x` there
        (the wheel); following a growing log, now stays at the right edge."""
        self.autofit = False
        cell = x - LABEL_WIDTH + 0.5 if x >= LABEL_WIDTH else self.timeline_width / 2
        t = self.t0 + cell * self.scale
        self.scale = min(max(self.scale / factor, self.min_scale), self.max_scale)
        if self.pinned:
            self._show_now()
            return
        self.t0 = t - cell * self.scale
        self._clamp()
        self._changed()

    def _changed(self) -> None:
        self.generation += 1
        self.refresh()
        self.post_message(self.ViewChanged())

    # -- actions ------------------------------------------------------------------------

    def _visible_gaps(self) -> list[int]:
        return np.flatnonzero(self.model.gaps.duration >= self.threshold_ms).tolist()

    def select_gap(self, index: int, reveal: bool = False) -> None:
        """Select a gap and centre it; the zoom stays unless the gap does not fit, or
        (`reveal`: chosen to be looked at) it would be under GAP_CELLS_MIN cells wide."""
        fitted = self.autofit
        self.pinned = False
        self.autofit = False
        self.selected = index
        self.selected_part = None
        gap = self.model.gaps[index]
        share = gap.duration_ms / (self.timeline_width * self.scale)
        if share > GAP_SHARE_MAX:
            self.scale = max(self.min_scale, gap.duration_ms / (self.timeline_width * GAP_SHARE))
        elif reveal and gap.duration_ms < GAP_CELLS_MIN * self.scale:
            self.scale = max(self.min_scale, gap.duration_ms / GAP_CELLS_MIN)
        self.center_on((gap.start + gap.end) / 2)
        self._still_fitted(fitted)
        self.show_gpu_rows(gap.gpu)

    def _still_fitted(self, fitted: bool) -> None:
        """A selection that left the whole run in view keeps it fitted (the view was fitted
        before it): a smaller terminal, the log growing, fit it again. A gap selected in
        the whole run's view kept that zoom on a resize, and the run's end went out of it."""
        self.autofit = fitted and not self.is_zoomed

    def select_interval(self, index: int, centre: bool = True) -> None:
        """Select GPU interval `index` (into model.parts) in place of a gap; `centre`: centre
        it, zooming out when it does not fit (a click selects it where it is)."""
        self.selected = None
        self.selected_part = index
        if not centre:
            self._changed()
            return
        fitted = self.autofit
        self.pinned = self.autofit = False
        start, end = self.model.parts.drawn_span(index)
        if end - start > self.timeline_width * self.scale * GAP_SHARE_MAX:
            self.scale = max(self.min_scale, (end - start) / (self.timeline_width * GAP_SHARE))
        self.center_on((start + end) / 2)
        self._still_fitted(fitted)
        self.show_gpu_rows(int(self.model.parts.gpu[index]))

    def clear_selection(self) -> None:
        """Forget the selected gap or interval and the job looked for."""
        self.selected = None
        self.selected_part = None
        if self.found_jobs:
            self.show_found(())
        self._changed()

    def show_found(self, jobs: tuple[FoundJob, ...], index: int = 0) -> None:
        """Highlight match `index` of `jobs` (a search's matches) and centre it."""
        self.found_jobs = jobs
        self.found_index = index
        self._apply_found()
        self.generation += 1
        if jobs:
            k = proof_of(self.model, jobs[index])
            proof = None if k is None else self.model.proofs[k]
            if proof is not None and proof.first_synth_start is not None:
                self.pinned = self.autofit = False
                end = proof.last_gpu_end if proof.last_gpu_end is not None else proof.last_seen
                end = end if end is not None else proof.first_synth_start
                span = end - proof.first_synth_start
                if span > self.timeline_width * self.scale * GAP_SHARE_MAX:
                    self.scale = max(self.min_scale, span / (self.timeline_width * GAP_SHARE_MAX))
                self.center_on((proof.first_synth_start + end) / 2)
                return
        self._changed()

    def _apply_found(self) -> None:
        self.refresh_bindings()  # n / N step gaps, or the found job's intervals
        jobs = frozenset(self.found_jobs[self.found_index : self.found_index + 1])
        t = self.model.parts
        ids = [k for found in jobs for k in job_numbers(self.model, found)]
        parts = np.flatnonzero(np.isin(t.job, ids)) if ids else np.zeros(0, dtype=np.int64)
        self._drawing.set_found(parts, jobs)

    def action_next_gap(self) -> None:
        """Select the next gap at or above the threshold."""
        self.step_gap(1)

    def action_previous_gap(self) -> None:
        """Select the previous gap at or above the threshold."""
        self.step_gap(-1)

    def action_next_found(self) -> None:
        """Select the found job's next interval."""
        self.step_found(1)

    def action_previous_found(self) -> None:
        """Select the found job's previous interval."""
        self.step_found(-1)

    def step_found(self, direction: int) -> None:
        """Select the found job's next (1) or previous (-1) interval, by GPU_START; from
        none of its own, its first or its last."""
        order = job_intervals(self.model, self.found_jobs[self.found_index]).tolist()
        if not order:
            self.notify("the job has no GPU interval yet", severity="warning")
            return
        if self.selected_part in order:
            k = order.index(self.selected_part) + direction
            if not 0 <= k < len(order):
                self.notify("last interval of the job" if direction > 0 else "first interval")
                return
        else:
            k = 0 if direction > 0 else len(order) - 1
        self.select_interval(order[k])

    def step_gap(self, direction: int) -> None:
        """Select the next (1) or previous (-1) gap at or above the threshold, by time."""
        shown = self._visible_gaps()
        if not shown:
            self.notify(f"no gap of {duration(self.threshold_ms)} or more", severity="warning")
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
        """Only gaps of the next larger threshold count (a selection below it is dropped)."""
        higher = [t for t in THRESHOLDS_MS if t > self.threshold_ms]
        if higher:
            self.threshold_ms = higher[0]
            gap = self.selected_gap
            if gap is not None and gap.duration_ms < self.threshold_ms:
                self.selected = None
                self.notify(f"the selected gap ({gap.duration_ms} ms) is below the threshold")
            self._changed()

    def action_lower_threshold(self) -> None:
        """Gaps of the next smaller threshold count too."""
        lower = [t for t in THRESHOLDS_MS if t < self.threshold_ms]
        if lower:
            self.threshold_ms = lower[-1]
            self._changed()

    def action_inspect(self) -> None:
        """Open the inspector on the selected gap (or the selected interval)."""
        gap = self.selected_gap
        if gap is None and self.selected_part is not None:
            self.post_message(self.InspectInterval(self.selected_part))
            return
        if gap is None:
            self.notify("select a gap first: n", severity="warning")
            return
        self.post_message(self.InspectGap(gap))

    def action_inspect_interval(self) -> None:
        """Open the interval inspector on the interval at the selection (tui/interval.py's
        pick_interval says which)."""
        # the first worker lane on screen, of the run in view (a restarted daemon's log opens
        # on its last run, an earlier run's lanes above it)
        run = self.current_run()
        lanes = [
            (k, r.lane)
            for k, r in enumerate(self.rows)
            if r.kind == "worker" and (run is None or self._host_of(r.gpu) == run)
        ]
        top = int(self.scroll_offset.y)
        lane = next((n for k, n in lanes if k >= top), lanes[0][1] if lanes else None)
        found = self.found_jobs[self.found_index] if self.found_jobs else None
        index = pick_interval(
            self.model,
            selected=self.selected_part,
            gap=self.selected_gap,
            job=found,
            lane=lane,
            centre_ms=self.t0 + self.timeline_width * self.scale / 2,
        )
        if index is None:
            self.notify("no GPU interval here", severity="warning")
            return
        if index != self.selected_part:
            self.select_interval(index)
        self.post_message(self.InspectInterval(index))

    # -- mouse --------------------------------------------------------------------------

    def row_at(self, y: int) -> Row | None:
        """The lane row at screen line `y` of the view (None: the axis, or below the rows)."""
        index = y - AXIS_ROWS + int(self.scroll_offset.y)
        if y < AXIS_ROWS or not self.model.gpus or not 0 <= index < len(self.rows):
            return None
        return self.rows[index]

    def on_click(self, event: events.Click) -> None:
        """A click on a worker lane selects the interval under the pointer (`i` or enter
        inspects it)."""
        row = self.row_at(event.y)
        if row is None or row.kind != "worker" or event.x < LABEL_WIDTH:
            return
        t = self.t0 + (event.x - LABEL_WIDTH + 0.5) * self.scale
        index = interval_at(self.model, row.lane, t, self.scale / 2)
        if index is not None:
            self.select_interval(index, centre=False)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        """The wheel zooms in around the pointer; with shift it scrolls the lanes."""
        self._wheel(event, 1)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        """The wheel zooms out around the pointer; with shift it scrolls the lanes."""
        self._wheel(event, -1)

    def _wheel(self, event: events.MouseEvent, direction: int) -> None:
        event.prevent_default()  # not the ScrollView's own scrolling
        event.stop()
        if event.shift or event.ctrl:
            self.scroll_relative(y=-direction * WHEEL_LINES, animate=False)
            return
        self.zoom_at(event.x, WHEEL_FACTOR if direction > 0 else 1 / WHEEL_FACTOR)

    def action_zoom_in(self) -> None:
        """Zoom in."""
        self.zoom(ZOOM_FACTOR)

    def action_zoom_out(self) -> None:
        """Zoom out."""
        self.zoom(1 / ZOOM_FACTOR)

    def action_fit(self) -> None:
        """Fit the whole run (`r`'s notice of the run or log it showed goes)."""
        self.fit()
        take_down = getattr(self.app, "take_down", None)  # the viewer's app
        if take_down is not None:
            take_down(STEP_NOTICES)

    def log_spans(self) -> list[tuple[int, float, float]]:
        """Of a model of several logs, each log that holds anything: (its index, its first
        and its last time: its GPUs', its synthesis' and its proofs')."""
        m = self.model
        if m.log_names is None:
            return []
        spans: dict[int, tuple[float, float]] = {}

        def add(k: int, lo: float, hi: float) -> None:
            a, b = spans.get(k, (math.inf, -math.inf))
            spans[k] = (min(a, lo), max(b, hi))

        for g in m.gpus:
            k = m.log_of(g.gpu)
            if g.span is not None and k is not None:
                add(k, *g.span)
        for k, (times, _) in (m.synth_by_log or {}).items():
            if len(times):
                add(k, float(times[0]), float(times[-1]))
        hosts = m.proof_hosts
        if hosts is not None:
            proofs = ProofTable.of(m.proofs)
            for k, idx in groups_of(hosts, np.arange(len(hosts), dtype=np.int64)):
                first = proofs.first[idx][~np.isnan(proofs.first[idx])]
                seen = proofs.seen[idx][~np.isnan(proofs.seen[idx])]
                if len(first) and len(seen):
                    add(int(k), float(first.min()), float(seen.max()))
        return [(k, lo, hi) for k, (lo, hi) in sorted(spans.items())]

    def action_next_run(self) -> None:
        """Show the next run of a log in which the daemon restarted, or the next of several
        logs (after the last: the first)."""
        spans = self.run_spans()
        if spans:
            now = self.current_run()
            at = [k for k, _, _ in spans]
            n = 0 if now is None or not self.is_zoomed else (at.index(now) + 1) % len(spans)
            run, lo, hi = spans[n]
            self.show_span(lo, hi)
            self.scroll_to_run(run)
            self.notify(f"run {run + 1} of {len(self.model.log_names or ())}", title=RUNS_NOTICE)
            return
        logs = self.log_spans()
        if len(logs) < 2:
            names = self.model.log_names
            if names is None:
                self.notify("one run in this log: the daemon did not restart")
            else:  # several logs, all but one empty (or none with anything)
                held = f"only {visible(names[logs[0][0]])} holds" if logs else "none holds"
                self.notify(f"of the {len(names)} logs {held} anything to show")
            return
        centre = self.t0 + self.timeline_width * self.scale / 2
        here = self._log_shown
        if here is None or here >= len(logs) or not logs[here][1] <= centre <= logs[here][2]:
            here = -1  # the view moved since: from the first again
        n = (here + 1) % len(logs)
        log, lo, hi = logs[n]
        self.show_span(lo, hi)
        self.scroll_to_run(log)
        self._log_shown = n
        names = self.model.log_names or ()  # by its number among them all (an empty one too)
        self.notify(f"log {log + 1} of {len(names)}: {visible(names[log])}", title=LOGS_NOTICE)

    def _host_of(self, gpu: int) -> int:
        """The log (a run of a restarted daemon) a GPU of the model is from (one log: 0)."""
        keys = self.model.gpu_keys
        return keys[gpu].host if keys is not None and gpu in keys else 0

    def show_gpu_rows(self, gpu: int) -> None:
        """Scroll the lanes, if need be, so that GPU `gpu`'s rows (its busy row first, where
        its gaps are drawn) are in view: a gap or an interval selected on a GPU scrolled out
        of view is shown, not selected unseen (several logs at 80x24)."""
        rows = self.rows
        # its own rows (a log's synthesis and proofs rows carry its first GPU's number)
        mine = [k for k, row in enumerate(rows) if row.gpu == gpu and row.kind in GPU_ROW_KINDS]
        if not mine:
            return
        top = int(self.scroll_offset.y)
        seen = max(1, self.size.height - AXIS_ROWS)
        first = mine[0]
        last = min(mine[-1], first + seen - 1)  # as many of its rows as fit, busy row first
        if top <= first and last < top + seen:
            return
        # up: its busy row at the top, under the title that names its log if it has one;
        # down: just far enough that those rows show (the gap's workers, not only its busy row)
        titled = first > 0 and rows[first - 1].kind == "title"
        y = first - titled if first < top else last - seen + 1
        self.scroll_to(y=max(0, y), animate=False)

    def scroll_to_run(self, k: int) -> None:
        """Scroll the lanes so that run `k`'s title row is at the top."""
        for index, row in enumerate(self.rows):
            if row.kind == "title" and row.log == k:
                self.scroll_to(y=index, animate=False)
                return

    def action_pan(self, direction: int) -> None:
        """Move a quarter of the view left or right (not past the run's ends)."""
        before = self.t0
        self.t0 += direction * self.timeline_width * self.scale * PAN_FRACTION
        self._clamp()
        if self.t0 != before:
            self.pinned = self.autofit = False
        self._changed()

    def action_follow(self) -> None:
        """Follow the end of the log again."""
        self.pinned = True
        self._show_now()

    def action_find(self) -> None:
        """Ask the app for the find box."""
        self.post_message(self.FindJob())

    def action_clear(self) -> None:
        """Drop the selection and the search highlight."""
        self.clear_selection()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`follow` applies to growing logs only; `escape` to a selection or a search."""
        if action == "follow":
            return self.live
        if action in ("next_gap", "previous_gap"):
            return not self.found_jobs
        if action in ("next_found", "previous_found"):
            return bool(self.found_jobs)
        if action == "clear":
            return (
                self.selected is not None or self.selected_part is not None or bool(self.found_jobs)
            )
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
        width = self.content_width
        scroll_y = int(self.scroll_offset.y)
        row = y if y < AXIS_ROWS else y + scroll_y
        # the tick line's gutter names the group of lanes the view begins in (several logs)
        group = (
            self._drawing.group_at(scroll_y, LABEL_WIDTH - 1)
            if row == AXIS_ROWS - 1 and not (self.empty_message and not self.model.gpus)
            else ""
        )  # (the rows under a message of no GPU lanes are not the lanes' rows)
        key = (
            self.generation,
            row,
            group,
            width,
            self.t0,
            self.scale,
            self.threshold_ms,
            self.selected,
            self.selected_part,
            self.empty_message,
        )
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(row, width, group)
            self._cache[key] = strip
        return strip

    def _window(self, width: int) -> Window:
        return Window(
            self.t0, self.scale, max(1, width - LABEL_WIDTH), self.threshold_ms, self.selected
        )

    def _render_row(self, row: int, width: int, group: str = "") -> Strip:
        w = self._window(width)
        if row < AXIS_ROWS:
            label, chars, styles = self._drawing.axis_cells(row, w)
            return self._strip(group or label, chars, styles, w.width)
        index = row - AXIS_ROWS
        rows = self._drawing.rows
        if self.empty_message and not self.model.gpus:
            # no GPU lanes: say why on the first row, then what there is (a log without
            # TIMELINE lines: the proofs lane of the jobs its tracing lines tell)
            said = message_rows(self.empty_message, width - 1)  # the rows it needs
            if index < len(said) or not self.model.traced_jobs:
                text = f" {said[index]}" if index < len(said) else ""
                return Strip([Segment(text[:width].ljust(width), self._cell_style(-1, False))])
            index -= len(said)
        if index >= len(rows):
            return Strip.blank(width, self._cell_style(0, False))
        spec = rows[index]
        chars, styles = self._drawing.row_cells(spec, w)
        label = spec.label
        if spec.kind == "synth":
            m = self.model
            counts = m.synth_steps(spec.log)[1]  # a log's own, in a model of several
            peak = int(counts.max()) if len(counts) else 0
            label = synth_label(peak, getattr(self.app, "terminal_encoding", None))
        return self._strip(label, chars, styles, w.width)

    def _band_mask(self, tw: int) -> np.ndarray:
        """Cells under the selected gap or interval (a lighter background on every row)."""
        band = np.zeros(tw, dtype=bool)
        gap = self.selected_gap
        span = (float(gap.start), float(gap.end)) if gap is not None else None
        if self.selected_part is not None:
            span = self.model.parts.drawn_span(self.selected_part)
        if span is not None:
            a = int(np.floor((span[0] - self.t0) / self.scale))
            b = max(int(np.ceil((span[1] - self.t0) / self.scale)), a + 1)
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
        key = styles.astype(np.int64) * 2 + band  # FOUND ids come after every plain one
        starts = np.flatnonzero(np.diff(key, prepend=-1))
        bounds = [*starts.tolist(), tw]
        # one string per cell, joined per run: a wide character's second cell is ""
        cells_ = chars.tolist()
        table = self._style_table()
        segments = [
            # by cells: a log's name in the axis's gutter may hold wide characters
            Segment(head_cells(label, LABEL_WIDTH - 1) + " ", self._cell_style(-1, False))
        ]
        segments += [
            Segment("".join(cells_[a:b]), table[k])
            for (a, b), k in zip(itertools.pairwise(bounds), key[starts].tolist(), strict=True)
        ]
        return Strip(segments)

    def _style_table(self) -> list[Style]:
        """Every cell style, indexed by style id * 2 + in band (rebuilt when the theme changes)."""
        if not self._table:
            self._table = [
                self._cell_style(sid, band) for sid in range(2 * FOUND) for band in (False, True)
            ]
        return self._table

    def _cell_style(self, style_id: int, in_band: bool) -> Style:
        """The full style of a cell (-1: the label gutter), cached until the theme changes."""
        key = (style_id, in_band)
        style = self._cell_styles.get(key)
        if style is None:
            base = self.rich_style
            found = style_id >= FOUND
            name = "gantt--label" if style_id < 0 else STYLE_NAMES[style_id % FOUND]
            style = base if name is None else base + self._style(name)
            if found and style.bgcolor == base.bgcolor:
                style = style + Style(bgcolor=self._style("gantt--found").bgcolor)
            elif in_band and style.bgcolor == base.bgcolor:
                style = style + Style(bgcolor=self._style("gantt--band").bgcolor)
            self._cell_styles[key] = style
        return style
