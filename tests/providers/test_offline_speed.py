"""The offline digest's faster steps say what the plain ones say."""

from __future__ import annotations

import re

from hypothesis import given, strategies as st

from ctxmgr.providers import _offline

PLAIN_CLOSING = re.compile(r"</(transcript-[0-9a-f]{12})>\s*\Z")
PIECES = ["</transcript-0123456789ab>", "</transcript-0123456789aZ>", "<transcript-0123456789ab>\n", "</transcript-",
          "0123456789ab>", " ", "\n", "\t", "\u2028", "\x1c", "\x85", "\u00a0", "x", "USER: hi"]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
def test_the_closing_tag_is_found_where_the_plain_expression_finds_it(text: str) -> None:
    plain, fast = PLAIN_CLOSING.search(text), _offline._closing(text)
    assert (fast is None) == (plain is None)
    if fast is not None and plain is not None:
        assert (fast.start(), fast.group(1)) == (plain.start(), plain.group(1))


def test_json_is_shown_without_its_quotes_as_before() -> None:
    value = '{"a": [1, 2.5, "x", {"b": null, "c": true}], "d": {}, "e": [], "f": -0.0, "g": 10000000000000000000000}'
    shown = "{a: [1, 2.5, x, {b: null, c: true}], d: {}, e: [], f: -0.0, g: 10000000000000000000000}"
    assert _offline._readable(value) == shown


PROSE_PIECES = ["word", "HAT268", " ", " ", ",", ";", ":", "|", "…", "é", "{a: 1}", "$1,234.50", "2024-05-15"]
prose = st.lists(st.sampled_from(PROSE_PIECES), max_size=60).map("".join)
listed = st.lists(st.tuples(st.sampled_from(["HAT268", "$5", "May 15, 2024", "x"]), st.integers(-1, 300)), max_size=6)
limits = st.sampled_from([*_offline._LONGEST_PROSE, *_offline._SHORTEST_PROSE, 1, 2, 3]) | st.integers(0, 250)


@given(st.sampled_from(["", "The user said: ", "get_user_details returned: "]), prose, listed, limits)
def test_a_line_is_measured_as_long_as_it_is_written(
    head: str, text: str, lacking: list[tuple[str, int]], limit: int
) -> None:
    event = _offline._Event(head, text, listed=lacking)
    if len(text) > limit:
        assert _offline._line_length(event, limit) == len(_offline._line(event, limit))
    lines = _offline._Lines([event])
    assert lines[limit] == [len(line) for line in lines.made(limit, [0])]
