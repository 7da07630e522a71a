"""Credentials never shown: API keys, and passwords and keys in URLs, removed from any text.

Every message that can reach a person (errors, warnings, ``--verbose`` logs, reports,
``ctxmgr config``) passes through :func:`scrub` at least once, where it is built (a
provider re-words an SDK error) and again where it is printed (the CLI), so a message
that slipped past the first still cannot show a key. Standard library only: the CLI
uses it on every path, ``trim`` included.
"""

from __future__ import annotations

import os
import re

__all__ = [
    "LOCAL_SERVER_KEY",
    "check_key_text",
    "hide_url_credentials",
    "remember_secret",
    "remember_url",
    "scrub",
    "url_password",
]

LOCAL_SERVER_KEY = "not-needed"
"""Sent as the API key to a server given by a base URL when no key is set: the SDKs
insist on a key, local OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio)
ignore it."""

_KEY_VARIABLES = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY")
_URL_VARIABLES = ("OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL")

# The user-information part of a URL (``scheme://user:password@host``): a password there
# is a credential like a key, and SDK and transport messages quote URLs whole. The scheme
# is bounded: unbounded, a long run of letters and dots (any text may be scrubbed) is
# scanned again from each of its letters, quadratic in its length.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,31}://)[^/?#\s@]*@")

# A query parameter whose name says it holds a credential (``?api-key=``, ``&token=``,
# ``?sig=``, ``&access_token=``): proxies in front of a model API and signed URLs carry
# keys there. The value is hidden wherever a URL is quoted; the name stays, so a message
# still says which parameter it was. The name is bounded and tested on its own: the text
# may be a server's, and a pattern that backtracks over it must not be.
_URL_PARAM = re.compile(
    r"([?&;][\w.~-]{1,64}=)"
    # Up to the next parameter or the URL's end; punctuation ending a sentence is not
    # part of the value ("failed at https://...?key=K: refused").
    r"([^&#\s\"'<>]+?)(?=[.,;:!?)\]]*(?:[&#\s\"'<>]|$))"
)
_CREDENTIAL_NAME = re.compile(r"(?i)key|token|secret|passw(?:or)?d|pwd|sig|auth|credential|session")


def _hidden_param(match: re.Match[str]) -> str:
    name = match.group(1)
    return name + "***" if _CREDENTIAL_NAME.search(name) else match.group(0)


_remembered: set[str] = set()
_remembered_passwords: set[str] = set()


def remember_secret(value: str | None) -> None:
    """Scrub ``value`` (a key read from a file) from every later message of this
    process, wherever the message is built."""
    if value and value != LOCAL_SERVER_KEY:
        _remembered.add(value)


def remember_url(url: str | None) -> None:
    """Scrub the credentials in ``url`` (a base URL given as a flag), its password and
    the values of its credential query parameters, from every later message of this
    process; the rest of the URL stays readable."""
    _remembered_passwords.update(_credential_forms(url))


def _credential_forms(url: str | None) -> set[str]:
    """The credentials of ``url`` as written (percent-encoded) and decoded: the password
    of its user-information part and the values of its credential query parameters."""
    if not url:
        return set()
    forms: set[str] = set()
    match = _URL_USERINFO.search(url)
    if match is not None:
        userinfo = match.group(0)[len(match.group(1)) : -1]
        forms.update((userinfo.partition(":")[2] or userinfo, url_password(url) or ""))
    values = [found.group(2) for found in _URL_PARAM.finditer(url) if _CREDENTIAL_NAME.search(found.group(1))]
    if values:
        from urllib.parse import unquote_plus  # only when a URL holds credentials

        forms.update(values)
        forms.update(map(unquote_plus, values))
    forms.discard("")
    return forms


def url_password(url: str | None) -> str | None:
    """The password (or lone user token) in ``url``'s user-information part, if any."""
    if not url:
        return None
    match = _URL_USERINFO.search(url)
    if match is None:
        return None
    from urllib.parse import unquote  # only when a URL holds credentials

    userinfo = match.group(0)[len(match.group(1)) : -1]
    return unquote(userinfo.partition(":")[2] or userinfo) or None


def hide_url_credentials(text: str) -> str:
    """``text`` with every URL's ``user:password@`` shown as ``***@`` and the value of
    every credential query parameter (``?api-key=``, ``&token=``...) as ``***``."""
    text = _URL_USERINFO.sub(r"\1***@", text)
    if "=" in text:
        text = _URL_PARAM.sub(_hidden_param, text)
    return text


def scrub(text: str, *secrets: str | None) -> str:
    """Remove credentials from ``text``: API keys (given ones, remembered ones and those
    in the usual variables) and passwords and credential query parameters in URLs
    (inline, given, or in the base-URL variables)."""
    candidates = {s for s in secrets if s and s != LOCAL_SERVER_KEY}
    candidates.update(_remembered)
    candidates.update(v for name in _KEY_VARIABLES if (v := os.environ.get(name)))
    passwords = set(_remembered_passwords)
    for source in (*secrets, *map(os.environ.get, _URL_VARIABLES)):
        passwords.update(_credential_forms(source))
    text = hide_url_credentials(text)
    for secret in sorted(candidates | passwords, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "***")
        elif secret in passwords:
            # People do choose short passwords; replaced where they stand alone, so that
            # "pw9" does not also turn every "pw9" inside a longer word into stars.
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", "***", text)
    return text


def check_key_text(key: str) -> str | None:
    """Why ``key`` cannot be an API key, or ``None`` when it can.

    Keys are printable ASCII. Anything else is a mis-encoded file (UTF-16, a byte-order
    mark, an editor's smart quote) or the wrong file, and sending it would fail deep in
    the HTTP library with a message that may quote the header holding it. The reason
    never quotes the key, not even one character of it.
    """
    if key.startswith("\ufeff"):
        return "it starts with a byte-order mark; save the file as plain ASCII"
    for position, char in enumerate(key, start=1):
        if not "\x21" <= char <= "\x7e":
            kind = (
                "a control character"
                if char < " " or char == "\x7f"
                else ("a space" if char.isspace() else "a non-ASCII character")
            )
            return f"character {position} is {kind}; an API key is printable ASCII (mis-encoded?)"
    return None
