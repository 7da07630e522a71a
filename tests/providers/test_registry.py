"""The provider registry: a new provider is its module plus one entry, and everything that
lists providers (help, environment overrides, redaction, budgets, batch clients) is derived
from the entries."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from ctxmgr import _provider_registry as provider_registry
from ctxmgr._provider_registry import ModelRef, ProviderEntry
from ctxmgr.cli import app
from ctxmgr.providers import PROVIDERS, SummarizerSettings, build_summarizer, detect_provider, get_summarizer

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "support-chat.json"
runner = CliRunner()


class DummySummarizer:
    """A provider of the test's own: answers deterministically, remembers what it was sent."""

    received: ClassVar[list[str]] = []

    def __init__(self, model: str, options: object = None, *, api_style: str = "responses") -> None:
        self.model = model
        self.name = str(ModelRef("dummy", model))

    def input_limit(self) -> tuple[None, str]:
        return None, "the dummy reads any length"

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        DummySummarizer.received.append(text)
        return f"DUMMY SUMMARY of {len(text.splitlines())} lines by {self.model}"


DUMMY = ProviderEntry(
    name="dummy",
    summarizer=f"{__name__}:DummySummarizer",
    prefixes=("dummy",),
    model_starts=("dummy-",),
    key_variables=("DUMMY_API_KEY",),
    key_variable="DUMMY_API_KEY",
)


@pytest.fixture
def dummy(monkeypatch: pytest.MonkeyPatch) -> None:
    # What derives constants from the registry is loaded first, as in a run, where the
    # registry is fixed before anything reads it: the dummy must not stay in them.
    import ctxmgr._redact
    import ctxmgr.config
    import ctxmgr.config._files
    import ctxmgr.providers._budgets  # noqa: F401

    monkeypatch.setattr(provider_registry, "ENTRIES", (*provider_registry.ENTRIES, DUMMY))
    DummySummarizer.received = []


# -- a provider added through the registry ------------------------------------------------------


def test_a_dummy_provider_is_detected_and_built_through_its_entry(dummy: None) -> None:
    assert detect_provider("dummy/x") == ModelRef("dummy", "x")
    assert detect_provider("dummy-large") == ModelRef("dummy", "dummy-large")
    assert detect_provider("x") == ModelRef("openai", "x")  # the fallback is unchanged
    built = get_summarizer("dummy/x")
    assert isinstance(built, DummySummarizer)
    assert built.name == "dummy:x"
    chain = build_summarizer(SummarizerSettings("dummy/x", concurrency=2))
    assert (chain.name, chain.model, chain.settings.concurrency) == ("dummy:x", "dummy/x", 2)


