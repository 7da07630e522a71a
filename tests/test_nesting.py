"""``dumps_arguments`` writes what ``json.dumps`` writes, for any JSON value."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from ctxmgr._nesting import dumps, dumps_arguments

# Plain strings (written directly) and the characters JSON escapes or spells otherwise.
_TEXT = st.one_of(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=8), st.text(max_size=6))
_SCALARS = st.one_of(_TEXT, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3))
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.dictionaries(_TEXT, st.one_of(_TEXT, st.integers()), max_size=5), _VALUES))
def test_dumps_arguments_is_json_dumps(value: Any) -> None:
    assert dumps_arguments(value) == json.dumps(value)


def test_plain_arguments_are_written_directly() -> None:
    assert dumps_arguments({"user_id": "mia_li_3668", "count": 2}) == '{"user_id": "mia_li_3668", "count": 2}'
    assert dumps_arguments({"q": 'say "hi"\n', "ok": True}) == json.dumps({"q": 'say "hi"\n', "ok": True})


@settings(max_examples=300, deadline=None)
@given(_TEXT, st.one_of(_TEXT, st.integers(), st.booleans(), st.none()))
def test_one_key_arguments_are_json_dumps(key: str, item: Any) -> None:
    assert dumps_arguments({key: item}) == json.dumps({key: item})


def test_one_key_arguments_with_quotes_or_escapes() -> None:
    for value in ({"q": 'a"b'}, {'k"': "v"}, {"q": "a\\b"}, {"q": "é"}, {"q": "\n"}, {"q": ""}, {"": ""}):
        assert dumps_arguments(value) == json.dumps(value)


def test_what_json_cannot_write_is_worded_as_json_dumps_words_it() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    for value, error in ((cycle, ValueError), ({"a": object()}, TypeError), ({"a": {1, 2}}, TypeError)):
        with pytest.raises(error) as expected:
            json.dumps(value)
        with pytest.raises(error, match=re.escape(str(expected.value))):
            dumps_arguments(value)


def test_deep_and_floating_arguments() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(2000):
        node["k"] = {}
        node = node["k"]
    assert dumps_arguments(deep) == dumps(deep)
    for value in ({"a": [1.5, float("inf"), -0.0, 1e16]}, {"a": [{"b": None, "c": True}]}):
        assert dumps_arguments(value) == json.dumps(value)
