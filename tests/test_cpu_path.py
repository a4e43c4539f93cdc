"""A gap's CPU path from the core's figures equals the regex reading of the raw lines it
replaced (tests/cpu_reference.py): on the samples, on simulated logs of every era and
capture, several logs at once, compressed logs and the demo; and where the two differ
(text the daemon did not print as a CPU line), the core's is the daemon's."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from conftest import SAMPLES
from cpu_reference import ALL_LINES, reference_cpu_path

from cuzksim.config import DEMO_CONFIG, SimConfig, random_config
from cuzksim.logs import simulate
from parsers._core import Scanner
from parsers.builder import LogBuilder
from parsers.hosts import HostLines, merge
from parsers.load import read_log, read_stream
from parsers.model import LogModel
from parsers.rawlines import LineReader
from parsers.why import CpuPath, cpu_path, gap_why

SWEEP_SEEDS = range(40)
ERAS = ("p12", "p9", "feb")


def assert_same_cpu_paths(
    model: LogModel,
    reader: LineReader,
    reference: LineReader,
    host_runs: dict[int, tuple[int, int]] | None = None,
) -> int:
    """Every gap's CPU path, from the core's figures and from the raw lines, is the same
    (`host_runs`: as for `reference_cpu_path`); returns how many gaps had CPU figures
    nearby."""
    seen = 0
    for gap in model.gaps:
        new = cpu_path(model, gap, reader)
        old = reference_cpu_path(model, gap, reference, host_runs)
        assert new == old, (gap.gpu, gap.start)
        seen += new is not None and bool(new.prep_msm_ms or new.b_g2_msm_ms)
    return seen


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")))
def test_the_samples_cpu_paths_are_those_read_from_their_lines(name: str) -> None:
    path = SAMPLES / name
    model = read_log(path)
    seen = assert_same_cpu_paths(model, LineReader(path=path), LineReader(path=path))
    assert seen or not model.line_facts or not len(model.line_facts.cpu)


@pytest.mark.parametrize("era", ERAS)
def test_simulated_logs_cpu_paths_are_those_read_from_their_lines(era: str, tmp_path: Path) -> None:
    seen = 0
    for seed in SWEEP_SEEDS:
        _, data = simulate(random_config(seed, era))  # type: ignore[arg-type]
        path = tmp_path / f"{era}-{seed}.log"
        path.write_bytes(data)
        model = read_log(path)
        seen += assert_same_cpu_paths(model, LineReader(path=path), LineReader(path=path))
    assert seen > 0


def test_a_log_whose_daemon_restarted_and_cut_lines(tmp_path: Path) -> None:
    cut = SimConfig(seed=5, proofs=4, splice=0.2, splice_at="any", capture="journal")
    _, first = simulate(cut)
    _, second = simulate(SimConfig(seed=6, proofs=3, era="p9", splice=0.1))
    path = tmp_path / "restarted.log"
    path.write_bytes(first + second)
    model = read_log(path)
    assert model.run_lines is not None and len(model.run_lines) == 2
    assert model.counts.spliced > 0
    assert assert_same_cpu_paths(model, LineReader(path=path), LineReader(path=path))
    facts = model.line_facts
    assert facts is not None and set(facts.cpu.run.tolist()) == {0, 1}


def test_several_logs_at_once(tmp_path: Path) -> None:
    from tui.multi import load

    paths = []
    for k, config in enumerate(
        [SimConfig(seed=11, proofs=4), SimConfig(seed=12, proofs=3, gpus=2, capture="docker")]
    ):
        _, data = simulate(config)
        paths.append(tmp_path / f"host{k}.log")
        paths[-1].write_bytes(data)
    # a log whose daemon restarted is a host per run beside other logs
    _, again = simulate(SimConfig(seed=13, proofs=2))
    paths[1].write_bytes(paths[1].read_bytes() + again)
    models: list[LogModel] = []
    readers: list[LineReader] = []
    for p in paths:
        runs, reader = load(str(p), None, apart=True)
        assert reader is not None
        models.extend(runs)
        readers.extend([reader] * len(runs))
    assert len(models) == 3
    merged = merge(models, [f"h{k}" for k in range(len(models))])
    plain = [LineReader(path=p) for p in paths]
    reference = HostLines(merged, [plain[0], plain[1], plain[1]])
    # hosts 1 and 2 are the runs of one log: each gap against its own run's medians
    starts = read_log(paths[1]).run_lines
    assert starts is not None and len(starts) == 2
    host_runs = {1: (starts[0], starts[1]), 2: (starts[1], ALL_LINES[1])}
    seen = assert_same_cpu_paths(merged.model, HostLines(merged, readers), reference, host_runs)
    assert seen > 0
    # each host's own report reads its model's figures (a run's, its run's medians)
    own = [None, {-1: host_runs[1]}, {-1: host_runs[2]}]
    for m, r, lines in zip(models, readers, own, strict=True):
        assert_same_cpu_paths(m, r, LineReader(path=r.path), lines)


def test_a_compressed_log_and_standard_input_have_their_figures(tmp_path: Path) -> None:
    _, data = simulate(SimConfig(seed=21, proofs=4, capture="journal-iso"))
    packed = tmp_path / "run.log.gz"
    packed.write_bytes(gzip.compress(data))
    for model in (read_log(packed), read_stream(io.BytesIO(data), "stdin")):
        # the line numbers are those of the text: the reference reads the text itself
        assert assert_same_cpu_paths(model, LineReader(data=b""), LineReader(data=data))
    # beside another log, a compressed one has no reader of its lines (an empty one stands in:
    # tui/multi.py) but its figures all the same; the regex on the empty reader saw none
    other = SAMPLES / "p9-c6.log"
    merged = merge([read_log(packed), read_log(other)], ["gz", "plain"])
    hosts = HostLines(merged, [LineReader(data=b""), LineReader(path=other)])
    reference = HostLines(merged, [LineReader(data=data), LineReader(path=other)])
    assert assert_same_cpu_paths(merged.model, hosts, reference)


def test_the_demo_held_in_memory() -> None:
    from tui.replay import demo_bytes

    data = demo_bytes()
    builder = LogBuilder(source="demo")
    builder.feed(data)
    model = builder.build(release=True)  # as the report builds it
    assert assert_same_cpu_paths(model, LineReader(data=data), LineReader(data=data))
    assert DEMO_CONFIG.splice > 0


def test_no_file_is_read_for_the_cpu_path(tmp_path: Path) -> None:
    path = tmp_path / "gone.log"
    _, data = simulate(SimConfig(seed=31, proofs=4))
    path.write_bytes(data)
    model = read_log(path)
    path.unlink()  # the raw lines are gone: the figures are the core's
    reader = LineReader(path=path)
    whys = [gap_why(model, gap, reader).cpu for gap in model.gaps]
    assert any(w is not None and w.prep_msm_ms for w in whys)


def _lines(*lines: bytes) -> bytes:
    return b"".join(line + b"\n" for line in lines)


START = b"TIMELINE,1000,GPU_START,j,worker=0,partition=0"
END = b"TIMELINE,2000,GPU_END,j,worker=0,partition=0"
START2 = b"TIMELINE,3000,GPU_START,j,worker=0,partition=1"
END2 = b"TIMELINE,4000,GPU_END,j,worker=0,partition=1"


def _one_gap(data: bytes) -> tuple[CpuPath | None, CpuPath | None]:
    model = build_bytes(data)
    assert len(model.gaps) == 1
    gap = model.gaps[0]
    reader = LineReader(data=data)
    return cpu_path(model, gap, reader), reference_cpu_path(model, gap, LineReader(data=data))


def build_bytes(data: bytes) -> LogModel:
    builder = LogBuilder(source="t")
    builder.feed(data)
    return builder.build()


def test_where_the_regex_saw_what_the_daemon_did_not_print_as_a_cpu_line() -> None:
    cpu = b"CUZK_TIMING: prep_msm_ms=100"
    lines = [
        START,
        cpu,
        # text that is no CPU line: a stdout line quoting one, a TIMELINE detail
        b"2026-03-16T09:12:37.123456Z  INFO cuzk_core: saw prep_msm_ms=999",
        b"TIMELINE,1500,SYNTH_END,k,partition=3,b_g2_msm_ms=999",
        END,
        # a CPU line longer than the core reads (MAX_LINE_BYTES): skipped, never held
        cpu + b" " + b"x" * (1 << 20),
        # a CPU line cut by another line: the core reads it rejoined
        b"CUZK_TIMING: b_g2_msm" + START2,
        b"_ms=300 num_circuits=1",
        END2,
    ]
    new, old = _one_gap(_lines(*lines))
    assert new is not None and old is not None
    assert new.prep_msm_ms == (100,) and new.b_g2_msm_ms == (300,)
    assert old.prep_msm_ms == (100, 999, 100) and old.b_g2_msm_ms == (999,)
    assert new.prep_median == 100 and new.b_g2_median == 300
    # what the daemon printed, as it printed it, both read alike (CRLF, a capture prefix)
    plain = [START, cpu + b"\r", b"Mar 16 09:12:37 h cuzk[1]: CUZK_TIMING: b_g2_msm_ms=7", END]
    new, old = _one_gap(_lines(*plain, START2, END2))
    assert new == old and new is not None and new.b_g2_msm_ms == (7,)


def test_a_hole_of_nuls_before_a_cpu_line() -> None:
    # copytruncate's hole: NULs, then the line written after it, as one physical line
    hole = b"\0" * 4096 + b"CUZK_TIMING: prep_msm_ms=50"
    new, old = _one_gap(_lines(START, hole, END, START2, END2))
    assert new == old and new is not None and new.prep_msm_ms == (50,)


def test_the_core_lets_go_of_the_cpu_figures_it_handed_over() -> None:
    """The builder keeps the CPU path figures it fetched; the core keeps only those read
    since (a long log has millions: they were held twice). Asking again for figures handed
    over is an error, not a silent empty answer."""
    scanner = Scanner(None)
    data = (SAMPLES / "curio-mixed.log").read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    scanner.feed(data[:cut])
    first = scanner.cpu_lines(0)
    assert len(first[0]) > 0
    scanner.feed(data[cut:])
    scanner.finish()
    rest = scanner.cpu_lines(len(first[0]))
    assert len(rest[0]) > 0 and rest[0][0] > first[0][-1]
    assert len(scanner.cpu_lines(len(first[0]) + len(rest[0]))[0]) == 0
    with pytest.raises(ValueError, match="let go"):
        scanner.cpu_lines(0)
    whole = LogBuilder(source="")
    whole.feed(data)
    whole.finish()
    figures = whole.line_facts().cpu
    assert figures.line.tolist() == [*first[0].tolist(), *rest[0].tolist()]


def test_a_log_read_once_and_shown_holds_its_cpu_figures_once() -> None:
    """The figures a snapshot took are let go by the core at once, not at the next snapshot
    (a log that stops growing never asks for one: the core held them beside the model's)."""
    builder = LogBuilder(source="")
    builder.feed((SAMPLES / "curio-mixed.log").read_bytes())
    facts = builder.snapshot().line_facts
    assert facts is not None
    held = len(facts.cpu.line)
    assert held > 0
    with pytest.raises(ValueError, match="let go"):
        builder._core.cpu_lines(held - 1)
    builder.feed(b"\nCUZK_TIMING: prep_msm_ms=7\n")  # the sample ends in a cut line
    builder.finish()
    facts = builder.snapshot().line_facts
    assert facts is not None and facts.cpu.value.tolist()[-1] == 7


def test_a_restarted_daemon_s_gaps_are_against_their_own_run_s_medians(tmp_path: Path) -> None:
    """The run median of a restarted daemon's log was the whole log's: a gap of the first
    run was held against the second run's CPU figures too."""
    first, second = (
        (SAMPLES / "tiny.log").read_bytes(),
        (SAMPLES / "p12-gw2-merged.log").read_bytes(),
    )
    path = tmp_path / "restarted.log"
    path.write_bytes(first + second)
    model = read_log(path)
    assert model.run_lines is not None and len(model.run_lines) == 2
    alone = read_log(SAMPLES / "tiny.log")
    own = cpu_path(alone, alone.gaps[0])
    assert own is not None and own.b_g2_median is not None
    early = next(
        g for g in model.gaps if model.gpu_keys is not None and model.gpu_keys[g.gpu].host == 0
    )
    got = cpu_path(model, early)
    assert got is not None
    assert (got.prep_median, got.b_g2_median) == (own.prep_median, own.b_g2_median)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 1000, 1001, 4097])
def test_the_medians_are_numpys_of_each_kind_and_run(n: int) -> None:
    """The run medians the why compares a gap's figures with: those np.median gives of each
    kind's figures, of one run and of the whole log."""
    import numpy as np

    from parsers.linefacts import B_G2_MSM, PREP_MSM, CpuLines

    rng = np.random.default_rng(n)
    kind = rng.choice(np.array([PREP_MSM, B_G2_MSM], dtype=np.int8), n)
    value = rng.integers(0, 10**9, n)
    run = rng.integers(0, 2, n).astype(np.int32)
    lines = CpuLines()
    lines.extend(np.arange(1, n + 1, dtype=np.int64), kind, value, run, final=True)

    def median(mask: np.ndarray) -> float | None:
        return float(np.median(value[mask])) if mask.any() else None

    for r in (None, 0, 1):
        mine = np.ones(n, dtype=bool) if r is None else run == r
        want = (median(mine & (kind == PREP_MSM)), median(mine & (kind == B_G2_MSM)))
        assert lines.medians(n, r) == want
