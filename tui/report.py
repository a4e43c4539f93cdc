"""The headless text report (`cuzk-tui LOG --report`), drawn with Rich from the model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from parsers.breakdown import (
    BUSY_ORDER,
    alloc_unprinted,
    inferred_phases,
    lock_partly_placed,
    lock_unplaced,
    lockless_gpus,
    unmeasured_phases,
    whole_run,
    workers_unmeasured,
)
from parsers.durations import Style, counted, duration, estimate_pct
from parsers.model import (
    CAUSES,
    KERNEL_EXACT_WIDTH,
    MERGED_COMPARE,
    NAMES_BY_KEY,
    PHASE_KEYS,
    PHASE_NAMES,
    Gap,
    GapStats,
    GapTable,
    GpuStats,
    LogModel,
    Phase,
)
from parsers.proofs import failed_proofs
from parsers.rawlines import LineReader
from parsers.report import (
    MID_RUN,
    NOT_A_CUZK_LOG,
    missing_timeline,
    no_gpu_sentence,
    runs_sentence,
    unplaced_sentence,
)
from parsers.sanitize import visible
from parsers.why import GapWhy, gap_why, why_lines
from tui.ascii_glyphs import spelled
from tui.lanes import abbreviate, gpu_label_in, hosts_of
from tui.prose import GLUE, Prose


def fmt_pct(x: float) -> str:
    """A ratio as a percentage with one decimal."""
    return f"{100 * x:.1f} %"


def side_text(job: str, worker: int, partition: int | None) -> Text:
    """`job w1 p3` as literal text (job ids are never read as markup)."""
    text = Text(visible(job), style="bold")
    text.append(f"  w{worker}")
    if partition is not None:
        text.append(f" p{partition}")
    return text


def gap_cause_words(gap: Gap) -> str:
    """The cause as a person would say it."""
    if gap.cause == "synthesis":
        return "waiting for synthesis"
    if gap.cause == "dispatch":
        return "queued but not dispatched"
    return "unknown (no queue event)"


def _by_size(st: GapStats) -> tuple[int, int, int]:
    """The gaps' counts under 50 ms, from 50 to 500 ms, over 500 ms."""
    return st.under_50, st.from_50_to_500, st.over_500


def _stats_row(name: str, st: GapStats, widths: Sequence[int]) -> list[str]:
    """A row of the gaps' statistics; its counts by size each under their part of the last
    column's header (`widths`)."""
    return [
        name,
        str(st.count),
        duration(st.total_ms, "cell"),
        # the gaps' own figures: `–` where there is none
        *(
            "–" if ms is None else duration(ms, "cell")
            for ms in map(st.of_some, (st.mean_ms, st.max_ms, st.p50_ms, st.p90_ms, st.p99_ms))
        ),
        "|".join(f"{n:>{w}}" for n, w in zip(_by_size(st), widths, strict=True)),
    ]


NO_TIMELINE = NOT_A_CUZK_LOG


def timeline_figure(g: GpuStats) -> str:
    """`93.9 %` of its span (`–`: a span of no length, its intervals all running)."""
    return fmt_pct(g.timeline_util) if g.spanned else "–"


def idle_figure(g: GpuStats, style: Style) -> str:
    """Its span less its busy time, as `style` writes it (`–`: a span of no length)."""
    return duration(g.span_ms - g.busy_ms, style) if g.spanned else "–"


def kernel_figure(g: GpuStats) -> str:
    """`19.9 %`, or `≈31 % (26–36 %)` when the log leaves the kernel time uncertain (`–`:
    a span of no length)."""
    if not g.spanned:
        return "–"
    if g.kernel_is_estimate:
        return estimate_pct(g.kernel_util, *g.kernel_util_range)
    return fmt_pct(g.kernel_util)


