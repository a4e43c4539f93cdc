"""`--compare`'s noise: each figure judged against how much it varies within each run."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from helpers import build

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from cuzksim.pairs import base_config, make_pair
from parsers.compare import DURATION_GAPS, Figure, compare, compare_dict, fmt_noise
from parsers.load import read_log
from parsers.model import LogModel
from parsers.noise import Ratio, covered, gap_noise, gpu_noise, stretch_edges
from tui import cli


def _brute_covered(starts: list[float], ends: list[float], edges: list[float]) -> list[float]:
    return [
        sum(max(0.0, min(e, hi) - max(s, lo)) for s, e in zip(starts, ends, strict=True))
        for lo, hi in itertools.pairwise(edges)
    ]


@pytest.mark.parametrize("seed", range(20))
def test_the_time_blocks_cover_in_each_stretch_is_what_clipping_each_gives(seed: int) -> None:
    rng = random.Random(seed)
    starts, ends, t = [], [], rng.uniform(-50, 50)
    for _ in range(rng.randint(0, 12)):
        t += rng.uniform(0, 30)
        starts.append(t)
        t += rng.uniform(0, 30)  # 0 too: an empty block
        ends.append(t)
    edges = sorted(rng.uniform(-60, t + 60) for _ in range(rng.randint(2, 9)))
    got = covered(np.array(starts), np.array(ends), np.array(edges))
    assert got == pytest.approx(_brute_covered(starts, ends, edges), abs=1e-9)


def test_a_ratio_s_standard_error_is_its_stretches_spread_around_the_whole() -> None:
    # y/x = 1 over both stretches; each stretch 1 away from what the whole ratio gives it
    r = Ratio(np.array([1.0, 3.0]), np.array([2.0, 2.0]))
    assert r.se == pytest.approx(math.sqrt((1 + 1) * 2 / 1) / 4)
    # stretches that agree: no spread; one stretch or none: nothing to tell a spread by
    assert Ratio(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0])).se == 0.0
    assert Ratio(np.array([1.0, 0.0]), np.array([2.0, 0.0])).se == 0.0
    assert Ratio(np.zeros(0), np.zeros(0)).se == 0.0


def test_a_gpu_s_stretches_add_up_to_its_whole_run_figures() -> None:
    """The stretches cut the span, so their sums are the run's: the busy and kernel time of
    each GPU, its busy split phase by phase, its workers' lock wait; the gaps' time."""
    m = build(simulate(replace(base_config(7), proofs=12))[1])
    check_stretches(m)
    # an engine without lock lines: its kernel figure an estimate, not its blocks' union
    old = build(simulate(SimConfig(seed=3, proofs=6, era="feb", gw=2))[1])
    assert old.gpus[0].kernel_is_estimate
    assert old.gpus[0].kernel_busy_ms != pytest.approx(old.gpus[0].kernel.total_ms)
    check_stretches(old)


def check_stretches(m: LogModel) -> None:
    noise = gpu_noise(m)
    assert set(noise) == {g.gpu for g in m.gpus if g.spanned}
    for g in m.gpus:
        n = noise[g.gpu]
        assert n.timeline.x.sum() == pytest.approx(g.span_ms)
        assert n.timeline.y.sum() == pytest.approx(g.busy.total_ms)
        assert n.kernel.y.sum() == pytest.approx(g.kernel_busy_ms)  # the figure, estimated too
        split = m.run_split[g.gpu] if m.run_split else None
        assert split is not None
        for phase, ratio in n.split.items():
            assert ratio.y.sum() == pytest.approx(split.phase_ms.get(phase, 0.0), abs=1e-6)
        workers = [w for w in m.workers if w.gpu == g.gpu]
        lock = sum(w.phases_ms["lock_wait"] for w in workers)
        assert n.lock.y.sum() == pytest.approx(lock, rel=1e-9, abs=1e-6)
    gaps = gap_noise(m)
    assert gaps.share.y.sum() == pytest.approx(m.summary.gaps.total_ms)
    assert gaps.rate.y.sum() == m.summary.gaps.count
    assert len(stretch_edges(None)) == 0


@pytest.mark.parametrize("seed", range(4))
def test_two_runs_of_one_configuration_are_not_told_apart(seed: int) -> None:
    """Fixed levels (1 point, 10 % of a duration) gave these pairs of runs of one simulated
    configuration 10 to 25 verdicts each: noise read as change."""
    config = base_config(seed)
    a = build(simulate(config)[1])
    b = build(simulate(replace(config, seed=config.seed + 100_003))[1])
    assert [f.verdict() for f in compare(a, b) if f.moved] == []


def test_a_faster_gpu_is_still_told_apart() -> None:
    pair = make_pair(3, "gpu-speed")
    a, b = build(simulate(pair.a)[1]), build(simulate(pair.b)[1])
    moved = {(f.section, f.name) for f in compare(a, b) if f.moved}
    assert ("run", "s/proof") in moved or any(s.startswith("GPU") for s, _ in moved)
    assert any(name == "kernel % of busy" or name == "kernel % of span" for _, name in moved)


def test_a_gap_duration_is_judged_by_ratio() -> None:
    def figure(before: float, after: float) -> Figure:
        return Figure("gaps", "p90", "ms", before, after, None, "lower", factor=3.0)

    assert not figure(100, 290).moved and figure(100, 300).moved and figure(300, 100).moved
    assert figure(310, 100).improved is True and figure(100, 310).improved is False
    assert figure(10, 35).moved  # 25 ms apart
    assert not figure(5, 16).moved  # 11 ms: the stamps' whole ms
    assert not figure(0, 16).moved and figure(0, 30).moved
    assert fmt_noise(figure(1, 2)) == "×3"


def test_the_durations_of_a_few_gaps_and_the_median_are_shown_not_judged() -> None:
    a = read_log(SAMPLES / "p12-c15-gw1.log")
    b = read_log(SAMPLES / "p12-gw2-merged.log")
    figures = compare(a, b)
    boundary = {f.name: f for f in figures if f.section == "boundary gaps"}
    assert boundary["count"].before is not None and boundary["count"].after is not None
    assert min(boundary["count"].before, boundary["count"].after) < DURATION_GAPS
    for name in ("mean", "p50", "p90", "p99", "max"):
        f = boundary[name]
        assert f.factor is None and f.noise is None and not f.moved, name
        assert fmt_noise(f) == "–"
    gaps = {f.name: f for f in figures if f.section == "gaps"}
    assert gaps["p50"].factor is None and not gaps["p50"].moved  # +300 %: the median
    assert gaps["p90"].factor == 3.0 and gaps["p90"].moved  # +317 %, 24 and 14 gaps


def test_the_tables_and_the_json_say_each_noise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [str(SAMPLES / "p12-c15-gw1.log"), str(SAMPLES / "p12-gw2-merged.log")]
    assert cli.main(["--compare", *args, "--report"]) == 0
    out = capsys.readouterr().out
    gpu = out[out.index("\nGPU0\n") :]
    header = next(line for line in gpu.splitlines() if "figure" in line)
    assert header.split() == ["figure", "before", "after", "difference", "noise"]
    row = next(line for line in gpu.splitlines() if line.strip().startswith("kernel % of busy"))
    assert row.split()[-2:][0].startswith("±") and row.endswith("pts")
    assert cli.main(["--compare", *args, "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for f in doc["figures"]:
        assert f["noise"] is None or f["noise_factor"] is None
        if f["noise_factor"] is not None:
            lo, hi = sorted((f["before"], f["after"]))
            assert f["moved"] == (hi - lo > 20 and hi >= f["noise_factor"] * lo)
        else:
            assert f["moved"] == (f["noise"] is not None and abs(f["delta"]) > f["noise"])
    same = read_log(SAMPLES / "p12-c15-gw1.log")
    assert compare_dict(same, same)["verdicts"] == []


def test_s_per_proof_moves_by_five_percent_of_enough_proofs() -> None:
    """Its noise was 3.5 standard errors of the mean time between completions: proofs that
    complete in bunches made it ±52 % of the value, and a GPU 3× slower (s/proof +31 %) was
    not told; a run of 1 or 2 proofs had 2 %, less than runs of many."""
    config = replace(base_config(5), proofs=12)
    a = build(simulate(config)[1])
    slower = build(simulate(replace(config, seed=config.seed + 1, gpu_scale=1.5))[1])
    rate = next(f for f in compare(a, slower) if f.name == "s/proof")
    before = a.summary.rate
    assert before is not None and rate.noise == pytest.approx(0.05 * before)
    assert rate.after is not None and rate.after > 1.2 * before
    assert rate.moved and rate.improved is False
    one = build(simulate(replace(config, proofs=2))[1])
    assert one.summary.proofs_completed == 2
    few = next(f for f in compare(one, a) if f.name == "s/proof")
    assert few.noise is None and not few.moved and fmt_noise(few) == "–"


def test_a_figure_one_run_lacks_has_no_noise_and_no_share_is_beyond_100_points() -> None:
    a = read_log(SAMPLES / "p9-c6.log")  # an engine that prints no lock line
    b = read_log(SAMPLES / "p12-c15-gw1.log")
    for f in compare(a, b):
        if f.before is None or f.after is None:
            assert fmt_noise(f) == "–" and f.as_dict()["noise"] is None
            assert f.as_dict()["noise_factor"] is None
        if f.unit == "%" and f.noise is not None:
            assert f.noise <= 100.0
    assert any(f.before is None for f in compare(a, b))


def test_the_busy_split_s_shares_move_without_better_or_worse() -> None:
    """A GPU 3× slower: kernel's share of busy rose 30 → 69 %, judged `better` beside an
    s/proof 31 % worse."""
    pair = make_pair(3, "gpu-speed")
    for f in compare(build(simulate(pair.a)[1]), build(simulate(pair.b)[1])):
        if f.name.endswith("% of busy"):
            assert f.better == "" and f.improved is None
            if f.moved:
                verdict = f.verdict()
                assert verdict is not None and not verdict.endswith(("better", "worse"))


@pytest.mark.parametrize("width", [60, 80])
async def test_the_comparison_window_scrolls_sideways_rather_than_cut_a_figure(
    width: int,
) -> None:
    """At 80 columns the tables were squeezed into the box: `-38.6 poi…`, `±1.1 p…`. The
    tables scroll sideways where the box is narrower; the verdicts and the legend wrap to
    the box's own width (at 60 columns they were wrapped to the tables' width, and
    `-20 %): bett` was cut at the box's edge)."""
    from textual.containers import VerticalScroll
    from textual.widgets import Static

    from parsers.hosts import START, merge
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.compare import CompareScreen
    from tui.prose import Prose

    a = read_log(SAMPLES / "p12-c15-gw1.log")
    b = read_log(SAMPLES / "p12-gw2-merged.log")
    merged = merge([a, b], ["before", "after"], START)
    app = make_app(merged.model, LineReader(data=b""), compared=(a, b))
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        box = app.screen.query_one("#box", VerticalScroll)
        seen = box.scrollable_content_region.width
        parts = list(box.query(Static))
        prose = [p for p in parts if isinstance(p.content, Prose)]
        tables = [p for p in parts if p not in prose]
        assert prose and all(p.size.width <= seen for p in prose)
        widest = max(p.size.width for p in tables)
        assert widest > seen if width == 60 else widest <= seen

        def text_of(part: Static) -> str:
            return "\n".join(
                "".join(seg.text for seg in part.render_line(y)) for y in range(part.size.height)
            )

        text = "\n".join(map(text_of, parts))
        rows = [line for line in text.splitlines() if "% of busy" in line or "s/proof  " in line]
        assert rows and not any("…" in row for row in rows), rows
        assert any(row.rstrip().endswith("pts") for row in rows)
        # every verdict whole, wrapped after its section's name (`…(+28.8 points): wo`)
        assert re.search(r"\(\+28\.8 points\):(\s*\n {6,}| )worse", text), text
        x = box.scroll_x
        await pilot.press("right", "right")
        await pilot.pause()
        assert box.scroll_x > x if width == 60 else box.scroll_x == x


