"""What a format declares once for both of its readers: roles, where ids live, which text
fields may carry ctxmgr's summary marker.

Each format's light module (``ctxmgr/formats/_detection/<format>.py``) holds one
:class:`Declaration` as ``DECLARATION``. Its full reader and its outline reader (the trim
fast path) are both driven by it, so a rule about these fields exists in one place:

* the roles a record may have and the model role each maps to;
* where a record's tool call ids and the id of the call a result answers live (a
  :data:`Path`);
* the text fields that may carry the summary marker (:data:`SUMMARY_HEADER`) and the
  fields whose value names a summary record. :meth:`Declaration.marked` is the one test of
  them: the full reader lifts or warns about a marker only in a record it finds marked,
  and the outline reader declines every marked record, leaving it to the full reader. A
  field left out of the declaration therefore loses the full reader's warning too (its
  tests say so), instead of splitting the two paths.

Nothing here imports pydantic or the model: detection and the fast path load it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxmgr.formats._base import SUMMARY_HEADER

__all__ = ["EACH", "TYPED", "Declaration", "Path", "values_at"]

EACH = "*"
"""A path step over every item of a list, or every value of an object."""

TYPED = "@type"
"""A path step to the value under the key an object's ``type`` names (a Chat Completions
part's ``text`` or ``refusal``)."""

Path = tuple[str | tuple[str, ...], ...]
"""Where values live inside a record: object keys, :data:`EACH`, :data:`TYPED`, or a
tuple of keys read in turn from the same object."""


def values_at(value: Any, path: Path) -> Iterator[Any]:
    """Every value at ``path`` inside ``value``, in document order (a missing key, or a
    step that does not fit the value's type, yields nothing)."""
    if not path:
        yield value
        return
    step, rest = path[0], path[1:]
    if step == EACH:
        items = value if value.__class__ is list else value.values() if value.__class__ is dict else ()
        for item in items:
            yield from values_at(item, rest)
    elif value.__class__ is dict:
        if step == TYPED:
            kind = value.get("type")
            step = kind if kind.__class__ is str else ()
        for key in (step,) if isinstance(step, str) else step:
            if key in value:
                yield from values_at(value[key], rest)


class Declaration:
    """One format's rules for both of its readers (see the module docstring).

    Attributes:
        name: The format's registry name.
        roles: Each role a record may have, and the model role it reads as.
        system_roles: The roles that are system instructions.
        call_ids: Where a record's tool call ids live.
        result_ids: Where the id of the call a result answers lives.
        marker_texts: The text fields that may carry the summary marker; each path's
            strings are also searched joined, as a reader joins parts.
        marker_names: Fields whose value marks a summary record (path, value): a
            summary's name, or a metadata flag.
        container_texts: Fields of the container (a request) that may carry the marker.
    """

    # A plain class: loaded with detection, before every command.
    __slots__ = (
        "call_ids",
        "container_texts",
        "marker_names",
        "marker_texts",
        "name",
        "result_ids",
        "roles",
        "system_roles",
    )

    def __init__(
        self,
        *,
        name: str,
        roles: Mapping[str, str],
        system_roles: frozenset[str] = frozenset({"system"}),
        call_ids: Path = (),
        result_ids: Path = (),
        marker_texts: tuple[Path, ...],
        marker_names: tuple[tuple[Path, object], ...] = (),
        container_texts: tuple[Path, ...] = (),
    ) -> None:
        self.name = name
        # Looked up with any JSON value (a role may be a number, a list, ...).
        self.roles: dict[object, str] = {}
        self.roles.update(roles)
        self.system_roles = system_roles
        self.call_ids = call_ids
        self.result_ids = result_ids
        self.marker_texts = marker_texts
        self.marker_names = marker_names
        self.container_texts = container_texts

    def __repr__(self) -> str:
        return f"Declaration(name={self.name!r})"

    def marked(self, record: Any) -> bool:
        """Whether ``record`` may carry the summary marker: the header in one of its
        declared text fields (alone, or joined with the path's other strings), or a
        summary's name in a declared name field."""
        return _marked(record, self.marker_texts) or any(
            value == name for path, name in self.marker_names for value in values_at(record, path)
        )

    def container_marked(self, container: Any) -> bool:
        """Whether a container's declared fields (a request's system prompt) may carry
        the summary marker."""
        return _marked(container, self.container_texts)

    def texts(self, record: Any) -> list[str]:
        """Every string in ``record``'s declared marker fields, path by path."""
        return [text for path in self.marker_texts for text in values_at(record, path) if text.__class__ is str]

    def ids(self, record: Any) -> tuple[list[Any], list[Any]]:
        """``(call ids, result ids)`` found at the declared paths of ``record``."""
        calls = list(values_at(record, self.call_ids)) if self.call_ids else []
        results = list(values_at(record, self.result_ids)) if self.result_ids else []
        return calls, results


def _marked(value: Any, paths: tuple[Path, ...]) -> bool:
    for path in paths:
        texts = [text for text in values_at(value, path) if text.__class__ is str]
        if texts and SUMMARY_HEADER in (texts[0] if len(texts) == 1 else "".join(texts)):
            return True
    return False
