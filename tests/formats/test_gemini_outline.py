"""The Gemini outline: what it accepts, the full reader reads the same, and a trim from it
writes the same bytes, warnings and counts as a trim through the full reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import budget_managers, explored, scripts, trim_both_ways, trim_document_both_ways, trim_rows_both_ways
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr import formats
from ctxmgr._validate import shape_of
from ctxmgr.errors import InputError
from ctxmgr.files import FileResult, Settings
from ctxmgr.formats._base import SUMMARY_HEADER
from ctxmgr.formats._detection.gemini import outline
from ctxmgr.state import MessageContextManager, message_units
from ctxmgr.state._tools import call_ids, result_ids

ROOT = Path(__file__).resolve().parents[2]
TAU = ROOT / "bench" / "tau" / "tau-airline-gpt4o.jsonl"

# Values of every JSON type, some right for a field and some wrong.
ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "a", "user", "model", SUMMARY_HEADER]),
    st.just([]),
    st.just(["x"]),
    st.just({}),
    st.just({"k": 1}),
)
SCRIPTS = scripts(5)
# Mostly plain text; now and then the summary header (at the start, or inside).
TEXTS = st.one_of(
    SCRIPTS,
    SCRIPTS,
    SCRIPTS,
    SCRIPTS,
    st.sampled_from([SUMMARY_HEADER, f"{SUMMARY_HEADER}\n\nearlier", f"x\n\n{SUMMARY_HEADER}\n\nearlier"]),
)
# Names the pairer mints plain ids for, one it rewrites with a hash, and the empty name.
NAMES = st.sampled_from(["lookup", "lookup", "get_user", "book-it", "", "bad name"])
# Ids: real ones (reused on purpose), absent (pairing by name and order), empty, wrong.
IDS = st.sampled_from(["c1", "c2", "c3", "gemini_lookup_0", None, None, "", 5])
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 9), st.floats(-9, 9, allow_nan=False), TEXTS),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.text(max_size=2), inner, max_size=2)),
    max_leaves=4,
)


def _mostly(draw: st.DrawFn, good: st.SearchStrategy[Any]) -> Any:
    """Usually a right value; now and then any value."""
    return draw(good) if draw(st.integers(0, 14)) else draw(ANY)


_DRAW: Any = object()


def _with_id(draw: st.DrawFn, body: dict[str, Any], call_id: Any = _DRAW) -> dict[str, Any]:
    """``body`` with ``call_id`` (drawn from IDS when not given; ``None``: no id)."""
    call_id = draw(IDS) if call_id is _DRAW else call_id
    if call_id is not None:
        body["id"] = call_id
    return body


@st.composite
def calls(draw: st.DrawFn, name: str | None = None, call_id: Any = _DRAW) -> dict[str, Any]:
    """A function call part; given its id, a well-formed one."""
    body: dict[str, Any] = {"name": name if name is not None else _mostly(draw, NAMES)}
    plain = st.one_of(st.none(), st.just({}), st.dictionaries(SCRIPTS, JSON, max_size=2))
    args = draw(plain if call_id is not _DRAW else st.one_of(plain, ANY))
    if args is not None or draw(st.booleans()):
        body["args"] = args
    part: dict[str, Any] = {
        draw(st.sampled_from(["functionCall", "functionCall", "function_call"])): _with_id(draw, body, call_id)
    }
    if draw(st.integers(0, 3)) == 0:
        part[draw(st.sampled_from(["thoughtSignature", "thought_signature"]))] = "c2ln"
    if draw(st.integers(0, 19)) == 0:
        part = {"functionCall": None, "function_call": part.popitem()[1]}  # the camel key wins, even null
    return part


@st.composite
def responses(draw: st.DrawFn, name: str | None = None, call_id: Any = _DRAW) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name if name is not None else _mostly(draw, NAMES)}
    response = draw(
        st.one_of(
            st.builds(lambda v: {"output": v}, JSON),
            st.builds(lambda v: {"error": v}, TEXTS),
            st.builds(lambda v: {"output": v, "extra": 1}, TEXTS),
            st.dictionaries(st.sampled_from(["a", "b"]), JSON, max_size=2),
            JSON,
        )
    )
    if draw(st.integers(0, 5)):
        body["response"] = response
    if draw(st.integers(0, 9)) == 0:
        body["parts"] = draw(
            st.sampled_from([[], [{"inlineData": {"mimeType": "image/png", "data": "AAA"}}], [{"text": "t"}], "x"])
        )
    key = draw(st.sampled_from(["functionResponse", "functionResponse", "function_response"]))
    return {key: _with_id(draw, body, call_id)}


@st.composite
def parts(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text"] * 5 + ["thought", "call", "response", "media", "other", "odd"]))
    if kind == "text":
        part: dict[str, Any] = {"text": _mostly(draw, TEXTS)}
        if draw(st.integers(0, 5)) == 0:
            part["thoughtSignature"] = "dHM="
        return part
    if kind == "thought":
        return {"text": draw(TEXTS), "thought": draw(st.sampled_from([True, True, False, 1]))}
    if kind == "call":
        return draw(calls())
    if kind == "response":
        return draw(responses())
    if kind == "media":
        return draw(
            st.sampled_from(
                [
                    {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                    {"inline_data": {"mime_type": "audio/wav", "data": "AAA"}, "audioTranscription": {"text": "hi"}},
                    {"fileData": {"fileUri": "gs://b/f.pdf", "mimeType": "application/pdf"}},
                    {"inlineData": {"data": 5}},
                ]
            )
        )
    if kind == "other":
        return draw(st.sampled_from([{"executableCode": {"code": "1"}}, {"thought": True}, {}, {"text": None}]))
    return draw(ANY)


@st.composite
def contents(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 40)) == 0:
        return draw(ANY)
    record: dict[str, Any] = {}
    role = draw(st.sampled_from(["user", "model", "absent", "function", "tool", "odd"]))
    if role == "odd":
        record["role"] = draw(st.one_of(st.sampled_from(["system", "assistant", None]), st.just(["user"])))
    elif role != "absent":
        record["role"] = role
    record["parts"] = _mostly(draw, st.lists(parts(), max_size=3))
    if draw(st.integers(0, 14)) == 0:
        record[draw(st.sampled_from(["content", "metadata"]))] = draw(ANY)
    return record


@st.composite
def turns(draw: st.DrawFn) -> list[Any]:
    """A plausible stretch: a user turn, or a model turn's calls and the user content of
    their responses (names and ids matching, or not)."""
    if draw(st.booleans()):
        return [{"role": "user", "parts": [{"text": draw(SCRIPTS)}]}]
    names = draw(st.lists(NAMES, min_size=1, max_size=3))
    if draw(st.integers(0, 3)):  # well-formed: fresh ids (or none, to pair by name and order)
        ids = [draw(st.one_of(st.none(), st.integers(0, 10**6).map(lambda n: f"c{n}"))) for _ in names]
    else:
        ids = [_DRAW for _ in names]
    made = [draw(calls(name, call_id)) for name, call_id in zip(names, ids, strict=True)]
    answers = [draw(responses(n, i)) for n, i in draw(st.permutations(list(zip(names, ids, strict=True))))]
    if draw(st.integers(0, 4)) == 0:
        answers = answers[:-1]
    model: list[Any] = draw(st.lists(st.builds(lambda t: {"text": t, "thought": True}, SCRIPTS), max_size=1))
    stretch: list[Any] = [{"role": "model", "parts": model + made}]
    if answers:
        stretch.append({"role": draw(st.sampled_from(["user", "user", "function"])), "parts": answers})
    if draw(st.booleans()):
        stretch.append({"role": "model", "parts": [{"text": draw(SCRIPTS)}]})
    return stretch


def _flat(stretches: list[list[Any]]) -> list[Any]:
    return [record for stretch in stretches for record in stretch]


CONTENTS = st.one_of(
    st.lists(contents(), max_size=6),
    st.lists(turns(), max_size=4).map(_flat),
    st.lists(turns(), min_size=2, max_size=5).map(_flat),
    st.builds(lambda a, b: a + b, st.lists(turns(), max_size=3).map(_flat), st.lists(contents(), max_size=2)),
)
SYSTEMS = st.one_of(
    TEXTS,
    st.builds(
        lambda ps: {"parts": ps}, st.lists(st.one_of(st.builds(lambda t: {"text": t}, TEXTS), TEXTS), max_size=2)
    ),
    st.lists(st.one_of(TEXTS, st.just({"text": "s", "thought": True}), st.just({"inlineData": {}})), max_size=2),
    st.just({"role": "system", "parts": [{"text": "s"}]}),
    ANY,
)
SYSTEM_PATHS = st.sampled_from(
    [
        None,
        None,
        ("systemInstruction",),
        ("system_instruction",),
        ("config", "system_instruction"),
        ("config", "systemInstruction"),
    ]
)


@st.composite
def requests(draw: st.DrawFn) -> Any:
    """A request (``contents`` and a system instruction in any of its places, with other
    keys) or now and then a bare list of contents."""
    records = draw(CONTENTS)
    if draw(st.integers(0, 7)) == 0:
        return records
    value: dict[str, Any] = {"id": draw(st.integers(0, 9))}
    path = draw(SYSTEM_PATHS)
    if path is not None:
        system = draw(SYSTEMS)
        if len(path) == 1:
            value[path[0]] = system
        else:
            value[path[0]] = {"temperature": 0, path[1]: system}
    if draw(st.integers(0, 9)) == 0:
        value["systemInstruction"] = None  # null: the reader looks on
    value["contents"] = records
    if draw(st.integers(0, 9)) == 0:
        value["generationConfig"] = {"temperature": 0.2}
    if draw(st.integers(0, 14)) == 0:
        value[draw(st.sampled_from(["messages", "context", "role"]))] = []
    return value


MANAGERS = st.builds(MessageContextManager, max_messages=st.integers(0, 3), remove_tool_msgs=st.booleans())
PLAIN_FIRST = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "id": 0}


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(requests(), min_size=1, max_size=5), manager=MANAGERS)
def test_fast_and_full_paths_agree_on_datasets(tmp_path: Path, rows: list[Any], manager: MessageContextManager) -> None:
    # A plain first line settles the format: the other lines are the ones under test
    # (test_first_lines_agree covers the first line itself).
    trim_rows_both_ways(tmp_path, [PLAIN_FIRST, *rows], manager)


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(requests(), min_size=1, max_size=3), manager=MANAGERS)
def test_first_lines_agree(tmp_path: Path, rows: list[Any], manager: MessageContextManager) -> None:
    """The first line may settle the dataset's format on the fast path: same result."""
    trim_rows_both_ways(tmp_path, rows, manager)


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=requests(), pretty=st.booleans(), manager=MANAGERS)
def test_fast_and_full_paths_agree_on_documents(
    tmp_path: Path, value: Any, pretty: bool, manager: MessageContextManager
) -> None:
    trim_document_both_ways(tmp_path, value, manager, pretty=pretty)


