"""The gap inspector: both sides of one idle stretch, why it happened, and the raw log around it."""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from typing import ClassVar

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from parsers.breakdown import interval_unmeasured
from parsers.durations import duration, offset
from parsers.hosts import reader_for
from parsers.model import NAMES_BY_KEY, PHASE_KEYS, Gap, GapSide, LogModel
from parsers.rawlines import LineReader, RawLine
from parsers.sanitize import visible
from parsers.why import gap_why, why_lines
from tui.lanes import shown_id
from tui.prose import GLUE, HANG, Prose, glued
from tui.report import gap_cause_words, kernel_figure
from tui.screens import QUIT_BINDINGS, KeysFooter, SafeModal, scroll_lines

RAW_CONTEXT = 4  # raw lines shown before and after each edge
RAW_SHOW_BYTES = 4096  # a longer raw line is shown cut (a megabyte line would fill the screen)

SGR = re.compile(r"\x1b\[([0-9;]*)m")  # colour and weight: the only escapes that are drawn
# the SGR attributes drawn: reset, bold, italic, underline, their ends, the foreground
# colours (38: 256 colours or RGB, its parameters after it); never dim, conceal, blink,
# reverse, strike or a background, which can hide text or make it read as something else
# (dim on a dark grey, `2;38;5;236`, drew a log's text all but in the background's colour)
SGR_DRAWN = frozenset({0, 1, 3, 4, 21, 22, 23, 24, *range(30, 38), 39, *range(90, 98)})

# Foregrounds left to the default colour: black and white, and the 256 colours and RGB ones
# near them. On the dark theme black is hidden (a log's `\x1b[30m` or `38;2;1;2;3` hid its
# text) and the darkest greys nearly (`38;5;236`, `38;2;70;70;70`), on a light one white and
# the lightest greys; the default colour is the other extreme, so drawing them in it hides
# nothing and loses no colour a reader could see on either.
EXTREME_SGR = frozenset({30, 37, 97})
EXTREME_256 = frozenset({0, 7, 15, 16, 231, *range(232, 240), *range(251, 256)})
EXTREME_RGB_DARK, EXTREME_RGB_LIGHT = 80, 190  # every component under, or every one over


TAB_SIZE = 8  # a raw line's tab stops, every TAB_SIZE columns from its start


def styled_line(raw: bytes) -> Text:
    """A raw log line as it looked in the terminal: SGR colours drawn, tabs expanded to
    their stops, every other control character (other escapes too) made visible, markup
    never read. (A tab left in the text reached the terminal as it was: the inspectors'
    rows lost their right border, and stale cells showed through.)"""
    text = raw.decode("utf-8", "replace")
    pieces = SGR.split(text)  # text, parameters, text, ...
    safe = "".join(
        visible(piece, keep_tab=True) if k % 2 == 0 else drawn_sgr(piece)
        for k, piece in enumerate(pieces)
    )
    line = Text.from_ansi(safe, end="", tab_size=TAB_SIZE)
    line.end = ""
    if "\t" in line.plain:
        line.expand_tabs(TAB_SIZE)
    return line


def drawn_sgr(params: str) -> str:
    """The SGR escape of `params` (`1;32`) with what of it is drawn (SGR_DRAWN), or nothing."""
    if not params:
        return "\x1b[m"  # a reset
    kept: list[str] = []
    codes = params.split(";")
    k = 0
    while k < len(codes):
        code = int(codes[k]) if codes[k] else 0
        width = (
            {"5": 3, "2": 5}.get(codes[k + 1], 1) if code in (38, 48) and k + 1 < len(codes) else 1
        )
        if code == 38:
            # a colour near black or white ends the one before all the same: the default
            kept.extend(["39"] if _extreme(codes[k + 1 : k + width]) else codes[k : k + width])
        elif code in EXTREME_SGR:
            kept.append("39")
        elif code in SGR_DRAWN:
            kept.append(str(code))
        k += width
    return f"\x1b[{';'.join(kept)}m" if kept else ""


