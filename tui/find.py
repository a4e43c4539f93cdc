"""Finding a job: which jobs match a query, and the proof view (partitions, times, gaps)."""

from __future__ import annotations

import re
from typing import ClassVar

import numpy as np
from rich import box
from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from parsers.durations import counted, duration, offset
from parsers.model import LogModel
from parsers.proofs import FoundJob, failed_proofs, found_job, job_numbers, proof_of
from parsers.sanitize import visible
from parsers.tracing import COMPLETED, FAILED, TracedJob
from tui.interval import job_intervals
from tui.lanes import LOG_NAME_CELLS, HostNames, abbreviate, gpu_label_in, hosts_of, shown_id
from tui.prose import GLUE, Prose, glued
from tui.report import FittedNames, gap_cause_words
from tui.screens import QUIT_BINDINGS, KeyScroll, KeysFooter, SafeModal

_TOKEN = re.compile(r"[A-Za-z0-9]+")
GAP_KEYS = 9  # the proof view's first gaps open with the keys 1 … 9


def find_jobs(model: LogModel, query: str) -> tuple[FoundJob, ...]:
    """The proofs whose job id starts with `query` or holds it (`porep` finds `ps-porep-…`;
    case aside), or, for a number, holds it as one of its numbers (a sector: `12` is not
    `120`), by time: a job proved again after a restart is found once per run. A job whose
    id is the query comes first (`porep-1000-12` before `ps-porep-1000-12-45196`, started
    earlier)."""
    q = query.strip()
    if not q:
        return ()
    folded = q.lower()
    matches = []
    for k, p in enumerate(model.proofs):
        job = p.job.lower()
        # a number (a sector): the id's start or one of its numbers; else any part of it
        digits = q.isdigit()
        if (job.startswith(folded) or q in _TOKEN.findall(p.job)) if digits else folded in job:
            first = p.first_synth_start if p.first_synth_start is not None else np.inf
            matches.append((job != folded, first, k, found_job(model, k)))
    return tuple(m[-1] for m in sorted(matches, key=lambda m: m[:3]))


def proof_gaps(model: LogModel, found: FoundJob) -> list[int]:
    """The gaps (indices into model.gaps, by time) with a partition of `found` on either
    side."""
    table = model.gaps
    numbers = job_numbers(model, found)
    sides = model.parts.job
    mine = np.isin(sides[table.before], numbers) | np.isin(sides[table.after], numbers)
    return np.flatnonzero(mine).tolist()


def _gpu_name(
    model: LogModel,
    gpu: int,
    prefix: str = "",
    cells: int | None = None,
    own: bool = False,
    hosts: HostNames | None = None,
) -> str:
    """A GPU as one log's (`2`, or `prefix` before it), or as a model of several logs names
    it (`curio-mixed.log:GPU0`, not its id in the model, 1000; `cells`: cut to so many;
    `own`: the ordinal its log printed, where the log is named once for the whole proof)."""
    key = model.gpu_keys.get(gpu) if model.gpu_keys else None
    if key is None:
        return f"{prefix}{gpu}"
    if own:
        return f"{prefix}{key.ordinal}"
    label = model.gpu_label(gpu)
    if cells is None:
        return label
    return gpu_label_in(label, cells, hosts_of(model) if hosts is None else hosts)


def _proof_log(model: LogModel, k: int) -> str | None:
    """The log proof `k` is from, in a model of several logs (None: one log in the model):
    its partitions, its jobs' tracing lines for a log without TIMELINE lines, are its."""
    hosts, names = model.proof_hosts, model.log_names
    if hosts is None or names is None:
        return None
    return names[int(hosts[k])]


def proof_origin(model: LogModel, parts: list[int]) -> float | None:
    """When a proof's partitions began, on the run's clock: the first of their synthesis
    and GPU starts (in a log begun mid-proof, a partition may be on a GPU before another's
    synthesis is seen), else None: no partition's time is before it."""
    t = model.parts
    rows = np.asarray(parts, dtype=np.int64)
    starts = np.concatenate((t.take("synth_start", rows), t.take("gpu_start", rows)))
    known = starts[~np.isnan(starts)]
    return float(known.min()) if len(known) else None


def _after(ms: float | None, origin: float | None) -> str:
    """An instant as the time after the proof began (`+2.41s`): its partitions' times one
    from the next, where the run's clock at hours in said each `7h36m`."""
    if ms is None or origin is None:
        return "—"
    after = ms - origin  # a gap before it may begin before it: `-3.20s`
    shown = duration(abs(after), "cell")
    return ("-" if after < 0 and shown != duration(0, "cell") else "+") + shown


