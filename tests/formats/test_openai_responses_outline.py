"""The openai-responses outline: what it accepts, the full reader reads and the writer writes the same.

The outline reports one entry per model message (the reader groups a turn's items, and
reads ``instructions`` as a leading system message), and ``rebuild(kept)`` must give the
writer's items for the kept messages. The path tests run ``compact_file`` both ways on
generated datasets and documents full of near-misses and compare everything it reports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored, scripts, trim, trim_document_both_ways, trim_rows_both_ways
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr import formats
from ctxmgr.errors import InputError
from ctxmgr.formats._base import SUMMARY_HEADER
from ctxmgr.formats._detection.openai_responses import outline
from ctxmgr.state import MessageContextManager, message_units
from ctxmgr.state._tools import call_ids, result_ids

NAME = "openai-responses"
TAU = Path(__file__).resolve().parents[2] / "bench" / "tau" / "tau-airline-gpt4o.jsonl"

# Files cannot hold lone surrogates: the in-memory tests add them (SURROGATES).
SCRIPTS = scripts(6)
SURROGATES = st.builds(
    lambda text, lone: text + lone,
    SCRIPTS,
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=None), max_size=2),
)
HEADERS = st.sampled_from(
    [SUMMARY_HEADER + "\nearlier", "rules\n\n" + SUMMARY_HEADER + "\nearlier", "see " + SUMMARY_HEADER]
)
# Values of every JSON type, some right for a field and some wrong.
ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["", "a", "call_1", "user"]),
    st.just([]),
    st.just(["x"]),
    st.just({}),
    st.just({"k": "é"}),
)
# Ids repeat now and then (the rules then send the line to the full path, for the warning).
IDS = st.sampled_from([f"call_{i}" for i in range(1, 9)])
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 9), st.floats(-9, 9, allow_nan=False), SCRIPTS),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(SCRIPTS, inner, max_size=2)),
    max_leaves=4,
)

# -- sound items: what the outline should take ---------------------------------------------

TEXT_PART = st.builds(
    lambda kind, text: {"type": kind, "text": text}, st.sampled_from(["input_text", "output_text"]), SCRIPTS
)
GOOD_PART = st.one_of(
    TEXT_PART,
    TEXT_PART,
    TEXT_PART,
    TEXT_PART.map(lambda part: {**part, "annotations": [{"type": "url_citation", "url": "https://x"}]}),
    st.builds(lambda text: {"type": "refusal", "refusal": text}, SCRIPTS),
    st.just({"type": "input_image", "detail": "auto", "image_url": "https://x/y.png"}),
    st.just({"type": "input_image", "image_url": "data:image/png;base64,AAA"}),
    st.just({"type": "input_file", "file_id": "file_1", "filename": "a.pdf"}),
    st.just({"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}}),
)
OUTPUTS = st.one_of(
    SCRIPTS,
    SCRIPTS,
    st.lists(st.fixed_dictionaries({"type": st.just("input_text"), "text": SCRIPTS}), max_size=2),
    st.lists(st.one_of(st.just({"type": "input_image", "image_url": "u"}), JSON), max_size=2),
    st.dictionaries(SCRIPTS, SCRIPTS, max_size=2),
    JSON,
)


KINDS = (
    *["user"] * 6,
    *["assistant"] * 4,
    "system",
    "developer",
    *["function_call"] * 4,
    *["function_call_output"] * 4,
    *["custom_tool_call", "custom_tool_call_output", "reasoning", "reasoning", "web_search_call", "item_reference"],
)


@st.composite
def sound_item(draw: st.DrawFn, kinds: tuple[str, ...] = KINDS) -> dict[str, Any]:
    kind = draw(st.sampled_from(kinds))
    if kind in ("user", "assistant", "system", "developer"):
        content = draw(st.one_of(SCRIPTS, SCRIPTS, st.lists(GOOD_PART, max_size=3)))
        item: dict[str, Any] = {"type": "message", "role": kind, "content": content}
        if draw(st.integers(0, 3)) == 0:
            del item["type"]  # an easy input message
        elif draw(st.integers(0, 2)) == 0:
            item.update(id="msg_1", status="completed")
        return item
    if kind in ("function_call", "custom_tool_call"):
        item = {"type": kind, "call_id": draw(IDS), "name": draw(st.sampled_from(["lookup", "get_user_details"]))}
        if kind == "custom_tool_call":
            if draw(st.booleans()):
                item["input"] = draw(st.one_of(SCRIPTS, JSON))
        elif draw(st.integers(0, 9)):
            item["arguments"] = draw(st.one_of(st.just("{}"), SCRIPTS, JSON))
        elif draw(st.booleans()):
            item["action"] = draw(JSON)  # no arguments: the reader takes the action
        if draw(st.booleans()):
            item.update(id="fc_1", status="completed")
        return item
    if kind.endswith("_output"):
        item = {"type": kind}
        if draw(st.integers(0, 15)):
            item["call_id"] = draw(st.one_of(IDS, IDS, IDS, st.just("")))
        if draw(st.integers(0, 15)):
            item["output"] = draw(OUTPUTS)
        return item
    if kind == "reasoning":
        summary = draw(st.lists(st.fixed_dictionaries({"type": st.just("summary_text"), "text": SCRIPTS}), max_size=2))
        item = {"type": "reasoning", "id": "rs_1", "summary": summary}
        if draw(st.booleans()):
            item["encrypted_content"] = "gAAA"
        return item
    return {"type": kind, "id": "x_1", "status": "completed"}


# -- near-misses: what the full reader rejects, warns about or reads otherwise -------------


MESSAGE = sound_item(("user", "assistant", "system", "developer"))
CALL = sound_item(("function_call", "custom_tool_call"))
OUTPUT = sound_item(("function_call_output", "custom_tool_call_output"))


@st.composite
def near_miss(draw: st.DrawFn) -> Any:
    """An item, or a change to a sound one, that the outline must decline or read exactly."""
    change = draw(st.integers(0, 15))
    if change == 0:
        return draw(st.one_of(ANY, st.just({"status": "x"}), st.just({"type": 3})))
    if change == 1:
        return {"type": draw(st.sampled_from(["mystery", "computer_call", "mcp_approval_request"])), "id": "x"}
    if change == 2:
        return {"type": "reasoning", "id": "rs_2", "summary": []}  # may be left with nothing to belong to
    if change == 3:
        return {"type": "computer_call_output", "call_id": draw(IDS), "output": {"type": "computer_screenshot"}}
    if change <= 9:
        return _message_miss(draw, draw(MESSAGE), change)
    if change <= 11:
        item = draw(CALL)
        if change == 10:
            return {**item, "call_id": draw(st.one_of(st.just(""), ANY))}
        return {**item, "name": draw(ANY)}
    item = draw(OUTPUT)
    if change == 12:
        return {**item, "output": draw(st.one_of(HEADERS, st.dictionaries(st.just("k"), HEADERS, min_size=1)))}
    if change == 13:
        return {**item, "output": [{"type": "input_text", "text": draw(HEADERS)}, {"type": "input_text", "text": "x"}]}
    if change == 14:
        return {**item, "call_id": draw(ANY)}
    return {**item, "message_id": "m1"}  # a native sign


def _message_miss(draw: st.DrawFn, item: dict[str, Any], change: int) -> dict[str, Any]:
    if change == 4:
        return {**item, "role": draw(st.one_of(st.sampled_from(["tool", "model"]), ANY))}
    if change == 5:
        return {**item, "content": draw(ANY)}
    if change == 6:
        odd = st.one_of(
            st.just({"type": "text", "text": "t"}),
            st.just({"type": "mystery"}),
            st.just({"type": "refusal", "refusal": "no", "text": "t"}),
            st.just({"type": "input_image", "image_url": "u", "text": "t"}),
            st.builds(lambda value: {"type": "input_text", "text": value}, ANY),
            ANY,
        )
        return {**item, "content": draw(st.lists(st.one_of(GOOD_PART, odd), min_size=1, max_size=3))}
    if change == 7:
        if draw(st.booleans()):
            return {**item, "content": draw(HEADERS)}
        return {**item, "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": draw(HEADERS)}]}
    if change == 8:
        cut = draw(st.integers(1, len(SUMMARY_HEADER) - 1))
        halves = [SUMMARY_HEADER[:cut], SUMMARY_HEADER[cut:] + "\nx"]
        return {**item, "content": [{"type": "input_text", "text": half} for half in halves]}
    key = draw(st.sampled_from(["name", "tool_calls", "message_id", "parts", "refusal", "tools_calls"]))
    return {**item, key: draw(st.sampled_from(["ctxmgr_summary", "bob", []]))}


@st.composite
def conversation(draw: st.DrawFn) -> Any:
    """A request (sometimes a bare list, rarely something else) of sound items, now and
    then with a near-miss among them."""
    items = draw(st.lists(sound_item(), min_size=1, max_size=12))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2]))):
        items.insert(draw(st.integers(0, len(items))), draw(near_miss()))
    shape = draw(st.integers(0, 29))
    if shape < 20:
        value: dict[str, Any] = {"id": 7, "input": items}
        if draw(st.booleans()):
            value["instructions"] = draw(st.one_of(st.just("be brief"), SCRIPTS, SCRIPTS, HEADERS, ANY))
        if draw(st.integers(0, 2)) == 0:
            value["model"] = "gpt-4o"
        if shape == 19:
            value[draw(st.sampled_from(["messages", "role", "context", "system"]))] = "x"
        return value
    if shape == 20:
        return {"input": draw(st.one_of(SCRIPTS, ANY)), "model": "gpt-4o"}
    if shape == 21:
        return {"object": "response", "output": items}
    if shape == 22:
        return {"input": [], "instructions": "x"}
    return items  # a bare list


FIRST = {"input": [{"type": "message", "role": "user", "content": "hi"}], "id": 0}


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversation(), min_size=1, max_size=5), keep=st.integers(0, 3), remove_tools=st.booleans())
def test_fast_and_full_paths_agree_on_datasets(tmp_path: Path, rows: list[Any], keep: int, remove_tools: bool) -> None:
    # A plain first line settles the format: the other lines are the ones under test (not
    # detected on the fast path; test_first_lines_agree covers the first line itself).
    trim_rows_both_ways(
        tmp_path, [FIRST, *rows], MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools)
    )


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversation(), min_size=1, max_size=3), keep=st.integers(0, 3), remove_tools=st.booleans())
def test_first_lines_agree(tmp_path: Path, rows: list[Any], keep: int, remove_tools: bool) -> None:
    """The first line may settle the dataset's format on the fast path: same result."""
    trim_rows_both_ways(tmp_path, rows, MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools))


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=conversation(), pretty=st.booleans(), keep=st.integers(0, 3), remove_tools=st.booleans())
def test_documents_agree(tmp_path: Path, value: Any, pretty: bool, keep: int, remove_tools: bool) -> None:
    trim_document_both_ways(
        tmp_path, value, MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools), pretty=pretty
    )


