"""docs/design.md and the exception tree in ctxmgr/errors.py name what the code holds."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
SPANS = sorted(set(re.findall(r"`([^`\n]+)`", DESIGN)))


def _section(title: str) -> str:
    return DESIGN.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


@pytest.mark.parametrize("dotted", [s for s in SPANS if re.fullmatch(r"ctxmgr(\.\w+)+", s) and "__main__" not in s])
def test_every_dotted_name_resolves(dotted: str) -> None:
    assert _resolves(dotted), f"docs/design.md names {dotted}, which does not exist"


@pytest.mark.parametrize("path", [s for s in SPANS if re.fullmatch(r"(ctxmgr|tests|bench)/[\w./<>-]+", s)])
def test_every_path_exists(path: str) -> None:
    # A template such as tests/formats/test_format_<format>.py stands for files that exist.
    pattern = re.sub(r"<\w+>", "*", path)
    assert list(ROOT.glob(pattern.rstrip("/"))), f"docs/design.md names {path}, which does not exist"


def test_the_provider_checklist_names_what_the_code_holds() -> None:
    text = _section("Adding a provider")
    items = re.findall(r"^\d+\. (.*?)(?=^\d+\. |^$)", text, flags=re.S | re.M)
    # A provider is its module, one registry entry and the test server's API.
    assert len(items) == 3
    for item in items:
        files = [ROOT / f for f in re.findall(r"`((?:ctxmgr|tests)/[\w/]+\.py)`", item) if "<" not in f]
        names = [n for n in re.findall(r"`(\w+)`", item) if not n.islower() or "_" in n]
        source = "".join(f.read_text(encoding="utf-8") for f in files)
        for name in names:
            assert re.search(rf"\b{re.escape(name)}\b", source), f"{name} is in none of {[str(f) for f in files]}"


# -- the exception tree ----------------------------------------------------------------------


def _tree() -> dict[str, str | None]:
    """Class -> parent, as the docstring of ctxmgr/errors.py draws them."""
    import ctxmgr.errors

    doc = ctxmgr.errors.__doc__ or ""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        match = re.match(r"[ │├└─]*", line)
        name = re.match(r"[A-Z]\w*Error\b", line[match.end() :]) if match else None
        if match is None or name is None:
            continue
        depth = match.end()  # the column the name starts at
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[name.group()] = stack[-1][1] if stack else None
        stack.append((depth, name.group()))
    return parents


def _classes() -> dict[str, str | None]:
    """Every exception class of the package that derives from CtxmgrError -> its base."""
    bases: dict[str, str] = {}
    for path in (ROOT / "ctxmgr").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.bases and isinstance(node.bases[0], ast.Name):
                bases[node.name] = node.bases[0].id
    found: dict[str, str | None] = {"CtxmgrError": None}
    changed = True
    while changed:
        changed = False
        for name, base in bases.items():
            if base in found and name not in found:
                found[name] = base
                changed = True
    return found


def test_the_exception_tree_in_the_docstring_is_the_class_tree() -> None:
    assert _tree() == _classes()
