"""ctxmgr in CI and at a terminal, held to the conventions of black, ruff, jq and git.

Run as a user would: CliRunner for most checks, real processes where the process itself
matters (a real git repository, pre-commit, a pseudo-terminal, closed pipes).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import REPO, SAMPLES
from llm_server import LLMServer, Reply
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.cli.console import lazy_console

runner = CliRunner()
CTXMGR = [sys.executable, "-m", "ctxmgr"]


def _fixture(path: Path, sample: str = "support-chat.json") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLES / sample, path)
    return path


# -- each file's nearest configuration ------------------------------------------------


def test_each_file_uses_the_configuration_nearest_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From another folder, each project's fixtures are trimmed as that project says."""
    strict, loose = tmp_path / "strict", tmp_path / "loose"
    _fixture(strict / "fixtures" / "chat.json")
    _fixture(loose / "fixtures" / "chat.json")
    (strict / "pyproject.toml").write_text("[tool.ctxmgr.trim]\nmax-messages = 2\n")
    (loose / "ctxmgr.toml").write_text("[trim]\nmax-messages = 20\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(app, ["trim", "--check", str(strict / "fixtures"), str(loose / "fixtures" / "chat.json")])
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        f"note: 1 input uses {strict / 'pyproject.toml'}",
        f"note: 1 input uses {loose / 'ctxmgr.toml'}",
        f"would change {strict / 'fixtures' / 'chat.json'}",
        "2 files: 1 would change, 1 unchanged",
    ]
    # A flag still wins over every file's configuration.
    result = runner.invoke(app, ["trim", "--check", "-n", "30", str(strict / "fixtures")])
    assert result.exit_code == 0, result.output


