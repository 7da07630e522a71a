"""What a format declares once for both of its readers: roles, where ids live, which text
fields may carry ctxmgr's summary marker.

Each format's light module (``ctxmgr/formats/_detection/<format>.py``) holds one
:class:`Declaration` as ``DECLARATION``, beside the outline reader (the trim fast path);
the full reader imports it from there. A rule about these fields is stated once:

* the roles a record may have and the model role each maps to (one table of the light
  module, which the full reader reads too);
* where a record's tool call ids and the ids of the calls it answers live (a
  :data:`Path`); the readers' loops read them in their own way, for speed, and
  ``tests/formats/test_declarations.py`` checks that both find exactly these;
* the text fields that may carry the summary marker (:data:`SUMMARY_HEADER`) and the
  fields whose value names a summary record. :meth:`Declaration.marked` is the one test of
  them: the full reader lifts or warns about a marker only in a record it finds marked,
  and the outline reader declines every marked record, leaving it to the full reader. A
  field left out of the declaration therefore loses the full reader's warning too (its
  tests say so), instead of splitting the two paths.

Nothing here imports pydantic or the model: detection and the fast path load it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ctxmgr.formats._base import SUMMARY_HEADER

__all__ = ["EACH", "TYPED", "Declaration", "Path", "of_type", "replace_at", "values_at"]

EACH = "*"
"""A path step over every item of a list, or every value of an object."""

TYPED = "@type"
"""A path step to the value under the key an object's ``type`` names (a Chat Completions
part's ``text`` or ``refusal``)."""

_OF_TYPE = "?type="


def of_type(*kinds: str) -> str:
    """A path step that goes on only from an object whose ``type`` is one of ``kinds``
    (a Responses ``function_call`` item, an Anthropic ``tool_use`` block)."""
    return _OF_TYPE + "|".join(kinds)


Path = tuple[str | tuple[str, ...], ...]
"""Where values live inside a record: object keys, :data:`EACH`, :data:`TYPED`,
:func:`of_type`, or a tuple of keys read in turn from the same object."""


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
        if isinstance(step, str) and step.startswith(_OF_TYPE):
            if value.get("type") in step[len(_OF_TYPE) :].split("|"):
                yield from values_at(value, rest)
            return
        if step == TYPED:
            kind = value.get("type")
            step = kind if kind.__class__ is str else ()
        for key in (step,) if isinstance(step, str) else step:
            if key in value:
                yield from values_at(value[key], rest)


def replace_at(value: Any, path: Path, renames: Mapping[str, str]) -> None:
    """Replace, in place, the strings at ``path`` inside ``value`` that ``renames`` names
    (the twin of :func:`values_at`, which reads them: ``--fix-call-ids`` renumbers ids)."""
    if not renames or not path:
        return
    step, rest = path[0], path[1:]
    if step == EACH:
        items = value if isinstance(value, list) else value.values() if isinstance(value, dict) else ()
        for item in items:
            replace_at(item, rest, renames)
        return
    if not isinstance(value, dict):
        return
    if isinstance(step, str) and step.startswith(_OF_TYPE):
        if value.get("type") in step[len(_OF_TYPE) :].split("|"):
            replace_at(value, rest, renames)
        return
    if step == TYPED:
        kind = value.get("type")
        step = kind if isinstance(kind, str) else ()
    for key in (step,) if isinstance(step, str) else step:
        if key not in value:
            continue
        if rest:
            replace_at(value[key], rest, renames)
        elif isinstance(value[key], str) and value[key] in renames:
            value[key] = renames[value[key]]


