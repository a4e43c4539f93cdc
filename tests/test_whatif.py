"""--what-if: the log's run replayed unchanged and changed, against simulated pairs of runs
(cuzksim/pairs.py: B is A with one setting changed and another seed; B's truth is the
simulator's, never B's log)."""

from __future__ import annotations

import itertools
import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import SAMPLES
from textual.pilot import Pilot
from textual.widgets import Input, Static

from cuzksim.config import SimConfig, random_config
from cuzksim.logs import simulate
from cuzksim.pairs import KNOB_NAMES, make_pair, truth_of
from parsers.errors import OptionError
from parsers.load import model_of_bytes, read_log
from parsers.rawlines import LineReader
from parsers.replay import replay
from parsers.whatif import KNOBS, checked_changes, predict, prediction_dict, prediction_text
from parsers.workload import workload_of
from tui import cli
from tui.app import CuzkApp, make_app
from tui.whatif import PRESETS, WhatIfAskScreen, WhatIfScreen


def _clean(seed: int) -> SimConfig:
    # the engine's stdout tells each worker's GPU (without it: test_workers_whose_gpu_...)
    config = replace(random_config(seed, era="p12"), proofs=10, fail=0, fail_prove=0)
    return replace(
        config, fail_synth=0, stdout="ansi" if config.stdout == "none" else config.stdout
    )


@pytest.mark.parametrize("seed", range(1, 13))
def test_the_replay_of_the_unchanged_run_is_the_log(seed: int) -> None:
    """The engine's model, fed what the log says each partition needed, waits as the log
    waited: the replay's s/proof and utilizations are the log's own."""
    config = _clean(seed)
    _, data = simulate(config)
    model = model_of_bytes(data, "a.log")
    load = workload_of(model)
    out = replay(load, load.config)
    assert out.proofs == model.summary.proofs_completed
    assert out.s_per_proof == pytest.approx(model.summary.s_per_proof, rel=0.005)
    for g, mine in zip(model.gpus, out.gpus, strict=True):
        assert mine.gpu == g.gpu
        assert abs(mine.timeline_util - g.timeline_util) < 0.01
        assert abs(mine.kernel_util - g.kernel_util) < 0.01


def test_predictions_of_simulated_pairs_are_near_and_hold_the_truth() -> None:
    """Every knob, 1-4 GPUs, starved to GPU-bound: B predicted from A's log alone."""
    errors: list[float] = []
    for seed in range(1, 25):
        pair = make_pair(seed, KNOB_NAMES[seed % len(KNOB_NAMES)])
        _, data = simulate(pair.a)
        sim_b, _ = simulate(pair.b)
        truth = truth_of(sim_b)
        p = predict(model_of_bytes(data, "a.log"), checked_changes([pair.change]))
        assert p.predicted is not None and p.predicted.s_range is not None, (seed, p.cannot)
        lo, hi = p.predicted.s_range
        assert lo <= truth.s_per_proof <= hi, (seed, pair.change, lo, hi, truth.s_per_proof)
        errors.append(abs(p.predicted.s_per_proof / truth.s_per_proof - 1))
        for g in p.predicted.gpus:
            assert abs(g.kernel_util - truth.kernel_util[g.gpu]) <= 0.05, (seed, g)
            assert g.timeline_range is not None and g.kernel_range is not None
            assert g.timeline_range[0] <= truth.timeline_util[g.gpu] <= g.timeline_range[1]
            assert g.kernel_range[0] <= truth.kernel_util[g.gpu] <= g.kernel_range[1]
    assert statistics.median(errors) <= 0.05
    assert max(errors) <= 0.12


def test_more_gpu_workers_on_a_gpu_bound_host_change_little_and_say_why() -> None:
    pair = make_pair(48, "gpu-workers")
    _, data = simulate(pair.a)
    p = predict(model_of_bytes(data, "a.log"), checked_changes(["synthesis-workers=60"]))
    assert p.limits is not None and p.limits.startswith("GPU-bound")
    assert p.predicted is not None and p.replayed is not None
    assert p.predicted.s_per_proof == pytest.approx(p.replayed.s_per_proof, rel=0.03)