@explored(max_examples=150, deadline=None)
@given(requests())
def test_what_the_outline_takes_the_reader_reads_the_same(value: Any) -> None:
    """Roles, call and result ids, the trim rule's flag and the token units of each message."""
    found = outline(value)
    if found is None:
        return
    conversation = formats.load_value(value, source="x", layout="document", fmt="gemini")
    assert formats.detect_name(value, source="x") == "gemini"  # what the fast path takes is Gemini's alone
    assert not conversation.warnings
    assert conversation.state.context_summary is None
    messages = conversation.state.context
    assert found.roles == [m.role for m in messages]
    assert found.calls == [tuple(call_ids(m)) for m in messages]
    assert found.results == [tuple(result_ids(m)) for m in messages]
    assert [bool(c) for c in found.calls] == [bool(m.tools_calls) for m in messages]
    assert found.units() == [message_units(m) for m in messages]
    from ctxmgr.state._compaction import _chars  # ... and characters, as a budget's report counts them

    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, messages))
    for message in messages:
        shape = shape_of(message)
        assert not shape.empty_tool
        assert not shape.orphan_reasoning
    kept = [i for i, role in enumerate(found.roles) if role != "tool"]
    conversation.state.context = [messages[i] for i in kept]
    assert found.rebuild(kept) == orjson.loads(formats.dump(conversation))