def _parts_table(
    model: LogModel,
    parts: list[int],
    origin: float | None,
    name_cells: int | None,
    own: bool = False,
) -> Table:
    """A proof's partitions, a row each, their instants after the proof began (`origin`:
    `proof_origin`; `name_cells`: a GPU's name cut to so many cells; `own`: each GPU by its
    log's ordinal, as `_gpu_name`)."""
    t = model.parts
    hosts = hosts_of(model)  # once, not once a row
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0))
    # one line per partition at 80 columns: short heads, values in table cells' six
    # characters (`duration(..., "cell")`), never wrapped mid-unit
    for col in (
        "part",
        "worker",
        "GPU",
        "synth at",
        "synth",
        "in queue",  # a duration (queued to GPU_START) between two times: said so
        "GPU at",
        "on GPU",
        "kernel",
    ):
        table.add_column(
            col, justify="left" if col in ("part", "worker") else "right", no_wrap=True
        )
    for i in parts:
        part = t.get(i)
        if part.failed:
            gpu_time = "failed"
        elif part.gpu_start is None:
            gpu_time = "—"  # never on a GPU (synthesized, or queued, only)
        elif part.gpu_end is None:
            gpu_time = "running"  # a growing log's, or when a log read once ends
        else:
            gpu_time = duration(part.gpu_end - part.gpu_start, "cell")
        wait = (
            duration(part.gpu_start - part.queued, "cell")
            if part.gpu_start is not None and part.queued is not None
            else "—"
        )
        synth = (
            duration(part.synth_end - part.synth_start, "cell")
            if part.synth_start is not None and part.synth_end is not None
            else "—"
        )
        table.add_row(
            "whole" if part.partition is None else str(part.partition),
            "—" if part.worker is None else f"w{part.worker}",
            # a host's file name, never markup
            "—"
            if part.gpu is None
            else Text(_gpu_name(model, part.gpu, cells=name_cells, own=own, hosts=hosts)),
            _after(part.synth_start, origin),
            synth,
            wait,
            _after(part.gpu_start, origin),
            gpu_time,
            "—" if part.gpu_start is None else duration(part.phases_ms["kernel"], "cell"),
        )
    return table


def _traced_proof(head: Text, job: TracedJob) -> Group:
    """A job of a log without TIMELINE lines, as its tracing lines tell it (the report's
    `Jobs, as the tracing lines tell them`): no partition, no GPU interval, no gap."""
    outcome = {COMPLETED: "green", FAILED: "red"}.get(job.outcome, "yellow")
    head.append(job.outcome, style=outcome)
    if job.error:
        head.append(f": {visible(job.error)}", style=outcome)
    said = Text()
    for name, ms in (
        ("in queue", job.queue_ms),
        ("proving", job.prove_ms),
        ("in all", job.total_ms),
    ):
        if ms is not None:
            said.append(f"  {glued(name, duration(ms))}\n")
    if job.worker is not None or job.gpu is not None:
        on = [f"worker {job.worker}"] if job.worker is not None else []
        on += [f"GPU {job.gpu}"] if job.gpu is not None else []
        said.append(f"  {', '.join(on).replace(' ', GLUE)}\n")
    said.append(
        "\nThis log has no TIMELINE lines: the job's tracing lines give its queue and prove "
        "times; no partition, GPU interval or gap is known.\n",
        style="dim",
    )
    return Group(Prose(head), Prose(said))


def describe_proof(model: LogModel, found: FoundJob) -> Group:
    """The proof `found` (one of `model.proofs`): its partitions with their synthesis and GPU
    times, and its gaps."""
    k = proof_of(model, found)
    assert k is not None  # ProofScreen shows only a proof there is
    proof, job = model.proofs[k], found.job
    t = model.parts
    ids = job_numbers(model, found)
    parts = sorted(
        np.flatnonzero(np.isin(t.job, ids)).tolist(),
        key=lambda i: (int(t.partition[i]), float(np.nan_to_num(t.gpu_start[i], nan=np.inf))),
    )
    head = Text()
    head.append(shown_id(job), style="bold cyan")  # log text: never markup, never a control
    head.append(f"  {visible(proof.kind)}  " if proof.kind else "  ")
    traced = None if parts else next((j for j in model.traced_jobs if j.job == job), None)
    if traced is not None:  # a log without TIMELINE lines: what its tracing lines tell
        return _traced_proof(head, traced)
    # as the proof table counts them: of a job of partitions, a record of none holds a
    # line cut before its partition (listed, not counted)
    head.append(f"{counted(proof.partitions, 'partition')}  ")
    origin = proof_origin(model, parts)
    if origin is not None:  # what the table's `+` times are after
        head.append(f"{glued('begun at', offset(origin))}  ")
    if proof.completed and proof.first_synth_start is not None and proof.last_gpu_end is not None:
        span = proof.last_gpu_end - proof.first_synth_start
        head.append(f"completed in {duration(span)}", style="green")
    elif proof.completed:
        head.append("completed", style="green")
    elif failed_proofs(model)[k]:
        head.append("failed", style="red")  # as the proofs lane's ✗ and the reports say
    else:
        head.append("running when the log ends" if model.finished else "running", style="yellow")

    log = _proof_log(model, k)
    if log is not None:  # of several logs, one: named here, its GPUs by their ordinals
        head.append(f"  {glued('on', abbreviate(log, LOG_NAME_CELLS))}")

    def make(name_cells: int | None) -> Table:
        return _parts_table(model, parts, origin, name_cells, own=log is not None)

    table: RenderableType = make(None)
    if model.gpu_keys and log is None:  # several logs' GPUs: names cut to fit the window
        names = [_gpu_name(model, g) for g in {t.get(i).gpu for i in parts} if g is not None]
        table = FittedNames(make, max((cell_len(n) for n in names), default=0))
    table_ = model.gaps
    gaps = Text("\nIts gaps (a GPU idle before or after one of its partitions)\n", style="bold")
    mine = proof_gaps(model, found)
    # the gaps' GPUs by their ordinals when the proof's log is named above, and theirs
    own = log is not None and all(
        model.gpu_keys is not None and model.gpu_keys[table_[k].gpu].name == log for k in mine
    )
    # each column as wide as its widest cell: the rows line up whatever their words
    # when, after the proof began, as the table's times (at hours in, the run's clock cut
    # to the minute told one gap from the next no better than the table's rows)
    starts = [_after(float(table_[k].start), origin) for k in mine]
    names = [_gpu_name(model, table_[k].gpu, "GPU ", own=own) for k in mine]
    at_cells = max(map(cell_len, starts), default=0)
    name_cells = max(map(cell_len, names), default=0)
    for n, (k, at, name) in enumerate(zip(mine, starts, names, strict=True), 1):
        g = table_[k]
        gaps.append(f"{n:>2}" if n <= GAP_KEYS else "  ", style="bold cyan")
        gaps.append(f" #{table_.rank_of(k):<4}", style="bold")
        gaps.append(f"{duration(g.duration_ms):>9}", style="red")
        gaps.append(f"  at {at:>{at_cells}}  {name}{' ' * (name_cells - cell_len(name))}  ")
        if g.before.job == g.after.job == job:
            where = "inside it"
        else:
            where = "before it" if g.after.job == job else "after it"
        gaps.append(f"{where:<9}")
        gaps.append(f"  {gap_cause_words(g)}\n", style="dim")
    if not mine:
        gaps.append("  none\n", style="dim")
    return Group(Prose(head), table, gaps)


