"""The interval inspector: one GPU interval's job, phases, lock, queue and raw lines, and
which interval a selection, a click or a search points at."""

from __future__ import annotations

import contextlib
from typing import ClassVar

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Static

from parsers.breakdown import interval_unmeasured
from parsers.durations import duration
from parsers.hosts import reader_for
from parsers.model import I64, NAMES_BY_KEY, PHASE_KEYS, PHASE_NAMES, Gap, LogModel, Partition
from parsers.proofs import FoundJob, job_numbers
from parsers.rawlines import LineReader
from parsers.sanitize import visible
from tui.inspector import RAW_SHOW_BYTES, append_raw_lines, gpu_name, lasted, when
from tui.lanes import abbreviate, shown_id
from tui.prose import HANG, Prose, glued
from tui.screens import QUIT_BINDINGS, SafeModal, scroll_lines

# an interval's raw lines beyond twice this many: its first and its last this many are shown
RAW_EDGE_LINES = 20


def _by_gpu_start(model: LogModel, idx: I64) -> I64:
    """Partitions `idx` in GPU_START order (ties: by index), those without one left out."""
    starts = model.parts.gpu_start[idx]
    idx = idx[~np.isnan(starts)]
    return idx[np.lexsort((idx, model.parts.gpu_start[idx]))]


def worker_intervals(model: LogModel, index: int) -> I64:
    """The intervals of partition `index`'s worker (on its GPU, every sub-row of its lane),
    by GPU_START: what `n` / `N` step through in the interval inspector."""
    t = model.parts
    same = (t.gpu == t.gpu[index]) & (t.worker == t.worker[index])
    return _by_gpu_start(model, np.flatnonzero(same))


def job_intervals(model: LogModel, found: FoundJob) -> I64:
    """The intervals of the partitions of proof `found`, by GPU_START."""
    t = model.parts
    return _by_gpu_start(model, np.flatnonzero(np.isin(t.job, job_numbers(model, found))))


def step_in(order: I64, index: int, direction: int) -> int | None:
    """The interval after (1) or before (-1) `index` in `order`; from outside it, the first
    or the last; None past the ends."""
    at = np.flatnonzero(order == index)
    if not len(at):
        return int(order[0 if direction > 0 else -1]) if len(order) else None
    k = int(at[0]) + direction
    return int(order[k]) if 0 <= k < len(order) else None


def interval_at(model: LogModel, lane: int, t_ms: float, tolerance_ms: float) -> int | None:
    """The interval drawn on worker lane `lane` at `t_ms` (a click): the one whose segment
    covers it, else the nearest within `tolerance_ms` (None: none)."""
    segs = model.lanes[lane].window(t_ms - tolerance_ms, t_ms + tolerance_ms)
    if not len(segs):
        return None
    distance = np.maximum(segs.starts - t_ms, 0) + np.maximum(t_ms - segs.ends, 0)
    return int(segs.partition[int(np.argmin(distance))])


def interval_near(model: LogModel, lane: int, t_ms: float) -> int | None:
    """The interval on lane `lane` that covers `t_ms`, else the next one after it, else the
    lane's last (None: an empty lane)."""
    segs = model.lanes[lane].segments
    if not len(segs):
        return None
    k = min(int(np.searchsorted(segs.ends, t_ms, side="right")), len(segs) - 1)
    return int(segs.partition[k])


def pick_interval(
    model: LogModel,
    *,
    selected: int | None,
    gap: Gap | None,
    job: FoundJob | None,
    lane: int | None,
    centre_ms: float,
) -> int | None:
    """The interval `i` inspects: the one selected (a click, `n` after a search), else the
    one after the selected gap, else the found job's first (by GPU_START), else the one at
    the centre of the view on the first worker lane."""
    if selected is not None:
        return selected
    if gap is not None:
        return gap.after.index
    if job is not None:
        found = job_intervals(model, job)
        if len(found):
            return int(found[0])
    return None if lane is None else interval_near(model, lane, centre_ms)


def same_interval(old: LogModel, new: LogModel, index: int) -> int | None:
    """Interval `index` of `old` in a newer model of the same log (the same job, partition,
    worker and GPU_START), or None when it is not there."""
    o, t = old.parts, new.parts
    job = o.job_of(index)
    part, worker, start = int(o.partition[index]), int(o.worker[index]), o.gpu_start[index]
    if index < len(t) and t.job_of(index) == job and int(t.partition[index]) == part:
        return index
    numbers = [k for k, name in enumerate(t.jobs) if name == job]
    same = np.isin(t.job, numbers) & (t.partition == part) & (t.worker == worker)
    candidates = np.flatnonzero(same & ((t.gpu_start == start) | np.isnan(t.gpu_start)))
    return int(candidates[0]) if len(candidates) else None