def test_a_nearer_configuration_keeps_the_trust_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A subfolder's project file may not choose the model (an upload) any more than the
    current folder's: exit 2 naming it, before anything is read or sent."""
    project = tmp_path / "project"
    chat = _fixture(project / "chat.json")
    (project / "ctxmgr.toml").write_text('[summarize]\nmodel = "gpt-4o-mini"\n')
    monkeypatch.chdir(tmp_path)
    before = chat.read_bytes()
    result = runner.invoke(app, ["summarize", "-i", str(chat)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {project / 'ctxmgr.toml'}: [summarize] model: a project file may not")
    assert chat.read_bytes() == before
    # Trusted (here by the flag), the same file may set it; run-wide settings come from
    # the current folder's configuration, and the nearer file's is named, not applied.
    result = runner.invoke(app, ["--trust-project-config", "summarize", "--check", "--max-messages", "100", str(chat)])
    assert result.exit_code == 0, result.output
    unused = f"note: {project / 'ctxmgr.toml'} [summarize] model is not used: it applies to the whole run"
    assert unused in result.stderr


# -- repository-aware walks -------------------------------------------------------------


def _walked_repository(tmp_path: Path) -> Path:
    """A git repository with two conversations, and what a walk must skip: git-ignored
    build/ and *.log.json, node_modules, a folder to --exclude, and a package.json."""
    repo = tmp_path / "repo"
    _fixture(repo / "fixtures" / "chat.json")
    _fixture(repo / "fixtures" / "short.json", "short-chat.json")
    (repo / "package.json").write_text('{"name": "web", "version": "1.0.0"}')
    # Opened, each of these would be an error: a broken file and a FIFO.
    (repo / "build").mkdir()
    (repo / "build" / "broken.json").write_text("{not json")
    os.mkfifo(repo / "build" / "pipe.json")
    (repo / "node_modules" / "pkg").mkdir(parents=True)
    (repo / "node_modules" / "pkg" / "package.json").write_text("{not json")
    (repo / "fixtures" / "raw").mkdir()
    (repo / "fixtures" / "raw" / "dump.json").write_text("{not json")
    (repo / "cache.log.json").write_text("{not json")
    (repo / ".gitignore").write_text("build/\n*.log.json\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def _walk(tmp_path: Path, *command: str) -> subprocess.CompletedProcess[bytes]:
    """``ctxmgr COMMAND --exclude fixtures/raw --json .`` run in :func:`_walked_repository`."""
    repo = _walked_repository(tmp_path)
    args = [*CTXMGR, *command, "--exclude", "fixtures/raw", "--json", "."]
    return subprocess.run(args, cwd=repo, capture_output=True, timeout=60, check=False)


_WALK_SKIPS = {
    "./build": "git-ignored",
    "./cache.log.json": "git-ignored",
    "./fixtures/raw": "excluded",
    "./node_modules": "excluded by default",
    "./.git": "hidden folder",
    "./package.json": "not a conversation",
}


def test_a_walk_of_a_git_repository_skips_what_git_ignores_and_what_holds_no_conversation(tmp_path: Path) -> None:
    """A real repository: git-ignored build/, node_modules, --exclude, and a package.json."""
    done = _walk(tmp_path, "trim", "--check", "-n", "2")
    assert done.returncode == 1, done.stderr
    report = orjson.loads(done.stdout)
    assert [f["path"] for f in report["files"]] == ["./fixtures/chat.json", "./fixtures/short.json"]
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    assert skipped == _WALK_SKIPS
    assert report["totals"]["skipped"] == 6
    stderr = done.stderr.decode()
    assert "skipped: ./package.json (valid JSON of no conversation format)" in stderr
    assert "skipped: ./build (ignored by git)" in stderr
    assert stderr.rstrip().endswith("2 files: 1 would change, 1 unchanged; 6 skipped")


@pytest.mark.parametrize(
    "command",
    [["validate"], ["stats"], ["summarize", "--model", "offline", "--max-messages", "2", "--dry-run"]],
    ids=["validate", "stats", "dry-run"],
)
def test_commands_that_only_read_list_what_they_skipped_as_trim_does(tmp_path: Path, command: list[str]) -> None:
    """The ``--json`` report of every command names each skipped input in one shape: a
    ``skipped`` list of ``{"path", "reason"}`` (besides the notes on standard error)."""
    done = _walk(tmp_path, *command)
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert {s["path"]: s["reason"] for s in report["skipped"]} == _WALK_SKIPS
    assert all(set(s) == {"path", "reason"} for s in report["skipped"])
    assert "skipped: ./package.json (valid JSON of no conversation format)" in done.stderr.decode()


def test_a_named_file_that_holds_no_conversation_is_still_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "web"}')
    result = runner.invoke(app, ["trim", "--check", str(tmp_path / "package.json")])
    assert result.exit_code == 2
    assert "not a conversation in any known format" in result.stderr


def test_include_chooses_what_a_walk_picks_up_and_reading_commands_skip_non_conversations(tmp_path: Path) -> None:
    _fixture(tmp_path / "chats" / "a.chat", "short-chat.json")
    _fixture(tmp_path / "chats" / "b.json", "short-chat.json")
    (tmp_path / "chats" / "tsconfig.json").write_text('{"compilerOptions": {}}')
    result = runner.invoke(app, ["validate", "--include", "*.chat", str(tmp_path / "chats")])
    assert result.exit_code == 0, result.output
    assert "a.chat: ok" in result.stdout
    assert "b.json" not in result.stdout
    for command in (["validate"], ["stats", "--json"]):
        result = runner.invoke(app, [*command, str(tmp_path / "chats")])
        assert result.exit_code == 0, result.output
        assert f"skipped: {tmp_path / 'chats' / 'tsconfig.json'} (valid JSON of no conversation format)" in (
            result.stderr
        )


# -- a fault that every call would meet stops the calls -------------------------------


def _dataset(path: Path, rows: int) -> Path:
    """A chat dataset whose every row needs a summary (at --max-messages 4)."""
    lines = []
    for row in range(rows):
        messages = [{"role": "system", "content": "Be brief."}]
        for turn in range(4):
            messages += [{"role": "user", "content": f"row {row} q{turn}"}, {"role": "assistant", "content": "ok"}]
        lines.append(orjson.dumps({"messages": messages}) + b"\n")
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("no key", "openai: no API key: set OPENAI_API_KEY"),
        ("refused key", "openai: HTTP 401"),
        ("unknown model", "openai: HTTP 404"),
    ],
)
def test_a_fault_of_every_call_stops_at_the_first(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, fault: str, expected: str
) -> None:
    """One error line, exit 3, the output still written (unchanged), and no call after the first."""
    data = _dataset(tmp_path / "big.jsonl", 40)
    args = ["summarize", str(data), "--model", "gpt-4o-mini", "--max-messages", "4", "--keep-recent", "2"]
    args += ["--no-cache", "--max-retries", "0", "-o", str(tmp_path / "out.jsonl"), "-c", "4"]
    if fault != "no key":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
        args += ["--base-url", llm_server.openai_url, "--api-style", "chat"]
        llm_server.script(*[Reply.error(401 if fault == "refused key" else 404)] * 40)
    result = runner.invoke(app, args)
    assert result.exit_code == 3, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert re.match(rf"error: {re.escape(str(data))}:\d+: ", lines[0])  # the line it struck first
    assert expected in lines[0]
    assert lines[0].endswith(
        "no further calls: every call would fail the same way "
        "(40 conversations left as they were, written unchanged where output was asked for)"
    )
    assert (tmp_path / "out.jsonl").read_bytes() == data.read_bytes()
    # The calls in flight when the first failed (up to -j), then none.
    assert llm_server.request_count <= 4


