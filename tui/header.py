"""The viewer's header and status line, as text: the utilization per GPU, where the busy
time went, the selection and the zoom."""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from parsers.breakdown import (
    BUSY_ORDER,
    Breakdown,
    alloc_unprinted,
    inferred_phases,
    unmeasured_phases,
)
from parsers.durations import counted, duration
from parsers.model import PHASES, GpuStats, LogModel, Phase
from parsers.proofs import failed_proofs
from parsers.report import MID_RUN, NO_GPU_YET, no_gpu_sentence, unplaced_sentence
from parsers.sanitize import visible
from tui.ascii_glyphs import spelled
from tui.gantt import GanttView
from tui.interval import interval_words
from tui.lanes import abbreviate, gpu_label_in, gpu_label_least, hosts_of
from tui.report import all_gpus_figure, idle_figure, kernel_figure, timeline_figure


def breakdown_text(
    title: str,
    b: Breakdown,
    styles: dict[Phase, Style],
    short: bool,
    inferred: frozenset[Phase] = frozenset(),
    unmeasured: frozenset[Phase] = frozenset(),
) -> Text:
    """`  busy: kernel 49% barrier 20% …`: the phases' shares of the GPU's busy time (`title`:
    `busy`, or `busy, run` and `busy, view` when a zoomed view has its own; `inferred`: the
    phases whose time is an estimate, their shares marked `≈`; `unmeasured`: those the
    engine does not measure, `–`)."""
    text = Text(f"  {title + ':':<{len('busy, view:') if ',' in title else 0}}", style="dim")
    if not b.busy_ms:
        # shares of nothing are no figures: a GPU busy at no moment of the view (a restarted
        # log's other run, an idle stretch zoomed in) says so, not 0% for every phase
        text.append(" nothing busy" + (" in this view" if title == "busy, view" else ""))
        return text
    for phase in BUSY_ORDER:
        name = PHASES[phase].short if short else PHASES[phase].name
        text.append(f" {name}", style=styles.get(phase, ""))
        if phase in unmeasured:
            text.append(" –")
            continue
        about = "≈" if phase in inferred else ""
        text.append(f" {about}{100 * b.share(phase):.0f}%")
    return text


# GPUs the header shows (its height follows them; the report and the gap list hold all)
HEADER_GPUS = 4
HEADER_MARGINS = 2  # the header's cells left and right of its text
# the room a state leaves the source's name beside the figures before its words after the
# first go to a line of their own (the name gives way to the figures, cut in the middle)
SOURCE_MIN_CELLS = 12
# the least of the source's name shown beside the figures (`res…log`): fewer cells tell
# nothing, and the figures go to a line of their own
SOURCE_LEAST_CELLS = 8


def header_text(
    model: LogModel,
    state: str,
    run: dict[int, Breakdown] | None = None,
    view: dict[int, Breakdown] | None = None,
    styles: dict[Phase, Style] | None = None,
    width: int = 120,
    rows: int | None = None,
) -> Text:
    """State, source, run figures; per GPU the honest pair and where its busy time went.
    In at most `rows` lines when given, as far as it can (`header_fit`)."""
    return header_fit(model, state, run, view, styles, width, rows)[0]


def header_fit(
    model: LogModel,
    state: str,
    run: dict[int, Breakdown] | None,
    view: dict[int, Breakdown] | None,
    styles: dict[Phase, Style] | None,
    width: int,
    rows: int | None,
    in_view: int | None = None,
) -> tuple[Text, bool]:
    """The header in at most `rows` lines (None: any), as far as it can: zoomed in, where the
    run's busy time went gives way first (the view's is what the zoom asks), then where any
    went; and whether any of it gave way. `in_view`: of a restarted daemon's runs, the one
    the view shows, whose GPUs come first."""
    gpus = _in_order(model, in_view)
    text = _header(model, state, run, view, styles, width, gpus)
    full = text
    if rows is not None and _lines(text) > rows and view:
        text = _header(model, state, None, view, styles, width, gpus)
    if rows is not None and _lines(text) > rows and (run or view):
        text = _header(model, state, None, None, styles, width, gpus)
    return text, text is not full


# what a log's name ends with that says nothing of which log it is: its kind, compression
_NAME_ENDS = re.compile(r"(\.(log|txt|out|gz|zst|bz2|xz))+$|\s+\([^()]*\)$", re.IGNORECASE)


def short_name(name: str) -> str:
    """`name` without what tells no log from another: `restart` of `restart.log`,
    `daemon` of `daemon.log.gz`, `demo` of `demo (built-in simulated run)` (never
    emptied: `.log` stays `.log`)."""
    short = _NAME_ENDS.sub("", name)
    return short if short.strip(". ") else name  # `..log` stays whole, not `.`


