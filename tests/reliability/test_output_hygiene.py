"""What ctxmgr prints cannot be steered by what it reads, and never shows a credential.

Conversations, file names and servers' messages are input, possibly an attacker's: a
terminal escape sequence in any of them must reach the screen as visible text (``\\x1b``),
never as an instruction to the terminal (clear the screen, retitle the window, hide or
forge a line); a file name with a newline cannot start a line of its own. Passwords in
base URLs and keys from mis-encoded key files never appear in an error, a log record or
a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _terminal import progress_shown_at_once, read_until_closed, stderr_on_a_terminal
from llm_server import LLMServer, Reply
from typer.testing import CliRunner

from ctxmgr.cli import app

runner = CliRunner()

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[31mRED\x9b31m\u202etxt.exe\u2028"
"""A window-title change, a screen clear, a colour, a one-byte CSI (C1), a right-to-left
override and a Unicode line separator."""

# What a terminal acts on: C0 controls but the newline, DEL, C1 controls, the Unicode
# line/paragraph separators and the bidirectional overrides.
_ACTIVE = {
    *map(chr, range(0x00, 0x0A)),
    *map(chr, range(0x0B, 0x20)),
    "\x7f",
    *map(chr, range(0x80, 0xA0)),
    "\u2028",
    "\u2029",
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
}


def active_characters(text: str) -> set[str]:
    return {c for c in text if c in _ACTIVE}


def hostile_chat(path: Path) -> Path:
    messages = [
        {"role": "system", "content": f"system {ESCAPES}"},
        {"role": "user", "content": f"first {ESCAPES}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": f"look{ESCAPES}", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": f"result {ESCAPES}"},
        {"role": "assistant", "content": f"answer {ESCAPES}"},
        {"role": "user", "content": f"second {ESCAPES}"},
        {"role": "assistant", "content": "done"},
    ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def ctxmgr(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command in a real process (a real standard error, not a test double)."""
    environment = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "ctxmgr", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        timeout=60,
        check=False,
    )


# -- conversation text -------------------------------------------------------------


