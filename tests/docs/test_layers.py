"""The package's imports point down the layer table of ``docs/design.md``, without cycles."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ctxmgr"
DESIGN = ROOT / "docs" / "design.md"


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported_names(module: str, path: Path) -> Iterator[str]:
    """Every module name an import statement anywhere in the file may refer to."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for target in imported_names(name, path):
            # A module's own packages are loaded before it whatever it imports: not an edge.
            if target in known and target != name and not name.startswith(target + "."):
                graph[name].add(target)
    return graph


def layer_table() -> dict[str, int]:
    """Module prefix -> layer number, from the table under '## Layers'."""
    text = DESIGN.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    table: dict[str, int] = {}
    for row in re.finditer(r"^\|\s*(\d+)\s*\|([^|]*)\|", section, re.MULTILINE):
        for name in re.findall(r"`([\w.]+)`", row.group(2)):
            assert name not in table, f"{name} is in two rows of the layer table"
            table[name] = int(row.group(1))
    return table


def layer_of(module: str, table: dict[str, int]) -> int:
    prefixes = [p for p in table if module == p or module.startswith(p + ".")]
    assert prefixes, f"{module} is in no row of the layer table in docs/design.md"
    return table[max(prefixes, key=len)]


def strongly_connected(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_table_names_only_modules_that_exist() -> None:
    known = modules()
    for name in layer_table():
        assert name in known, f"docs/design.md names {name}, which is not a module of the package"


def test_every_module_has_a_layer() -> None:
    table = layer_table()
    for name in modules():
        layer_of(name, table)


def test_no_import_points_up_the_table() -> None:
    table = layer_table()
    upward = [
        f"{source} (layer {layer_of(source, table)}) imports {target} (layer {layer_of(target, table)})"
        for source, targets in import_graph().items()
        for target in sorted(targets)
        if layer_of(target, table) > layer_of(source, table)
    ]
    assert upward == []


def test_no_import_cycles() -> None:
    assert strongly_connected(import_graph()) == []


@pytest.mark.parametrize(
    ("graph", "cycles"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [frozenset({"a", "b"})]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}}, [frozenset({"a", "b", "c"})]),
    ],
)
def test_the_cycle_finder_finds_cycles(graph: dict[str, set[str]], cycles: list[frozenset[str]]) -> None:
    assert strongly_connected(graph) == cycles


def test_relative_and_function_level_imports_are_edges(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from .._io import atomic_write\n    import ctxmgr.cli.app\n", encoding="utf-8")
    names = set(imported_names("ctxmgr.state.mod", source))
    assert {"ctxmgr._io", "ctxmgr._io.atomic_write", "ctxmgr.cli.app"} <= names