@explored(max_examples=100, deadline=None)
@given(st.lists(turns(), min_size=1, max_size=4).map(_flat))
def test_outline_units_are_the_readers_message_units(records: list[Any]) -> None:
    value = {"systemInstruction": {"parts": [{"text": "Be brief."}]}, "contents": records}
    found = outline(value)
    if found is None:
        return
    try:
        conversation = formats.load_value(value, source="x", layout="document", fmt="gemini")
    except InputError:
        pytest.fail("the outline took a request the reader refuses")
    assert found.units() == [message_units(m) for m in conversation.state.context]
    from ctxmgr.state._compaction import _chars  # ... and characters, as a budget's report counts them

    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, conversation.state.context))


def _request(*records: Any, **keys: Any) -> dict[str, Any]:
    return {**keys, "contents": list(records)}


USER = {"role": "user", "parts": [{"text": "Cancel ABC."}]}
CALL = {"role": "model", "parts": [{"functionCall": {"name": "cancel", "args": {"id": "ABC"}, "id": "c1"}}]}
RESULT = {"role": "user", "parts": [{"functionResponse": {"name": "cancel", "response": {"output": "ok"}, "id": "c1"}}]}
ANSWER = {"role": "model", "parts": [{"text": "Done."}]}


def test_it_reads_roles_calls_and_the_system_instruction() -> None:
    value = _request(USER, CALL, RESULT, ANSWER, systemInstruction="Be brief.", model="gemini-2.5-flash")
    found = outline(value)
    assert found is not None
    assert found.roles == ["system", "user", "assistant", "tool", "assistant"]
    assert found.calls == [(), (), ("c1",), (), ()]
    assert found.results == [(), (), (), ("c1",), ()]
    assert found.rebuild([0, 4]) == {
        "systemInstruction": "Be brief.",
        "model": "gemini-2.5-flash",
        "contents": [ANSWER],
    }
    bare = outline([USER, CALL, RESULT, ANSWER])
    assert bare is not None
    assert bare.roles == ["user", "assistant", "tool", "assistant"]
    assert bare.rebuild([3]) == [ANSWER]


