"""The house's floors: parsers/ below tui/, no import circle, no private name borrowed.

Read from the source with ast: the imports a module makes when it runs (those under `if
TYPE_CHECKING:` are for the type checker only and left out), at its top or inside its
functions alike.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("parsers", "tui")


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            out[name] = path
    return out


MODULES = _modules()


def _runtime_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import run when the module runs or its functions do."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skipped.update(id(n) for body in node.body for n in ast.walk(body))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, path in MODULES.items():
        for module, names in _runtime_imports(path):
            targets = [module] + [f"{module}.{n}" for n in names]
            graph[name].update(t for t in targets if t in MODULES and t != name)
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A path of imports that comes back to where it began, if there is one."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return [*path[path.index(n) :], n]
            if n not in state and (found := visit(n)) is not None:
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)) is not None:
            return found
    return None


def test_no_module_imports_itself_back() -> None:
    circle = _circle(_graph())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_parsers_never_import_the_viewer() -> None:
    for name, path in MODULES.items():
        if name.startswith("parsers"):
            bad = [m for m, _ in _runtime_imports(path) if m == "tui" or m.startswith("tui.")]
            assert not bad, f"{name} imports {bad}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_is_borrowed(name: str) -> None:
    # the compiled core is a module of its own (`parsers._core`), not a private name
    for module, names in _runtime_imports(MODULES[name]):
        if module.split(".")[0] not in PACKAGES:
            continue
        borrowed = [n for n in names if n.startswith("_") and n != "_core"]
        assert not borrowed, f"{name} imports {borrowed} from {module}"


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    """A circle and a borrowed name are found where there are some."""
    a = tmp_path / "a.py"
    a.write_text("from tui.x import _y\nif TYPE_CHECKING:\n    from tui.z import W\n")
    assert _runtime_imports(a) == [("tui.x", ["_y"])]
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None
