"""ctxmgr.state against the real reference, 10xgraph 0.10.3: the same calls, the same results.

Each test makes one call (``tests/_reference_calls.py``) on generated inputs, on
``ctxmgr.state`` here and on ``tenxgraph.core.state`` in one worker process for the
whole session, and compares the answers. Where ctxmgr differs on purpose, the inputs
are the reference's domain with ctxmgr's switches set to the reference's behaviour,
and the difference itself is asserted as docs/tenxgraph.md states it.

The reference needs Python >= 3.12; its environment is built once and cached, in the
background from the moment the tests are collected (``tests/_reference_venv.py``,
``conftest.py``). Without a Python >= 3.12 these tests fail, on purpose.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _reference_calls as calls
import pytest
from _compat_tables import compat_tables
from conftest import reference_python
from hypothesis import HealthCheck, event, given, settings, strategies as st

_CALLS_FILE = Path(calls.__file__).resolve()

# Each example is two calls (one a pipe round trip to the worker); the worker's timing is
# not ours to hold to a deadline.
_EXAMPLES = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Worker:
    """The reference's side: ``_reference_calls.py`` serving JSON lines in a Python >= 3.12."""

    def __init__(self, python: Path) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (open for the worker's life; closed in close())
        # -I: no PYTHONPATH or user site; the worker imports the reference and the stdlib only.
        self.process = subprocess.Popen(
            [str(python), "-I", str(_CALLS_FILE), calls.REFERENCE_PREFIX],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            encoding="utf-8",
        )
        ready = self._read()
        assert ready.get("ready", [0])[0] == 3, ready

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.stderr.seek(0)
            raise RuntimeError(f"the reference worker stopped: {self.stderr.read().decode(errors='replace')}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def __call__(self, name: str, **args: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"call": name, "args": args}) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()  # the worker's loop ends, and with it the worker
        self.process.wait(timeout=30)
        self.process.stdout.close()
        self.stderr.close()


@pytest.fixture(scope="session")
def reference(request: pytest.FixtureRequest) -> Iterator[Worker]:
    """One worker for the session, in the reference environment ``conftest.py`` started building."""
    python = reference_python(request.config)
    worker = Worker(python)
    yield worker
    worker.close()


_OURS = calls.Api(calls.CTXMGR_PREFIX)


def ours(name: str, **args: Any) -> dict[str, Any]:
    """The same call on ctxmgr, through JSON as the worker's answer comes."""
    answer: dict[str, Any] = json.loads(json.dumps(calls.answer(_OURS, {"call": name, "args": args}), default=repr))
    return answer


def same(reference: Worker, name: str, *, errors: bool = False, **args: Any) -> dict[str, Any]:
    """Make the call on both; they must answer alike.

    With ``errors``, the inputs may be ones both refuse: then the errors must be of the
    same type. Without, an error on either side fails the test (two equal errors would
    otherwise pass for agreement).
    """
    theirs, mine = reference(name, **args), ours(name, **args)
    if errors and "error" in theirs and "error" in mine:
        assert theirs["error"] == mine["error"], (name, args, theirs, mine)
    else:
        assert "ok" in theirs, (name, args, theirs)
        assert mine == theirs, (name, args)
    return mine


# -- inputs --------------------------------------------------------------------------------

NAMES = st.sampled_from(["search", "get_weather", "lookup"])
CALL_IDS = st.sampled_from(["c1", "c2", "c3"])
ROLES = st.sampled_from(["user", "assistant", "system", "tool"])
ANY_TEXT = st.text(max_size=10)
READABLE_TEXT = st.text(max_size=10).map(lambda text: text if text.strip() else "")
"""Text as a span's text: empty, or with something besides white space (see below)."""
JSON_VALUES = st.one_of(  # flat and shallow: a recursive strategy costs more to draw than the calls
    st.none(),
    st.booleans(),
    st.integers(-99, 99),
    st.text(max_size=6),
    st.lists(st.integers(0, 3) | st.text(max_size=3), max_size=3),
    st.dictionaries(
        st.text(max_size=4), st.none() | st.integers(0, 3) | st.lists(st.booleans(), max_size=2), max_size=3
    ),
)
MEDIA_URL = {"kind": "url", "url": "https://example.com/a.pdf"}
MEDIA = st.fixed_dictionaries({"kind": st.just("url"), "url": st.just("https://example.com/a.png")})


def tools_calls_entries() -> st.SearchStrategy[dict[str, Any]]:
    """The shapes code writes: OpenAI's ``function`` entries and flat ones (``{"name"}``, with args)."""
    function = st.builds(
        lambda i, n: {"id": i, "type": "function", "function": {"name": n, "arguments": "{}"}}, CALL_IDS, NAMES
    )
    flat = st.builds(lambda i, n: {"id": i, "name": n, "args": {}}, CALL_IDS, NAMES)
    name_only = st.builds(lambda n: {"name": n}, NAMES)
    return st.one_of(function, flat, name_only)


def blocks(text: st.SearchStrategy[str], *, rich: bool) -> st.SearchStrategy[dict[str, Any]]:
    kinds = [
        st.builds(lambda t: {"type": "text", "text": t}, text),
        st.builds(lambda i, o: {"type": "tool_result", "call_id": i, "output": o}, CALL_IDS, JSON_VALUES),
    ]
    if rich:
        kinds += [
            st.builds(lambda t: {"type": "document", "media": MEDIA_URL, "text": t}, st.none() | text),
            st.builds(lambda m: {"type": "image", "media": m}, MEDIA),
            st.builds(lambda s: {"type": "reasoning", "summary": s}, text),
            st.builds(lambda i, n: {"type": "tool_call", "id": i, "name": n, "args": {}}, CALL_IDS, NAMES),
        ]
    return st.one_of(kinds)


@st.composite
def message_lists(
    draw: st.DrawFn,
    *,
    text: st.SearchStrategy[str] = ANY_TEXT,
    rich: bool = True,
    min_size: int = 0,
    max_size: int = 10,
) -> list[dict[str, Any]]:
    """Messages as dicts with ids ``m0``, ``m1``...; a tool-call block only where
    ``tools_calls`` names calls too (how both packages' callers write them)."""
    found: list[dict[str, Any]] = []
    for index in range(draw(st.integers(min_size, max_size))):
        role = draw(ROLES)
        content = draw(st.lists(blocks(text, rich=rich), max_size=3))
        spec: dict[str, Any] = {"message_id": f"m{index}", "role": role, "content": content}
        if role == "assistant" and draw(st.booleans()):
            entries = draw(st.lists(tools_calls_entries(), max_size=2))
            spec["tools_calls"] = entries
            if entries and draw(st.booleans()):
                spec["content"] = [*content, {"type": "tool_call", "id": "c1", "name": "search", "args": {}}]
        found.append(spec)
    return found


OPTIONAL_COUNT = st.none() | st.integers(0, 8)


# -- names ---------------------------------------------------------------------------------


def doc_tables() -> tuple[dict[str, set[str]], dict[str, set[str]], set[str]]:
    """docs/tenxgraph.md's lists: names per reference module, members per class, and what is absent."""
    tables = compat_tables()
    return tables["reference module"], tables["reference class"], set(tables["absent from ctxmgr"])


def test_every_name_the_reference_exports_is_in_ctxmgr_or_listed_absent(reference: Worker) -> None:
    exported = reference("exported_names")["ok"]
    modules, _, absent = doc_tables()

    def is_absent(module: str, name: str) -> bool:
        return module in absent or name in absent or f"{module}.{name}" in absent

    for module, names in exported.items():
        label = "tenxgraph.core.state" if module == "__init__" else module
        where = calls.CTXMGR_PREFIX if module == "__init__" else f"{calls.CTXMGR_PREFIX}.{module}"
        for name in names:
            if is_absent(module, name):
                continue
            assert name in modules.get(label, set()), f"{label}.{name} is not in the lists of docs/tenxgraph.md"
            assert hasattr(importlib.import_module(where), name), f"{where} lacks {name}"
    # and nothing is listed that the reference does not have
    for label, names in modules.items():
        module = "__init__" if label == "tenxgraph.core.state" else label
        assert names <= set(exported[module]), (label, names - set(exported[module]))


def test_every_member_of_the_reference_classes_is_in_ctxmgr_or_listed_absent(reference: Worker) -> None:
    theirs = reference("class_members")["ok"]
    mine = ours("class_members")["ok"]
    _, members, absent = doc_tables()
    for cls, found in theirs.items():
        listed = members.get(cls, set())
        for kind, names in found.items():
            for name in names:
                if f"{cls}.{name}" in absent:
                    assert name not in mine[cls][kind], f"{cls}.{name} is listed absent but exists"
                    continue
                assert name in listed, f"{cls}.{name} ({kind}) is not in the members table of docs/tenxgraph.md"
                assert name in mine[cls][kind], f"ctxmgr's {cls} lacks {kind[:-1]} {name}"
        assert listed <= {n for names in found.values() for n in names}, (cls, listed)
    # Same field order too: a model_dump_json of either reads as the other's.
    for cls in ("Message", "TokenUsages", "AgentState", "ExecutionState"):
        assert mine[cls]["fields"] == theirs[cls]["fields"], cls


# -- Message -------------------------------------------------------------------------------


@_EXAMPLES
@given(message=message_lists(max_size=1).filter(bool))
def test_message_text(reference: Worker, message: list[dict[str, Any]]) -> None:
    same(reference, "message_text", message=message[0])


CONSTRUCTED_BLOCKS = st.lists(
    st.one_of(
        st.builds(lambda b: {"model": b}, blocks(ANY_TEXT, rich=True)),
        st.builds(lambda t: {"dict": {"type": "text", "text": t}}, st.none() | ANY_TEXT),
        st.builds(lambda o: {"dict": {"type": "tool_result", "call_id": "c1", "output": o}}, JSON_VALUES),
        st.builds(lambda o: {"dict": {"type": "image", "url": o}}, ANY_TEXT),
    ),
    max_size=4,
)


@_EXAMPLES
@given(
    construct=st.one_of(
        st.builds(lambda s: {"str": s}, ANY_TEXT),
        st.builds(lambda v: {"other": v}, st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=2)),
        st.just({"other": None}),
        st.builds(lambda b: {"blocks": b}, CONSTRUCTED_BLOCKS),
    )
)
def test_message_text_of_model_construct(reference: Worker, construct: dict[str, Any]) -> None:
    same(reference, "message_text", construct=construct)


@_EXAMPLES
@given(
    case=st.one_of(
        st.fixed_dictionaries({"kind": st.just("text_message"), "text": ANY_TEXT, "role": ROLES}),
        st.fixed_dictionaries(
            {
                "kind": st.just("tool_message"),
                "blocks": st.lists(blocks(ANY_TEXT, rich=False), max_size=2),
                "meta": st.none() | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("image_message"),
                "kwargs": st.fixed_dictionaries(
                    {},
                    optional={
                        "image_url": st.sampled_from(["", "https://example.com/a.png"]),
                        "image_base64": st.sampled_from(["", "aGk="]),
                        "mime_type": st.sampled_from(["image/png", "image/jpeg"]),
                        "text": st.none() | ANY_TEXT,
                        "role": ROLES,
                    },
                ),
            }
        ),
        st.fixed_dictionaries(
            {"kind": st.just("multimodal_message"), "blocks": st.lists(blocks(ANY_TEXT, rich=True)), "role": ROLES}
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("attach_media"),
                "message": message_lists(max_size=1).filter(bool).map(lambda m: m[0]),
                "media": MEDIA,
                "as_type": st.sampled_from(["image", "audio", "video", "document", "file"]),
            }
        ),
    )
)
def test_message_constructors(reference: Worker, case: dict[str, Any]) -> None:
    same(reference, "message_dump", errors=True, **case)


