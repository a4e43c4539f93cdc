"""Beyond one log on the command line: several hosts, `--compare`, `--export-trace/-csv`."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parsers import export
from parsers.durations import counted, duration, offset
from parsers.errors import CuzkError
from parsers.export import size_warning, write_csv, write_trace_sized
from parsers.hosts import START, Host, HostLines, Merged, merge
from parsers.load import load_runs
from parsers.model import LogModel
from parsers.rawlines import LineReader
from parsers.report import missing_timeline, report_dict
from parsers.sanitize import visible
from parsers.sources import file_hint
from parsers.why import gap_why
from parsers.writing import PartlyWritten, WriteRefused
from tui.options import Options, input_paths, window_error
from tui.output import say

if TYPE_CHECKING:
    from rich.text import Text

    from tui.ttymodes import Modes


def names_for(logs: list[str], given: Sequence[str] | None) -> list[str]:
    """Each log's name: as given with --name, else its file name; logs that share one are
    named by the fewest last parts of their paths that tell them apart (`gpu1/cuzk.log`,
    `gpu3/cuzk.log`: their whole paths, `/srv/logs/gpu1/cuzk.log`, were cut in the
    middle at 80 columns, just where they differ), else by their paths as given.

    Exact, as the JSON carries them (escaped); wherever one is drawn or printed it goes
    through `visible` (a file name or --name may hold an escape sequence or a line break).
    """
    if given:
        return list(given)
    parts = [Path(x).parts if x != "-" else ("stdin",) for x in logs]

    def tail(k: int, n: int) -> str:
        return "/".join(parts[k][-n:])

    names = []
    for k, mine in enumerate(parts):
        alike = [j for j, theirs in enumerate(parts) if j != k and theirs[-1:] == mine[-1:]]
        n = 1
        while alike and n < len(mine) and any(tail(j, n) == tail(k, n) for j in alike):
            n += 1
        clash = any(tail(j, n) == tail(k, n) for j in alike)
        names.append(logs[k] if clash else tail(k, n))
    return names


def load(
    raw: str, workers_per_gpu: int | None, apart: bool = False
) -> tuple[list[LogModel], LineReader | None]:
    """`load_runs` of one log, with the hint of why it shows nothing when that is its
    encoding (UTF-16, UTF-32), as for a single log."""
    models, reader = load_runs(raw, workers_per_gpu, apart)
    if raw != "-":
        path = Path(raw)
        hint = file_hint(path)
        if hint is not None and all(missing_timeline(m) is not None for m in models):
            say(f"{visible(path.name)}: {hint}")
    for note in {m.read_note for m in models} - {None}:
        say(f"{visible(Path(raw).name)}: {note}")
    return models, reader


def picked_run(
    raw: str, run: int, workers_per_gpu: int | None
) -> tuple[list[LogModel], LineReader | None]:
    """Run `run` (from 1) of a log whose daemon restarted, alone, and the log's reader.

    Raises: CuzkError: the log has no such run.
    """
    runs, reader = load(raw, workers_per_gpu, apart=True)
    if run > len(runs) == 1:
        raise CuzkError(f"{raw}:{run}: the daemon did not restart in this log (one run)")
    if run > len(runs):
        held = counted(len(runs), "run")
        raise CuzkError(f"{raw}:{run}: the log holds {held} (1 to {len(runs)})")
    picked = runs[run - 1]
    return [dataclasses.replace(picked, source=f"{picked.source} run {run}")], reader


def _export(
    args: Options, model: LogModel, inputs: list[Path], merged: Merged | None = None
) -> None:
    """Write the exports asked for; none over a log read (`inputs`), each whole or not at all.

    Raises: CuzkError: a target refused, or a write that failed (nothing was replaced).
    """
    t0, t1 = export_window(args, model, merged)
    note = window_note(args, model, t0, t1)
    if note is not None:
        say(f"note: {visible(note)}")
    target = ""  # the export being written, named if its write fails
    said: list[str] = []  # what was written, said once the writes are done
    try:
        if args.export_trace is not None:
            target = args.export_trace
            path = Path(args.export_trace)
            n, size = write_trace_sized(model, path, t0, t1, inputs=inputs)
            said.append(f"wrote {visible(args.export_trace)} ({n} trace events)")
            warning = size_warning(path, size, export.JSON_TRACE_LIMIT_BYTES)
            if warning is not None:
                said.append(f"warning: {visible(warning)}")
        if args.export_csv is not None:
            target = args.export_csv
            files = write_csv(model, Path(args.export_csv), inputs, t0, t1)
            names = ", ".join(f.name for f in files)
            said.append(f"wrote {names} in {visible(args.export_csv)}")
    except WriteRefused:
        raise
    except PartlyWritten as exc:  # an old file that could not be put back: where it is
        raise CuzkError(f"cannot write the export {target}: {visible(str(exc))}") from None
    except OSError as exc:
        raise CuzkError(
            f"cannot write the export {target}: {exc.strerror or exc} (nothing was replaced)"
        ) from None
    except ValueError as exc:  # a time a Perfetto trace cannot hold (before 0)
        raise CuzkError(f"cannot write the export {target}: {exc} (nothing was replaced)") from None
    finally:
        # said once the writes are done: a `wrote …` that failed was said as a write that
        # failed, `nothing was replaced`, of files all replaced
        for line in said:
            say(line)


def _no_clock(args: Options, model: LogModel, merged: Merged | None) -> str | None:
    """Why a wall-clock --from/--to cannot be placed on several logs, or on the runs of a
    daemon that restarted (None: one run of one log, or logs on the wall clock)."""
    wall = [t for t in (args.time_from, args.time_to) if t is not None and t.is_wall]
    if not wall:
        return None
    if merged is None:
        if not model.restarted or model.wall_anchor is not None or not model.wall_bases:
            return None
        runs = len(model.run_lines or ())
        return (
            f"{wall[0].text!r} is a wall-clock time, and the daemon restarted in this log "
            f"({runs} runs, one after another on the time axis, each on its own clock): give "
            "an offset such as 1h05m"
        )
    why = merged.wall_clock_why()
    if why is None:
        return None
    return (
        f"{wall[0].text!r} is a wall-clock time, and the logs are not on one wall clock "
        f"({why}): give an offset such as 1h05m"
    )


def export_window(
    args: Options, model: LogModel, merged: Merged | None = None
) -> tuple[float, float]:
    """The window of --from/--to in ms on the model's clock (unbounded where not given;
    `merged`: the logs the model holds, when several).

    Raises: CuzkError: a time the log cannot place, or --from after --to.
    """
    from parsers.timespec import resolve

    t0, t1 = -math.inf, math.inf
    try:
        if args.time_from is not None:
            t0 = resolve(args.time_from, model.wall_anchor)
        if args.time_to is not None:
            t1 = resolve(args.time_to, model.wall_anchor, t0 if math.isfinite(t0) else 0.0)
    except ValueError as exc:
        raise CuzkError(_no_clock(args, model, merged) or str(exc)) from None
    if t0 >= t1:
        assert args.time_from is not None and args.time_to is not None
        raise CuzkError(window_error(args.time_from.text, args.time_to.text, t0 > t1))
    lo, hi = model.time_range
    if t0 >= hi or t1 <= lo:
        # a window the run never reaches: an export of it holds nothing but its headers
        def shown(ms: float) -> str:
            # as the time axis writes it, and --from/--to take it: offset (wall clock)
            wall = model.wall_text(ms)
            return offset(ms) + (f" ({wall})" if wall else "")

        flag = "--from" if t0 >= hi else "--to"
        given = args.time_from if t0 >= hi else args.time_to
        assert given is not None
        side = "after the log's end" if t0 >= hi else "before the log's start"
        raise CuzkError(
            f"{flag} {given.text}{_taken(_next_day(args, model, t0, t1), flag)} is {side} "
            f"(the log runs {shown(lo)} to {shown(hi)}): nothing to export"
        )
    return t0, t1


def _taken(rolled: dict[str, str], flag: str) -> str:
    return f" (taken on the next day, {rolled[flag]})" if flag in rolled else ""


def _next_day(args: Options, model: LogModel, t0: float, t1: float) -> dict[str, str]:
    """Per option, the date and time it was taken at (the window [t0, t1) resolved), when
    --from or --to is a time of day that comes before the engine's start (--to: before
    --from) on its day, and is taken on the next day (a window across midnight, or a typing
    slip)."""
    from parsers.timespec import next_day

    out: dict[str, str] = {}
    for flag, spec, after, at in (
        ("--from", args.time_from, 0.0, t0),
        ("--to", args.time_to, t0 if math.isfinite(t0) else 0.0, t1),
    ):
        if spec is not None and next_day(spec, model.wall_anchor, after):
            wall = model.wall_time(at)
            if wall is not None:
                out[flag] = f"{wall:%Y-%m-%d %H:%M:%S}"
    return out


def window_note(args: Options, model: LogModel, t0: float, t1: float) -> str | None:
    """The line that says a time of day of the export's window was taken on the next day,
    and how long the window is then (None: neither was)."""
    rolled = _next_day(args, model, t0, t1)
    said = []
    for flag, spec in (("--from", args.time_from), ("--to", args.time_to)):
        if spec is None or flag not in rolled:
            continue
        after = args.time_from if flag == "--to" else None
        before = f"--from {after.text}" if after is not None else "the engine's start"
        said.append(
            f"{flag} {spec.text} comes before {before} on its day: "
            f"taken on the next day, {rolled[flag]}"
        )
    if not said:
        return None
    span = f" (a window of {duration(t1 - t0)})" if math.isfinite(t1 - t0) else ""
    return "; ".join(said) + span


def multi_report_dict(merged: Merged, models: list[LogModel], min_gap_ms: int) -> dict[str, Any]:
    """The JSON document of several logs: each host's report, then all of them as one."""
    return {
        "schema": 1,
        "alignment": merged.alignment,
        "note": merged.note,
        "hosts": [
            {"name": h.name, "offset_ms": h.offset_ms, **report_dict(m, min_gap_ms=min_gap_ms)}
            for h, m in zip(merged.hosts, models, strict=True)
        ],
        "all": report_dict(merged.model, min_gap_ms=min_gap_ms),
    }


