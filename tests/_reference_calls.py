"""The calls the differential test makes, written once and run on either package.

``tests/state/test_reference_compat.py`` runs each call on ``ctxmgr.state`` in its own process
and on ``tenxgraph.core.state`` (10xgraph 0.10.3, Python >= 3.12) in one long-lived
worker: this file run as a script, reading one JSON request per line on standard input
and answering one JSON line each. The same code on both sides, with only the import
prefix changed, is the claim under test: code written for the reference runs on ctxmgr.

A request is ``{"call": name, "args": {...}}``; the answer is ``{"ok": value}`` or
``{"error": exception type name, "message": text}``. Inputs are plain JSON: messages
as ``Message.model_validate`` dicts, blocks as dicts with their ``type``. ``args`` may
carry ``"ctxmgr_kwargs"``, constructor arguments only ctxmgr has (its switches), used on
the ctxmgr side only.

This file imports neither package at load time, and nothing but the standard library.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import logging
import sys
import types
import typing
from collections.abc import Callable
from typing import Any
from unittest.mock import AsyncMock, patch

REFERENCE_PREFIX = "tenxgraph.core.state"
CTXMGR_PREFIX = "ctxmgr.state"

SUBMODULES = (
    "agent_state",
    "message",
    "message_block",
    "base_context",
    "message_context_manager",
    "summary_context_manager",
    "execution_state",
    "reducers",
    "tool_result",
    "stream_chunks",
    "stream_emitter",
)
"""The reference's submodules of ``tenxgraph.core.state`` (the last two: streaming)."""

CLASSES = {
    "Message": "message",
    "TokenUsages": "message",
    "AgentState": "agent_state",
    "ExecutionState": "execution_state",
    "BaseContextManager": "base_context",
    "MessageContextManager": "message_context_manager",
    "SummaryContextManager": "summary_context_manager",
    "ToolResult": "tool_result",
}
"""Classes whose members code written for the reference calls, and their module."""

_FOREIGN = {
    "__future__",
    "abc",
    "asyncio",
    "builtins",
    "collections",
    "datetime",
    "enum",
    "injectq",
    "json",
    "logging",
    "pydantic",
    "pydantic_core",
    "typing",
    "typing_extensions",
    "uuid",
}
"""Top-level packages whose names a module imports for itself, not to export them."""


