"""Count the fields a conversion leaves behind.

Each reader maps some fields of its records into the model (roles, text, tool calls and
results, media, reasoning); the rest lives only in the source record, which is written
back untouched in the same format, and kept in ``raw`` by native, but cannot follow into
another provider's format. Converting, each such field is counted, per record, in the
conversation's losses (``message field 'name'``, ``content-part field 'cache_control'``)
instead of being dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxmgr import _format_registry as format_registry
from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import Losses
from ctxmgr.formats._interop import SystemSlot
from ctxmgr.state._blocks import AudioBlock, DocumentBlock, ImageBlock, VideoBlock
from ctxmgr.state.message import Message

__all__ = ["count_uncarried"]

# What each format's reader carries is its registry entry's ``carries`` (a
# :class:`~ctxmgr.formats._base.Carried`, kept in the format's light module).


def _modelled_record(record: dict[str, Any], carried: Carried) -> bool:
    kinds = carried.modelled_records
    return kinds is None or record.get("type") in kinds


def _modelled(part: dict[str, Any], carried: Carried) -> bool:
    if carried.parts_by_key:
        return not carried.modelled_parts.isdisjoint(part)
    return part.get("type") in carried.modelled_parts


# LangChain's additional_kwargs keys the reader maps into the model.
_LANGCHAIN_EXTRAS = frozenset(
    {"tool_calls", "function_call", "reasoning_content", "reasoning", "__gemini_function_call_thought_signatures__"}
)

# Native message fields no provider format has (an id is bookkeeping: the target rebuilds
# one; the time counts when it is known, not 0.0).
_NATIVE_FIELDS = ("metadata", "usages", "raw", "parsed_content")
_NATIVE_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ImageBlock: ("alt_text", "bbox"),
    AudioBlock: ("transcript", "sample_rate", "channels"),
    VideoBlock: ("thumbnail",),
    DocumentBlock: ("pages", "excerpt"),
}


def _parts(record: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for key in ("content", "parts"):
        value = record.get(key)
        if isinstance(value, list):
            yield from (part for part in value if isinstance(part, dict))
    data = record.get("data") if isinstance(record.get("data"), dict) else record.get("kwargs")
    if isinstance(data, dict) and isinstance(data.get("content"), list):
        yield from (part for part in data["content"] if isinstance(part, dict))


def _system_parts(value: Any) -> Iterable[dict[str, Any]]:
    """The parts of a system prompt read from a container slot (blocks, or Gemini parts)."""
    parts = value.get("parts") if isinstance(value, dict) else value
    if isinstance(parts, list):
        yield from (part for part in parts if isinstance(part, dict))


def _lost(record: dict[str, Any], carried: frozenset[str]) -> Iterable[str]:
    # An empty value (null, "", [], {}) says nothing, so losing it loses nothing.
    return (k for k, v in record.items() if k not in carried and v not in (None, "", [], {}))


def count_uncarried(messages: Iterable[Message], target: str, losses: Losses) -> None:
    """Count, in ``losses``, the record and part fields of ``messages`` that do not reach
    ``target`` (each message is judged by the format it was read from)."""
    for message in messages:
        source = message.source_format
        if source is None or source == target or target == "native":
            continue
        if source == "native":
            _count_native(message, losses)
            continue
        carried = format_registry.entry(source).carried()
        if carried is not None:
            _count_records(message.source or (), source, target, carried, losses)


def _count_records(records: Iterable[Any], source: str, target: str, carried: Carried, losses: Losses) -> None:
    part_keys = carried.part - {k for k, to in carried.only_to.items() if target not in to}
    for record in records:
        if isinstance(record, SystemSlot):
            for part in _system_parts(record.value):
                for key in _lost(part, part_keys):
                    losses.add(f"content-part field '{key}'")
            continue
        if not isinstance(record, dict) or not _modelled_record(record, carried):
            continue
        _count_record(record, source, carried.record, losses)
        for part in _parts(record):
            if _modelled(part, carried):
                kept = part_keys
                if source == "gemini" and target == "langchain" and _get_call(part) is None:
                    kept = kept - {"thoughtSignature", "thought_signature"}  # LangChain keeps calls' only
                for key in _lost(part, kept):
                    losses.add(f"content-part field '{key}'")


def _count_record(record: dict[str, Any], source: str, record_keys: frozenset[str], losses: Losses) -> None:
    """The record's own fields, and those of a LangChain record's ``data``/``kwargs``."""
    keys = record_keys
    if source == "openai-chat" and record.get("role") in ("tool", "function"):
        keys = keys | {"name"}  # the called function's name: the call carries it
    for key in _lost(record, keys):
        losses.add(f"message field '{key}'")
    inner = record.get("data") if isinstance(record.get("data"), dict) else record.get("kwargs")
    if isinstance(inner, dict):
        for key in _lost(inner, record_keys):
            losses.add(f"message field '{key}'")
        extras = inner.get("additional_kwargs")
        if isinstance(extras, dict):
            for key in _lost(extras, _LANGCHAIN_EXTRAS):
                losses.add(f"additional_kwargs field '{key}'")


def _get_call(part: dict[str, Any]) -> Any:
    return part.get("functionCall", part.get("function_call"))


def _count_native(message: Message, losses: Losses) -> None:
    """A message of a native file: the fields of the reference's model no provider has."""
    for name in _NATIVE_FIELDS:
        if getattr(message, name) not in (None, {}):
            losses.add(f"message field '{name}'")
    if message.delta:
        losses.add("message field 'delta'")
    if message.timestamp:  # 0.0: unknown (a message ctxmgr made, or read from a file with none)
        losses.add("message field 'timestamp'")
    for block in message.content:
        for name in _NATIVE_BLOCK_FIELDS.get(type(block), ()):
            if getattr(block, name) is not None:
                losses.add(f"{block.type} block field '{name}'")
