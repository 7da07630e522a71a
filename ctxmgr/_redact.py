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

from ctxmgr import _provider_registry as registry

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

# Every provider's key and address variables, and the key of a provider reached only
# through a gateway (an Anthropic key is a secret wherever it turns up).
_KEY_VARIABLES = (*registry.key_variables(), "ANTHROPIC_API_KEY")
_URL_VARIABLES = registry.url_variables()

# The user-information part of a URL (``scheme://user:password@host``): a password there
# is a credential like a key, and SDK and transport messages quote URLs whole, sometimes
# JSON-escaped (``https:\/\/user:password@host``). The scheme is bounded (unbounded, a long
# run of letters and dots, in any text that is scrubbed, is scanned again from each of its
# letters) and may follow a word: "connect:https://..." is still a URL. The user part runs
# to the last "@" before the host (a password may hold an unencoded "@", as HTTP clients
# read it) and never past a quote, a bracket or a backslash, so a URL and an address
# listed after it ('"https://a.example","bob@example.org"') stay apart.
_URL_USERINFO = re.compile(r"(?i)([a-z][a-z0-9+.-]{0,31}:(?:\\?/){2})[^/?#\s\"'<>\\]*@")

# A query or fragment parameter whose name says it holds a credential (``?api-key=``,
# ``&token=``, ``?sig=``, ``#access_token=``): proxies in front of a model API and signed
# URLs carry keys there. Its value is hidden wherever a URL is quoted; the name stays, so
# a message still says which parameter it was. A parameter starts after ``?``, ``&``,
# ``;``, ``#`` or a JSON-escaped ``&`` (``\u0026``); its name is bounded and judged apart
# (see _is_credential_name), and its value runs to the next parameter, the URL's end or
# the punctuation ending a sentence ("...?key=K: refused"): every part is matched without
# backtracking over the text, which may be a server's.
_URL_PARAM = re.compile(
    r"((?:[?&;#]|\\u0026)([\w.~%\[\]-]{1,64})=)"
    r"((?:[^&#\s\"'<>\\]|\\(?!u0026))*[^&#\s\"'<>\\.,;:!?)\]])"
)
# The same parameters in a URL given alone (a base URL): its values run to the next
# parameter or the end, a last "." or ")" included.
_WHOLE_URL_PARAM = re.compile(r"(?:[?&;#])([\w.~%\[\]-]{1,64})=([^&#\s]*)")
_NAME_SEGMENT = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_CREDENTIAL_SEGMENTS = frozenset(
    {
        "key", "apikey", "token", "secret", "password", "passwd", "pwd", "pass", "pw", "passphrase", "sig",
        "signature", "hmac", "otp", "auth", "authorization", "credential", "credentials", "creds", "jwt",
        "bearer", "session", "sessionid",
    }
)  # fmt: skip
_CREDENTIAL_ENDINGS = (
    "apikey", "accesskey", "privatekey", "secretkey", "subscriptionkey", "token", "secret", "password", "passwd",
    "passphrase", "signature", "credential", "credentials",
)  # fmt: skip
# Names with a credential's word that never hold one: OAuth's token_type is "bearer".
_PLAIN_NAMES = frozenset({"token_type", "tokentype"})


def _is_credential_name(name: str) -> bool:
    """Whether a parameter named ``name`` holds a credential: one of its words (split at
    punctuation and case changes: ``api_key``, ``X-Api-Key``, ``accessToken``) is a
    credential's, or it ends like one (``accesstoken``, ``clientsecret``). Whole words,
    so ``max_tokens``, ``author`` and ``keyword`` are plain parameters."""
    if "%" in name:
        from urllib.parse import unquote  # only for a percent-encoded name

        name = unquote(name)
    words = [word.lower() for word in _NAME_SEGMENT.findall(name)]
    if "_".join(words) in _PLAIN_NAMES or "".join(words) in _PLAIN_NAMES:
        return False
    return any(word in _CREDENTIAL_SEGMENTS for word in words) or "".join(words).endswith(_CREDENTIAL_ENDINGS)


def _hidden_param(match: re.Match[str]) -> str:
    return match.group(1) + "***" if _is_credential_name(match.group(2)) else match.group(0)


def _memorable(value: str) -> bool:
    """Whether a credential parameter's value is scrubbed from any text, not only from
    URLs: letters and digits mixed (4 characters or more), or 8 characters or more that
    are not one plain word. A setting such as ``key_format=json`` or ``auth=required``
    would otherwise turn every "json" or "required" into stars."""
    if len(value) >= 4 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return True
    return len(value) >= 8 and not (value.isalpha() and (value.islower() or value.isupper()))


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
        forms.update((_secret_of(match.group(0)[len(match.group(1)) : -1]), url_password(url) or ""))
    values = [found.group(2) for found in _WHOLE_URL_PARAM.finditer(url) if _is_credential_name(found.group(1))]
    # As given, and as a message may quote it: decoded, without a last "." or ")".
    values += [value.rstrip(".,;:!?)]") for value in values]
    if values:
        from urllib.parse import unquote_plus  # only when a URL holds credentials

        forms.update(value for value in (*values, *map(unquote_plus, values)) if _memorable(value))
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

    return unquote(_secret_of(match.group(0)[len(match.group(1)) : -1])) or None


def _secret_of(userinfo: str) -> str:
    """The password of ``user:password``, or a lone token (``token@host``); nothing of
    ``user:`` (a user name with an empty password is no secret)."""
    user, colon, password = userinfo.partition(":")
    return password if colon else user


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
