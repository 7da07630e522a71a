"""The exception tree crosses processes intact (a worker's report is pickled)."""

from __future__ import annotations

import pickle

from hypothesis import given, strategies as st

from ctxmgr import errors
from ctxmgr.errors import CtxmgrError, InputError, ProviderError

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
numbers = st.one_of(st.none(), st.integers(1, 10**6))

input_errors = st.builds(
    lambda kind, message, source, line, column: kind(message, source=source, line=line, column=column),
    st.sampled_from([errors.InputError, errors.FormatDetectionError, errors.UnknownFormatError]),
    words,
    st.one_of(st.none(), words),
    numbers,
    numbers,
)
provider_errors = st.builds(
    lambda kind, message, provider, retryable, status, after, every: kind(
        message, provider=provider, retryable=retryable, status_code=status, retry_after=after, every_call=every
    ),
    st.sampled_from(
        [errors.ProviderError, errors.MissingKeyError, errors.ProviderNotInstalledError, errors.MissingFactsError]
    ),
    words,
    words,
    st.booleans(),
    st.one_of(st.none(), st.sampled_from([401, 404, 429, 500])),
    st.one_of(st.none(), st.floats(0, 60)),
    st.one_of(st.none(), st.booleans()),
)
plain_errors = st.builds(
    lambda kind, message: kind(message),
    st.sampled_from([errors.UsageError, errors.OutputError, errors.ManagerError]),
    words,
)


@given(st.one_of(input_errors, provider_errors, plain_errors))
def test_every_error_pickles_with_its_type_wording_and_fields(error: CtxmgrError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.args == error.args
    assert vars(copy) == vars(error)


def test_a_provider_error_keeps_its_provider_in_the_message() -> None:
    """Python's default would rebuild it from its message alone: 'provider: offline: ...'."""
    copy = pickle.loads(pickle.dumps(errors.MissingFactsError("lacks 3 facts", provider="offline")))
    assert str(copy) == "offline: lacks 3 facts"
    assert isinstance(copy, ProviderError)
    assert copy.provider == "offline"
    assert not copy.every_call
    located = pickle.loads(pickle.dumps(InputError("bad", source="a.jsonl", line=3, column=4)))
    assert str(located) == "a.jsonl:3:4: bad"
    assert str(located.located("b.jsonl")) == "b.jsonl:3:4: bad"