def all_gpus_figure(model: LogModel) -> str | None:
    """`all 3 GPUs: kernel 32.6 % of their spans` (with its range when wider than half a
    point): the figure the log pins down where each GPU's is an estimate; None for one GPU,
    and for a comparison (before's GPUs and after's together are no machine's)."""
    span = model.all_gpus_span_ms
    if len(model.gpus) < 2 or not span or model.summary.merged == MERGED_COMPARE:
        return None
    lo, hi = (x / span for x in model.all_gpus_kernel_ms)
    mid = model.all_gpus_kernel_estimate_ms / span
    shown = estimate_pct(mid, lo, hi) if hi - lo > KERNEL_EXACT_WIDTH else fmt_pct(mid)
    return f"all {len(model.gpus)} GPUs: kernel {shown} of their spans added up"


BUSY_SPLIT_TITLE = (
    "Where each GPU's busy time went: shares of its TIMELINE busy time, "
    "each instant given to one phase"
)
WORKER_PHASES_TITLE = (
    "Time in each phase of the GPU intervals, per worker: shares of the worker's interval "
    "time (overlapping intervals each count in full)"
)


def unfinished_sentence(model: LogModel) -> str | None:
    """What became of the proofs that did not complete: `not completed: 5 failed, 2 running
    when the log ends` (None: every proof completed)."""
    s = model.summary
    left = s.proofs_started - s.proofs_completed
    if left <= 0:
        return None
    failed = int(failed_proofs(model).sum())
    said = "when the log ends" if model.finished else "now"
    parts = [f"{failed} failed"] if failed else []
    if left > failed:
        parts.append(f"{left - failed} running {said}")
    return "not completed: " + ", ".join(parts)


def running_lines(model: LogModel) -> list[RenderableType]:
    """Under the GPU table, the intervals under way when the log ends (the header's `+N
    running`), none else."""
    running = [(model.gpu_label(g.gpu), g.in_flight) for g in model.gpus if g.in_flight]
    if not running:
        return []
    each = ", ".join(f"{label} {n}" for label, n in running)
    said = "when the log ends" if model.finished else "now"
    return [
        Text(
            f"  intervals running {said}: {each} (nothing says they failed; busy once they end)",
            style="dim",
        )
    ]


def all_gpus_lines(model: LogModel) -> list[RenderableType]:
    """The all-GPUs kernel figure under the GPU table (none for one GPU)."""
    figure = all_gpus_figure(model)
    if figure is None:
        return []
    text = Text(f"  {figure}", style="bold")
    if any(g.kernel_is_estimate for g in model.gpus):
        text.append(
            "\n  (each kernel line is some GPU's: the log pins the sum down where it "
            "cannot tell which GPU ran each)",
            style="dim",
        )
    return [text]


JOB_CELLS = 24  # a job id longer than this is cut in the middle
TRACED_TITLE = "Jobs, as the tracing lines tell them"
NO_TRACED_JOB = "no job in the tracing lines"


def traced_table(model: LogModel, cut_ids: bool = True) -> RenderableType:
    """The jobs of a log without TIMELINE lines: id, kind, queue, prove, outcome (`cut_ids`:
    an id past JOB_CELLS cut in the middle, for a terminal; to a pipe or a file, whole)."""
    if not model.traced_jobs:
        return Text(NO_TRACED_JOB)
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    for col in ("job", "kind", "queue", "prove", "outcome"):
        table.add_column(col, justify="right" if col in ("queue", "prove") else "left")
    for j in model.traced_jobs:
        outcome = Text(j.outcome)
        if j.error:
            outcome.append(f": {visible(j.error)}")
        table.add_row(
            Text(abbreviate(j.job, JOB_CELLS) if cut_ids else visible(j.job)),
            Text(visible(j.kind) or "?"),
            "–" if j.queue_ms is None else duration(j.queue_ms, "cell"),
            "–" if j.prove_ms is None else duration(j.prove_ms, "cell"),
            outcome,
        )
    return table


def _wall(at: datetime) -> str:
    """A wall time as the report writes it, to the millisecond, with its zone."""
    zone = "UTC" if at.tzinfo is not None else "(the journal's local time)"
    return f"{at.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]} {zone}"


def heading(title: str) -> Text:
    return Text(f"\n{title}", style="bold")


