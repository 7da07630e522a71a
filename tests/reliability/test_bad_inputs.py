"""Every command over a corpus of bad inputs: one clear line, exit 2, nothing written, nothing touched.

The corpus is ``tests/bad_inputs/`` (small files, committed byte for byte: see its
``.gitattributes``) plus cases made here: a 100 MB single line, and files that grow,
shrink, disappear or are replaced while they are being read. ``tests/bad_inputs/valid/``
holds inputs that look wrong but are valid JSON conversations (Windows line endings,
duplicate keys, a tool result whose call is missing, deep but parseable nesting): those
must give a correct result, checked at the end of this file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES
from typer.testing import CliRunner, Result

from ctxmgr.cli import app
from ctxmgr.files import _reading as reading

CORPUS = Path(__file__).resolve().parents[1] / "bad_inputs"
VALID = CORPUS / "valid"
MANAGER = f"{SAMPLES / 'managers' / 'keep_last.py'}:KeepLastMessages"

# What must follow "error: FILE" on the one line of standard error (a regular
# expression): the line and column wherever the problem has one.
EXPECTED: dict[str, str] = {
    "content-number.json": r": looks like an openai-chat file: messages\[0\]\.content: expected a string, null "
    r"or a list of parts, got a number \(use --from to name another format\)",
    "content-string-native.json": r": looks like a native file: context\[0\]\.content: expected a list of content "
    r"blocks, got a string",
    "control-character.json": r":1:48: invalid JSON: unexpected control character in string",
    "dataset-line-not-a-conversation.jsonl": r":2: not a conversation \(every line of a dataset must be one\)",
    "deep-nesting.json": r":1:\d+: invalid JSON: depth limit exceeded",
    "empty.json": r": empty file, expected a JSON conversation",
    "float-beyond-precision.json": r":1:125: number 0\.1000000000000000000001 would be read as 0\.1 ",
    "float-overflow.json": r":1:102: invalid JSON: number is infinity when parsed as double",
    "float-underflow.json": r":1:104: number 1e-400 would be read as 0\.0 ",
    "infinity.json": r":4:55: invalid JSON: unexpected character",
    "integer-beyond-64-bits-line2.jsonl": r":2:53: integer -9223372036854775809 is beyond 64 bits",
    "integer-beyond-64-bits.json": r":1:98: integer 18446744073709551616 is beyond 64 bits",
    "invalid-utf8-line3.jsonl": r":3:33: not valid UTF-8 text",
    "invalid-utf8.json": r":1:60: not valid UTF-8 text",
    "lone-surrogate.json": r":1:62: invalid JSON: no low surrogate in string",
    "mixed-formats-dataset.jsonl": r":2: this line is gemini but the first line is openai-chat",
    "mixed-formats-messages.jsonl": r":2: looks like an openai-chat file: role: unknown role 'model' "
    r".*\(use --from to name another format",
    "nan.json": r":1:103: invalid JSON: unexpected character",
    "nul-byte.json": r":1:45: binary data \(NUL byte\)",
    "null.json": r": not a conversation in any known format",
    "text-block-number.json": r": looks like a native file: \[0\]\.content\[0\]\.text: Input should be a valid string",
    "tool-calls-not-a-list.json": r": looks like an openai-chat file: messages\[1\]\.tool_calls: expected a list, "
    r"got a string",
    "trailing-garbage.json": r":13:1: invalid JSON: unexpected content after document",
    "truncated-dataset.jsonl": r":3:50: invalid JSON: unexpected end of data",
    "unknown-format.json": r": not a conversation in any known format",
    "utf8-bom.json": r":1:1: starts with a UTF-8 byte-order mark; save the file as UTF-8 without BOM",
    "whitespace-only.json": r": empty file, expected a JSON conversation",
}

NO_CONVERSATION = ("null.json", "unknown-format.json")
"""Bad inputs that are valid JSON of no conversation format: skipped when a walk finds them."""

HUGE_LINE_BYTES = 100 * 1024 * 1024
"""The generated single-line file: a conversation cut off after 100 MB of one message."""

CHANGED = r": changed while being read; run again when it is no longer being written"
GONE = r": disappeared while being read"


def _grow(path: Path) -> None:
    with open(path, "ab") as handle:  # another program appending
        handle.write(b'{"messages": [{"role": "user", "content": "appended"}]}\n')


def _shrink(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)  # an editor halfway through saving


def _delete(path: Path) -> None:
    path.unlink()


def _replace(path: Path) -> None:
    other = path.with_name("replacement.tmp")
    other.write_bytes(b'{"messages": [{"role": "user", "content": "someone else\'s version"}]}\n')
    os.replace(other, path)  # a tool that saves atomically, like ctxmgr


@dataclass(frozen=True)
class Live:
    """A valid file that something else changes right after ctxmgr starts reading it."""

    sample: str
    action: Callable[[Path], None]
    expected: str


LIVE: dict[str, Live] = {
    "grown-while-read.json": Live("support-chat.json", _grow, CHANGED),
    "grown-while-read-dataset.jsonl": Live("booking-chat.jsonl", _grow, CHANGED),
    "shrunk-while-read.json": Live("openai-chat.json", _shrink, CHANGED),
    "deleted-while-read.json": Live("gemini.json", _delete, GONE),
    "replaced-while-read.json": Live("anthropic.json", _replace, CHANGED),
}

GENERATED: dict[str, str] = {"huge-single-line.json": r":1:\d{9}: invalid JSON: unexpected end of data"}

CASES = sorted([*EXPECTED, *GENERATED, *LIVE])

COMMANDS: dict[str, list[str]] = {
    "trim": ["trim", "-n", "1"],
    "summarize": ["summarize", "--model", "offline", "--max-messages", "1", "--keep-recent", "1"],
    "convert": ["convert", "--to", "openai-chat"],
    "validate": ["validate"],
    "stats": ["stats"],
    "run": ["run", "--manager", MANAGER, "--option", "count=1"],
}
WRITING = ("trim", "summarize", "convert", "run")
OUTPUTS: dict[str, list[str]] = {"stdout": [], "-o FILE": ["-o", "out.json"], "--in-place": ["--in-place"]}

runner = CliRunner()


def test_the_corpus_and_the_expectations_match() -> None:
    files = sorted(p.name for p in CORPUS.iterdir() if p.is_file() and not p.name.startswith("."))
    assert files == sorted(EXPECTED)
    assert not set(EXPECTED) & (set(GENERATED) | set(LIVE))


# -- making each case -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def huge_line(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One line of 100 MB: a message whose text never ends (made once per session)."""
    path = tmp_path_factory.mktemp("huge") / "huge-single-line.json"
    start = b'{"messages": [{"role": "user", "content": "'
    with open(path, "wb") as handle:
        handle.write(start)
        block = b"All work and no play makes Jack a dull boy. " * 1024
        remaining = HUGE_LINE_BYTES - len(start)
        while remaining > 0:
            handle.write(block[:remaining])
            remaining -= len(block)
    return path


