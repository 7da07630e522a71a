"""The README cannot drift: its two set-up commands and its examples run as written, and
samples/ holds what the README promises. The examples moved to docs/ pages run here too."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ctxmgr import compact, formats
from ctxmgr.state import MessageContextManager, ToolResultBlock

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
SAMPLES = REPO / "samples"
PAGES = {name: (REPO / "docs" / name).read_text(encoding="utf-8") for name in (
    "commands.md", "configuration.md", "formats.md", "summaries.md", "tenxgraph.md",
)}  # fmt: skip
"""The docs pages that hold the README's detail: their examples run as the README's do."""
README_LINE_LIMIT = 200


def section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, flags=re.S | re.M)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def fenced(text: str, *languages: str) -> list[str]:
    pattern = r"^```(" + "|".join(map(re.escape, languages)) + r")\n(.*?)^```"
    return [m.group(2) for m in re.finditer(pattern, text, flags=re.S | re.M)]


def shell_lines(text: str) -> list[str]:
    blocks = fenced(text, "sh", "bash", "console", "shell")
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def quickstart_commands() -> list[str]:
    """The two set-up commands: the Quickstart's, then the one under Contributing."""
    return [*shell_lines(section("Quickstart")), *shell_lines(section("Contributing"))]


def test_the_readme_has_exactly_two_set_up_commands() -> None:
    assert len(shell_lines(section("Quickstart"))) == 1
    assert len(shell_lines(section("Contributing"))) == 1
    commands = quickstart_commands()
    assert all(not c.startswith("#") for c in commands)
    installs = [line for line in shell_lines(README) if line.startswith("pip install")]
    assert installs == commands  # no other shell line of the README installs anything


def test_the_readme_is_a_first_page() -> None:
    """Short, with the detail on the docs pages it links, each of which exists."""
    lines = README.splitlines()
    assert len(lines) <= README_LINE_LIMIT, len(lines)
    assert max(map(len, lines)) <= 300
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)", README))
    assert {f"docs/{name}" for name in PAGES} | {"docs/reliability.md", "docs/performance.md"} <= linked
    for link in linked:
        assert (REPO / link).is_file(), link
    for title in ("Quickstart", "Trim", "Summarize", "Convert", "Agent logs", "In CI", "Library", "Contributing"):
        section(title)
    assert len(section("Library").splitlines()) <= 25  # ten lines of library use, and links


def test_readme_and_docs_name_no_issue_and_link_pages_that_exist() -> None:
    for name, text in [("README.md", README), *PAGES.items()]:
        assert re.search(r"\b[Ii]ssue #?\d", text) is None, name
        here = REPO if name == "README.md" else REPO / "docs"
        for target in re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]+)?\)", text):
            assert (here / target).resolve().is_file(), (name, target)


def test_first_command_installs_and_trims_a_sample_without_network() -> None:
    first = quickstart_commands()[0]
    install, _, rest = first.partition(" && ")
    assert install == "pip install -e ."
    words = shlex.split(rest)
    assert words[:2] == ["ctxmgr", "trim"]
    sample = next(w for w in words[2:] if not w.startswith("-"))
    assert (REPO / sample).is_file()
    assert sample.startswith("samples/")


def test_first_command_runs_as_written() -> None:
    # The pip part is what set up this environment already; running it again needs the
    # network. The rest runs exactly as the README prints it, from the repository root.
    rest = quickstart_commands()[0].partition(" && ")[2]
    proc = subprocess.run(rest, shell=True, cwd=REPO, capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    out = orjson.loads(proc.stdout)
    messages = out["context"] if isinstance(out, dict) else out
    assert sum(1 for m in messages if m["role"] == "user") == 2  # "its last two user turns"
    assert messages[0]["role"] == "system"
    assert b"messages" in proc.stderr  # the diff view, on standard error
    assert b"est. tokens" in proc.stderr


def test_second_command_runs_the_test_suite_and_ci_runs_the_same() -> None:
    second = quickstart_commands()[1]
    install, _, checks = second.partition(" && ")
    assert install == "pip install -e '.[test]'"
    assert checks.endswith("python -m pytest -q")
    assert "ruff check" in checks
    assert "mypy" in checks
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    ci_command = next(line for line in ci.splitlines() if "pytest" in line)
    assert ci_command.endswith(f" && {checks}"), ci_command


def test_library_example_runs_and_prints_what_it_says() -> None:
    assert fenced(section("Library"), "python"), "README's Library section has no python example"
    # Every example of the README and of the pages that hold its detail, not only that one
    # (docs/summaries.md's run in tests/cli/test_cli_summarize.py).
    texts = [README, *(text for name, text in PAGES.items() if name != "summaries.md")]
    blocks = [block for text in texts for block in fenced(text, "python")]
    assert len(blocks) >= 3  # the README's, docs/tenxgraph.md's and docs/commands.md's
    for code in blocks:
        expected = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+#\s*(.+)$", code, flags=re.M)]
        assert expected, "the example's print lines should say what they print in a comment"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False, cwd=REPO)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.decode().splitlines() == expected


# -- samples/ --------------------------------------------------------------------------------


