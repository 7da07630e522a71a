"""Tool-output truncation: every tool result over a budget keeps its head and tail.

A marker in the middle names how much was cut. Output whose text is JSON stays
parseable where it can: long strings and arrays are cut inside, each with its marker;
when that cannot bring it under the budget, objects with many keys are cut inside too
(their marker a key, ``"[... 5 keys cut by ctxmgr ...]": null``, in place of the keys
cut); when nothing can, the text is cut to its head and tail. Content parts (a list of ``{"type": ...}`` objects, as
Anthropic's and the Responses API's tool results hold) stay valid parts: an image,
audio or file part is replaced by a text part naming it, never cut in half, and text
parts are cut.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxmgr import _nesting
from ctxmgr.state._budget import check_budget
from ctxmgr.state._compaction import CLEARED_PREFIX, CompactionManager, CompactionReport, edited, output_text
from ctxmgr.state._tokens import UNITS_PER_TOKEN, text_units

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = ["ToolOutputTruncationManager", "head_and_tail", "truncate_output"]

_TEXT_PARTS = ("text", "input_text", "output_text")
_MEDIA_PARTS = frozenset(
    {"image", "image_url", "input_image", "file", "input_file", "document", "audio", "input_audio", "video"}
)


def _marker(cut: int, what: str = "characters") -> str:
    return f"[... {cut:,} {what} cut by ctxmgr ...]"


def head_and_tail(text: str, limit_units: int) -> str:
    """``text`` cut to its head and tail around a marker, within ``limit_units`` units
    (:func:`~ctxmgr.state._tokens.text_units`) when the marker alone fits."""
    if text_units(text) <= limit_units:
        return text

    def cut_to(keep: int) -> str:
        tail = keep // 2
        head = keep - tail
        return f"{text[:head]}\n{_marker(len(text) - keep)}\n{text[len(text) - tail :] if tail else ''}"

    low, high = 0, len(text) - 1
    while low < high:  # the longest kept length whose result fits
        middle = (low + high + 1) // 2
        if text_units(cut_to(middle)) <= limit_units:
            low = middle
        else:
            high = middle - 1
    return cut_to(low)


def _shrink(value: Any, max_chars: int, max_items: int, max_keys: int | None = None) -> Any:
    """``value`` with strings over ``max_chars``, arrays over ``max_items`` and objects
    over ``max_keys`` (``None``: any number) cut inside."""
    if isinstance(value, str) and len(value) > max_chars + len(_marker(len(value))):
        tail = max_chars // 2
        return f"{value[: max_chars - tail]} {_marker(len(value) - max_chars)} {value[len(value) - tail :]}"
    if isinstance(value, list):
        if len(value) <= max_items:
            return [_shrink(item, max_chars, max_items, max_keys) for item in value]
        tail = max_items // 2
        head = [_shrink(item, max_chars, max_items, max_keys) for item in value[: max_items - tail]]
        end = [_shrink(item, max_chars, max_items, max_keys) for item in value[len(value) - tail :]]
        return [*head, _marker(len(value) - max_items, "items"), *end]
    if isinstance(value, dict):
        keys = list(value)
        if max_keys is None or len(keys) <= max_keys:
            return {key: _shrink(value[key], max_chars, max_items, max_keys) for key in keys}
        tail = max_keys // 2
        shrunk = {key: _shrink(value[key], max_chars, max_items, max_keys) for key in keys[: max_keys - tail]}
        shrunk[_marker(len(keys) - max_keys, "keys")] = None
        shrunk.update({key: _shrink(value[key], max_chars, max_items, max_keys) for key in keys[len(keys) - tail :]})
        return shrunk
    return value


def _extent(value: Any) -> tuple[int, int, int]:
    """The length of the longest string, of the longest array and of the largest object
    inside ``value``."""
    longest_string = longest_array = largest_object = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            longest_string = max(longest_string, len(item))
        elif isinstance(item, list):
            longest_array = max(longest_array, len(item))
            stack.extend(item)
        elif isinstance(item, dict):
            largest_object = max(largest_object, len(item))
            stack.extend(item.values())
    return longest_string, longest_array, largest_object


def _shrink_json(value: Any, limit_units: int, like: str = "") -> str | None:
    """``value`` as JSON text within ``limit_units``, cut inside, or ``None``; written
    as ``like`` was (escaped non-ASCII characters or not, compact or spaced)."""
    options: dict[str, Any] = {"ensure_ascii": like.isascii()}
    if like and '": ' not in like and '", ' not in like:
        options["separators"] = (",", ":")
    # Start at the longest string and array there are: looser limits cut nothing.
    longest_string, longest_array, largest_object = _extent(value)
    # Objects keep all their keys while cutting strings and arrays can do (one loop), and
    # are cut too when it cannot (the second): a key names what its value is.
    for max_keys in (None, max(2, min(limit_units // 2, largest_object // 2))):
        max_chars = max(16, min(limit_units, longest_string // 2))
        max_items = max(2, min(limit_units // 2, longest_array // 2))
        while True:
            text = _nesting.dumps(_shrink(value, max_chars, max_items, max_keys), **options)
            if text_units(text) <= limit_units:
                return text
            if max_chars <= 16 and max_items <= 2 and (max_keys is None or max_keys <= 2):
                break
            max_chars, max_items = max(16, max_chars // 2), max(2, max_items // 2)
            max_keys = None if max_keys is None else max(2, max_keys // 2)
    return None


def _parsed(text: str) -> Any:
    if text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _truncate_parts(parts: list[dict[str, Any]], limit_units: int) -> list[dict[str, Any]]:
    """Content parts within about ``limit_units``: media replaced, text parts cut."""
    kind = next((p["type"] for p in parts if p.get("type") in _TEXT_PARTS), "text")
    out: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") in _MEDIA_PARTS:
            size = len(_nesting.dumps(part, default=str))
            out.append({"type": kind, "text": f"[{part['type']} part removed by ctxmgr: {size:,} characters]"})
        else:
            out.append(part)
    if text_units(_nesting.dumps(out, default=str)) <= limit_units:
        return out
    texts = [
        i
        for i, p in enumerate(out)
        if p.get("type") in _TEXT_PARTS and isinstance(p.get("text"), str) and parts[i] is p
    ]
    total = sum(text_units(out[i]["text"]) for i in texts) or 1
    for i in texts:
        share = max(UNITS_PER_TOKEN * 4, limit_units * text_units(out[i]["text"]) // total)
        out[i] = {**out[i], "text": head_and_tail(out[i]["text"], share)}
    return out


_CACHED_LENGTH = 1 << 15
"""Texts up to this many characters have their cuts kept (:func:`_truncate_text`)."""


@functools.lru_cache(maxsize=256)
def _truncate_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` units: JSON cut inside where it can be, else head and
    tail. The last 256 cuts of texts up to :data:`_CACHED_LENGTH` characters are kept
    (a few megabytes at most): the same output recurs across a dataset's runs of one task
    (of the 293 long outputs of the 200 tau-bench conversations, 99 differ)."""
    parsed = _parsed(text)
    shrunk = _shrink_json(parsed, limit, text) if isinstance(parsed, dict | list) else None
    return shrunk if shrunk is not None else head_and_tail(text, limit)


