"""Save SVG screenshots of the real app on the sample logs (shown in the README).

Run: python screenshots/make_screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from textual.pilot import Pilot  # noqa: E402

from parsers.hosts import START, HostLines, merge  # noqa: E402
from parsers.load import read_log  # noqa: E402
from parsers.rawlines import LineReader  # noqa: E402
from tui.app import CuzkApp, make_app  # noqa: E402
from tui.gantt import GanttView  # noqa: E402

SAMPLES = ROOT / "tests" / "samples"


def _app(name: str) -> CuzkApp:
    if name in COMPOSED:
        return COMPOSED[name]()
    path = SAMPLES / f"{name}.log"
    return make_app(read_log(path), LineReader(path=path))


def _hosts_app() -> CuzkApp:
    """Two hosts on the wall clock."""
    paths = [SAMPLES / "curio-mixed.log", SAMPLES / "journal-2gpu.log"]
    merged = merge([read_log(p) for p in paths], ["gpu-a", "gpu-b"])
    app = make_app(merged.model, HostLines(merged, [LineReader(path=p) for p in paths]))
    app.status = merged.note
    return app


def _compare_app() -> CuzkApp:
    """Two runs, each from its own start."""
    runs = [read_log(SAMPLES / f"{n}.log") for n in ("p12-c15-gw1", "p12-gw2-merged")]
    merged = merge(runs, ["p12-c15-gw1.log", "p12-gw2-merged.log"], START)
    app = make_app(merged.model, LineReader(data=b""), compared=(runs[0], runs[1]))
    app.status = merged.note
    return app


COMPOSED = {"<hosts>": _hosts_app, "<compare>": _compare_app}


async def _zoom_on_lock_wait(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, CuzkApp)
    table = app.model.parts
    waited = next(i for i in range(len(table)) if table.get(i).phases_ms["lock_wait"] > 1000)
    part = table.get(waited)
    assert part.gpu_start is not None and part.gpu_end is not None
    view = app.query_one(GanttView)
    view.autofit = False  # as a zoom key does: a later layout must not fit the run again
    view.scale = (part.gpu_end - part.gpu_start) / 40
    view.center_on(part.gpu_end)


async def _noop(pilot: Pilot[None]) -> None:
    return None


SHOTS: list[
    tuple[str, str, list[str], Callable[[Pilot[None]], Awaitable[None]], tuple[int, int]]
] = [
    ("overview", "curio-mixed", [], _noop, (120, 36)),
    ("zoomed", "p12-gw2-merged", [], _zoom_on_lock_wait, (120, 36)),
    ("inspector", "p12-c15-gw1", ["right_square_bracket"] * 6 + ["n", "enter"], _noop, (120, 36)),
    ("gap-list", "curio-mixed", ["g"], _noop, (120, 36)),
    ("help", "curio-mixed", ["question_mark"], _noop, (120, 36)),
    ("small-terminal", "p9-c6", ["n"], _noop, (80, 24)),
    ("help-small", "curio-mixed", ["question_mark"], _noop, (80, 24)),
    ("find", "curio-mixed", ["slash", *"porep-1000-10", "enter"], _noop, (120, 36)),
    ("wide-inspector", "p12-c15-gw1", ["n", "n", "enter"], _noop, (170, 40)),
    ("hosts", "<hosts>", ["b"], _noop, (120, 36)),
    ("compare", "<compare>", ["b"], _noop, (120, 36)),
    ("compare-figures", "<compare>", ["c"], _noop, (100, 36)),
]


async def main() -> None:
    """Take every screenshot."""
    for name, sample, keys, before, size in SHOTS:
        app = _app(sample)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await before(pilot)
            await pilot.press(*keys)
            await pilot.pause(0.2)
            out = app.save_screenshot(filename=f"{name}.svg", path=str(HERE))
            print(out)


if __name__ == "__main__":
    asyncio.run(main())
