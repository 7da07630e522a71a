"""Sizes a reader can hold: no module of the package over 800 lines, no function of the
command line over 80 (decorators included)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ctxmgr"
MODULE_LINES = 800
CLI_FUNCTION_LINES = 80

# Modules and command-line functions allowed over the limits: none. An entry must still be
# over its limit, so a list that grows again also shrinks again.
LONG_MODULES: set[str] = set()
LONG_CLI_FUNCTIONS: set[str] = set()


def module_lengths() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }


def function_lengths(folder: Path, root: Path = ROOT) -> dict[str, int]:
    """``path:name`` (``path`` from ``root``) of every function and method under ``folder``,
    and its length in lines, its decorators included."""
    found: dict[str, int] = {}
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                assert node.end_lineno is not None
                found[f"{path.relative_to(root).as_posix()}:{node.name}"] = node.end_lineno - first + 1
    return found


def test_no_module_is_over_800_lines() -> None:
    lengths = module_lengths()
    assert {name for name, count in lengths.items() if count > MODULE_LINES} - LONG_MODULES == set()
    assert {name for name in LONG_MODULES if lengths.get(name, 0) <= MODULE_LINES} == set()


def test_no_function_of_the_command_line_is_over_80_lines() -> None:
    lengths = function_lengths(PACKAGE / "cli")
    assert {name: n for name, n in lengths.items() if n > CLI_FUNCTION_LINES and name not in LONG_CLI_FUNCTIONS} == {}
    assert {name for name in LONG_CLI_FUNCTIONS if lengths.get(name, 0) <= CLI_FUNCTION_LINES} == set()


def test_a_function_is_measured_from_its_first_decorator_to_its_last_line(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(
        "@first\n@second\ndef f():\n    return 1\n\n\nclass C:\n    async def g(self):\n        pass\n",
        encoding="utf-8",
    )
    assert function_lengths(tmp_path, tmp_path) == {"mod.py:f": 4, "mod.py:g": 2}