async def test_arrow_keys_that_come_together_scroll_a_window_as_far_as_pressed() -> None:
    """Twenty `down` sent at once (a key held down, a slow SSH link) scrolled the comparison
    seven lines: Textual put each scroll off to the next refresh, from where the text was."""
    from textual import events

    from parsers.hosts import START, merge
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.screens import KeyScroll

    a = read_log(SAMPLES / "p12-c15-gw1.log")
    b = read_log(SAMPLES / "p12-gw2-merged.log")
    merged = merge([a, b], ["before", "after"], START)
    app = make_app(merged.model, LineReader(data=b""), compared=(a, b))
    async with app.run_test(size=(60, 24)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        box = app.screen.query_one("#box", KeyScroll)
        assert box.max_scroll_y > 20 and box.max_scroll_x >= 3
        for key in ["down"] * 20 + ["right"] * 3:
            app.post_message(events.Key(key, None))
        await pilot.pause()
        await pilot.pause()
        assert (box.scroll_y, box.scroll_x) == (20, 3)
        for key in ["pagedown"] * 2:
            app.post_message(events.Key(key, None))
        await pilot.pause()
        assert box.scroll_y == min(20 + 2 * box.scrollable_content_region.height, box.max_scroll_y)


def test_each_gap_section_is_judged_by_the_spread_of_its_own_gaps() -> None:
    """The mid-proof section's noise was made of the boundary gaps and the other way about."""
    a = read_log(SAMPLES / "p12-gw2-merged.log")  # 12 mid-proof gaps, 2 at boundaries
    b = read_log(SAMPLES / "p12-c15-gw1.log")
    figures = compare(a, b)
    for section, mid in (("mid-proof gaps", True), ("boundary gaps", False)):
        na, nb = gap_noise(a, a.gaps.crosses != mid), gap_noise(b, b.gaps.crosses != mid)
        share = next(f for f in figures if f.section == section and f.name == "total % of span")
        assert share.before is not None
        assert na.share.y.sum() == pytest.approx(share.before / 100 * a.all_gpus_span_ms)
        spread = 3.5 * 100 * math.hypot(na.share.se, nb.share.se)
        assert share.noise == pytest.approx(min(100.0, max(1.0, spread)))


def test_the_report_s_tables_fit_80_columns_whole() -> None:
    """On an 80-column terminal the report cut a noise to `±31.4 p…`: its tables were 74 to
    81 cells wide."""
    import io

    from rich.console import Console

    from tui.compare import compare_renderables

    a, b = read_log(SAMPLES / "journal-2gpu.log"), read_log(SAMPLES / "curio-mixed.log")
    console = Console(width=80, file=io.StringIO(), record=True, color_system=None)
    console.print(*compare_renderables(a, b))
    rows = [line for line in console.export_text().splitlines() if line.startswith(" ")]
    tables = [line for line in rows if "%" in line or "/h" in line or " s " in line]
    assert tables and not any("…" in line for line in tables), [x for x in tables if "…" in x]
    assert any(line.rstrip().endswith("±31.4 pts") for line in tables)


def test_a_run_with_no_ended_gpu_interval_is_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty log compared with a run said `nothing moved beyond noise`, as if the two
    were alike: with nothing on one side no figure can move. It says there is nothing to
    judge, and why (JSON `unjudged`); runs that both have intervals say nothing of it."""
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    started = tmp_path / "started.log"  # a prove under way: a GPU, no span yet
    started.write_bytes(
        b"TIMELINE,100,SYNTH_START,porep-1-1,partition=0\n"
        b"TIMELINE,200,GPU_START,porep-1-1,worker=0,partition=0\n"
    )
    tiny = str(SAMPLES / "tiny.log")
    for before, after, said in (
        (empty, tiny, "before has no GPU interval that ended: nothing to judge"),
        (tiny, started, "after has no GPU interval that ended: nothing to judge"),
        (empty, started, "before and after have no GPU interval that ended: nothing to judge"),
    ):
        assert cli.main(["--compare", str(before), str(after), "--report"]) == 0
        out = capsys.readouterr().out
        verdicts = out[out.index("What moved beyond noise") :].splitlines()[1]
        assert verdicts.strip() == said, out
        assert "nothing moved" not in out
        assert cli.main(["--compare", str(before), str(after), "--report", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["unjudged"] == said and doc["verdicts"] == []
    same = read_log(SAMPLES / "p12-c15-gw1.log")
    assert compare_dict(same, same)["unjudged"] is None
    # a log without TIMELINE lines still has s/proof (its tracing lines tell the proofs):
    # judged, and said to be all that is
    traced = str(SAMPLES / "real" / "monolithic-merged.log")
    assert cli.main(["--compare", traced, str(SAMPLES / "p12-c15-gw1.log"), "--report"]) == 0
    out = capsys.readouterr().out
    lines = out[out.index("What moved beyond noise") :].splitlines()[1:3]
    assert lines[0].strip() == (
        "before has no GPU interval that ended: the GPU figures are not judged"
    )
    assert lines[1].strip().startswith("s/proof fell"), lines


def test_a_run_of_fewer_than_three_proofs_is_shown_and_not_judged() -> None:
    """A restarted daemon's first run (one proof) against its second: `lock wait … rose 0.0 %
    → 11.2 %: worse` and a gap share `better`, of one proof's way. A run of fewer than
    PROOFS_JUDGED completed proofs has its figures shown, none judged, and says why."""
    from parsers.compare import PROOFS_JUDGED, unjudged_sentence

    short, long = read_log(SAMPLES / "tiny.log"), read_log(SAMPLES / "curio-mixed.log")
    assert short.summary.proofs_completed == 1 < PROOFS_JUDGED <= long.summary.proofs_completed
    for a, b, side in ((short, long, "before"), (long, short, "after")):
        figures = compare(a, b)
        assert all(f.noise is None and f.factor is None for f in figures)
        assert [f.verdict() for f in figures if f.verdict()] == []
        assert any(f.before != f.after for f in figures)  # shown all the same
        said = unjudged_sentence(a, b, figures)
        assert said == (
            f"{side} has 1 completed proof (a run of fewer than 3 is too short to judge): "
            "nothing is judged"
        )
    assert unjudged_sentence(long, long, compare(long, long)) is None


def test_the_comparison_says_what_its_noise_column_is_and_why_some_are_never_judged() -> None:
    """`p50 784 ms → 3.14 s (+300 %)` with `–` beside `mean … ×3`: nothing said why. A
    line before the tables says what the noise is and which figures are never judged."""
    import io

    from rich.console import Console

    from parsers.compare import compare
    from tui.compare import NOISE_LEGEND, print_compare

    for before, after in (("p12-c15-gw1", "p12-gw2-merged"), ("p9-c6", "p12-c15-gw1")):
        a, b = read_log(SAMPLES / f"{before}.log"), read_log(SAMPLES / f"{after}.log")
        verdicts = [v for f in compare(a, b) if (v := f.verdict()) is not None]
        assert verdicts
        for width in (45, 80):  # every verdict whole, wrapped (`-20 %): better` was lost)
            out = io.StringIO()
            print_compare(a, b, Console(file=out, width=width, color_system=None))
            text = " ".join(out.getvalue().split())
            assert " ".join(NOISE_LEGEND.split()) in text
            assert text.index("never judged") < text.index("p50")
            assert all(" ".join(v.split()) in text for v in verdicts), width