def all_hosts(
    merged: Merged,
    top: int,
    min_gap_ms: int,
    reader: LineReader,
    encoding: str | None = None,
    width: int | None = None,
) -> list[Any]:
    """The report over every log at once: GPUs, gap statistics, the largest gaps of all
    (`encoding`: the output's, for `spelled`, as each host's report; `width`: a terminal's,
    which the GPU table's names are cut to fit)."""
    from rich.text import Text

    from tui.prose import Prose
    from tui.report import (
        all_gpus_lines,
        gap_lines,
        gap_stats_table,
        gpu_table,
        heading,
        largest_title,
        unfinished_sentence,
    )

    model = merged.model
    gaps = model.gaps
    listed = gaps.largest(top, min_gap_ms)
    s = model.summary
    out: list[Any] = [
        heading(s.proofs_shown(short=False)),  # `… on 2 hosts   span 24m57s`, as the header
    ]
    outcome = unfinished_sentence(model)  # every host's proofs, as each host's section says
    if outcome is not None:
        out.append(Text(outcome))
    out += [
        gpu_table(model, width),
        *all_gpus_lines(model),
        heading("Gaps of every host"),
        gap_stats_table(gaps, s.gaps, encoding),
    ]
    if top:  # --top 0: no list
        out.append(heading(largest_title(len(listed), min_gap_ms, " of every host")))
    out.extend(
        Prose(gap_lines(model, gaps[i], rank, gap_why(model, gaps[i], reader)))
        for rank, i in enumerate(listed, 1)
    )
    return out