def test_a_synthesis_bound_host_says_so() -> None:
    config = replace(make_pair(3).a, gpus=2, gw=2, pw=2, concurrency=2, synth_ms=36000.0)
    _, data = simulate(config)
    p = predict(model_of_bytes(data, "a.log"), checked_changes(["gpu-workers=3"]))
    assert p.limits is not None and p.limits.startswith("synthesis-bound")
    assert "more GPU workers" in p.limits and "cannot help" in p.limits


@pytest.mark.parametrize(("era", "words"), [("p9", "no lock lines"), ("feb", "no lock lines")])
def test_older_engines_get_no_number(era: str, words: str) -> None:
    _, data = simulate(replace(make_pair(6).a, era=era))  # type: ignore[arg-type]
    p = predict(model_of_bytes(data, "a.log"), checked_changes(["split-lock"]))
    assert p.predicted is None and p.cannot is not None and words in p.cannot
    doc = prediction_dict(p)
    assert doc["predicted"] is None and doc["cannot"] == p.cannot
    assert doc["baseline"]["s_per_proof"] > 0  # the log's own figures are still given


def test_workers_whose_gpu_is_not_said_get_no_number_until_told() -> None:
    config = replace(make_pair(6).a, stdout="none", gpus=3, gw=2)
    _, data = simulate(config)
    p = predict(model_of_bytes(data, "a.log"), checked_changes(["split-lock"]))
    assert p.cannot is not None and "--workers-per-gpu" in p.cannot
    told = predict(
        model_of_bytes(data, "a.log", workers_per_gpu=2), checked_changes(["split-lock"])
    )
    assert told.predicted is not None and told.configuration is not None
    assert told.configuration.gpus == (0, 1, 2) and told.configuration.gpu_workers == 2


def test_a_log_too_short_and_a_knob_beyond_it_get_no_number() -> None:
    _, short = simulate(replace(make_pair(3).a, proofs=2))
    p = predict(model_of_bytes(short, "a.log"), checked_changes(["gpu-workers=3"]))
    assert p.cannot is not None and "too few" in p.cannot
    _, data = simulate(replace(make_pair(3).a, proofs=5))
    p = predict(model_of_bytes(data, "a.log"), checked_changes(["concurrency=9"]))
    assert p.cannot is not None and "9 in flight" in p.cannot


def test_failed_proofs_are_replayed_for_what_they_took_and_not_counted() -> None:
    """A failed proof took synthesis and GPU time before it failed: left out, the replay
    would run faster than the log did."""
    for fail_synth, within in ((0.0, 0.005), (0.02, 0.03)):
        # a synthesis that failed prints no SYNTH_END: how long it held its worker is not
        # known, and it is replayed for nothing (the replay runs a little fast)
        config = replace(make_pair(5).a, fail=0.05, fail_prove=0.03, fail_synth=fail_synth)
        _, data = simulate(config)
        model = model_of_bytes(data, "a.log")
        assert model.summary.proofs_completed < config.proofs  # some failed
        p = predict(model, checked_changes(["split-lock"]))
        assert p.predicted is not None and p.replayed is not None
        assert any("not counted" in a for a in p.assumptions)
        assert p.replayed.s_per_proof == pytest.approx(model.summary.s_per_proof, rel=within)


def test_the_demo_replays_as_it_ran() -> None:
    from tui.replay import DEMO_NAME, demo_bytes

    model = model_of_bytes(demo_bytes(), DEMO_NAME)
    p = predict(model, checked_changes(["gpu-workers=2"]))
    assert p.replayed is not None and p.predicted is not None
    assert p.replayed.s_per_proof == pytest.approx(model.summary.s_per_proof, rel=0.01)


def test_the_json_document_has_the_keys_the_readme_names() -> None:
    pair = make_pair(2)
    _, data = simulate(pair.a)
    doc = prediction_dict(predict(model_of_bytes(data, "a.log"), checked_changes([pair.change])))
    assert {"baseline", "replayed", "predicted", "changes", "assumptions", "limits"} <= set(doc)
    assert set(doc["baseline"]) == {"s_per_proof", "gpus"}
    assert set(doc["baseline"]["gpus"][0]) == {"gpu", "timeline_util", "kernel_util"}
    pred = doc["predicted"]
    assert {"s_per_proof", "s_per_proof_range", "gpus"} <= set(pred)
    lo, hi = pred["s_per_proof_range"]
    assert lo <= pred["s_per_proof"] <= hi
    assert {"timeline_util_range", "kernel_util_range"} <= set(pred["gpus"][0])
    assert doc["changes"] == {pair.change.split("=")[0]: json.loads(pair.change.split("=")[1])}