@pytest.mark.parametrize("default", [None, "", "abc", "m-1"])
def test_generate_id(reference: Worker, default: Any) -> None:
    same(reference, "generate_id", default=default)


@_EXAMPLES
@given(
    values=st.fixed_dictionaries(
        {},
        optional={
            "completion_tokens": st.integers(0, 9),
            "prompt_tokens": st.integers(0, 9),
            "total_tokens": st.integers(0, 9),
            "reasoning_tokens": st.integers(0, 9),
            "image_tokens": st.none() | st.integers(0, 9),
        },
    )
)
def test_token_usages(reference: Worker, values: dict[str, Any]) -> None:
    same(reference, "token_usages", errors=True, values=values)


# -- the summary manager's helpers, hooks and seam -----------------------------------------


@_EXAMPLES
@given(messages=message_lists())
def test_estimate_and_transcript_helpers_are_the_references(reference: Worker, messages: list[Any]) -> None:
    same(reference, "estimate_tokens", messages=messages)
    same(reference, "messages_to_text", messages=messages)


@_EXAMPLES
@given(
    messages=message_lists(),
    max_messages=OPTIONAL_COUNT,
    token_budget=st.none() | st.integers(0, 30),
)
def test_the_trigger_fires_where_the_references_does(
    reference: Worker, messages: list[Any], max_messages: int | None, token_budget: int | None
) -> None:
    kwargs = {"max_messages": max_messages, "token_budget": token_budget}
    same(reference, "should_summarize", model="gpt-4o-mini", messages=messages, kwargs=kwargs)


