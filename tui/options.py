"""The command line's checks that need no log read: cheap to import (the report starts
reading its log before the analysis is loaded)."""

from __future__ import annotations

import argparse
import glob
import os
from pathlib import Path

from parsers.writing import STDIN

GLOB_CHARS = set("*?[")


def expand(raw: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """Logs as given; a pattern that names no file (the shell left it) is expanded here."""
    out: list[str] = []
    for item in raw:
        if item != "-" and not os.path.exists(item) and GLOB_CHARS & set(item):
            found = sorted(glob.glob(item))
            if not found:
                parser.error(f"no file matches {item}")
            out.extend(found)
        else:
            out.append(item)
    return out


def check_multi(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check the options of issue 11 and set `args.log` (one log) and `args.multi`."""
    logs = expand(args.logs, parser)
    args.logs = logs
    args.log = logs[0] if len(logs) == 1 else None
    if args.compare:
        if logs or args.demo:
            parser.error("give --compare BEFORE AFTER, or logs, not both")
        logs = args.compare = expand(args.compare, parser)
        if len(logs) != 2:
            parser.error("--compare takes exactly two logs")
    if "-" in logs and len(logs) > 1:
        parser.error("standard input (-) can only be read as the one log")
    if args.name is not None and len(args.name) != max(len(logs), 1):
        parser.error(f"--name given {len(args.name)} times for {len(logs)} logs (once per log)")
    exporting = args.export_trace is not None or args.export_csv is not None
    check_window(parser, args, exporting)
    args.multi = bool(args.compare) or len(logs) > 1 or exporting
    if not args.multi:
        return
    if args.json and not args.report:
        parser.error("--json goes with --report")
    if args.replay is not None:
        parser.error("--replay shows one log (not with several, --compare or an export)")
    if not logs and not args.demo:
        parser.error("no log given (try: cuzk-tui --demo)")
    if args.demo and logs:
        parser.error("give a log or --demo, not both")
    check_outputs(parser, args, logs)
    check_screenshot_dir(parser, args)


def check_window(
    parser: argparse.ArgumentParser, args: argparse.Namespace, exporting: bool
) -> None:
    """--from/--to: only with an export, and the one not after the other (wall-clock times
    are checked once the log gives the engine's start)."""
    t0, t1 = args.time_from, args.time_to
    if (t0 is not None or t1 is not None) and not exporting:
        parser.error("--from/--to choose what --export-trace or --export-csv writes")
    a = None if t0 is None else t0.offset_ms
    b = None if t1 is None else t1.offset_ms
    if a is not None and b is not None and a > b:
        parser.error(f"--from {t0.text} is after --to {t1.text}")


def input_paths(logs: list[str]) -> list[Path]:
    """The files the command reads (`-`: standard input), which nothing it writes may be."""
    return [STDIN if x == "-" else Path(x) for x in logs]


def check_outputs(
    parser: argparse.ArgumentParser, args: argparse.Namespace, logs: list[str]
) -> None:
    """Expand `~` in the export paths and make them absolute, and refuse, before anything is
    read or written, a target that is one of the logs or not a regular file."""
    from parsers.export import check_csv_targets
    from parsers.writing import WriteRefused, check_target, output_path

    inputs = input_paths(logs)
    try:
        if args.export_trace is not None:
            trace = output_path(args.export_trace)
            if trace.is_dir():
                parser.error(f"--export-trace: is a folder: {args.export_trace}")
            if not trace.parent.is_dir():
                parser.error(f"--export-trace: no such folder: {trace.parent}")
            check_target(trace, inputs)
            args.export_trace = str(trace)
        if args.export_csv is not None:
            folder = output_path(args.export_csv)
            if not folder.exists() and not folder.parent.is_dir():
                parser.error(f"--export-csv: no such folder: {folder.parent}")
            check_csv_targets(folder, inputs)
            args.export_csv = str(folder)
    except WriteRefused as exc:
        parser.error(str(exc))


def check_screenshot_dir(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """`--screenshot-dir`, `~` expanded and absolute: an existing folder."""
    from parsers.writing import WriteRefused, output_path

    try:
        folder = output_path(args.screenshot_dir)
    except WriteRefused as exc:
        parser.error(f"--screenshot-dir: {exc}")
    if not folder.is_dir():
        parser.error(f"--screenshot-dir: not a directory: {args.screenshot_dir}")
    args.screenshot_dir = str(folder)