def interval_words(model: LogModel, index: int, job: bool = True) -> str:
    """The status line's words for a selected interval: `w1 p9 porep…0-6 3.46 s` (`job`:
    with its job's id)."""
    t = model.parts
    worker, part = int(t.worker[index]), int(t.partition[index])
    start, end = float(t.gpu_start[index]), float(t.gpu_end[index])
    text = f"w{worker if worker >= 0 else '?'} {'whole' if part < 0 else f'p{part}'}"
    if job:
        text += f" {abbreviate(t.job_of(index), 16)}"
    if end == end:
        text += f" {duration(end - start)}"
    return text


LABEL_CELLS = 11  # the interval inspector's label column


def _label(text: Text, name: str) -> None:
    """A line's label, its wrapped part going on after the label's column (HANG)."""
    text.append(f"{name:<{LABEL_CELLS}}{HANG}", style="bold")


def _state(model: LogModel, part: Partition) -> str:
    if part.gpu_end is not None:
        return "completed"
    if part.failed and _cut_by_restart(model, part):
        # nothing after its GPU_START in its run: when it failed the log does not say
        return "failed: the daemon restarted after it"
    if part.failed:
        return "failed"
    # the log ends while it runs: it may have completed since, or failed
    return "running when the log ends" if model.finished else "running"


def _cut_by_restart(model: LogModel, part: Partition) -> bool:
    """`part` is the last interval its worker began in a run the daemon restarted after
    (what failed with the restart, not what its worker moved on from)."""
    keys, runs = model.gpu_keys, model.run_lines
    if keys is None or runs is None or part.gpu is None or part.gpu not in keys:
        return False
    if keys[part.gpu].host >= len(runs) - 1 or part.gpu_start is None:
        return False  # the last run: the log ends in it, no restart after
    order = worker_intervals(model, part.index)
    return bool(len(order)) and int(order[-1]) == part.index


def _unended(model: LogModel, order: I64) -> str:
    """`; 1 failed, 2 running` of the intervals `order`: the report counts the ended ones
    (a worker's 26 intervals here were its 25 there)."""
    t = model.parts
    ended = ~np.isnan(t.take("gpu_end", order))
    failed = t.take("failed", order) & ~ended
    said = [
        f"{n} {what}"
        for n, what in ((int(failed.sum()), "failed"), (int((~ended & ~failed).sum()), "running"))
        if n
    ]
    return f"; {', '.join(said)}" if said else ""


def describe_interval(model: LogModel, index: int) -> Text:
    """Everything the interval inspector says about interval `index`, as literal text."""
    part = model.parts.get(index)
    order = worker_intervals(model, index)
    gpu = gpu_name(model, part.gpu) if part.gpu is not None else glued("GPU", "?")
    worker = "?" if part.worker is None else str(part.worker)
    text = Text()
    at = np.flatnonzero(order == index)
    if len(at):
        text.append(f"Interval {int(at[0]) + 1} of {len(order)} of worker {worker}", style="bold")
        text.append(f" on {gpu} (by GPU_START{_unended(model, order)})\n\n")
    _label(text, "job")
    text.append(shown_id(part.job), style="bold cyan")  # log text: no markup, no control
    text.append(f"  ({visible(part.kind)})\n" if part.kind else "\n")
    _label(text, "partition")
    text.append("whole proof" if part.partition is None else str(part.partition))
    text.append(f" · {glued('worker', worker)} · {gpu}\n")
    if part.gpu_start is None:
        text.append("never reached GPU_START\n", style="dim")
        return text
    _label(text, "GPU_START")
    text.append(f"{when(model, part.gpu_start, part.gpu)}  {glued('(line', part.start_line)})\n")
    _label(text, "GPU_END")
    if part.gpu_end is not None:
        text.append(f"{when(model, part.gpu_end, part.gpu)}  {glued('(line', part.end_line)})\n")
        _label(text, "length")
        text.append(duration(part.gpu_end - part.gpu_start), style="bold")
        text.append("  completed\n")
    else:
        text.append(f"none: {_state(model, part)}\n", style="yellow")
    unmeasured = interval_unmeasured(model, part)
    _phases(text, part, unmeasured)
    # a lock placed with no lock line: back from the end of the kernels
    _lock(text, model, part, inferred=bool(unmeasured) and part.lock_acquired is not None)
    _queue(text, model, part)
    _segments(text, part)
    return text