@_EXAMPLES
@given(messages=message_lists(), keep_recent=st.integers(0, 6))
def test_the_split_is_the_references_without_tool_pair_preservation(
    reference: Worker, messages: list[Any], keep_recent: int
) -> None:
    same(
        reference,
        "split_context",
        model="gpt-4o-mini",
        messages=messages,
        kwargs={"keep_recent": keep_recent},
        ctxmgr_kwargs={"preserve_tool_pairs": False},
    )


PROVIDER_NAMES = st.sampled_from(
    [
        "gpt-4o-mini",
        "o3-mini",
        "gemini-2.0-flash",
        "Gemini-Pro",
        "imagen-3",
        "openai/gpt-4o",
        "google/gemini-pro",
        "gemini/gemini-2.5-flash",
        "gpt/x",
        "llama3.2",
        "my-local-model",
    ]
)
"""Model names whose provider both packages have (see docs/tenxgraph.md for the others)."""


@_EXAMPLES
@given(
    model=PROVIDER_NAMES,
    kwargs=st.fixed_dictionaries(
        {},
        optional={
            "max_messages": OPTIONAL_COUNT,
            "token_budget": OPTIONAL_COUNT,
            "keep_recent": st.integers(0, 9),
            "remove_tool_msgs": st.booleans(),
            "max_summary_tokens": st.integers(1, 900),
            "api_style": st.sampled_from(["responses", "chat"]),
            "summary_system_prompt": st.text(min_size=1, max_size=8),
        },
    ),
)
def test_a_new_summary_manager_is_set_up_as_the_references(
    reference: Worker, model: str, kwargs: dict[str, Any]
) -> None:
    same(reference, "summary_manager", model=model, kwargs=kwargs)