PLAIN_TEXT = st.one_of(SCRIPTS, SURROGATES)


@st.composite
def plain_item(draw: st.DrawFn) -> dict[str, Any]:
    """An item the outline takes, with every counted field in varied shapes (in memory: lone
    surrogates too)."""
    kind = draw(st.sampled_from(["message"] * 3 + ["function_call", "custom_tool_call", "output", "reasoning"]))
    if kind == "message":
        text_part = st.builds(
            lambda k, t: {"type": k, "text": t}, st.sampled_from(["input_text", "output_text"]), PLAIN_TEXT
        )
        part = st.one_of(text_part, text_part, st.builds(lambda t: {"type": "refusal", "refusal": t}, PLAIN_TEXT))
        content = draw(st.one_of(PLAIN_TEXT, st.lists(part, max_size=3)))
        item = {"role": draw(st.sampled_from(["user", "assistant", "system", "developer"])), "content": content}
        return {"type": "message", **item} if draw(st.booleans()) else item
    if kind == "function_call":
        arguments = draw(st.one_of(PLAIN_TEXT, JSON))
        return {
            "type": "function_call",
            "call_id": draw(IDS),
            "name": draw(PLAIN_TEXT),
            "arguments": arguments,
        }
    if kind == "custom_tool_call":
        return {"type": "custom_tool_call", "call_id": draw(IDS), "name": "f", "input": draw(PLAIN_TEXT)}
    if kind == "output":
        output = draw(
            st.one_of(
                PLAIN_TEXT,
                st.lists(st.fixed_dictionaries({"type": st.just("input_text"), "text": PLAIN_TEXT}), max_size=2),
                JSON,
            )
        )
        return {"type": "function_call_output", "call_id": draw(IDS), "output": output}
    return {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": draw(PLAIN_TEXT)}]}


PLAIN = st.lists(plain_item(), min_size=1, max_size=8).map(lambda items: {"input": items, "instructions": "be kind"})


def _read(value: Any) -> Any:
    try:
        return formats.load_value(value, source="x", layout="document", fmt=NAME)
    except InputError:
        return None


@explored(max_examples=150, deadline=None)
@given(st.one_of(conversation(), PLAIN))
def test_outline_units_are_the_readers_message_units(value: Any) -> None:
    """Token reports from the fast path: each message's counted units, exactly, in any script."""
    found = outline(value)
    if found is None:
        return
    read = _read(value)
    assert read is not None, "the outline took a value the full reader rejects"
    assert found.units() == [message_units(m) for m in read.state.context]
    # ... and characters, as a token budget's report counts them
    from ctxmgr.state._compaction import _chars

    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, read.state.context))