def test_the_diff_view_shows_escape_sequences_as_text(tmp_path: Path) -> None:
    chat = hostile_chat(tmp_path / "chat.json")
    result = ctxmgr("trim", "chat.json", "--max-messages", "1", "--view", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert active_characters(result.stderr) == set()
    assert "\\x1b[2J" in result.stderr
    assert "\\u202e" in result.stderr
    assert json.loads(result.stdout)[-1]["content"] == "done"  # the data itself is untouched
    assert json.loads(chat.read_text())[1]["content"].endswith(ESCAPES)


def test_a_summary_in_the_diff_view_keeps_its_lines_but_not_its_escapes(tmp_path: Path) -> None:
    hostile_chat(tmp_path / "chat.json")
    result = ctxmgr(
        "summarize", "chat.json", "--model", "offline", "--max-messages", "2", "--keep-recent", "2", "--view",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "summary added" in result.stderr
    assert active_characters(result.stderr) == set()
    assert "\\x1b]0;owned\\x07" in result.stderr


def test_stats_and_validate_show_names_and_ids_as_text(tmp_path: Path) -> None:
    name = f"chat{ESCAPES}.json"
    hostile_chat(tmp_path / name)
    orphan = [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": f"id{ESCAPES}", "content": "r"}]
    (tmp_path / f"orphan{ESCAPES}.json").write_text(json.dumps(orphan), encoding="utf-8")

    stats = ctxmgr("stats", name, cwd=tmp_path)
    assert stats.returncode == 0, stats.stderr
    assert active_characters(stats.stdout + stats.stderr) == set()
    assert "\\x1b" in stats.stdout

    validate = ctxmgr("validate", name, f"orphan{ESCAPES}.json", cwd=tmp_path)
    assert validate.returncode == 1, validate.stderr
    assert active_characters(validate.stdout + validate.stderr) == set()
    assert "orphan\\x1b" in validate.stdout

    trim = ctxmgr("trim", f"orphan{ESCAPES}.json", cwd=tmp_path)
    assert trim.returncode == 0
    assert "warning:" in trim.stderr
    assert active_characters(trim.stderr) == set()


def test_dry_run_shows_a_hostile_model_name_as_text(tmp_path: Path) -> None:
    hostile_chat(tmp_path / "chat.json")
    arguments = ("summarize", "chat.json", "--model", f"m{ESCAPES}", "--dry-run", "--max-messages", "2")
    result = ctxmgr(*arguments, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert active_characters(result.stderr) == set()
    assert "m\\x1b" in result.stderr


def test_a_file_name_with_a_newline_cannot_forge_an_output_line(tmp_path: Path) -> None:
    forged = "x.json\nerror: everything is fine.json"
    (tmp_path / forged).write_text("{not json", encoding="utf-8")
    result = ctxmgr("trim", forged, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: x.json\\nerror: everything is fine.json:1:")

    changed = f"y.json\nwould change z{ESCAPES}.json"
    hostile_chat(tmp_path / changed)
    check = ctxmgr("trim", "--check", "--max-messages", "1", changed, cwd=tmp_path)
    assert check.returncode == 1
    assert check.stderr.count("\n") == 1, check.stderr
    assert active_characters(check.stderr) == set()


def _on_a_terminal(arguments: list[str], cwd: Path) -> tuple[int, bytes]:
    """``ctxmgr ARGUMENTS`` with standard error on a pseudo-terminal and the progress bar
    shown at once; the exit code and every byte the terminal received."""
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    return stderr_on_a_terminal(progress_shown_at_once(arguments), cwd=cwd, env=env)


@pytest.mark.parametrize("name", ["[reverse]chat.json", "[/b]chat.json"], ids=["style", "unmatched-tag"])
def test_a_file_name_cannot_style_or_break_the_progress_bar(tmp_path: Path, name: str) -> None:
    (tmp_path / name).parent.mkdir(exist_ok=True)  # "[/b]": a folder "[" holding "b]chat.json"
    hostile_chat(tmp_path / name)
    code, shown = _on_a_terminal(["trim", "--max-messages", "1", "-o", "out.json", name], tmp_path)
    assert code == 0, shown
    assert name.encode() in shown  # the name as it is, brackets and all
    assert b"\x1b[7m" not in shown  # no reverse video
    assert json.loads((tmp_path / "out.json").read_text())[-1]["content"] == "done"


@pytest.mark.parametrize(
    ("name", "header"),
    [
        ("chat\n+++ forged.json\n@@ -1 +1 @@", '"a/chat\\n+++ forged.json\\n@@ -1 +1 @@"'),
        (os.fsdecode(b"\xff\x1b[2J.json"), '"a/\\udcff\\x1b[2J.json"'),
    ],
    ids=["newline", "not-utf8"],
)
def test_a_file_name_cannot_forge_a_line_of_the_unified_diff(tmp_path: Path, name: str, header: str) -> None:
    """The diff goes to a pipe (a CI log shows it raw): its headers are escaped anyway."""
    chat = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "a"}]
    (tmp_path / name).write_text(json.dumps([*chat, {"role": "user", "content": "second"}]), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "ctxmgr", "trim", "--max-messages", "1", "--diff", name],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("utf-8").splitlines()
    assert lines[:2] == [f"--- {header}", f"+++ {header.replace('a/', 'b/', 1)}"]
    assert lines[2].startswith("@@ -")
    assert [line for line in lines if line.startswith(("---", "+++"))] == lines[:2]
    assert active_characters(result.stdout.decode("utf-8")) == set()


_REPORTS = {
    "trim --check": (["trim", "--check", "--max-messages", "1", "--json"], 1),
    "summarize --dry-run": (["summarize", "--model", "offline", "--dry-run", "--max-messages", "2", "--json"], 0),
    "convert": (["convert", "--to", "native", "-o", "out/", "--json"], 0),
    "stats": (["stats", "--json"], 0),
    "validate": (["validate", "--json"], 0),
}


@pytest.mark.parametrize("command", list(_REPORTS))
def test_a_file_name_that_is_not_utf8_is_in_the_json_report(tmp_path: Path, command: str) -> None:
    """Bytes that are not UTF-8 are written as the escapes \\udc80-\\udcff (Python's
    surrogateescape): the report is JSON, the exit code the command's own, and the
    name's bytes come back exactly."""
    folder = tmp_path / "chats"
    folder.mkdir()
    name = b"caf\xe9 \xff.json"  # Latin-1, as an old archive may hold
    (folder / os.fsdecode(name)).write_text(json.dumps([{"role": "user", "content": "hi"}] * 3), encoding="utf-8")
    arguments, expected = _REPORTS[command]
    result = subprocess.run(
        [sys.executable, "-m", "ctxmgr", *arguments, "chats"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == expected, result.stderr
    assert b"Traceback" not in result.stderr
    assert b"\\udcff" in result.stdout
    report = json.loads(result.stdout)
    paths = [row.get("path") or row.get("source") for row in report["files"]]
    assert [os.fsencode(path) for path in paths] == [b"chats/" + name]


def test_server_messages_in_errors_and_verbose_logs_are_shown_as_text(tmp_path: Path, llm_server: LLMServer) -> None:
    hostile_chat(tmp_path / "chat.json")
    llm_server.script(Reply.error(503, f"overloaded {ESCAPES}"), Reply.error(400, f"bad request {ESCAPES}"))
    result = ctxmgr(
        "summarize", "chat.json", "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url,
        "--max-messages", "2", "--keep-recent", "2", "--no-cache", "--max-retries", "1", "-v",
        cwd=tmp_path,
    )
    assert result.returncode == 3
    assert llm_server.request_count == 2
    assert "retry 1 of 1" in result.stderr  # the log record was shown...
    assert "overloaded \\x1b" in result.stderr
    assert "bad request \\x1b" in result.stderr
    assert active_characters(result.stderr) == set()  # ...as text


# -- credentials ---------------------------------------------------------------------

PASSWORD = "hunter2-SECRET-pw"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections: bound but never listening, and held
    for the whole test, so nothing else can start listening there meanwhile."""
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield int(holder.getsockname()[1])


@pytest.mark.parametrize("where", ["flag", "environment"])
@pytest.mark.parametrize("credential", ["password", "query"])
def test_a_credential_in_the_base_url_is_never_shown(
    tmp_path: Path, where: str, credential: str, closed_port: int
) -> None:
    """A password in the URL's user part, or a key in a query parameter (as proxies in
    front of a model API take it): the failure is reported, the credential never."""
    hostile_chat(tmp_path / "chat.json")
    if credential == "password":
        url, shown_as = f"http://user:{PASSWORD}@127.0.0.1:{closed_port}/v1", "http://***@127.0.0.1"
    else:
        url, shown_as = f"http://127.0.0.1:{closed_port}/v1?api-version=2024&api-key={PASSWORD}", "api-key=***"
    args = ["summarize", "chat.json", "--model", "gpt-4o-mini", "--max-messages", "2", "--keep-recent", "2"]
    args += ["--no-cache", "--max-retries", "1", "--timeout", "2"]
    env = {"OPENAI_BASE_URL": url} if where == "environment" else {}
    if where == "flag":
        args += ["--base-url", url]
    shown = ""
    for extra, debug in ((["-v"], ""), (["--json"], "1")):
        result = ctxmgr(*args, *extra, cwd=tmp_path, env={**env, "CTXMGR_DEBUG": debug})
        assert result.returncode == 3, result.stderr
        shown += result.stdout + result.stderr
    assert shown.count("connection to http://") >= 3  # each run reported the failure...
    assert shown_as in shown
    assert PASSWORD not in shown  # ...never with the credential


KEY = "sk-Zq9XvW7pLm3N8bTk4RyQ"


def with_char(char: str) -> str:
    """KEY with ``char`` as its 10th character."""
    return KEY[:9] + char + KEY[9:]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\xef\xbb\xbf" + KEY.encode(), "byte-order mark"),
        (KEY.encode("utf-16"), "not UTF-8"),
        (with_char("\xe9").encode("latin-1"), "not UTF-8"),
        (with_char("\u00e9").encode("utf-8"), "character 10 is a non-ASCII character"),
        (with_char("\x01").encode(), "character 10 is a control character"),
        (with_char("\x00").encode(), "character 10 is a control character"),
    ],
    ids=["bom", "utf16", "latin1", "non-ascii", "control", "nul"],
)
def test_a_mis_encoded_key_file_is_refused_without_quoting_the_key(
    tmp_path: Path, llm_server: LLMServer, content: bytes, reason: str
) -> None:
    chat = hostile_chat(tmp_path / "chat.json")
    before = chat.read_bytes()
    key_file = tmp_path / "key.txt"
    key_file.write_bytes(content)
    key_file.chmod(0o600)
    result = runner.invoke(
        app,
        ["summarize", str(chat), "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url, "-o",
         str(tmp_path / "out.json"), "--api-key-file", str(key_file), "--max-messages", "2", "--no-cache"],
        env={"CTXMGR_DEBUG": ""},
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: --api-key-file {key_file}: ")
    assert reason in result.stderr
    assert result.stderr.count("\n") == 1
    fragments = {KEY[i : i + 4] for i in range(len(KEY) - 3)}
    assert not any(fragment in result.output for fragment in fragments), result.output
    assert llm_server.request_count == 0
    assert chat.read_bytes() == before
    assert not (tmp_path / "out.json").exists()


def test_a_mis_encoded_key_in_the_environment_names_the_variable(tmp_path: Path, llm_server: LLMServer) -> None:
    hostile_chat(tmp_path / "chat.json")
    bad = with_char("\u00e9")
    result = ctxmgr(
        "summarize", "chat.json", "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url,
        "--max-messages", "2", "--keep-recent", "2", "--no-cache",
        cwd=tmp_path, env={"OPENAI_API_KEY": bad},
    )
    assert result.returncode == 3
    assert "OPENAI_API_KEY does not hold a usable API key: character 10 is a non-ASCII character" in result.stderr
    assert KEY[:6] not in result.stderr
    assert KEY[-6:] not in result.stderr
    assert llm_server.request_count == 0


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600])
def test_a_key_file_readable_by_others_gets_a_warning(tmp_path: Path, llm_server: LLMServer, mode: int) -> None:
    hostile_chat(tmp_path / "chat.json")
    key_file = tmp_path / "key.txt"
    key_file.write_text(KEY + "\n", encoding="utf-8")
    key_file.chmod(mode)
    result = runner.invoke(
        app,
        ["summarize", str(tmp_path / "chat.json"), "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url,
         "--api-key-file", str(key_file), "--max-messages", "2", "--keep-recent", "2", "--no-cache"],
    )
    assert result.exit_code == 0, result.output
    assert llm_server.request_count == 1
    assert llm_server.last.headers["authorization"] == f"Bearer {KEY}"
    warning = f"warning: --api-key-file {key_file}: readable by other users (mode {mode:03o}); 'chmod 600' it"
    assert (warning in result.stderr) == (mode != 0o600)
    assert KEY not in result.output


def test_data_written_to_a_terminal_cannot_drive_it(tmp_path: Path) -> None:
    """JSON keeps C1 controls and bidi overrides raw; on a terminal they become \\u escapes."""
    import pty

    chat = hostile_chat(tmp_path / "chat.json")
    controller, terminal = pty.openpty()
    try:
        process = subprocess.run(
            [sys.executable, "-m", "ctxmgr", "trim", str(chat), "--max-messages", "1", "--no-view"],
            stdout=terminal, stderr=subprocess.PIPE, timeout=60, check=False,
        )
        os.close(terminal)
        shown = read_until_closed(controller)
    finally:
        os.close(controller)
    assert process.returncode == 0, process.stderr
    text = shown.decode("utf-8").replace("\r\n", "\n")
    assert active_characters(text) == set()
    assert "\\u009b31m" in text
    assert "\\u202e" in text
    written = json.loads(text)
    assert written[-2]["content"] == f"second {ESCAPES}"  # the same value, escaped differently
    piped = subprocess.run(
        [sys.executable, "-m", "ctxmgr", "trim", str(chat), "--max-messages", "1"],
        capture_output=True, timeout=60, check=False,
    )
    assert "\u202e".encode() in piped.stdout  # into a pipe or a file: unchanged bytes


def test_run_notes_reach_the_json_report(tmp_path: Path, llm_server: LLMServer) -> None:
    """A warning about the whole run (a key file others can read) is in --json too."""
    hostile_chat(tmp_path / "chat.json")
    key_file = tmp_path / "key.txt"
    key_file.write_text(KEY, encoding="utf-8")
    key_file.chmod(0o644)
    result = runner.invoke(
        app,
        ["summarize", str(tmp_path / "chat.json"), "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url,
         "--api-key-file", str(key_file), "--max-messages", "2", "--keep-recent", "2", "--no-cache", "--json"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    message = f"--api-key-file {key_file}: readable by other users (mode 644); 'chmod 600' it"
    assert report["notes"] == [{"level": "warning", "message": message}]
    assert report["totals"]["changed"] == 1


def test_a_password_echoed_by_the_server_is_never_shown_in_any_form(tmp_path: Path, llm_server: LLMServer) -> None:
    """Percent-encoded as written in the URL, decoded, or short: none reaches the screen."""
    hostile_chat(tmp_path / "chat.json")
    written, short = "p%40Ss-w0rd", "pw9"
    llm_server.script(
        Reply.error(400, f"bad auth {written} / p@Ss-w0rd"), Reply.error(400, f"bad auth {short}, not apw9b")
    )
    shown = ""
    for password in (written, short):
        url = llm_server.openai_url.replace("http://", f"http://user:{password}@")
        result = runner.invoke(
            app,
            ["summarize", str(tmp_path / "chat.json"), "--model", "gpt-4o-mini", "--base-url", url, "--no-cache",
             "--max-messages", "2", "--keep-recent", "2", "--max-retries", "0", "--json"],
        )
        assert result.exit_code == 3, result.output
        shown += result.output
    assert llm_server.request_count == 2
    assert "bad auth *** / ***" in shown
    assert "bad auth ***, not apw9b" in shown  # a short password is replaced where it stands alone
    for secret in (written, "p@Ss-w0rd", f":{short}@"):
        assert secret not in shown