SUMMARY_KWARGS = st.fixed_dictionaries(
    {
        "max_messages": st.sampled_from([None, 0, 1, 2, 3, 4]),
        "token_budget": st.sampled_from([None, 0, 2, 5, 10, 20]),
        "keep_recent": st.integers(0, 3),
        "remove_tool_msgs": st.booleans(),
    },
    optional={
        "max_summary_tokens": st.integers(1, 900),
        "api_style": st.sampled_from(["responses", "chat"]),
        "summary_system_prompt": st.text(min_size=1, max_size=8),
    },
)
# A stand-in for call_llm answers as the reference's call_llm does: stripped text.
LLM = st.one_of(
    st.just({"answer": "They talked."}),
    st.builds(lambda a: {"answer": a}, st.text(min_size=1, max_size=12).map(str.strip)),
    st.just({"answer": ""}),
    st.just({"raise": "API down"}),
)
SPANS = message_lists(text=READABLE_TEXT, rich=False, min_size=2)
REFERENCE_SWITCHES = {"preserve_tool_pairs": False, "include_tool_results": False}


def _compare_summaries(theirs: dict[str, Any], mine: dict[str, Any], kwargs: dict[str, Any]) -> None:
    event(f"{len(theirs['calls'])} call(s), summary {'set' if theirs['context_summary'] else 'not set'}")
    prompts_theirs, prompts_mine = theirs.pop("system_prompts"), mine.pop("system_prompts")
    assert mine == theirs
    if "summary_system_prompt" in kwargs:  # ctxmgr's own instruction is its own text, not the reference's
        assert prompts_mine == prompts_theirs


