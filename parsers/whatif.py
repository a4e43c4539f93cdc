"""What a configuration change would do to s/proof and GPU utilization, predicted from one log
(`--what-if KNOB=VALUE`, docs/analysis.md#what-if): the log's run replayed unchanged, beside
the log's own figures (the model's own error), and replayed with the change, with a range
from the run's own variability.
"""

from __future__ import annotations

import math
import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, replace
from statistics import median
from typing import Any

from parsers.durations import counted, estimate_mid, estimate_pct
from parsers.errors import OptionError
from parsers.model import LogModel
from parsers.replay import Outcome, replay
from parsers.sanitize import visible
from parsers.timespec import ascii_number
from parsers.workload import Config, NoWorkload, Work, Workload, workload_of


@dataclass(frozen=True, slots=True)
class Knob:
    """A setting an operator can change, and the values it takes."""

    name: str
    field: str  # of Config
    kind: type  # int, float, or bool (a flag: `split-lock`)
    low: float
    high: float
    means: str


KNOBS: dict[str, Knob] = {
    k.name: k
    for k in (
        Knob(
            "gpu-workers",
            "gpu_workers",
            int,
            1,
            16,
            "GPU workers per device (gpus.gpu_workers_per_device)",
        ),
        Knob(
            "synthesis-workers",
            "synthesis_workers",
            int,
            1,
            1024,
            "partitions synthesized at once",
        ),
        Knob("concurrency", "concurrency", int, 1, 1024, "proofs in flight"),
        Knob(
            "synthesis-speed",
            "synthesis_speed",
            float,
            0.1,
            10.0,
            "synthesis this many times as fast",
        ),
        Knob(
            "gpu-speed", "gpu_speed", float, 0.1, 10.0, "the GPU's kernels this many times as fast"
        ),
        Knob(
            "split-lock",
            "split_lock",
            bool,
            0,
            1,
            "allocation and upload under a lock of their own, overlapping the kernels",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Change:
    """One `KNOB=VALUE` of the command line."""

    knob: str
    value: float | bool

    @property
    def text(self) -> str:
        if isinstance(self.value, bool):
            return self.knob
        v = self.value
        # as given to the last digit (`:g` wrote 1.000001 as 1, beside a refusal of `=1`)
        return f"{self.knob}={int(v) if KNOBS[self.knob].kind is int else f'{v:.15g}'}"


def parse_change(text: str) -> Change:
    """`gpu-workers=2`, `synthesis-speed=1.5`, `split-lock`.

    Raises: OptionError: an unknown knob, a value that is not a number or out of range.
    """
    name, eq, raw = text.partition("=")
    name = name.strip()
    knob = KNOBS.get(name)
    if knob is None:
        known = ", ".join(KNOBS)
        raise OptionError(f"--what-if: unknown knob {name!r} (the knobs: {known})")
    if knob.kind is bool:
        if eq and raw.strip().lower() not in ("1", "on", "true", "yes"):
            raise OptionError(
                f"--what-if: {name} only turns it on (say --what-if {name}; =1, on, true or "
                "yes say the same)"
            )
        return Change(name, True)
    if not eq or not raw.strip():
        raise OptionError(f"--what-if: {name} needs a value ({name}=N)")
    try:
        plain = ascii_number(raw)
        value: float = int(plain) if knob.kind is int else float(plain)
    except ValueError:
        what = "a whole number" if knob.kind is int else "a number"
        raise OptionError(f"--what-if: {name}={raw}: not {what}") from None
    if not (knob.low <= value <= knob.high) or value != value:
        lo, hi = (int(knob.low), int(knob.high)) if knob.kind is int else (knob.low, knob.high)
        raise OptionError(f"--what-if: {name}={raw}: out of range ({lo} to {hi})")
    return Change(name, value)


def checked_changes(texts: list[str]) -> tuple[Change, ...]:
    """Every `--what-if`, each knob at most once.

    Raises: OptionError: a bad change, or a knob given twice.
    """
    changes = tuple(parse_change(t) for t in texts)
    names = [c.knob for c in changes]
    for name in names:
        if names.count(name) > 1:
            raise OptionError(f"--what-if: {name} given twice")
    return changes


def changed(config: Config, changes: tuple[Change, ...]) -> Config:
    """`config` with `changes` made."""
    return replace(config, **{KNOBS[c.knob].field: KNOBS[c.knob].kind(c.value) for c in changes})


@dataclass(frozen=True, slots=True)
class GpuFigures:
    gpu: int
    label: str
    timeline_util: float
    kernel_util: float
    timeline_range: tuple[float, float] | None = None
    kernel_range: tuple[float, float] | None = None
    # the log's own kernel figure, where the log leaves it an estimate: the range it allows
    # (docs/analysis.md#kernel_util_range); the baseline's only
    kernel_log_range: tuple[float, float] | None = None
    # the log gives the GPU a span (False: its intervals all ran when it ended, the
    # baseline's only): its shares of span are no figures, `–` and null as in the report
    spanned: bool = True


@dataclass(frozen=True, slots=True)
class Figures:
    s_per_proof: float
    gpus: tuple[GpuFigures, ...]
    s_range: tuple[float, float] | None = None
    # a rate (False: the log completed no proof, the baseline's only): s/proof is `–`, null
    rated: bool = True


@dataclass(frozen=True, slots=True)
class Prediction:
    """What `--what-if` answers for one log."""

    source: str
    changes: tuple[Change, ...]
    baseline: Figures  # the log's own
    configuration: Config | None  # as the log shows it
    replayed: Figures | None  # the unchanged configuration, replayed
    predicted: Figures | None
    limits: str | None
    assumptions: tuple[str, ...]
    cannot: str | None  # why there is no prediction (None: there is one)
    concurrency_floor: bool = False  # the log shows at least `concurrency` proofs in flight


# The bootstrap: how many replays of resampled partitions give the range, and how much
# replay work (partitions replayed) they may take in all on a long log.
REPLAYS = 40
MIN_REPLAYS = 8
REPLAY_BUDGET = 400_000
# The spread of another run about a prediction made from one run: the difference of two
# independent runs varies sqrt(2) times as much as one.
SPREAD = 2**0.5
# The least relative half-width of a prediction's s/proof range, and the least of its
# utilizations' (points): the model's own error, as the simulated pairs show it
# (benchmarks/bench_whatif.py: at most ~2.5 % on s/proof). A prediction that the proofs in
# flight the log cannot show would change by more than this is not given.
MODEL_ERROR = 0.03
MODEL_UTIL_ERROR = 0.03
# Above this share of its span, a GPU's lock (or the synthesis workers) limit the run.
BOUND = 0.9


def _figures(outcome: Outcome, label: Callable[[int], str]) -> Figures:
    return Figures(
        s_per_proof=outcome.s_per_proof,
        gpus=tuple(
            GpuFigures(g.gpu, label(g.gpu), g.timeline_util, g.kernel_util) for g in outcome.gpus
        ),
    )


def _resampled(load: Workload, rng: random.Random) -> tuple[tuple[Work, ...], ...]:
    """The log's proofs, each partition's needs drawn from those of the log's counted
    partitions of the same kind (its run's variability, as another run of it would draw
    them); a partition replayed for its synthesis alone stays as it is."""
    pools: dict[str, list[Work]] = {}
    for kind, job, kept in zip(load.kinds, load.jobs, load.counted, strict=True):
        if kept:
            pools.setdefault(kind, []).extend(job)
    every = [w for pool in pools.values() for w in pool]
    return tuple(
        tuple(rng.choice(pools.get(kind, every)) if w.gpu else w for w in job)
        for kind, job in zip(load.kinds, load.jobs, strict=True)
    )


def _span(values: list[float], point: float, error: float) -> tuple[float, float]:
    """Where another run of the configuration may land: the replays' spread about `point`,
    times sqrt(2) (the log is itself one run, as far from its mean as another run may be
    from it), widened by a relative `error`."""
    lo = point - SPREAD * (point - min([*values, point]))
    hi = point + SPREAD * (max([*values, point]) - point)
    lo, hi = lo * (1 - error), hi * (1 + error)
    return min(lo, point * (1 - MODEL_ERROR)), max(hi, point * (1 + MODEL_ERROR))


def _fit_concurrency(load: Workload) -> Config:
    """The proofs in flight the log shows are a floor when synthesis was always full (a
    proof admitted waited to start): the least count whose replay starts the log's proofs
    when they started, if more do it better."""
    cfg = load.config
    if not load.synthesis_saturated:
        return cfg
    best, best_err = cfg, _start_error(load, cfg)
    for c in range(cfg.concurrency + 1, min(len(load.jobs), 4 * cfg.concurrency) + 1):
        trial = replace(cfg, concurrency=c)
        err = _start_error(load, trial)
        if err < best_err - 1.0:
            best, best_err = trial, err
        elif err > best_err + 1.0:
            break
    return best


def _start_error(load: Workload, cfg: Config) -> float:
    prefix = replace(
        load,
        jobs=load.jobs[:FIT_JOBS],
        kinds=load.kinds[:FIT_JOBS],
        counted=load.counted[:FIT_JOBS],
        job_starts=load.job_starts[:FIT_JOBS],
    )
    out = replay(prefix, cfg)
    return sum(abs(a - b) for a, b in zip(out.job_starts, prefix.job_starts, strict=True))


FIT_JOBS = 60


def predict(model: LogModel, changes: tuple[Change, ...], seed: int = 0) -> Prediction:
    """The prediction of `changes` for the run `model` holds."""
    label = model.gpu_label
    baseline = Figures(
        s_per_proof=model.summary.s_per_proof,
        gpus=tuple(
            GpuFigures(
                g.gpu,
                label(g.gpu),
                g.timeline_util,
                g.kernel_util,
                kernel_log_range=(
                    g.kernel_util_range if g.kernel_is_estimate and g.spanned else None
                ),
                spanned=g.spanned,
            )
            for g in model.gpus
        ),
        rated=model.summary.rate is not None,
    )

    def cannot(
        why: str,
        config: Config | None = None,
        replayed: Figures | None = None,
        floor: bool = False,
    ) -> Prediction:
        return Prediction(
            model.source, changes, baseline, config, replayed, None, None, (), why, floor
        )

    try:
        load = workload_of(model)
    except NoWorkload as exc:
        return cannot(str(exc))
    config = _fit_concurrency(load)
    load = replace(load, config=config)
    target = changed(config, changes)
    if target == config:
        # the replays' middle is not the log's own order: a prediction of no change would
        # show one (5 points of TIMELINE on a run of 6 proofs)
        shown = ", ".join(c.text for c in changes)
        return cannot(
            f"{shown}: the log's run is so already, nothing changes",
            config,
            floor=load.synthesis_saturated,
        )
    if target.concurrency > load.proofs:
        return cannot(
            f"the log holds {load.proofs} proofs that a replay can use: "
            f"{target.concurrency} in flight cannot be replayed from it",
            config,
            floor=load.synthesis_saturated,
        )
    base = replay(load, config)
    replayed = _figures(base, label)
    point = replay(load, target)
    if load.synthesis_saturated and not any(c.knob == "concurrency" for c in changes):
        # synthesis was always full, so the log shows a floor of the proofs in flight: a
        # change that frees synthesis may then hang on how many more there were
        most = replay(load, replace(target, concurrency=len(load.jobs)))
        fast, slow = sorted((most.s_per_proof, point.s_per_proof))
        if slow > fast * (1 + MODEL_ERROR):
            return cannot(
                "synthesis was always full, so the log shows at least "
                f"{counted(config.concurrency, 'proof')} in flight but not how many: with this "
                "change the run would take "
                f"{fast:.2f} to {slow:.2f} s/proof depending on them; add "
                "--what-if concurrency=N",
                config,
                replayed,
                floor=True,
            )
    error = abs(base.s_per_proof / baseline.s_per_proof - 1) if baseline.s_per_proof else 0.0
    util_error = max(
        (
            max(abs(a.timeline_util - b.timeline_util), abs(a.kernel_util - b.kernel_util))
            for a, b in zip(replayed.gpus, baseline.gpus, strict=False)
            if b.spanned
        ),
        default=0.0,
    )
    rng = random.Random(seed)
    count = max(MIN_REPLAYS, min(REPLAYS, REPLAY_BUDGET // max(1, load.partitions)))
    # the log is one run: the prediction is what runs of its partitions' kind give in the
    # middle (the log's own order of partitions is one of them), its range where they land
    draws = [point, *(replay(load, target, _resampled(load, rng)) for _ in range(count))]
    s_mid = median(d.s_per_proof for d in draws)
    s_lo, s_hi = _span([d.s_per_proof for d in draws], s_mid, error)
    gpus = []
    for k, g in enumerate(point.gpus):
        timeline = [d.gpus[k].timeline_util for d in draws]
        kernel = [d.gpus[k].kernel_util for d in draws]
        t_mid, k_mid = median(timeline), median(kernel)
        gpus.append(
            GpuFigures(
                g.gpu,
                label(g.gpu),
                t_mid,
                k_mid,
                _util_span(timeline, t_mid, util_error),
                _util_span(kernel, k_mid, util_error),
            )
        )
    predicted = Figures(s_mid, tuple(gpus), (s_lo, s_hi))
    return Prediction(
        source=model.source,
        changes=changes,
        baseline=baseline,
        configuration=config,
        replayed=replayed,
        predicted=predicted,
        limits=limits(point, target, label),
        assumptions=assumptions(load, target, count),
        cannot=None,
        concurrency_floor=load.synthesis_saturated,
    )


def _util_span(values: list[float], point: float, error: float) -> tuple[float, float]:
    """As `_span`, for a share, widened by `error` points and kept inside [0, 1]."""
    lo = point - SPREAD * (point - min([*values, point])) - error
    hi = point + SPREAD * (max([*values, point]) - point) + error
    lo, hi = min(lo, point - MODEL_UTIL_ERROR), max(hi, point + MODEL_UTIL_ERROR)
    return max(0.0, lo), min(1.0, hi)


def limits(outcome: Outcome, config: Config, label: Callable[[int], str]) -> str:
    """What sets the pace of a replayed run, in a sentence."""
    lock, gpu = max(
        ((g.lock_ms / g.span_ms if g.span_ms > 0 else 0.0, g.gpu) for g in outcome.gpus),
        default=(0.0, 0),
    )
    synth = outcome.synthesis_busy
    name = label(gpu)
    if lock >= BOUND and lock >= synth:
        more = "a faster GPU can" if config.split_lock else "a faster GPU or a split lock can"
        return (
            f"GPU-bound: {name}'s lock is held {lock:.0%} of its span; more synthesis workers "
            f"or proofs in flight cannot help, {more}"
        )
    if synth >= BOUND:
        return (
            f"synthesis-bound: the synthesis workers are busy {synth:.0%} of the run; more GPU "
            "workers or a split lock cannot help, more synthesis workers or faster synthesis can"
        )
    return (
        f"neither bound: the busiest lock ({name}) is held {lock:.0%} and synthesis busy "
        f"{synth:.0%}; the {counted(config.concurrency, 'proof')} in flight and each proof's "
        "own path "
        "set the pace"
    )


def assumptions(load: Workload, target: Config, replays: int) -> tuple[str, ...]:
    """What the prediction takes as given, in sentences."""
    out = [
        "the run is replayed proof by proof, with each partition's synthesis, allocation, "
        "kernels and CPU path as the log measured them; the waits are made again",
    ]
    if load.prep_estimated:
        out.append(
            f"{load.prep_estimated} of {load.partitions} partitions waited for the lock long "
            "enough to hide their CPU preparation: estimated from the measured ones, in "
            "proportion to their kernels"
        )
    if target.synthesis_speed != 1.0:
        out.append(
            "synthesis-speed scales synthesis alone; the CPU's MSMs inside a GPU interval "
            "keep their measured times"
        )
    if target.gpu_speed != 1.0:
        out.append(
            "gpu-speed scales the kernels alone; allocation and the CPU path keep their "
            "measured times"
        )
    if target.split_lock:
        out.append(
            "split-lock: a partition allocates under a lock of its own, then waits for the "
            "GPU's lock for its kernels, as the two-lock design proposes"
        )
    if load.uncounted:
        out.append(
            f"{load.uncounted} proof{'s' if load.uncounted != 1 else ''} failed, not ended "
            "when the log ends, or with a partition the log does not time whole (a line "
            "lost): replayed for what they took of synthesis and the GPUs, not counted"
        )
    if load.dropped_jobs:
        out.append(
            f"{load.dropped_jobs} proof{'s' if load.dropped_jobs != 1 else ''} left out "
            "(begun before the log, or nothing of them a replay can use)"
        )
    out.append(
        f"the range: the least and most of {replays} replays with partitions drawn from the "
        "log's own, spread by sqrt(2) (the log is one run too), widened by the replay's own "
        f"error on the unchanged configuration and at least ±{MODEL_ERROR:.0%} (the model's "
        "error on simulated runs)"
    )
    return tuple(out)


def _gpu_dicts(figures: Figures) -> list[dict[str, Any]]:
    out = []
    for g in figures.gpus:
        d: dict[str, Any] = {
            "gpu": g.gpu,
            "timeline_util": round(g.timeline_util, 6) if g.spanned else None,
            "kernel_util": round(g.kernel_util, 6) if g.spanned else None,
        }
        if g.timeline_range is not None and g.kernel_range is not None:
            d["timeline_util_range"] = [round(x, 6) for x in g.timeline_range]
            d["kernel_util_range"] = [round(x, 6) for x in g.kernel_range]
        if g.kernel_log_range is not None:  # the log's: as its report's kernel_util_range
            d["kernel_util_range"] = [round(x, 6) for x in g.kernel_log_range]
        out.append(d)
    return out


def _figures_dict(figures: Figures | None) -> dict[str, Any] | None:
    if figures is None:
        return None
    d: dict[str, Any] = {"s_per_proof": round(figures.s_per_proof, 6) if figures.rated else None}
    if figures.s_range is not None:
        d["s_per_proof_range"] = [round(x, 6) for x in figures.s_range]
    d["gpus"] = _gpu_dicts(figures)
    return d


def prediction_dict(p: Prediction) -> dict[str, Any]:
    """The `--what-if --json` document (docs/analysis.md#what-if)."""
    cfg = p.configuration
    return {
        "schema": 1,
        "source": p.source,
        "changes": {c.knob: (True if isinstance(c.value, bool) else c.value) for c in p.changes},
        "configuration": None
        if cfg is None
        else {
            "gpus": list(cfg.gpus),
            "gpu_workers": cfg.gpu_workers,
            "synthesis_workers": cfg.synthesis_workers,
            "concurrency": cfg.concurrency,
        },
        "baseline": _figures_dict(p.baseline),
        "replayed": _figures_dict(p.replayed),
        "predicted": _figures_dict(p.predicted),
        "limits": p.limits,
        "assumptions": list(p.assumptions),
        "cannot": p.cannot,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _range_text(lo: float, hi: float, tenths: int) -> str:
    """`13.72–14.57`: a range written to `tenths` decimals, rounded outwards so that what is
    shown still holds it, with the en dash every range the tool writes has."""
    step = 10**tenths
    low, high = math.floor(lo * step + 1e-9) / step, math.ceil(hi * step - 1e-9) / step
    return f"{low:.{tenths}f}–{high:.{tenths}f}"


def _pct_range(r: tuple[float, float] | None) -> str:
    return "" if r is None else f"{_range_text(100 * r[0], 100 * r[1], 1)} %"


def _config_text(cfg: Config, floor: bool) -> str:
    gpus = len(cfg.gpus)
    return (
        f"{gpus} GPU{'s' if gpus != 1 else ''} x {cfg.gpu_workers} GPU worker"
        f"{'s' if cfg.gpu_workers != 1 else ''}, "
        f"{counted(cfg.synthesis_workers, 'synthesis worker')}, "
        f"{'at least ' if floor else ''}{counted(cfg.concurrency, 'proof')} in flight"
    )


def _wrapped(text: str, width: int, indent: str) -> list[str]:
    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False)


def prediction_text(p: Prediction, width: int = 80) -> str:
    """The `--what-if` text: the log, its replay and the prediction, a figure a row (so
    that any number of GPUs fits 80 columns), then what limits it and what it assumes."""
    what = ", ".join(c.text for c in p.changes) or "no change"
    lines = _wrapped(f"what if {what}: {visible(p.source)}", width, "  ")
    if p.configuration is not None:
        shows = f"the log shows: {_config_text(p.configuration, p.concurrency_floor)}"
        lines.extend(_wrapped(shows, width, "  "))
    lines.append("")
    rep, pred = p.replayed, p.predicted
    # the columns there are figures for (nothing replayed where nothing would change)
    head = f"{'':<22}{'log':>10}" + (f"{'replayed':>11}" if rep is not None else "")
    lines.append(head + (f"{'predicted':>11}  range" if pred is not None else ""))
    logged_rate = f"{p.baseline.s_per_proof:.2f}" if p.baseline.rated else "–"
    s = f"{'s/proof':<22}{logged_rate:>10}"
    s += f"{rep.s_per_proof:>11.2f}" if rep is not None else ""
    if pred is not None and pred.s_range is not None:
        s += f"{pred.s_per_proof:>11.2f}  {_range_text(*pred.s_range, 2)}"
    lines.append(s.rstrip())
    for k, g in enumerate(p.baseline.gpus):
        for what_util, key in (("TIMELINE", "timeline"), ("kernel", "kernel")):
            logged = _pct(getattr(g, key + "_util")) if g.spanned else "–"
            if key == "kernel" and g.kernel_log_range is not None:
                logged = estimate_mid(g.kernel_util, *g.kernel_log_range)  # as the note says
            row = f"{g.label + ' ' + what_util:<22}{logged:>10}"
            if rep is not None and k < len(rep.gpus):
                row += f"{_pct(getattr(rep.gpus[k], key + '_util')):>11}"
            if pred is not None and k < len(pred.gpus):
                pg = pred.gpus[k]
                row += f"{_pct(getattr(pg, key + '_util')):>11}"
                row += f"  {_pct_range(getattr(pg, key + '_range'))}"
            lines.append(row.rstrip())
    guessed = [
        f"{g.label} {estimate_pct(g.kernel_util, *g.kernel_log_range)}"
        for g in p.baseline.gpus
        if g.kernel_log_range is not None
    ]
    if guessed:
        said = f"≈ the log leaves the kernel figure an estimate: {', '.join(guessed)}"
        lines.extend(_wrapped(said, width, "  "))
    lines.append("")
    if p.cannot is not None:
        lines.extend(_wrapped(f"no prediction: {p.cannot}", width, ""))
    else:
        assert p.limits is not None
        lines.extend(_wrapped(f"limits: {p.limits}", width, "  "))
        lines.append("assumes:")
        for a in p.assumptions:
            lines.extend(_wrapped(f"  - {a}", width, "    "))
    return "\n".join(lines) + "\n"