ALL_HOSTS_CLOCK = "the all-hosts clock"


def clock_words(host: Host) -> str:
    """What a host's section times its gaps by: its own clock, and how far the all-hosts
    section's clock is from it, to the millisecond (one gap has a time in each; they
    differ by this)."""
    sign = "+" if host.offset_ms >= 0 else "-"  # +0.000s too: no offset left unsaid
    return f"times on its own clock ({sign}{offset(abs(host.offset_ms))} on {ALL_HOSTS_CLOCK})"


def banner(head: str, words: str, width: int | None) -> list[Text]:
    """A section's banner, `━━ head: words ━━`, on one line where it fits `width` (None:
    piped, whole lines), else `━━ head ━━` over the words (folded at a terminal's width,
    the banner broke inside a phrase, its bar on both lines), the head cut in the middle
    where it alone is wider."""
    from rich.cells import cell_len
    from rich.text import Text

    whole = f"━━ {head}: {words} ━━"
    if width is None or cell_len(whole) <= width:
        return [Text(whole, style="bold reverse")]
    if cell_len(head) + 6 > width:
        from tui.lanes import abbreviate

        head = abbreviate(head, max(width - 6, 1))  # a name longer than the terminal: its middle
    return [Text(f"━━ {head} ━━", style="bold reverse"), Text(words)]


