"""``ctxmgr restore``: a file, or a session of an Agents SDK session database, back as
it was before ctxmgr rewrote it, from its sidecar."""

from __future__ import annotations

import os

from ctxmgr.files import _backup, _session_compaction
from ctxmgr.files._backup import Restored

__all__ = ["restore"]


def restore(path: str | os.PathLike[str]) -> Restored:
    """Put ``path`` back as it was (see :func:`ctxmgr.files._backup.restore`); for a
    session database, the session its sidecar names gets its rows back, in one
    transaction (see :func:`ctxmgr.files._session_compaction.restore_session`)."""
    if _session_compaction.is_db(path):
        return _session_compaction.restore_session(str(path))
    return _backup.restore(path)