# a table of more rows than this is written as plain aligned lines: Rich lays a table out
# in time that grows faster than its rows (10,000 rows of nine cells: about a minute)
RICH_TABLE_ROWS = 200
# workers across the phase table up to this many (80 columns); beyond, a row per worker
WORKER_COLUMNS = 5
# lines to a Text of a plain table (one Text of every line costs time quadratic in them)
PLAIN_LINES_PER_TEXT = 100


def plain_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1
) -> list[RenderableType]:
    """A table as aligned lines of text, in time linear in its cells: the first `left`
    columns aligned left, the rest right, a rule under the bold header.

    Args:
        header: the column titles.
        rows: the cells, as text (log text already made visible).
        left: how many columns, from the first, align left.

    Returns:
        The lines, a few Text objects of up to PLAIN_LINES_PER_TEXT lines each.
    """
    widths = [cell_len(h) for h in header]
    for row in rows:
        for k, cell in enumerate(row):
            widths[k] = max(widths[k], cell_len(cell))

    def line(cells: Sequence[str]) -> str:
        out = []
        for k, cell in enumerate(cells):
            pad = " " * (widths[k] - cell_len(cell))
            out.append(cell + pad if k < left else pad + cell)
        return "  " + "   ".join(out)

    head = line(header)
    out: list[RenderableType] = [
        Text(head, style="bold", no_wrap=True, overflow="ignore"),
        Text(" " + "─" * (cell_len(head) + 1), no_wrap=True, overflow="ignore"),
    ]
    for k in range(0, len(rows), PLAIN_LINES_PER_TEXT):
        piece = "\n".join(line(r) for r in rows[k : k + PLAIN_LINES_PER_TEXT])
        out.append(Text(piece, no_wrap=True, overflow="ignore"))
    return out


GPU_COLUMNS = ("GPU", "workers", "span", "busy", "idle", "TIMELINE", "kernel busy", "kernel")


def worker_ranges(workers: Sequence[int]) -> str:
    """`w0–w19,w25`: workers numbered one after another (three or more) as a range, so that
    a GPU of twenty workers fits its cell (it was folded mid-name at 80 columns)."""
    parts: list[str] = []
    k = 0
    while k < len(workers):
        end = k
        while end + 1 < len(workers) and workers[end + 1] == workers[end] + 1:
            end += 1
        if end - k >= 2:
            parts.append(f"w{workers[k]}–w{workers[end]}")
        else:
            parts.extend(f"w{w}" for w in workers[k : end + 1])
        k = end + 1
    return ",".join(parts)


def _gpu_cells(model: LogModel, g: GpuStats) -> list[str]:
    return [
        model.gpu_label(g.gpu) if model.gpu_keys else str(g.gpu),
        worker_ranges(g.workers),
        duration(g.span_ms, "cell") if g.span is not None else "–",
        duration(g.busy_ms, "cell"),
        idle_figure(g, "cell"),
        timeline_figure(g),
        ("≈" if g.kernel_is_estimate else "") + duration(g.kernel_busy_ms, "cell"),
        kernel_figure(g),
    ]


def gpu_table(model: LogModel, width: int | None = None) -> RenderableType:
    """Each GPU's span, busy and kernel figures; in `width` cells when given (a terminal's),
    the hosts' names in the GPUs' labels cut in the middle to fit, each `:GPU2` whole."""
    if len(model.gpus) > RICH_TABLE_ROWS:
        return Group(*plain_table(GPU_COLUMNS, [_gpu_cells(model, g) for g in model.gpus], left=2))
    if width is None or not model.gpu_keys:
        return _gpu_table(model, None)
    longest = max(cell_len(model.gpu_label(g.gpu)) for g in model.gpus)
    return fitted(lambda cells: _gpu_table(model, cells), longest, width)


def natural_width(renderable: RenderableType) -> int:
    """The cells `renderable` takes drawn whole: its own width, not one capped at a
    terminal's."""
    wide = Console(width=1 << 16)
    return Measurement.get(wide, wide.options, renderable).maximum