@_EXAMPLES
@given(
    model=st.sampled_from(["gpt-4o-mini", "gemini-2.0-flash", "openai/gpt-4o"]),
    messages=SPANS,
    context_summary=st.none() | st.just("Earlier."),
    kwargs=SUMMARY_KWARGS,
    llm=LLM,
)
def test_summarizing_through_the_call_llm_seam_ends_as_the_references(
    reference: Worker,
    model: str,
    messages: list[Any],
    context_summary: str | None,
    kwargs: dict[str, Any],
    llm: dict[str, Any],
) -> None:
    """Same state after, same calls of ``call_llm`` (model, cap, API style), with ctxmgr's
    two switches set to the reference's behaviour. Texts are empty or hold more than
    white space: a span of white-space-only text is a documented difference."""
    args = {"model": model, "messages": messages, "context_summary": context_summary, "kwargs": kwargs, "llm": llm}
    theirs = reference("summarize", **args)["ok"]
    mine = ours("summarize", **args, ctxmgr_kwargs=REFERENCE_SWITCHES)["ok"]
    _compare_summaries(theirs, mine, kwargs)


@_EXAMPLES
@given(
    messages=SPANS,
    kwargs=SUMMARY_KWARGS,
    llm=LLM,
)
def test_with_tool_results_shown_ctxmgr_summarizes_spans_the_reference_sees_as_empty(
    reference: Worker, messages: list[Any], kwargs: dict[str, Any], llm: dict[str, Any]
) -> None:
    """ctxmgr's default shows tool results: a span holding only results is summarized,
    where the reference makes no call. Everything else ends the same."""
    args = {"model": "gpt-4o-mini", "messages": messages, "kwargs": kwargs, "llm": llm}
    theirs = reference("summarize", **args)["ok"]
    mine = ours("summarize", **args, ctxmgr_kwargs={"preserve_tool_pairs": False})["ok"]
    if not theirs["calls"] and mine["calls"]:
        event("ctxmgr summarized what the reference saw as empty")
        span = [m for m in messages if m["message_id"] in set(mine["span"])]
        assert any(block["type"] == "tool_result" for m in span for block in m["content"]), span
        assert len(mine["calls"]) == 1
    else:
        _compare_summaries(theirs, mine, kwargs)


@_EXAMPLES
@given(
    messages=SPANS,
    kwargs=SUMMARY_KWARGS,
    override=st.sampled_from(["", "Mine.", "A summary of mine."]),
)
def test_a_subclass_summarize_override_is_applied_as_the_references(
    reference: Worker, messages: list[Any], kwargs: dict[str, Any], override: str
) -> None:
    args = {"model": "gpt-4o-mini", "messages": messages, "kwargs": kwargs, "llm": {"answer": "unused"}}
    theirs = reference("summarize", **args, override=override)["ok"]
    mine = ours("summarize", **args, override=override, ctxmgr_kwargs=REFERENCE_SWITCHES)["ok"]
    assert mine["calls"] == theirs["calls"] == []
    _compare_summaries(theirs, mine, kwargs)


