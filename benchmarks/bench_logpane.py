"""Time the log pane (`L`) on a long log: opening it at the newest gap, a hundred pages
down, the jump to the last line, and a search through the whole log, beside the baseline of
the inspector's raw lines of the same gap (tui/inspector.py `raw_context`).

Run: python benchmarks/bench_logpane.py [--runs N] [--log PATH]

The model is loaded once (not timed); each run opens the pane with a fresh reader in a
headless app of 120 x 36, as a user pressing the keys meets it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = 100


async def _pane_run(path: Path, model: object) -> dict[str, float]:
    """One run: seconds of each step."""
    from parsers.linesearch import LineSearch, compile_search
    from parsers.model import LogModel
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.inspector import raw_context
    from tui.loglines import LogLines
    from tui.logpane import LogPaneScreen

    assert isinstance(model, LogModel)
    gaps = model.gaps
    newest = int(model.parts.end_line[gaps.before].argmax())  # the farthest into the file
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    raw_context(model, LineReader(path=path), gaps[newest])
    out["baseline"] = time.perf_counter() - t0

    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=(120, 36)) as pilot:
        app.gantt.select_gap(newest)
        await pilot.pause()
        t0 = time.perf_counter()
        await pilot.press("L")
        while not isinstance(app.screen, LogPaneScreen):
            await pilot.pause()
        await pilot.pause()
        out["open"] = time.perf_counter() - t0
        lines = app.screen.query_one(LogLines)
        assert lines.cursor == int(model.parts.end_line[gaps.before[newest]])
        await pilot.press("home")
        await pilot.pause()
        t0 = time.perf_counter()
        for _ in range(PAGES):
            await pilot.press("b")  # a key the pane does not bind: Textual's own cost
        await pilot.pause()
        out["idle_keys"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(PAGES):
            await pilot.press("pagedown")
        await pilot.pause()
        out["pages"] = time.perf_counter() - t0
        # the pane's own work for a page: the cursor moved, the lines read, every row drawn
        await pilot.press("home")
        await pilot.pause()
        t0 = time.perf_counter()
        for _ in range(PAGES):
            lines.action_page(1)
            for y in range(lines.rows_in_view):
                lines.render_line(y)
        out["own"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        await pilot.press("end")
        await pilot.pause()
        out["end"] = time.perf_counter() - t0
        assert lines.cursor == lines.total
        # a search that finds nothing reads the whole log: its pace, and its longest step
        # (how long the screen waits for one chunk, beyond the turn it gives itself)
        search = LineSearch(lines.reader, compile_search("NO SUCH TEXT ANYWHERE"), 0)
        longest = 0.0
        t0 = time.perf_counter()
        while True:
            s0 = time.perf_counter()
            done = search.step()
            longest = max(longest, time.perf_counter() - s0)
            if done:
                break
        out["search"] = time.perf_counter() - t0
        out["step"] = longest
    return out


def main() -> int:
    """Print the figures."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.common import hours_250_log
    from parsers.load import read_log
    from tui.options import positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=3)
    ap.add_argument("--log", type=Path, default=None)
    args = ap.parse_args()
    log = args.log or hours_250_log()
    t0 = time.perf_counter()
    model = read_log(log)
    print(
        f"log: {log} ({log.stat().st_size / 1e6:.0f} MB), model loaded in "
        f"{time.perf_counter() - t0:.1f} s (not timed below); median of {args.runs}"
    )
    runs = [asyncio.run(_pane_run(log, model)) for _ in range(args.runs)]

    def median(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    size_mb = log.stat().st_size / 1e6
    rows = [
        ("baseline", "baseline: the inspector's raw lines of the gap", 1),
        ("open", "L at the newest gap, drawn", 1),
        ("idle_keys", f"a key the pane does not bind (Textual), x{PAGES}", PAGES),
        ("pages", f"page down from the first line, drawn, x{PAGES}", PAGES),
        ("own", f"page down, the pane's own work (read, rows), x{PAGES}", PAGES),
        ("end", "end: the last line, drawn", 1),
    ]
    for key, what, per in rows:
        each = " each" if per > 1 else ""
        print(f"  {what:<56} {1000 * median(key) / per:8.1f} ms{each}")
    search = median("search")
    print(
        f"  {'search through the whole log (no match)':<56} {search:8.2f} s "
        f"({size_mb / search:.0f} MB/s), longest step {1000 * median('step'):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
