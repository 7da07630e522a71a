"""Format detection, apart from the adapters: it imports neither pydantic nor the model.

Each module here holds one format's ``score(value)`` (NO, PLAUSIBLE or CERTAIN) and the
constants it shares with that format's reader. Kept light because every command detects
before anything else, and ``trim`` on plain OpenAI chat never needs the full reader at
all (see :mod:`ctxmgr.formats.outlines`).
"""

from ctxmgr.formats.detection import anthropic, gemini, langchain, native, openai_chat, openai_responses

__all__ = ["anthropic", "gemini", "langchain", "native", "openai_chat", "openai_responses"]