def test_support_chat_sample() -> None:
    conversation = formats.load((SAMPLES / "support-chat.json").read_bytes(), source="support-chat.json")
    assert conversation.format == "native"
    assert isinstance(conversation.container, dict)  # an AgentState
    messages = conversation.state.context
    assert messages[0].role == "system"
    assert sum(1 for m in messages if m.role == "user") >= 3
    call_ids = {c["id"] for m in messages for c in (m.tools_calls or [])}
    result_ids = {b.call_id for m in messages if m.role == "tool" for b in m.content if isinstance(b, ToolResultBlock)}
    assert call_ids
    assert result_ids == call_ids  # every call answered, every result called
    outcome = compact((SAMPLES / "support-chat.json").read_bytes(), MessageContextManager(max_messages=2))
    assert outcome.changed


def test_short_chat_sample_needs_no_trimming() -> None:
    data = (SAMPLES / "short-chat.json").read_bytes()
    for max_messages in (1, 10):
        outcome = compact(data, MessageContextManager(max_messages=max_messages), source="short-chat.json")
        assert not outcome.changed
        assert orjson.loads(outcome.output()) == orjson.loads(data)


def test_jsonl_sample() -> None:
    path = SAMPLES / "booking-chat.jsonl"
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    assert len(lines) > 3
    assert all(isinstance(orjson.loads(line), dict) and "role" in orjson.loads(line) for line in lines)
    conversation = formats.load(path.read_bytes(), source=str(path))
    assert conversation.layout == "jsonl"
    assert len(conversation.state.context) == len(lines)
    assert any(m.role == "tool" for m in conversation.state.context)


@pytest.mark.parametrize("name", ["support-chat.json", "short-chat.json", "booking-chat.jsonl"])
def test_every_sample_round_trips_unchanged(name: str) -> None:
    data = (SAMPLES / name).read_bytes()
    outcome = compact(data, MessageContextManager(max_messages=100), source=name)
    assert not outcome.changed
    assert outcome.output() == data


# -- the project set-up ----------------------------------------------------------------------


def test_project_setup() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["requires-python"] == ">=3.11"
    assert project["project"]["scripts"]["ctxmgr"] == "ctxmgr.cli:main"
    dependencies = " ".join(project["project"]["dependencies"])
    for name in ("typer", "rich", "pydantic", "orjson", "openai", "google-genai"):
        assert name in dependencies
    assert (REPO / "ctxmgr" / "py.typed").is_file()
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["ctxmgr"]
    banned = project["tool"]["ruff"]["lint"]["flake8-tidy-imports"]["banned-module-level-imports"]
    assert {"openai", "google.genai"} <= set(banned)
    assert project["tool"]["mypy"]["strict"] is True


def test_every_command_is_documented() -> None:
    from ctxmgr.cli import app

    names = {
        command.name or (command.callback.__name__ if command.callback else "") for command in app.registered_commands
    }
    assert names >= {"trim", "summarize", "convert", "validate", "stats", "run", "config"}
    for name in names:
        assert f"ctxmgr {name}" in README or f"`{name}`" in README, f"README never mentions ctxmgr {name}"


def _offline_readme_commands() -> list[str]:
    """Shell lines of the README and its docs pages that run ctxmgr on samples/ with no key
    and no network."""
    lines = [
        line.strip()
        for text in (README, *PAGES.values())
        for block in fenced(text, "sh")
        for line in block.splitlines()
    ]
    return [
        line
        for line in lines
        if line.startswith("ctxmgr ") and "samples/" in line and "--model" not in line.replace("--model offline", "")
    ]


@pytest.mark.parametrize("command", _offline_readme_commands())
def test_readme_example_commands_run(command: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmgr", *shlex.split(command)[1:]],
        cwd=REPO,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode in (0, 1), (command, proc.stderr.decode())
    assert b"Traceback" not in proc.stderr


def test_help_starts_without_the_library() -> None:
    """`ctxmgr --help` must not pay for pydantic and the formats (start-up time)."""
    code = (
        "import sys; from ctxmgr.cli import app; "
        "print(sorted(m for m in ('pydantic', 'ctxmgr.formats', 'rich') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=True)
    assert proc.stdout.strip() == b"[]"


def test_the_config_examples_are_what_each_file_may_hold(tmp_path: Path) -> None:
    """The project example is accepted without trust; the user example as a user config,
    and its model would be refused from a project file."""
    project, user = fenced(PAGES["configuration.md"], "toml")
    assert project.startswith("# pyproject.toml")
    assert user.startswith("# ~/.config/ctxmgr/config.toml")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(project, encoding="utf-8")
    (tmp_path / "config.toml").write_text(user, encoding="utf-8")
    (tmp_path / "config.toml").chmod(0o600)

    def config(env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "ctxmgr", "config", "summarize", "--json"],
            cwd=repo, env={**env}, capture_output=True, timeout=60, check=False,
        )

    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith("CTXMGR_")}
    shown = config({**base, "CTXMGR_CONFIG": str(tmp_path / "config.toml")})
    assert shown.returncode == 0, shown.stderr
    settings = orjson.loads(shown.stdout)["commands"]["summarize"]
    assert settings["--model"]["value"] == "gpt-4o-mini"
    assert settings["--token-budget"]["value"] == 6000
    (repo / "pyproject.toml").write_text(project + '\nmodel = "gpt-4o-mini"\n', encoding="utf-8")
    refused = config(base)
    assert refused.returncode == 2
    assert b"summarize] model: a project file may not set" in refused.stderr
