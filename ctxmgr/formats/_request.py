"""What a conversation's container holds beside its messages, and how it converts.

A container (a request body, a line of a dataset) holds more than messages: tool
definitions, ``tool_choice``, a token cap, sampling settings, stop sequences, and the
columns of a dataset (``task_id``, ``reward``...). Converting to another format:

* what has an equivalent in the target is read into :class:`RequestSettings` by the
  source format's :class:`RequestFormat` and written back in the target's spelling;
* keys with the same name and meaning in both formats (``model``; ``stream``, ``user``,
  ``metadata``... between the two OpenAI APIs) are copied;
* keys the source format does not know are dataset columns: copied as they are;
* the rest has no place in the target and is counted in :class:`~ctxmgr.formats._base.Losses`.

Native and LangChain have no request of their own: they keep every key as it is (a
native file converted from another format keeps that format's spelling, so converting
it back restores the container exactly). Each provider format's spelling lives in its
request module, ``ctxmgr/formats/_<format>_request.py`` (its ``REQUEST``, which the
adapter names); this module holds what they share.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol

from ctxmgr import _nesting
from ctxmgr.formats._base import Conversation, Losses

__all__ = [
    "RequestFormat",
    "RequestSettings",
    "ToolChoice",
    "ToolDefinition",
    "carried_keys",
    "count",
    "json_schema",
    "merge_into",
    "number",
    "read_tools",
    "says_nothing",
    "stop_list",
]


@dataclass
class ToolDefinition:
    """A function the model may call: its name, description and JSON Schema.

    ``strict`` is what the source format means (the Responses API makes a function strict
    unless told otherwise; the others do not), so writers state it where defaults differ.
    """

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool = False


@dataclass
class ToolChoice:
    """Whether and which tool the model must call (``tool`` names one, in ``name``).

    ``allowed`` restricts ``auto`` or ``required`` to some of the tools (OpenAI's
    ``allowed_tools``, Gemini's ``allowedFunctionNames``).
    """

    mode: Literal["auto", "none", "required", "tool"]
    name: str | None = None
    allowed: list[str] | None = None


@dataclass
class RequestSettings:
    """The request settings every provider format has an equivalent for."""

    tools: list[ToolDefinition] | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop: list[str] | None = None
    reasoning_effort: str | None = None
    """OpenAI's reasoning effort (``reasoning_effort`` in Chat, ``reasoning.effort`` in
    Responses); the other providers budget thinking in tokens, so it has no equivalent."""

    def filled(self) -> Iterator[str]:
        """The names of the settings that are set."""
        return (f.name for f in fields(self) if getattr(self, f.name) is not None)

    def update(self, other: RequestSettings) -> None:
        """Take ``other``'s settings where this one has none."""
        for name in other.filled():
            if getattr(self, name) is None:
                setattr(self, name, getattr(other, name))


class RequestFormat(Protocol):
    """One provider format's request spelling."""

    keys: frozenset[str]
    """Top-level keys of its request (and stored response): any other key of a container
    in this format is a dataset column."""

    shared: frozenset[str]
    """Keys with the same name and meaning in other formats that have them (copied)."""

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        """The settings in ``request`` (its own keys only), and the keys not read into them.

        What cannot reach any other format (a nested key with no equivalent) is counted
        in ``losses`` here; a top-level key left over is the caller's to copy or count.
        """
        ...

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        """The keys for ``settings`` in this spelling; what has no place is counted."""
        ...

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        """The function(s) one tool entry declares, if it is in this spelling, else None."""
        ...

    def choice(self, value: Any) -> ToolChoice | None:
        """``tool_choice`` (or its equivalent's value) if it is in this spelling, else None."""
        ...


@dataclass
class _Any:
    """The request of a container whose spelling is unknown (native, LangChain): each key
    is read by the provider format that has it, tools and tool choices by their shape."""

    providers: list[RequestFormat]
    keys: frozenset[str] = field(init=False)
    shared: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.keys = frozenset().union(*(p.keys for p in self.providers))
        self.shared = frozenset().union(*(p.shared for p in self.providers))

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        settings = RequestSettings()
        rest: dict[str, Any] = {}
        shaped = {k: request[k] for k in ("tools", "functions", "tool_choice") if k in request}
        if isinstance(shaped.get("tools"), list):
            settings.tools = read_tools(shaped.pop("tools"), self.providers, losses)
        choice = shaped.pop("tool_choice", None)
        if choice is not None:
            settings.tool_choice = next((c for p in self.providers if (c := p.choice(choice)) is not None), None)
            if settings.tool_choice is None:
                losses.add("request key 'tool_choice'")
        unread = {k: v for k, v in request.items() if k not in ("tools", "tool_choice")}
        for provider in self.providers:
            mine = {k: unread.pop(k) for k in list(unread) if k in provider.keys and k not in provider.shared}
            if mine:
                found, left = provider.read(mine, losses)
                settings.update(found)
                rest.update(left)
        rest.update(unread)
        return settings, rest

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        raise NotImplementedError  # never a target: native and LangChain keep every key

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        return next((t for p in self.providers if (t := p.tools(value)) is not None), None)

    def choice(self, value: Any) -> ToolChoice | None:
        return next((c for p in self.providers if (c := p.choice(value)) is not None), None)


