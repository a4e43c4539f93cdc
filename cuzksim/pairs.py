"""Pairs of runs for checking what-if predictions: a host run with configuration A and, with
another seed, the same host with one setting changed (B). A prediction of B is made from A's
log alone and compared with B's truth (the simulator's exact times, not B's log)."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from cuzksim.config import LOADS, SimConfig, load_settings
from cuzksim.engine import EngineSim
from cuzksim.reference import completed, gpu_figures, proofs_completed

KNOB_NAMES = (
    "gpu-workers",
    "synthesis-workers",
    "concurrency",
    "synthesis-speed",
    "gpu-speed",
    "split-lock",
)


@dataclass(frozen=True)
class Pair:
    """Run A, run B, and the `--what-if` that turns A's configuration into B's."""

    a: SimConfig
    b: SimConfig
    change: str
    load: str  # "starved", "balanced" or "gpu-bound"


def base_config(seed: int, load: str | None = None) -> SimConfig:
    """A host of the current engine (lock lines) with 1-4 GPUs, loaded from synthesis-starved
    to GPU-bound, long enough (16-30 proofs) for its run's variability to be seen, proving
    PoRep C2 alone."""
    rng = random.Random(seed)
    load = load or rng.choice(LOADS)
    synth_ms, pw, concurrency = load_settings(rng, load, most_in_flight=12)
    return SimConfig(
        # the run's own seed, apart from the stream that chose its configuration (one
        # stream for both would tie the run's draws to the choices)
        seed=seed * 7 + 3,
        proofs=rng.randint(16, 30),
        concurrency=concurrency,
        partitions=10,
        gpus=rng.choice([1, 1, 2, 2, 3, 4]),
        gw=rng.choice([1, 2, 2, 3]),
        pw=pw,
        synth_ms=synth_ms,
        synth_sd=synth_ms / 12,
        era="p12",
        # the engine's stdout says which GPU each worker is on (without it, and without
        # --workers-per-gpu, a log of several GPUs cannot be replayed)
        stdout=rng.choice(["plain", "ansi"]),
        splice=rng.choice([0.0, 0.02]),
        jitter=rng.random() < 0.5,
        ids=rng.choice(["uuid", "curio"]),
        # one job mix (PoRep C2), as a benchmark runs: a share of whole-proof jobs drawn
        # at random would change B's work, not only its configuration
        mix=0.0,
        gpu_scale=rng.choice([0.5, 1.0, 2.0]),
        capture=rng.choice(["file", "journal", "docker"]),
        spans=rng.random() < 0.7,
        # one circuit per partition: batches drawn at random would change B's work too
        circuits=0.0,
    )


def make_pair(seed: int, knob: str | None = None) -> Pair:
    """A's configuration, one knob changed for B (B runs with another seed)."""
    rng = random.Random(seed * 7919 + 1)
    load = rng.choice(LOADS)
    a = base_config(seed, load)
    knob = knob or rng.choice(KNOB_NAMES)
    b = replace(a, seed=a.seed + 100_003)
    if knob == "gpu-workers":
        gw = rng.choice([n for n in (1, 2, 3, 4) if n != a.gw])
        b, change = replace(b, gw=gw), f"gpu-workers={gw}"
    elif knob == "synthesis-workers":
        pw = max(1, round(a.pw * rng.choice([0.5, 1.5, 2.0])))
        if pw == a.pw:
            pw += 1
        b, change = replace(b, pw=pw), f"synthesis-workers={pw}"
    elif knob == "concurrency":
        c = rng.choice(
            [n for n in (a.concurrency - 1, a.concurrency + 2, 2 * a.concurrency) if n >= 1]
        )
        c = min(c, a.proofs)
        b, change = replace(b, concurrency=c), f"concurrency={c}"
    elif knob == "synthesis-speed":
        x = rng.choice([0.5, 0.75, 1.5, 2.0])
        b = replace(b, synth_ms=a.synth_ms / x, synth_sd=a.synth_sd / x)
        change = f"synthesis-speed={x:g}"
    elif knob == "gpu-speed":
        x = rng.choice([0.5, 1.5, 2.0])
        b, change = replace(b, gpu_scale=a.gpu_scale / x), f"gpu-speed={x:g}"
    elif knob == "split-lock":
        b, change = replace(b, split_lock=True), "split-lock"
    else:
        raise ValueError(f"unknown knob {knob}")
    return Pair(a, b, change, load)


@dataclass(frozen=True)
class Truth:
    """A run's figures from the simulator's exact times."""

    s_per_proof: float
    timeline_util: dict[int, float]
    kernel_util: dict[int, float]


def truth_of(sim: EngineSim) -> Truth:
    """s/proof (first SYNTH_START to last GPU_END, per completed proof, on the stamps as
    printed) and each GPU's utilizations (docs/analysis.md's definitions)."""
    done = completed(sim)
    first = min(p.stamps["SYNTH_START"] for p in sim.partitions if "SYNTH_START" in p.stamps)
    last = max(p.stamps["GPU_END"] for p in done)
    proofs = proofs_completed(sim)
    gpus = sorted({p.gpu for p in done if p.gpu is not None})
    figs = {g: gpu_figures(sim, g) for g in gpus}
    return Truth(
        s_per_proof=(last - first) / 1000 / proofs,
        timeline_util={g: f["timeline_util"] for g, f in figs.items()},
        kernel_util={g: f["kernel_util"] for g, f in figs.items()},
    )
