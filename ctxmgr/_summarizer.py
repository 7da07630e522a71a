"""The one interface every summarizer implements, and what holds for any summarizer.

:class:`Summarizer` is what a provider, a wrapper of the summarizer chain (the cache, the
cap on calls) or a user's own summarizer offers; :func:`aopen_summarizer` and
:func:`aclose_summarizer` call the optional hooks of one, :func:`never_waits` says
whether one answers without suspending; :func:`summary_length` bounds
the length of a summary of ``max_tokens`` (an answer far longer is no such summary:
refused from a model, ignored from the cache). :func:`freeze_after_setup` and
:func:`setup_done` let a provider tell the garbage collector, in the command line's
process, that its start-up is over; :func:`setting_up` pauses the collector while a
provider sets up there.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, runtime_checkable

from ctxmgr._units import UNITS_PER_TOKEN, text_units

__all__ = [
    "TEXT_TOKENS_FACTOR",
    "Summarizer",
    "aclose_summarizer",
    "aopen_summarizer",
    "freeze_after_setup",
    "never_waits",
    "setting_up",
    "setup_done",
    "summary_far_too_long",
    "summary_length",
]

TEXT_TOKENS_FACTOR = 4
"""A summary's estimated tokens may be at most this many times the cap."""

_TEXT_SLACK_TOKENS = 64
"""Added to the text bound, so a tiny cap does not refuse a few words more."""


_setup: dict[str, bool] = {"freeze": False, "done": False}

YOUNG_AFTER_SETUP = 5000
"""New objects between two young collections once the set-up is done (Python's default: 700)."""


def freeze_after_setup() -> None:
    """Have :func:`setup_done` freeze the garbage collector's objects (``gc.freeze``).

    The command line asks for it: its process runs one command. A program that imports
    the library is left as it is (its own objects are its own to collect).
    """
    _setup["freeze"] = True


def setup_done() -> None:
    """A provider's client for a run is built: its SDK imported, thousands of classes and
    their schemas made, that live as long as the process. With :func:`freeze_after_setup`
    (the first call only), the collector stops walking them: each full collection of a
    summary run walked them all again (at concurrency 16 on the bench server, about 7%
    of the run's CPU), and its young collections run every :data:`YOUNG_AFTER_SETUP` new
    objects. Objects frozen are still freed when nothing refers to them; a cycle
    among them that is already garbage when they are frozen (left over from the start-up)
    is never collected.
    """
    if _setup["freeze"] and not _setup["done"]:
        _setup["done"] = True
        gc.freeze()
        # The run's own objects (a conversation's messages, requests, answers) mostly die
        # young, by their counts: a young collection every 700 new objects found little,
        # and promoted what was in flight to be walked again by the older ones. At 256
        # summaries on the bench server (collector callbacks' CPU): 0.03-0.06 s against
        # 0.10-0.11 s, a full collection less.
        first, *older = gc.get_threshold()
        gc.set_threshold(max(first, YOUNG_AFTER_SETUP), *older)


@contextmanager
def setting_up() -> Iterator[None]:
    """The garbage collector paused while a provider sets up (its SDK imported, its client
    built), in the command line's process until :func:`setup_done`; elsewhere, and once it
    is done, nothing changes.

    The set-up makes tens of thousands of objects that live as long as the process (the
    SDK's classes and schemas), which :func:`setup_done` then freezes: collecting while
    they are made walked them again and again, about 200 young collections for nothing
    (about 8% of importing the openai SDK). The few cycles that the import leaves as
    garbage (about 600 objects, 0.3 MB) are frozen with the rest and stay.
    """
    if not _setup["freeze"] or _setup["done"] or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@runtime_checkable
class Summarizer(Protocol):
    """Turns a fenced transcript into a summary.

    ``name`` identifies the provider and model (used in error messages and cache keys).
    Implementations raise :class:`ctxmgr.errors.ProviderError` (or a subclass) on failure
    and never let an SDK exception escape. An empty string means "no summary": the
    manager then leaves the conversation unchanged.
    """

    name: str

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        """Return the summary of ``text`` following ``instructions``, at most ``max_tokens``."""
        ...


async def aopen_summarizer(summarizer: object) -> None:
    """Let ``summarizer`` keep its client for the running loop (a batch is starting)."""
    open_ = getattr(summarizer, "aopen", None)
    if open_ is not None:
        await open_()


async def aclose_summarizer(summarizer: object) -> None:
    """Close what ``summarizer`` holds for the running loop, if it holds anything."""
    close = getattr(summarizer, "aclose", None)
    if close is not None:
        await close()


def never_waits(summarizer: object) -> bool:
    """Whether ``summarizer`` answers without ever suspending (the offline digest, and
    wrappers around it that add no waiting of their own): its calls then need no event
    loop, no cap on how many run at once, and may run in forked processes.

    A summarizer's class says so with ``never_waits`` (true, or a property that is), in
    the class that also defines its ``summarize``: a subclass that overrides
    ``summarize`` without saying so again, or a wrapper that forwards attributes to a
    summarizer that never waits (``__getattr__``), is taken to wait, as is every
    network provider and any summarizer of a caller's own.
    """
    mro = type(summarizer).__mro__
    declared = next((klass for klass in mro if "never_waits" in vars(klass)), None)
    if declared is None or declared is not next((klass for klass in mro if "summarize" in vars(klass)), None):
        return False
    if isinstance(vars(declared)["never_waits"], property):
        return getattr(summarizer, "never_waits", False) is True
    return vars(declared)["never_waits"] is True


def summary_length(text: str, max_tokens: int) -> tuple[int, int]:
    """``(estimated tokens of text, the most a summary of max_tokens may have)``."""
    return -(-text_units(text) // UNITS_PER_TOKEN), TEXT_TOKENS_FACTOR * max(1, max_tokens) + _TEXT_SLACK_TOKENS


def summary_far_too_long(text: str, max_tokens: int) -> bool:
    """Whether ``text`` is far longer than a summary of ``max_tokens`` could be."""
    estimate, bound = summary_length(text, max_tokens)
    return estimate > bound