def _phases(text: Text, part: Partition, unmeasured: frozenset[str]) -> None:
    text.append("\nphases", style="bold")
    # docs/analysis.md#phase-segments: an interval's segments tile it
    stretch = "failed" if part.failed else "running"
    text.append(
        f"  {HANG}(they tile the interval: together its length)\n"
        if part.gpu_end is not None
        else f"  {HANG}(so far: the {stretch} stretch is none of them)\n",
        style="dim",
    )
    for k in PHASE_KEYS:
        if k != "unknown" or part.phases_ms[k] > 0:
            # no lock line placed the lock: no time before it was measured
            shown = "–" if k in unmeasured else duration(part.phases_ms[k])
            text.append(f"  {NAMES_BY_KEY[k]:<10} {shown:>9}\n")


def _lock(text: Text, model: LogModel, part: Partition, inferred: bool) -> None:
    _label(text, "lock")
    if part.lock_acquired is None:
        # no wait of 0: a wait nothing measured (the unknown time may hold it). No lock line,
        # or one whose lock falls outside the interval (docs/analysis.md): neither places it
        text.append(
            "not placed, its wait not known: no lock line places it in the interval\n",
            style="dim",
        )
        return
    if not inferred:
        text.append(f"{glued('waited', lasted(part.phases_ms['lock_wait']))} (lock wait), ")
    text.append(glued("taken", when(model, part.lock_acquired, part.gpu)))
    if inferred:
        # placed back from the end of the kernels or from its unlock line
        # (docs/analysis.md#phase-segments): when the lock was taken is inferred, how long
        # it was waited for is not known
        stats = next((g for g in model.gpus if g.gpu == part.gpu), None)
        lockless = stats is None or not stats.lock_printed
        none = "the log holds no lock line" if lockless else "no lock line of its"
        text.append(f" (inferred: {none}; the wait is not measured)")
    if part.unlock is not None:
        text.append(f", {glued('released', when(model, part.unlock, part.gpu))}")
        text.append(f" ({glued('held', lasted(part.unlock - part.lock_acquired))})")
    text.append("\n")


def _queue(text: Text, model: LogModel, part: Partition) -> None:
    if part.synth_start is not None and part.synth_end is not None:
        _label(text, "synthesis")
        text.append(
            f"{when(model, part.synth_start, part.gpu)} → {when(model, part.synth_end, part.gpu)}"
            f" = {lasted(part.synth_end - part.synth_start)}\n"
        )
    _label(text, "queue")
    if part.queued is not None and part.gpu_start is not None:
        text.append(
            f"{glued('queued', when(model, part.queued, part.gpu))}, "
            f"{glued('GPU_START', lasted(part.gpu_start - part.queued), 'later')} (queue time)\n"
        )
    else:
        text.append("no queue event\n", style="dim")
    _label(text, "pickup")
    if part.pickup is not None and part.gpu_start is not None:
        text.append(
            f"picked up {when(model, part.pickup, part.gpu)}, "
            f"{glued(lasted(part.gpu_start - part.pickup), 'before', 'GPU_START')}\n"
        )
    else:
        text.append("no GPU_PICKUP event\n", style="dim")


def _segments(text: Text, part: Partition) -> None:
    if not part.segments or part.gpu_start is None:
        return
    text.append("\nsegments", style="bold")
    text.append(f"  {HANG}(from GPU_START)\n", style="dim")
    for start, end, phase in part.segments:
        text.append(
            f"  +{duration(start - part.gpu_start):<9} {PHASE_NAMES[phase]:<10}"
            f" {duration(end - start):>9}\n"
        )


def next_start_line(model: LogModel, index: int) -> int | None:
    """The line of the next GPU_START of interval `index`'s worker (None: none read)."""
    t = model.parts
    first = int(t.start_line[index])
    later = (t.worker == t.worker[index]) & (t.start_line > first) & (t.gpu == t.gpu[index])
    return int(t.start_line[later].min()) if later.any() else None