def truncate_output(output: Any, max_tokens: int) -> Any:
    """A tool output cut to about ``max_tokens`` estimated tokens, in the shape it had.

    Strings stay strings (JSON text stays parseable where it can), lists of content
    parts stay valid parts, other JSON values stay values where cutting inside them is
    enough, else become their text cut to head and tail.
    """
    limit = max_tokens * UNITS_PER_TOKEN
    if isinstance(output, str):
        if len(output) <= _CACHED_LENGTH and output.__class__ is str:
            return _truncate_text(output, limit)
        return _truncate_text.__wrapped__(output, limit)
    if isinstance(output, list) and output and all(isinstance(p, dict) and "type" in p for p in output):
        return _truncate_parts(output, limit)
    if isinstance(output, dict | list):
        text = _shrink_json(output, limit)
        if text is not None:
            return json.loads(text)
    return head_and_tail(output_text(output), limit)


class ToolOutputTruncationManager(CompactionManager):
    """Cut every tool result over ``max_tool_output`` estimated tokens to its head and tail.

    Args:
        max_tool_output: The most estimated tokens one tool result keeps (above 0).
    """

    def __init__(self, max_tool_output: int) -> None:
        check_budget("max_tool_output", max_tool_output)
        self.max_tool_output = max_tool_output

    def compact(self, messages: Sequence[Message]) -> tuple[list[Message], CompactionReport]:
        # The model, here: the outline fast path cuts results without it (truncate_output).
        from ctxmgr.state._blocks import ToolResultBlock

        after: list[Message] = []
        truncated = 0
        for message in messages:
            content: list[Any] = []
            count = 0
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    text = output_text(block.output)
                    if text_units(text) // UNITS_PER_TOKEN > self.max_tool_output and not text.startswith(
                        CLEARED_PREFIX
                    ):
                        block = block.model_copy(update={"output": truncate_output(block.output, self.max_tool_output)})
                        count += 1
                content.append(block)
            after.append(edited(message, content=content) if count else message)
            truncated += count
        return after, self._report(messages, after, truncated_outputs=truncated)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_tool_output={self.max_tool_output})"
