"""How close the token estimates come to real tokenizers, script by script.

Run from the repository root (about 10 seconds; a minute with the two ``--hf`` files below)::

    TIKTOKEN_CACHE_DIR=DIR python bench/token_ratio.py [DATA] [--locales /usr/share/locale] [--hf tokenizer.json]

It needs ``tiktoken``, which is no dependency of ctxmgr (install it in a scratch
environment), and tiktoken's files for ``cl100k_base`` and ``o200k_base``. tiktoken
downloads them on first use; offline, ``TIKTOKEN_CACHE_DIR`` names a folder that holds
them under tiktoken's cache names, such as ``litellm/litellm_core_utils/tokenizers/`` of
the ``litellm`` wheel. ``--hf FILE`` adds a Hugging Face ``tokenizer.json`` (with the
``tokenizers`` package; that folder holds ``anthropic_tokenizer.json``, an early Claude
tokenizer, and ``deepseek_tokenizer.json``). Without tiktoken or its files the script
says what is missing and exits 0 having measured nothing.

The texts:

* English: every conversation of ``DATA`` (the tau-bench airline conversations by
  default), as the reports count it (each message's text and tool calls);
* the other languages: the translated messages of the programs installed on the machine,
  from their gettext catalogs (``LOCALES/<language>/LC_MESSAGES/*.mo``): real sentences
  of user interfaces, with their ``%s`` placeholders, in each language that has them;
* emoji: U+1F300 to U+1F5FF, each on its own (a synthetic row: no catalog is in emoji).

For each, per tokenizer, the ratio of an estimate to the real count: ``chars/4``
(the reference's four characters a token, whatever the script) and ``script``
(:func:`ctxmgr.state.text_units` // 4, the reports' estimate). 1.00 is exact; below 1 the
estimate counts too few tokens.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ctxmgr.files import read_conversations  # noqa: E402
from ctxmgr.state import message_units, text_units  # noqa: E402

DEFAULT_DATA = REPO / "bench" / "tau" / "tau-airline-gpt4o.jsonl"
# By script, roughly: Latin with accents, Cyrillic, Greek, Hebrew and Arabic, Indic and
# Thai, Georgian, Hangul, Japanese, Chinese.
LANGUAGES = ["de", "fr", "es", "pl", "cs", "tr", "vi", "ru", "uk", "el", "he", "ar", "fa"]
LANGUAGES += ["hi", "bn", "ta", "th", "ka", "ko", "ja", "zh_CN", "zh_TW"]
ENCODINGS = ("cl100k_base", "o200k_base")

Counter = Callable[[str], int]


def tokenizers(hf_files: list[Path]) -> dict[str, Counter] | str:
    """Each tokenizer's token count by name, or why there is none."""
    try:
        import tiktoken
    except ImportError:
        return "tiktoken is not installed (pip install tiktoken, in a scratch environment)"
    found: dict[str, Counter] = {}
    for name in ENCODINGS:
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception as error:  # a download refused offline, a missing cache file...
            cache = os.environ.get("TIKTOKEN_CACHE_DIR", "(TIKTOKEN_CACHE_DIR not set)")
            return f"tiktoken could not load {name} ({type(error).__name__}); its cache folder: {cache}"
        found[name.removesuffix("_base")] = lambda text, e=encoding: len(e.encode(text, disallowed_special=()))
    for path in hf_files:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            return "--hf needs the tokenizers package (pip install tokenizers)"
        model = Tokenizer.from_file(str(path))
        name = path.stem.removesuffix("_tokenizer").removesuffix(".tokenizer")
        found[name] = lambda text, m=model: len(m.encode(text, add_special_tokens=False).ids)
    return found