def _extreme(spec: list[str]) -> bool:
    """Whether the colour of SGR 38's parameters (`5;n`, `2;r;g;b`) is near black or white
    (EXTREME_256, EXTREME_RGB_*); one cut short is not drawn either."""
    try:
        values = [int(v) if v else 0 for v in spec]
    except ValueError:
        return True
    if values[:1] == [5] and len(values) == 2:
        return values[1] in EXTREME_256
    if values[:1] == [2] and len(values) == 4:
        rgb = values[1:]
        return max(rgb) < EXTREME_RGB_DARK or min(rgb) > EXTREME_RGB_LIGHT
    return True


def lasted(ms: float) -> str:
    """A duration as everywhere else (`3.52 s`, `812 ms`, `2d 20h54m`), glued: the window
    wraps its prose at its spaces, and `3.52` at one line's end with `s` on the next reads
    wrong."""
    return duration(ms).replace(" ", GLUE)


def gpu_name(model: LogModel, gpu: int) -> str:
    """A GPU as the model labels it (`GPU2`, `run 2:GPU2`, `host:GPU0`), glued: never
    wrapped inside."""
    return model.gpu_label(gpu).replace(" ", GLUE)


def when(model: LogModel, ms: float, gpu: int | None = None) -> str:
    """`1m20.506s (09:35:26.291)`: offset and, when the log gives it, wall-clock time (of an
    event of `gpu`: its own log's), as the time axis, the report and --from write them
    (`2d 20h54m29.258s (2026-03-19 06:03:13.667)`), each glued: never wrapped inside."""
    text = offset(ms).replace(" ", GLUE)
    wall = model.wall_text(ms, gpu)
    return f"{text} ({wall.replace(' ', GLUE)})" if wall is not None else text


def _side_block(model: LogModel, title: str, side: GapSide) -> Text:
    part = model.parts.get(side.index)
    text = Text()
    text.append(f"{title:<7}{HANG}", style="bold")
    text.append(shown_id(side.job), style="bold cyan")  # log text: no markup, no control
    text.append(f"  {glued('worker', side.worker)}")
    text.append(
        f"  {glued('partition', side.partition)}"
        if side.partition is not None
        else f"  {glued('whole', 'proof')}"
    )
    text.append(f"  ({visible(part.kind)})\n" if part.kind else "\n")
    if part.gpu_start is not None and part.gpu_end is not None:
        text.append(
            f"       GPU interval {when(model, part.gpu_start, part.gpu)}"
            f" → {when(model, part.gpu_end, part.gpu)}"
            f"  ({lasted(part.gpu_end - part.gpu_start)})\n"
        )
    unmeasured = interval_unmeasured(model, part)  # no wait of 0 that nothing measured
    phases = "  ".join(
        glued(*NAMES_BY_KEY[k].split(), "–" if k in unmeasured else lasted(part.phases_ms[k]))
        for k in PHASE_KEYS
        if k != "unknown" or part.phases_ms[k] > 0
    )
    text.append(f"       {phases}\n", style="dim")
    if part.queued is not None:
        text.append(f"       queued {when(model, part.queued, part.gpu)}")
        if part.synth_start is not None and part.synth_end is not None:
            text.append(f", synthesized in {lasted(part.synth_end - part.synth_start)}")
        text.append("\n")
    return text