def source_in(model: LogModel, cells: int) -> str:
    """The model's source in at most `cells` cells: a file name cut in the middle; of
    several logs, as many of their names as fit whole, then how many more (`a.log + b.log
    + 3 more`: a name cut in the middle reads as another name)."""
    names = [name for _, name in model.logs()]
    if len(names) < 2 or cell_len(model.source) <= cells or model.source != " + ".join(names):
        if cell_len(visible(model.source)) > cells:
            # what a cut in the middle would leave to read goes first (`rest….log` of
            # `restart.log` in 9 cells, `demo (…d run)` of the built-in demo)
            return abbreviate(short_name(model.source), cells)
        return abbreviate(model.source, cells)
    # the first n names and ` + k more`, for the most n that fit (measured once each)
    used, fit = 0, 0
    for n, name in enumerate(names[:-1], 1):
        used += cell_len(name) + (3 if n > 1 else 0)  # ` + ` before all but the first
        if used + cell_len(f" + {len(names) - n} more") > cells:
            break
        fit = n
    if fit:
        return " + ".join(names[:fit]) + f" + {len(names) - fit} more"
    return abbreviate(f"{len(names)} logs", cells)


def _in_order(model: LogModel, run: int | None) -> list[GpuStats]:
    """The model's GPUs, those of run `run` first (the header holds HEADER_GPUS: a
    restarted daemon's log opens on its last run, whose GPUs come last in the model)."""
    keys = model.gpu_keys
    if run is None or keys is None:
        return list(model.gpus)
    mine = [g for g in model.gpus if g.gpu in keys and keys[g.gpu].host == run]
    return mine + [g for g in model.gpus if g not in mine]


def _lines(text: Text) -> int:
    return text.plain.count("\n") + 1


def _header(
    model: LogModel,
    state: str,
    run: dict[int, Breakdown] | None,
    view: dict[int, Breakdown] | None,
    styles: dict[Phase, Style] | None,
    width: int,
    gpus: list[GpuStats],
) -> Text:
    s = model.summary
    text = Text()
    # with the proofs that failed, as the proofs lane's ✗ and the reports count them
    failed = int(failed_proofs(model).sum())
    rate = s.s_per_proof_shown  # none of several hosts
    figures = f"  {s.proofs_shown(short=True, failed=failed)}" + (f"  {rate}" if rate else "")
    # the figures stay whole, the header's margins outside them; a state too long to leave
    # the source SOURCE_MIN_CELLS cells beside them (`FINISHED · stopped reading: cannot read
    # …`, `· aligned on the wall clock`) keeps its first word there and says the rest whole
    # on a line of its own; the source name (cut in the middle) takes what is left. A file
    # name is never markup, nor a control (abbreviate)
    avail = width - HEADER_MARGINS - cell_len(figures) - 3  # the state's cells, a space
    word, _, rest = state.partition(" · ")
    # figures too long to fit beside the state's first word (a restarted daemon's at 80
    # columns) go on a line of their own, not cut by the screen
    figures_below = avail < cell_len(word)
    # nor beside a source they leave too few cells to tell (`r` of `restart.log`)
    source_room = avail - cell_len(word)
    figures_below |= source_room < min(cell_len(visible(model.source)), SOURCE_LEAST_CELLS)
    if figures_below:
        avail = width - HEADER_MARGINS - 3
    below = ""
    if rest and cell_len(state) > avail - SOURCE_MIN_CELLS:
        state, below = word, rest
    style = "bold reverse" if state != "FINISHED" or below else "bold"
    text.append(f" {state} ", style=style)
    text.append(" ")
    text.append(source_in(model, max(avail - cell_len(state), 0)))
    text.append(f"\n{figures.lstrip()}" if figures_below else figures)
    if below:
        text.append(f"\n{below}", style="bold")
    if model.starts_mid_run:
        text.append(f"\n{MID_RUN}", style="bold yellow")
    unplaced = unplaced_sentence(model)
    if unplaced is not None:
        text.append(f"\n{unplaced}", style="bold yellow")
    short = width < 100
    # under 100 columns the figures are not padded to line up, nor spaced by two: the
    # line (`+1 running` with it) fits 80 columns whole
    pad, sep = (0, " ") if short else (7, "  ")
    unprinted = alloc_unprinted(model)
    hosts = hosts_of(model)
    for g in gpus[:HEADER_GPUS]:
        line = Text()
        line.append("of span: ", style="dim")
        line.append("TIMELINE ")
        timeline, kernel = timeline_figure(g), kernel_figure(g)
        if short:  # the unit against the number, as the busy line below writes it
            timeline, kernel = timeline.replace(" %", "%"), kernel.replace(" %", "%")
        line.append(f"{timeline:>{pad}}", style="bold yellow")
        line.append(f"{sep}kernel ")
        line.append(f"{kernel:>{pad}}", style="bold green")
        idle = idle_figure(g, "cell" if short else "text")
        line.append(f"{sep}idle {idle} in ", style="dim")
        line.append(counted(model.gaps.how_many(gpu=g.gpu), "gap"), style="dim")
        name = model.gpu_label(g.gpu)
        room = width - HEADER_MARGINS - 1 - line.cell_len
        running = f"{sep}+{g.in_flight} running"
        # what is running gives way before the GPU's own name is cut (`G of span: … +1
        # running`); a host's or a run's name gives way first, as ever (`nod…:GPU2`)
        if g.in_flight and room - len(running) >= gpu_label_least(name):
            line.append(running, style="italic")
            room -= len(running)
        # a host's long name (`journal-2gpu.log:GPU2`) gives way so that the figures fit;
        # the GPU's own never does: under 80 columns two lines read `  of span: …` alike,
        # the figures' end is cut instead
        label = gpu_label_in(name, max(room, gpu_label_least(name, hosts)), hosts)
        text.append(f"\n{label} ", style="bold")
        text.append_text(line)
        zoomed = view is not None and g.gpu in view
        marks = (inferred_phases(g, unprinted), unmeasured_phases(g))
        if run is not None and g.gpu in run:
            text.append("\n")
            title = "busy, run" if zoomed else "busy"
            text.append_text(breakdown_text(title, run[g.gpu], styles or {}, short, *marks))
        if view is not None and zoomed:
            text.append("\n")
            text.append_text(breakdown_text("busy, view", view[g.gpu], styles or {}, short, *marks))
    if len(model.gpus) > HEADER_GPUS:
        more = len(model.gpus) - HEADER_GPUS
        text.append(
            f"\n+ {counted(more, 'more GPU')} (g lists every gap; --report shows each GPU)",
            style="dim",
        )
    figure = all_gpus_figure(model)
    if figure is not None and any(g.kernel_is_estimate for g in model.gpus):
        if short:  # the unit against the number, as the GPUs' lines above write it
            figure = figure.replace(" %", "%")
        text.append(f"\n{figure}", style="bold green")
    no_gpu = no_gpu_sentence(model)
    if no_gpu is not None:
        text.append(f"\n{no_gpu}", style="dim" if no_gpu == NO_GPU_YET else "bold yellow")
    return text