def test_the_log_s_estimated_kernel_figure_is_said_to_be_one() -> None:
    """A log whose C++ lines were half lost: the what-if's `log` column said `GPU0 kernel
    18.8 %` as if measured, where the report says `≈19 % (1–40 %)`. It is marked, its range
    said under the table and given in the JSON as the report gives it."""
    from cuzksim.logs import lose_lines
    from tui.report import kernel_figure

    _, data = simulate(SimConfig(seed=2, proofs=8, gpus=2, gw=2, stdout="plain"))
    model = model_of_bytes(lose_lines(data, "cpp", 0.5, seed=1), "lost.log")
    assert all(g.kernel_is_estimate for g in model.gpus)
    p = predict(model, checked_changes(["gpu-workers=3"]))
    text = prediction_text(p, 80)
    for g in model.gpus:
        label = model.gpu_label(g.gpu)
        row = next(line for line in text.splitlines() if line.startswith(f"{label} kernel "))
        # written as the note and the report write it (`≈18.8 %` beside `≈19 % (1–40 %)`)
        figure = kernel_figure(g)
        assert f" {figure.split(' (')[0]}" in row, (row, figure)
        assert f"{label} {figure}" in " ".join(text.split())
    doc = prediction_dict(p)
    for entry, g in zip(doc["baseline"]["gpus"], model.gpus, strict=True):
        assert entry["kernel_util_range"] == [round(x, 6) for x in g.kernel_util_range]
    whole = prediction_dict(
        predict(model_of_bytes(data, "a.log"), checked_changes(["gpu-workers=3"]))
    )
    assert all("kernel_util_range" not in e for e in whole["baseline"]["gpus"])


def test_a_prediction_s_ranges_are_written_as_every_range_and_hold_its_figures() -> None:
    """The ranges read `13.72-14.57` and `71.1-89.0 %`, with a hyphen and rounded to the
    nearest, where every other range the tool writes has an en dash and is rounded outwards
    so that what is shown holds it."""
    import re

    pair = make_pair(2)
    _, data = simulate(pair.a)
    p = predict(model_of_bytes(data, "a.log"), checked_changes([pair.change]))
    assert p.predicted is not None and p.predicted.s_range is not None
    text = prediction_text(p, 80)
    doc = prediction_dict(p)["predicted"]
    shown = re.findall(r"  (\d+\.\d+)–(\d+\.\d+)( %)?$", text, re.MULTILINE)
    assert len(shown) == 1 + 2 * len(doc["gpus"]) and "-" not in "".join(a + b for a, b, _ in shown)
    wanted = [tuple(doc["s_per_proof_range"])]
    for g in doc["gpus"]:
        wanted += [tuple(100 * x for x in g["timeline_util_range"])]
        wanted += [tuple(100 * x for x in g["kernel_util_range"])]
    for (lo, hi, _), (want_lo, want_hi) in zip(shown, wanted, strict=True):
        assert float(lo) <= want_lo + 1e-9 and want_hi - 1e-9 <= float(hi)


def test_the_text_fits_80_columns_whatever_the_gpus() -> None:
    config = replace(make_pair(4).a, gpus=4)
    _, data = simulate(config)
    text = prediction_text(
        predict(model_of_bytes(data, "a.log"), checked_changes(["gpu-speed=2"])), 80
    )
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "GPU3 kernel" in text and "limits: " in text and "assumes:" in text