def _digest(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _make(case: str, folder: Path, huge_line: Path) -> Path:
    path = folder / case
    if case in GENERATED:
        os.link(huge_line, path)  # no 100 MB copy per test; the digest shows any change
    elif case in LIVE:
        shutil.copyfile(SAMPLES / LIVE[case].sample, path)
    else:
        shutil.copyfile(CORPUS / case, path)
    # An old file, as inputs usually are: a change made now always moves its time.
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


@pytest.fixture
def changes_while_read(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path, Callable[[Path], None]], None]:
    """Run ``action(path)`` right after ctxmgr has read the first chunk of ``path``."""

    def arm(path: Path, action: Callable[[Path], None]) -> None:
        original = reading.read_head
        fired = False

        def read_head(handle: Any, name: str) -> bytes:
            nonlocal fired
            head = original(handle, name)
            if not fired and os.path.abspath(name) == str(path):
                fired = True
                action(path)
            return head

        monkeypatch.setattr(reading, "read_head", read_head)

    return arm


def _state(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the digest of its bytes."""
    return {str(p.relative_to(folder)): _digest(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_one_error_line(result: Result, name: str, expected: str) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {name}"), lines[0]
    assert re.match(expected, lines[0][len(f"error: {name}") :]), (lines[0], expected)


def _runs(command: str) -> Iterator[tuple[str, list[str]]]:
    if command in WRITING:
        yield from OUTPUTS.items()
    else:
        yield "", []


# -- the matrix ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", CASES)
def test_every_command_refuses_every_bad_input_cleanly(
    case: str,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    huge_line: Path,
    changes_while_read: Callable[[Path, Callable[[Path], None]], None],
) -> None:
    expected = EXPECTED.get(case) or GENERATED.get(case) or LIVE[case].expected
    for mode, flags in _runs(command):
        folder = tmp_path / (mode.replace(" ", "_").strip("-") or "read")
        folder.mkdir()
        monkeypatch.chdir(folder)
        path = _make(case, folder, huge_line)
        if case in LIVE:
            changes_while_read(path, LIVE[case].action)
        before = _state(folder)
        result = runner.invoke(app, [*COMMANDS[command], case, *flags])
        assert result.exit_code == 2, (mode, result.stdout, result.stderr)
        assert_one_error_line(result, case, expected)
        assert result.stdout_bytes == b"", mode  # no data, not even a header, for any command
        if case in LIVE:
            # What the other program left, untouched by ctxmgr; nothing else appeared.
            assert sorted(_state(folder)) == ([] if LIVE[case].action is _delete else [case])
        else:
            assert _state(folder) == before, mode  # input byte for byte; no file created


# -- a whole folder of bad inputs, in real processes ----------------------------------------------


def _ctxmgr(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxmgr", *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "corpus"],
        ["stats", "corpus"],
        ["trim", "-n", "1", "--in-place", "corpus"],
        ["convert", "--to", "openai-chat", "-o", "converted", "corpus"],
        ["summarize", "--model", "offline", "--max-messages", "1", "--json", "corpus"],
    ],
    ids=lambda a: a[0],
)
def test_a_folder_of_bad_inputs_in_a_subprocess(tmp_path: Path, args: list[str]) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in EXPECTED:
        shutil.copyfile(CORPUS / name, corpus / name)
    before = _state(tmp_path)
    proc = _ctxmgr(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    # A walk skips (and names) what is valid JSON of no conversation format at all; the
    # commands that write end with their closing line.
    skipped = [line for line in lines if line.startswith("skipped: ")]
    assert skipped == [
        f"skipped: {os.path.join('corpus', name)} (valid JSON of no conversation format)" for name in NO_CONVERSATION
    ]
    failing = sorted(set(EXPECTED) - set(NO_CONVERSATION))
    if args[0] in ("trim", "convert", "summarize"):
        assert lines[-1] == f"{len(failing)} files: {len(failing)} failed; {len(NO_CONVERSATION)} skipped"
        lines = lines[:-1]
    lines = [line for line in lines if not line.startswith("skipped: ")]
    assert len(lines) == len(failing), proc.stderr  # one line per file, nothing else
    for line, name in zip(lines, failing, strict=True):
        prefix = f"error: {os.path.join('corpus', name)}"
        assert line.startswith(prefix), (line, prefix)
        assert re.match(EXPECTED[name], line[len(prefix) :]), (line, EXPECTED[name])
    if "--json" in args:
        report = json.loads(proc.stdout)
        assert [f["errors"] for f in report["files"]] == [[line.removeprefix("error: ")] for line in lines]
        assert report["totals"]["failed"] == len(failing)
    else:
        assert proc.stdout == ""
    assert _state(tmp_path) == before  # nothing rewritten, no file or folder created
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


# -- inputs that look wrong but are valid: a correct result -----------------------------------------


def _texts(conversation: Any) -> list[str]:
    messages = conversation["messages"] if isinstance(conversation, dict) else conversation
    return [m["content"] for m in messages]


def _records(data: bytes, name: str) -> list[Any]:
    return [json.loads(line) for line in data.splitlines()] if name.endswith(".jsonl") else [json.loads(data)]


def _invoke(*args: str) -> Result:
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stderr
    return result


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "summarize"])
def test_windows_line_endings_are_read_and_kept(command: str, tmp_path: Path) -> None:
    """CRLF is valid JSON whitespace; a rewritten file keeps CRLF (no whole-file diff)."""
    for name in ("crlf.json", "crlf-dataset.jsonl"):
        path = tmp_path / name
        shutil.copyfile(VALID / name, path)
        result = _invoke(*COMMANDS[command], str(path))
        assert result.exit_code == 0, result.stderr
        if command in ("validate", "stats"):
            continue
        out = result.stdout_bytes
        assert out.count(b"\n") == out.count(b"\r\n") > 0, out[:200]
        records = _records(out, name)
        if command == "convert":  # nothing dropped
            inputs = _records((VALID / name).read_bytes(), name)
            assert [_texts(r) for r in records] == [_texts(r) for r in inputs]
        elif name == "crlf.json":
            assert _texts(records[0])[-1] == "3"
            assert len(_texts(records[0])) < 7
        else:
            kept = [[f"b{i}"] if command == "run" else [f"r{i}", f"b{i}"] for i in range(3)]  # count=1 vs -n 1
            assert [_texts(r) for r in records] == kept


def test_windows_line_endings_survive_an_in_place_summary(tmp_path: Path) -> None:
    path = tmp_path / "crlf.json"
    shutil.copyfile(VALID / "crlf.json", path)
    result = _invoke("summarize", "--model", "offline", "--max-messages", "2", "--keep-recent", "2", "-i", str(path))
    assert result.exit_code == 0, result.stderr
    data = path.read_bytes()
    assert data != (VALID / "crlf.json").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n")
    assert _texts(json.loads(data))[-2:] == ["three", "3"]


def test_duplicate_keys_keep_the_last_value_like_every_json_parser(tmp_path: Path) -> None:
    path = tmp_path / "duplicate-keys.json"
    shutil.copyfile(VALID / "duplicate-keys.json", path)
    for args in (COMMANDS["trim"], COMMANDS["convert"], ["run", "--manager", MANAGER]):
        result = _invoke(*args, str(path))
        assert result.exit_code == 0, result.stderr
        assert _texts(json.loads(result.stdout_bytes)) == ["final question", "answer"]
    assert _invoke("validate", str(path)).exit_code == 0


def test_nesting_deeper_than_the_writer_allows_is_still_written_back(tmp_path: Path) -> None:
    """orjson reads 1024 levels but writes 254: such a file must not crash on output."""
    for name in ("deep-but-parseable.json", "deep-but-parseable-dataset.jsonl"):  # both reading paths
        path = tmp_path / name
        shutil.copyfile(VALID / name, path)
        original = _records(path.read_bytes(), name)
        for command in ("trim", "convert", "run"):
            result = _invoke(*COMMANDS[command], str(path))
            assert result.exit_code == 0, result.stderr
            out = _records(result.stdout_bytes, name)
            assert [o["messages"][-1]["extra"] for o in out] == [r["messages"][-1]["extra"] for r in original]
        for command in ("validate", "stats"):
            assert _invoke(*COMMANDS[command], str(path)).exit_code == 0


ORPHAN_WARNING = "message 1: tool result for call 'call_unknown' has no earlier matching call"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_tool_result_without_its_call(command: str, tmp_path: Path) -> None:
    """Compacting commands succeed (they do not make it worse) and warn; validate exits 1."""
    path = tmp_path / "orphan.json"
    shutil.copyfile(VALID / "orphan-tool-result.json", path)
    keep_all = {  # settings that keep the orphan in the output
        "trim": ["trim", "-n", "5"],
        "summarize": ["summarize", "--model", "offline"],
        "run": ["run", "--manager", MANAGER, "--option", "count=9"],
    }
    result = _invoke(*keep_all.get(command, COMMANDS[command]), str(path))
    if command == "validate":
        assert result.exit_code == 1
        assert result.stdout == f"{path}: {ORPHAN_WARNING} (rejected by every provider)\n"
    elif command == "stats":
        assert result.exit_code == 0
    else:
        assert result.exit_code == 0, result.stderr
        assert result.stderr == f"warning: {path}: {ORPHAN_WARNING}\n"
        assert "call_unknown" in result.stdout
    assert path.read_bytes() == (VALID / "orphan-tool-result.json").read_bytes()


def test_strict_fails_only_when_the_output_keeps_the_orphan(tmp_path: Path) -> None:
    path = tmp_path / "orphan.json"
    shutil.copyfile(VALID / "orphan-tool-result.json", path)
    kept = _invoke("trim", "-n", "2", "--strict", str(path))
    assert kept.exit_code == 1
    assert kept.stdout_bytes == b""  # an output that breaks the rules is not written
    assert kept.stderr == f"error: {path}: {ORPHAN_WARNING}\n"
    in_place = _invoke("trim", "-n", "2", "--strict", "--in-place", str(path))
    assert in_place.exit_code == 1
    assert path.read_bytes() == (VALID / "orphan-tool-result.json").read_bytes()
    cut = _invoke("trim", "-n", "1", "--strict", str(path))  # the orphan is trimmed away
    assert cut.exit_code == 0, cut.stderr
    assert cut.stderr == ""
    assert _texts(json.loads(cut.stdout_bytes)) == ["q1", "a1"]


def test_a_valid_100_mb_single_line_is_processed(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    text = "x" * HUGE_LINE_BYTES
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "first"}, {"role": "user", "content": text}]}))
    result = _invoke("trim", "-n", "1", str(path), "-o", str(tmp_path / "out.json"))
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "out.json").read_bytes()) == {"messages": [{"role": "user", "content": text}]}


def test_a_jsonl_message_list_trimmed_to_one_line_reads_back(tmp_path: Path) -> None:
    """One line is still JSONL when the file is named .jsonl (found by the fuzz test)."""
    path = tmp_path / "chat.jsonl"
    path.write_text(
        '{"role": "user", "parts": [{"text": "a"}]}\n{"role": "model", "parts": [{"text": "b"}]}\n'
        '{"role": "user", "parts": [{"text": "c"}]}\n'
    )
    assert _invoke("trim", "-n", "1", "--in-place", str(path)).exit_code == 0
    assert path.read_text() == '{"role":"user","parts":[{"text":"c"}]}\n'
    for command in COMMANDS:
        result = _invoke(*COMMANDS[command], str(path))
        assert result.exit_code == 0, (command, result.stderr)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"messages": [{"role": "user", "content": 42}]}, "messages[0].content: expected a string, null or a list"),
        ({"contents": [{"role": "user", "parts": "x"}]}, "contents[0].parts: expected a list of parts"),
        ({"input": [{"role": "user", "content": 5}]}, "input[0].content: expected a string or a list of parts"),
        ([{"role": "user", "content": 5}], "[0].content: expected a string, null or a list of parts"),
        (
            {"system": "s", "messages": [{"role": "user", "content": 5}]},
            "looks like an anthropic file: messages[0].content",
        ),
    ],
)
def test_an_unrecognised_conversation_is_explained_by_its_closest_format(
    tmp_path: Path, value: Any, expected: str
) -> None:
    """Not "no known format" but the broken field, from the format the shape points to."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(value))
    result = CliRunner().invoke(app, ["trim", str(path)])
    assert result.exit_code == 2
    line = " ".join(result.output.split())
    assert expected in line
    assert "looks like a" in line
    assert "(use --from to name another format)" in line
    assert "any known format" not in line