def catalog_messages(path: Path) -> Iterator[str]:
    """The translations a gettext ``.mo`` file holds (UTF-8 catalogs only; untranslated
    messages and the header left out; each plural form on its own)."""
    data = path.read_bytes()
    if len(data) < 20:
        return
    for order in ("<", ">"):
        magic, _revision, count, originals, translations = struct.unpack(f"{order}5I", data[:20])
        if magic == 0x950412DE:
            break
    else:
        return
    entries = []
    for index in range(count):
        length, offset = struct.unpack(f"{order}2I", data[originals + 8 * index : originals + 8 * index + 8])
        t_length, t_offset = struct.unpack(f"{order}2I", data[translations + 8 * index : translations + 8 * index + 8])
        entries.append((data[offset : offset + length], data[t_offset : t_offset + t_length]))
    header = next((translated for original, translated in entries if not original), b"")
    if b"charset=utf-8" not in header.lower().replace(b" ", b""):
        return
    for original, translated in entries:
        if not original or not translated or translated == original:
            continue
        for form in translated.decode("utf-8", "replace").split("\x00"):
            if form:
                yield form


def language_text(locales: Path, language: str) -> str:
    folder = locales / language / "LC_MESSAGES"
    if not folder.is_dir():
        return ""
    return "\n".join(message for path in sorted(folder.glob("*.mo")) for message in catalog_messages(path))


def english_texts(data: Path) -> Iterator[tuple[str, int]]:
    """(the text the reports count, its units) of each conversation of ``data``."""
    from ctxmgr import _nesting

    for _line, conversation in read_conversations(str(data)):
        messages = conversation.state.context
        text = "".join(m.text() + (_nesting.text(m.tools_calls) if m.tools_calls else "") for m in messages)
        yield text, sum(map(message_units, messages))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA, help="English conversations (JSONL)")
    parser.add_argument("--locales", type=Path, default=Path("/usr/share/locale"), help="gettext catalogs' root")
    parser.add_argument("--hf", type=Path, action="append", default=[], help="a tokenizer.json to measure too")
    args = parser.parse_args()
    counters = tokenizers(args.hf)
    if isinstance(counters, str):
        print(f"token_ratio: skipped, nothing measured: {counters}", file=sys.stderr)
        return 0
    rows: list[tuple[str, int, float, dict[str, tuple[float, float]]]] = []

    def add(name: str, text: str, units: int) -> None:
        real = {tokenizer: count(text) for tokenizer, count in counters.items()}
        non_ascii = sum(1 for char in text if not char.isascii()) / len(text)
        ratios = {t: (len(text) / 4 / real[t], units / 4 / real[t]) for t in counters}
        rows.append((name, len(text), non_ascii, ratios))

    if args.data.is_file():
        texts = list(english_texts(args.data))
        add("en", "".join(t for t, _ in texts), sum(u for _, u in texts))
        print(f"en: the conversations of {args.data}")
    else:
        print(f"token_ratio: no English data at {args.data}: that row is left out", file=sys.stderr)
    missing = []
    for language in LANGUAGES:
        text = language_text(args.locales, language)
        if text:
            add(language, text, text_units(text))
        else:
            missing.append(language)
    if missing:
        print(f"token_ratio: no catalogs under {args.locales} for: {' '.join(missing)}", file=sys.stderr)
    emoji = [chr(point) for point in range(0x1F300, 0x1F600)]
    real = {t: sum(count(e) for e in emoji) for t, count in counters.items()}
    rows.append(("emoji", len(emoji), 1.0, {t: (len(emoji) / 4 / n, 2 * len(emoji) / n) for t, n in real.items()}))

    names = list(counters)
    print(f"{'text':<8}{'chars':>11}{'non-ASCII':>10}" + "".join(f"{n + ' c/4':>15}{n + ' script':>17}" for n in names))
    for name, chars, non_ascii, ratios in rows:
        cells = "".join(f"{ratios[n][0]:>15.2f}{ratios[n][1]:>17.2f}" for n in names)
        print(f"{name:<8}{chars:>11,}{non_ascii:>10.0%}{cells}")
    print()
    for n in names:
        old = [ratios[n][0] for *_, ratios in rows]
        new = [ratios[n][1] for *_, ratios in rows]
        print(
            f"{n}: chars/4 {min(old):.2f} to {max(old):.2f} (median {statistics.median(old):.2f}); "
            f"script {min(new):.2f} to {max(new):.2f} (median {statistics.median(new):.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