def fitted(make: Callable[[int | None], Table], longest: int, width: int) -> Table:
    """The table `make` makes (given how many cells a GPU's name may take; None: whole), in
    `width` cells as far as cutting the names can: by what it is over, from `longest`."""
    table = make(None)
    over = natural_width(table) - width
    return make(max(longest - over, 1)) if over > 0 else table


class FittedNames:
    """A table of GPUs' names drawn in the width it is given (`fitted`): a window's."""

    def __init__(self, make: Callable[[int | None], Table], longest: int) -> None:
        self.make, self.longest = make, longest

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield fitted(self.make, self.longest, options.max_width)


def _gpu_table(model: LogModel, name_cells: int | None) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    for col in GPU_COLUMNS:
        # a name cut still too long folds whole, not cut to `journal-2gpu.l…`
        if col in ("GPU", "workers"):
            table.add_column(col, overflow="fold")
        else:
            table.add_column(col, justify="right")
    hosts = hosts_of(model)
    for g in model.gpus:
        cells: list[RenderableType] = list(_gpu_cells(model, g))
        if name_cells is not None:
            cells[0] = gpu_label_in(str(cells[0]), name_cells, hosts)
        cells[0] = Text(str(cells[0]))  # a host's file name, never markup
        cells[5] = Text(str(cells[5]), style="yellow")
        cells[7] = Text(str(cells[7]), style="bold green")
        table.add_row(*cells)
    return table


def busy_split_table(model: LogModel) -> RenderableType:
    """Each GPU's TIMELINE busy time split by phase (each instant given to one phase,
    docs/analysis.md#where-the-busy-time-went), as shares of that busy time: phases down and
    GPUs across for up to five GPUs, else a row per GPU."""
    split = whole_run(model)
    shown = [g for g in model.gpus if g.gpu in split]
    unprinted = alloc_unprinted(model)

    def cell(g: GpuStats, phase: Phase) -> str:
        b = split[g.gpu]
        share = b.share_shown(phase)
        if phase in unmeasured_phases(g) or share is None:
            return "–"  # not measured, or a share of no busy time
        about = "≈" if phase in inferred_phases(g, unprinted) else ""
        return f"{about}{duration(b.phase_ms.get(phase, 0.0), 'cell')} {100 * share:4.1f}%"

    table = _busy_split_table(model, shown, cell)
    # its `–` (no lock line) is said under the per-worker table, which comes next
    if not any(g.kernel_is_estimate for g in shown):
        return table
    return Group(table, Text(ESTIMATED_SPLIT, style="dim"))


# under the busy split, where a GPU's kernel busy is an estimate
ESTIMATED_SPLIT = (
    "  ≈ an estimate: the log leaves kernel busy to inference (its range is in the kernel "
    "column above), and what the estimate takes from or gives to the other phases with it"
)
# under the per-worker phases, where an engine prints no allocation line
HIDDEN_ALLOC = (
    "alloc 0 ms ({gpus}): this engine prints no allocation line; the allocation inside the "
    "NTT blocks counts as kernel here, where the busy split estimates it"
)


# under the per-worker table, where the log holds no lock line (the busy split's `–` too)
NO_LOCK_LINE = (
    "pre-lock and lock wait are – ({gpus}): the log holds no lock line (an engine before "
    "2026-03-13, or a capture without its C++ lines), so the time before the GPU lock is not "
    "measured; it is in unknown"
)
# under the per-worker table, where a GPU prints lock lines but none placed a worker's lock
NO_LOCK_PLACED = (
    "pre-lock and lock wait are – ({workers}): no lock line was given to any of {their} "
    "intervals (the lines lost, or the log's lock lines begin later), so the time before "
    "the GPU lock is not measured; it is in unknown"
)
# ... where they placed some of a worker's locks
LOCK_PARTLY_PLACED = (
    "pre-lock and lock wait count only the intervals given a lock line ({counts}); the "
    "others' time before the GPU lock is in unknown"
)
# under the per-worker phases, where a GPU's kernel busy is an estimate
PLACED_KERNEL = (
    "kernel {gpus}: the time the timing lines place; its kernel busy is an estimate (≈ in "
    "the busy split), and the unknown time here may hold more"
)


