"""Compacting one session of an Agents SDK ``SQLiteSession`` database (see
:mod:`ctxmgr.files._sessions_db`).

The session's items are compacted as an ``openai-responses`` document (a list of input
items), then written as the SDK's items: JSON lines wherever a file would go (standard
output, ``-o``), or, for ``-i``, as the session's new rows in one transaction. An item the
manager kept is written back as the very text its row held. ``--backup`` keeps the
session's rows as they were, and the hash of what was written, in the database's sidecar
(:func:`write_sidecar`; ``ctxmgr restore`` puts them back, see :func:`restore_session`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ctxmgr import _io as io
from ctxmgr.errors import InputError, UsageError
from ctxmgr.files import _sessions_db as db
from ctxmgr.files._backup import (
    VERSION,
    BackupSink,
    Restored,
    open_sidecar,
    sidecar_path,
    sidecar_values,
)
from ctxmgr.files._compaction import compact_document
from ctxmgr.files._reading import is_sqlite_file
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings
from ctxmgr.files._sinks import CaptureSink, FileSink, Sink
from ctxmgr.formats._base import Conversation
from ctxmgr.state._managers import BaseContextManager

__all__ = ["SIDECAR_KIND", "SessionSink", "compact_session", "restore_session"]

SIDECAR_KIND = "agents-sdk-sqlite"
"""The ``kind`` of a database's sidecar (its first line)."""
_FORMAT = "openai-responses"


class SessionSink:
    """Takes the compacted session (a JSON list of items) and writes it as the SDK's items.

    ``inner`` gets JSON lines, one item each; with ``rewrite`` (an in-place run) the
    session's rows are replaced instead, and ``backup`` writes the sidecar first.
    """

    def __init__(
        self, inner: Sink, path: str, session: str, rows: list[db.Row], *, rewrite: bool, backup: bool
    ) -> None:
        self.inner = inner
        self.name: str | None = path if rewrite else inner.name
        self._path = path
        self._session = session
        self._rows = rows
        self._rewrite = rewrite
        self._backup = backup
        self._parts: list[bytes] = []
        self.backup_path: Path | None = None
        self.converted = False

    def write(self, data: bytes) -> None:
        self._parts.append(data)

    def _texts(self) -> list[str]:
        items = orjson.loads(b"".join(self._parts))
        if not isinstance(items, list):
            items = [items]
        # A kept item is written as its row's own text (the SDK's spelling of its JSON).
        own = {orjson.dumps(orjson.loads(row.data)): row.data for row in self._rows}
        # A new or edited item is spelled as the SDK spells one (json.dumps' defaults).
        return [own.get(orjson.dumps(item)) or json.dumps(item) for item in items]

    def commit(self) -> None:
        if self.converted:  # --to another format: its own document, as for any input
            self.inner.write(b"".join(self._parts))
            self.inner.commit()
            return
        texts = self._texts()
        if not self._rewrite:
            self.inner.write(b"".join(text.encode("utf-8") + b"\n" for text in texts))
            self.inner.commit()
            return
        self.inner.abort()  # the file sink a plain file would have had: never opened
        digest = db.rows_digest([row.data for row in self._rows])
        if self._backup:
            self.backup_path = write_sidecar(self._path, self._session, self._rows, texts)
        db.rewrite_session(self._path, self._session, texts, expect=digest)

    def abort(self) -> None:
        self.inner.abort()


def write_sidecar(path: str, session: str, rows: list[db.Row], written: list[str]) -> Path:
    """Write the database's sidecar (the user's alone, as every sidecar): a header naming
    the session, the session's rows as they were, and a closing record with the hash of
    those rows and of the items written in their place (restore refuses a session
    changed since, or rows that are not the ones recorded)."""
    sidecar = sidecar_path(path)
    rows = _earlier(sidecar, session, rows) or rows
    head = {"ctxmgr_backup": VERSION, "kind": SIDECAR_KIND, "file": Path(path).name, "session": session}
    end = {
        "end": True,
        "original_sha256": db.rows_digest([row.data for row in rows]),
        "written_sha256": db.rows_digest(written),
        "rows": len(rows),
    }
    lines = [orjson.dumps(head)]
    lines += [orjson.dumps({"id": row.id, "data": row.data, "created_at": row.created_at}) for row in rows]
    lines.append(orjson.dumps(end))
    writer = io.AtomicWriter(sidecar, mode=0o600)
    try:
        writer.write(b"".join(line + b"\n" for line in lines))
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    return sidecar