def describe_gap(model: LogModel, gap: Gap, reader: LineReader | None = None) -> Text:
    """Everything the inspector says about a gap, as literal text."""
    gaps = model.gaps
    found = gaps.index_of(gap.gpu, gap.start)
    index = 0 if found is None else found
    on_gpu = gaps.gpu == gap.gpu
    # `GPU 0` as before; `host:GPU2` when the model holds several logs (parsers/hosts.py)
    name = gpu_name(model, gap.gpu) if model.gpu_keys else glued("GPU", gap.gpu)
    text = Text()
    text.append(f"Gap #{gaps.rank_of(index)} of {len(gaps)}", style="bold")
    text.append(
        f"  (#1 is the longest · by time {index + 1} of {len(gaps)}"
        f" · {int(on_gpu[: index + 1].sum())} of {int(on_gpu.sum())} on {name})\n\n"
    )
    text.append(
        f"{name} idle from {when(model, gap.start, gap.gpu)} to {when(model, gap.end, gap.gpu)}: "
    )
    text.append(lasted(gap.duration_ms), style="bold red")
    text.append("\n")
    text.append("crosses proof boundary: ")
    text.append(
        "yes" if gap.crosses_proof_boundary else "no (mid-proof: same job on both sides)",
        style="bold magenta" if gap.crosses_proof_boundary else "bold",
    )
    text.append("\ncause: ")
    text.append(gap_cause_words(gap), style="bold")
    if gap.after_queued is not None:
        delta = gap.after_queued - gap.start
        if gap.cause == "synthesis":
            text.append(
                f" (the next partition was queued at {when(model, gap.after_queued, gap.gpu)}, "
                f"{lasted(delta)} after the gap began)"
            )
        else:
            text.append(
                f" (the next partition was queued at {when(model, gap.after_queued, gap.gpu)}, "
                f"{lasted(-delta)} before the gap began, "
                f"yet started {lasted(gap.duration_ms)} later)"
            )
    text.append("\n")
    holes = model.kernel_gaps.get(gap.gpu)
    if holes is not None and len(holes.starts):
        mid = (gap.start + gap.end) / 2
        k = int(np.searchsorted(holes.starts, mid, side="right")) - 1
        if k >= 0 and holes.ends[k] >= mid:
            a, b = float(holes.starts[k]), float(holes.ends[k])
            text.append(
                f"kernels idle around it: {when(model, a, gap.gpu)} → {when(model, b, gap.gpu)}"
                f" = {lasted(b - a)} "
                f"({lasted(b - a - gap.duration_ms)} more than the gap itself)\n"
            )
    stats = next((g for g in model.gpus if g.gpu == gap.gpu), None)
    if stats is not None:
        figure = kernel_figure(stats).replace(" %", "%")
        text.append(f"{gpu_name(model, gap.gpu)} kernels over the run: {figure} of its span")
        if stats.kernel_is_estimate:
            text.append(
                " (an estimate: the log cannot tell which GPU ran some kernels)", style="yellow"
            )
        text.append("\n")
    # the deeper why (parsers/why.py;
    # docs/analysis.md#why-a-gap-deeper-inspector-gap-list-the-reports-largest-gaps)
    text.append("why, deeper:\n", style="bold")
    for line in why_lines(gap_why(model, gap, reader), sep=GLUE):
        text.append(f"  {line}\n")
    text.append("\n")
    text.append_text(_side_block(model, "before", gap.before))
    text.append_text(_side_block(model, "after", gap.after))
    return text


def raw_context(model: LogModel, reader: LineReader, gap: Gap) -> Text:
    """The raw log lines around both edges of the gap, with line numbers."""
    text = Text()
    for title, line_no in (
        ("gap begins: GPU_END of the partition before", model.parts.get(gap.before.index).end_line),
        ("gap ends: GPU_START of the partition after", model.parts.get(gap.after.index).start_line),
    ):
        text.append(f"{title} (line {line_no})\n", style="bold underline")
        try:
            rows = reader_for(reader, gap.before.index, model).lines(
                line_no - RAW_CONTEXT, line_no + RAW_CONTEXT, limit=RAW_SHOW_BYTES
            )
        except OSError as exc:
            text.append(f"  cannot read the log: {visible(str(exc))}\n", style="red")
            continue
        append_raw_lines(text, rows, {line_no})
        text.append("\n")
    return text


