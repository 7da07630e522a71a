"""``ctxmgr trim`` run for real: Typer's CliRunner, ``python -m ctxmgr`` and the console script."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.state import Message

SCRIPT = shutil.which("ctxmgr", path=str(Path(sys.executable).parent)) or shutil.which("ctxmgr")


# -- conversations ------------------------------------------------------------------------


def msg(message_id: str, role: str, text: str, **extra: Any) -> dict[str, Any]:
    message = Message.text_message(text, role=role, message_id=message_id)  # type: ignore[arg-type]
    message.timestamp = 1715810000.0
    return {**message.model_dump(mode="json"), **extra}


CALL = {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": '{"id": "A17"}'}}
MESSAGES = [
    msg("s", "system", "You are a support agent."),
    msg("u1", "user", "Where is my order?"),
    msg("a1", "assistant", "", tools_calls=[CALL]),
    {
        **msg("t1", "tool", ""),
        "content": [
            {
                "type": "tool_result",
                "call_id": "call_1",
                "output": {"status": "shipped"},
                "is_error": False,
                "status": "completed",
            }
        ],
    },
    msg("a2", "assistant", "It shipped yesterday."),
    msg("u2", "user", "When will it arrive?"),
    msg("a3", "assistant", "Thursday."),
    msg("u3", "user", "Thanks!"),
]
STATE: dict[str, Any] = {
    "context": MESSAGES,
    "context_summary": None,
    "execution_meta": {
        "current_node": "agent",
        "step": 3,
        "status": "completed",
        "interrupted_node": None,
        "interrupt_reason": None,
        "interrupt_data": None,
        "thread_id": "t1",
        "stop_current_execution": "none",
        "internal_data": {},
    },
    "x_app_field": [1, 2, 3],
}


def ids(messages: list[dict[str, Any]]) -> list[str]:
    return [m["message_id"] for m in messages]


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_bytes(orjson.dumps(STATE, option=orjson.OPT_INDENT_2))
    return path


# -- running ------------------------------------------------------------------------------


def invoke(args: list[str], stdin: bytes | None = None) -> Any:
    result = CliRunner().invoke(app, args, input=stdin)
    return result


def run(
    args: list[str], *, stdin: bytes | None = None, script: bool = False, cwd: Path | None = None, **kw: Any
) -> subprocess.CompletedProcess[bytes]:
    command = [SCRIPT] if script else [sys.executable, "-m", "ctxmgr"]
    assert command[0] is not None
    return subprocess.run([*command, *args], input=stdin, capture_output=True, timeout=60, check=False, cwd=cwd, **kw)


# -- data on stdout, and where it goes ----------------------------------------------------


def test_trim_writes_the_trimmed_conversation_to_stdout(chat: Path) -> None:
    result = invoke(["trim", str(chat), "--max-messages", "2"])
    assert result.exit_code == 0, result.stderr
    out = orjson.loads(result.stdout_bytes)
    assert ids(out["context"]) == ["s", "u2", "a3", "u3"]
    assert out["x_app_field"] == [1, 2, 3]
    assert out["execution_meta"] == STATE["execution_meta"]


def test_short_flag_and_default_max_messages(chat: Path) -> None:
    short = invoke(["trim", str(chat), "-n", "1"])
    assert ids(orjson.loads(short.stdout_bytes)["context"]) == ["s", "u3"]
    default = invoke(["trim", str(chat)])  # 10 user turns: nothing to trim
    assert default.exit_code == 0
    assert orjson.loads(default.stdout_bytes) == STATE


def test_remove_tool_msgs_flag(chat: Path) -> None:
    result = invoke(["trim", str(chat), "--max-messages", "5", "--remove-tool-msgs"])
    assert result.exit_code == 0
    assert ids(orjson.loads(result.stdout_bytes)["context"]) == ["s", "u1", "a2", "u2", "a3", "u3"]


@pytest.mark.parametrize("script", [False, True], ids=["python -m ctxmgr", "ctxmgr script"])
def test_subprocess_stdout_carries_only_data_even_with_the_diff(chat: Path, script: bool) -> None:
    proc = run(["trim", str(chat), "--max-messages", "2", "--view"], script=script)
    assert proc.returncode == 0, proc.stderr
    out = orjson.loads(proc.stdout)  # nothing but JSON on stdout
    assert ids(out["context"]) == ["s", "u2", "a3", "u3"]
    assert b"messages 8" in proc.stderr


def test_a_real_shell_pipe(chat: Path, tmp_path: Path) -> None:
    assert SCRIPT is not None
    out = tmp_path / "small.json"
    proc = subprocess.run(
        f"cat '{chat}' | '{SCRIPT}' trim --max-messages 2 > '{out}'",
        shell=True,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""  # not a terminal and no --view: nothing on stderr
    assert ids(orjson.loads(out.read_bytes())["context"]) == ["s", "u2", "a3", "u3"]


@pytest.mark.parametrize("how", [["-"], []], ids=["dash", "no file"])
def test_standard_input(chat: Path, how: list[str]) -> None:
    result = invoke(["trim", *how, "--max-messages", "1"], stdin=chat.read_bytes())
    assert result.exit_code == 0, result.stderr
    assert ids(orjson.loads(result.stdout_bytes)["context"]) == ["s", "u3"]


def test_output_file(chat: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "small.json"
    target.parent.mkdir()
    before = chat.read_bytes()
    result = invoke(["trim", str(chat), "--max-messages", "1", "-o", str(target)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == b""
    assert ids(orjson.loads(target.read_bytes())["context"]) == ["s", "u3"]
    assert chat.read_bytes() == before
    assert sorted(os.listdir(target.parent)) == ["small.json"]  # no temporary file left
    long_form = invoke(["trim", str(chat), "--max-messages", "2", "--output", str(target)])
    assert long_form.exit_code == 0
    assert ids(orjson.loads(target.read_bytes())["context"]) == ["s", "u2", "a3", "u3"]


def test_in_place(chat: Path, tmp_path: Path) -> None:
    os.chmod(chat, 0o640)
    result = invoke(["trim", str(chat), "--max-messages", "1", "--in-place"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == b""
    assert ids(orjson.loads(chat.read_bytes())["context"]) == ["s", "u3"]
    assert stat.S_IMODE(chat.stat().st_mode) == 0o640  # permissions kept
    # no temporary file left; the backup beside it (on with --in-place)
    assert sorted(os.listdir(tmp_path)) == ["chat.json", "chat.json.ctxmgr-removed.jsonl"]


def test_in_place_with_nothing_to_trim_leaves_the_file_alone(chat: Path) -> None:
    before = chat.read_bytes()
    old = time.time() - 1000
    os.utime(chat, (old, old))
    result = invoke(["trim", str(chat), "--max-messages", "5", "-i"])
    assert result.exit_code == 0
    assert chat.read_bytes() == before
    assert chat.stat().st_mtime == pytest.approx(old)


def test_new_output_file_gets_the_usual_permissions(chat: Path, tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        target = tmp_path / "new.json"
        assert run(["trim", str(chat), "-n", "1", "-o", str(target)]).returncode == 0
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
    finally:
        os.umask(umask)


@pytest.mark.parametrize("args", [["-o", "out.json"], [], ["--in-place"]], ids=["-o", "stdout", "in-place"])
def test_input_is_never_modified_without_in_place(chat: Path, tmp_path: Path, args: list[str]) -> None:
    before = chat.read_bytes()
    mtime = chat.stat().st_mtime_ns
    proc = run(["trim", str(chat), "--max-messages", "1", *args], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    if "--in-place" in args:
        assert chat.read_bytes() != before
    else:
        assert chat.read_bytes() == before
        assert chat.stat().st_mtime_ns == mtime


# -- the shape is kept --------------------------------------------------------------------


def test_agent_state_stays_an_agent_state(chat: Path) -> None:
    out = orjson.loads(invoke(["trim", str(chat), "-n", "1"]).stdout_bytes)
    assert list(out) == ["context", "context_summary", "execution_meta", "x_app_field"]


def test_list_stays_a_list(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_bytes(orjson.dumps(MESSAGES))
    out = orjson.loads(invoke(["trim", str(path), "-n", "1"]).stdout_bytes)
    assert isinstance(out, list)
    assert out == [MESSAGES[0], MESSAGES[-1]]


def test_object_with_a_context_list_keeps_its_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "wrapped.json"
    document = {"id": "conv-1", "context": MESSAGES, "tags": ["a"]}
    path.write_bytes(orjson.dumps(document))
    out = orjson.loads(invoke(["trim", str(path), "-n", "1"]).stdout_bytes)
    assert out == {"id": "conv-1", "context": [MESSAGES[0], MESSAGES[-1]], "tags": ["a"]}
    assert "context_summary" not in out
    assert "execution_meta" not in out


def test_jsonl_stays_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [orjson.dumps(m) for m in MESSAGES]
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = invoke(["trim", str(path), "-n", "1"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == lines[0] + b"\n" + lines[-1] + b"\n"


def test_compact_input_stays_compact_and_indented_stays_indented(tmp_path: Path) -> None:
    compact = tmp_path / "compact.json"
    compact.write_bytes(orjson.dumps(STATE))
    assert b"\n" not in invoke(["trim", str(compact), "-n", "1"]).stdout_bytes.rstrip(b"\n")
    pretty = tmp_path / "pretty.json"
    pretty.write_bytes(orjson.dumps(STATE, option=orjson.OPT_INDENT_2))
    assert invoke(["trim", str(pretty), "-n", "1"]).stdout_bytes.startswith(b'{\n  "context": [\n')


def test_the_samples_trim(tmp_path: Path) -> None:
    samples = Path(__file__).resolve().parents[2] / "samples"
    jsonl = run(["trim", str(samples / "booking-chat.jsonl"), "-n", "1"])
    assert jsonl.returncode == 0, jsonl.stderr
    records = [orjson.loads(line) for line in jsonl.stdout.splitlines()]
    assert records[0]["role"] == "system"
    assert sum(1 for r in records if r["role"] == "user") == 1


# -- the diff view ------------------------------------------------------------------------

DIFF_SNAPSHOT = """\
╭─ chat.json ──────────────────────────────────────────────────────────────────────────────────────╮
│ #     role       tokens  text                                                                    │
│ 0  ✓  system          6  You are a support agent.                                                │
│ 1  ✗  user            4  Where is my order?                                                      │
│ 2  ✗  assistant      25  → get_order(id="A17")                                                   │
│ 3  ✗  tool            5  {"status": "shipped"}                                                   │
│ 4  ✗  assistant       5  It shipped yesterday.                                                   │
│ 5  ✓  user            5  When will it arrive?                                                    │
│ 6  ✓  assistant       2  Thursday.                                                               │
│ 7  ✓  user            1  Thanks!                                                                 │
│ messages 8 → 4   est. tokens 55 → 15   dropped 4                                                 │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
"""


def test_diff_view_snapshot(chat: Path) -> None:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    proc = run(["trim", "chat.json", "--max-messages", "2", "--view"], cwd=chat.parent, env=env)
    assert proc.returncode == 0
    assert proc.stderr.decode() == DIFF_SNAPSHOT


def test_diff_view_in_process(chat: Path) -> None:
    result = invoke(["trim", str(chat), "--max-messages", "2", "--view"])
    assert result.exit_code == 0
    err = result.stderr
    assert "messages 8 → 4" in err
    assert "est. tokens" in err
    assert "dropped 4" in err
    assert "Where is my order?" in err  # a dropped message is listed
    assert "Thanks!" in err


def test_no_diff_and_default_off_when_not_a_terminal(chat: Path) -> None:
    assert invoke(["trim", str(chat), "-n", "2", "--no-view"]).stderr == ""
    assert invoke(["trim", str(chat), "-n", "2"]).stderr == ""


def _run_with_terminal_stderr(args: list[str], env: dict[str, str], out_path: Path) -> tuple[int, bytes, str]:
    """Run with standard error on a pseudo-terminal; returns (code, stdout, stderr without escapes)."""
    main, secondary = pty.openpty()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ctxmgr", *args], stdout=out, stderr=secondary, env=env)
    os.close(secondary)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([main], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    code = proc.wait(timeout=60)
    os.close(main)
    err = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode())
    return code, out_path.read_bytes(), err


def test_diff_is_shown_by_default_when_stderr_is_a_terminal(chat: Path, tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "xterm"}
    code, out, err = _run_with_terminal_stderr(["trim", str(chat), "-n", "2"], env, tmp_path / "out")
    assert code == 0
    assert ids(orjson.loads(out)["context"]) == ["s", "u2", "a3", "u3"]
    assert "messages 8 → 4" in err
    code, out, err = _run_with_terminal_stderr(["trim", str(chat), "-n", "2", "--no-view"], env, tmp_path / "out")
    assert code == 0
    assert ids(orjson.loads(out)["context"]) == ["s", "u2", "a3", "u3"]
    assert err == ""


# -- bad input ------------------------------------------------------------------------------

BAD_INPUTS: dict[str, tuple[bytes, str]] = {
    # name: (file content, what the one error line must contain after "FILE")
    "not-json": (b"hello, world\n", ":1:1: invalid JSON"),
    "truncated": (b'{"context": [{"role": "user", "content": [', ":1:43: invalid JSON"),
    "truncated-multiline": (b'[\n  {"role": "user",\n   "content": [{"type": "te', ":3:"),
    "no-role": (b'[{"message_id": "m1", "content": []}]', "[0].role: required field is missing"),
    "no-role-in-state": (b'{"context": [{"content": []}]}', "context[0].role: required field is missing"),
    "unknown-role": (b'[{"role": "robot", "content": []}]', "[0].role: Input should be"),
    "unknown-block": (
        b'[{"role": "user", "content": [{"type": "hologram"}]}]',
        "[0].content[0]: unknown content block type 'hologram'",
    ),
    "wrong-type": (b'[{"role": "user", "content": [], "delta": "yes"}]', "[0].delta: Input should be a valid boolean"),
    "wrong-type-timestamp": (
        b'{"context": [{"role": "user", "content": [], "timestamp": "noon"}]}',
        "context[0].timestamp",
    ),
    "string-content": (
        b'[{"message_id": "m1", "role": "user", "content": "hi"}]',
        "[0].content: expected a list of content blocks, got a string",
    ),
    "context-not-a-list": (b'{"context": "nope"}', "'context' is str, expected a list"),
    "empty": (b"", "empty file"),
    "blank": (b"  \n\n ", "empty file"),
    "a-number": (b"42", "not a conversation"),
    "binary": (bytes(range(256)) * 4, "binary data"),
    "latin-1": ('[{"role": "user", "content": [{"type": "text", "text": "café"}]}]'.encode("latin-1"), "UTF-8"),
    "jsonl-unknown-role": (
        b'{"role": "user", "content": []}\n{"role": "robot", "content": []}\n',
        ":2: role: Input should be 'user', 'assistant', 'system' or 'tool'",
    ),
    "bad-jsonl-line": (
        b'{"role": "user", "content": []}\n{"role": "user", "content": [\n',
        ":2:",
    ),
}


def assert_one_line_error(stderr: str, name: str, expected: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"error: {name}"), stderr
    assert expected in lines[0], stderr


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_in_process(tmp_path: Path, case: str) -> None:
    content, expected = BAD_INPUTS[case]
    path = tmp_path / f"{case}.json"
    path.write_bytes(content)
    target = tmp_path / "out.json"
    result = invoke(["trim", str(path), "--max-messages", "1", "-o", str(target)])
    assert result.exit_code == 2, result.stderr
    assert_one_line_error(result.stderr, str(path), expected)
    assert result.stdout_bytes == b""
    assert not target.exists()
    assert path.read_bytes() == content


@pytest.mark.parametrize("case", ["truncated", "unknown-block", "binary", "empty"])
def test_bad_input_in_a_subprocess(tmp_path: Path, case: str) -> None:
    content, expected = BAD_INPUTS[case]
    path = tmp_path / f"{case}.json"
    path.write_bytes(content)
    proc = run(["trim", path.name, "-n", "1", "-o", "out.json"], cwd=tmp_path)
    assert proc.returncode == 2
    assert_one_line_error(proc.stderr.decode(), path.name, expected)
    assert proc.stdout == b""
    assert sorted(os.listdir(tmp_path)) == [path.name]
    assert path.read_bytes() == content


@pytest.mark.parametrize("case", ["truncated", "no-role", "unknown-role", "binary"])
def test_bad_input_with_in_place_leaves_the_file_byte_identical(tmp_path: Path, case: str) -> None:
    content, expected = BAD_INPUTS[case]
    path = tmp_path / "chat.json"
    path.write_bytes(content)
    result = invoke(["trim", str(path), "-n", "0", "--in-place"])
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, str(path), expected)
    assert path.read_bytes() == content
    assert sorted(os.listdir(tmp_path)) == ["chat.json"]


def test_bad_input_keeps_an_existing_output_file(chat: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"{")
    assert invoke(["trim", str(bad), "-o", str(target)]).exit_code == 2
    assert target.read_bytes() == b"old"


def test_bad_standard_input_is_named(tmp_path: Path) -> None:
    result = invoke(["trim", "-n", "1"], stdin=b'[{"role": "user"')
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "<stdin>:1:", "invalid JSON")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.json"
    result = invoke(["trim", str(path), "-o", str(tmp_path / "out.json")])
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, str(path), "no such file")
    assert sorted(os.listdir(tmp_path)) == []


def test_a_directory(tmp_path: Path) -> None:
    folder = tmp_path / "chats.json"
    folder.mkdir()
    result = invoke(["trim", str(folder), "-o", str(tmp_path / "out.json")])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert_one_line_error(result.stderr, str(folder), "no .json, .jsonl or .traj files in this folder")
    assert sorted(os.listdir(tmp_path)) == ["chats.json"]


def test_unreadable_file(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = tmp_path / "secret.json"
    path.write_bytes(b"[]")
    os.chmod(path, 0)
    result = invoke(["trim", str(path)])
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, str(path), "permission denied")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_debug_variable_shows_the_traceback_instead(chat: Path) -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "ctxmgr", "trim", str(chat), "-n", "1"],
            stdout=full,
            stderr=subprocess.PIPE,
            env={**os.environ, "CTXMGR_DEBUG": "1"},
            timeout=60,
            check=False,
        )
    assert proc.returncode == 1
    assert b"Traceback" in proc.stderr
    assert b"No space left on device" in proc.stderr


# -- exit codes -------------------------------------------------------------------------------


def test_exit_code_0_when_done(chat: Path) -> None:
    assert run(["trim", str(chat), "-n", "1"]).returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--in-place", "-o", "x.json"],
        ["--max-messages", "-1"],
        ["--max-messages", "two"],
        ["--no-such-flag"],
    ],
)
def test_exit_code_2_for_usage_errors(chat: Path, args: list[str]) -> None:
    proc = run(["trim", str(chat), *args], cwd=chat.parent)
    assert proc.returncode == 2
    assert b"Traceback" not in proc.stderr
    assert proc.stdout == b""


def test_in_place_needs_a_file() -> None:
    result = invoke(["trim", "--in-place"], stdin=b"[]")
    assert result.exit_code == 2
    assert "--in-place" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_exits_74_never_1(chat: Path) -> None:
    """EX_IOERR: exit 1 would read as "found something"."""
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "ctxmgr", "trim", str(chat), "-n", "1"],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 74
    assert b"Traceback" not in proc.stderr
    assert proc.stderr.decode().splitlines() == ["error: No space left on device"]


def test_a_closed_pipe_is_not_an_error_message(chat: Path) -> None:
    big = chat.parent / "big.json"
    big.write_bytes(orjson.dumps({"context": MESSAGES * 1000}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxmgr", "trim", str(big), "-n", "5000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    proc.wait(timeout=60)
    assert b"Traceback" not in err
    assert b"Exception ignored" not in err


# -- start-up ------------------------------------------------------------------------------------


def test_trim_never_imports_the_provider_sdks(chat: Path) -> None:
    code = (
        "import atexit, runpy, sys\n"
        "def report():\n"
        "    bad = sorted(m for m in sys.modules if m.split('.')[0] == 'openai' or m.startswith('google.genai'))\n"
        "    sys.stderr.write('SDKS=' + ','.join(bad) + '\\n')\n"
        "atexit.register(report)\n"
        f"sys.argv = ['ctxmgr', 'trim', {str(chat)!r}, '-n', '1', '--view']\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ids(orjson.loads(proc.stdout)["context"]) == ["s", "u3"]
    assert proc.stderr.decode().splitlines()[-1] == "SDKS="


_HEAVY = ("pydantic", "rich", "asyncio", "ctxmgr.state.message", "ctxmgr.formats._openai_chat", "ctxmgr._pipeline")


def _modules_after_trim(path: Path, *flags: str) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('MODULES=' + ','.join(sorted(sys.modules)) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', 'trim', {str(path)!r}, *{list(flags)!r}]\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    line = proc.stderr.decode().splitlines()[-1]
    assert line.startswith("MODULES="), proc.stderr
    return proc, set(line.removeprefix("MODULES=").split(","))


def test_plain_openai_trim_imports_neither_pydantic_nor_rich_nor_the_readers(tmp_path: Path) -> None:
    """Start-up (issue 5): the outline path needs no model, no full reader, no Rich."""
    chat = tmp_path / "chat.json"
    chat.write_bytes(
        orjson.dumps(
            {
                "messages": [{"role": "system", "content": "s"}]
                + [{"role": r, "content": f"{r}{i}"} for i in range(3) for r in ("user", "assistant")]
            }
        )
    )
    proc, modules = _modules_after_trim(chat, "-n", "1", "-o", str(tmp_path / "out.json"))
    assert proc.returncode == 0, proc.stderr
    kept = orjson.loads((tmp_path / "out.json").read_bytes())["messages"]
    assert [m["content"] for m in kept] == ["s", "user2", "assistant2"]
    assert not {m for m in modules if m.split(".")[0] in _HEAVY or m in _HEAVY}
    assert "typer._adapters" not in modules  # Typer's pydantic-based value conversion


def test_a_json_report_on_a_dataset_takes_the_outline_path_too(tmp_path: Path) -> None:
    """Token counts come from the records: --json needs no model for plain lines."""
    rows = tmp_path / "rows.jsonl"
    row = {"messages": [{"role": r, "content": f"{r} text"} for r in ("system", "user", "assistant", "user")]}
    rows.write_bytes(orjson.dumps(row) + b"\n" + orjson.dumps(row) + b"\n")
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('PYDANTIC=' + str('pydantic' in sys.modules) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', 'trim', {str(rows)!r}, '-n', '1', '--json']\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    totals = orjson.loads(proc.stdout)["totals"]
    assert (totals["messages_before"], totals["messages_after"]) == (8, 4)
    assert totals["tokens_before"] > totals["tokens_after"] > 0
    assert proc.stderr.decode().splitlines()[-1] == "PYDANTIC=False"


def test_a_coroutine_that_waits_is_refused_by_the_loopless_runner() -> None:
    import asyncio

    from ctxmgr.files import run_without_loop

    async def waits() -> list[Any]:
        await asyncio.sleep(0)
        return []

    async def does_not() -> list[Any]:
        return ["done"]

    assert run_without_loop(does_not()) == ["done"]
    with pytest.raises(RuntimeError, match="waited on something"):
        run_without_loop(waits())


def test_the_native_outline_path_needs_no_model_either(chat: Path) -> None:
    proc, modules = _modules_after_trim(chat, "-n", "1")
    assert proc.returncode == 0, proc.stderr
    assert ids(orjson.loads(proc.stdout)["context"]) == ["s", "u3"]
    assert not {m for m in modules if m.split(".")[0] in _HEAVY or m in _HEAVY}
    assert "ctxmgr.formats._native" not in modules


def test_the_full_path_still_loads_what_it_needs(tmp_path: Path) -> None:
    """The control: a conversation the outline declines (a summary in Anthropic's
    ``system``, which the reader lifts out) goes through the model."""
    from ctxmgr.formats._base import SUMMARY_HEADER

    sample = orjson.loads((Path(__file__).resolve().parents[2] / "samples" / "anthropic.json").read_bytes())
    sample["system"] = f"{SUMMARY_HEADER}\nThe user asked about a flight."
    request = tmp_path / "request.json"
    request.write_bytes(orjson.dumps(sample))
    proc, modules = _modules_after_trim(request, "-n", "1", "-o", str(tmp_path / "out.json"))
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads((tmp_path / "out.json").read_bytes())["system"] == sample["system"]
    assert "pydantic" in modules
    assert "ctxmgr.formats._anthropic" in modules


def test_importing_the_cli_does_not_import_the_sdks() -> None:
    code = (
        "import sys\n"
        "import ctxmgr.cli, ctxmgr.state, ctxmgr.formats\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'openai' or m.startswith('google.genai')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.stdout.strip() == b"[]", proc.stderr


@pytest.mark.parametrize("script", [False, True], ids=["python -m ctxmgr", "ctxmgr script"])
def test_help(script: bool) -> None:
    proc = run(["--help"], script=script)
    assert proc.returncode == 0
    assert b"trim" in proc.stdout
    trim_help = run(["trim", "--help"], script=script)
    assert trim_help.returncode == 0
    for flag in (b"--max-messages", b"--remove-tool-msgs", b"--output", b"--in-place", b"--view", b"--no-view"):
        assert flag in trim_help.stdout


def test_version() -> None:
    from ctxmgr import __version__

    proc = run(["--version"])
    assert proc.returncode == 0
    assert proc.stdout.decode().strip() == f"ctxmgr {__version__}"


# -- robustness of the error handler and the diff view -----------------------------------------


def _console() -> tuple[Any, Any]:
    from io import StringIO

    from rich.console import Console

    buffer = StringIO()
    return Console(file=buffer, width=100, no_color=True, highlight=False), buffer


@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (ValueError("bad [b]thing[/b]"), 70, "error: unexpected ValueError: bad [b]thing[/b] (set CTXMGR_DEBUG=1"),
        (OSError(28, "No space left on device"), 74, "error: No space left on device"),
        (PermissionError(13, "Permission denied", "/x/y.json"), 74, "error: /x/y.json: Permission denied"),
    ],
)
def test_unexpected_errors_become_one_line_and_never_exit_1(error: Exception, code: int, line: str) -> None:
    """1 says "--check found changes": a crash or a full disk must not pass for that."""
    import typer

    from ctxmgr.cli.errors import handle_errors

    console, buffer = _console()
    with pytest.raises(typer.Exit) as caught, handle_errors(console):
        raise error
    assert caught.value.exit_code == code
    assert buffer.getvalue().count("\n") == 1
    assert buffer.getvalue().startswith(line)


def test_an_error_outside_every_command_handler_exits_70_in_one_line(tmp_path: Path) -> None:
    """The last resort of the entry point: without it Python prints a traceback and exits
    1, "found something". The fault is injected where the root callback starts."""
    code = (
        "import sys\n"
        "import ctxmgr.cli.console as console\n"
        "def fail(): raise RuntimeError('bad [b]state')\n"
        "console.reset_notes = fail\n"
        "sys.argv = ['ctxmgr', 'trim', '--check', 'x.json']\n"
        "from ctxmgr.cli import main\n"
        "main()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CTXMGR_DEBUG"}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert proc.returncode == 70
    assert proc.stderr.splitlines() == [
        "error: unexpected RuntimeError: bad [b]state (set CTXMGR_DEBUG=1 for the traceback)"
    ]


def test_typer_exit_passes_through_the_error_handler() -> None:
    import typer

    from ctxmgr.cli.errors import handle_errors

    console, buffer = _console()
    with pytest.raises(typer.Exit) as caught, handle_errors(console):
        raise typer.Exit(7)
    assert caught.value.exit_code == 7
    assert buffer.getvalue() == ""


def test_diff_view_survives_malformed_tool_calls(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    odd = [
        msg("u1", "user", "hi"),
        msg("a1", "assistant", "", tools_calls=[{"id": "c", "type": "function", "function": None}, {"id": "d"}]),
        msg("u2", "user", "[bold]not markup[/nope]"),
    ]
    path.write_bytes(orjson.dumps(odd))
    result = invoke(["trim", str(path), "-n", "1", "--view"])
    assert result.exit_code == 0, result.stderr
    assert "→ ?(), ?()" in result.stderr
    assert "[bold]not markup[/nope]" in result.stderr


def test_diff_view_shows_added_messages_verbatim() -> None:
    from ctxmgr.cli.diff import render_diff

    console, buffer = _console()
    kept = Message.text_message("question")
    added = Message.text_message("[red]summary[/oops] of [b]", role="system")
    render_diff(
        console,
        name="x.json",
        before=[Message.text_message("old"), kept],
        after=[added, kept],
        summary_before=None,
        summary_after="[/] new summary",
    )
    text = buffer.getvalue()
    assert "[red]summary[/oops] of [b]" in text
    assert "[/] new summary" in text
    assert "messages 2 → 2" in text
    assert "dropped 1" in text


def test_jsonl_through_standard_input_stays_jsonl() -> None:
    lines = [orjson.dumps(m) for m in MESSAGES]
    result = invoke(["trim", "-n", "1"], stdin=b"\n".join(lines) + b"\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == lines[0] + b"\n" + lines[-1] + b"\n"


def test_a_killed_run_leaves_the_old_file_or_the_complete_new_one(tmp_path: Path) -> None:
    import signal

    big = tmp_path / "big.json"
    turns = [dict(m, message_id=f"{m['message_id']}-{i}") for i in range(600) for m in MESSAGES[1:]]
    big.write_bytes(orjson.dumps({"context": [MESSAGES[0], *turns]}, option=orjson.OPT_INDENT_2))
    # the system message, then the last two user turns (u2, a3, u3 of the last round)
    expected_ids = ["s", *ids(turns[-3:])]
    target = tmp_path / "out.json"
    old = b'{"old": true}\n'
    started = time.perf_counter()
    assert run(["trim", str(big), "-n", "2", "-o", str(target)]).returncode == 0
    duration = time.perf_counter() - started
    assert ids(orjson.loads(target.read_bytes())["context"]) == expected_ids
    outcomes = set()
    for step in range(8):  # kill at moments spread over a whole run
        target.write_bytes(old)
        proc = subprocess.Popen(
            [sys.executable, "-m", "ctxmgr", "trim", str(big), "-n", "2", "-o", str(target)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(duration * step / 6)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        data = target.read_bytes()
        if data == old:
            outcomes.add("old")
        else:  # the rename happened: the whole new file is there, never a part of it
            assert ids(orjson.loads(data)["context"]) == expected_ids
            outcomes.add("new")
    assert outcomes  # (which ones depends on timing; both are correct)
    # a run that is not killed cleans up what killed ones left behind
    assert run(["trim", str(big), "-n", "2", "-o", str(target)]).returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["big.json", "out.json"]