def _print(
    args: Options,
    merged: Merged,
    models: list[LogModel],
    readers: list[LineReader | None],
    reader: LineReader,
) -> None:
    from rich.console import Group

    from parsers.compare import compare_dict
    from tui.compare import print_compare
    from tui.report import print_report

    if args.json:
        if args.compare:
            doc = compare_dict(models[0], models[1])
        else:
            doc = multi_report_dict(merged, models, args.min_gap)
        # as one log's report: indented for a person at a terminal, compact for a script
        json.dump(doc, sys.stdout, indent=1 if sys.stdout.isatty() else None, ensure_ascii=True)
        sys.stdout.write("\n")
        return
    from tui.output import report_console, report_width

    with report_console(report_width()) as console:
        if args.compare:
            print_compare(models[0], models[1], console)
            return
        # at a terminal the banners and the GPUs' names fit its width (each `:GPU2` whole)
        width = console.width if console.is_terminal else None
        for h, m, r in zip(merged.hosts, models, readers, strict=True):
            for line in banner(f"host {visible(h.name)}", clock_words(h), width):
                console.print(line)
            number = host_gap_numbers(merged, h, m)
            print_report(m, console, args.top, args.min_gap, r, number)
            console.print()
        words = f"{merged.note}; times on {ALL_HOSTS_CLOCK}"
        for line in banner(f"all {len(models)} hosts", words, width):
            console.print(line)
        encoding = getattr(console.file, "encoding", None)
        report = all_hosts(merged, args.top, args.min_gap, reader, encoding, width)
        console.print(Group(*report))


def host_gap_numbers(merged: Merged, host: Host, model: LogModel) -> Callable[[int], int]:
    """A host's gap's number among every host's (the one the viewer, the CSV and the
    all-hosts section give it), found by its GPU and start on the all-hosts clock."""
    every, gaps = merged.model.gaps, model.gaps

    def number(i: int) -> int:
        j = every.index_of(host.gpu_base + int(gaps.gpu[i]), int(gaps.start[i]) + host.offset_ms)
        # a gap the merged model lacks (none should) keeps its rank among the host's
        return gaps.rank_of(i) if j is None else every.rank_of(j)

    return number


def check_host_names(names: list[str]) -> None:
    """Every host its own name: a log whose daemon restarted is a host per run, `NAME run K`,
    which another log's name (given, or its file's) may already be; two hosts of one name
    would be one in every table, file and trace.

    Raises: CuzkError: two hosts of one name.
    """
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise CuzkError(
                f"two hosts are named {visible(name)} (a restarted log names a host per run, "
                "NAME run K): give the logs other names with --name"
            )
        seen.add(name)


def _plain(readers: list[LineReader | None]) -> list[LineReader]:
    """A reader per log (an empty one where the raw lines cannot be read again)."""
    return [r if r is not None else LineReader(data=b"") for r in readers]


