"""Native output is what 10xGraph itself reads and writes.

Every native file ctxmgr writes in these tests (real conversations of every format
converted to native, generated conversations holding every block kind, summaries,
dataset lines, a file 10xGraph wrote and ctxmgr compacted) goes to 10xGraph's own
``AgentState`` and ``Message`` models, in one process of the reference's Python
(``tests/_reference_venv.py``): each must validate, and 10xGraph's dump of it must be the
file itself (an ``AgentState``'s extra keys aside: a dataset's columns, as a subclass's
fields would be).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from _conversations import random_state
from _reference_venv import run_reference

from ctxmgr import formats
from ctxmgr.formats._base import Conversation
from ctxmgr.state import AgentState, MessageContextManager

CONVERSATIONS = Path(__file__).resolve().parents[1] / "conversations"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]

_REFERENCE = """
import json, sys
from tenxgraph.core.state import AgentState, Message

answers = []
for case in json.load(sys.stdin):
    try:
        if isinstance(case, dict) and "context" in case:
            dumped = AgentState.model_validate(case).model_dump(mode="json")
        elif isinstance(case, list):
            dumped = [Message.model_validate(m).model_dump(mode="json") for m in case]
        else:
            dumped = Message.model_validate(case).model_dump(mode="json")
        answers.append({"dump": dumped})
    except Exception as error:
        answers.append({"error": str(error)})
print(json.dumps(answers))
"""


def _records(data: bytes) -> list[Any]:
    """The JSON values of a document, or of each line of a JSON Lines file."""
    try:
        return [json.loads(data)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in data.splitlines() if line.strip()]


def _native_outputs() -> list[tuple[str, Any]]:
    cases: list[tuple[str, Any]] = []
    for path in sorted(CONVERSATIONS.glob("*/*.json*")) + sorted(SAMPLES.glob("*.json*")):
        data = path.read_bytes()
        if path.suffix == ".jsonl" and path.parent.name != "native":
            for number, line in enumerate(data.splitlines(), start=1):
                written = formats.dump(formats.load(line, source=f"{path.stem} line {number}"), to="native")
                cases.append((f"{path.name} line {number}", json.loads(written)))
            continue
        conversation = formats.load(data, source=path.name)
        if conversation.format == "native":
            continue  # written back as read: the file's own shape (checked below, trimmed)
        cases += [(f"{path.name} -> native", value) for value in _records(formats.dump(conversation, to="native"))]
    for seed in range(8):
        state = random_state(random.Random(seed))
        # An AgentState as 10xGraph writes one (with a column), or a bare list of messages.
        container: Any = {**AgentState().model_dump(mode="json"), "task_id": seed} if seed % 2 else []
        made = Conversation(state=state, format="native", container=container)
        cases.append((f"generated {seed}", json.loads(formats.dump(made))))
        for fmt in PROVIDERS:
            # Read from a provider's file: each message keeps its records in 'raw'.
            provider = formats.load(formats.dump(made, to=fmt), source=fmt, fmt=fmt)
            cases.append((f"generated {seed} via {fmt}", json.loads(formats.dump(provider, to="native"))))
    # Compacted by ctxmgr: a trimmed file 10xGraph wrote, a summary in a list.
    written = formats.load(
        (CONVERSATIONS / "native/10xgraph-anthropic-tool-with-thinking.json").read_bytes(), source="x"
    )
    MessageContextManager(max_messages=1).trim_context(written.state)
    cases.append(("10xGraph's file, trimmed", json.loads(formats.dump(written))))
    listed = formats.load(
        formats.dump(Conversation(state=random_state(random.Random(9)), format="native", container=[])),
        source="l",
        fmt="native",
    )
    listed.state.context_summary = "Earlier: a refund for HAT268."
    cases.append(("a summary in a list", json.loads(formats.dump(listed))))
    return cases


def _reference_fields(ours: Any, dumped: Any) -> Any:
    """``ours`` with only the keys 10xGraph's dump has (an AgentState's extra keys aside)."""
    if isinstance(ours, dict) and "context" in ours:
        return {key: ours[key] for key in dumped}
    return ours


def test_every_native_output_is_what_10xgraph_reads_and_writes(tenxgraph: Path) -> None:
    cases = _native_outputs()
    assert len(cases) > 60
    answers = run_reference(tenxgraph, _REFERENCE, [value for _, value in cases])
    refused = [
        (name, answer["error"][:300]) for (name, _), answer in zip(cases, answers, strict=True) if "error" in answer
    ]
    assert refused == []
    for (name, value), answer in zip(cases, answers, strict=True):
        assert _reference_fields(value, answer["dump"]) == answer["dump"], name


def test_the_reference_refuses_what_ctxmgr_once_wrote(tenxgraph: Path) -> None:
    # The check has teeth: the reasoning shape of earlier ctxmgr output is refused.
    old = {"role": "assistant", "content": [{"type": "reasoning", "summary": None, "details": {"signature": "c2ln"}}]}
    (answer,) = run_reference(tenxgraph, _REFERENCE, [old])
    assert "error" in answer