class ProofScreen(SafeModal[None]):
    """One matching job's proof; n/N step through the matches."""

    DEFAULT_CSS = """
    ProofScreen { align: center middle; }
    ProofScreen > VerticalScroll {
        width: 96%; height: 92%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        # the app's (which owns the matches), acted on as the key is read: an `i` or a gap's
        # number typed right after `n n` is of the match they step to
        Binding("n", "app.step_match(1)", "Next match"),
        Binding("N", "app.step_match(-1)", "Prev match"),
        Binding("i", "interval", "Interval"),
        Binding("y", "app.copy_id", "Copy id"),
        *QUIT_BINDINGS,
        *(Binding(str(n), f"gap({n})", "Gap", show=False) for n in range(1, GAP_KEYS + 1)),
    ]

    class InspectInterval(Message):
        """The user asked for the job's first interval (index into model.parts)."""

        def __init__(self, screen: ProofScreen, index: int) -> None:
            super().__init__()
            self.screen = screen
            self.index = index

    class InspectGap(Message):
        """The user asked for one of the job's gaps (index into model.gaps)."""

        def __init__(self, screen: ProofScreen, index: int) -> None:
            super().__init__()
            self.screen = screen
            self.index = index

    def __init__(self, model: LogModel, jobs: tuple[FoundJob, ...], index: int) -> None:
        super().__init__()
        self.model = model
        self.jobs = jobs
        self.index = index

    def compose(self) -> ComposeResult:
        """The proof."""
        with KeyScroll(id="proof"):
            yield Static(id="proof-facts")
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        """Fill it."""
        self.show_match(self.model, self.jobs, self.index)
        self.query_one("#proof", VerticalScroll).focus()

    def show_match(self, model: LogModel, jobs: tuple[FoundJob, ...], index: int) -> None:
        """Show match `index` of `jobs`."""
        self.model, self.jobs, self.index = model, jobs, index
        box_ = self.query_one("#proof", VerticalScroll)
        box_.border_title = f"job {index + 1} of {len(jobs)} matching"
        box_.border_subtitle = "n/N match · i interval · 1…9 gap · esc closes (highlight stays)"
        if proof_of(model, jobs[index]) is not None:
            self.query_one("#proof-facts", Static).update(describe_proof(model, jobs[index]))

    def show_model(self, model: LogModel) -> None:
        """The log grew: the same job as it is now."""
        self.show_match(model, self.jobs, self.index)

    def action_interval(self) -> None:
        """Ask the app for the interval inspector on the job's first interval (by GPU_START)."""
        order = job_intervals(self.model, self.jobs[self.index])
        if not len(order):
            self.notify("the job has no GPU interval yet", severity="warning")
            return
        self.post_message(self.InspectInterval(self, int(order[0])))

    def action_gap(self, n: int) -> None:
        """Ask the app for the gap inspector on the job's gap `n` (1: its first listed)."""
        mine = proof_gaps(self.model, self.jobs[self.index])
        if n > len(mine):
            self.notify(f"the job has {counted(len(mine), 'gap')}", severity="warning")
            return
        self.post_message(self.InspectGap(self, mine[n - 1]))
