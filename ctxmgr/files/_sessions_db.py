"""OpenAI Agents SDK ``SQLiteSession`` databases: list their sessions, read one, rewrite it.

The SDK keeps each session's history in two tables: ``agent_sessions`` (``session_id``,
``created_at``, ``updated_at``) and ``agent_messages`` (``id``, ``session_id``,
``message_data``: one Responses input item as JSON, ``created_at``), read back in ``id``
order. A session is compacted as the list of its items (read by the ``openai-responses``
reader) and written back as items: JSON lines on standard output or to a file, or, with
``-i``, as the session's new rows.

The database is untrusted input (docs/threat-model.md):

* reading opens it read-only (``file:...?mode=ro``) with ``PRAGMA trusted_schema=OFF``,
  so no function or virtual table its schema names runs;
* a trigger or a view on the session tables is refused: a trigger runs the file's own
  SQL on our write, a view stands where the table should be;
* a locked or busy database is an error at once (no waiting on another writer);
* an in-place rewrite is one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``): it checks
  that the session still holds the rows that were read (their hash), deletes them and
  inserts the new items; any failure rolls back, so the session is never half-written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import orjson

from ctxmgr.errors import InputError, OutputError, UsageError
from ctxmgr.files._reading import SQLITE_HEADER, is_sqlite_file

__all__ = [
    "HEADER",
    "MESSAGES",
    "SESSIONS",
    "Row",
    "SessionInfo",
    "is_session_db",
    "list_sessions",
    "pick_session",
    "read_rows",
    "rewrite_session",
    "rows_digest",
]

HEADER = SQLITE_HEADER
"""The first 16 bytes of every SQLite database file."""
SESSIONS = "agent_sessions"
MESSAGES = "agent_messages"


@dataclass(frozen=True)
class Row:
    """One row of ``agent_messages``: its id, its item (JSON text) and when it was added."""

    id: int
    data: str
    created_at: str | None


@dataclass(frozen=True)
class SessionInfo:
    """One session: its id, its item count, the bytes of its items, and its times."""

    session_id: str
    items: int
    nbytes: int
    created_at: str | None
    updated_at: str | None


def starts_as_db(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) is a SQLite database's header."""
    return head[: len(HEADER)] == HEADER


def is_session_db(path: str | os.PathLike[str]) -> bool:
    """Whether the regular file at ``path`` starts with the SQLite header (what it holds
    is checked when it is opened)."""
    return is_sqlite_file(path)


def _uri(path: str | os.PathLike[str], mode: str) -> str:
    return f"file:{quote(os.path.abspath(path))}?mode={mode}"


def _error(path: str | os.PathLike[str], exc: sqlite3.Error) -> InputError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return InputError(
            "the database is locked by another connection (an agent writing its session?); try again when it is done",
            source=str(path),
        )
    return InputError(f"not a readable SQLite database: {text}", source=str(path))


@contextlib.contextmanager
def _connect(path: str | os.PathLike[str], *, write: bool = False) -> Iterator[sqlite3.Connection]:
    """A connection to ``path`` (read-only unless ``write``), its schema checked."""
    try:
        # timeout=0: a locked database is an error now, not a wait; isolation_level=None:
        # the one write transaction is begun and ended here, explicitly.
        connection = sqlite3.connect(_uri(path, "rw" if write else "ro"), uri=True, timeout=0, isolation_level=None)
    except sqlite3.Error as exc:
        raise _error(path, exc) from None
    try:
        connection.execute("PRAGMA trusted_schema=OFF")
        _check_schema(connection, path)
        yield connection
    except sqlite3.Error as exc:
        raise _error(path, exc) from None
    finally:
        connection.close()


def _check_schema(connection: sqlite3.Connection, path: str | os.PathLike[str]) -> None:
    rows = connection.execute("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master").fetchall()
    tables = {name for kind, name, _, _ in rows if kind == "table"}
    missing = [t for t in (SESSIONS, MESSAGES) if t not in tables]
    if missing:
        raise InputError(
            f"a SQLite database without the Agents SDK's session tables ({', '.join(missing)} missing)",
            source=str(path),
        )
    for kind, name, table, sql in rows:
        touches = table in (SESSIONS, MESSAGES) or SESSIONS in sql or MESSAGES in sql
        if kind in ("trigger", "view") and touches:
            raise InputError(
                f"refused: the database has a {kind} ({name}) on its session tables; "
                "its SQL would run or stand in for the sessions ctxmgr reads and writes",
                source=str(path),
            )


