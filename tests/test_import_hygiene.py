"""parsers/ is headless: importing any of its modules loads neither textual nor rich."""

from __future__ import annotations

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
