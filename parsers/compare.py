"""Two runs side by side: each figure before and after, its difference, a verdict.

Defined in docs/analysis.md#comparing-two-runs---compare-before-after.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from parsers.breakdown import busy_breakdown, segments_whole, unmeasured_phases
from parsers.durations import counted, estimate_pct
from parsers.model import PHASE_NAMES, Breakdown, GapStats, GpuStats, LogModel, Phase
from parsers.noise import GapNoise, GpuNoise, Ratio, combined, gap_noise, gpu_noise

SCHEMA = 1
# a figure moved when the difference passes this many of its standard errors (each run's,
# from its own variation: parsers/noise.py), and the least change that counts:
SIGMAS = 3.5
NOISE_POINTS = 1.0  # a share (% of span or of busy): this many points
PROPORTION_MS = 20.0  # a duration's change is a share of it from this many ms
# s/proof moved when it changed by this share of its value before, both runs having completed
# PROOFS_JUDGED proofs: the simulator's runs of one configuration differ by at most 3 % (16-30
# proofs; 6.5 % of 4), where the time between completions varies far more (proofs complete in
# bunches, as many as run at once)
RATE_SHARE = 0.05
# and no figure is judged where a run completed fewer: one proof's gaps and shares are the
# way that proof went (a 1-proof run's lock wait of 0 % against 11 % was "worse")
PROOFS_JUDGED = 3
DURATION_FACTOR = 3.0  # a gap duration moved when one run's is this many times the other's...
DURATION_GAPS = 10  # ...and both runs have this many gaps of the kind
HOUR_MS = 3_600_000.0
# the phases compared, in this order (their names: parsers/model.py's PHASES)
SPLIT = tuple(
    (PHASE_NAMES[p], p)
    for p in (
        Phase.KERNEL,
        Phase.BARRIER,
        Phase.CLEANUP,
        Phase.LOCK_WAIT,
        Phase.ALLOC,
        Phase.PRE_LOCK,
    )
)


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure of both runs and whether it moved beyond noise."""

    section: str  # "run", "gaps", or the GPU pair, e.g. "GPU0" / "GPU0 → GPU2"
    name: str
    unit: str  # "%" (points), "ms", "s", "/h" (a count per hour), "" (a count)
    before: float | None  # None: the run has no such figure (no proof completed: no rate)
    after: float | None
    # the smallest difference that counts as a change; None: a figure that grows with the
    # run's length (a count, a total), or one judged by `factor`, or shown and never judged
    noise: float | None
    better: str  # "higher", "lower" or "" (neither is better)
    # an estimate's range (in the figure's unit) before and after: the value is then the
    # estimate, written `≈18 % (2–40 %)` (None: the log pins the figure down)
    before_range: tuple[float, float] | None = None
    after_range: tuple[float, float] | None = None
    # a figure judged by ratio: moved when the larger value is this many times the smaller
    # (and PROPORTION_MS apart)
    factor: float | None = None

    def shown(self, after: bool) -> str:
        """The value before (or `after`) as the tables write it: an estimate with its
        range, else with its unit."""
        value, span = (self.after, self.after_range) if after else (self.before, self.before_range)
        if value is not None and span is not None and self.unit == "%":
            return estimate_pct(value / 100, span[0] / 100, span[1] / 100)
        return fmt(value, self.unit)

    @property
    def both(self) -> bool:
        """Both runs have the figure (else it is shown, and neither judged nor its noise
        said)."""
        return self.before is not None and self.after is not None

    @property
    def delta(self) -> float:
        """after - before (0 where a run has no value: nothing to compare)."""
        if self.before is None or self.after is None:
            return 0.0
        return self.after - self.before

    @property
    def delta_pct(self) -> float | None:
        """The difference as a share of the value before (None when it was 0 or none, a
        duration under PROPORTION_MS, or the run after has none)."""
        if not self.before or self.after is None:
            return None
        if self.unit == "ms" and abs(self.before) < PROPORTION_MS:
            return None  # a share of a few ms is no proportion: p50 4 ms → 32.52 s, +812775 %
        return 100 * self.delta / self.before

    @property
    def moved(self) -> bool:
        """Both runs have the figure, it is judged, and it differs beyond noise."""
        if self.before is None or self.after is None:
            return False
        if self.factor is not None:
            low, high = sorted((self.before, self.after))
            return high - low > PROPORTION_MS and high >= self.factor * low
        return self.noise is not None and abs(self.delta) > self.noise

    @property
    def improved(self) -> bool | None:
        """Better, worse, or None (not moved, or neither direction is better)."""
        if not self.moved or not self.better:
            return None
        return (self.delta > 0) == (self.better == "higher")

    def verdict(self) -> str | None:
        """One line for a figure that moved beyond noise."""
        if not self.moved:
            return None
        where = "" if self.section == "run" else f"{self.section}: "
        verb = "rose" if self.delta > 0 else "fell"
        judged = {True: ": better", False: ": worse", None: ""}[self.improved]
        change = fmt_delta(self).replace(" (", ", ").rstrip(")")
        return (
            f"{where}{self.name} {verb} {self.shown(after=False)} → "
            f"{self.shown(after=True)} ({change}){judged}"
        )

    def as_dict(self) -> dict[str, Any]:
        """The JSON entry."""
        pct = self.delta_pct
        return {
            "section": self.section,
            "figure": self.name,
            "unit": self.unit,
            "before": None if self.before is None else round(self.before, 6),
            "after": None if self.after is None else round(self.after, 6),
            "delta": None if self.before is None or self.after is None else round(self.delta, 6),
            "delta_pct": None if pct is None else round(pct, 3),
            "before_range": _rounded(self.before_range),
            "after_range": _rounded(self.after_range),
            "noise": None if self.noise is None or not self.both else round(self.noise, 6),
            "noise_factor": self.factor if self.both else None,
            "moved": self.moved,
            "better": self.improved,
            "verdict": self.verdict(),
        }