def test_id_less_calls_pair_by_name_and_order_as_the_reader_pairs_them() -> None:
    model = {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "lookup", "args": {"q": "a"}}},
            {"function_call": {"name": "lookup", "args": {"q": "b"}}, "thought_signature": "c2ln"},
            {"functionCall": {"name": "", "args": {}}},
        ],
    }
    answers = {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "lookup", "response": {"output": "A"}}},
            {"functionResponse": {"name": "", "response": {}}},
            {"function_response": {"name": "lookup", "response": {"output": "B"}}},
        ],
    }
    found = outline(_request(USER, model, answers))
    assert found is not None
    assert found.calls[1] == ("gemini_lookup_0", "gemini_lookup_1", "gemini_0")
    assert found.results[2] == ("gemini_lookup_0", "gemini_0", "gemini_lookup_1")
    conversation = formats.load_value(_request(USER, model, answers), source="x", layout="document")
    assert found.calls[1] == tuple(call_ids(conversation.state.context[1]))
    assert found.results[2] == tuple(result_ids(conversation.state.context[2]))


def test_a_null_camel_case_key_hides_the_snake_case_one() -> None:
    """The reader looks for ``function_call`` only when ``functionCall`` is absent: a null
    one makes the part one the model passes through, not a call."""
    hidden = {"functionCall": None, "function_call": {"name": "f", "args": {}, "id": "c1"}}
    found = outline(_request(USER, {"role": "model", "parts": [hidden, {"text": "t"}]}))
    assert found is not None
    assert found.calls == [(), ()]
    empty = {"functionCall": {}, "function_call": {"name": "f", "id": "c1"}}
    assert outline(_request(USER, {"role": "model", "parts": [empty]})) is None  # {} is a call without a name


