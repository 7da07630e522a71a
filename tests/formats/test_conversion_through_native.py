"""Native is a lossless hub: every format through native and back is the same file, and
converting through native is converting directly, for conversations holding every kind
of content block (``tests/_conversations.py``)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from _conversations import BLOCK_KINDS, random_state
from _fast_paths import explored
from _sdk_types import check_output
from hypothesis import given, strategies as st

from ctxmgr import formats
from ctxmgr.formats._base import Conversation
from ctxmgr.state import AgentState

FORMATS = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]


def _file(state: AgentState, container: Any, fmt: str) -> bytes:
    """``state`` written in ``fmt`` (the file a user of that format would have)."""
    conversation = Conversation(state=state.model_copy(deep=True), format="native", container=container)
    return formats.dump(conversation, to=fmt)


def _through_native(data: bytes, fmt: str) -> tuple[bytes, formats.Conversation]:
    native = formats.dump(formats.load(data, source="in", fmt=fmt), to="native")
    conversation = formats.load(native, source="native", fmt="native")
    return native, conversation


@pytest.mark.parametrize("source", FORMATS)
@explored(max_examples=10, deadline=None, derandomize=True)
@given(rng=st.randoms(use_true_random=False), dataset_line=st.booleans())
def test_every_format_to_every_format_and_back_through_native(
    source: str, rng: random.Random, dataset_line: bool
) -> None:
    state = random_state(rng)
    assert {block.type for message in state.context for block in message.content} == BLOCK_KINDS
    container: Any = {"context": [], "task_id": 7, "reward": 0.5} if dataset_line else []
    data = _file(state, container, source)
    native, restored = _through_native(data, source)
    assert not [w for w in restored.warnings if "does not match" in w]
    # Through native and back: the same file.
    assert json.loads(formats.dump(restored, to=source)) == json.loads(data)
    for target in FORMATS:
        if target == source:
            continue
        direct = formats.load(data, source="in", fmt=source)
        written = formats.dump(direct, to=target)
        via = formats.load(native, source="native", fmt="native")
        # Through native, the same conversion: the same output, the same losses named.
        assert json.loads(formats.dump(via, to=target)) == json.loads(written), target
        assert via.dropped == direct.dropped, target
        check_output(target, json.loads(written))
        if dataset_line:
            kept = json.loads(written)
            assert (kept["task_id"], kept["reward"]) == (7, 0.5), target
        # The converted file, through native and back: the same file again.
        again, _ = _through_native(written, target)
        back = formats.dump(formats.load(again, source="native", fmt="native"), to=target)
        assert json.loads(back) == json.loads(written), target


def test_a_summary_kept_inside_the_responses_instructions_goes_back_there() -> None:
    header = "[ctxmgr: summary of the earlier conversation]"
    request = {
        "model": "gpt-5",
        "instructions": f"Be brief.\n\n{header}\nEarlier.",
        "input": [{"role": "user", "content": "hi"}],
    }
    data = json.dumps(request).encode()
    _, native = _through_native(data, "openai-responses")
    assert native.warnings == []
    assert json.loads(formats.dump(native, to="openai-responses")) == request
    # Summarized again in native (the summary grew): still there, the new part appended.
    native.state.context_summary = f"{native.state.context_summary}\n\nLater."
    again = json.loads(formats.dump(native, to="openai-responses"))
    assert again["instructions"] == f"Be brief.\n\n{header}\nEarlier.\n\nLater."


@pytest.mark.parametrize(
    ("fmt", "value"),
    [
        pytest.param(
            "openai-responses",
            {
                "id": "resp_1",
                "object": "response",
                "status": "completed",
                "model": "gpt-5",
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "id": "msg_1",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "hi", "annotations": []}],
                    }
                ],
                "usage": {"input_tokens": 3},
            },
            id="a stored response",
        ),
        pytest.param("openai-chat", {"role": "user", "content": "hi", "name": "bob"}, id="one chat message"),
        pytest.param("openai-responses", {"type": "message", "role": "user", "content": "hi"}, id="one item"),
    ],
)
def test_other_shapes_come_back_through_native_as_they_were(fmt: str, value: Any) -> None:
    data = json.dumps(value).encode()
    _, native = _through_native(data, fmt)
    assert json.loads(formats.dump(native, to=fmt)) == value
