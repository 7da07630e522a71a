"""Bytes in and out: files, standard streams, JSON/JSONL parsing, atomic writes.

Nothing here knows about conversation formats; it turns bytes into parsed JSON values
(with precise error positions) and back, and writes files so that an interrupted run
leaves either the old file or the complete new one.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal

import orjson

from ctxmgr import _nesting
from ctxmgr.errors import InputError, OutputError

__all__ = [
    "STDIN_NAME",
    "JsonlRecords",
    "Layout",
    "TEMP_SUFFIX",
    "AtomicWriter",
    "atomic_write",
    "check_write_target",
    "file_kind",
    "remove_stale_temporaries",
    "sweep_each_folder_once",
    "dumps",
    "is_null_device",
    "is_stdio",
    "open_input",
    "loads",
    "parse",
]

STDIN_NAME = "<stdin>"

Layout = Literal["document", "jsonl"]
"""``document``: one JSON value; ``jsonl``: one record per line."""


class JsonlRecords(list[Any]):
    """The records of a JSONL file, remembering the line each came from."""

    def __init__(self, records: list[Any], line_numbers: list[int]) -> None:
        super().__init__(records)
        self.line_numbers = line_numbers


_BOM = b"\xef\xbb\xbf"

TEMP_SUFFIX = ".ctxmgr-tmp"
"""Suffix of the temporary files atomic writes use (left behind only by a SIGKILL)."""


def is_stdio(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` means standard input/output (``None`` or ``-``)."""
    return path is None or str(path) == "-"