def _rounded(span: tuple[float, float] | None) -> list[float] | None:
    return None if span is None else [round(x, 6) for x in span]


def fmt(value: float | None, unit: str) -> str:
    """A value with its unit (`–`: none)."""
    if value is None:
        return "–"
    if unit == "%":
        return f"{value:.1f} %"
    if unit == "ms":
        return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "/h":
        return f"{value:.1f}/h"
    return f"{value:.0f}"


def fmt_delta(f: Figure) -> str:
    """`+5.8 points`, `-312 ms (-21 %)`, `+3 (+12 %)`; `–` where a run has no value."""
    if f.before is None or f.after is None:
        return "–"
    if f.unit == "%":
        return f"{_signed(f.delta, 1)} points"
    sign = "+" if f.delta >= 0 else "-"
    text = sign + fmt(abs(f.delta), f.unit)
    pct = f.delta_pct
    return text if pct is None else f"{text} ({_signed(pct, 0)} %)"


def fmt_noise(f: Figure) -> str:
    """What a difference must pass to count: `±2.4 pts` (points), `±1.25 s`, `×3` (one run's
    value that many times the other's), `–` (shown, not judged)."""
    if not f.both:
        return "–"
    if f.factor is not None:
        return f"×{f.factor:g}"
    if f.noise is None:
        return "–"
    if f.unit == "%":
        return f"±{f.noise:.1f} pts"
    return "±" + fmt(f.noise, f.unit)


def _signed(x: float, places: int) -> str:
    """`+5.8`, `-21`, and `0.0` where it rounds to nothing (not `-0.0`)."""
    shown = round(x, places)
    return f"{0.0:.{places}f}" if shown == 0 else f"{shown:+.{places}f}"


def _points(*ses: float, doubt: float = 0.0) -> float:
    """A share's noise in points (`_beyond`, at least NOISE_POINTS), at most 100: a share
    moves no further."""
    return min(100.0, _beyond(NOISE_POINTS, *ses, doubt=doubt))