def _earlier(sidecar: Path, session: str, rows: list[db.Row]) -> list[db.Row] | None:
    """The rows an earlier sidecar kept, when it describes this session as it is now (a
    second rewrite: restore then goes back to the session before the first)."""
    if not os.path.lexists(sidecar):
        return None
    try:
        head, kept, end = _sidecar(sidecar)
    except InputError:
        return None  # replaced: it cannot be trusted or read
    now = db.rows_digest([row.data for row in rows])
    return kept if head.get("session") == session and end.get("written_sha256") == now else None


def _sidecar(sidecar: Path) -> tuple[dict[str, Any], list[db.Row], dict[str, Any]]:
    with open_sidecar(sidecar) as handle:
        values = list(sidecar_values(handle, sidecar))
    if len(values) < 2 or values[0].get("kind") != SIDECAR_KIND or values[-1].get("end") is not True:
        raise InputError("malformed (not a ctxmgr backup of a session database); nothing restored", source=str(sidecar))
    head, end = values[0], values[-1]
    if not isinstance(head.get("session"), str) or not isinstance(end.get("written_sha256"), str):
        raise InputError("malformed (no session or hash); nothing restored", source=str(sidecar))
    rows = []
    for record in values[1:-1]:
        if not isinstance(record.get("id"), int) or not isinstance(record.get("data"), str):
            raise InputError("malformed (a row without its id or item); nothing restored", source=str(sidecar))
        rows.append(db.Row(record["id"], record["data"], record.get("created_at")))
    if db.rows_digest([row.data for row in rows]) != end.get("original_sha256"):
        raise InputError("tampered: its rows are not the ones it recorded; nothing restored", source=str(sidecar))
    return head, rows, end


def restore_session(path: str) -> Restored:
    """Put back the rows the sidecar of the database at ``path`` kept, in one
    transaction, if the session still holds what was written; then remove the sidecar."""
    sidecar = sidecar_path(path)
    head, rows, end = _sidecar(sidecar)
    db.rewrite_session(path, head["session"], [], expect=end["written_sha256"], rows=rows)
    sidecar.unlink(missing_ok=True)
    return Restored(path, str(sidecar), SIDECAR_KIND, len(rows), os.path.getsize(path), end["original_sha256"])


async def compact_session(
    path: str, manager: BaseContextManager[Any], sink: Sink, settings: Settings, result: FileResult
) -> None:
    """Compact the session ``settings.session`` (or the only one) of the database at
    ``path`` into ``sink`` (a file sink of ``path`` itself: rewrite it in place)."""
    session = db.pick_session(path, settings.session)
    rows = db.read_rows(path, session)
    items = db.items_of(rows, path)
    if isinstance(sink, CaptureSink):
        raise UsageError("--diff compares text files; for a session database, write the session with -o and compare")
    rewrite = isinstance(sink, FileSink | BackupSink) and sink.name == path
    if isinstance(sink, BackupSink) and not rewrite:
        raise UsageError("--backup of a session database goes with -i (its rows are kept beside it)")
    inner = sink.inner if isinstance(sink, BackupSink) else sink
    wrapped = SessionSink(inner, path, session, rows, rewrite=rewrite, backup=isinstance(sink, BackupSink))
    if settings.fmt not in (None, _FORMAT):
        raise InputError(
            f"a session database holds {_FORMAT} items (--from {settings.fmt} does not apply)", source=path
        )
    if settings.to is not None and rewrite:
        raise UsageError("a session database is rewritten as its own items (drop --to, or write with -o)")
    wrapped.converted = settings.to is not None
    local = Settings(**{**settings.__dict__, "fmt": _FORMAT})
    await compact_document(orjson.dumps(items), path, manager, wrapped, local, result)


def is_db(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` names a file that starts as a SQLite database."""
    return is_sqlite_file(path)


def session_conversations(path: str) -> Iterator[tuple[db.SessionInfo, Conversation]]:
    """Each session of the database at ``path`` with its items read as a conversation
    (``stats``: one line per session)."""
    from ctxmgr import formats

    for info in db.list_sessions(path):
        items = db.items_of(db.read_rows(path, info.session_id), path)
        yield info, formats.load_value(items, source=f"{path}#{info.session_id}", layout="document", fmt=_FORMAT)
