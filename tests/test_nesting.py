"""``dumps_arguments`` writes what ``json.dumps`` writes, for any JSON value."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings, strategies as st

from ctxmgr._nesting import dumps_arguments

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
