"""Write ``support-refund-pending.json`` with the Agents SDK itself, offline, and check that
a run state (compacted by ctxmgr or not) resumes.

Not run by the tests (the SDK is not a dependency of ctxmgr)::

    pip install openai-agents==0.24.0
    python generate.py make support-refund-pending.json
    python generate.py resume compacted.json

``make`` runs an agent on a scripted model (no network): a first run looks an order up and
answers; a second run, given the first's history and a new question, looks up three
orders and asks to refund one, a tool that needs approval, so the run pauses and its
``RunState`` is saved. ``resume`` approves the pending call, runs to the end and prints
how many items (and characters) the model was sent.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, RunState, Usage, function_tool
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

INSTRUCTIONS = "You help customers with their orders."


def call(n: int, name: str, args: dict[str, Any]) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=f"fc_{n}",
        call_id=f"call_{n}",
        name=name,
        arguments=json.dumps(args),
        type="function_call",
        status="completed",
    )


def say(n: int, text: str) -> ResponseOutputMessage:
    part = ResponseOutputText(text=text, type="output_text", annotations=[])
    return ResponseOutputMessage(id=f"msg_{n}", role="assistant", status="completed", type="message", content=[part])


class Scripted(Model):
    """A model that answers with the outputs it was given, in turn, and records its inputs."""

    def __init__(self, turns: list[list[Any]]) -> None:
        self.turns = list(turns)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        usage = Usage(requests=1, input_tokens=100, output_tokens=20, total_tokens=120)
        return ModelResponse(output=self.turns.pop(0), usage=usage, response_id=f"resp_{len(self.turns)}")

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


ORDERS = {
    f"A-{i}00": f"Order A-{i}00: 2 items, shipped on day {i} by courier, tracking TRK{i}{i}{i}{i}, status history: "
    + ", ".join(f"scan {j} at hub {j}" for j in range(12))
    for i in range(1, 6)
}


@function_tool
def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return ORDERS.get(order_id, "no such order")


@function_tool(needs_approval=True)
def refund_order(order_id: str, reason: str) -> str:
    """Refund an order (needs a human's approval)."""
    return f"refunded {order_id}"


def agent(model: Model) -> Agent[Any]:
    return Agent(name="support", instructions=INSTRUCTIONS, tools=[lookup_order, refund_order], model=model)


async def make(out: str) -> None:
    first = Scripted(
        [[call(1, "lookup_order", {"order_id": "A-100"})], [say(1, "Order A-100 shipped on day 1 (tracking TRK1111).")]]
    )
    result = await Runner.run(agent(first), "Where is my order A-100?")
    history = [*result.to_input_list(), {"role": "user", "content": "And A-200 and A-300? Refund A-300, it is late."}]
    second = Scripted(
        [
            [call(2, "lookup_order", {"order_id": "A-200"}), call(3, "lookup_order", {"order_id": "A-300"})],
            [
                say(2, "A-200 shipped on day 2; A-300 shipped on day 3 but is late. Let me check A-400 too."),
                call(4, "lookup_order", {"order_id": "A-400"}),
            ],
            [call(5, "refund_order", {"order_id": "A-300", "reason": "late delivery"})],
        ]
    )
    result = await Runner.run(agent(second), history)
    assert result.interruptions, "the refund should wait for approval"
    with open(out, "w", encoding="utf-8") as file:
        file.write(result.to_state().to_string())


async def resume(path: str) -> None:
    model = Scripted([[say(9, "Refunded A-300.")]])
    paused = agent(model)
    with open(path, encoding="utf-8") as file:
        state = await RunState.from_string(paused, file.read())
    for interruption in state.get_interruptions():
        state.approve(interruption)
    result = await Runner.run(paused, state)
    sent = model.inputs[0]
    size = len(json.dumps(sent, default=str))
    print(f"{path}: {result.final_output!r}; the model was sent {len(sent)} items, {size} characters")


if __name__ == "__main__":
    asyncio.run(make(sys.argv[2]) if sys.argv[1] == "make" else resume(sys.argv[2]))