def _with_part(part: Any, role: str = "user") -> dict[str, Any]:
    return _request(USER, {"role": role, "parts": [part]})


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a string", "not a request"),
        ([], "an empty list is native's to claim"),
        ({"contents": "x"}, "contents not a list"),
        ({"contents": [], "messages": []}, "another format's container key"),
        (_request(USER, systemInstruction={"parts": "x"}), "system parts not a list"),
        (_request(USER, systemInstruction=[3]), "a system part neither text nor object"),
        (_request(USER, systemInstruction=5), "a system instruction of no known shape"),
        (_request({"role": "robot", "parts": []}), "an unknown role"),
        (_request({"role": ["user"], "parts": []}), "an unhashable role"),
        (_request({"role": "user", "parts": [], "content": "x"}), "a key detection reads as another format's"),
        (_request({"role": "user"}), "no parts"),
        (_with_part("text"), "a part that is not an object"),
        (_with_part({"text": 5}), "text that is not a string"),
        (_with_part({"functionCall": {"name": "f"}}), "a call outside a model content"),
        (_with_part({"functionCall": {"name": 5}}, "model"), "a call without a name"),
        (_with_part({"functionCall": {"name": "f", "args": [1]}}, "model"), "arguments not an object"),
        (_with_part({"functionCall": {"name": "f", "id": 7}}, "model"), "an id not a string"),
        (_with_part({"functionResponse": {"name": "f", "id": "c1"}}, "model"), "a response in a model content"),
        (_with_part({"functionResponse": {"name": "f", "parts": [{"text": "t"}]}}), "media inside a response"),
        (
            _request(
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "id": "c1"}, "text": SUMMARY_HEADER}]}
            ),
            "a header beside a response, which the reader lifts from the first content",
        ),
        (_with_part({"text": "t"}, "function"), "a tool content without a response"),
        (_with_part({"text": "hm", "thought": True}, "model"), "thoughts alone: orphan reasoning"),
        (_with_part({"functionResponse": {"name": "f", "response": {}}}), "an id-less response without a call"),
        (_request(USER, {"role": "model", "parts": [{"functionCall": {"name": "a b"}}]}), "a name minted with a hash"),
        ([USER, {"role": "function", "parts": RESULT["parts"]}], "a listed function role is chat's too"),
    ],
)
def test_what_it_declines(value: Any, why: str) -> None:
    assert outline(value) is None, why


def _tau_in_gemini() -> list[bytes]:
    """The vendored tau-bench conversations, converted to Gemini line by line."""
    lines = []
    for raw in TAU.read_bytes().splitlines():
        conversation = formats.load_value(orjson.loads(raw), source="tau", layout="document")
        lines.append(formats.dump(conversation, to="gemini").rstrip(b"\n"))
    return lines


def test_real_conversations_take_the_fast_path(tmp_path: Path) -> None:
    from ctxmgr.files._fastpath import fast_line

    lines = _tau_in_gemini()
    accepted = sum(outline(orjson.loads(line)) is not None for line in lines)
    assert accepted / len(lines) >= 0.95
    # Whole lines trimmed on the fast path (outline and rule check): those that reuse a
    # call id go to the full path for the wording of the warning.
    manager, result, first = MessageContextManager(2), FileResult(source="tau"), ["gemini"]
    fast = sum(
        fast_line(i, line, "tau", manager, Settings(), result, first)[0] is not None for i, line in enumerate(lines)
    )
    assert fast / len(lines) >= 0.9
    data = tmp_path / "tau-gemini.jsonl"
    data.write_bytes(b"\n".join(lines) + b"\n")
    fast_result, _ = trim_both_ways(data, manager, tmp_path)
    assert fast_result.changed_conversations > 0.9 * len(lines)


@pytest.mark.parametrize(
    "path", [*sorted((ROOT / "tests" / "conversations" / "gemini").glob("*.json")), ROOT / "samples" / "gemini.json"]
)
def test_the_real_documents_are_outlined_and_agree(tmp_path: Path, path: Path) -> None:
    assert outline(orjson.loads(path.read_bytes())) is not None
    trim_both_ways(path, MessageContextManager(1), tmp_path)


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(requests(), min_size=1, max_size=4), manager=budget_managers())
def test_token_budgets_agree_on_both_paths(tmp_path: Path, rows: list[Any], manager: Any) -> None:
    """``trim --max-tokens`` from the outline: the full path's bytes, warnings, counts and counters."""
    trim_rows_both_ways(tmp_path, [PLAIN_FIRST, *rows], manager)