def worker_notes(model: LogModel, indent: str = "  ") -> list[Text]:
    """The notes under a per-worker table: where an engine printed no lock line, where it
    printed no allocation line, and where a GPU's kernel busy is an estimate, which its
    workers' kernel time is not (none where none of these)."""
    notes = []
    lockless = lockless_gpus(model)
    if lockless and model.workers:
        gpus = _gpus_named(model, lockless)
        notes.append(Text(indent + NO_LOCK_LINE.format(gpus=gpus), style="dim"))
    unplaced = [f"w{w.worker}" for w in lock_unplaced(model)]
    if unplaced:
        their = "its" if len(unplaced) == 1 else "their"
        text = NO_LOCK_PLACED.format(workers=", ".join(unplaced), their=their)
        notes.append(Text(indent + text, style="dim"))
    partly = lock_partly_placed(model)
    if partly:
        counts = ", ".join(f"w{w.worker}: {w.lock_lines} of {w.intervals}" for w in partly)
        notes.append(Text(indent + LOCK_PARTLY_PLACED.format(counts=counts), style="dim"))
    unprinted = alloc_unprinted(model)
    if unprinted:
        gpus = _gpus_named(model, sorted(unprinted))
        notes.append(Text(indent + HIDDEN_ALLOC.format(gpus=gpus), style="dim"))
    guessed = [g.gpu for g in model.gpus if g.kernel_is_estimate]
    if guessed and model.workers:
        gpus = _gpus_named(model, guessed)
        notes.append(Text(indent + PLACED_KERNEL.format(gpus=f"({gpus})"), style="dim"))
    return notes


NAMED_GPUS = 4  # a note names this many GPUs, and counts the rest


def _gpus_named(model: LogModel, gpus: list[int]) -> str:
    """`GPU0, GPU2`; `every GPU`; `GPU0, GPU1, GPU2, GPU3 and 296 more` (a note of 300 GPUs
    was a line of 2,400 characters)."""
    if len(gpus) == len(model.gpus) > 1:
        return "every GPU"
    named = ", ".join(model.gpu_label(g) for g in gpus[:NAMED_GPUS])
    rest = len(gpus) - NAMED_GPUS
    return named + (f" and {rest} more" if rest > 0 else "")


def _busy_split_table(
    model: LogModel, shown: list[GpuStats], cell: Callable[[GpuStats, Phase], str]
) -> RenderableType:
    """The busy split's cells laid out: phases down and GPUs across, or a row per GPU."""
    if len(shown) > WORKER_COLUMNS:
        header = ["GPU", *(PHASE_NAMES[p] for p in BUSY_ORDER)]
        rows = [[model.gpu_label(g.gpu), *(cell(g, p) for p in BUSY_ORDER)] for g in shown]
        return FittedColumns(header, rows, 1)
    header = ["phase", *(model.gpu_label(g.gpu) for g in shown)]
    rows = [[PHASE_NAMES[p], *(cell(g, p) for g in shown)] for p in BUSY_ORDER]
    return cells_table(header, rows, 1)


def _phase_keys(model: LogModel) -> list[str]:
    return [k for k in PHASE_KEYS if k != "unknown" or any(w.phases_ms[k] for w in model.workers)]


def _phase_cell(ms: float, total: float, measured: bool = True) -> str:
    return f"{duration(ms, 'cell')} {100 * ms / total:4.1f}%" if measured else "–"