def status_text(view: GanttView, width: int | None = None) -> Text:
    """Threshold, selection (numbered by size, as the gap list and the report are) and zoom,
    in `width` cells: a selected gap's cause, then its side of a proof boundary, then its
    start give way before the zoom's `cell = …` is cut; a selected interval's `(i inspects)`,
    then the job found, then the interval's job id; last, the selection and the job."""
    text = Text()
    for detail in range(3, -2, -1):
        text = _status(view, detail)
        if width is None or text.cell_len <= width:
            break
    return text


def _status(view: GanttView, detail: int) -> Text:
    model = view.model
    shown = model.gaps.how_many(min_ms=view.threshold_ms)
    text = Text()
    encoding = getattr(view.app, "terminal_encoding", None)
    text.append(spelled(f"gaps ≥ {duration(view.threshold_ms)}: ", encoding), style="bold")
    text.append(f"{shown}")
    gap = view.selected_gap
    if detail < 0:
        pass  # no room for the selection: the threshold and the zoom
    elif gap is not None and view.selected is not None:
        text.append(f" │ #{model.gaps.rank_of(view.selected)} {model.gpu_label(gap.gpu)} ")
        text.append(duration(gap.duration_ms), style="bold red")
        if detail >= 1:
            text.append(f" at {duration(gap.start, cut=True)}")
        if detail >= 2:
            text.append(" · ")
            text.append(
                "crosses proofs" if gap.crosses_proof_boundary else "mid-proof",
                style="magenta" if gap.crosses_proof_boundary else "",
            )
        if detail >= 3:
            text.append(f" · {gap.cause or 'no queue event'}")
    elif view.selected_part is not None:
        text.append(f" │ {interval_words(model, view.selected_part, job=detail >= 1)}")
        text.append(" (i inspects)" if detail >= 3 else "")
    elif view.found_jobs:
        text.append(" │ n: its first interval")
    elif shown:  # with no gap to step to, n is not offered
        text.append(" │ n: first gap")
    if view.found_jobs and detail >= 2:
        job = view.found_jobs[view.found_index].job
        text.append(f" │ job {abbreviate(job, 16)}", style="bold")
    if len(view.model.parts):  # an empty log's cell is of no time (`cell = 50µs`)
        text.append(f" │ cell = {duration(view.scale, 'span')}", style="dim")
    return text