@explored(max_examples=150, deadline=None)
@given(st.one_of(conversation(), PLAIN), st.data())
def test_one_entry_per_model_message_and_rebuild_is_the_writers_output(value: Any, data: st.DataObject) -> None:
    found = outline(value)
    if found is None:
        return
    read = _read(value)
    assert read is not None, "the outline took a value the full reader rejects"
    assert not read.warnings
    assert read.state.context_summary is None
    context = read.state.context
    assert found.roles == [m.role for m in context]
    assert found.calls == [tuple(call_ids(m)) for m in context]
    assert [bool(c) for c in found.calls] == [bool(m.tools_calls) for m in context]  # the trim rule's flag
    assert found.results == [tuple(result_ids(m)) for m in context]
    assert formats.detect_name(value, source="x") == NAME
    # Any kept messages, in the order a trim gives them (system messages first).
    chosen = sorted(data.draw(st.sets(st.integers(0, len(context) - 1))))
    kept = [i for i in chosen if context[i].role == "system"] + [i for i in chosen if context[i].role != "system"]
    read.state.context = [context[i] for i in kept]
    written = formats.adapter(NAME).write(read)
    rebuilt = found.rebuild(kept)
    assert rebuilt == written
    assert json.dumps(rebuilt) == json.dumps(written)  # key order too
    assert found.rebuild(list(range(len(context)))) == value


