"""Where output bytes go: a :class:`Sink` commits atomically or not at all.

:class:`FileSink` writes a file atomically (see :class:`ctxmgr._io.AtomicWriter`),
:class:`StdoutSink` holds standard output back until commit, :class:`NullSink` discards,
:class:`CaptureSink` keeps the bytes in memory. With ``on_error="fail"`` a bad dataset
line aborts the sink, so nothing is written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import IO, Protocol

from ctxmgr import _io as io
from ctxmgr._terminal import write_for
from ctxmgr.errors import OutputError

__all__ = ["CaptureSink", "FileSink", "NullSink", "Sink", "StdoutSink", "is_in_place"]


class Sink(Protocol):
    """Where output bytes go; nothing is visible until :meth:`commit`."""

    name: str | None

    def write(self, data: bytes) -> None: ...
    def commit(self) -> None: ...
    def abort(self) -> None: ...


class NullSink:
    """Discards everything (``--check``, ``--json`` reports, ``validate``)."""

    name: str | None = None

    def write(self, data: bytes) -> None:
        pass

    def commit(self) -> None:
        pass

    def abort(self) -> None:
        pass


class StdoutSink:
    """Standard output, held back (in memory, then on disk past 16 MB) until commit.

    Holding back is what lets a failing dataset write nothing at all, while memory stays
    bounded.
    """

    name: str | None = "-"

    def __init__(self, stream: IO[bytes] | None = None) -> None:
        self._stream = stream
        self._buffer: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115

    def write(self, data: bytes) -> None:
        self._buffer.write(data)

    def commit(self) -> None:
        stream = self._stream or sys.stdout.buffer
        self._buffer.seek(0)
        if stream.isatty():
            # A person reads this: the conversation must not drive their terminal.
            write_for(stream, self._buffer.read())
        else:
            shutil.copyfileobj(self._buffer, stream)
        stream.flush()
        self._buffer.close()

    def abort(self) -> None:
        self._buffer.close()


class FileSink:
    """A file written atomically; opened lazily so an input error creates nothing.

    A symbolic link (or anything but a regular file) at ``path`` is refused unless
    ``follow_symlinks`` (see :class:`ctxmgr._io.AtomicWriter`); :attr:`warnings` holds
    what the write could not keep (the owner, other hard links).
    """

    def __init__(self, path: str | Path, *, make_parents: bool = False, follow_symlinks: bool = False) -> None:
        self.name: str | None = str(path)
        self._path = Path(path)
        self._make_parents = make_parents
        self._follow_symlinks = follow_symlinks
        self._made: list[Path] = []  # folders this sink created, removed again on abort
        self._writer: io.AtomicWriter | None = None
        self._expect: os.stat_result | None = None

    @property
    def warnings(self) -> list[str]:
        """What the committed write could not keep as it was, one line each."""
        return [] if self._writer is None else self._writer.warnings

    def guard(self, read_stat: os.stat_result) -> None:
        """Refuse to commit if the file changed after it was read (in-place rewrites)."""
        self._expect = read_stat

    def _open(self) -> io.AtomicWriter:
        if self._writer is None:
            if self._make_parents:
                self._made = [p for p in reversed(self._path.parents) if not p.exists()]
                try:
                    self._path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise OutputError(f"{self._path.parent}: cannot create: {exc.strerror or exc}") from None
            self._writer = io.AtomicWriter(self._path, expect=self._expect, follow_symlinks=self._follow_symlinks)
        return self._writer

    def write(self, data: bytes) -> None:
        self._open().write(data)

    def commit(self) -> None:
        self._open().commit()

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.abort()
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):  # not empty: another file went there
                folder.rmdir()
        self._made = []
        # A file left as it was (nothing to change, or an error) still gets the
        # temporaries of earlier killed runs removed, as a rewritten one does on commit.
        io.remove_stale_temporaries(self._path)


class CaptureSink:
    """Keeps what would be written in memory: :attr:`data` once committed (``--diff``,
    which writes nothing)."""

    name: str | None = None

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self.data: bytes | None = None

    def write(self, data: bytes) -> None:
        self._parts.append(data)

    def commit(self) -> None:
        self.data = b"".join(self._parts)

    def abort(self) -> None:
        self._parts = []


def is_in_place(sink: Sink, name: str) -> bool:
    """Whether ``sink`` writes back to the file ``name`` it was read from (``-i``)."""
    return sink.name is not None and sink.name == name