def interval_raw(model: LogModel, reader: LineReader, index: int) -> Text:
    """The raw log lines of interval `index`, GPU_START to GPU_END (the first and the last
    RAW_EDGE_LINES of a longer stretch), its two edges marked. An interval without a
    GPU_END (failed, or still running) runs to its worker's next GPU_START, what is known
    of where it ended (the lines in between may say why); one still running when nothing
    follows it on its worker, to the log's last line."""
    t = model.parts
    first, last = int(t.start_line[index]), int(t.end_line[index])
    source = reader_for(reader, index, model)
    note = ""
    text = Text()
    if last < first:
        nxt = next_start_line(model, index)
        last = first if nxt is None else nxt
        if nxt is not None:
            note = " (no GPU_END: to its worker's next GPU_START)"
        elif not t.failed[index]:
            with contextlib.suppress(OSError):  # said as the lines are read, below
                last = max(first, source.line_count())
            said = "running when the log ends" if model.finished else "running"
            note = f" (no GPU_END: {said}; to the log's last line)"
    text.append(f"raw lines {first}–{last}", style="bold underline")
    text.append(f"{note}\n", style="dim")
    spans = [(first, last)]
    if last - first + 1 > 2 * RAW_EDGE_LINES:
        spans = [(first, first + RAW_EDGE_LINES - 1), (last - RAW_EDGE_LINES + 1, last)]
    for k, (a, b) in enumerate(spans):
        if k:
            left_out = spans[1][0] - spans[0][1] - 1
            text.append(f"  … {left_out:,} lines left out …\n", style="dim italic")
        try:
            rows = source.lines(a, b, limit=RAW_SHOW_BYTES)
        except OSError as exc:
            text.append(f"  cannot read the log: {visible(str(exc))}\n", style="red")
            return text
        append_raw_lines(text, rows, {first, last})
    return text


class IntervalDetails(VerticalScroll):
    """The description of one GPU interval and its raw lines."""

    def compose(self) -> ComposeResult:
        """The description, then the raw lines."""
        yield Static(id="interval-facts")
        yield Static(id="interval-raw")

    def on_mount(self) -> None:
        """Say what this is in the border."""
        self.border_title = "interval inspector"
        self.border_subtitle = "n/N next/previous of its worker · esc closes"

    def show(self, model: LogModel, index: int, reader: LineReader) -> None:
        """Describe interval `index` of `model`."""
        self.query_one("#interval-facts", Static).update(Prose(describe_interval(model, index)))
        self.query_one("#interval-raw", Static).update(Prose(interval_raw(model, reader, index)))


class IntervalScreen(SafeModal[None]):
    """Details of one GPU interval; n/N step to its worker's next/previous interval."""

    DEFAULT_CSS = """
    IntervalScreen { align: center middle; }
    IntervalScreen > IntervalDetails {
        width: 96%; height: 92%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    IntervalScreen Static { width: 100%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("n", "step(1)", "Next interval"),
        Binding("N", "step(-1)", "Prev interval"),
        Binding("y", "app.copy_id", "Copy id"),
        Binding("L", "app.log_lines", "Log"),
        *QUIT_BINDINGS,
        Binding("up,k", "scroll(-1)", "Scroll", show=False),
        Binding("down,j", "scroll(1)", "Scroll", show=False),
    ]

    class Shown(Message):
        """The screen shows interval `index` (the Gantt selects it and centres on it)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, model: LogModel, index: int, reader: LineReader) -> None:
        super().__init__()
        self.model = model
        self.index = index
        self.reader = reader

    def compose(self) -> ComposeResult:
        """The details, then the footer."""
        yield IntervalDetails(id="interval")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Fill the details."""
        self.show_interval(self.model, self.index)

    def show_interval(self, model: LogModel, index: int) -> None:
        """Show interval `index` of `model`, from the top."""
        self.model, self.index = model, index
        details = self.query_one(IntervalDetails)
        details.show(model, index, self.reader)
        details.scroll_home(animate=False)

    def show_model(self, model: LogModel) -> None:
        """The log grew: the same interval as the newer model tells it."""
        index = same_interval(self.model, model, self.index)
        if index is not None:
            self.model, self.index = model, index
            self.query_one(IntervalDetails).show(model, index, self.reader)

    def action_step(self, direction: int) -> None:
        """The next (1) or previous (-1) interval of the same worker, by GPU_START."""
        pick = step_in(worker_intervals(self.model, self.index), self.index, direction)
        if pick is None:
            self.notify("last interval of the worker" if direction > 0 else "first interval")
            return
        self.show_interval(self.model, pick)
        self.post_message(self.Shown(pick))

    def action_scroll(self, direction: int) -> None:
        """Scroll the details."""
        scroll_lines(self.query_one(IntervalDetails), direction)