class Declaration:
    """One format's rules for both of its readers (see the module docstring).

    Attributes:
        name: The format's registry name.
        roles: Each role a record may have, and the model role it reads as.
        call_ids: Where a record's tool call ids live (each path in turn).
        result_ids: Where the ids of the calls a record answers live.
        marker_texts: The text fields that may carry the summary marker; each path's
            strings are also searched joined, as a reader joins parts.
        marker_names: Fields whose value marks a summary record (path, value): a
            summary's name, or a metadata flag.
        container_texts: Fields of the container (a request) that may carry the marker.
    """

    # A plain class: loaded with detection, before every command.
    __slots__ = (
        "_container_marked",
        "_marked",
        "call_ids",
        "container_texts",
        "marker_names",
        "marker_texts",
        "name",
        "result_ids",
        "roles",
    )

    def __init__(
        self,
        *,
        name: str,
        roles: Mapping[str, str],
        call_ids: tuple[Path, ...] = (),
        result_ids: tuple[Path, ...] = (),
        marker_texts: tuple[Path, ...],
        marker_names: tuple[tuple[Path, object], ...] = (),
        container_texts: tuple[Path, ...] = (),
    ) -> None:
        self.name = name
        # Looked up with any JSON value (a role may be a number, a list, ...).
        self.roles: dict[object, str] = {}
        self.roles.update(roles)
        self.call_ids = call_ids
        self.result_ids = result_ids
        self.marker_texts = marker_texts
        self.marker_names = marker_names
        self.container_texts = container_texts
        self._marked = _compiled(marker_texts, marker_names)
        self._container_marked = _compiled(container_texts)

    def __repr__(self) -> str:
        return f"Declaration(name={self.name!r})"

    def marked(self, record: Any) -> bool:
        """Whether ``record`` may carry the summary marker: the header in one of its
        declared text fields (alone, or joined with the path's other strings), or a
        summary's name in a declared name field."""
        return self._marked(record)

    def container_marked(self, container: Any) -> bool:
        """Whether a container's declared fields (a request's system prompt) may carry
        the summary marker."""
        return self._container_marked(container)

    def ids(self, record: Any) -> tuple[list[Any], list[Any]]:
        """``(call ids, result ids)`` found at the declared paths of ``record``."""
        calls = [found for path in self.call_ids for found in values_at(record, path)]
        results = [found for path in self.result_ids for found in values_at(record, path)]
        return calls, results


class _Node:
    """A step of the paths' trie: what ends here (path numbers), what follows, and the
    paths that pass through."""

    __slots__ = ("ends", "next", "through")

    def __init__(self) -> None:
        self.ends: list[int] = []
        self.next: dict[str, _Node] = {}
        self.through: list[int] = []


def _trie(paths: tuple[Path, ...]) -> _Node:
    root = _Node()
    for number, path in enumerate(paths):
        nodes = [root]
        for step in path:
            following: list[_Node] = []
            for node in nodes:
                # A tuple of keys is one branch per key, all of this path.
                for key in (step,) if isinstance(step, str) else step:
                    child = node.next.setdefault(key, _Node())
                    if number not in child.through:
                        child.through.append(number)
                    following.append(child)
            nodes = following
        for node in nodes:
            node.ends.append(number)
    return root


def _compiled(texts: tuple[Path, ...], names: tuple[tuple[Path, object], ...] = ()) -> Callable[[Any], bool]:
    """One function that tells whether a value is marked at ``texts`` or ``names`` (see
    :meth:`Declaration.marked`), written out from the paths and compiled once.

    The outline reader asks it of every record of every conversation it reads: a walk
    interpreted step by step (a call or a generator per step) would cost more than the
    rest of the outline, while the written-out code, one pass over the paths' trie,
    costs what a hand-written check would. The paths are the declaration's own
    constants, never data from a file.
    """
    lines = ["def marked(value):"]
    namespace: dict[str, Any] = {"HEADER": SUMMARY_HEADER, "dict": dict, "list": list, "str": str, "joined": _joined}
    _emit(lines, namespace, texts, _trie(texts), "value", 1, None)
    for number, (path, name) in enumerate(names):
        namespace[f"NAME{number}"] = name
        _emit(lines, namespace, (path,), _trie((path,)), "value", 1, None, equals=f"NAME{number}")
    lines.append("    return False")
    exec("\n".join(lines), namespace)
    marked: Callable[[Any], bool] = namespace["marked"]
    return marked


