"""parsers/ is headless: importing any of its modules loads neither textual nor rich, nor the
simulated daemon (cuzksim/: the parser reads bytes, whatever wrote them)."""

from __future__ import annotations

import ast
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import parsers

MODULES = sorted(f"parsers.{m.name}" for m in pkgutil.iter_modules(parsers.__path__))
# what no parsers module loads: the viewer's libraries and the simulator
NOT_IN_PARSERS = ("textual", "rich", "cuzksim")


def test_every_module_is_listed() -> None:
    assert {"parsers.builder", "parsers.model", "parsers.analysis", "parsers.report"} <= set(
        MODULES
    )


@pytest.mark.parametrize("module", MODULES)
def test_parsers_module_imports_no_ui_and_no_simulator(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {NOT_IN_PARSERS!r}]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def imported_packages(source: str) -> set[str]:
    """The top-level packages a module's source imports, at any depth (inside functions too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            out.add(node.module.split(".")[0])
    return out


def test_imported_packages_sees_an_import_inside_a_function() -> None:
    source = "import os.path\ndef f() -> None:\n    from cuzksim.engine import EngineSim\n"
    assert imported_packages(source) == {"os", "cuzksim"}


def test_no_parsers_source_imports_the_simulator_or_the_ui() -> None:
    """Also an import a function makes when called, which importing the module does not run."""
    sources = sorted(Path(parsers.__path__[0]).glob("*.py"))
    assert len(sources) >= len(MODULES) - 1  # all but the compiled core
    found = {
        f"{p.name}: {name}"
        for p in sources
        for name in imported_packages(p.read_text())
        if name in NOT_IN_PARSERS
    }
    assert found == set()


@pytest.mark.parametrize("preset", [None, "2"])
def test_the_command_keeps_blas_to_one_thread_before_numpy_loads(preset: str | None) -> None:
    """The command asks OpenBLAS for one thread (its spinning threads took CPU from the core's)
    before anything loads numpy, and keeps a user's own setting."""
    code = (
        "import os, sys\n"
        "import tui.cli\n"
        "print('numpy' in sys.modules, os.environ['OPENBLAS_NUM_THREADS'])\n"
        "import numpy\n"
        "print(len(os.listdir('/proc/self/task')))\n"  # OpenBLAS's threads, if any
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    loaded, setting, threads = out.stdout.split()
    assert (loaded, setting) == ("False", preset or "1")
    if preset is None:
        assert threads == "1"


def test_the_command_starts_reading_before_the_heavy_modules_load() -> None:
    """What `import tui.cli` loads is all the report pays before its read-ahead starts:
    neither numpy nor the analysis, nor dataclasses (~20 ms with inspect) or tempfile, nor the
    simulator (only --demo runs it)."""
    code = (
        "import sys, tui.cli\n"
        "heavy = ('numpy', 'parsers.analysis', 'dataclasses', 'tempfile', 'textual', 'rich',\n"
        "         'cuzksim')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("json", [False, True])
def test_the_reports_load_no_numpy_ma(json: bool) -> None:
    """numpy.unique and numpy.percentile import numpy.ma on first use (13-22 ms of a report):
    the reports use parsers.rows.distinct and parsers.model.percentiles instead."""
    log = Path(__file__).parent / "samples" / "p12-c15-gw1.log"
    flags = "'--report', '--json'" if json else "'--report'"
    code = (
        "import io, sys, contextlib, tui.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    rc = tui.cli.main([{str(log)!r}, {flags}])\n"
        "print(rc, len(out.getvalue()) > 100, 'numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "True", "False"]


def test_distinct_and_percentiles_give_numpys_answers_to_the_last_bit() -> None:
    import numpy as np

    from parsers.model import percentiles
    from parsers.rows import distinct

    rng = np.random.default_rng(7)
    for k in range(3000):
        n = int(rng.integers(1, 2000)) if k % 3 else int(rng.integers(1, 12))
        top = int(rng.choice([3, 100, 10**4, 10**12]))
        ints = rng.integers(-top, top, n)
        assert np.array_equal(distinct(ints), np.unique(ints))
        assert distinct(ints.astype(np.int32) if top < 2**31 else ints).dtype == (
            np.int32 if top < 2**31 else np.int64
        )
        values = np.abs(ints).astype(np.float64)
        want = [float(x) for x in np.percentile(values, [50, 90, 99])]
        assert percentiles(values, (50, 90, 99)) == want, (n, top)
    assert len(distinct(np.zeros(0, dtype=np.int64))) == 0