def test_the_command_prints_the_prediction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "daemon.log"
    log.write_bytes(simulate(make_pair(2).a)[1])
    assert cli.main([str(log), "--what-if", "synthesis-workers=20", "--what-if", "split-lock"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("what if synthesis-workers=20, split-lock: daemon.log")
    assert "predicted" in out and "s/proof" in out
    assert cli.main([str(log), "--what-if", "gpu-speed=1.5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["changes"] == {"gpu-speed": 1.5} and doc["predicted"]["s_per_proof"] > 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--what-if", "gpu-threads=2"], "unknown knob 'gpu-threads'"),
        (["--what-if", "gpu-workers=0"], "out of range (1 to 16)"),
        (["--what-if", "gpu-speed=fast"], "not a number"),
        (["--what-if", "synthesis-workers=2.5"], "not a whole number"),
        (["--what-if", "split-lock=3"], "split-lock only turns it on"),
        (["--what-if", "split-lock=0"], "split-lock only turns it on"),
        (["--what-if", "concurrency"], "needs a value"),
        (["--what-if", "gpu-speed=2", "--what-if", "gpu-speed=3"], "given twice"),
        (["--what-if", "split-lock", "--report"], "not with --report"),
        (["--what-if", "split-lock", "--export-csv", "out"], "not with --export-csv"),
    ],
)
def test_a_bad_change_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    log = tmp_path / "daemon.log"
    log.write_bytes(simulate(make_pair(2).a)[1])
    assert cli.main([str(log), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


def test_a_log_without_timeline_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "other.log"
    log.write_text("hello\nworld\n")
    assert cli.main([str(log), "--what-if", "split-lock"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no TIMELINE lines" in err


def test_an_unknown_knob_is_an_option_error() -> None:
    with pytest.raises(OptionError):
        checked_changes(["gpus=2"])


def test_a_split_lock_lets_the_next_holder_allocate_under_the_kernels() -> None:
    """The simulated two-lock engine: a holder's allocation runs while the previous holder's
    kernels do; with one lock it never does."""
    base = SimConfig(seed=4, proofs=4, gpus=1, gw=3, pw=30, synth_ms=2000.0, synth_sd=150.0)

    def overlapped(config: SimConfig) -> int:
        sim, _ = simulate(config)
        done = sorted(
            (p for p in sim.partitions if p.kernel_spans and p.lock_acquired is not None),
            key=lambda p: p.kernel_spans[0][0],
        )
        return sum(
            b.lock_acquired is not None and b.lock_acquired < a.kernel_spans[-1][1]
            for a, b in itertools.pairwise(done)
        )

    assert overlapped(base) == 0
    assert overlapped(replace(base, split_lock=True)) > 0


# -- the viewer's palette ---------------------------------------------------------------

STEPS = 600  # pauses of 50 ms at most while the replay runs on its thread


async def _shown(app: CuzkApp, pilot: Pilot[None]) -> str:
    for _ in range(STEPS):
        screen = app.screen
        if isinstance(screen, WhatIfScreen) and screen.text is not None:
            return screen.text
        await pilot.pause(0.05)
    raise AssertionError("no prediction shown")


async def test_the_palette_predicts_a_preset_for_the_loaded_log(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    log.write_bytes(simulate(make_pair(2).a)[1])
    app = make_app(read_log(log), LineReader(path=log))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"split-lock")
        await pilot.pause(0.5)
        await pilot.press("enter")
        text = await _shown(app, pilot)
        assert text.startswith("what if split-lock: daemon.log")
        assert "predicted" in text and "limits: " in text
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, WhatIfScreen)


async def test_the_palette_asks_for_any_change_and_refuses_a_bad_one(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    log.write_bytes(simulate(make_pair(2).a)[1])
    app = make_app(read_log(log), LineReader(path=log))
    async with app.run_test(size=(80, 24)) as pilot:
        ask = next(c for c in app.get_system_commands(app.screen) if c.title == "What if…")
        ask.callback()
        await pilot.pause(0.1)
        assert isinstance(app.screen, WhatIfAskScreen)
        # the box names the knobs (it said `knobs: see --help`, which the viewer hides)
        hint = str(app.screen.query_one("#ask-hint", Static).content)
        assert all(name in hint for name in KNOBS) and "--help" not in hint
        assert "--help" not in str(app.screen.query_one("#ask").border_subtitle)
        # the placeholder is an example: enter with nothing typed closed the box, and what
        # was typed next went to the lanes as keys (an `i` opened the interval inspector)
        assert str(app.screen.query_one(Input).placeholder).startswith("e.g. ")
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert isinstance(app.screen, WhatIfAskScreen)
        await pilot.press(*"gpu-wrokers=2", "enter")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, WhatIfScreen)
        assert any("unknown knob 'gpu-wrokers'" in str(n.message) for n in app._notifications)
        ask.callback()
        await pilot.pause(0.1)
        await pilot.press(*"gpu-workers=3 synthesis-speed=1.5", "enter")
        text = await _shown(app, pilot)
        assert text.startswith("what if gpu-workers=3, synthesis-speed=1.5: daemon.log")
        assert all(len(line) <= 80 for line in text.splitlines())


def test_a_log_where_the_daemon_restarted_is_no_machine_to_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs (2 GPUs, then 1) were replayed as one machine of 3 GPUs running both at once,
    its "replayed" figures far from the log's; the command says which runs there are and how
    to give it one, and the last run alone is replayed."""
    first = simulate(SimConfig(seed=8, proofs=6, gpus=2))[1]
    second = simulate(SimConfig(seed=7, proofs=8))[1]
    log = tmp_path / "restart.log"
    log.write_bytes(first + second)
    assert cli.main([str(log), "--what-if", "gpu-workers=1"]) == 2
    err = capsys.readouterr().err.strip()
    start = first.count(b"\n") + 1
    assert err == (
        f"cuzk-tui: error: the daemon restarted in this log (runs begin at lines 1, {start}); "
        "--what-if replays one run: pick one with LOG:N (1 to 2)"
    )
    last = tmp_path / "last.log"
    last.write_bytes(second)
    assert cli.main([str(last), "--what-if", "gpu-workers=1", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    # LOG:N replays that run of the restarted log: the last run's prediction, as the log of it
    assert cli.main([f"{log}:2", "--what-if", "gpu-workers=1", "--json"]) == 0
    picked = json.loads(capsys.readouterr().out)
    assert picked == {**alone, "source": "restart.log run 2"}
    assert cli.main([f"{log}:3", "--what-if", "gpu-workers=1"]) == 2
    assert capsys.readouterr().err == f"cuzk-tui: error: {log}:3: the log holds 2 runs (1 to 2)\n"


@pytest.mark.parametrize("knob", ["gpu-workers=2", "gpu-speed=1", "synthesis-workers=10"])
def test_a_change_to_what_the_log_ran_with_predicts_nothing(knob: str) -> None:
    """The prediction is the middle of replays of resampled runs, not of the log's own order:
    a change to what the run already had showed TIMELINE 5 points up. No prediction, said."""
    model = model_of_bytes(simulate(SimConfig(seed=8, proofs=6, gpus=2))[1], "y.log")
    prediction = predict(model, checked_changes([knob]))
    assert prediction.predicted is None
    assert prediction.cannot == f"{knob}: the log's run is so already, nothing changes"
    # the text has the log's column alone (it had empty `replayed` and `predicted` columns,
    # and `-` for the s/proof replayed)
    text = prediction_text(prediction).splitlines()
    head = next(k for k, line in enumerate(text) if line.strip() == "log")
    assert text[head + 1].split() == ["s/proof", f"{prediction.baseline.s_per_proof:.2f}"]


def test_a_refusal_keeps_the_floor_and_a_value_is_shown_as_given() -> None:
    """A no-op refused said "4 proofs in flight" where the log shows at least 4 (the next
    what-if said "at least"); and `gpu-speed=1.000001` was titled `gpu-speed=1`, beside the
    refusal of `gpu-speed=1`."""
    model = read_log(SAMPLES / "journal-2gpu.log")
    refused = predict(model, checked_changes(["concurrency=4"]))
    assert refused.cannot is not None and refused.concurrency_floor
    assert "at least 4 proofs in flight" in prediction_text(refused, 100)
    for given in ("gpu-speed=1.000001", "gpu-speed=1.5", "synthesis-speed=0.25"):
        assert [c.text for c in checked_changes([given])] == [given]


async def test_the_palette_offers_what_if_only_where_it_can_replay() -> None:
    """Several logs, or a daemon that restarted: the palette offered What if… and its
    presets, then refused once one was chosen. They are not offered there."""
    from parsers.hosts import merge

    def offered(app: CuzkApp) -> list[str]:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        return [t for t in titles if t.startswith("What if")]

    one = read_log(SAMPLES / "tiny.log")
    other = read_log(SAMPLES / "p12-c15-gw1.log")
    several = merge([one, other], ["a", "b"]).model
    data = (SAMPLES / "tiny.log").read_bytes()
    restarted = model_of_bytes(data + data, "twice.log")
    assert restarted.restarted and several.gpu_keys is not None
    for model, shown in ((one, True), (several, False), (restarted, False)):
        app = make_app(model, LineReader(data=b""))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert bool(offered(app)) == shown, model.source
            if shown:
                assert len(offered(app)) == 1 + len(PRESETS)