def _beyond(floor: float, *ses: float, doubt: float = 0.0) -> float:
    """A figure's noise: `doubt` (what the log leaves open, in the figure's unit) and SIGMAS
    standard errors of the difference of runs whose figures have standard errors `ses`, at
    least `floor`."""
    return max(floor, doubt + SIGMAS * combined(*ses))


def _rate_noise(a: LogModel, b: LogModel) -> float | None:
    """s/proof's noise: RATE_SHARE of the value before (None: a run with no rate, or fewer
    than PROOFS_JUDGED proofs completed)."""
    rate = a.summary.rate
    counts = (a.summary.proofs_completed, b.summary.proofs_completed)
    if rate is None or b.summary.rate is None or min(counts) < PROOFS_JUDGED:
        return None
    return RATE_SHARE * rate


def gpu_pairs(a: LogModel, b: LogModel) -> list[tuple[GpuStats, GpuStats]]:
    """GPUs of both runs paired by CUDA ordinal where both runs have it, the others in order
    (runs on GPUs 2 and 3 against 0-3 pair 2 with 2; on 0 and 1 against 2 and 3, 0 with 2)."""
    ga, gb = {g.gpu: g for g in a.gpus}, {g.gpu: g for g in b.gpus}
    both = sorted(set(ga) & set(gb))
    rest = zip(
        (g for g in a.gpus if g.gpu not in gb), (g for g in b.gpus if g.gpu not in ga), strict=False
    )
    return [*((ga[k], gb[k]) for k in both), *rest]


def unpaired(a: LogModel, b: LogModel) -> tuple[list[int], list[int]]:
    """The GPUs of each run that no GPU of the other is paired with (a run on more GPUs):
    their figures are in the run's gaps, not in a GPU section."""
    pairs = gpu_pairs(a, b)
    paired_a, paired_b = {x.gpu for x, _ in pairs}, {y.gpu for _, y in pairs}
    return (
        [g.gpu for g in a.gpus if g.gpu not in paired_a],
        [g.gpu for g in b.gpus if g.gpu not in paired_b],
    )


def unpaired_sentence(a: LogModel, b: LogModel) -> str | None:
    """`GPU1, GPU2 only in after: no GPU section (their gaps count in the gaps')`, or None."""
    parts = [
        f"{', '.join(f'GPU{g}' for g in gpus)} only in {side}"
        for side, gpus in zip(("before", "after"), unpaired(a, b), strict=True)
        if gpus
    ]
    if not parts:
        return None
    return f"{'; '.join(parts)}: no GPU to compare with (their gaps count in the gap figures)"


def judged(f: Figure) -> bool:
    """Both runs have the figure and it is judged (it has a noise, or a ratio)."""
    return f.both and (f.noise is not None or f.factor is not None)


def unjudged_sentence(a: LogModel, b: LogModel, figures: list[Figure]) -> str | None:
    """What is not judged, and why: where a run has no GPU interval that ended (an empty
    log, one without TIMELINE lines, a prove still under way), `before has no GPU interval
    that ended: nothing to judge`, or `…: the GPU figures are not judged` when a figure is
    judged all the same (s/proof, of proofs its tracing lines tell); where a run completed
    fewer than PROOFS_JUDGED proofs, that nothing is; where no figure both runs have is
    judged, so. None: there are figures judged, and nothing keeps the GPU's from it.
    "Nothing moved" alone would say the runs were alike."""
    sides = [
        side
        for side, m in (("before", a), ("after", b))
        if not any(g.span is not None for g in m.gpus)
    ]
    have = "have" if len(sides) == 2 else "has"
    if sides:
        rest = "the GPU figures are not judged" if any(map(judged, figures)) else "nothing to judge"
        return f"{' and '.join(sides)} {have} no GPU interval that ended: {rest}"
    short = [
        (side, m.summary.proofs_completed)
        for side, m in (("before", a), ("after", b))
        if m.summary.proofs_completed < PROOFS_JUDGED
    ]
    if short:
        said = " and ".join(f"{side} has {counted(n, 'completed proof')}" for side, n in short)
        return (
            f"{said} (a run of fewer than {PROOFS_JUDGED} is too short to judge): nothing is judged"
        )
    if not any(map(judged, figures)):
        return "no figure both runs have is judged: nothing to judge"
    return None