def read_tools(value: Any, spellings: Iterable[RequestFormat], losses: Losses) -> list[ToolDefinition]:
    """The functions of a ``tools`` list in any of ``spellings``; others are counted."""
    found: list[ToolDefinition] = []
    candidates = list(spellings)
    for entry in value if isinstance(value, list) else [value]:
        tools = next((t for s in candidates if (t := s.tools(entry)) is not None), None)
        if tools is None:
            losses.add(f"tool definition {_tool_kind(entry)}")
        else:
            found.extend(tools)
    return found


def _tool_kind(entry: Any) -> str:
    """How a tool definition no other format has is named (``of type 'web_search'``)."""
    if isinstance(entry, dict):
        kind = entry.get("type")
        if isinstance(kind, str):
            return f"of type '{kind}'"
        if len(entry) == 1:
            return f"'{next(iter(entry))}'"
    return "of an unknown shape"


def _provider(name: str) -> RequestFormat | None:
    from ctxmgr.formats import FORMATS

    spelling: RequestFormat | None = getattr(FORMATS[name], "request", None)
    return spelling


def _any() -> _Any:
    from ctxmgr.formats import FORMATS

    return _Any([spelling for name in FORMATS if (spelling := _provider(name)) is not None])


def carried_keys(conversation: Conversation, target: str) -> dict[str, Any]:
    """The keys of ``conversation``'s container (outside its messages) in ``target``'s
    spelling, for a conversion to ``target``; what has no place is counted in
    ``conversation.dropped``."""
    from ctxmgr.formats import FORMATS

    keys: dict[str, Any] = FORMATS[conversation.format].container_keys(conversation.container)
    if not keys:
        return {}
    origin = conversation.origin
    destination = _provider(target)
    if destination is None or target == origin:
        return keys  # a format with no request of its own keeps a container's keys as they are
    losses = conversation.dropped
    source: RequestFormat = (_provider(origin) if origin is not None else None) or _any()
    request = {k: v for k, v in keys.items() if k in source.keys}
    settings, rest = source.read(request, losses)
    unknown_spelling = isinstance(source, _Any)
    out: dict[str, Any] = {}
    for key, value in keys.items():
        if key not in source.keys:
            out[key] = value  # a dataset column
        elif key in rest:
            # Spelled in no known format (native with no messages from one, LangChain), a
            # key the target's request has is taken to mean what it means there.
            same = key in destination.keys if unknown_spelling else key in source.shared & destination.shared
            if same:
                out[key] = value
            elif not says_nothing(key, value):
                losses.add(f"request key '{key}'")
    out.update(destination.write(settings, losses))
    return out


def merge_into(carried: dict[str, Any], written: Any, *, list_key: str) -> Any:
    """The target container: the writer's ``written`` value with the ``carried`` keys.

    The writer's keys win, objects under the same key are merged (a Gemini ``config``
    holding both the system instruction and the sampling settings). A writer that made a
    bare list gets an object around it, under ``list_key``, when there are keys to keep.
    """
    if not carried:
        return written
    if isinstance(written, list):
        return {**carried, list_key: written}
    if not isinstance(written, dict):
        return written
    out = dict(carried)
    for key, value in written.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_into(out[key], value, list_key=list_key)
        else:
            out[key] = value
    return out


# -- helpers the spellings share -------------------------------------------------------


def json_schema(schema: Any) -> Any:
    """A Gemini ``parameters`` schema (OpenAPI: ``"type": "OBJECT"``) as JSON Schema."""
    try:
        return _lowercase_types(schema)
    except RecursionError:
        pass  # a schema as deep as a file may nest: once more with the limit raised
    with _nesting.deep_recursion():
        return _lowercase_types(schema)


def _lowercase_types(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_lowercase_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _lowercase_types(item) for name, item in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = _lowercase_types(value)
        else:
            out[key] = value
    return out


def stop_list(value: Any) -> list[str] | None:
    """Stop sequences as a list (OpenAI Chat takes one string too); None if not strings."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def number(value: Any) -> float | None:
    """A sampling setting's value (a JSON number, not a boolean), as written."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def count(value: Any) -> int | None:
    """A token cap or ``top_k``: a JSON integer (``40.0`` too, as Gemini files have it)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_DEFAULTS: dict[str, Any] = {"stream": False, "n": 1}
"""Request keys whose value here is what leaving them out means."""


def says_nothing(key: str, value: Any) -> bool:
    """Whether dropping ``key: value`` loses nothing (empty, or the default)."""
    return value in (None, "", [], {}) or (
        key in _DEFAULTS and value == _DEFAULTS[key] and type(value) is type(_DEFAULTS[key])
    )