class Api:
    """The submodules of one package, by the reference's names."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.is_ctxmgr = prefix == CTXMGR_PREFIX

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(f"{self.prefix}.{name}")
        setattr(self, name, module)
        return module


CALLS: dict[str, Callable[[Api, dict[str, Any]], Any]] = {}


def call(function: Callable[[Api, dict[str, Any]], Any]) -> Callable[[Api, dict[str, Any]], Any]:
    CALLS[function.__name__] = function
    return function


def answer(api: Api, request: dict[str, Any]) -> dict[str, Any]:
    """Run one request; an exception is an answer too (its type name and message)."""
    try:
        return {"ok": CALLS[request["call"]](api, request.get("args", {}))}
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc)}


# -- building inputs ---------------------------------------------------------------------


def messages(api: Api, specs: list[dict[str, Any]]) -> list[Any]:
    return [api.message.Message.model_validate(spec) for spec in specs]


def block(api: Api, spec: dict[str, Any]) -> Any:
    """A content block model from its dict (through a message, so the union picks the class)."""
    return api.message.Message.model_validate({"role": "user", "content": [spec]}).content[0]


def ids(items: list[Any] | None) -> list[Any] | None:
    return None if items is None else [m.message_id for m in items]


def state(api: Api, args: dict[str, Any]) -> Any:
    return api.agent_state.AgentState(
        context=messages(api, args["messages"]), context_summary=args.get("context_summary")
    )


def kwargs_for(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    kwargs = dict(args.get("kwargs", {}))
    if api.is_ctxmgr:
        kwargs.update(args.get("ctxmgr_kwargs", {}))
    return kwargs


# -- names ---------------------------------------------------------------------------------


def _exported(name: str, value: Any) -> bool:
    if name.startswith("_") or isinstance(value, types.ModuleType | logging.Logger):
        return False
    if typing.get_origin(value) is typing.Annotated:
        return True  # a union alias such as ContentBlock
    module = getattr(value, "__module__", None)
    return not (isinstance(module, str) and module.split(".")[0] in _FOREIGN)


def _private_helper(module: types.ModuleType, name: str, value: Any) -> bool:
    """A ``_name`` the module defines itself (a helper or a constant), which tests reach for."""
    if not name.startswith("_") or name.startswith("__"):
        return False
    return isinstance(value, str) or (inspect.isfunction(value) and value.__module__ == module.__name__)


@call
def exported_names(api: Api, args: dict[str, Any]) -> dict[str, list[str]]:
    """Per submodule, the names it exports (what it defines or re-exports of its package)
    and the private helpers it defines; for the package, its ``__all__``."""
    names: dict[str, list[str]] = {}
    for submodule in SUBMODULES:
        module = importlib.import_module(f"{api.prefix}.{submodule}")
        names[submodule] = sorted(
            n for n, v in vars(module).items() if _exported(n, v) or _private_helper(module, n, v)
        )
    names["__init__"] = sorted(set(importlib.import_module(api.prefix).__all__))
    return names


@call
def class_members(api: Api, args: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    """Per class: methods defined on it, pydantic fields, and attributes a new instance sets."""
    found: dict[str, dict[str, list[str]]] = {}
    for name, submodule in CLASSES.items():
        cls = getattr(getattr(api, submodule), name)
        methods = sorted(
            n
            for n, v in vars(cls).items()
            if not (n.startswith("__") and n.endswith("__"))
            and not n.startswith(("_abc", "__pydantic", "_pydantic", "model_"))
            and (inspect.isfunction(v) or isinstance(v, classmethod | staticmethod | property))
        )
        fields = list(getattr(cls, "model_fields", {}))
        found[name] = {"methods": methods, "fields": fields}
    summary = api.summary_context_manager.SummaryContextManager("gpt-4o-mini")
    found["SummaryContextManager"]["attributes"] = sorted(vars(summary))
    found["MessageContextManager"]["attributes"] = sorted(vars(api.message_context_manager.MessageContextManager()))
    found["ToolResult"]["attributes"] = sorted(vars(api.tool_result.ToolResult("x")))
    return found


# -- Message -------------------------------------------------------------------------------


@call
def message_text(api: Api, args: dict[str, Any]) -> str:
    """``text()`` of a validated message, or of one built with ``model_construct``.

    ``args["construct"]`` is the content as given to ``model_construct``: ``{"str": s}``,
    ``{"other": value}`` or ``{"blocks": [{"model": spec} | {"dict": raw}]}``.
    """
    Message = api.message.Message
    if "message" in args:
        return str(Message.model_validate(args["message"]).text())
    construct = args["construct"]
    content: Any
    if "str" in construct:
        content = construct["str"]
    elif "other" in construct:
        content = construct["other"]
    else:
        content = [block(api, item["model"]) if "model" in item else item["dict"] for item in construct["blocks"]]
    return str(Message.model_construct(role="assistant", content=content).text())


@call
def message_dump(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    """A constructor's message as JSON, without what differs run to run (id, time)."""
    Message = api.message.Message
    kind = args["kind"]
    if kind == "text_message":
        made = Message.text_message(args["text"], role=args["role"], message_id=args.get("message_id"))
    elif kind == "tool_message":
        made = Message.tool_message([block(api, spec) for spec in args["blocks"]], meta=args.get("meta"))
    elif kind == "image_message":
        made = Message.image_message(**args["kwargs"])
    elif kind == "multimodal_message":
        made = Message.multimodal_message([block(api, spec) for spec in args["blocks"]], role=args["role"])
    elif kind == "attach_media":
        made = Message.model_validate(args["message"])
        made.attach_media(api.message.MediaRef.model_validate(args["media"]), as_type=args["as_type"])
    else:
        raise KeyError(kind)
    dumped = made.model_dump(mode="json")
    dumped.pop("timestamp")
    given = dumped.pop("message_id")
    return {"message": dumped, "id_kind": type(given).__name__}


@call
def generate_id(api: Api, args: dict[str, Any]) -> Any:
    made = api.message.generate_id(args["default"])
    if made == args["default"]:
        return {"kept": made}
    return {"new": type(made).__name__, "length": len(str(made))}


