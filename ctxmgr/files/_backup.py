"""A way back: the sidecar that keeps what a rewrite removed, and :func:`restore`.

:class:`BackupSink` wraps the :class:`~ctxmgr.files.FileSink` of a written file. As the
output goes through it, it pairs each output line with the same line of the input (read
again from disk, a chunk at a time) and writes the input lines that differ to the sidecar
``NAME.ctxmgr-removed.jsonl`` beside the written file, with their line numbers; unchanged
lines are not stored. A document (one conversation in a file) is kept as one record: its
original bytes. The sidecar is committed (atomically, mode 0600) before the written file,
so a rewrite is never visible without its way back. A sidecar already there that describes
the input as it is now (a second rewrite in place) is carried on: its kept lines stay the
first originals, so :func:`restore` goes back to the file as it was before the first rewrite.

The sidecar holds JSON lines: a header ``{"ctxmgr_backup": 1, "kind": ..., "file": ...}``,
one ``{"line": N, "original": TEXT}`` per changed dataset line (``{"original": TEXT}`` for a
document; ``original_base64`` for bytes that are not UTF-8), and a closing record with the
SHA-256 and size of the original and of the written file.

:func:`restore` treats the sidecar as untrusted input (a link, not a regular file, not the
user's alone, malformed: refused) and rewrites the file only when the written file is
exactly the one the sidecar describes and the rebuilt bytes hash to the recorded original.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ctxmgr import _io as io
from ctxmgr.errors import InputError, OutputError
from ctxmgr.files._sinks import FileSink

__all__ = [
    "SIDECAR_SUFFIX",
    "BackupSink",
    "Restored",
    "is_sidecar",
    "open_sidecar",
    "restore",
    "sidecar_path",
    "sidecar_values",
]

SIDECAR_SUFFIX = ".ctxmgr-removed.jsonl"
"""What a sidecar's name adds to the name of the file it belongs to."""
VERSION = 1
_CHUNK = 1 << 20
# O_NOFOLLOW: a sidecar that is a link is refused by the kernel; O_NONBLOCK: a FIFO
# planted under its name must not hang the open.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """The sidecar of the written file ``path``: ``NAME.ctxmgr-removed.jsonl`` beside it."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def is_sidecar(name: str) -> bool:
    """Whether a file of this name is a sidecar (a walk leaves it out)."""
    return name.endswith(SIDECAR_SUFFIX)


def _text(data: bytes) -> dict[str, str]:
    try:
        return {"original": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"original_base64": base64.b64encode(data).decode("ascii")}