def append_raw_lines(text: Text, rows: Sequence[RawLine], marked: Container[int]) -> None:
    """Append raw log lines to `text`, numbered, drawn safely (styled_line), the lines whose
    numbers are in `marked` in reverse video, a cut line said to be cut."""
    if not rows:
        text.append("  (the log no longer holds these lines)\n", style="dim")
    for row in rows:
        # a long line goes on under its text, not at the margin (its number alone above)
        text.append(f"{row.number:>8}  {HANG}", style="dim")
        line = styled_line(row.data)
        if row.number in marked:
            line.stylize("reverse")
        text.append_text(line)
        if row.cut:
            text.append(
                f" … (cut: the line is {row.length:,} bytes, {len(row.data):,} shown)",
                style="dim italic",
            )
        text.append("\n")


class GapDetails(VerticalScroll):
    """The description of a gap and its raw lines (in the inspector, or beside the Gantt)."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.gap: Gap | None = None

    def compose(self) -> ComposeResult:
        """The description, then the raw lines."""
        yield Static(id="gap-facts")
        yield Static(id="gap-raw")

    def on_mount(self) -> None:
        """Say what this is in the border."""
        self.border_title = "gap inspector"
        self.border_subtitle = "n/N next/previous · esc closes"

    def show(self, model: LogModel, gap: Gap | None, reader: LineReader) -> None:
        """Describe `gap` (the same gap in a newer model, or another one)."""
        if gap is None:
            return
        index = model.gaps.index_of(gap.gpu, gap.start)
        if index is None:
            return
        current = model.gaps[index]
        self.gap = current
        facts = Prose(describe_gap(model, current, reader))
        self.query_one("#gap-facts", Static).update(facts)
        self.query_one("#gap-raw", Static).update(Prose(raw_context(model, reader, current)))


class InspectorScreen(SafeModal[None]):
    """Details of one gap; n/N step to the next/previous gap without closing."""

    DEFAULT_CSS = """
    InspectorScreen { align: center middle; }
    InspectorScreen > GapDetails {
        width: 96%; height: 92%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    InspectorScreen Static { width: 100%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        # the app's (which owns the selection), acted on as the key is read: a `y` or an `L`
        # typed right after `n n` is of the gap they step to
        Binding("n", "app.step_inspected(1)", "Next gap"),
        Binding("N", "app.step_inspected(-1)", "Prev gap"),
        Binding("y", "app.copy_id", "Copy id"),
        Binding("L", "app.log_lines", "Log"),
        *QUIT_BINDINGS,
        Binding("up,k", "scroll(-1)", "Scroll", show=False),
        Binding("down,j", "scroll(1)", "Scroll", show=False),
    ]

    def __init__(self, model: LogModel, gap: Gap, reader: LineReader) -> None:
        super().__init__()
        self.model = model
        self.gap = gap
        self.reader = reader

    def compose(self) -> ComposeResult:
        """The details, then the footer."""
        yield GapDetails(id="inspector")
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        """Fill the details."""
        self.show_gap(self.model, self.gap)

    def show_gap(self, model: LogModel, gap: Gap) -> None:
        """Show another gap (n/N) or the same one in a newer model."""
        self.model, self.gap = model, gap
        details = self.query_one(GapDetails)
        details.show(model, gap, self.reader)
        if details.gap is not None:
            self.gap = details.gap
        details.scroll_home(animate=False)

    def show_model(self, model: LogModel) -> None:
        """The log grew: say what it says now about the same gap (one the newer model does
        not have stays as the model it was picked in tells it: the gap is a row of that)."""
        if model.gaps.index_of(self.gap.gpu, self.gap.start) is None:
            return
        details = self.query_one(GapDetails)
        details.show(model, self.gap, self.reader)
        self.model = model
        if details.gap is not None:
            self.gap = details.gap

    def action_scroll(self, direction: int) -> None:
        """Scroll the details."""
        scroll_lines(self.query_one(GapDetails), direction)