def is_null_device(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is the null device (``/dev/null``, or a name for the same device),
    where scripts send output they discard: nothing is replaced there, nothing written."""
    if path is None or is_stdio(path):
        return False
    try:
        info, null = os.stat(path), os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == null.st_rdev


def open_input(path: str | os.PathLike[str] | None) -> tuple[BinaryIO, str]:
    """Open an input for reading; returns ``(binary handle, display name)``.

    ``-``/``None`` is standard input (the caller must not close it). A missing file, a
    folder or a permission problem is an :class:`InputError` naming the path.
    """
    if path is None or is_stdio(path):
        return sys.stdin.buffer, STDIN_NAME
    name = str(path)
    try:
        return open(name, "rb"), name  # closed by the caller
    except FileNotFoundError:
        raise InputError("no such file", source=name) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", source=name) from None
    except PermissionError:
        raise InputError("permission denied", source=name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=name) from None


def _position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, column


def _decode_error(exc: orjson.JSONDecodeError, data: bytes, source: str, line_offset: int = 0) -> InputError:
    # orjson reports positions in characters of the decoded text; map to line/column.
    line, column = exc.lineno, exc.colno
    reason = exc.msg
    if not data.strip():
        reason = "empty document"
    return InputError(f"invalid JSON: {reason}", source=source, line=line + line_offset, column=column)


# The checks below look at the content's bounds instead of stripping: a strip copies the
# whole input (0.2 s on a 500 MB document). Blank is what bytes.strip() removes.
_NOT_BLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")
_TAIL = 4096


def _content_bounds(data: bytes) -> tuple[int, int]:
    """``(start, end)`` of ``data`` without its leading and trailing whitespace (both
    ``len(data)`` when it is all whitespace). Linear in the whitespace, copying at most
    about twice the trailing whitespace."""
    found = _NOT_BLANK.search(data)
    if found is None:
        return len(data), len(data)
    start, end, step = found.start(), len(data), _TAIL
    while True:  # the tail, in growing pieces, until one holds content (data[start] does)
        low = max(start, end - step)
        kept = len(data[low:end].rstrip())
        if kept:
            return start, low + kept
        end, step = low, step * 2


def _check_text(data: bytes, source: str) -> None:
    if not data or data.isspace():
        raise InputError("empty file, expected a JSON conversation", source=source)
    if data.startswith(_BOM):
        raise InputError(
            "starts with a UTF-8 byte-order mark; save the file as UTF-8 without BOM",
            source=source,
            line=1,
            column=1,
        )
    nul = data.find(b"\x00", 0, 8192)
    if nul != -1:
        line, column = _position(data, nul)
        raise InputError("binary data (NUL byte), expected JSON text", source=source, line=line, column=column)
    if data.isascii():
        return  # valid UTF-8 as it is; decoding would copy it all into a str
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data, exc.start)
        raise InputError("not valid UTF-8 text", source=source, line=line, column=column) from None


# -- numbers a read and a write back would change ------------------------------------
#
# Refused rather than rounded (nothing may be lost): an integer beyond 64 bits (orjson
# would read it as a float and drop digits), and a float whose written value the nearest
# 64-bit double does not keep (1e-400 reads as 0.0, 0.1000000000000000000001 as 0.1).
# Forms that keep the value (1E2, 1.0, -0.0, 100.000) are fine. Checking every number
# would cost a second parse: a translated copy of the bytes finds the few places such a
# number can be with plain substring searches (about 20x faster than a regex on a 100 MB
# line), the literals there are checked one by one, and only when one fails does the
# standard library parse the text, to tell a number from digits inside a string.

_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1

# Digits and "." become "0", "-" stays, "e" and "E" become "e", everything else a space.
_NUMBER_SHAPES = bytes(
    0x30 if 0x30 <= c <= 0x39 or c == 0x2E else c if c == 0x2D else 0x65 if c in (0x45, 0x65) else 0x20
    for c in range(256)
)
# 16 digits (a "." included) are more than a double always keeps (15); an integer beyond
# 64 bits has 19 or more, so the same search finds both.
_MANY_DIGITS = b"0" * 16
# An exponent of "-" and three digits: where a float can underflow (a positive one
# overflows, which orjson refuses; a mantissa with 300 leading zeros is a long run). With
# the "e" in the pattern, dates, phone numbers and ids ("555-1234") are not candidates.
_NEGATIVE_EXPONENT = b"e-000"
_RUN = re.compile(rb"0+")
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_NUMBER_CHARS = frozenset(b"0123456789.")
_SCAN_CHUNK = 1 << 20


class _NumberChanged(Exception):
    def __init__(self, literal: str, message: str) -> None:
        self.literal = literal
        self.message = message


def _integer_message(literal: str) -> str:
    shown = f"{literal[:24]}{'...' if len(literal) > 24 else ''}"
    return f"integer {shown} is beyond 64 bits and cannot be kept exactly; store it as a string"


def _check_integer(text: str) -> int:
    # More than 20 digits is beyond 64 bits whatever they are (and int() refuses
    # thousands of digits).
    if len(text) > 21 or not _INT64_MIN <= (value := int(text)) <= _UINT64_MAX:
        raise _NumberChanged(text, _integer_message(text))
    return value


def _check_float(text: str) -> float:
    """``float(text)``, refusing a literal whose value the double does not keep."""
    value = float(text)
    written = repr(value)
    if written != text:
        from decimal import Decimal  # only for the rare literal not in shortest form

        exact = Decimal(text)
        # 17 significant digits is what C, numpy and R write to keep a double exactly
        # (0.69999999999999996 for 0.7): the same double, so the same value. Fewer or
        # equal digits of a normal number are therefore kept; more digits than a double
        # holds, or a value lost to underflow (1e-400, subnormals), would change.
        keeps_double = len(exact.normalize().as_tuple().digits) <= 17 and abs(value) >= sys.float_info.min
        if exact != Decimal(written) and not keeps_double:
            shown = f"{text[:24]}{'...' if len(text) > 24 else ''}"
            raise _NumberChanged(
                text,
                f"number {shown} would be read as {written} (a 64-bit float cannot hold it exactly); "
                "store it as a string",
            )
    return value


def _literal_at(data: bytes, index: int) -> bytes | None:
    """The number literal holding ``data[index]`` (a digit), if it is one."""
    start = index
    while start > 0 and data[start - 1] in _NUMBER_CHARS:
        start -= 1
    if start > 1 and data[start - 1] in b"+-" and data[start - 2] in b"eE":
        start -= 2  # ``index`` is in an exponent: go back to the mantissa
        while start > 0 and data[start - 1] in _NUMBER_CHARS:
            start -= 1
    if start > 0 and data[start - 1] == 0x2D:
        start -= 1
    match = _NUMBER.match(data, start)
    return match.group() if match is not None and match.end() > index else None


def _changes(literal: bytes | None) -> bool:
    """Whether this literal, read and written back, would not be the same number."""
    if literal is None:
        return False
    try:
        if b"." in literal or b"e" in literal or b"E" in literal:
            _check_float(literal.decode())
        else:
            _check_integer(literal.decode())
    except _NumberChanged:
        return True
    return False


def _may_hold_changed_number(data: bytes) -> bool:
    """Whether a literal somewhere in ``data`` (perhaps inside a string) would change.

    Scanned in chunks (bounded memory); only the places the translated copy points at
    are looked at.
    """
    overlap = len(_MANY_DIGITS) - 1
    for start in range(0, len(data), _SCAN_CHUNK):
        base = max(0, start - overlap)
        shapes = data[base : start + _SCAN_CHUNK].translate(_NUMBER_SHAPES)
        at = shapes.find(_MANY_DIGITS)
        while at != -1:
            if _changes(_literal_at(data, base + at)):
                return True
            run = _RUN.match(shapes, at)
            at = shapes.find(_MANY_DIGITS, run.end() if run is not None else at + 1)
        at = shapes.find(_NEGATIVE_EXPONENT)
        while at != -1:
            if _changes(_literal_at(data, base + at + 2)):  # at the exponent's first digit
                return True
            at = shapes.find(_NEGATIVE_EXPONENT, at + 1)
    return False


_STRING_OR_NUMBER = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?', re.DOTALL)


def _number_offset(data: bytes, literal: bytes) -> int:
    """Where ``literal`` first occurs as a number (not inside a string) in ``data``."""
    for match in _STRING_OR_NUMBER.finditer(data):
        if match.group() == literal:
            return match.start()
    return max(data.find(literal), 0)


def _reject_changed_numbers(data: bytes, source: str, line: int | None = None) -> None:
    """Refuse a number that reading and writing back would change (see above)."""
    if not _may_hold_changed_number(data):
        return
    try:
        # Only when a literal fails (rare): the stdlib parser calls parse_int and
        # parse_float for real numbers only, not for digits inside strings.
        with _nesting.deep_recursion():
            json.loads(data, parse_int=_check_integer, parse_float=_check_float)
    except _NumberChanged as exc:
        at_line, column = _position(data, _number_offset(data, exc.literal.encode()))
        raise InputError(
            exc.message,
            source=source,
            line=line if line is not None else at_line,
            column=column,  # a JSONL record is one line: the column is within it
        ) from None
    except (ValueError, RecursionError):
        return  # not valid JSON for the stdlib; orjson accepted it, and its numbers are checked


def loads(data: bytes, source: str, *, line: int | None = None) -> Any:
    """Parse one JSON value; errors name ``source`` (and ``line`` for a JSONL record).

    A number that reading and writing back would change (an integer beyond 64 bits, a
    float past a double's precision or range) is an :class:`InputError`, not rounded.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if line is not None:
            raise InputError(f"invalid JSON: {exc.msg}", source=source, line=line, column=exc.colno) from None
        raise _decode_error(exc, data, source) from None
    _reject_changed_numbers(data, source, line)
    return value


def parse(data: bytes, source: str, *, jsonl: bool | None = None) -> tuple[Any, Layout, bool]:
    """Parse ``data`` as one JSON document or as JSONL.

    Returns ``(value, layout, pretty)``: for JSONL, ``value`` is a :class:`JsonlRecords`;
    ``pretty`` tells whether a document was indented (so it is written back that way).
    ``jsonl=None`` decides from the content: several lines that are each a JSON value.
    """
    _check_text(data, source)
    start, end = _content_bounds(data)
    several_lines = data.find(b"\n", start, end) != -1
    if jsonl is None:
        # One line is JSONL too when the name says so: a message list trimmed to a single
        # message must read back as the list it is.
        jsonl = _looks_like_jsonl(data, start, end) or (source.endswith(".jsonl") and not several_lines)
    if jsonl:
        return _parse_jsonl(data, source), "jsonl", False
    value = loads(data, source)
    return value, "document", several_lines


def _looks_like_jsonl(data: bytes, start: int, end: int) -> bool:
    """Whether the first line of ``data[start:end]`` (its content) is a whole JSON object
    or list, and more lines follow."""
    first_end = data.find(b"\n", start, end)
    if first_end == -1:
        return False
    first = data[start:first_end].strip()
    if not first.startswith((b"{", b"[")):
        return False
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return True


def _parse_jsonl(data: bytes, source: str) -> JsonlRecords:
    records: list[Any] = []
    line_numbers: list[int] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        records.append(loads(line, source, line=number))
        line_numbers.append(number)
    return JsonlRecords(records, line_numbers)


def dumps(value: Any, layout: Layout, *, pretty: bool = False) -> bytes:
    """Serialize a document (indented if ``pretty``) or JSONL records, newline-terminated."""
    if layout == "jsonl":
        return b"".join(_dump_one(record, 0) + b"\n" for record in value)
    option = orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if pretty else 0)
    return _dump_one(value, option)


def _dump_one(value: Any, option: int) -> bytes:
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as exc:
        if "Recursion limit" not in str(exc):
            raise
    # orjson writes at most 254 levels of nesting but reads 1024: a file we could read
    # must not become a crash when written back. The standard library writes the same
    # layout (floats may be spelled differently, e.g. 1e+16 for 1e16: the same number).
    with _nesting.deep_recursion():
        if option & orjson.OPT_INDENT_2:
            text = json.dumps(value, ensure_ascii=False, indent=2)
        else:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    data = text.encode("utf-8")
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        # A conversion can wrap a value read at the limit in a few more levels (Gemini
        # nests arguments deeper than Anthropic): a file no reader takes back is refused.
        if str(exc).startswith("depth limit exceeded"):
            raise InputError(
                f"the output would be nested deeper than {_nesting.MAX_DEPTH} levels, "
                "more than ctxmgr reads back; not written"
            ) from None
    return data + (b"\n" if option & orjson.OPT_APPEND_NEWLINE else b"")


class _ChangedMeanwhile(Exception):
    pass


class _AttributesNotKept(Exception):
    pass


_NO_ATTRIBUTES = frozenset({errno.ENOTSUP, errno.EOPNOTSUPP})
_ACL_NAMES = {
    "system.posix_acl_access": "the POSIX ACL",
    "system.posix_acl_default": "the default POSIX ACL",
}


def _keep_attributes(original: Path, fd: int) -> None:
    """Give the new file (``fd``) exactly the extended attributes ``original`` has.

    Every attribute this process can list is copied (the POSIX ACL, ``user.*``,
    ``security.*``, ``trusted.*`` for root); one the new file got that the original
    lacks (an ACL inherited from the folder's default) is removed. All or nothing:
    :class:`_AttributesNotKept` names each one that could not be kept, because a file
    rewritten without its ACL silently gives its group the mask's permissions, and
    losing any other attribute unnoticed would break the rule that nothing is dropped
    in silence. A file system without extended attributes has none to keep.
    """
    if not hasattr(os, "listxattr"):
        return  # not Linux: the platform offers no portable way to copy them
    try:
        names = os.listxattr(original, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in _NO_ATTRIBUTES:
            return
        raise _AttributesNotKept(f"cannot read its extended attributes: {exc.strerror or exc}") from None
    try:
        present = set(os.listxattr(fd))
    except OSError as exc:
        if exc.errno not in _NO_ATTRIBUTES or names:
            raise _AttributesNotKept(f"cannot keep its extended attributes: {exc.strerror or exc}") from None
        return
    failed = [problem for name in names if (problem := _copy_attribute(original, fd, name, present)) is not None]
    for name in sorted(present.difference(names)):
        try:
            os.removexattr(fd, name)
        except OSError as exc:
            if exc.errno != errno.ENODATA:
                failed.append(f"{_describe_attribute(name)}, which the original lacks: {exc.strerror or exc}")
    if failed:
        plural = "s" if len(failed) > 1 else ""
        raise _AttributesNotKept(f"cannot keep its extended attribute{plural} {'; '.join(failed)}")


def _copy_attribute(original: Path, fd: int, name: str, present: set[str]) -> str | None:
    """Copy one attribute of ``original`` to ``fd``; what went wrong, if anything."""
    try:
        value = os.getxattr(original, name, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.ENODATA:
            return None  # removed since it was listed: nothing to keep
        return f"{_describe_attribute(name)}: {exc.strerror or exc}"
    if name in present:
        with contextlib.suppress(OSError):
            if os.getxattr(fd, name) == value:
                return None  # the same already (a security label the folder gives every file)
    try:
        os.setxattr(fd, name, value)
    except OSError as exc:
        return f"{_describe_attribute(name)}: {exc.strerror or exc}"
    return None


def _describe_attribute(name: str) -> str:
    """``system.posix_acl_access (the POSIX ACL)``: the name, and what it is when that
    is not plain from it."""
    what = _ACL_NAMES.get(name)
    return name if what is None else f"{name} ({what})"


def _changed_since(path: Path, expect: os.stat_result) -> bool:
    try:
        # lstat: a file swapped for a symbolic link meanwhile counts as changed.
        now = os.lstat(path)
    except FileNotFoundError:
        return True
    return (now.st_ino, now.st_size, now.st_mtime_ns) != (expect.st_ino, expect.st_size, expect.st_mtime_ns)


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words: ``"a FIFO (named pipe)"``, ``"a regular file"``."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def check_write_target(path: str | os.PathLike[str], *, follow_symlinks: bool = False) -> Path:
    """The file a write to ``path`` would replace, or :class:`OutputError` if it must not be replaced.

    A symbolic link is refused unless ``follow_symlinks`` (then its target is the file
    written, and the link stays): a link planted in a repository must not redirect a
    write outside it. Anything but a regular file (a FIFO, a device, a socket, a folder)
    is refused: renaming over it would replace it. (A run's ``-o /dev/null`` never gets
    here: it discards the output, see :func:`is_null_device`.)
    A path that does not exist yet is returned as it is.
    """
    name = os.fspath(path)
    try:
        info = os.lstat(name)
    except FileNotFoundError:
        return Path(name)
    except OSError as exc:
        raise OutputError(f"{name}: cannot write: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        if not follow_symlinks:
            try:
                pointee = os.readlink(name)
            except OSError:
                pointee = "?"
            raise OutputError(
                f"{name}: is a symbolic link (to {pointee}); not written through it "
                "(--follow-symlinks writes to its target)"
            )
        try:
            # Through the link itself: /dev/stdout's target has no name realpath can give.
            info = os.stat(name)
        except FileNotFoundError:
            return Path(os.path.realpath(name))  # a link to nothing yet: its target is created
        except OSError as exc:
            raise OutputError(f"{name}: cannot write: {exc.strerror or exc}") from None
        if stat.S_ISREG(info.st_mode):
            return Path(os.path.realpath(name))
    if not stat.S_ISREG(info.st_mode):
        hint = "" if stat.S_ISDIR(info.st_mode) else " (-o - writes to standard output)"
        raise OutputError(f"{name}: {file_kind(info.st_mode)}, not a regular file; not replaced{hint}")
    return Path(name)


class AtomicWriter:
    """A file written in pieces that appears at ``path`` only on :meth:`commit`.

    The bytes go to a temporary file in the same folder, are flushed to disk, and the
    temporary file is renamed over ``path``: readers see the old or the new file, never a
    truncated one, even if the process is killed halfway. An existing file's permission
    bits, owner, group and extended attributes (its POSIX ACL, ``user.*`` and the other
    attributes this process may see) are kept. An attribute that cannot be kept is an
    :class:`OutputError` naming it, and nothing is written: a file whose ACL denied its
    group must not come back readable by that group. When the owner cannot be kept (not
    permitted), or the file has other hard links (they keep the old content: the rename gives this
    name a new file), :attr:`warnings` says so. :meth:`abort` (or an exception inside
    ``with``) removes the temporary file and leaves ``path`` untouched.

    A symbolic link, or anything but a regular file, is refused (see
    :func:`check_write_target`); with ``follow_symlinks`` a link's target is rewritten
    and the link kept. A read-only file or folder is refused. With ``expect`` (the stat
    of ``path`` when it was read), the commit is refused if ``path`` changed since: an
    in-place rewrite never overwrites someone else's newer edit. With ``mode``, the file
    is written as a new one of the user's with those permission bits, whatever was there.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        expect: os.stat_result | None = None,
        follow_symlinks: bool = False,
        mode: int | None = None,
    ) -> None:
        self.path = check_write_target(path, follow_symlinks=follow_symlinks)
        self._new_mode = mode
        self.warnings: list[str] = []
        """What could not be kept as it was (the owner, other hard links), one line each."""
        self._expect = expect
        folder = self.path.parent if str(self.path.parent) else Path(".")
        try:
            self._old: os.stat_result | None = os.lstat(self.path)
        except FileNotFoundError:
            self._old = None
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
        self._mode = None if self._old is None else stat.S_IMODE(self._old.st_mode)
        # Checked on the mode bits, not with os.access: root may write anything, but a
        # file or folder marked read-only is a choice we honour even then.
        if self._mode is not None and not self._mode & 0o222:
            raise OutputError(f"{self.path}: the file is read-only; not rewritten")
        try:
            folder_mode = stat.S_IMODE(os.stat(folder).st_mode)
        except OSError:
            folder_mode = 0o700
        if not folder_mode & 0o222:
            raise OutputError(f"{self.path}: the folder {folder} is read-only")
        try:
            # The pid in the name lets a later run tell a leftover of a killed process
            # (removed on commit) from the file of a process still writing.
            fd, self._tmp_name = tempfile.mkstemp(
                prefix=f".{self.path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=folder
            )
        except FileNotFoundError:
            raise OutputError(f"{self.path}: folder does not exist") from None
        except PermissionError:
            raise OutputError(f"{self.path}: permission denied (folder is not writable)") from None
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
        self._handle = os.fdopen(fd, "wb")
        self._done = False

    def write(self, data: bytes) -> None:
        try:
            self._handle.write(data)
        except OSError as exc:
            self.abort()
            raise OutputError(f"{self.path}: cannot write: {exc.strerror or exc}") from None

    def commit(self) -> None:
        """Flush to disk and move the new file into place."""
        if self._done:
            return
        try:
            self._handle.flush()
            fd = self._handle.fileno()
            if self._new_mode is not None:
                os.fchmod(fd, self._new_mode)
            elif self._old is not None:
                self._keep_owner(fd, self._old)
                # After chown, which drops security.capability; before chmod, which then
                # writes the same bits the kept ACL already gives.
                _keep_attributes(self.path, fd)
                os.fchmod(fd, stat.S_IMODE(self._old.st_mode))  # after chown, which clears setuid
            else:
                # mkstemp creates 0600; give a new file the usual mode under the umask.
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(fd, 0o666 & ~umask)
            os.fsync(fd)
            self._handle.close()
            if self._expect is not None and _changed_since(self.path, self._expect):
                raise _ChangedMeanwhile
            os.replace(self._tmp_name, self.path)
        except _AttributesNotKept as exc:
            self.abort()
            raise OutputError(f"{self.path}: {exc}; not rewritten, so that its permissions do not change") from None
        except _ChangedMeanwhile:
            self.abort()
            raise OutputError(
                f"{self.path}: changed while ctxmgr was working on it; not overwritten (run again)"
            ) from None
        except OSError as exc:
            self.abort()
            raise OutputError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
        self._done = True
        if self._old is not None and self._old.st_nlink > 1:
            others = self._old.st_nlink - 1
            self.warnings.append(
                f"had {others} other hard link{'s' if others > 1 else ''}, which keep{'' if others > 1 else 's'} "
                "the old content (the rewrite replaced this name only)"
            )
        remove_stale_temporaries(self.path)

    def _keep_owner(self, fd: int, old: os.stat_result) -> None:
        """Give the new file the old one's owner and group, or say why not."""
        new = os.fstat(fd)
        if (new.st_uid, new.st_gid) == (old.st_uid, old.st_gid):
            return
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
            return
        except PermissionError:
            pass
        # Not root (or without CAP_CHOWN): the group may still be one of ours.
        with contextlib.suppress(PermissionError):
            os.fchown(fd, -1, old.st_gid)
        self.warnings.append(f"owner {old.st_uid}:{old.st_gid} not kept (not permitted); now owned by you")

    def abort(self) -> None:
        """Forget everything written; ``path`` stays as it was."""
        if self._done:
            return
        self._done = True
        with contextlib.suppress(OSError):
            self._handle.close()
        with contextlib.suppress(OSError):
            os.unlink(self._tmp_name)

    def __enter__(self) -> AtomicWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


_SWEPT: contextvars.ContextVar[dict[str, int] | None] = contextvars.ContextVar("ctxmgr_swept_folders", default=None)

# ".NAME.PID.XXXXXXXX.ctxmgr-tmp" for any NAME: the pid is the run of digits right
# before mkstemp's 8 random characters.
_ANY_TEMPORARY = re.compile(rf"\..+\.(\d+)\.[a-z0-9_]{{8}}{re.escape(TEMP_SUFFIX)}")


@contextlib.contextmanager
def sweep_each_folder_once() -> Iterator[dict[str, int]]:
    """Within this block, :func:`remove_stale_temporaries` lists each folder only once.

    The first call for a folder removes the leftovers of every killed write there,
    whatever file they were for; later calls for the same folder do nothing. Rewriting
    the 10,000 files of one folder then lists it once, not once per file. Yields, filled
    as the block runs, how many leftovers were removed in each folder swept (so the
    caller can say so).
    """
    swept: dict[str, int] = {}
    token = _SWEPT.set(swept)
    try:
        yield swept
    finally:
        _SWEPT.reset(token)


def remove_stale_temporaries(path: str | os.PathLike[str]) -> int:
    """Delete temporary files of earlier writes to ``path`` whose process is gone.

    A SIGKILL during a write leaves ``.NAME.PID.XXXX.ctxmgr-tmp`` beside ``path`` (the
    file itself is untouched). Returns how many were removed. Inside
    :func:`sweep_each_folder_once`, the whole folder is swept on the first call.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    swept = _SWEPT.get()
    if swept is None:
        # Exactly ".NAME.PID.XXXXXXXX.ctxmgr-tmp" (mkstemp's 8 random characters): a
        # sibling such as "NAME.9" must not have its temporary files taken for ours.
        pattern = re.compile(rf"\.{re.escape(target.name)}\.(\d+)\.[a-z0-9_]{{8}}{re.escape(TEMP_SUFFIX)}")
    else:
        key = os.path.abspath(folder)
        if key in swept:
            return 0
        swept[key] = 0
        pattern = _ANY_TEMPORARY
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or _pid_alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
            removed += 1
    if swept is not None:
        swept[os.path.abspath(folder)] = removed
    return removed


def atomic_write(path: str | os.PathLike[str], data: bytes, *, follow_symlinks: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (see :class:`AtomicWriter`)."""
    with AtomicWriter(path, follow_symlinks=follow_symlinks) as writer:
        writer.write(data)
