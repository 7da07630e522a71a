"""A deterministic summarizer that needs no network and no key (``--model offline``).

It writes a short factual digest of the rendered span: who asked what, which tools were
called with which arguments, what they returned, and what the assistant answered. The
same input always gives the same digest, so CI output is reproducible.
"""

from __future__ import annotations

import re

__all__ = ["OfflineSummarizer"]

_FENCE = re.compile(r"^<(transcript-[0-9a-f]{12})>\n(.*)\n</\1>\Z", re.S | re.M)
_CALL = re.compile(r"\[calls tool (.+?) id=[^\]]*\]")
_LINE_LIMIT = 160


def _clip(text: str, limit: int = _LINE_LIMIT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


class OfflineSummarizer:
    """Digest of a transcript made by rules, not by a model."""

    name = "offline"

    def input_limit(self) -> tuple[None, str]:
        """No limit: the digest is made here, from a transcript of any length."""
        return None, "the offline digest reads any length"

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        match = _FENCE.search(text)
        transcript = match.group(2) if match else text
        lines: list[str] = []
        for line in transcript.splitlines():
            role, _, body = line.partition(": ")
            if role == "USER":
                lines.append(f"- The user said: {_clip(body)}")
            elif role == "ASSISTANT":
                calls = _CALL.findall(body)
                said = _CALL.sub("", body).strip()
                if said:
                    lines.append(f"- The assistant said: {_clip(said)}")
                lines.extend(f"- The assistant called {_clip(call, 200)}." for call in calls)
            elif role.startswith("TOOL RESULT"):
                label = role.removeprefix("TOOL RESULT ").split(" [", 1)[0]
                failed = " (failed)" if role.endswith("(error)") else ""
                lines.append(f"- {label} returned{failed}: {_clip(body)}")
            elif role:
                lines.append(f"- {role.capitalize()}: {_clip(body)}")
        if not lines:
            return ""
        digest = f"Earlier conversation ({len(lines)} events):\n" + "\n".join(lines)
        budget = max(1, max_tokens) * 4
        if len(digest) > budget:
            digest = digest[: max(0, budget - 30)].rstrip() + "\n- [digest shortened]"
        return digest
