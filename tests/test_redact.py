"""Credentials in URLs: the user-information password and credential query parameters are
hidden wherever a URL is quoted, and a base URL's credentials are scrubbed from any text."""

from __future__ import annotations

import string
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from hypothesis import example, given, strategies as st

from ctxmgr import _redact
from ctxmgr._redact import hide_url_credentials, remember_url, scrub


@pytest.fixture(autouse=True)
def _forget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What a test remembers is forgotten afterwards (the sets are process-wide), and the
    machine's own key and base-URL variables play no part."""
    for name in (*_redact._KEY_VARIABLES, *_redact._URL_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    saved = set(_redact._remembered_passwords), set(_redact._remembered)
    yield
    for live, kept in zip((_redact._remembered_passwords, _redact._remembered), saved, strict=True):
        live.clear()
        live.update(kept)


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
        ("https://user:p@ss-SECRET@h.example/v1", "https://***@h.example/v1"),  # an unencoded "@"
        ("https://h.example/v1?api%2Dkey=SECRET1234", "https://h.example/v1?api%2Dkey=***"),
        (
            "https://h.example/cb#access_token=SECRET1234&token_type=bearer",
            "https://h.example/cb#access_token=***&token_type=bearer",
        ),
        (
            '{"url":"https://h.example/v1?a=1\\u0026api_key=SECRET1234"}',
            '{"url":"https://h.example/v1?a=1\\u0026api_key=***"}',
        ),
        ('{"url":"https:\\/\\/u:PASSWORD9@h\\/v1"}', '{"url":"https:\\/\\/***@h\\/v1"}'),
        ("https://h.example/v1?X-Api-Key=SECRET1234", "https://h.example/v1?X-Api-Key=***"),
        ("https://h.example/v1?accessToken=SECRET1234", "https://h.example/v1?accessToken=***"),
        ("https://h.example/v1?subscriptionkey=SECRET1234", "https://h.example/v1?subscriptionkey=***"),
    ],
)
def test_credentials_in_a_url_are_hidden_and_the_rest_kept(url: str, shown: str) -> None:
    assert hide_url_credentials(f"failed at {url}: refused") == f"failed at {shown}: refused"


@pytest.mark.parametrize(
    "text",
    [
        "https://h.example/v1?api-version=2024-06-01&model=gpt-4o",
        "see https://docs.example/page?id=3&lang=en for more",
        "https://api.example/v1?max_tokens=512&author=bob&keyword=cat&signal=1",
        '["https://a.example","bob@example.org"]',  # a URL, then an address: not a user part
        "<https://a.example>,<bob@example.org>",
    ],
)
def test_plain_urls_are_left_alone(text: str) -> None:
    assert hide_url_credentials(text) == text


# A value is scrubbed from any text when it looks like a secret (8 characters that are not
# one plain word, or letters and digits mixed); others only inside URLs (see
# test_a_setting_stays_readable_outside_urls).
_SECRET = st.text(string.ascii_letters + string.digits + "-_.~+/=%", min_size=8, max_size=40).filter(
    lambda s: not s.startswith("=") and any(c.isalnum() for c in s) and not s.isalpha()
)
_NAME = st.sampled_from(["api-key", "api_key", "key", "token", "access_token", "sig", "secret", "password", "auth"])


@given(secret=_SECRET, name=_NAME)
@example(secret="0000000.", name="api-key")  # the last "." is the value's, not a sentence's
@example(secret="000000=.", name="api-key")
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


def test_a_setting_stays_readable_outside_urls() -> None:
    """``key_format=json`` and ``auth=required`` are hidden in the URL, but "json" and
    "required" elsewhere are not secrets; neither is the user name of ``user:@host``."""
    remember_url("https://user:@proxy.example/v1?use_auth=1&key_format=json&auth=required")
    message = "invalid json at line 1: the user: field is required"
    assert scrub(message) == message
    assert scrub("https://proxy.example/v1?use_auth=1&key_format=json&auth=required") == (
        "https://proxy.example/v1?use_auth=***&key_format=***&auth=***"
    )


def test_a_password_with_an_at_sign_is_scrubbed_whole() -> None:
    remember_url("https://user:p@ss-9@proxy.example/v1")
    assert scrub("login failed for password p@ss-9") == "login failed for password ***"


def test_scrub_hides_a_query_credential_of_the_base_url_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1?api-key=env-SECRET-42")
    assert "env-SECRET-42" not in scrub("upstream rejected key env-SECRET-42")


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        # a run of letters and dots: every letter could start a scheme
        ("x " + "a." * 200_000, "x a.a.a.a.a.a.a.a.a."),
        # a credential parameter's value with sentence punctuation throughout
        ("?key=" + "a." * 200_000, "?key=***."),
        # parameter names that never reach an "="
        ("?" + "key" * 100_000, "?keykeykeykeykeykeyk"),
        # a value with a long run of punctuation inside, then at its end
        ("?key=a" + "." * 200_000 + "a", "?key=***"),
        ("?key=a" + "." * 200_000, "?key=***" + "." * 12),
        # separators that could each start a parameter
        (";k=" + ";" * 200_000 + "x", ";k=" + ";" * 17),
        # a JSON-escaped scheme that never reaches an "@"
        ("https:" + "\\/" * 100_000, "https:" + "\\/" * 7),
        # user parts that never reach an "@"
        ("a://" * 50_000, "a://" * 5),
    ],
    ids=["scheme-run", "value-run", "name-run", "punctuation-inside", "punctuation-tail", "separator-run",
         "escaped-slashes", "schemes"],
)  # fmt: skip
def test_scrubbing_hostile_text_ends(hostile: str, shown: str) -> None:
    """Any text may be scrubbed (a server's message, a file name): the patterns never
    backtrack over it. Run apart, bounded: a quadratic pattern takes minutes here."""
    code = "import sys\nfrom ctxmgr._redact import scrub\nsys.stdout.write(scrub(sys.stdin.read())[:20])\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], input=hostile, capture_output=True, text=True, timeout=30, check=True
    )
    assert proc.stdout == shown