def _lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The lines of ``chunks``, each with its line feed (the last one may have none)."""
    partial: list[bytes] = []
    for chunk in chunks:
        start = 0
        newline = chunk.find(b"\n")
        while newline != -1:
            partial.append(chunk[start : newline + 1])
            yield b"".join(partial)
            partial.clear()
            start = newline + 1
            newline = chunk.find(b"\n", start)
        if start < len(chunk):
            partial.append(chunk[start:])
    if partial:
        yield b"".join(partial)


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    return iter(lambda: handle.read(_CHUNK), b"")


class BackupSink:
    """A :class:`~ctxmgr.files.FileSink` whose commit first writes the sidecar.

    Args:
        inner: The sink of the written file.
        source: The input file the output is made from (the written file itself for an
            in-place rewrite, still as it was until the commit).
    """

    def __init__(self, inner: FileSink, source: str) -> None:
        assert inner.name is not None
        self.inner = inner
        self.name: str | None = inner.name
        self.path = sidecar_path(inner.name)
        self.changed_lines = 0
        """Dataset lines the sidecar keeps (a document: 0)."""
        self._source = source
        self._kind = "document"
        self._writer: io.AtomicWriter | None = None
        self._input: BinaryIO | None = None
        self._original_lines: Iterator[bytes] | None = None
        self._original = hashlib.sha256()
        self._original_size = 0
        self._written = hashlib.sha256()
        self._written_size = 0
        self._pending = b""  # the start of an output line not yet ended
        self._number = 0
        # An earlier sidecar of the input as it is now: its records carry on into this one.
        self._earlier: Iterator[dict[str, Any]] | None = None
        self._earlier_next: dict[str, Any] | None = None
        self._earlier_end: dict[str, Any] | None = None
        self._earlier_handle: BinaryIO | None = None
        self._notes: list[str] = []
        self._committed = False

    @property
    def warnings(self) -> list[str]:
        """What the written file could not keep, and an earlier backup replaced."""
        return (self._notes if self._committed else []) + self.inner.warnings

    def guard(self, read_stat: os.stat_result) -> None:
        self.inner.guard(read_stat)

    def dataset(self) -> None:
        """The output is a dataset: its lines pair with the input's, one to one."""
        self._kind = "dataset"

    def _open(self) -> io.AtomicWriter:
        if self._writer is None:
            # The output's folder may not exist yet (-o DIR/): the output sink makes it.
            self.inner.write(b"")
            # The user's alone, whatever an earlier sidecar's mode was.
            self._writer = io.AtomicWriter(self.path, mode=0o600)
            header = {"ctxmgr_backup": VERSION, "kind": self._kind, "file": Path(self.inner.name or "").name}
            self._writer.write(orjson.dumps(header) + b"\n")
            try:
                self._input = open(self._source, "rb")  # noqa: SIM115 (closed on commit or abort)
            except OSError as exc:
                why = exc.strerror or exc
                raise OutputError(f"{self._source}: cannot read it again for the backup: {why}") from None
            self._original_lines = _lines(_chunks(self._input))
            self._take_earlier()
        return self._writer

    def _take_earlier(self) -> None:
        """Carry on from the sidecar already beside the output when it describes the input
        as it is now (a second rewrite in place): ``restore`` then goes back to the file as
        it was before the first. Any other sidecar there is replaced, and said so."""
        if not os.path.lexists(self.path):
            return
        handle: BinaryIO | None = None
        try:
            handle = open_sidecar(self.path)
            header, end, count = _ends(handle, self.path)
            with open(self._source, "rb") as source:
                now = _hash_file(source)
        except (InputError, OSError) as error:
            if handle is not None:
                handle.close()
            why = error.message.removesuffix("; nothing restored") if isinstance(error, InputError) else str(error)
            self._notes.append(f"the earlier backup {self.path.name} was replaced (it {why})")
            return
        if header["kind"] != self._kind or (end["written_sha256"], end["written_size"]) != now:
            handle.close()
            if self._source == self.name:  # -o: the earlier output and its sidecar both go
                self._notes.append(f"the earlier backup {self.path.name} was of another version of the file; replaced")
            return
        self._earlier_handle = handle
        self._earlier_end = end
        self._earlier = _kept(handle, self.path, count)
        self._earlier_next = next(self._earlier, None)

    def _earlier_original(self) -> bytes | None:
        """The first original of line :attr:`_number` the earlier sidecar kept, if it did."""
        record = self._earlier_next
        if record is None or self._earlier is None:
            return None
        at = record.get("line") if self._kind == "dataset" else self._number
        if not isinstance(at, int) or isinstance(at, bool) or at < self._number:
            raise self._malformed()
        if at != self._number:
            return None
        try:
            original = _original(record, self.path)
        except InputError:
            raise OutputError(
                f"{self.path}: the earlier backup is malformed; move it away to rewrite this file"
            ) from None
        self._earlier_next = next(self._earlier, None)
        return original

    def write(self, data: bytes) -> None:
        writer = self._open()
        self.inner.write(data)
        self._written.update(data)
        self._written_size += len(data)
        if self._kind != "dataset" or not data:
            return
        data = self._pending + data
        start = 0
        newline = data.find(b"\n")
        while newline != -1:
            self._pair(writer, data[start : newline + 1])
            start = newline + 1
            newline = data.find(b"\n", start)
        self._pending = data[start:]

    def _pair(self, writer: io.AtomicWriter, written: bytes) -> None:
        """Keep input line ``N`` if output line ``N`` differs from it."""
        assert self._original_lines is not None
        self._number += 1
        original = next(self._original_lines, None)
        if original is None:
            raise OutputError(f"{self.name}: more lines written than read; no backup can be made, nothing written")
        first = self._earlier_original()
        if first is None:
            first = original
        self._original.update(first)
        self._original_size += len(first)
        if first != written:
            self.changed_lines += 1
            writer.write(orjson.dumps({"line": self._number, **_text(first)}) + b"\n")

    def commit(self) -> None:
        writer = self._open()
        assert self._original_lines is not None
        if self._kind == "dataset":
            if self._pending:
                raise OutputError(f"{self.name}: the output does not end a line; no backup can be made")
            if next(self._original_lines, None) is not None:
                raise OutputError(f"{self.name}: fewer lines written than read; no backup can be made, nothing written")
        else:
            self._number = 0  # the earlier record of a document is its only one
            original = self._earlier_original()
            if original is None:
                original = b"".join(self._original_lines)
            self._original.update(original)
            self._original_size = len(original)
            writer.write(orjson.dumps(_text(original)) + b"\n")
        if self._earlier is not None:
            self._check_earlier()
        end = {
            "end": True,
            "lines": self._number,
            "changed_lines": self.changed_lines,
            "original_sha256": self._original.hexdigest(),
            "original_size": self._original_size,
            "written_sha256": self._written.hexdigest(),
            "written_size": self._written_size,
        }
        writer.write(orjson.dumps(end) + b"\n")
        self._close_input()
        # The earlier sidecar, kept under a second name until the file is written: if the
        # write fails, it is put back (a sidecar of a rewrite that did not happen would
        # only be refused later).
        earlier = self.path.with_name(f".{self.path.name}.{os.getpid()}.earlier")
        kept: Path | None = earlier
        try:
            earlier.unlink(missing_ok=True)
            os.link(self.path, earlier)
        except FileNotFoundError:
            kept = None
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot keep the earlier backup: {exc.strerror or exc}") from None
        writer.commit()
        try:
            self.inner.commit()
        except BaseException:
            if kept is not None:
                os.replace(kept, self.path)
            else:
                self.path.unlink(missing_ok=True)
            raise
        if kept is not None:
            kept.unlink(missing_ok=True)
        self._committed = True

    def _check_earlier(self) -> None:
        """The earlier sidecar is used up, and what it and this file rebuild is the original
        it recorded."""
        assert self._earlier_end is not None
        if self._earlier_next is not None:
            raise self._malformed()
        recorded = (self._earlier_end["original_sha256"], self._earlier_end["original_size"])
        if (self._original.hexdigest(), self._original_size) != recorded:
            raise self._malformed()

    def _malformed(self) -> OutputError:
        return OutputError(f"{self.path}: the earlier backup is malformed; move it away to rewrite this file")

    def abort(self) -> None:
        self._close_input()
        if self._writer is not None:
            self._writer.abort()
        self.inner.abort()

    def _close_input(self) -> None:
        for handle in (self._input, self._earlier_handle):
            if handle is not None:
                handle.close()
        self._input = self._earlier_handle = None


