"""The Rich diff view: which messages were kept and dropped, and the totals."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ctxmgr.cli.console import printable
from ctxmgr.state import Message, estimate_tokens
from ctxmgr.state._managers import BaseContextManager

__all__ = ["describe_rule", "render_diff"]

_ROLE_STYLE = {"system": "magenta", "user": "cyan", "assistant": "green", "tool": "yellow"}


def _arguments(raw: object) -> str:
    """A call's arguments on one line: ``id="ABC", nights=3`` from a JSON object (as
    OpenAI stores it, a string) or a mapping; anything else as it is."""
    # orjson, not json: arguments nested to the parser's 1,024 levels must not recurse.
    value = raw
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return " ".join(raw.split())
    try:
        if isinstance(value, dict):
            return ", ".join(f"{key}={orjson.dumps(item).decode()}" for key, item in value.items())
        return "" if value is None else orjson.dumps(value, default=str).decode()
    except orjson.JSONEncodeError:  # deeper than the writer goes: shown as read
        return " ".join(str(raw).split())


def _preview(message: Message, width: int) -> str:
    """One line for the message: its text, then its calls with their arguments (five
    calls of one tool differ by them), cut at ``width`` (the table cuts it to its column)."""
    text = " ".join(message.text().split())
    if message.tools_calls:
        # tools_calls entries are only known to be dicts: a malformed file may hold
        # anything inside, and the diff view must not fail on it.
        calls = []
        for call in message.tools_calls:
            function = call.get("function")
            if isinstance(function, dict):
                calls.append(f"{function.get('name', '?')}({_arguments(function.get('arguments'))})")
            else:
                calls.append("?()")
        text = (text + " " if text else "") + f"→ {', '.join(calls)}"
    if not text:
        kinds = sorted({getattr(block, "type", "?") for block in message.content})
        text = f"[{', '.join(kinds)}]" if kinds else "(empty)"
    text = printable(text[: width * 2])  # a whole long message is never rendered only to be cut
    return text if len(text) <= width else text[: width - 1] + "…"


def _edited(before: Sequence[Message], after: Sequence[Message]) -> dict[int, Message]:
    """The messages kept as edited copies (a tool result cleared or cut): ``id()`` of the
    message read -> its copy, paired by a message id each side holds once."""
    kept = {id(m) for m in after}
    new = [m for m in after if id(m) not in {id(b) for b in before}]
    if not new:
        return {}
    counts = Counter(m.message_id for m in before)
    copies = Counter(m.message_id for m in new)
    by_id = {m.message_id: m for m in new if copies[m.message_id] == 1}
    return {
        id(m): by_id[m.message_id]
        for m in before
        if id(m) not in kept and counts[m.message_id] == 1 and m.message_id in by_id
    }


def _add_edited_row(table: Table, index: int, message: Message, copy: Message, width: int) -> None:
    """The row of a message kept with its tool output cleared or cut: the new text."""
    table.add_row(
        str(index),
        Text("~", style="yellow"),
        Text(printable(message.role), style=_ROLE_STYLE.get(message.role, "")),
        f"{estimate_tokens([message])} → {estimate_tokens([copy])}",
        Text(_preview(copy, width)),
    )


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def describe_rule(manager: BaseContextManager[Any]) -> str | None:
    """What the managers kept, in words, for the view's last line: ``--max-messages`` is
    user turns to ``trim`` and messages to ``summarize`` (the reference's two rules), and
    the view says which. ``None`` for a manager it cannot describe."""
    members = getattr(manager, "managers", None)
    if isinstance(members, list):
        parts = [describe_rule(member) for member in members]
        return "; ".join(part for part in parts if part) or None
    name = type(manager).__name__
    if name == "MessageContextManager":
        turns = f"kept the last {_plural(manager.max_messages, 'user turn')}"  # type: ignore[attr-defined]
        return turns + (", completed tool-call sequences dropped" if manager.remove_tool_msgs else "")  # type: ignore[attr-defined]
    if name == "TokenBudgetContextManager":
        text = f"kept the newest messages within {manager.max_tokens:,} est. tokens"  # type: ignore[attr-defined]
        turns = manager.max_messages  # type: ignore[attr-defined]
        return text + (f" and the last {_plural(turns, 'user turn')}" if turns is not None else "")
    if callable(getattr(manager, "summarize_span", None)):
        triggers = []
        if getattr(manager, "max_messages", None) is not None:
            triggers.append(f"over {_plural(manager.max_messages, 'message')}")  # type: ignore[attr-defined]
        if getattr(manager, "token_budget", None) is not None:
            triggers.append(f"over {manager.token_budget:,} est. tokens")  # type: ignore[attr-defined]
        recent = getattr(manager, "keep_recent", None)
        kept = f"; the last {_plural(recent, 'message')} kept verbatim" if recent is not None else ""
        return ("summary when " + " or ".join(triggers) if triggers else "summary") + kept
    return None


def _totals(messages: tuple[int, int], tokens: tuple[int, int], dropped: int, edited: int) -> Text:
    """The view's totals line: messages and tokens before and after, dropped, edited."""
    return Text.assemble(
        ("messages ", "bold"),
        f"{messages[0]} → {messages[1]}",
        ("   est. tokens ", "bold"),
        f"{tokens[0]} → {tokens[1]}",
        ("   dropped ", "bold"),
        (str(dropped), "red" if dropped else ""),
        *((("   edited ", "bold"), (str(edited), "yellow")) if edited else ()),
    )


def render_diff(
    console: Console,
    *,
    name: str,
    before: Sequence[Message],
    after: Sequence[Message],
    summary_before: str | None,
    summary_after: str | None,
    messages: tuple[int, int] | None = None,
    tokens: tuple[int, int] | None = None,
    rule: str | None = None,
) -> None:
    """Print the diff of one conversation: a row per message, then the totals (and
    ``rule``, what the managers kept, in words: :func:`describe_rule`).

    A message kept as an edited copy (its tool output cleared or cut, its call's
    arguments cleared) is marked ``~`` in its place, with its tokens before and after.

    ``messages`` and ``tokens`` (before, after) are the figures of the file as read and
    as written, a summary included (:meth:`ctxmgr.files.FileResult.add` counts them, and
    ``--json`` reports the same); without them the totals count ``before`` and ``after``.
    """
    kept_ids = {id(m) for m in after}
    edited = _edited(before, after)
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold", expand=True)
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column("", width=1, no_wrap=True)
    table.add_column("role", no_wrap=True, min_width=9)
    table.add_column("tokens", justify="right", no_wrap=True)
    table.add_column("text", overflow="ellipsis", no_wrap=True, ratio=1)
    for index, message in enumerate(before):
        copy = edited.get(id(message))
        if copy is not None:
            _add_edited_row(table, index, message, copy, console.width)
            continue
        kept = id(message) in kept_ids
        style = "" if kept else "dim strike"
        role = Text(printable(message.role), style=_ROLE_STYLE.get(message.role, "") if kept else "dim")
        table.add_row(
            str(index),
            Text("✓", style="green") if kept else Text("✗", style="red"),
            role,
            str(estimate_tokens([message])),
            Text(_preview(message, console.width), style=style),
        )
    before_ids = {id(b) for b in before}
    copies = {id(m) for m in edited.values()}
    added = [m for m in after if id(m) not in before_ids and id(m) not in copies]
    for message in added:
        # Text, not str: a str cell is parsed as Rich markup, and a summary may hold "[".
        table.add_row(
            "+",
            Text("+", style="green"),
            Text(printable(message.role)),
            str(estimate_tokens([message])),
            Text(_preview(message, console.width)),
        )
    if tokens is None:
        tokens = (estimate_tokens(before) if before else 0, estimate_tokens(after) if after else 0)
    messages = messages if messages is not None else (len(before), len(after))
    totals = _totals(messages, tokens, len(before) - (len(after) - len(added)), len(edited))
    parts: list[Text | Table | Panel] = [table, totals]
    if rule:
        parts.append(Text(rule, style="dim"))
    if summary_after != summary_before and summary_after:
        appended = bool(summary_before) and summary_after.startswith(summary_before or "")
        new_part = summary_after[len(summary_before or "") :].lstrip("\n") if appended else summary_after
        shown = escape(printable(new_part, multiline=True))
        parts.append(Panel(shown, title="summary added", title_align="left", border_style="green"))
    title = escape(printable(name))
    console.print(Panel(Group(*parts), title=title, title_align="left", border_style="blue"))