def list_sessions(path: str | os.PathLike[str]) -> list[SessionInfo]:
    """Every session of the database at ``path``, oldest first, with its size."""
    with _connect(path) as connection:
        found = connection.execute(
            f"SELECT s.session_id, count(m.id), coalesce(sum(length(CAST(m.message_data AS BLOB))), 0), "
            f"s.created_at, s.updated_at FROM {SESSIONS} s LEFT JOIN {MESSAGES} m ON m.session_id = s.session_id "
            "GROUP BY s.session_id ORDER BY s.created_at, s.session_id"
        ).fetchall()
        orphans = connection.execute(
            f"SELECT m.session_id, count(*), sum(length(CAST(m.message_data AS BLOB))), min(m.created_at), "
            f"max(m.created_at) FROM {MESSAGES} m WHERE m.session_id NOT IN (SELECT session_id FROM {SESSIONS}) "
            "GROUP BY m.session_id ORDER BY m.session_id"
        ).fetchall()
    return [SessionInfo(str(s), int(n), int(b), _text(c), _text(u)) for s, n, b, c, u in (*found, *orphans)]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def pick_session(path: str | os.PathLike[str], session: str | None) -> str:
    """The session to compact: ``session``, or the database's only one."""
    sessions = [info.session_id for info in list_sessions(path)]
    if session is not None:
        if session not in sessions:
            shown = ", ".join(sessions[:10]) or "none"
            raise UsageError(f"{path}: no session {session!r} in this database (its sessions: {shown})")
        return session
    if len(sessions) == 1:
        return sessions[0]
    shown = ", ".join(sessions[:10]) or "none"
    raise UsageError(f"{path}: a database of {len(sessions)} sessions: name one with --session ID ({shown})")


def read_rows(path: str | os.PathLike[str], session: str) -> list[Row]:
    """The rows of ``session``, in the order the SDK reads them (by ``id``)."""
    with _connect(path) as connection:
        return _rows(connection, session)


def _rows(connection: sqlite3.Connection, session: str) -> list[Row]:
    found = connection.execute(
        f"SELECT id, message_data, created_at FROM {MESSAGES} WHERE session_id = ? ORDER BY id", (session,)
    ).fetchall()
    return [Row(int(i), d if isinstance(d, str) else bytes(d).decode("utf-8"), _text(c)) for i, d, c in found]


def items_of(rows: Sequence[Row], path: str | os.PathLike[str]) -> list[Any]:
    """The rows' items, parsed (an :class:`InputError` names the row that is not JSON)."""
    items: list[Any] = []
    for row in rows:
        try:
            items.append(orjson.loads(row.data))
        except orjson.JSONDecodeError as exc:
            raise InputError(f"agent_messages row {row.id}: not a JSON item ({exc})", source=str(path)) from None
    return items


def rows_digest(datas: Sequence[str]) -> str:
    """The hash of a session: its items' JSON texts, in order."""
    digest = hashlib.sha256()
    for data in datas:
        encoded = data.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
    return digest.hexdigest()


def rewrite_session(
    path: str | os.PathLike[str],
    session: str,
    items: Sequence[str],
    *,
    expect: str,
    rows: Sequence[Row] | None = None,
) -> None:
    """Replace the rows of ``session`` by ``items`` (JSON texts) in one transaction.

    ``expect`` is the digest of the rows that were read (:func:`rows_digest`): if the
    session holds others now (its agent went on), nothing is written. ``rows`` (from a
    backup) are inserted with their own ids and times instead of new ones.
    """
    with _connect(path, write=True) as connection:
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise _error(path, exc) from None
        try:
            now = _rows(connection, session)
            if rows_digest([row.data for row in now]) != expect:
                raise OutputError(f"{path}: session {session!r} changed since it was read; not rewritten")
            connection.execute(f"DELETE FROM {MESSAGES} WHERE session_id = ?", (session,))
            if rows is not None:
                connection.executemany(
                    f"INSERT INTO {MESSAGES} (id, session_id, message_data, created_at) VALUES (?, ?, ?, ?)",
                    [(row.id, session, row.data, row.created_at) for row in rows],
                )
            else:
                connection.executemany(
                    f"INSERT INTO {MESSAGES} (session_id, message_data) VALUES (?, ?)",
                    [(session, item) for item in items],
                )
            connection.execute(f"UPDATE {SESSIONS} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?", (session,))
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise


def item_texts(items: Sequence[Any]) -> list[str]:
    """Each item as the SDK stores it (compact JSON text)."""
    return [orjson.dumps(item).decode("utf-8") for item in items]