@dataclass(frozen=True)
class Restored:
    """What :func:`restore` did.

    Attributes:
        path: The file rewritten as it was.
        sidecar: The sidecar it was restored from (removed once the file is restored).
        kind: ``"dataset"`` or ``"document"``.
        lines_restored: Dataset lines put back (a document: 0).
        size: The restored file's size in bytes.
        sha256: Its SHA-256 (the one the sidecar recorded for the original).
    """

    path: str
    sidecar: str
    kind: str
    lines_restored: int
    size: int
    sha256: str

    def as_json(self) -> dict[str, Any]:
        """The file's entry of ``restore --json``."""
        return {
            "path": self.path,
            "backup": self.sidecar,
            "kind": self.kind,
            "lines_restored": self.lines_restored,
            "size": self.size,
            "sha256": self.sha256,
        }


def _refused(sidecar: Path, why: str) -> InputError:
    return InputError(f"{why}; nothing restored", source=str(sidecar))


def _distrust(st: os.stat_result) -> str | None:
    """Why a sidecar with this status must not be read, or ``None``."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return f"is a {io.file_kind(st.st_mode)}, not a regular file"
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by you"
    if st.st_mode & 0o077:
        return f"has mode {stat.S_IMODE(st.st_mode):04o}: others may read or change it (0600 expected)"
    return None


def open_sidecar(sidecar: Path) -> BinaryIO:
    """The sidecar, open for reading, if it may be trusted."""
    try:
        why = _distrust(os.lstat(sidecar))
    except FileNotFoundError:
        raise _refused(sidecar, "no backup here") from None
    except OSError as exc:
        raise _refused(sidecar, f"cannot read: {exc.strerror or exc}") from None
    if why is not None:
        raise _refused(sidecar, why)
    try:
        fd = os.open(sidecar, _READ_FLAGS)
    except OSError as exc:
        raise _refused(sidecar, f"cannot read: {exc.strerror or exc}") from None
    handle = os.fdopen(fd, "rb")
    # Checked again on what was opened: the name may have been swapped meanwhile.
    why = _distrust(os.fstat(handle.fileno()))
    if why is not None:
        handle.close()
        raise _refused(sidecar, why)
    return handle


def sidecar_values(handle: BinaryIO, sidecar: Path) -> Iterator[dict[str, Any]]:
    """The sidecar's records from the start, one line at a time."""
    handle.seek(0)
    for line in _lines(_chunks(handle)):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise _refused(sidecar, "malformed (not JSON lines)") from None
        if not isinstance(value, dict):
            raise _refused(sidecar, "malformed (not a ctxmgr backup)")
        yield value


