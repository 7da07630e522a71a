"""The public API is the list in docs/api.md; every other module is private by name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "api.md"


def documented() -> dict[str, list[str]]:
    """Module -> the names its section lists, in order."""
    sections = re.split(r"^#{2,3} `([\w.]+)`\s*$", API.read_text(encoding="utf-8"), flags=re.MULTILINE)
    found: dict[str, list[str]] = {}
    for module, body in zip(sections[1::2], sections[2::2], strict=True):
        listing = re.search(r"^Names: (.*?)(?:\n\n|\Z)", body, re.MULTILINE | re.DOTALL)
        assert listing is not None, f"docs/api.md: the section of {module} lists no names"
        found[module] = re.findall(r"`(\w+)`", listing.group(1))
    return found


def hooks() -> list[tuple[str, str]]:
    listing = re.search(r"^Hooks: (.*?)(?:\n\n|\Z)", API.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    assert listing is not None
    return [tuple(hook.split(".")) for hook in re.findall(r"`(\w+\.\w+)`", listing.group(1))]  # type: ignore[misc]


def all_modules() -> list[str]:
    names = []
    for path in (ROOT / "ctxmgr").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(names)


def test_the_document_lists_the_modules_the_api_is_made_of() -> None:
    assert {"ctxmgr", "ctxmgr.state", "ctxmgr.formats", "ctxmgr.providers", "ctxmgr.errors"} <= set(documented())


@pytest.mark.parametrize("module", sorted(documented()))
def test_each_public_module_exports_exactly_its_documented_names(module: str) -> None:
    loaded = importlib.import_module(module)
    assert sorted(loaded.__all__) == sorted(documented()[module])
    for name in loaded.__all__:
        assert getattr(loaded, name) is not None or name == "START", f"{module}.{name} does not resolve"


def test_every_other_module_is_private_by_name() -> None:
    public = set(documented())
    exposed = [
        name
        for name in all_modules()
        if name not in public
        and not any(part.startswith("_") for part in name.split(".")[1:])
        and not (name == "ctxmgr.cli" or name.startswith("ctxmgr.cli."))
    ]
    assert exposed == []


def test_the_command_line_exports_only_its_entry_points() -> None:
    from ctxmgr import cli

    assert cli.__all__ == ["app", "main"]


@pytest.mark.parametrize(("owner", "hook"), hooks())
def test_the_reference_hooks_are_there(owner: str, hook: str) -> None:
    import ctxmgr.state

    cls = getattr(ctxmgr.state, owner)
    if hook == "_provider":  # an attribute the constructor sets, as in the reference
        assert cls("offline")._provider == "offline"
    else:
        assert callable(getattr(cls, hook))