def _per_hour(count: int, span_ms: float) -> float | None:
    return count / (span_ms / HOUR_MS) if span_ms else None


def _rate_se(count: int, span_ms: float, rate: Ratio) -> float:
    """A gap rate's standard error (per hour): the larger of a Poisson count's over the span
    and its stretches' (gaps come in bursts)."""
    return max(math.sqrt(count) / (span_ms / HOUR_MS), rate.se)


def _gap_figures(
    section: str,
    a: GapStats,
    b: GapStats,
    span_a: float,
    span_b: float,
    na: GapNoise,
    nb: GapNoise,
) -> list[Figure]:
    """A section's gap figures: the count and the total as they are (they grow with the
    run's length: never judged) and as rates of the GPUs' span, which are."""
    share_a = 100 * a.total_ms / span_a if span_a else None
    share_b = 100 * b.total_ms / span_b if span_b else None
    out = [
        Figure(section, "count", "", a.count, b.count, None, ""),
        Figure(
            section,
            "count per hour of span",
            "/h",
            _per_hour(a.count, span_a),
            _per_hour(b.count, span_b),
            # no span, no rate: nothing to judge (as a figure a run does not have); at
            # least half a gap per hour of the longer span
            _beyond(
                0.5 * HOUR_MS / max(span_a, span_b),
                _rate_se(a.count, span_a, na.rate),
                _rate_se(b.count, span_b, nb.rate),
            )
            if span_a and span_b
            else None,
            "lower",
        ),
        Figure(section, "total", "ms", a.total_ms, b.total_ms, None, ""),
        Figure(
            section,
            "total % of span",
            "%",
            share_a,
            share_b,
            _points(100 * na.share.se, 100 * nb.share.se),
            "lower",
        ),
    ]
    # a section with no gap has no mean or percentile: no figure, not 0 ms. Two runs of one
    # configuration differ in their gaps' durations by more than either run's own spread
    # shows: judged by ratio, where both runs have gaps enough; the median not at all (gaps
    # come in two sizes, and the median of one run may be of either)
    enough = min(a.count, b.count) >= DURATION_GAPS
    for name, x, y in (
        ("mean", a.mean_ms, b.mean_ms),
        ("p50", a.p50_ms, b.p50_ms),
        ("p90", a.p90_ms, b.p90_ms),
        ("p99", a.p99_ms, b.p99_ms),
        ("max", a.max_ms, b.max_ms),
    ):
        factor = DURATION_FACTOR if enough and name != "p50" else None
        out.append(
            Figure(section, name, "ms", a.of_some(x), b.of_some(y), None, "lower", factor=factor)
        )
    for name, x, y in (
        ("under 50 ms", a.under_50, b.under_50),
        ("50–500 ms", a.from_50_to_500, b.from_50_to_500),
        ("over 500 ms", a.over_500, b.over_500),
    ):
        out.append(Figure(section, name, "", x, y, None, ""))
    return out


def _split(model: LogModel, mid: bool) -> GapStats:
    gaps = model.gaps
    return GapStats.of(gaps.duration[gaps.crosses != mid])


def _lock_share(model: LogModel, g: GpuStats) -> float | None:
    """The lock wait of `g`'s workers, a share of their summed interval time; None where
    they have none, or where their engine prints no lock line (the oldest: the wait is then
    unknown time, `unmeasured_phases`)."""
    workers = [w for w in model.workers if w.gpu == g.gpu]
    total = sum(sum(w.phases_ms.values()) for w in workers)
    if not total or Phase.LOCK_WAIT in unmeasured_phases(g):
        return None
    return sum(w.phases_ms["lock_wait"] for w in workers) / total


def _share(b: Breakdown, g: GpuStats, phase: Phase) -> float | None:
    """`phase`'s share of `g`'s busy time in points; None where its engine does not measure
    it, or nothing was busy."""
    share = b.share_shown(phase)
    return None if phase in unmeasured_phases(g) or share is None else 100 * share


