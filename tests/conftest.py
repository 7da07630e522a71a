"""Shared fixtures: every test runs with a clean environment and a fixed terminal."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from _reference_venv import BackgroundBuild, ReferenceUnavailable, default_venv
from hypothesis import settings
from llm_server import LLMServer

from ctxmgr import _provider_registry as provider_registry

# Property tests explore the same examples on every run (derandomize: each test's examples
# follow from its name), so CI passes or fails on the code alone. A deeper exploration,
# with fresh random examples and FUZZ_FACTOR times as many, runs on demand:
#
#     CTXMGR_HYPOTHESIS=fuzz python -m pytest -n 0 -m fuzz --timeout 0 tests/formats tests/files
#
# (``-m fuzz`` alone selects the property tests marked so, and the fuzz profile with them;
# ``--timeout 0`` lifts the per-test limit, which twenty times the examples may pass.)
FUZZ_FACTOR = 20
# No deadline in either: a time limit per example fails a test on a busy machine, not on the code.
settings.register_profile("deterministic", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile(
    "fuzz", derandomize=False, max_examples=100 * FUZZ_FACTOR, deadline=None, print_blob=True
)
settings.load_profile(os.environ.get("CTXMGR_HYPOTHESIS", "deterministic"))


def pytest_configure(config: pytest.Config) -> None:
    """``-m fuzz`` asks for the deeper exploration: load its profile before the test
    modules (and their ``settings``) are imported."""
    if config.getoption("markexpr", "") == "fuzz":
        settings.load_profile("fuzz")


REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
DATA = Path(__file__).resolve().parent / "data"

_ISOLATED_VARIABLES = (
    # Every provider's key, address and Vertex AI switch, as the registry lists them.
    *provider_registry.key_variables(),
    *provider_registry.url_variables(),
    *(e.vertex_variable for e in provider_registry.ENTRIES if e.vertex_variable),
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "ANTHROPIC_API_KEY",
    "CTXMGR_DEBUG",
    "CTXMGR_CACHE_DIR",
    "CTXMGR_CACHE_MAX_SIZE",
    "CTXMGR_CONFIG",
    "CTXMGR_TRUST_PROJECT_CONFIG",
    "CTXMGR_SAFE_DIRECTORIES",
)


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No real keys or endpoints leak in; caches and user config go to temporary folders; fixed width."""
    for name in _ISOLATED_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    # The user-level config (trusted like the environment) must never be the real one.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    # Nor the user's state folder (where batch states are recorded).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "dumb")


# -- the local LLM API server (tests/llm_server.py) ------------------------------------

_PROVIDER_VARIABLES = (
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_GENAI_HTTP_CLIENT",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "OPENAI_ADMIN_KEY",
    "OPENAI_CUSTOM_HEADERS",
)


@pytest.fixture(autouse=True)
def isolated_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDKs read these too: none may steer a test to a real endpoint or credential."""
    for name in _PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A fresh local OpenAI/Gemini-compatible API server for one test.

    Point the SDKs at ``llm_server.openai_url`` (OpenAI) or ``llm_server.url`` (Gemini);
    script answers with ``llm_server.script(Reply...)``; read ``requests``,
    ``request_count``, ``in_flight`` and ``max_in_flight``.
    """
    with LLMServer() as server:
        yield server


# -- the reference package, 10xgraph, for the tests that compare with it -----------------

REFERENCE_BUILD = pytest.StashKey[BackgroundBuild]()
_REFERENCE_USERS = frozenset({"test_reference_compat.py", "test_native_reference.py"})


def _reference_build(config: pytest.Config) -> BackgroundBuild:
    cache = getattr(config, "cache", None)  # None with -p no:cacheprovider
    return BackgroundBuild(default_venv(cache.mkdir("tenxgraph-0.10.3") if cache is not None else None))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start building the reference's environment now, if a collected test compares with it:
    the build overlaps the tests that run first."""
    if any(item.path.name in _REFERENCE_USERS for item in session.items):
        session.config.stash[REFERENCE_BUILD] = _reference_build(session.config)


_REFERENCE_SKIP = "the reference environment is unavailable: "
_SKIP_LINE = 0  # the line the folded skip names: the module, not one test


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def reference_python(config: pytest.Config) -> Path:
    """The Python of the reference's environment (10xgraph installed), built once and kept
    in pytest's cache folder. Where it cannot be built (no Python >= 3.12, no network to
    install the reference), the tests that compare with it fail in CI (``CI=true``) and are
    skipped elsewhere, with one line at the end of the run saying what is missing."""
    build = config.stash.get(REFERENCE_BUILD, None) or _reference_build(config)
    try:
        return build.python()
    except ReferenceUnavailable as exc:
        unavailable = str(exc)
    # Raised here, not chained to the build's error.
    if _in_ci():
        pytest.fail(unavailable, pytrace=False)
    first = unavailable.splitlines()[0]
    pytest.skip(f"{_REFERENCE_SKIP}{first} (outside CI these comparisons are skipped; CI=true fails them)")


@pytest.fixture(scope="session")
def tenxgraph(pytestconfig: pytest.Config) -> Path:
    """The reference environment's Python (see :func:`reference_python`)."""
    return reference_python(pytestconfig)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Every comparison skipped for want of the reference is reported at one place, so the
    summary (``-ra``) folds them into one line with their count, not one line a test."""
    outcome = yield
    report = outcome.get_result()
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and _REFERENCE_SKIP in str(longrepr[2]):
        report.longrepr = (__file__, _SKIP_LINE, longrepr[2])
