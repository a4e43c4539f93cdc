"""parsers/ is headless: importing any of its modules loads neither textual nor rich."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys

import pytest

import parsers

MODULES = sorted(f"parsers.{m.name}" for m in pkgutil.iter_modules(parsers.__path__))


def test_every_module_is_listed() -> None:
    assert {"parsers.builder", "parsers.model", "parsers.analysis", "parsers.report"} <= set(
        MODULES
    )


@pytest.mark.parametrize("module", MODULES)
def test_parsers_module_imports_no_ui(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


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
    neither numpy nor the analysis, nor dataclasses (~20 ms with inspect) or tempfile."""
    code = (
        "import sys, tui.cli\n"
        "heavy = ('numpy', 'parsers.analysis', 'dataclasses', 'tempfile', 'textual', 'rich')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
