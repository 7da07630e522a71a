"""TEMPORARY STUB (replaced by the facts branch)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Fact:
    kind: str
    text: str

    def __str__(self) -> str:
        return self.text


_CODE = re.compile(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,}\b")


def find_facts(text: str, *, ignore: Collection[str] = ()) -> list[Fact]:
    seen: dict[str, Fact] = {}
    for m in _CODE.finditer(text):
        if m.group() not in ignore:
            seen.setdefault(m.group(), Fact("code", m.group()))
    return list(seen.values())


def missing_facts(facts: Iterable[Fact], summary: str) -> list[Fact]:
    return [f for f in facts if f.text.lower() not in summary.lower()]