def run_multi(args: Options, modes: Modes | None = None) -> int:
    """Several logs, a comparison, or an export: the report, the files, or the viewer
    (`modes`: the terminal's as the user had them, as for `tui.launch.find_terminal`).

    Raises: CuzkError: a log that cannot be read, an export that cannot be written.
    """
    from tui.replay import DEMO_NAME, demo_bytes

    if args.demo:
        from parsers.builder import LogBuilder

        builder = LogBuilder(source=DEMO_NAME, workers_per_gpu=args.workers_per_gpu)
        data = demo_bytes()
        builder.feed(data)
        loaded: list[tuple[list[LogModel], LineReader | None]] = [
            ([builder.build()], LineReader(data=data))
        ]
        logs = ["demo"]
    else:
        logs = list(args.compare or args.logs)
        # beside other logs, a log whose daemon restarted is one host per run: its runs are
        # placed as any logs are (on the wall clock they carry, else each on its own clock)
        apart = len(logs) > 1 and not args.compare
        asked = args.compare_runs if args.compare else args.log_runs
        loaded = [
            load(x, args.workers_per_gpu, apart)
            if run is None
            else picked_run(x, run, args.workers_per_gpu)
            for x, run in zip(logs, asked, strict=True)
        ]
    for runs, _ in loaded:
        if all((reason := missing_timeline(m)) is not None for m in runs):
            say(f"{visible(runs[0].source)}: {reason}")
    models: list[LogModel] = []
    names: list[str] = []
    readers: list[LineReader | None] = []
    given = names_for(logs, args.name)
    if not args.name and not args.demo:
        # one file given twice (its runs, LOG:N): named as the files are, each file once
        distinct = list(dict.fromkeys(logs))
        named = dict(zip(distinct, names_for(distinct, None), strict=True))
        # a run picked with LOG:N is named for it (the same log's two runs, apart)
        asked = args.compare_runs if args.compare else args.log_runs
        runs_of = zip((named[x] for x in logs), asked, strict=True)
        given = [n if r is None else f"{n} run {r}" for n, r in runs_of]
        if args.compare and given[0] == given[1]:
            # a run compared with itself (what noise alone looks like): a name for each side
            given = [f"{given[0]} (before)", f"{given[1]} (after)"]
    for (runs, reader), name in zip(loaded, given, strict=True):
        if len(runs) == 1:
            models.append(runs[0])
            readers.append(reader)
            names.append(name)
            continue
        for k, run in enumerate(runs):
            if run.counts.timeline == 0 and any(r.counts.timeline for r in runs):
                # a daemon started and stopped (or not yet at work when the log ends)
                print(
                    f"cuzk-tui: {visible(name)} run {k + 1}: no TIMELINE lines, left out",
                    file=sys.stderr,
                )
                continue
            models.append(run)
            readers.append(reader)
            names.append(f"{name} run {k + 1}")
    check_host_names(names)
    single = len(models) == 1
    if args.compare:
        # two runs are compared: a log whose daemon restarted holds several
        for m, name in zip(models, names, strict=True):
            if m.restarted:
                starts = m.run_lines or ()
                lines = ", ".join(str(n) for n in starts)
                print(
                    f"cuzk-tui: error: {visible(name)}: the daemon restarted in this log (runs "
                    f"begin at lines {lines}); --compare takes one run each: pick one with "
                    f"LOG:N (1 to {len(starts)})",
                    file=sys.stderr,
                )
                return 2
        # each side as it is named (--name, `LOG run N`, `NAME (before)`), in the report,
        # its JSON and the `c` window as on the lanes: the file's name said nothing of --name
        models = [dataclasses.replace(m, source=n) for m, n in zip(models, names, strict=True)]
    merged = merge(models, names, START if args.compare else None) if not single else None
    model = merged.model if merged is not None else models[0]
    if args.export_trace is not None or args.export_csv is not None:
        _export(args, model, input_paths([] if args.demo else logs), merged)
        if not args.report:
            return 0
    if args.report:
        from tui.output import print_one_report, written

        def write() -> None:
            if merged is None:
                print_one_report(args, model)
            else:
                _print(args, merged, models, readers, HostLines(merged, _plain(readers)))

        return written("report", write)
    from tui.launch import find_terminal, run_static

    terminal = find_terminal(args.ascii, modes)  # before any line: without one, its line alone
    if merged is None:
        # one run of a log, picked with LOG:N (one log alone comes here only so, or to be
        # exported, above): read whole, not followed
        note = f"{visible(model.source)}, read whole (not followed)"
        return run_static(args, model, _plain(readers)[0], note, None, terminal)
    reader = HostLines(merged, _plain(readers))
    compared = (models[0], models[1]) if args.compare else None
    if not args.compare:
        print(f"cuzk-tui: {len(models)} logs, {merged.note}", file=sys.stderr)
    return run_static(args, merged.model, reader, merged.note, compared, terminal)