# -- the message manager -------------------------------------------------------------------


@_EXAMPLES
@given(messages=message_lists(max_size=12), max_messages=st.integers(0, 6), remove_tool_msgs=st.booleans())
def test_message_manager_trims_as_the_references(
    reference: Worker, messages: list[Any], max_messages: int, remove_tool_msgs: bool
) -> None:
    kwargs = {"max_messages": max_messages, "remove_tool_msgs": remove_tool_msgs}
    same(reference, "message_trim", messages=messages, kwargs=kwargs)


@pytest.mark.parametrize("keep", [0, 1, 3])
def test_a_subclass_trim_override_is_what_trim_context_applies(reference: Worker, keep: int) -> None:
    messages = [{"message_id": f"m{i}", "role": "user", "content": []} for i in range(4)]
    same(reference, "overridden_trim", messages=messages, keep=keep)


# -- reducers ------------------------------------------------------------------------------


@st.composite
def reducer_inputs(draw: st.DrawFn) -> dict[str, Any]:
    def with_ids(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # ids from a small pool, so left and right share some; delta sometimes set
        return [{**s, "message_id": draw(st.sampled_from(["a", "b", "c", "d", 1, 2])), "delta": draw(st.booleans())}
                for s in specs]

    return {
        "left": with_ids(draw(message_lists(max_size=6))),
        "right": with_ids(draw(message_lists(max_size=6))),
        "items_left": draw(st.lists(st.integers(0, 4), max_size=4)),
        "items_right": draw(st.lists(st.integers(0, 4), max_size=4)),
    }


@_EXAMPLES
@given(inputs=reducer_inputs())
def test_reducers(reference: Worker, inputs: dict[str, Any]) -> None:
    same(reference, "reducers", **inputs)


# -- execution state -----------------------------------------------------------------------

STATUSES = st.sampled_from(["running", "interrupted_before", "interrupted_after", "completed", "error"])
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("set_current_node"), ANY_TEXT),
        st.tuples(st.just("advance_step")),
        st.tuples(st.just("complete")),
        st.tuples(st.just("error"), ANY_TEXT),
        st.tuples(
            st.just("set_interrupt"),
            ANY_TEXT,
            ANY_TEXT,
            STATUSES,
            st.none() | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        ),
        st.tuples(st.just("clear_interrupt")),
        st.tuples(st.just("status"), STATUSES),
        st.tuples(st.just("stop"), st.sampled_from(["none", "stop_requested", "stopped"])),
    ),
    max_size=8,
)


@_EXAMPLES
@given(steps=STEPS)
def test_execution_state_api(reference: Worker, steps: list[Any]) -> None:
    same(reference, "execution", messages=[], steps=[list(step) for step in steps])


@_EXAMPLES
@given(
    data=st.fixed_dictionaries(
        {},
        optional={
            "current_node": ANY_TEXT,
            "step": st.integers(0, 9),
            "status": STATUSES,
            "interrupted_node": st.none() | ANY_TEXT,
            "interrupt_reason": st.none() | ANY_TEXT,
            "thread_id": st.none() | ANY_TEXT,
            "_internal_data": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            "stop_current_execution": st.sampled_from(["stop_requested", "stopped"]),
        },
    )
)
def test_execution_state_from_dict(reference: Worker, data: dict[str, Any]) -> None:
    same(reference, "execution_from_dict", errors=True, data=data)


@_EXAMPLES
@given(
    values=st.fixed_dictionaries(
        {"current_node": ANY_TEXT},
        optional={
            "step": st.integers(0, 9),
            "status": STATUSES,
            "stop_current_execution": st.sampled_from(["none", "stop_requested", "stopped", "halted"]),
            "interrupt_data": st.none() | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        },
    )
)
def test_execution_state_fields(reference: Worker, values: dict[str, Any]) -> None:
    same(reference, "execution_state_new", errors=True, values=values)