def _ends(handle: BinaryIO, sidecar: Path) -> tuple[dict[str, Any], dict[str, Any], int]:
    """The header, the closing record and the count of records between them (one pass,
    holding one record at a time)."""
    header: dict[str, Any] | None = None
    last: dict[str, Any] | None = None
    count = 0
    for value in sidecar_values(handle, sidecar):
        if header is None:
            header = value
        else:
            last = value
            count += 1
    if header is None or last is None:
        raise _refused(sidecar, "malformed (not a ctxmgr backup)")
    if header.get("ctxmgr_backup") != VERSION or header.get("kind") not in ("dataset", "document"):
        raise _refused(sidecar, "malformed (not a ctxmgr backup of a version this ctxmgr reads)")
    wanted = ("original_sha256", "original_size", "written_sha256", "written_size")
    if last.get("end") is not True or not all(key in last for key in wanted):
        raise _refused(sidecar, "malformed (its closing record is missing)")
    return header, last, count - 1


def _original(record: dict[str, Any], sidecar: Path) -> bytes:
    if isinstance(record.get("original"), str):
        return str(record["original"]).encode("utf-8")
    if isinstance(record.get("original_base64"), str):
        try:
            return base64.b64decode(record["original_base64"], validate=True)
        except ValueError:
            pass
    raise _refused(sidecar, "malformed (a record without its original bytes)")


def _hash_file(handle: BinaryIO) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    for chunk in _chunks(handle):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def _kept(handle: BinaryIO, sidecar: Path, count: int) -> Iterator[dict[str, Any]]:
    """The ``count`` records between the header and the closing record."""
    values = sidecar_values(handle, sidecar)
    next(values)
    for _ in range(count):
        yield next(values)


def _rebuilt(written: BinaryIO, kind: str, records: Iterator[dict[str, Any]], sidecar: Path) -> Iterator[bytes]:
    """The original bytes, from the written file open as ``written`` and the kept records."""
    if kind == "document":
        record = next(records, None)
        if record is None or next(records, None) is not None:
            raise _refused(sidecar, "malformed (a document's backup holds one record)")
        yield _original(record, sidecar)
        return
    number = 0
    following = next(records, None)
    for number, line in enumerate(_lines(_chunks(written)), start=1):
        at = None if following is None else following.get("line")
        if following is not None and (not isinstance(at, int) or isinstance(at, bool) or at < number):
            raise _refused(sidecar, "malformed (its line numbers are not in increasing order)")
        if at == number:
            assert following is not None
            yield _original(following, sidecar)
            following = next(records, None)
        else:
            yield line
    if following is not None:
        raise _refused(sidecar, f"malformed (records past the file's {number} lines)")


def restore(path: str | os.PathLike[str]) -> Restored:
    """Rewrite ``path`` exactly as it was before ctxmgr wrote it, from its sidecar.

    The rewrite is atomic and happens only if every check passes; the sidecar is then
    removed (the file holds everything it kept, and a sidecar whose written file is gone
    could only be refused).

    Raises:
        InputError: The sidecar is missing, a link, not a regular file, not the user's
            alone (owned by another user, or readable or writable by others), malformed;
            ``path`` changed since ctxmgr wrote it (its hash is not the one recorded); or
            the rebuilt bytes are not the original ones (a tampered sidecar).
        OutputError: ``path`` cannot be rewritten.
    """
    target = Path(path)
    sidecar = sidecar_path(target)
    with open_sidecar(sidecar) as kept:
        header, end, count = _ends(kept, sidecar)
        try:
            handle = open(io.check_write_target(target), "rb")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}; nothing restored", source=str(target)) from None
        with handle:
            before = os.fstat(handle.fileno())
            if _hash_file(handle) != (end["written_sha256"], end["written_size"]):
                raise InputError(
                    f"changed since ctxmgr wrote it (its SHA-256 is not the one {sidecar.name} recorded); "
                    "nothing restored",
                    source=str(target),
                )
            handle.seek(0)
            digest = hashlib.sha256()
            size = 0
            with io.AtomicWriter(target, expect=before) as writer:
                try:
                    for piece in _rebuilt(handle, header["kind"], _kept(kept, sidecar, count), sidecar):
                        digest.update(piece)
                        size += len(piece)
                        writer.write(piece)
                    if (digest.hexdigest(), size) != (end["original_sha256"], end["original_size"]):
                        raise _refused(sidecar, "tampered: the rebuilt file is not the original it recorded")
                except BaseException:
                    writer.abort()
                    raise
    sidecar.unlink(missing_ok=True)
    lines = count if header["kind"] == "dataset" else 0
    return Restored(str(target), str(sidecar), header["kind"], lines, size, digest.hexdigest())