def phase_cells(model: LogModel) -> tuple[list[str], list[list[str]], int]:
    """The per-worker phase table as text: its header, its rows, and how many of its first
    columns name a row (they align left). Phases down and workers across fit 80 columns for
    up to five workers; more workers get a row each, phases across (as wide for 50,000
    workers as for six). A worker whose engine prints no lock line, or none of whose
    intervals was given one, has `–` for pre-lock and lock wait (`workers_unmeasured`)."""
    keys = _phase_keys(model)
    totals = [sum(w.phases_ms.values()) or 1.0 for w in model.workers]
    # by the worker's place in the model, not its number: several logs each have a w0
    dashed = workers_unmeasured(model)
    gpus = [model.gpu_label(w.gpu) if model.gpu_keys else f"gpu{w.gpu}" for w in model.workers]
    if len(model.workers) <= WORKER_COLUMNS:
        header = ["phase", *(f"w{w.worker} {g}" for w, g in zip(model.workers, gpus, strict=True))]
        rows = [["intervals", *(str(w.intervals) for w in model.workers)]]
        for k in keys:
            cells = (
                _phase_cell(w.phases_ms[k], t, k not in unmeasured)
                for w, t, unmeasured in zip(model.workers, totals, dashed, strict=True)
            )
            rows.append([NAMES_BY_KEY[k], *cells])
        return header, rows, 1
    header = ["worker", "GPU", "intervals", *(NAMES_BY_KEY[k] for k in keys)]
    rows = []
    for w, g, total, unmeasured in zip(model.workers, gpus, totals, dashed, strict=True):
        gpu = g if model.gpu_keys else str(w.gpu)
        phases = (_phase_cell(w.phases_ms[k], total, k not in unmeasured) for k in keys)
        rows.append([f"w{w.worker}", gpu, str(w.intervals), *phases])
    return header, rows, 2


def cells_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int) -> RenderableType:
    """A table of text cells, the first `left` columns aligned left: Rich's, or past
    RICH_TABLE_ROWS rows aligned lines (`plain_table`: time linear in the cells)."""
    if len(rows) > RICH_TABLE_ROWS:
        return Group(*plain_table(header, rows, left=left))
    table = Table(box=box.SIMPLE_HEAD)
    # Text, not str: a host's GPU label (its file's name) is never markup, in the viewer too
    for k, col in enumerate(header):
        table.add_column(Text(col), justify="left" if k < left else "right")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def phase_table(model: LogModel) -> RenderableType:
    """Each worker's time in each phase of its GPU intervals (`phase_cells`), in the width
    it is given (`FittedColumns`)."""
    return FittedColumns(*phase_cells(model))


class FittedColumns:
    """A table of text cells (`cells_table`) in the width it is given: one table where it
    fits (to a pipe or a file, always), else its figures in several tables one under the
    other, each with the columns that name the rows (a terminal of 80 columns: no cell is
    wrapped, no title cut to `wor…`)."""

    def __init__(self, header: Sequence[str], rows: Sequence[Sequence[str]], left: int) -> None:
        self.header, self.rows, self.left = header, rows, left

    def _whole(self) -> RenderableType:
        return self._part(list(range(self.left, len(self.header))))

    def _part(self, columns: list[int]) -> RenderableType:
        keep = [*range(self.left), *columns]
        return cells_table(
            [self.header[k] for k in keep], [[row[k] for k in keep] for row in self.rows], self.left
        )

    def parts(self, width: int) -> list[RenderableType]:
        """The tables, each as many of the figures' columns as fit `width` (at least one):
        the whole table, measured once, where it fits."""
        whole = self._whole()
        if natural_width(whole) <= width:
            return [whole]
        groups: list[list[int]] = [[]]
        for k in range(self.left, len(self.header)):
            if groups[-1] and natural_width(self._part([*groups[-1], k])) > width:
                groups.append([])
            groups[-1].append(k)
        return [self._part(group) for group in groups]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        parts = self.parts(options.max_width)
        for k, part in enumerate(parts):
            if k:
                yield Text("")
            yield part

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self._whole())