def test_it_groups_items_into_model_messages() -> None:
    items = [
        {"type": "message", "role": "developer", "content": "rules"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "looking"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "one"},
        {"type": "item_reference", "id": "ref_1"},  # travels with the next item's message
        {"type": "function_call_output", "call_id": "c2", "output": "two"},
        {"type": "message", "role": "assistant", "content": "done"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    ]
    value = {"model": "gpt-5", "instructions": "be brief", "input": items, "store": False}
    found = outline(value)
    assert found is not None
    assert found.roles == ["system", "system", "user", "assistant", "tool", "tool", "assistant"]
    assert found.calls == [(), (), (), ("c1", "c2"), (), (), ()]
    assert found.results == [(), (), (), (), ("c1",), ("c2",), ()]
    # 'instructions' stays where it is; a turn's items and a pass-through item go together.
    assert found.rebuild([0, 1, 5, 6]) == {**value, "input": [items[0], *items[7:]]}
    assert found.rebuild([2, 3]) == {**value, "input": items[1:6]}
    assert found.rebuild([]) == {**value, "input": []}
    bare = outline(items)
    assert bare is not None
    assert bare.roles == found.roles[1:]
    assert bare.rebuild([0]) == [items[0]]


def test_it_declines_what_the_full_reader_treats_specially() -> None:
    user = {"type": "message", "role": "user", "content": "hi"}
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    assert outline({"input": [user, call]}) is not None
    # Reasoning beside an empty text belongs to a message (the rules have nothing to say).
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    assert outline({"input": [user, reasoning, {"type": "message", "role": "assistant", "content": ""}]}) is not None
    declined: list[Any] = [
        {"input": []},  # empty: let detection decide
        {"input": "a string input"},
        {"object": "response", "output": [user]},  # a stored response (no dataset line)
        user,  # one item
        {"input": [user], "role": "user"},  # chat reads it too
        {"input": [user], "messages": []},
        {"input": [{"role": "user", "content": "hi", "tool_calls": []}]},  # chat's key: detection says no
        {"input": [{**user, "role": "tool"}]},  # the reader rejects the role
        {"input": [{**user, "role": ["user"]}]},
        {"input": [{**user, "content": None}]},
        {"input": [{**user, "content": [{"type": "text", "text": "hi"}]}]},  # a part detection does not count
        {"input": [{**user, "content": [{"type": "mystery"}]}]},
        {"input": [{**user, "content": [{"type": "refusal", "refusal": "no", "text": "x"}]}]},
        {"input": [user, {**call, "call_id": ""}]},  # an empty id: a call the rules cannot see
        {"input": [user, {**call, "name": None}]},
        {"input": [user, {"type": "computer_call", "call_id": "c1", "action": {}}]},
        {"input": [user, {"type": "function_call_output", "call_id": 5, "output": "x"}]},
        {"input": [user, {"type": "reasoning", "id": "rs_1", "summary": []}]},  # nothing to belong to
        {"input": [user, {"type": "mystery"}]},
        {"input": [user, {"type": 3}]},
        {"input": [user, "text"]},
        [{"role": "user", "content": "hi"}],  # a bare list chat reads first
    ]
    for value in declined:
        assert outline(value) is None, value


def _tau_in_responses() -> list[bytes]:
    lines = []
    for raw in TAU.read_bytes().splitlines():
        conversation = formats.load_value(orjson.loads(raw), source=str(TAU), layout="document")
        lines.append(formats.dump(conversation, to=NAME).rstrip(b"\n"))
    return lines


@pytest.fixture(scope="module")
def tau_lines() -> list[bytes]:
    return _tau_in_responses()


def test_the_real_conversations_take_the_outline(tau_lines: list[bytes]) -> None:
    accepted = [outline(orjson.loads(line)) is not None for line in tau_lines]
    assert len(accepted) == 200
    assert sum(accepted) / len(accepted) >= 0.95


def test_the_real_dataset_takes_the_fast_path(tmp_path: Path, tau_lines: list[bytes]) -> None:
    from ctxmgr.files import _compaction

    data = tmp_path / "tau.jsonl"
    data.write_bytes(b"\n".join(tau_lines) + b"\n")
    full_lines = 0
    full_line = _compaction._full_line

    async def counted(*args: Any, **kwargs: Any) -> bytes:
        nonlocal full_lines
        full_lines += 1
        return await full_line(*args, **kwargs)

    manager = MessageContextManager(2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_compaction, "_full_line", counted)
        fast, fast_out = trim(data, tmp_path / "fast.jsonl", manager, True)
    assert full_lines <= 0.05 * len(tau_lines)  # a line that reuses a call id goes the full way
    full, full_out = trim(data, tmp_path / "full.jsonl", manager, False)
    assert fast_out == full_out
    assert fast.warnings == full.warnings
    assert (fast.changed_conversations, fast.messages_after, fast.tokens_after) == (
        full.changed_conversations,
        full.messages_after,
        full.tokens_after,
    )


def test_a_responses_trim_imports_no_pydantic_and_no_reader(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    items = [{"type": "message", "role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(6)]
    request.write_bytes(orjson.dumps({"model": "gpt-5", "instructions": "be brief", "input": items}))
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('LOADED=' + str(sorted(m for m in sys.modules"
        " if m.split('.')[0] == 'pydantic' or m == 'ctxmgr.formats._openai_responses')) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', 'trim', {str(request)!r}, '-n', '1', '--no-view']\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    trimmed = orjson.loads(proc.stdout)
    assert trimmed["instructions"] == "be brief"
    assert [item["content"] for item in trimmed["input"]] == ["m4", "m5"]
    assert proc.stderr.decode().splitlines()[-1] == "LOADED=[]"


BUDGETS = st.fixed_dictionaries(
    {"max_tokens": st.integers(1, 40)},
    optional={"start_on": st.just("user"), "pin_index": st.lists(st.integers(0, 10), max_size=2)},
)


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversation(), min_size=1, max_size=4), budget=BUDGETS, strict=st.booleans())
def test_token_budgets_agree_on_both_paths(
    tmp_path: Path, rows: list[Any], budget: dict[str, Any], strict: bool
) -> None:
    """``trim --max-tokens`` from the outline: the full path's bytes, warnings, counts and counters."""
    from ctxmgr.state._compose import trim_manager

    trim_rows_both_ways(tmp_path, [FIRST, *rows], trim_manager(None, **budget), strict=strict)


@pytest.mark.parametrize("max_tokens", [2000, 300])
def test_real_conversations_under_a_budget_take_the_fast_path(
    tmp_path: Path, tau_lines: list[bytes], max_tokens: int
) -> None:
    from _fast_paths import trim_both_ways

    from ctxmgr.files import _compaction
    from ctxmgr.state._compose import trim_manager

    data = tmp_path / "tau.jsonl"
    data.write_bytes(b"\n".join(tau_lines) + b"\n")
    full_lines = 0
    full_line = _compaction._full_line

    async def counted(*args: Any, **kwargs: Any) -> bytes:
        nonlocal full_lines
        full_lines += 1
        return await full_line(*args, **kwargs)

    manager = trim_manager(None, max_tokens=max_tokens)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_compaction, "_full_line", counted)
        trim(data, tmp_path / "counted.jsonl", manager, True)
    assert full_lines <= 0.05 * len(tau_lines)
    fast, _ = trim_both_ways(data, manager, tmp_path)
    assert fast.compaction is not None
    assert fast.compaction["messages_dropped"] > 0