def _joined(value: Any, rests: tuple[Path, ...]) -> bool:
    """Whether the strings at one of ``rests`` under the items of list ``value``, joined
    in order, hold the header (asked only when one of them holds a "[")."""
    items = value if value.__class__ is list else value.values()
    for rest in rests:
        texts = [text for item in items for text in values_at(item, rest) if text.__class__ is str]
        if SUMMARY_HEADER in "".join(texts):
            return True
    return False


def _emit(
    lines: list[str],
    namespace: dict[str, Any],
    paths: tuple[Path, ...],
    node: _Node,
    name: str,
    depth: int,
    flag: str | None,
    *,
    equals: str | None = None,
) -> None:
    """Append the code that checks what ends at ``node`` (its value in variable ``name``)
    and walks on. A string is searched for the header (``equals``: compared with that
    name instead). Under a list, a string with a "[" sets ``flag``: after the list, its
    strings are searched joined per path, as a reader joins parts (:func:`_joined`), a
    header split between parts included."""
    pad = "    " * depth
    for _ in node.ends:
        if equals is not None:
            lines.append(f"{pad}if {name} == {equals}: return True")
        elif flag is not None:
            lines.append(f"{pad}if {name}.__class__ is str and '[' in {name}: {flag} = True")
        else:
            lines.append(f"{pad}if {name}.__class__ is str and HEADER in {name}: return True")
    inner = f"v{depth}"
    for key, child in node.next.items():
        if key.startswith(_OF_TYPE):
            kinds = f"KINDS{len(namespace)}"
            namespace[kinds] = frozenset(key[len(_OF_TYPE) :].split("|"))
            lines.append(f"{pad}if {name}.__class__ is dict and {name}.get('type') in {kinds}:")
            _emit(lines, namespace, paths, child, name, depth + 1, flag, equals=equals)
    special = (EACH, TYPED)
    keys = [(key, child) for key, child in node.next.items() if key not in special and not key.startswith(_OF_TYPE)]
    if keys:
        lines.append(f"{pad}if {name}.__class__ is dict:")
        for key, child in keys:
            lines.append(f"{pad}    if {key!r} in {name}:")
            lines.append(f"{pad}        {inner} = {name}[{key!r}]")
            _emit(lines, namespace, paths, child, inner, depth + 2, flag, equals=equals)
    typed = node.next.get(TYPED)
    if typed is not None:
        kind = f"k{depth}"
        lines.append(f"{pad}if {name}.__class__ is dict:")
        lines.append(f"{pad}    {kind} = {name}.get('type')")
        lines.append(f"{pad}    if {kind}.__class__ is str and {kind} in {name}:")
        lines.append(f"{pad}        {inner} = {name}[{kind}]")
        _emit(lines, namespace, paths, typed, inner, depth + 2, flag, equals=equals)
    each = node.next.get(EACH)
    if each is None:
        return
    items = f"({name} if {name}.__class__ is list else {name}.values() if {name}.__class__ is dict else ())"
    if flag is not None or equals is not None:
        lines.append(f"{pad}for {inner} in {items}:")
        _emit(lines, namespace, paths, each, inner, depth + 1, flag, equals=equals)
        return
    # The first list on these paths: what follows it, per path, for the joined search.
    rests = f"RESTS{len(namespace)}"
    namespace[rests] = tuple(paths[number][paths[number].index(EACH) + 1 :] for number in each.through)
    own = f"split{depth}"
    lines.append(f"{pad}if {name}.__class__ is list or {name}.__class__ is dict:")
    lines.append(f"{pad}    {own} = False")
    lines.append(f"{pad}    for {inner} in {name} if {name}.__class__ is list else {name}.values():")
    _emit(lines, namespace, paths, each, inner, depth + 2, own)
    lines.append(f"{pad}    if {own} and joined({name}, {rests}): return True")
