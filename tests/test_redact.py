"""Credentials in URLs: the user-information password and credential query parameters are
hidden wherever a URL is quoted, and a base URL's credentials are scrubbed from any text."""

from __future__ import annotations

import string
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from hypothesis import given, strategies as st

from ctxmgr import _redact
from ctxmgr._redact import hide_url_credentials, remember_url, scrub


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    """What a test remembers is forgotten afterwards: the sets are process-wide."""
    saved = set(_redact._remembered_passwords)
    yield
    _redact._remembered_passwords.clear()
    _redact._remembered_passwords.update(saved)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://proxy.example/v1?api-key=abc123XYZ", "https://proxy.example/v1?api-key=***"),
        (
            "https://proxy.example/v1?api-version=2024-06-01&api_key=abc123XYZ&x=1",
            "https://proxy.example/v1?api-version=2024-06-01&api_key=***&x=1",
        ),
        ("https://h.example/a?access_token=t0k3n#frag", "https://h.example/a?access_token=***#frag"),
        ("https://h.example/a?Sig=deadbeef&se=2030", "https://h.example/a?Sig=***&se=2030"),
        ("https://h.example/a?key=AIzaSECRET", "https://h.example/a?key=***"),
        ("https://u:pw-SECRET@h.example/a?token=t", "https://***@h.example/a?token=***"),
        ("x" * 40 + "https://u:pw-SECRET@h.example/", "x" * 40 + "https://***@h.example/"),
        ("https://h.example/v1?api%2Dkey=SECRET1234", "https://h.example/v1?api%2Dkey=***"),
        (
            "https://h.example/cb#access_token=SECRET1234&token_type=bearer",
            "https://h.example/cb#access_token=***&token_type=***",
        ),
        (
            '{"url":"https://h.example/v1?a=1\\u0026api_key=SECRET1234"}',
            '{"url":"https://h.example/v1?a=1\\u0026api_key=***"}',
        ),
        ('{"url":"https:\\/\\/u:PASSWORD9@h\\/v1"}', '{"url":"https:\\/\\/***@h\\/v1"}'),
        ("https://h.example/v1?X-Api-Key=SECRET1234", "https://h.example/v1?X-Api-Key=***"),
        ("https://h.example/v1?accessToken=SECRET1234", "https://h.example/v1?accessToken=***"),
    ],
)
def test_credentials_in_a_url_are_hidden_and_the_rest_kept(url: str, shown: str) -> None:
    assert hide_url_credentials(f"failed at {url}: refused") == f"failed at {shown}: refused"


@pytest.mark.parametrize(
    "text",
    [
        "https://h.example/v1?api-version=2024-06-01&model=gpt-4o",
        "see https://docs.example/page?id=3&lang=en for more",
        "a=b and c=d outside any URL",
        "https://api.example/v1?max_tokens=512&author=bob&keyword=cat&signal=1",
    ],
)
def test_plain_query_parameters_are_left_alone(text: str) -> None:
    assert hide_url_credentials(text) == text


# A value is scrubbed from any text once it is long enough to be a secret (8 characters);
# shorter ones only inside URLs (see test_a_short_flag_value_stays_readable_outside_urls).
_SECRET = st.text(string.ascii_letters + string.digits + "-_.~+/=%", min_size=8, max_size=40).filter(
    lambda s: not s.startswith("=") and any(c.isalnum() for c in s)
)
_NAME = st.sampled_from(["api-key", "api_key", "key", "token", "access_token", "sig", "secret", "password", "auth"])


@given(secret=_SECRET, name=_NAME)
def test_a_base_urls_query_credential_never_survives_scrub(secret: str, name: str) -> None:
    """Remembered from the base URL, the value is scrubbed as written and as decoded,
    inside a URL or quoted alone (an SDK message may show either)."""
    written = quote(secret, safe="")
    url = f"https://proxy.example/v1?api-version=1&{name}={written}"
    remember_url(url)
    for text in (f"connection to {url} failed", f"server said: bad credential {secret!r}", written):
        cleaned = scrub(text)
        assert written not in cleaned
        assert secret not in cleaned


def test_a_short_flag_value_stays_readable_outside_urls() -> None:
    """``key_format=json`` is hidden in the URL, but "json" elsewhere is not a secret."""
    remember_url("https://proxy.example/v1?use_auth=1&key_format=json")
    message = "invalid json at line 1, column 12 of chat.json"
    assert scrub(message) == message
    assert scrub("https://proxy.example/v1?use_auth=1&key_format=json") == (
        "https://proxy.example/v1?use_auth=***&key_format=***"
    )


def test_scrub_hides_a_query_credential_of_the_base_url_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1?api-key=env-SECRET-42")
    assert "env-SECRET-42" not in scrub("upstream rejected key env-SECRET-42")


@pytest.mark.parametrize(
    "hostile",
    [
        "x " + "a." * 200_000,  # a run of letters and dots: every letter could start a scheme
        "?key=" + "a." * 200_000,  # a credential parameter's value with sentence punctuation throughout
        "?" + "key" * 100_000,  # parameter names that never reach an "="
        "?key=a" + "." * 200_000 + "a",  # a value with a long run of punctuation inside
        ";k=" + ";" * 200_000 + "x",  # separators that could each start a parameter
        "https:" + "\\/" * 100_000,  # a JSON-escaped scheme that never reaches an "@"
    ],
    ids=["scheme-run", "value-run", "name-run", "punctuation-run", "separator-run", "escaped-slashes"],
)
def test_scrubbing_hostile_text_ends(hostile: str) -> None:
    """Any text may be scrubbed (a server's message, a file name): the patterns never
    backtrack over it. Run apart, bounded: a quadratic pattern takes minutes here."""
    import subprocess
    import sys

    code = "import sys\nfrom ctxmgr._redact import scrub\nsys.stdout.write(scrub(sys.stdin.read())[:20])\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], input=hostile, capture_output=True, text=True, timeout=30, check=True
    )
    assert proc.stdout == scrub(hostile)[:20]
    if hostile.startswith("?key=") and hostile.endswith("."):
        assert proc.stdout == "?key=***."  # the value hidden whole; the sentence's last dot kept
    elif hostile.startswith("?key="):
        assert proc.stdout == "?key=***"