@call
def token_usages(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    return dict(api.message.TokenUsages.model_validate(args["values"]).model_dump(mode="json"))


# -- the summary manager's helpers and hooks -----------------------------------------------


@call
def estimate_tokens(api: Api, args: dict[str, Any]) -> int:
    return int(api.summary_context_manager._estimate_tokens(messages(api, args["messages"])))


@call
def messages_to_text(api: Api, args: dict[str, Any]) -> str:
    return str(api.summary_context_manager._messages_to_text(messages(api, args["messages"])))


@call
def should_summarize(api: Api, args: dict[str, Any]) -> bool:
    manager = api.summary_context_manager.SummaryContextManager(args["model"], **kwargs_for(api, args))
    return bool(manager._should_summarize(messages(api, args["messages"])))


@call
def split_context(api: Api, args: dict[str, Any]) -> list[Any]:
    manager = api.summary_context_manager.SummaryContextManager(args["model"], **kwargs_for(api, args))
    summarized, kept = manager._split_context(messages(api, args["messages"]))
    return [ids(summarized), ids(kept)]


@call
def summary_manager(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    """A new manager's settings, its provider and whether its default prompt is set."""
    manager = api.summary_context_manager.SummaryContextManager(args["model"], **kwargs_for(api, args))
    settings = ("model", "max_messages", "token_budget", "keep_recent", "remove_tool_msgs", "max_summary_tokens")
    found = {name: getattr(manager, name) for name in settings}
    found["api_style"] = str(manager.api_style)
    found["_provider"] = manager._provider
    prompt = manager.summary_system_prompt
    found["summary_system_prompt"] = prompt if "summary_system_prompt" in args.get("kwargs", {}) else bool(prompt)
    return found


@call
def summarize(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    """``trim_context`` with ``call_llm`` patched: the span to summarize, the state after,
    and how the seam was called.

    ``args["llm"]`` is ``{"answer": text}`` or ``{"raise": message}``; ``args["override"]``,
    when given, is the text a subclass's ``_summarize`` returns instead (no seam call).
    """
    module = api.summary_context_manager
    manager_class = module.SummaryContextManager
    if "override" in args:
        text = args["override"]

        class Overriding(manager_class):
            async def _summarize(self, messages: list[Any]) -> str:
                return str(text)

        manager_class = Overriding
    manager = manager_class(args["model"], **kwargs_for(api, args))
    llm = args["llm"]
    if "raise" in llm:
        seam = AsyncMock(side_effect=RuntimeError(llm["raise"]))
    else:
        seam = AsyncMock(return_value=(llm["answer"], 3, 2, 1))
    the_state = state(api, args)
    logging.disable(logging.CRITICAL)  # both log a failed call; the log is not compared
    try:
        with patch(f"{api.prefix}.summary_context_manager.call_llm", new=seam):
            returned = manager.trim_context(the_state)
    finally:
        logging.disable(logging.NOTSET)
    given = messages(api, args["messages"])
    cleaned = module.remove_tool_messages(given) if manager.remove_tool_msgs else given
    span = manager._split_context(cleaned)[0] if cleaned and manager._should_summarize(cleaned) else []
    calls = [
        {"model": c.args[0], **{k: v for k, v in c.kwargs.items() if k in ("max_tokens", "api_style")}}
        for c in seam.call_args_list
    ]
    prompts = [c.kwargs.get("system_prompt") for c in seam.call_args_list]
    return {
        "same_state": returned is the_state,
        "span": ids(span),
        "ids": ids(returned.context),
        "context_summary": returned.context_summary,
        "calls": calls,
        "system_prompts": prompts,
    }


# -- the message manager -----------------------------------------------------------------


@call
def message_trim(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    manager = api.message_context_manager.MessageContextManager(**args["kwargs"])
    given = messages(api, args["messages"])
    trimmed = manager._trim(list(given))
    after = manager.trim_context(api.agent_state.AgentState(context=given))
    after_async = asyncio.run(manager.atrim_context(api.agent_state.AgentState(context=given)))
    return {"_trim": ids(trimmed), "trim_context": ids(after.context), "atrim_context": ids(after_async.context)}


@call
def overridden_trim(api: Api, args: dict[str, Any]) -> list[Any]:
    """A subclass's ``_trim`` is what ``trim_context`` applies."""
    keep = args["keep"]

    class KeepFirst(api.message_context_manager.MessageContextManager):
        def _trim(self, messages: list[Any]) -> list[Any] | None:
            return messages[:keep] if messages else None

    return ids(KeepFirst().trim_context(state(api, args)).context) or []


# -- reducers ------------------------------------------------------------------------------


@call
def reducers(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    module = api.reducers
    left, right = messages(api, args["left"]), messages(api, args["right"])
    items_left = [types.SimpleNamespace(id=i) for i in args["items_left"]]
    items_right = [types.SimpleNamespace(id=i) for i in args["items_right"]]
    removed = module.remove_tool_messages(left)
    return {
        "add_messages": ids(module.add_messages(left, right)),
        "replace_messages": ids(module.replace_messages(left, right)),
        "append_items": [item.id for item in module.append_items(items_left, items_right)],
        "replace_value": module.replace_value(args["items_left"], args["items_right"]),
        "remove_tool_messages": ids(removed),
        "remove_tool_messages_same_list": removed is left,
        "annotation": [getattr(m, "__name__", repr(m)) for m in _context_metadata(api)],
    }


def _context_metadata(api: Api) -> list[Any]:
    return list(api.agent_state.AgentState.model_fields["context"].metadata)


# -- execution state -----------------------------------------------------------------------


@call
def execution(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    """Apply ``args["steps"]`` to a new ``AgentState``; after each, the three questions."""
    module = api.execution_state
    the_state = state(api, args)
    seen: list[list[bool]] = []
    for step in args["steps"]:
        name, *values = step
        if name == "set_interrupt":
            node, reason, status, data = values
            the_state.set_interrupt(node, reason, module.ExecutionStatus(status), data)
        elif name == "status":
            the_state.execution_meta.status = module.ExecutionStatus(values[0])
        elif name == "stop":
            the_state.execution_meta.stop_current_execution = module.StopRequestStatus(values[0])
        else:
            getattr(the_state, name)(*values)
        seen.append([the_state.is_running(), the_state.is_interrupted(), the_state.is_stopped_requested()])
    meta = the_state.execution_meta
    return {
        "seen": seen,
        "meta": meta.model_dump(mode="json"),
        "is_execution_state": isinstance(meta, module.ExecutionState),
        "agent_state_exec_meta": api.agent_state.ExecMeta is module.ExecutionState,
    }


@call
def execution_from_dict(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    return dict(api.execution_state.ExecutionState.from_dict(args["data"]).model_dump(mode="json"))


@call
def execution_state_new(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    return dict(api.execution_state.ExecutionState.model_validate(args["values"]).model_dump(mode="json"))


@call
def status_enums(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    module = api.execution_state
    return {
        enum.__name__: [[m.name, m.value, str(m), f"{m}", m == m.value] for m in enum]
        for enum in (module.ExecutionStatus, module.StopRequestStatus)
    }


# -- ToolResult ----------------------------------------------------------------------------


@call
def tool_results(api: Api, args: dict[str, Any]) -> dict[str, Any]:
    ToolResult = api.tool_result.ToolResult
    made = [ToolResult(*spec.get("args", []), **spec.get("kwargs", {})) for spec in args["specs"]]
    return {
        "repr": [repr(r) for r in made],
        "fields": [[r.message, r.state, r.is_error] for r in made],
        "equal": [[a == b for b in made] for a in made],
        "hash_equal": [[hash(a) == hash(b) for b in made] for a in made],
        "not_a_tool_result": [r == "x" for r in made],
    }


def main() -> None:
    """Serve requests for the package named in ``sys.argv[1]``, one JSON line each way."""
    api = Api(sys.argv[1])
    for submodule in SUBMODULES:  # import everything before the first request is timed
        importlib.import_module(f"{api.prefix}.{submodule}")
    print(json.dumps({"ready": sys.version_info[:3]}), flush=True)
    for line in sys.stdin:
        print(json.dumps(answer(api, json.loads(line)), default=repr), flush=True)


if __name__ == "__main__":
    main()