def _estimate_range(g: GpuStats) -> tuple[float, float] | None:
    """The range of `g`'s kernel utilization in points, where the log leaves it an
    estimate (docs/analysis.md#kernel_util_range)."""
    if not g.kernel_is_estimate:
        return None
    lo, hi = g.kernel_util_range
    return 100 * lo, 100 * hi


def _busy_range(g: GpuStats) -> tuple[float, float] | None:
    """The range of `g`'s kernel busy time as a share of its busy time in points, where the
    log leaves it an estimate (the busy split's `≈`)."""
    if not g.kernel_is_estimate or not g.busy_ms:
        return None
    lo, hi = g.kernel_range_ms
    return 100 * lo / g.busy_ms, min(100.0, 100 * hi / g.busy_ms)


def _estimated_from(g: GpuStats, run: Breakdown, own: Breakdown | None) -> frozenset[Phase]:
    """The phases of GPU `g`'s busy split `run` that its kernel estimate changed: what it
    took time from (or gave time to), against its segments' split `own` (`with_kernel`)."""
    if own is None or not g.kernel_is_estimate:
        return frozenset()  # an exact kernel figure moves time too, by what truncation hides
    return frozenset(
        p
        for p in run.phase_ms.keys() | own.phase_ms.keys()
        if p != Phase.KERNEL and abs(run.phase_ms.get(p, 0.0) - own.phase_ms.get(p, 0.0)) > 0.5
    )


def _percent(share: float | None) -> float | None:
    return None if share is None else 100 * share


# the stretches of a GPU with no span: no figure of it varies
_QUIET = GpuNoise(
    timeline=Ratio(np.zeros(0), np.zeros(0)),
    kernel=Ratio(np.zeros(0), np.zeros(0)),
    lock=Ratio(np.zeros(0), np.zeros(0)),
    split={p: Ratio(np.zeros(0), np.zeros(0)) for p in Phase},
)