def test_a_fault_of_one_conversation_keeps_the_others_going(tmp_path: Path, llm_server: LLMServer) -> None:
    data = _dataset(tmp_path / "rows.jsonl", 3)
    llm_server.script(Reply.error(500))
    args = ["summarize", str(data), "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url, "--api-style"]
    args += ["chat", "--max-messages", "4", "--keep-recent", "2", "--no-cache", "--max-retries", "0", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 3
    report = orjson.loads(result.stdout)
    assert "stopped" not in report
    assert llm_server.request_count == 3


# -- warnings: numbered as in the input, one style, a digest ------------------------------


def _orphan_row(row: int) -> bytes:
    messages: list[dict[str, object]] = [{"role": "system", "content": "Be brief."}]
    for turn in range(4):
        messages += [{"role": "user", "content": f"row {row} q{turn}"}, {"role": "assistant", "content": "ok"}]
    messages += [
        {"role": "user", "content": "look it up"},
        {"role": "tool", "tool_call_id": f"ghost{row}", "content": "no call made this"},  # message 10
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "bye"},
    ]
    return orjson.dumps({"messages": messages}) + b"\n"


def test_warnings_number_messages_as_the_input_does_in_validates_style_and_end_with_a_digest(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(_orphan_row(row) for row in range(15)))
    validated = runner.invoke(app, ["validate", str(data)])
    assert validated.stdout.splitlines()[0] == (
        f"{data}:1: message 10: tool result for call 'ghost0' has no earlier matching call"
    )
    result = runner.invoke(app, ["trim", "-n", "2", "-o", str(tmp_path / "out.jsonl"), str(data)])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[:10] == [
        f"warning: {data}:{row + 1}: message 10: tool result for call 'ghost{row}' has no earlier matching call"
        for row in range(10)
    ]
    assert lines[10:] == [
        "warnings: 15 (15 tool result for call … has no earlier matching call), 5 not printed above; "
        "every one is in --json"
    ]
    report = orjson.loads(runner.invoke(app, ["trim", "-n", "2", "--json", str(data)]).stdout)
    assert len(report["files"][0]["warnings"]) == 15


# -- pre-commit ------------------------------------------------------------------------


def test_every_pre_commit_hook_runs_in_a_real_repository_and_names_the_files(tmp_path: Path) -> None:
    """pre-commit runs each hook of .pre-commit-hooks.yaml (entry, files pattern and all)
    on a real repository; the check hook names the file that would change."""
    import yaml  # pre-commit's own dependency

    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    repo = tmp_path / "repo"
    chat = _fixture(repo / "fixtures" / "chat.json")
    _fixture(repo / "fixtures" / "short.json", "short-chat.json")
    (repo / "notes.txt").write_text("not a fixture")
    local = []
    for hook in hooks:
        # The same hook, run with this checkout's ctxmgr instead of one pre-commit installs.
        entry = hook["entry"].replace("ctxmgr", f"{sys.executable} -m ctxmgr", 1)
        args = ["--max-messages", "2"] if hook["id"] != "ctxmgr-validate" else []
        local.append({**hook, "entry": entry, "language": "system", "args": args})
    order = {"ctxmgr-check": 0, "ctxmgr-validate": 1, "ctxmgr-trim": 2}
    local.sort(key=lambda hook: order[hook["id"]])
    # And the documented pre-commit example (docs/commands.md), run first, under names of its own.
    example = yaml.safe_load(_readme_block("# .pre-commit-config.yaml"))["repos"][0]["hooks"]
    for hook in reversed(example):
        entry = hook["entry"].replace("ctxmgr", f"{sys.executable} -m ctxmgr", 1)
        local.insert(0, {**hook, "id": f"readme-{hook['id']}", "name": f"readme {hook['id']}", "entry": entry})
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=repo,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    sections = re.split(r"^(.+?)\.{3,}(?:Passed|Failed)$", done.stdout, flags=re.M)
    results = dict(zip(sections[1::2], sections[2::2], strict=True))
    readme_check, readme_validate, check, _, trim = results.values()
    assert "would change fixtures/chat.json" in readme_check
    assert "- exit code: 0" not in readme_validate
    assert re.search(r"^readme ctxmgr-validate\.+Passed$", done.stdout, flags=re.M)
    assert re.search(r"^ctxmgr trim --check \(fail when a fixture would change\)\.+Failed$", done.stdout, flags=re.M)
    assert "would change fixtures/chat.json" in check
    assert "2 files: 1 would change, 1 unchanged" in check
    assert "files were modified by this hook" in trim
    assert chat.read_bytes() != (SAMPLES / "support-chat.json").read_bytes()


# -- tables at 60, 80 and 200 columns, on a terminal or piped ------------------------------


@pytest.mark.parametrize("width", [60, 80, 200])
def test_stats_and_dry_run_tables_never_cut_a_name_or_a_header(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    names = [_fixture(tmp_path / "a-rather-long-folder-name" / f"conversation-{i}.json") for i in range(2)]
    for args in (["stats"], ["summarize", "--dry-run", "--max-messages", "4"]):
        result = runner.invoke(app, [*args, *map(str, names)])
        assert result.exit_code == 0, result.output
        shown = result.stdout + result.stderr
        assert "…" not in shown
        for name in names:
            assert str(name) in shown  # whole, on one line
        headers = ["conv", "msgs", "s/u/a/t", "trim?", "sum?"] if args == ["stats"] else ["messages summarized"]
        assert all(header in shown for header in headers)
    piped = runner.invoke(app, ["stats", "-"], input=(SAMPLES / "short-chat.json").read_bytes())
    assert "<stdin>" in piped.stdout


# -- help and flags ----------------------------------------------------------------------


def test_help_names_values_and_choices_never_python_types() -> None:
    for command in ("trim", "summarize", "run", "stats", "convert", "validate"):
        result = runner.invoke(app, [command, "-h"])
        assert result.exit_code == 0
        assert "<" not in result.stdout, result.stdout  # no <str>, <list[str]>, <int range>
    summarize = runner.invoke(app, ["summarize", "--help"]).stdout
    assert "--on-error [fail|skip]" in summarize
    assert "--api-style [responses|chat]" in summarize
    assert "--summary-as [field|message|system]" in summarize
    assert "-c, --concurrency N" in summarize
    trim = " ".join(runner.invoke(app, ["trim", "--help"]).stdout.split())
    assert "-j, --jobs N" in trim
    # The two --max-messages count different things, and each help says so.
    assert "USER TURNS to keep" in trim
    assert "summarize's --max-messages counts messages of every role" in trim
    assert "trim's --max-messages counts user turns" in " ".join(summarize.split())
    root = runner.invoke(app, ["-h"]).stdout
    assert "--install-completion" in root
    assert "--show-completion" in root


def test_convert_without_to_is_an_error() -> None:
    result = runner.invoke(app, ["convert", str(SAMPLES / "short-chat.json")])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: convert needs --to FORMAT: native, openai-chat, openai-responses, anthropic, gemini, "
        "langchain or codex\n"
    )


def test_run_with_a_manager_that_is_not_there_is_a_usage_error() -> None:
    result = runner.invoke(
        app, ["run", str(SAMPLES / "short-chat.json"), "--manager", f"{SAMPLES / 'managers' / 'keep_last.py'}:Missing"]
    )
    assert result.exit_code == 2
    assert "has no attribute 'Missing'" in result.stderr


def test_a_closed_pipe_ends_the_run_quietly_with_status_141(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(orjson.dumps([{"role": "user", "content": "x" * 200}] * 3000))  # beyond a pipe's buffer
    process = subprocess.Popen(
        [*CTXMGR, "trim", "-n", "5000", str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO
    )
    assert process.stdout is not None
    assert process.stdout.read(10)
    process.stdout.close()  # `| head -c 10`
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 141
    assert stderr == b""


# -- --json with -o, summarize --check, models of other providers -------------------------


def test_json_with_an_output_file_writes_it_and_reports_on_standard_output(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["trim", "-n", "1", "--json", "-o", str(out), str(SAMPLES / "support-chat.json")])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["files"][0]["destination"] == str(out)
    assert report["files"][0]["changed"]
    written = orjson.loads(out.read_bytes())
    assert sum(1 for m in written["context"] if m["role"] == "user") == 1


def test_summarize_check_needs_no_key_and_calls_nothing(tmp_path: Path) -> None:
    chat = _fixture(tmp_path / "chat.json")
    args = ["summarize", "--model", "gpt-4o-mini", "--check", "--max-messages", "4"]
    result = runner.invoke(app, [*args, str(chat)])
    assert result.exit_code == 1, result.output
    assert result.stderr == f"would change {chat}\n"
    result = runner.invoke(app, [*args[:-1], "100", str(chat)])
    assert result.exit_code == 0, result.output


def test_a_model_of_a_provider_ctxmgr_does_not_call_says_what_to_do(tmp_path: Path) -> None:
    chat = _fixture(tmp_path / "chat.json")
    result = runner.invoke(app, ["summarize", "--model", "claude-3-5-sonnet-latest", str(chat)])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: 'claude-3-5-sonnet-latest' is an Anthropic model, which ctxmgr cannot call directly: pass "
        "--base-url of an OpenAI-compatible server or gateway that serves it (LiteLLM, OpenRouter...), or use an "
        "OpenAI or Gemini model, or --model offline\n"
    )
    assert "OPENAI_API_KEY" not in result.stderr


def test_config_prints_tables_literally_and_values_as_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shown = runner.invoke(app, ["config", "trim"]).stdout
    assert "project config: none (no [tool.ctxmgr] in a pyproject.toml, no ctxmgr.toml)" in shown
    assert '  --on-error = "fail"  (default)' in shown
    assert "  --in-place = false  (default)" in shown
    assert "  --output = (not set)  (default)" in shown
    assert "None" not in shown
    assert "False" not in shown


# -- packaging ---------------------------------------------------------------------------


def test_the_package_metadata_and_the_sdist_carry_what_the_readme_needs() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    assert project["authors"]
    assert "Programming Language :: Python :: 3.11" in project["classifiers"]
    # The README, the package page, runs commands on samples/ and links docs/.
    manifest = (REPO / "MANIFEST.in").read_text().splitlines()
    assert {"graft samples", "graft docs", "include LICENSE"} <= set(manifest)
    assert "samples/" in (REPO / "README.md").read_text()


# -- the diff view -----------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 200])
def test_the_diff_view_shows_call_arguments_and_uses_the_width(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    # A console of this width, as a new process gets (the module's own measured its width once).
    monkeypatch.setattr(
        sys.modules["ctxmgr.cli.app"], "err_console", lazy_console(stderr=True, highlight=False, emoji=False)
    )
    result = runner.invoke(app, ["trim", "-n", "2", "--view", str(SAMPLES / "support-chat.json")])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert all(len(line) <= width for line in lines)
    calls = [line for line in lines if "→ get_reservation_details(" in line]
    assert calls
    if width == 200:
        assert any('→ get_reservation_details(reservation_id="4OG6T3")' in line for line in calls)
        user = next(line for line in lines if "noah_muller_9847. As for the reservation ID" in line)
        assert "remember the exact details right now." in user  # far past 72 characters


# -- a unified diff for CI -----------------------------------------------------------------


def test_check_diff_prints_a_unified_diff_of_pretty_printed_records_and_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(_orphan_row(row) for row in range(2)))
    before = data.read_bytes()
    result = runner.invoke(app, ["trim", "-n", "2", "--check", "--diff", str(data)])
    assert result.exit_code == 1
    diff = result.stdout.splitlines()
    assert diff[:2] == [f"--- {data}", f"+++ {data}"]
    removed = [line for line in diff if line.startswith("-") and not line.startswith("---")]
    assert '-      "content": "row 0 q0"' in removed  # a line of the record, not the whole record
    assert max(map(len, diff)) < 100
    assert data.read_bytes() == before
    assert f"would change {data}" in result.stderr
    refused = runner.invoke(app, ["trim", "--diff", "-i", str(data)])
    assert refused.exit_code == 2


def _readme_block(first_line: str) -> str:
    """The fenced YAML block of the README or docs/commands.md that starts with ``first_line``."""
    text = (REPO / "README.md").read_text() + (REPO / "docs" / "commands.md").read_text()
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, flags=re.S | re.M)
    return next(block for block in blocks if block.startswith(first_line))


def test_the_readme_github_actions_example_runs_on_pull_request_and_its_steps_pass_and_fail(tmp_path: Path) -> None:
    import yaml

    text = _readme_block("# .github/workflows/fixtures.yml")
    assert "pull_request_target" not in text
    workflow = yaml.safe_load(text)
    assert workflow[True] == "pull_request"  # YAML 1.1 reads the key `on` as true
    assert workflow["permissions"] == {"contents": "read"}
    steps = [step["run"] for step in workflow["jobs"]["ctxmgr"]["steps"] if step.get("run", "").startswith("ctxmgr ")]
    assert len(steps) == 2
    _fixture(tmp_path / "fixtures" / "short.json", "short-chat.json")
    for step in steps:  # short fixtures pass
        done = subprocess.run([*CTXMGR, *step.split()[1:]], cwd=tmp_path, capture_output=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    _fixture(tmp_path / "fixtures" / "long.json")
    done = subprocess.run([*CTXMGR, *steps[0].split()[1:]], cwd=tmp_path, capture_output=True, timeout=60, check=False)
    assert done.returncode == 1  # the job fails, and the log shows the diff
    assert done.stdout.startswith(b"--- a/fixtures/long.json\n+++ b/fixtures/long.json\n")