def test_summarize_runs_with_a_dummy_provider_added_through_the_registry(dummy: None, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = runner.invoke(
        app,
        [
            "summarize",
            str(SAMPLE),
            "--model",
            "dummy/x",
            "--max-messages",
            "6",
            "--keep-recent",
            "4",
            "--no-cache",
            "--no-view",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert len(DummySummarizer.received) == 1
    sent = DummySummarizer.received[0]
    lines = len(sent.splitlines())
    written = json.loads(out.read_text(encoding="utf-8"))
    text = json.dumps(written)
    assert f"DUMMY SUMMARY of {lines} lines by x" in text
    original = json.loads(SAMPLE.read_text(encoding="utf-8"))
    # The four newest messages are kept as they were, after the summary.
    assert _messages(written)[-4:] == _messages(original)[-4:]
    assert len(_messages(written)) < len(_messages(original))


def _messages(document: Any) -> list[Any]:
    return list(document["context"])


def test_an_unknown_provider_is_refused_with_the_registry_names(dummy: None) -> None:
    from ctxmgr.errors import UsageError

    with pytest.raises(UsageError, match="choose from: openai, google, offline, dummy"):
        get_summarizer("x", provider="nobody")


# -- everything that lists providers derives from the registry ----------------------------------


def test_the_provider_names_are_the_registrys() -> None:
    assert provider_registry.names() == ("openai", "google", "offline")
    assert provider_registry.names() == PROVIDERS


def test_the_budgets_are_the_entries() -> None:
    from ctxmgr.providers._budgets import FAMILY_INPUT_TOKENS

    assert tuple(b for e in provider_registry.ENTRIES for b in e.budgets) == FAMILY_INPUT_TOKENS
    assert ("gemini-", 600_000) in FAMILY_INPUT_TOKENS


def test_redaction_covers_every_key_and_address_variable() -> None:
    from ctxmgr import _redact

    for entry in provider_registry.ENTRIES:
        assert set(entry.key_variables) <= set(_redact._KEY_VARIABLES), entry.name
        assert set(entry.url_variables) <= set(_redact._URL_VARIABLES), entry.name
    assert set(_redact._URL_VARIABLES) == set(provider_registry.url_variables())


def test_the_environment_overrides_are_the_entries_variables() -> None:
    from ctxmgr.config import PROVIDER_ENV_OVERRIDES

    assert PROVIDER_ENV_OVERRIDES == {
        "base_url": {"openai": ("OPENAI_BASE_URL",), "google": ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL")},
        "api_key_file": {"openai": ("OPENAI_API_KEY",), "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY")},
    }
    for entry in provider_registry.ENTRIES:
        assert PROVIDER_ENV_OVERRIDES["api_key_file"].get(entry.name, ()) == entry.key_variables
        assert PROVIDER_ENV_OVERRIDES["base_url"].get(entry.name, ()) == entry.url_variables


def test_the_help_names_every_provider_from_its_entry() -> None:
    result = runner.invoke(app, ["summarize", "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0
    help_text = " ".join(result.output.split())
    assert f"[{'|'.join(provider_registry.names())}]" in help_text
    assert "Model: gpt-4o-mini, gemini-2.0-flash, openai/NAME, google/NAME, or 'offline'." in help_text
    assert "(instead of OPENAI_API_KEY / GEMINI_API_KEY)" in help_text
    for entry in provider_registry.ENTRIES:
        if entry.example:
            assert entry.example in help_text
        if entry.key_variable:
            assert entry.key_variable in help_text
    batch_help = runner.invoke(app, ["batch", "status", "--help"], env={"COLUMNS": "400"})
    assert "OPENAI_BASE_URL or GOOGLE_GEMINI_BASE_URL" in " ".join(batch_help.output.split())


def test_every_entry_names_classes_that_exist() -> None:
    for entry in provider_registry.ENTRIES:
        summarizer = provider_registry.resolve(entry.summarizer)
        assert isinstance(summarizer, type), entry.name
        if entry.batches is not None:
            batches = provider_registry.resolve(entry.batches)
            assert callable(getattr(batches, "for_summarizer", None)), entry.name
            assert batches.provider == entry.name
    assert [e.name for e in provider_registry.batch_entries()] == ["openai", "google"]
    assert [e.name for e in provider_registry.ENTRIES if e.fallback] == ["openai"]


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module's code (docstrings left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_module_lists_providers_but_the_registry_and_the_providers_own() -> None:
    """A provider's name or variable written in code outside the registry and the modules of
    its entry (its summarizer, its batch client) is a list that can drift."""
    own = {"ctxmgr/_provider_registry.py"}
    for entry in provider_registry.ENTRIES:
        for reference in (entry.summarizer, entry.batches):
            if reference is not None:
                own.add(reference.partition(":")[0].replace(".", "/") + ".py")
    watched = {
        *(v for e in provider_registry.ENTRIES for v in (*e.key_variables, *e.url_variables)),
        *(e.vertex_variable for e in provider_registry.ENTRIES if e.vertex_variable),
        *(e.name for e in provider_registry.ENTRIES if e.network),
    }
    found = []
    for path in sorted((ROOT / "ctxmgr").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative in own:
            continue
        for line, value in _code_strings(path):
            # Words, a hyphenated one whole: "openai-chat" is a format, "openai/NAME" a provider.
            named = [w for w in watched if w in re.findall(r"\w+(?:-\w+)*", value)]
            found += [f"{relative}:{line}: {w}" for w in named]
    assert found == []