def compare(a: LogModel, b: LogModel) -> list[Figure]:
    """Every figure of run `a` (before) against run `b` (after)."""
    sa, sb = a.summary, b.summary
    figures = [
        # a count: it grows with the run's length, shown and never judged (s/proof is its rate)
        Figure("run", "proofs completed", "", sa.proofs_completed, sb.proofs_completed, None, ""),
        # no proof completed: no rate (not 0 s, which read as infinitely fast: better)
        Figure("run", "s/proof", "s", sa.rate, sb.rate, _rate_noise(a, b), "lower"),
    ]
    # the time the GPUs' gaps can fall in: their spans, added
    span_a, span_b = a.all_gpus_span_ms, b.all_gpus_span_ms
    figures += _gap_figures("gaps", sa.gaps, sb.gaps, span_a, span_b, gap_noise(a), gap_noise(b))
    for section, mid in (("mid-proof gaps", True), ("boundary gaps", False)):
        # the gaps `_split` takes: mid-proof ones do not cross a proof boundary
        na, nb = gap_noise(a, a.gaps.crosses != mid), gap_noise(b, b.gaps.crosses != mid)
        figures += _gap_figures(section, _split(a, mid), _split(b, mid), span_a, span_b, na, nb)
    split_a, split_b = busy_breakdown(a), busy_breakdown(b)
    own_a, own_b = segments_whole(a), segments_whole(b)  # before the kernel estimates
    noise_a, noise_b = gpu_noise(a), gpu_noise(b)
    for ga, gb in gpu_pairs(a, b):
        section = f"GPU{ga.gpu}" if ga.gpu == gb.gpu else f"GPU{ga.gpu} → GPU{gb.gpu}"
        xa, xb = noise_a.get(ga.gpu, _QUIET), noise_b.get(gb.gpu, _QUIET)
        figures.append(
            Figure(
                section,
                "TIMELINE % of span",
                "%",
                100 * ga.timeline_util if ga.spanned else None,
                100 * gb.timeline_util if gb.spanned else None,
                _points(100 * xa.timeline.se, 100 * xb.timeline.se),
                "",
            )
        )
        # an estimated kernel figure only moved beyond the width of both ranges
        widths = [100 * (hi - lo) for lo, hi in (ga.kernel_util_range, gb.kernel_util_range)]
        figures.append(
            Figure(
                section,
                "kernel % of span",
                "%",
                100 * ga.kernel_util if ga.spanned else None,
                100 * gb.kernel_util if gb.spanned else None,
                _points(100 * xa.kernel.se, 100 * xb.kernel.se, doubt=sum(widths)),
                "higher",
                _estimate_range(ga),
                _estimate_range(gb),
            )
        )
        # a worker's wait for the GPU lock while another runs kernels is kernel in the busy
        # split: its own base, the GPU's workers' interval time (the report's worker table)
        figures.append(
            Figure(
                section,
                "lock wait % of interval time",
                "%",
                _percent(_lock_share(a, ga)),
                _percent(_lock_share(b, gb)),
                _points(100 * xa.lock.se, 100 * xb.lock.se),
                "lower",
            )
        )
        ba, bb = split_a[ga.gpu], split_b[gb.gpu]
        taken = _estimated_from(ga, ba, own_a.get(ga.gpu)) | _estimated_from(
            gb, bb, own_b.get(gb.gpu)
        )
        # the busy time no line explains (unknown) may be any phase's: a share moved only
        # beyond both runs' unknown shares (a log that lost its timing lines is all unknown),
        # and beyond an estimated kernel figure's ranges' widths as a share of busy, for
        # kernel and the phases the estimate took its time from (or gave it to)
        unknown = 100 * (ba.share(Phase.UNKNOWN) + bb.share(Phase.UNKNOWN))
        kernel_widths = sum(
            100 * (hi - lo) * g.span_ms / g.busy_ms if g.busy_ms else 0.0
            for g in (ga, gb)
            for lo, hi in [g.kernel_util_range]
        )
        for name, phase in SPLIT:
            moved = phase == Phase.KERNEL or phase in taken
            doubt = unknown + (kernel_widths if moved else 0.0)
            kernel = phase == Phase.KERNEL
            figures.append(
                Figure(
                    section,
                    f"{name} % of busy",
                    "%",
                    _share(ba, ga, phase),
                    _share(bb, gb, phase),
                    _points(
                        100 * xa.split[phase].se,
                        100 * xb.split[phase].se,
                        doubt=doubt,
                    ),
                    # where busy time went: kernel's share rises as much when the kernels
                    # slow down as when the rest shrinks (s/proof and utilization judge)
                    "",
                    _busy_range(ga) if kernel else None,
                    _busy_range(gb) if kernel else None,
                )
            )
        # how much of the busy time no line explains: what every share above is short of
        figures.append(
            Figure(
                section,
                f"{PHASE_NAMES[Phase.UNKNOWN]} % of busy",
                "%",
                _share(ba, ga, Phase.UNKNOWN),
                _share(bb, gb, Phase.UNKNOWN),
                _points(
                    100 * xa.split[Phase.UNKNOWN].se,
                    100 * xb.split[Phase.UNKNOWN].se,
                    doubt=kernel_widths if Phase.UNKNOWN in taken else 0.0,
                ),
                "",
            )
        )
    if min(sa.proofs_completed, sb.proofs_completed) < PROOFS_JUDGED:
        return [replace(f, noise=None, factor=None) for f in figures]  # shown, not judged
    return figures


def compare_dict(a: LogModel, b: LogModel, figures: list[Figure] | None = None) -> dict[str, Any]:
    """The JSON document of `cuzk-tui --compare A B --json`."""
    figures = compare(a, b) if figures is None else figures
    return {
        "schema": SCHEMA,
        "compare": {"before": a.source, "after": b.source},
        "gpu_pairs": [[x.gpu, y.gpu] for x, y in gpu_pairs(a, b)],
        "unpaired": dict(zip(("before", "after"), unpaired(a, b), strict=True)),
        "figures": [f.as_dict() for f in figures],
        "verdicts": [v for f in figures if (v := f.verdict()) is not None],
        "unjudged": unjudged_sentence(a, b, figures),
    }
