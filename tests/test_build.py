"""What the build makes of this checkout: one version number, core/Cargo.toml's, shown by the
installed tool; in a source checkout, a compiled core no older than its sources; and a lock file
whose every crate builds on the core's rust-version."""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import parsers
import parsers._core

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"


def cargo_version() -> str:
    """The crate's version: the one number the tool has."""
    version: str = tomllib.loads((CORE / "Cargo.toml").read_text())["package"]["version"]
    return version


def install_describes_these_tests_code() -> bool:
    """Whether the installed cuzk-tui is the code these tests import: an installed wheel's
    files, or an editable install of this checkout (not of another checkout whose venv this
    one borrows, its own code put first by PYTHONPATH)."""
    dist = importlib.metadata.distribution("cuzk-tui")
    init = Path(parsers.__file__).resolve()
    if any(Path(str(dist.locate_file(f))).resolve() == init for f in dist.files or []):
        return True
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    return bool(direct.get("dir_info", {}).get("editable")) and direct.get("url") == ROOT.as_uri()


def test_pyproject_takes_the_version_from_the_crate() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project
    assert "version" in project["dynamic"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", cargo_version())


def test_the_version_option_shows_the_installed_version() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "from tui.cli import main; main(['--version'])"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (out.returncode, out.stdout) == (
        0,
        f"cuzk-tui {importlib.metadata.version('cuzk-tui')}\n",
    )


def test_the_installed_version_is_the_crates() -> None:
    if install_describes_these_tests_code():
        installed = importlib.metadata.version("cuzk-tui")
        assert installed == cargo_version(), (
            f"cuzk-tui is installed as {installed}, core/Cargo.toml says {cargo_version()}: "
            "reinstall it (pip install -e '.[test]'; a wheel: built again)"
        )
    else:
        # a worktree borrowing another checkout's venv: its code, that install's metadata
        assert Path(parsers.__file__).resolve().parent == ROOT / "parsers"


def test_the_compiled_core_is_no_older_than_its_sources() -> None:
    """An edit to core/ that was not built would leave the tests testing the old core."""
    so = Path(parsers._core.__file__).resolve()
    crate = so.parent.parent / "core"
    if not crate.is_dir():
        # an installed wheel: no sources beside it
        installed = {Path(sysconfig.get_paths()[k]).resolve() for k in ("platlib", "purelib")}
        assert installed & set(so.parents)
        return
    sources = [crate / "Cargo.toml", crate / "Cargo.lock", *sorted((crate / "src").rglob("*"))]
    built = so.stat().st_mtime
    newer = [str(p.relative_to(crate.parent)) for p in sources if p.stat().st_mtime > built]
    assert newer == [], f"parsers/{so.name} is older than {', '.join(newer)}: run `make dev`"


def version_key(version: str) -> tuple[int, ...]:
    """`1.85` or `1.85.0` as comparable numbers."""
    numbers = tuple(int(x) for x in version.split("."))
    return numbers + (0,) * (3 - len(numbers))


def test_version_key_orders_rust_versions() -> None:
    assert version_key("1.85") == version_key("1.85.0") < version_key("1.86") < version_key("2.0")


def test_every_locked_crate_builds_on_the_cores_rust_version() -> None:
    """No Rust 1.85 toolchain is at hand to build with, but each crate of core/Cargo.lock says
    which Rust it needs; resolver 3 keeps `cargo update` to those that build on rust-version,
    and this catches a lock file made otherwise. (The core's own code: clippy's
    incompatible_msrv lint, in `make check`.)"""
    cargo = shutil.which("cargo")
    assert cargo is not None, "cargo is needed to read the lock file's crates"
    out = subprocess.run(
        [cargo, "metadata", "--format-version", "1", "--locked", "--offline"],
        cwd=CORE,
        capture_output=True,
        text=True,
        check=True,
    )
    packages = json.loads(out.stdout)["packages"]
    msrv = tomllib.loads((CORE / "Cargo.toml").read_text())["package"]["rust-version"]
    assert any(p["name"] == "pyo3" for p in packages)  # the lock file's crates are all here
    newer = [
        f"{p['name']} {p['version']} needs Rust {p['rust_version']}"
        for p in packages
        if p["rust_version"] is not None and version_key(p["rust_version"]) > version_key(msrv)
    ]
    assert newer == []
