"""Start-up: what each command imports on a 10-message file.

How long each command takes to start is a ratio to ``python -c pass`` measured by the
benchmark (``python bench/run.py --only startup``: trim, validate, stats and ``--help``
within 3x, convert and ``summarize --model offline`` within 5x), never a timed test; what
one start-up device saves is measured by ``bench/startup.py --tree`` against a copy of the
package with the device disabled. These tests pin the imports each device keeps out:

- no pydantic in the help screens, a plain trim, a ``trim --max-tokens``,
  ``--max-tool-output`` or ``--clear-tool-results`` of an OpenAI chat file (and the last
  two in every format), a validate and a stats of a file with an outline reader: the plain
  parameter
  conversion (``ctxmgr.cli.params``) and the packages' attributes loaded on first use (nor
  logging, which only summaries use);
- no Rich in a trim, nor in a validate or a stats whose report goes to a pipe: the console built on first
  use and the plain-text output beside it (``ctxmgr.cli.console``);
- no asyncio in a trim, a conversion or an offline summary: the runs that never wait are
  driven without an event loop (``ctxmgr.files._coroutines.run_without_loop``);
- no provider SDK nor HTTP client in any command that calls no provider;
- no ``sqlite3`` and no Codex stream in a command on a file that is neither an Agents SDK
  session database nor a Codex rollout: both are sniffed from the file's first bytes
  (``ctxmgr.files._reading``) before their modules are loaded; no ``urllib.request`` (nor
  its ``ssl``) unless a ``--base-url`` server is asked its window.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

_WATCHED = ("pydantic", "rich", "asyncio", "logging", "httpx", "openai", "google", "sqlite3")


def _conversation(tmp_path: Path) -> Path:
    """An OpenAI chat conversation of 10 messages (a system prompt, a tool call and its result)."""
    messages: list[dict[str, object]] = [{"role": "system", "content": "You help with bookings."}]
    for turn in range(3):
        messages += [
            {"role": "user", "content": f"Question {turn} about order 4OG6T3?"},
            {"role": "assistant", "content": f"Answer {turn}: it ships on May 15."},
        ]
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "shipped"}'},
        {"role": "assistant", "content": "It has shipped."},
    ]
    assert len(messages) == 10
    path = tmp_path / "chat.json"
    path.write_bytes(orjson.dumps({"messages": messages}))
    return path


def _imported(args: list[str]) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """Run ``ctxmgr ARGS`` in a fresh interpreter; the watched top-level packages it imported."""
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\nMODULES=' + ','.join(sorted(\n"
        f"    {{m.split('.')[0] for m in sys.modules if m.split('.')[0] in {_WATCHED!r}}}\n"
        "    | ({'google.genai'} if 'google.genai' in sys.modules else set()))) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', *{args!r}]\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    # A wide terminal: a report line longer than the width is wrapped by Rich (and the
    # temporary path's length depends on how pytest runs).
    env = {**os.environ, "COLUMNS": "400"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False, env=env)
    line = proc.stderr.decode().splitlines()[-1]
    assert line.startswith("MODULES="), proc.stderr
    return proc, set(filter(None, line.removeprefix("MODULES=").split(",")))


@pytest.mark.parametrize(
    "command",
    [[], ["trim"], ["validate"], ["stats"], ["convert"], ["summarize"]],
    ids=lambda c: " ".join(c) or "ctxmgr",
)
def test_help_screens_load_no_library(command: list[str]) -> None:
    proc, modules = _imported([*command, "--help"])
    assert proc.returncode == 0, proc.stderr
    assert b"Usage" in proc.stdout
    assert modules == set()


def test_trim_loads_no_model_no_rich_and_no_sdk(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    proc, modules = _imported(["trim", str(_conversation(tmp_path)), "-n", "1", "--no-view", "-o", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert [m["role"] for m in orjson.loads(out.read_bytes())["messages"]] == [
        "system",
        "user",
        "assistant",
        "assistant",
        "tool",
        "assistant",
    ]
    assert modules == set()


def test_trim_with_a_token_budget_loads_no_model(tmp_path: Path) -> None:
    """``--max-tokens`` alone trims OpenAI chat from the outline: no pydantic either."""
    out = tmp_path / "out.json"
    args = ["trim", str(_conversation(tmp_path)), "--max-tokens", "30", "--no-view", "-o", str(out), "--json"]
    proc, modules = _imported(args)
    assert proc.returncode == 0, proc.stderr
    assert [m["role"] for m in orjson.loads(out.read_bytes())["messages"]] == ["system", "user", "assistant"]
    assert orjson.loads(proc.stdout)["totals"]["messages_dropped"] == 7
    assert "pydantic" not in modules  # (its one-line note per file is written by Rich)


def test_trim_with_a_tool_output_limit_loads_no_model(tmp_path: Path) -> None:
    """``--max-tool-output`` alone cuts an OpenAI chat result in its record: no pydantic."""
    path, out = _conversation(tmp_path), tmp_path / "out.json"
    value = orjson.loads(path.read_bytes())
    value["messages"][8]["content"] = orjson.dumps({"status": "shipped", "lines": ["item"] * 200}).decode()
    path.write_bytes(orjson.dumps(value))
    proc, modules = _imported(["trim", str(path), "--max-tool-output", "20", "--no-view", "-o", str(out), "--json"])
    assert proc.returncode == 0, proc.stderr
    cut = orjson.loads(orjson.loads(out.read_bytes())["messages"][8]["content"])  # still JSON
    assert cut["status"] == "shipped"
    assert len(cut["lines"]) < 200
    assert orjson.loads(proc.stdout)["totals"]["truncated_outputs"] == 1
    assert "pydantic" not in modules


@pytest.mark.parametrize("args", [["validate"], ["stats"], ["validate", "--json"], ["stats", "--json"]], ids=" ".join)
def test_validate_and_stats_read_outlines_without_the_model_or_rich(tmp_path: Path, args: list[str]) -> None:
    """A conversation its format's outline reader accepts is checked and counted from the
    outline, and the report written without Rich when Rich would write plain text."""
    proc, modules = _imported([args[0], str(_conversation(tmp_path)), *args[1:]])
    assert proc.returncode == 0, proc.stderr
    assert b"1" in proc.stdout  # one conversation, ten messages...: the report was printed
    assert modules == set()


@pytest.mark.parametrize(
    "args",
    [
        ["validate"],
        ["stats"],
        ["convert", "--to", "anthropic", "-o", "{out}"],
        ["summarize", "--model", "offline", "--max-messages", "4", "--no-cache", "--no-view", "-o", "{out}"],
    ],
    ids=lambda a: a[0],
)
def test_commands_without_a_provider_load_no_sdk_and_no_http_client(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "out.json"
    command = [args[0], str(_conversation(tmp_path)), *(a.replace("{out}", str(out)) for a in args[1:])]
    proc, modules = _imported(command)
    assert proc.returncode == 0, proc.stderr
    assert not modules & {"openai", "google", "google.genai", "httpx"}
    if "-o" in args:
        written = orjson.loads(out.read_bytes())
        assert written  # the command did its work, not just start


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "--to", "anthropic", "-o", "{out}"],
        ["summarize", "--model", "offline", "--max-messages", "4", "--no-cache", "--no-view", "-o", "{out}"],
        # A concurrency above 1 changes nothing for a summarizer that never waits.
        ["summarize", "--model", "offline", "--max-messages", "4", "--concurrency", "8", "--no-cache", "-o", "{out}"],
    ],
    ids=["convert", "summarize-offline", "summarize-offline-concurrency"],
)
def test_commands_that_never_wait_run_without_an_event_loop(tmp_path: Path, args: list[str]) -> None:
    """The offline digest and a conversion never wait: no asyncio (nor its ssl) is imported."""
    out = tmp_path / "out.json"
    command = [args[0], str(_conversation(tmp_path)), *(a.replace("{out}", str(out)) for a in args[1:])]
    proc, modules = _imported(command)
    assert proc.returncode == 0, proc.stderr
    assert "asyncio" not in modules
    written = orjson.loads(out.read_bytes())
    if args[0] == "summarize":
        assert any("Earlier conversation (" in str(m.get("content")) for m in written["messages"])


def _plugin_site(tmp_path: Path) -> Path:
    """A folder holding an installed distribution that declares a pydantic plugin, which
    writes a marker file when pydantic loads it."""
    site = tmp_path / "site"
    (site / "marker_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "marker_plugin-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: marker-plugin\n")
    (site / "marker_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[pydantic]\nmarker = marker_plugin:plugin\n"
    )
    (site / "marker_plugin.py").write_text(
        "import os, pathlib\n"
        "pathlib.Path(os.environ['MARKER_FILE']).write_text('loaded')\n"
        "class _Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\n"
        "plugin = _Plugin()\n"
    )
    return site


@pytest.mark.parametrize(("setting", "loaded"), [(None, False), ("", True)])
def test_pydantic_plugins_load_only_when_the_user_asks(tmp_path: Path, setting: str | None, loaded: bool) -> None:
    """Installed pydantic plugins are third-party code the command line does not need: not
    loaded, unless the user's own PYDANTIC_DISABLE_PLUGINS says otherwise (kept as set)."""
    source = _conversation(tmp_path)
    marker = tmp_path / "marker"
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(_plugin_site(tmp_path)), env.get("PYTHONPATH", "")])
    env["MARKER_FILE"] = str(marker)
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmgr", "convert", str(source), "--to", "anthropic", "-o", str(out)],
        capture_output=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.exists()
    assert marker.exists() is loaded