def gap_stats_table(gaps: GapTable, all_stats: GapStats, encoding: str | None = None) -> Table:
    """The gaps' statistics (`encoding`: the output's, for `spelled`)."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    for col in ("", "count", "total", "mean", "max", "p50", "p90", "p99"):
        table.add_column(col, justify="left" if col == "" else "right")
    header = spelled("<50|≤500|>500", encoding)
    durations, crosses = gaps.duration, gaps.crosses
    rows = [("all", all_stats)]
    rows.append(("mid-proof", GapStats.of(durations[~crosses])))
    rows.append(("boundary", GapStats.of(durations[crosses])))
    for cause, label in (("synthesis", "synthesis"), ("dispatch", "dispatch"), (None, "no cause")):
        members = durations[gaps.cause == CAUSES.index(cause)]
        if len(members) or cause is not None:
            rows.append((label, GapStats.of(members)))
    widths = [
        max(len(part), *(len(str(_by_size(st)[k])) for _, st in rows))
        for k, part in enumerate(header.split("|"))
    ]
    parts = zip(header.split("|"), widths, strict=True)
    table.add_column("|".join(part.rjust(w) for part, w in parts), justify="right", no_wrap=True)
    for label, st in rows:
        table.add_row(*_stats_row(label, st, widths))
    return table


def gap_lines(model: LogModel, gap: Gap, rank: int, why: GapWhy | None = None) -> Text:
    """Three lines for one gap: when, how long, why; then both sides."""
    wall = model.wall_text(gap.start, gap.gpu)
    text = Text(f"{rank:>3}. ", style="bold")
    text.append(f"{duration(gap.duration_ms):>8}", style="bold red")
    text.append(f"  at {duration(gap.start, cut=True)}")
    if wall is not None:
        text.append(f" ({wall})")
    text.append(f"  {model.gpu_label(gap.gpu) if model.gpu_keys else f'GPU {gap.gpu}'}\n      ")
    if gap.crosses_proof_boundary:
        text.append("crosses proof boundary", style="magenta")
    else:
        text.append("mid-proof")
    text.append(f", {gap_cause_words(gap)}\n")
    text.append("      before ", style="dim")
    text.append_text(side_text(gap.before.job, gap.before.worker, gap.before.partition))
    text.append("\n      after  ", style="dim")
    text.append_text(side_text(gap.after.job, gap.after.worker, gap.after.partition))
    if why is not None:  # the deeper why (parsers/why.py)
        # a unit glued to its number: at a terminal the line wraps elsewhere (tui/prose.py)
        for line in why_lines(why, sep=GLUE):
            text.append(f"\n      {line}", style="dim")
    return text


def report_renderables(
    model: LogModel,
    top: int = 10,
    min_gap_ms: int = 0,
    reader: LineReader | None = None,
    cut_ids: bool = True,
    encoding: str | None = None,
    number_of: Callable[[int], int] | None = None,
) -> list[RenderableType]:
    """Everything the text report prints, in order (`cut_ids`: as `traced_table`;
    `encoding`: the output's, for `spelled`; `number_of`: a gap's number by its index,
    where it is not its rank among the model's gaps: a host's among every host's)."""
    s = model.summary
    head = Text()
    head.append("cuzk-tui report: ", style="bold")
    head.append(visible(model.source))
    # a log without TIMELINE: its span runs from the first dequeue to the last completion
    span = "first dequeue to last completion" if model.traced_jobs else "run span"
    head.append(f"\n{s.proofs_shown(short=False, span_name=span)}   {s.s_per_proof_shown}")
    outcome = unfinished_sentence(model)
    if outcome is not None:
        head.append(f"\n{outcome}")
    if model.wall_anchor is not None:
        head.append(f"\nengine started {_wall(model.wall_anchor)}")
        anchors = model.run_anchors or ()
        if len(anchors) > 1 and anchors[-1] is not None:
            # the proofs line above gives the last run's rate: when that run began
            head.append(f"\nthe last run's engine started {_wall(anchors[-1])}")
    gaps = model.gaps
    no_gpu = no_gpu_sentence(model)
    if no_gpu is not None:
        head.append(f"\n{no_gpu}", style="bold yellow")
    if model.starts_mid_run:
        head.append(f"\n{MID_RUN}", style="bold yellow")
    unplaced = unplaced_sentence(model)
    if unplaced is not None:
        head.append(f"\n{unplaced}", style="bold yellow")
    restarted = runs_sentence(model)
    if restarted is not None:
        head.append(f"\n{restarted}", style="bold yellow")
    reason = missing_timeline(model)
    if reason is not None:
        head.append(f"\n{reason}", style="bold yellow")
    if reason is not None:
        # no GPU intervals: the jobs the tracing lines tell, in place of the empty tables
        return [head, heading(TRACED_TITLE), traced_table(model, cut_ids), _lines_read(model)]
    if no_gpu is not None:
        return [head, _lines_read(model)]  # every table would be empty
    out: list[RenderableType] = [
        head,
        heading(
            "GPU utilization: TIMELINE intervals (GPU_START..GPU_END) vs kernels, "
            "as shares of each GPU's span"
        ),
        gpu_table(model),
        *all_gpus_lines(model),
        *running_lines(model),
        heading(BUSY_SPLIT_TITLE),
        busy_split_table(model),
        heading(WORKER_PHASES_TITLE),
        phase_table(model),
        *worker_notes(model),
        heading("Gaps: a GPU idle inside its span"),
        gap_stats_table(gaps, s.gaps, encoding),
    ]
    listed = gaps.largest(top, min_gap_ms)
    # a host's section numbers its gaps as the list of every host's does (the viewer's)
    ranked = "numbered by size among every host's gaps" if number_of is not None else ""
    if top:  # --top 0: no list, not `No gap` under a table that counts them
        out.append(heading(largest_title(len(listed), min_gap_ms, said=ranked)))
    out.extend(
        Prose(
            gap_lines(
                model,
                gaps[i],
                rank if number_of is None else number_of(i),
                gap_why(model, gaps[i], reader),
            )
        )
        for rank, i in enumerate(listed, 1)
    )
    out.append(_lines_read(model))
    return out


def largest_title(listed: int, min_gap_ms: int = 0, of: str = "", said: str = "") -> str:
    """`Largest 10 gaps (of at least 500 ms; numbered …)`; `No gap` when none is listed
    (`of`: what they are gaps of, ` of every host`; `said`: how the listed ones are
    numbered)."""
    title = f"Largest {counted(listed, 'gap')}" if listed else "No gap"
    words = [f"of at least {duration(min_gap_ms)}"] if min_gap_ms else []
    if listed and said:
        words.append(said)
    return title + of + (f" ({'; '.join(words)})" if words else "")


def _lines_read(model: LogModel) -> Text:
    """The last line: how many lines of each sort were read."""
    c = model.counts
    lines = Text(
        f"\nlines read: {c.total} (TIMELINE {c.timeline}, C++ timing {c.cuzk_timing}, "
        f"stdout {c.stdout}, other {c.other}); skipped: {c.malformed} malformed; "
        f"{c.spliced} splices rejoined; "
        f"{counted(model.unattributed_timing_lines, 'timing line')} matched no GPU interval",
        style="dim",
    )
    if model.partial_bytes:
        lines.append(f"; an unfinished last line ({model.partial_bytes} bytes) was left unread")
    return lines


def print_report(
    model: LogModel,
    console: Console,
    top: int = 10,
    min_gap_ms: int = 0,
    reader: LineReader | None = None,
    number_of: Callable[[int], int] | None = None,
) -> None:
    """Print the text report (`reader`: of several hosts' logs, each host's lines): job ids
    cut to fit a terminal, whole to a pipe or a file (a reader greps them); `number_of`: as
    `report_renderables`."""
    parts = report_renderables(
        model,
        top=top,
        min_gap_ms=min_gap_ms,
        reader=reader,
        cut_ids=console.is_terminal,
        encoding=getattr(console.file, "encoding", None),
        number_of=number_of,
    )
    # to a pipe or a file the lines are whole (10,000 columns: `report_width`); soft wrap
    # prints them so without measuring each for a wrap that never comes (~10 ms)
    console.print(Group(*parts), soft_wrap=not console.is_terminal)
