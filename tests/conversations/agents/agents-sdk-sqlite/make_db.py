"""Make sessions.db with the OpenAI Agents SDK's own SQLiteSession, offline.

Run with the SDK installed (``pip install openai-agents``): ``python make_db.py``.
The items are what a Runner stores for a weather-and-files assistant: user messages,
assistant output messages, function calls and their outputs (Responses input items).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from agents import SQLiteSession

HERE = Path(__file__).parent
CITIES = [
    "Paris",
    "Tokyo",
    "Lima",
    "Oslo",
    "Cairo",
    "Perth",
    "Quito",
    "Seoul",
    "Dakar",
    "Hanoi",
    "Riga",
    "Bern",
    "Accra",
    "Minsk",
    "Sucre",
    "Doha",
]


def _report(city: str, turn: int) -> str:
    days = [
        {
            "day": d,
            "city": city,
            "high_c": 10 + (d * 7 + turn) % 20,
            "low_c": (d * 3 + turn) % 10,
            "summary": f"{city} day {d}: clouds in the morning, sun in the afternoon, wind from the west",
        }
        for d in range(1, 21)
    ]
    return json.dumps({"city": city, "forecast": days})


def _turn(turn: int, city: str) -> list[dict[str, object]]:
    call_id = f"call_{turn:03d}_{city.lower()}"
    return [
        {"role": "user", "content": f"What is the weather going to be in {city} over the next two weeks?"},
        {
            "type": "function_call",
            "id": f"fc_{turn:03d}",
            "call_id": call_id,
            "name": "get_forecast",
            "arguments": json.dumps({"city": city, "days": 14}),
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": call_id, "output": _report(city, turn)},
        {
            "type": "message",
            "id": f"msg_{turn:03d}",
            "role": "assistant",
            "status": "completed",
            "content": [
                {
                    "type": "output_text",
                    "text": f"{city} stays mild for the next two weeks: highs between 10 and 29 °C, "
                    "cloudy mornings and sunny afternoons, with a westerly wind.",
                    "annotations": [],
                }
            ],
        },
    ]


async def main() -> None:
    path = HERE / "sessions.db"
    if path.exists():
        os.unlink(path)
    weather = SQLiteSession("weather-1", str(path))
    await weather.add_items([{"role": "system", "content": "You are a concise weather assistant."}])
    for turn, city in enumerate(CITIES, start=1):
        await weather.add_items(_turn(turn, city))  # one add_items per run, as the Runner does
    weather.close()
    short = SQLiteSession("greeting-2", str(path))
    await short.add_items(
        [
            {"role": "user", "content": "Hello! Who are you?"},
            {
                "type": "message",
                "id": "msg_hello",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "I am a weather assistant.", "annotations": []}],
            },
        ]
    )
    short.close()


if __name__ == "__main__":
    asyncio.run(main())