def test_status_enums(reference: Worker) -> None:
    same(reference, "status_enums")


# -- ToolResult ----------------------------------------------------------------------------

TOOL_RESULT_SPECS = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "args": st.lists(st.none() | st.text(max_size=4) | st.integers(0, 3), max_size=1),
            "kwargs": st.fixed_dictionaries(
                {},
                optional={
                    "state": st.none() | st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 2), max_size=2),
                    "is_error": st.booleans(),
                    "content": st.none() | st.text(max_size=4),
                },
            ),
        },
    ),
    min_size=1,
    max_size=4,
)


@_EXAMPLES
@given(specs=TOOL_RESULT_SPECS)
def test_tool_result(reference: Worker, specs: list[dict[str, Any]]) -> None:
    same(reference, "tool_results", specs=specs)


# -- the differences docs/tenxgraph.md lists, as the reference shows them ----------------


def test_a_span_of_white_space_is_sent_by_the_reference_and_not_by_ctxmgr(reference: Worker) -> None:
    blank = [{"message_id": f"m{i}", "role": "user", "content": [{"type": "text", "text": " "}]} for i in range(3)]
    args = {"model": "gpt-4o-mini", "messages": blank, "kwargs": {"max_messages": 1, "keep_recent": 1}}
    theirs = reference("summarize", **args, llm={"answer": "Nothing was said."})["ok"]
    mine = ours("summarize", **args, llm={"answer": "Nothing was said."}, ctxmgr_kwargs=REFERENCE_SWITCHES)["ok"]
    assert (len(theirs["calls"]), theirs["context_summary"]) == (1, "Nothing was said.")
    assert (len(mine["calls"]), mine["context_summary"], mine["ids"]) == (0, None, ["m0", "m1", "m2"])


@pytest.mark.parametrize(
    ("model", "theirs", "mine"),
    [
        ("claude-sonnet-4", "anthropic", "openai"),
        ("anthropic/claude-sonnet-4", "anthropic", "openai"),
        ("claude/x", "anthropic", "openai"),
        ("meta/gemini-x", "google", "openai"),
        ("offline", "openai", "offline"),
    ],
)
def test_providers_ctxmgr_does_not_have_or_reads_otherwise(
    reference: Worker, model: str, theirs: str, mine: str
) -> None:
    assert reference("summary_manager", model=model)["ok"]["_provider"] == theirs
    assert ours("summary_manager", model=model)["ok"]["_provider"] == mine


def test_the_default_instruction_is_ctxmgrs_own(reference: Worker) -> None:
    messages = [{"message_id": f"m{i}", "role": "user", "content": [{"type": "text", "text": "hi"}]} for i in range(3)]
    args = {"model": "gpt-4o-mini", "messages": messages, "kwargs": {"max_messages": 1, "keep_recent": 1}}
    theirs = reference("summarize", **args, llm={"answer": "S."})["ok"]["system_prompts"]
    mine = ours("summarize", **args, llm={"answer": "S."})["ok"]["system_prompts"]
    from ctxmgr.state.summary_context_manager import _DEFAULT_SUMMARY_PROMPT

    assert mine == [_DEFAULT_SUMMARY_PROMPT]
    assert theirs != mine


def test_ids_given_to_constructors_are_kept_and_a_missing_current_node_is_read(reference: Worker) -> None:
    args = {"kind": "text_message", "text": "hi", "role": "user", "message_id": 7}
    assert reference("message_dump", **args)["ok"]["id_kind"] == "str"  # replaced by a new id
    assert ours("message_dump", **args)["ok"]["id_kind"] == "int"  # kept
    assert reference("execution_state_new", values={})["error"] == "ValidationError"
    assert ours("execution_state_new", values={})["ok"]["current_node"] == "__start__"