@pytest.mark.parametrize("fmt", ["anthropic", "gemini", "langchain", "native", "openai-responses"])
def test_trim_with_a_tool_output_limit_loads_no_model_in_other_formats(tmp_path: Path, fmt: str) -> None:
    """``--max-tool-output`` alone cuts an Anthropic, Gemini, LangChain, native or
    Responses result in its record too: no pydantic."""
    source = tmp_path / "chat.json"
    value = orjson.loads(_conversation(tmp_path).read_bytes())
    value["messages"][8]["content"] = orjson.dumps({"status": "shipped", "lines": ["item"] * 200}).decode()
    source.write_bytes(orjson.dumps(value))
    path, out = tmp_path / f"{fmt}.json", tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, "-m", "ctxmgr", "convert", str(source), "--to", fmt, "-o", str(path)],
        capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    proc, modules = _imported(["trim", str(path), "--max-tool-output", "20", "--no-view", "-o", str(out), "--json"])
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(proc.stdout)["totals"]["truncated_outputs"] == 1
    assert b"cut by ctxmgr" in out.read_bytes()
    assert "pydantic" not in modules


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native"])
def test_trim_clearing_tool_results_loads_no_model(tmp_path: Path, fmt: str) -> None:
    """``--clear-tool-results`` alone clears results in their records in every format,
    and its manager loads no model until the full path needs one: no pydantic."""
    source, path, out = tmp_path / "chat.json", tmp_path / f"{fmt}.json", tmp_path / "out.json"
    value = orjson.loads(_conversation(tmp_path).read_bytes())
    value["messages"][8]["content"] = orjson.dumps({"status": "shipped", "lines": ["item"] * 200}).decode()
    source.write_bytes(orjson.dumps(value))
    done = subprocess.run(
        [sys.executable, "-m", "ctxmgr", "convert", str(source), "--to", fmt, "-o", str(path)],
        capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    args = ["trim", str(path), "--clear-tool-results", "--keep-tool-results", "0", "--no-view", "-o", str(out)]
    proc, modules = _imported([*args, "--json"])
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(proc.stdout)["totals"]["cleared_results"] >= 1
    assert b"[tool result cleared by ctxmgr: " in out.read_bytes()
    assert "pydantic" not in modules
@pytest.mark.parametrize(
    "args",
    [
        ["trim", "-n", "1", "--no-view", "-o", "{out}"],
        ["validate"],
        ["stats"],
        ["convert", "--to", "anthropic"],
        ["summarize", "--model", "offline", "--max-messages", "4", "--no-cache", "--no-view", "-o", "{out}"],
    ],
    ids=lambda a: a[0],
)
def test_a_plain_file_loads_neither_the_session_database_nor_the_codex_stream(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "out.json"
    command = [args[0], str(_conversation(tmp_path)), *(a.replace("{out}", str(out)) for a in args[1:])]
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\nLOADED=' + ','.join(sorted(m for m in sys.modules if m in (\n"
        "    'sqlite3', 'ctxmgr.files._sessions_db', 'ctxmgr.files._session_compaction',\n"
        "    'ctxmgr.files._codex_stream', 'ctxmgr.formats._codex_lines', 'urllib.request', 'ssl'))) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', *{command!r}]\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode().splitlines()[-1] == "LOADED="
