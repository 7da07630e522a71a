"""The token estimates, side by side (the weights of single characters are in :mod:`ctxmgr._units`).

Two ways of counting a text:

* **script-aware** (:func:`text_units`), for ctxmgr's reports: the text is counted in
  units of a quarter of a token, by the Unicode range of each character (one test of its
  UTF-8 lead byte):

  ====================================  =====  ==================================================
  characters                            units  for example
  ====================================  =====  ==================================================
  U+0000 to U+007F (ASCII)              1      English, code, JSON: four characters a token
  U+0080 to U+1FFF                      2      accented Latin, Greek, Cyrillic, Hebrew, Arabic,
                                               Indic scripts, Thai, Georgian, Vietnamese
  U+2000 to U+FFFF                      4      CJK ideographs, kana, Hangul; typographic
                                               punctuation (curly quotes, dashes) and symbols
  U+10000 and above                     8      emoji, rare CJK ideographs
  ====================================  =====  ==================================================

  so ASCII text counts four characters a token and 50 Chinese characters are 50
  tokens. The weights are chosen for ``o200k_base``, the tokenizer of the OpenAI
  models ctxmgr has budgets for, on which CJK, Cyrillic, Greek, Arabic, Indic and Thai
  text all come within about 0.8 to 1.4 of the real count (``bench/token_ratio.py``
  measures it; docs/commands.md gives the figures, for ``cl100k_base`` too);
* **the reference's** (:data:`CHARS_PER_TOKEN` characters a token, whatever the script),
  for the summary trigger by default, so ``token_budget`` fires exactly where the
  reference's does.

Both add the string form of ``tools_calls`` and give at least 1. The estimates differ
in what text they count:

* :func:`estimate_tokens`, ctxmgr's, for the reports (diff view, ``--json``,
  ``stats``, dry run): script-aware, the text of :meth:`Message.text`, so tool outputs
  count;
* :func:`reference_estimate_tokens`, the reference's ``_estimate_tokens``, for the
  summary trigger: characters, every block's ``text`` attribute (text blocks and
  documents' text), not tool outputs;
* :func:`script_aware_reference_tokens`, the trigger's other choice
  (``--trigger-estimate script``): the reference's text, counted script-aware.

:data:`TRIGGER_ESTIMATES` names the trigger's two choices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ctxmgr import _nesting
from ctxmgr._units import CHARS_PER_TOKEN, UNITS_PER_TOKEN, text_units

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = [
    "CHARS_PER_TOKEN",
    "TRIGGER_ESTIMATES",
    "UNITS_PER_TOKEN",
    "estimate_tokens",
    "message_units",
    "reference_estimate_tokens",
    "script_aware_reference_tokens",
    "text_units",
    "texts_units",
    "tokens_from_units",
]


def message_units(message: Message) -> int:
    """Units the reports' estimate counts for one message: its text and tool calls."""
    units = text_units(message.text())
    if message.tools_calls:
        # str(), not json: the reference counts Python's repr of the list.
        units += text_units(_nesting.text(message.tools_calls))
    return units


def estimate_tokens(messages: Iterable[Message]) -> int:
    """The reports' estimate of ``messages`` together: total :func:`message_units` // 4, at least 1."""
    return tokens_from_units(message_units(m) for m in messages)


def texts_units(texts: list[str], chars: list[int]) -> list[int]:
    """The :func:`text_units` of each of ``texts``, whose lengths are ``chars`` (an
    outline's messages, each one string): ``chars`` itself when every text is ASCII, as
    most are (``str.isascii`` reads a flag the string keeps: no character is looked at)."""
    if all(map(str.isascii, texts)):
        return chars
    return [size if text.isascii() else text_units(text) for text, size in zip(texts, chars, strict=True)]


def tokens_from_units(units: Iterable[int]) -> int:
    """The estimate from each message's :func:`message_units` (outlines count them from
    the records, without building messages)."""
    return max(1, sum(units) // UNITS_PER_TOKEN)


def _reference_count(messages: Iterable[Message], measure: Callable[[Any], int]) -> int:
    count = 0
    for message in messages:
        for block in message.content:
            text = getattr(block, "text", None)
            if text:
                count += measure(text)
        if message.tools_calls:
            count += measure(_nesting.text(message.tools_calls))
    return count


def reference_estimate_tokens(messages: Iterable[Message]) -> int:
    """The reference's estimate, which the summary trigger uses by default: total characters // 4, at least 1.

    Counts each block's non-empty ``text`` attribute (a text block's text, a document's
    text) and the string form of ``tools_calls``; tool outputs and anything else count
    nothing. Content that is not a list of blocks (a ``model_construct`` message) adds
    only what iterating over it finds.
    """
    return max(1, _reference_count(messages, len) // CHARS_PER_TOKEN)


def _units_of(text: Any) -> int:
    # A text attribute that is not a string (a model_construct block) counts as the
    # reference counts it.
    return text_units(text) if isinstance(text, str) else len(text)


def script_aware_reference_tokens(messages: Iterable[Message]) -> int:
    """The reference's text, counted script-aware: total :func:`text_units` // 4, at least 1.

    What :func:`reference_estimate_tokens` counts (blocks' ``text``, the string form of
    ``tools_calls``; not tool outputs), weighted as the reports weigh it. Pass it as
    ``SummaryContextManager(token_estimate=...)`` for a ``token_budget`` that fires on
    the script-aware size of CJK, Cyrillic or Greek text; on ASCII text it gives what
    the reference's gives.
    """
    return max(1, _reference_count(messages, _units_of) // UNITS_PER_TOKEN)


TRIGGER_ESTIMATES: dict[str, Callable[[Sequence[Message]], int]] = {
    "reference": reference_estimate_tokens,
    "script": script_aware_reference_tokens,
}
"""The summary trigger's estimates by name (``--trigger-estimate``): ``reference``, the
default, and ``script``."""
