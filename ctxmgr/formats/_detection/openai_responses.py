"""The light half of OpenAI Responses: detection, the outline reader, what the reader carries.

Nothing here imports pydantic or the model; the full reader and writer are in
:mod:`ctxmgr.formats._openai_responses`. :func:`outline` accepts only what that reader
reads plainly, a property ``tests/formats/test_openai_responses_outline.py`` binds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr import _format_registry as format_registry, _nesting
from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, Outline, arguments_json, call_text, first_record
from ctxmgr.formats._declaration import EACH, Declaration, of_type
from ctxmgr.formats._detection.openai_chat import SUMMARY_NAME, str_in
from ctxmgr.state._tokens import texts_units

if TYPE_CHECKING:
    from ctxmgr.state.message import Role

__all__ = [
    "DECLARATION",
    "CARRIED",
    "clue",
    "CALLS",
    "CHAT_KEYS",
    "DETECT_LIMIT",
    "FOREIGN_WRAPPER_KEYS",
    "ITEM_TYPES",
    "MODEL_SIDE",
    "PART_TYPES",
    "REQUEST_KEYS",
    "RESULTS",
    "ROLES",
    "SYSTEM_ROLES",
    "UNKNOWN",
    "call_arguments",
    "is_request",
    "outline",
    "score",
    "score_item",
    "score_items",
    "score_parts",
]

ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


SYSTEM_ROLES = frozenset({"system", "developer"})


# Client-side tool calls and their outputs, with the key that holds the pairing id.
CALLS = {
    "function_call": "call_id",
    "custom_tool_call": "call_id",
    "computer_call": "call_id",
    "local_shell_call": "call_id",
    "shell_call": "call_id",
    "apply_patch_call": "call_id",
    "mcp_approval_request": "id",
    "tool_search_call": "call_id",
}


RESULTS = {
    "function_call_output": "call_id",
    "custom_tool_call_output": "call_id",
    "computer_call_output": "call_id",
    "local_shell_call_output": "id",
    "shell_call_output": "call_id",
    "apply_patch_call_output": "call_id",
    "mcp_approval_response": "approval_request_id",
    "tool_search_output": "call_id",
}


# Model output that is neither a message nor a client call: part of the assistant turn.
MODEL_SIDE = frozenset(
    {
        "reasoning",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "compaction",
        "program",
        "program_output",
    }
)


ITEM_TYPES = frozenset(
    {
        "message",
        "item_reference",
        "additional_tools",
        "compaction_trigger",
        *CALLS,
        *RESULTS,
        *MODEL_SIDE,
    }
)


PART_TYPES = frozenset({"input_text", "output_text", "refusal", "input_image", "input_file", "input_audio"})


# Keys of Chat Completions messages: such a record is not an easy input message.
CHAT_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call", "name", "refusal", "audio"})


FOREIGN_WRAPPER_KEYS = frozenset({"messages", "contents", "context", "system"})


REQUEST_KEYS = frozenset(
    {
        "model",
        "instructions",
        "previous_response_id",
        "reasoning",
        "text",
        "include",
        "max_output_tokens",
        "store",
        "truncation",
        "conversation",
        "prompt",
        "background",
        "max_tool_calls",
        "prompt_cache_key",
        "safety_identifier",
        "service_tier",
    }
)


DETECT_LIMIT = 32


UNKNOWN = -1  # detection: an item of a type we do not know (neither for nor against)


def score_parts(parts: list[Any]) -> int:
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if not str_in(kind, PART_TYPES):
            return NO
    return CERTAIN if parts else PLAUSIBLE


def score_item(item: Any) -> int:
    if not isinstance(item, dict):
        return NO
    kind = item.get("type")
    if kind is None:
        if not str_in(item.get("role"), ROLES) or not CHAT_KEYS.isdisjoint(item.keys()):
            return NO
        content = item.get("content")
        if isinstance(content, str):
            return PLAUSIBLE
        return score_parts(content) if isinstance(content, list) else NO
    if not isinstance(kind, str):
        return NO
    if kind == "message":
        content = item.get("content")
        if not str_in(item.get("role"), ROLES) or not isinstance(content, str | list):
            return NO
        if isinstance(content, str) or score_parts(content) != NO:
            return CERTAIN
        # A typed message whose parts all have a type, one of them new to us: the reader
        # passes such parts through, so it says neither yes nor no.
        typed = all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in content)
        return UNKNOWN if typed else NO
    return CERTAIN if kind in ITEM_TYPES else UNKNOWN


def score_items(items: list[Any]) -> int:
    scores = [score_item(item) for item in items[:DETECT_LIMIT]]
    if NO in scores or all(s == UNKNOWN for s in scores):
        return NO
    return max(scores)


def is_request(value: dict[str, Any]) -> bool:
    if not REQUEST_KEYS.isdisjoint(value.keys() - {"model"}):
        return True
    tools = value.get("tools")
    # Responses function tools are flat ({"type": "function", "name": ...}).
    return isinstance(tools, list) and any(
        isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("name"), str)
        for t in tools[:DETECT_LIMIT]
    )


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    if isinstance(value, list):
        return score_items(value) if value else NO
    if not isinstance(value, dict) or not FOREIGN_WRAPPER_KEYS.isdisjoint(value.keys()):
        return NO
    if value.get("object") == "response" and isinstance(value.get("output"), list):
        return CERTAIN
    if "input" in value:
        items = value["input"]
        if isinstance(items, str):
            return CERTAIN if not REQUEST_KEYS.isdisjoint(value.keys()) else NO
        if not isinstance(items, list):
            return NO
        score = score_items(items) if items else PLAUSIBLE
        return CERTAIN if score == PLAUSIBLE and is_request(value) else score
    if "type" in value or "role" in value:
        score = score_item(value)
        return NO if score == UNKNOWN else score
    return NO


def clue(value: Any) -> int:
    """How strongly ``value`` points to Responses when no format recognises it: an
    ``input`` key, or a list whose first object has a ``type`` and no ``role``."""
    if isinstance(value, dict):
        return 2 if "input" in value else 0
    first = first_record(value)
    return 2 if first is not None and "type" in first and "role" not in first else 0


DECLARATION = Declaration(
    name="openai-responses",
    roles=ROLES,
    call_ids=((of_type("function_call", "custom_tool_call"), "call_id"),),
    result_ids=((of_type("function_call_output", "custom_tool_call_output"), "call_id"),),
    # A string input (an item of its own); a message's content (a string, or parts: the
    # reader joins their text, and their text with refusals); a tool output (a string,
    # or parts and values with their text; an approval's reason); the request's
    # instructions.
    marker_texts=(
        (),
        ("content",),
        ("content", EACH, "text"),
        ("content", EACH, ("text", "refusal")),
        ("content", EACH, "refusal"),
        ("output",),
        ("output", EACH),
        ("output", EACH, "text"),
        ("reason",),
    ),
    marker_names=((("name",), SUMMARY_NAME),),
    container_texts=(("instructions",),),
)
"""Roles, ids and the fields that may carry the summary marker, for both readers."""


CARRIED = Carried(
    record=frozenset(
        {
            "type",
            "role",
            "content",
            "call_id",
            "name",
            "arguments",
            "output",
            "id",
            "status",
            "summary",
            "encrypted_content",
            "input",
            "action",
            "operation",
            "approve",
            "reason",
            "approval_request_id",
            "tools",
        }
    ),
    part=frozenset({"type", "text", "image_url", "file_id", "file_data", "filename", "detail", "annotations"}),
    modelled_parts=frozenset(
        {"input_text", "output_text", "refusal", "text", "input_image", "input_file", "input_audio"}
    ),
    # Any other item is carried whole (a passthrough block): counted as one dropped block.
    modelled_records=frozenset({None, "message", "reasoning"}) | CALLS.keys() | RESULTS.keys(),
    only_to={"encrypted_content": frozenset({"langchain"})},
)
"""The item and part fields the reader maps into the model."""


# -- the outline reader (the trim fast path) ----------------------------------------------
#
# The full reader groups items into messages: a maximal run of model-side items (assistant
# message items, reasoning, function calls, server tool calls) is one assistant message, an
# output item one tool message, a user/system/developer item one message each; pass-through
# items (item_reference...) travel with the next item's message (or the last one at the
# end). Every message's items are a contiguous run of the list, so the outline keeps where
# each run starts and ``rebuild`` writes the kept runs back in the kept order, as the
# writer writes each kept message's source items.

_NAME = "openai-responses"

# Of the calls and outputs, the outline reads function and custom tool calls and their
# outputs (the others' ids and arguments sit in other keys): it declines the rest.

# Model-side items the reader carries whole in the assistant turn (reasoning aside: it may
# leave a turn with nothing else, which the rules report).
_OPAQUE = MODEL_SIDE - {"reasoning"}

# Known items the reader passes on to the next item's message.
_PENDING = frozenset({"item_reference", "additional_tools", "compaction_trigger"})

_TEXT_PARTS = frozenset({"input_text", "output_text"})
_MEDIA_PARTS = frozenset({"input_image", "input_file", "input_audio"})


def _plain_parts(parts: list[Any]) -> bool:
    """Parts the reader reads plainly and detection counts as Responses parts (a summary
    header in their text is :data:`DECLARATION`'s to find)."""
    for part in parts:
        if part.__class__ is not dict:
            return False
        kind = part.get("type")
        if kind in _TEXT_PARTS:
            text = part.get("text")
        elif kind == "refusal":
            # The summary checks join the parts' "text" keys: a refusal must have none.
            text = part.get("refusal")
            if "text" in part:
                return False
        elif kind in _MEDIA_PARTS:
            if "text" in part:
                return False
            continue
        else:
            return False  # "text" parts and unknown ones: detection does not count them
        if text.__class__ is not str:
            return False
    return True


def _part_texts(parts: list[Any], *, with_refusals: bool) -> list[str]:
    """The text of accepted parts, in order (a refusal's when ``with_refusals``)."""
    return [
        part["text"] if part["type"] in _TEXT_PARTS else part["refusal"]
        for part in parts
        if part["type"] in _TEXT_PARTS or (with_refusals and part["type"] == "refusal")
    ]


def _detected_here(value: list[Any]) -> bool:
    """Whether detection picks this format for a bare item list (a dataset line after the
    first is not detected on the fast path, and another format may read a list too)."""
    scores = [(found.score(value), found.name) for found in format_registry.ENTRIES]
    best = max(score for score, _ in scores)
    matches = [name for score, name in scores if score == best]
    return best != NO and (best == PLAUSIBLE or len(matches) == 1) and matches[0] == _NAME


# The per-item checks stay inline: a helper call per item would cost the trim fast path.
def outline(value: Any) -> Outline | None:  # noqa: C901
    """Roles and call ids of a request ``{"input": [...], ...}`` or a bare item list, one
    entry per message of the full reader, if it is plainly well-formed Responses input (see
    :class:`~ctxmgr.formats._base.Outline`).

    Declines (``None``) whatever the full reader would treat specially or reject, or
    detection would give to another format: a summary (or the header anywhere), a
    malformed field, unknown items or parts, calls other than function and custom tool
    calls, a turn of nothing but reasoning, a string ``input``, a stored response.
    """
    instructions: Any = None
    if value.__class__ is dict:
        items: Any = value.get("input")
        if "role" in value or not FOREIGN_WRAPPER_KEYS.isdisjoint(value.keys()):
            return None
        instructions = value.get("instructions")
    else:
        items = value
    if items.__class__ is not list or not items:
        return None
    roles: list[str] = []
    calls: list[tuple[str, ...]] = []
    results: list[tuple[str, ...]] = []
    starts: list[int] = []  # where each message's run of items begins
    add_role, add_calls, add_results, add_start = roles.append, calls.append, results.append, starts.append
    no_ids: tuple[str, ...] = ()
    first = 0
    if instructions.__class__ is str and instructions:
        if DECLARATION.container_marked(value):
            return None
        # The reader's leading system message; the writer leaves 'instructions' in place.
        add_role("system")
        add_calls(no_ids)
        add_results(no_ids)
        first = 1
    message_role = DECLARATION.roles.get
    marked = DECLARATION.marked
    chat_keys = CHAT_KEYS.isdisjoint
    turn = -1  # the open assistant turn's message, if any (always the last message)
    made: list[str] = []  # its call ids
    reasoning = other = False  # what blocks it holds
    pending = False  # pass-through items wait for the next message
    placed = 0  # one past the last item placed in a message
    # The loop runs once per item of every line of a dataset: kept lean on purpose (local
    # names, one type test per field). An unhashable role or type raises TypeError.
    try:
        for index, item in enumerate(items):
            if item.__class__ is not dict or marked(item):
                return None  # not an item, or a summary to lift or a forged one to warn about
            get = item.get
            kind = get("type")
            if kind is None or kind == "message":
                mapped = message_role(get("role"))
                if mapped is None or "name" in item or (kind is None and not chat_keys(item)):
                    return None  # a role the reader rejects; chat's keys (detection says no)
                content = get("content")
                if content.__class__ is not str and (content.__class__ is not list or not _plain_parts(content)):
                    return None
                if mapped == "assistant":
                    if turn < 0:
                        turn = len(roles)
                        add_role("assistant")
                        add_calls(no_ids)
                        add_results(no_ids)
                        add_start(placed)
                    # A string is a text block, even empty; an empty list adds no block.
                    other = other or pending or content.__class__ is str or bool(content)
                else:
                    if turn >= 0:
                        if made:
                            calls[turn] = tuple(made)
                            made = []
                        elif reasoning and not other:
                            return None  # reasoning with nothing to belong to: the rules warn
                        turn, reasoning, other = -1, False, False
                    add_role(mapped)
                    add_calls(no_ids)
                    add_results(no_ids)
                    add_start(placed)
            elif kind == "function_call" or kind == "custom_tool_call":
                call_id = get("call_id")
                if call_id.__class__ is not str or not call_id or get("name").__class__ is not str:
                    return None  # an empty id pairs with nothing: the model counts no call
                if turn < 0:
                    turn = len(roles)
                    add_role("assistant")
                    add_calls(no_ids)
                    add_results(no_ids)
                    add_start(placed)
                made.append(call_id)
                other = other or pending
            elif kind == "function_call_output" or kind == "custom_tool_call_output":
                call_id = get("call_id", "")
                if call_id.__class__ is not str:
                    return None
                if turn >= 0:
                    if made:
                        calls[turn] = tuple(made)
                        made = []
                    elif reasoning and not other:
                        return None
                    turn, reasoning, other = -1, False, False
                add_role("tool")
                add_calls(no_ids)
                add_results((call_id,) if call_id else no_ids)
                add_start(placed)
            elif kind == "reasoning" or kind in _OPAQUE:
                if turn < 0:
                    turn = len(roles)
                    add_role("assistant")
                    add_calls(no_ids)
                    add_results(no_ids)
                    add_start(placed)
                if kind == "reasoning":
                    reasoning = True
                    other = other or pending
                else:
                    other = True
            elif kind in _PENDING:
                pending = True
                continue
            else:
                return None
            pending = False
            placed = index + 1
    except TypeError:
        return None
    if not starts:
        # Only pass-through items: the reader makes one assistant message of them.
        add_role("assistant")
        add_calls(no_ids)
        add_results(no_ids)
        add_start(0)
    elif turn >= 0:
        if made:
            calls[turn] = tuple(made)
        elif reasoning and not other and not pending:
            return None
    if value.__class__ is list and not _detected_here(value):
        return None
    return _outline(value, items, instructions if first else None, roles, calls, results, starts)


def _outline(
    value: Any,
    items: list[Any],
    instructions: str | None,
    roles: list[str],
    calls: list[tuple[str, ...]],
    results: list[tuple[str, ...]],
    starts: list[int],
) -> Outline:
    first = 0 if instructions is None else 1
    ends = [*starts[1:], len(items)]  # pass-through items at the end go with the last message

    def rebuild(kept: list[int]) -> Any:
        picked: list[Any] = []
        for i in kept:
            if i >= first:  # the instructions message stays in 'instructions'
                picked.extend(items[starts[i - first] : ends[i - first]])
        if value is items:
            return picked
        return {**value, "input": picked}

    counted_chars: list[int] = []

    def units() -> list[int]:
        # Counted once for both: the characters (a budget's report) of the same strings,
        # each message's joined in one (units and characters add up over a join), ASCII
        # text (most) measured by its length (text_units' own first case).
        texts = [instructions] if instructions is not None else []
        texts += [_counted(items[start:end]) for start, end in zip(starts, ends, strict=True)]
        counted_chars[:] = sizes = list(map(len, texts))
        return texts_units(texts, sizes)

    def chars(index: int) -> int:
        if not counted_chars:
            units()
        return counted_chars[index]

    def records(index: int) -> list[Any]:
        return items[starts[index - first] : ends[index - first]] if index >= first else []

    return Outline(roles, calls, results, rebuild, units, chars, records)


def _counted(run: list[dict[str, Any]]) -> str:
    """What the token estimate counts of one message's items (its
    :func:`~ctxmgr.state._tokens.message_units`), as the reader's ``Message`` gives it, in
    one string: the text of its text parts and tool outputs, joined, and the repr of its
    calls in the reader's shape."""
    if len(run) == 1:  # the usual messages: one text, one call or one output (the loop's text, without its lists)
        item = run[0]
        kind = item.get("type")
        if kind is None or kind == "message":
            content = item["content"]
            if content.__class__ is str:
                return str(content)
        elif kind == "function_call_output" or kind == "custom_tool_call_output":
            return _output_text(item.get("output"))
        elif kind == "function_call" or kind == "custom_tool_call":
            return f"[{call_text(item['call_id'], item['name'], arguments_json(call_arguments(kind, item)))}]"
    texts: list[str] = []
    made: list[str] = []
    for item in run:
        kind = item.get("type")
        if kind is None or kind == "message":
            content = item["content"]
            texts.extend([content] if content.__class__ is str else _part_texts(content, with_refusals=True))
        elif kind == "function_call" or kind == "custom_tool_call":
            made.append(call_text(item["call_id"], item["name"], arguments_json(call_arguments(kind, item))))
        elif kind == "function_call_output" or kind == "custom_tool_call_output":
            texts.append(_output_text(item.get("output")))
    if made:
        texts.append(f"[{', '.join(made)}]")
    return "".join(texts)


def call_arguments(kind: str, item: dict[str, Any]) -> Any:
    """What a call item passes to its tool, as the model's ``function.arguments`` holds it:
    a custom tool's ``input``, a function's ``arguments``, else a built-in tool's
    ``action`` or ``operation``."""
    if kind == "custom_tool_call":
        return item.get("input", "")
    if "arguments" in item:
        return item["arguments"]
    return item.get("action", item.get("operation", {}))


def _output_text(output: Any) -> str:
    """A tool output as the model's text gives it: text parts joined by newlines (the
    reader's rule), a string as is, anything else as JSON."""
    if output.__class__ is list:
        texts: list[str] = [p["text"] for p in output if p.__class__ is dict and p.get("text").__class__ is str]
        if len(texts) == len(output):
            return "\n".join(texts)
    return output if output.__class__ is str else _nesting.dumps(output, default=str)
