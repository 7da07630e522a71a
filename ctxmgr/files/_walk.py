"""What a run's paths name: files, folders walked, glob patterns, or stdin.

Shared by every command that reads conversations. A folder walk is repository-aware:
what git ignores (``.gitignore``, ``.git/info/exclude``, the user's global excludes),
what ``--exclude`` names, folders that hold installed packages (:data:`DEFAULT_EXCLUDED`)
and hidden entries are never opened; each is named in :attr:`Inputs.skipped`. What the
user names is read as named. Nothing here prints: what the walk could not apply (git's
ignore rules, when git fails) is in :attr:`Inputs.notes`.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxmgr import _io as io
from ctxmgr._git import git_command, tracked_files, work_tree
from ctxmgr.errors import InputError, UnknownFormatError, UsageError
from ctxmgr.files._backup import is_sidecar

__all__ = [
    "DEFAULT_EXCLUDED",
    "DEFAULT_INCLUDE",
    "InputFile",
    "Inputs",
    "Note",
    "Skipped",
    "WalkRules",
    "find_inputs",
    "is_not_a_conversation",
    "skipped_file",
]

DEFAULT_INCLUDE = ("*.json", "*.jsonl", "*.traj")
"""What a folder walk picks up unless ``--include`` says otherwise (``.traj``: SWE-agent's
trajectories, JSON documents under their own suffix)."""

DEFAULT_EXCLUDED = ("node_modules", "site-packages", "__pypackages__", "venv")
"""Folders a walk leaves out unless named: installed packages, never anyone's fixtures
(their ``package.json`` files and the like would only be skipped one by one)."""

TRACKED_LEFT_OUT = "left out, holds tracked files"
"""The ``skipped`` reason of a hidden or package folder holding files git tracks that a
walk would have read: what a pull request could hide a fixture in."""

# The reasons of the folders a walk leaves out by their name alone, and how to say which.
_LEFT_OUT_FOLDERS = {"hidden folder": "a hidden folder", "excluded by default": "a folder of installed packages"}


@dataclass(frozen=True)
class WalkRules:
    """How folder walks and glob patterns choose files.

    Attributes:
        follow_symlinks: Follow symbolic links out of the tree (refused otherwise).
        exclude: Patterns of paths to leave out (``--exclude``), besides what git ignores.
        include: Patterns of files to pick up (``--include``); empty: :data:`DEFAULT_INCLUDE`.
    """

    follow_symlinks: bool = False
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()


@dataclass(frozen=True)
class InputFile:
    """One input: its path (``None`` for stdin) and its name relative to what was given.

    ``error`` is set for an entry a folder walk met but must not read (an unreadable
    folder, a FIFO, a device): it is reported as that input's error, never opened.
    ``found`` is true for a file a walk or a pattern found (not named by the user): if it
    holds no conversation, it is skipped rather than an error.
    """

    path: str | None
    relative: str
    error: InputError | None = None
    found: bool = False


@dataclass(frozen=True)
class Skipped:
    """Something a folder walk or a pattern passed over on purpose.

    ``reason`` is short (for ``--json``); ``detail`` follows the path on standard error.
    """

    path: str
    reason: str
    detail: str

    @property
    def unread(self) -> bool:
        """Whether it holds files a walk would have read but for their place: a hidden
        file, or a hidden or package folder holding files git tracks."""
        return self.reason in ("hidden file", TRACKED_LEFT_OUT)


@dataclass(frozen=True)
class Note:
    """Something said about a whole run, not one file: a rule that could not be applied,
    leftovers of interrupted runs removed, a path a summary cache refused.

    ``level`` is ``note`` or ``warning``; ``message`` is the text as it came (a caller
    that prints it makes it printable).
    """

    level: str
    message: str


@dataclass
class Inputs:
    """What a run's paths name: files in order, what was passed over, and the notes of
    the walk (git's ignore rules not applied, and why)."""

    files: list[InputFile]
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


NOT_A_CONVERSATION = "not a conversation"


def is_not_a_conversation(entry: InputFile, error: BaseException | None) -> bool:
    """Whether ``error`` means a file a walk found holds no conversation (it is skipped).

    Only valid JSON of no known format counts: a broken file is still an error, so
    ``--check`` cannot pass over a damaged fixture. A file the user named is always read.
    """
    return entry.found and isinstance(error, UnknownFormatError)


def skipped_file(entry: InputFile) -> Skipped:
    """The :class:`Skipped` entry of a found file that holds no conversation."""
    return Skipped(entry.path or "-", NOT_A_CONVERSATION, "(valid JSON of no conversation format)")


def find_inputs(
    arguments: Sequence[str], rules: WalkRules | None = None, *, output_folder: str | None = None
) -> Inputs:
    """Files, folders (searched recursively for .json/.jsonl/.traj) and glob patterns.

    What the user names is read as named: a symbolic link, a FIFO or ``/dev/stdin``
    given as an argument is read (a stream is read as it comes). What a walk or a
    pattern finds is the repository's, possibly an attacker's:

    * what git ignores, what ``--exclude`` names and :data:`DEFAULT_EXCLUDED` folders
      are never opened, and are listed in :attr:`Inputs.skipped`;
    * a symbolic link is not followed unless ``follow_symlinks``: its target is read at
      its own path when the walk takes it there; one pointing elsewhere (outside the
      folder, a hidden, excluded or non-JSON file) is skipped and listed;
    * a FIFO, device or socket with a .json/.jsonl name, and a folder that cannot be
      listed, become entries with an ``error`` (never opened: a FIFO would block);
    * ``output_folder`` (the real path of ``-o DIR``) is not walked, so a run never
      reads its own outputs back.
    """
    rules = rules or WalkRules()
    if not arguments:
        if sys.stdin is None or sys.stdin.isatty():
            # Waiting for a conversation typed at the terminal is never what was meant.
            raise UsageError("no input: name a file or folder, or pipe a conversation to standard input")
        return Inputs([InputFile(None, "-")], [])
    walker = _Walker(rules, output_folder)
    for argument in arguments:
        if argument == "-":
            if len(arguments) > 1:
                raise UsageError("standard input ('-') cannot be combined with other inputs")
            return Inputs([InputFile(None, "-")], [])
        count, passed = len(walker.files), len(walker.skipped)
        folder = os.path.isdir(argument)
        if folder:
            walker.walk(argument)
            nothing = (
                "no .json, .jsonl or .traj files in this folder"
                if walker.include == DEFAULT_INCLUDE
                else f"no files matching {' or '.join(walker.include)} in this folder"
            )
        elif glob.has_magic(argument) and not os.path.exists(argument):
            matches = sorted(glob.glob(argument, recursive=True))
            if not matches:
                raise InputError("no file matches this pattern", source=argument)
            walker.matches(argument, matches)
            nothing = "no file matches this pattern"
        else:
            walker.add(argument, _relative_name(argument), found=False)
            continue
        passed_over = [s.path for s in walker.skipped[passed:]]
        if len(walker.files) == count and (passed_over or folder):
            # Everything found was passed over: a run that reads nothing must not pass.
            said = f" ({len(passed_over)} skipped: {', '.join(passed_over[:3])})" if passed_over else ""
            raise InputError(f"{nothing}{said}", source=argument)
    return Inputs(walker.files, walker.skipped, walker.notes)


def _matches(patterns: Sequence[str], relative: str, name: str, folder: bool) -> str | None:
    """The first of ``patterns`` that matches a path, or ``None``.

    As in ``.gitignore``: a pattern without a slash matches a name at any depth; one with a
    slash matches the path below the folder walked (``**`` any number of folders); one
    ending in a slash matches folders only.
    """
    for pattern in patterns:
        body = pattern.rstrip("/")
        if pattern.endswith("/") and not folder:
            continue
        if "/" not in body:
            if fnmatch.fnmatchcase(name, body):
                return pattern
            continue
        body = body.lstrip("/")
        if fnmatch.fnmatchcase(relative, body) or (body.startswith("**/") and fnmatch.fnmatchcase(relative, body[3:])):
            return pattern
    return None


@dataclass
class _Ignored:
    """What git ignores below one folder: paths relative to it, ``/``-separated."""

    files: set[str]
    folders: set[str]
    whole: bool = False  # the folder itself is ignored: the user named it, so it is read

    def covers(self, relative: str) -> bool:
        """Whether ``relative`` or a folder above it (below the walked one) is ignored."""
        if self.whole:
            return False
        if relative in self.files or relative in self.folders:
            return True
        parts = relative.split("/")
        return any("/".join(parts[:end]) in self.folders for end in range(1, len(parts)))


def _git_ignored(folder: str, notes: list[Note]) -> _Ignored | None:
    """What git ignores below ``folder``, or ``None`` outside a git work tree.

    Asked of git itself, so every rule it applies counts (nested ``.gitignore`` files,
    negations, ``.git/info/exclude``, ``core.excludesFile``). ``core.fsmonitor`` is
    switched off: in a repository's own ``.git/config`` it names a program to run.
    When git cannot answer, a note (added to ``notes``) says the ignore rules were not applied.
    """
    top = work_tree(folder)
    if top is None:
        return None
    command = git_command(top, os.path.realpath(folder), "ls-files", "-z")
    command += ["--others", "--ignored", "--exclude-standard", "--directory", "--", "."]
    try:
        done = subprocess.run(command, capture_output=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = "git is not installed" if isinstance(exc, FileNotFoundError) else f"git failed: {exc}"
        notes.append(Note("note", f"{folder}: {why}; .gitignore is not applied to this walk"))
        return None
    if done.returncode != 0:
        if b"not a git repository" in done.stderr:
            return None  # a folder named .git that holds no repository: nothing to apply
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = message[0] if message else f"exit status {done.returncode}"
        notes.append(
            Note("note", f"{folder}: git could not list ignored files ({why}); .gitignore is not applied to this walk")
        )
        return None
    ignored = _Ignored(set(), set())
    for raw in done.stdout.split(b"\0"):
        if not raw:
            continue
        path = os.fsdecode(raw)
        if path in ("./", "."):
            ignored.whole = True
        elif path.endswith("/"):
            ignored.folders.add(path.rstrip("/"))
        else:
            ignored.files.add(path)
    return ignored


def _git_tracked(folder: str) -> list[str]:
    """The files git tracks below ``folder``, relative to it (none when git cannot say:
    the ignore rules' note has said so already)."""
    top = work_tree(folder)
    tracked = [] if top is None else tracked_files(top, folder)
    return [] if isinstance(tracked, str) else tracked


class _Walker:
    """Collects the files of folder walks and glob matches (see :func:`find_inputs`)."""

    def __init__(self, rules: WalkRules, output_folder: str | None) -> None:
        self.follow = rules.follow_symlinks
        self.exclude = rules.exclude
        self.include = rules.include or DEFAULT_INCLUDE
        self.output_folder = output_folder
        self.files: list[InputFile] = []
        self.skipped: list[Skipped] = []
        self.notes: list[Note] = []
        self._seen: set[str] = set()
        self._output_named = False
        self._ignored: dict[str, _Ignored | None] = {}

    def add(self, path: str, relative: str, *, found: bool = True) -> bool:
        """Add ``path`` unless it is already in; whether it was added."""
        # Following links, one file may be reached by two paths: it is read once.
        key = os.path.realpath(path) if self.follow else os.path.abspath(path)
        if key in self._seen:
            return False
        self._seen.add(key)
        self.files.append(InputFile(path, relative, found=found))
        return True

    def problem(self, path: str, message: str) -> None:
        key = os.path.abspath(path)
        if key not in self._seen:
            self._seen.add(key)
            self.files.append(InputFile(path, path, InputError(message, source=path)))

    def skip(self, path: str, reason: str, detail: str) -> None:
        self.skipped.append(Skipped(path, reason, detail))

    def is_output(self, path: str, real: str) -> bool:
        if self.output_folder is None or real != self.output_folder:
            return False
        if not self._output_named:  # once, however many walks meet it
            self._output_named = True
            self.skip(path, "output folder", "(the output folder)")
        return True

    def included(self, relative: str, name: str) -> bool:
        """Whether a file of this name is one a walk picks up (``--include``)."""
        return _matches(self.include, relative, name, folder=False) is not None

    def ignored_below(self, root: str) -> _Ignored | None:
        key = os.path.realpath(root)
        if key not in self._ignored:
            self._ignored[key] = _git_ignored(root, self.notes)
        return self._ignored[key]

    def excluded(self, path: str, relative: str, name: str, folder: bool, ignored: _Ignored | None) -> bool:
        """Skip (and name) ``path`` if git ignores it, ``--exclude`` or the defaults leave it out."""
        if ignored is not None and ignored.covers(relative):
            self.skip(path, "git-ignored", "(ignored by git)")
            return True
        pattern = _matches(self.exclude, relative, name, folder)
        if pattern is not None:
            self.skip(path, "excluded", f"(--exclude {pattern})")
            return True
        if folder and name in DEFAULT_EXCLUDED:
            self.skip(path, "excluded by default", "(installed packages; name the folder to include it)")
            return True
        return False

    def walk(self, root: str) -> None:
        """Every included, non-hidden, non-excluded file below ``root``, in sorted order."""
        root_real = os.path.realpath(root)
        ignored = self.ignored_below(root)
        visited = {root_real}  # real folders walked: a loop of links ends here
        pending = [(root, root_real)]
        hidden_folders: list[str] = []
        first_skip = len(self.skipped)
        while pending:
            folder, real = pending.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError as exc:
                self.problem(folder, f"cannot read this folder: {exc.strerror or exc}")
                continue
            subfolders: list[tuple[str, str]] = []
            for entry in entries:
                if self._entry(entry, folder, real, root, root_real, ignored, visited, subfolders):
                    hidden_folders.append(os.path.join(folder, entry.name))
            pending.extend(reversed(subfolders))
        for path in hidden_folders:
            self.skip(path, "hidden folder", "(a hidden folder; name it to include it)")
        if ignored is not None:
            self._name_tracked_files(root, first_skip)

    def _name_tracked_files(self, root: str, first_skip: int) -> None:
        """Say which hidden or package folders this walk left out hold files git tracks
        that the walk would have read (``.fixtures/chat.json``).

        Such a folder is still left out (``.github/renovate.json`` is no conversation,
        and a repository's root always has hidden folders), but it is what a pull request
        would use to keep a fixture away from ``--check``: it gets a reason of its own,
        on standard error, in ``--json`` and in the closing line. Only git's index is
        read, never the folder: a ``.venv`` of 50,000 files costs nothing.
        """
        folders = [
            (index, item)
            for index, item in enumerate(self.skipped[first_skip:], first_skip)
            # git keeps nothing it tracks inside .git: no need to ask for it alone
            if item.reason in _LEFT_OUT_FOLDERS and os.path.basename(item.path) != ".git"
        ]
        if not folders:
            return
        tracked = _git_tracked(root)
        for index, item in folders:
            below = os.path.relpath(item.path, root).replace(os.sep, "/") + "/"
            count = sum(
                1 for path in tracked if path.startswith(below) and self.included(path, path.rsplit("/", 1)[-1])
            )
            if count:
                what = _LEFT_OUT_FOLDERS[item.reason]
                files = f"{count} file{'s' if count > 1 else ''} git tracks"
                self.skipped[index] = Skipped(
                    item.path, TRACKED_LEFT_OUT, f"({what} holding {files}, not read; name it to include it)"
                )

    def _entry(
        self,
        entry: os.DirEntry[str],
        folder: str,
        real: str,
        root: str,
        root_real: str,
        ignored: _Ignored | None,
        visited: set[str],
        subfolders: list[tuple[str, str]],
    ) -> bool:
        """Take one entry of a folder listing; whether it is a hidden folder left out."""
        path = os.path.join(folder, entry.name)
        relative = os.path.relpath(path, root).replace(os.sep, "/")
        if entry.name.startswith("."):
            # Hidden: left out as tools leave out .git, but never without a word.
            if self.included(relative, entry.name):
                self.skip(path, "hidden file", "(a hidden file; name it to include it)")
                return False
            return entry.is_dir(follow_symlinks=False)
        try:
            is_folder = entry.is_dir(follow_symlinks=False)
            if (is_folder or entry.is_symlink() or self.included(relative, entry.name)) and self.excluded(
                path, relative, entry.name, is_folder, ignored
            ):
                return False
            if entry.is_symlink():
                self._link(path, root, root_real, visited, subfolders)
            elif is_folder:
                below = os.path.join(real, entry.name)
                if not self.is_output(path, below):
                    visited.add(below)
                    subfolders.append((path, below))
            elif self.included(relative, entry.name):
                # is_file() answers from the listing; stat() only for what is not one.
                mode = stat.S_IFREG if entry.is_file(follow_symlinks=False) else entry.stat().st_mode
                self._file(path, mode, os.path.relpath(path, root))
        except OSError as exc:
            self.problem(path, f"cannot read: {exc.strerror or exc}")
        return False

    def _file(self, path: str, mode: int, relative: str) -> None:
        if is_sidecar(path):
            self.skip(path, "ctxmgr backup", "(a ctxmgr backup: ctxmgr restore reads it)")
            return
        if stat.S_ISREG(mode):
            if not self.add(path, relative) and self.follow:
                self.skip(path, "same file as another input", "(the same file as another input)")
        else:
            # Never opened: a FIFO would block the run, a device would be read forever.
            self.problem(path, f"{io.file_kind(mode)}, not a regular file; not read")

    def _link(self, path: str, root: str, root_real: str, visited: set[str], subfolders: list[tuple[str, str]]) -> None:
        target = os.path.realpath(path)
        name = os.path.basename(path)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            if self.included(name, name):
                self.skip(path, "broken symbolic link", f"-> {os.readlink(path)} (a broken symbolic link)")
            return
        folder = stat.S_ISDIR(mode)
        if not folder and not self.included(os.path.relpath(path, root).replace(os.sep, "/"), name):
            return  # not a conversation file's name: the walk would not take it anyway
        inside = _within(target, root_real)
        if self.follow:
            if folder:
                if target not in visited and not self.is_output(path, target):
                    visited.add(target)
                    subfolders.append((path, target))
            else:
                self._file(path, mode, os.path.relpath(path, root))
            return
        if not inside:
            self.skip(
                path,
                "symbolic link to outside the folder",
                f"-> outside {root} (a symbolic link; --follow-symlinks to include)",
            )
            return
        relative = os.path.relpath(target, root_real)
        if self._left_out(relative, target, root) or not (
            folder or self.included(relative.replace(os.sep, "/"), os.path.basename(target))
        ):
            self.skip(
                path,
                "symbolic link to a path the walk leaves out",
                f"-> {relative} (a symbolic link to a path the walk leaves out; --follow-symlinks to include)",
            )
        else:
            # The walk reaches the target at its own path: read there, once.
            self.skip(path, "symbolic link inside the folder", f"-> {relative} (a symbolic link; its target is read)")

    def _left_out(self, relative: str, real: str, root: str) -> bool:
        """Whether a walk of ``root`` leaves out this path (``relative`` to it): hidden,
        output, git-ignored or excluded."""
        parts = relative.split(os.sep)
        hidden = relative != "." and any(part.startswith(".") for part in parts)
        if hidden or (self.output_folder is not None and _within(real, self.output_folder)):
            return True
        if relative == ".":
            return False
        posix = "/".join(parts)
        ignored = self.ignored_below(root)
        if ignored is not None and ignored.covers(posix):
            return True
        for end in range(1, len(parts) + 1):
            above, name = "/".join(parts[:end]), parts[end - 1]
            is_folder = end < len(parts) or os.path.isdir(real)
            if _matches(self.exclude, above, name, is_folder) is not None:
                return True
            if is_folder and name in DEFAULT_EXCLUDED:
                return True
        return False

    def matches(self, pattern: str, matches: list[str]) -> None:
        """The files a glob pattern matched, with the walk's rules for links, special
        files, git-ignored and excluded paths.

        The pattern's folder is its part before the first wildcard (``chats`` for
        ``chats/**/*.json``): a match that is a link, or lies below one, counts as a
        link from that folder; exclusions apply to the path below it.
        """
        root = _static_prefix(pattern)
        root_real = os.path.realpath(root)
        root_abs = os.path.abspath(root)
        for match in matches:
            try:
                mode = os.stat(match).st_mode
            except OSError as exc:
                if os.path.islink(match):
                    self.skip(match, "broken symbolic link", f"-> {os.readlink(match)} (a broken symbolic link)")
                else:
                    self.problem(match, f"cannot read: {exc.strerror or exc}")
                continue
            if stat.S_ISDIR(mode):
                continue  # a pattern's folders are not searched
            below = os.path.relpath(os.path.abspath(match), root_abs)
            if not below.startswith(os.pardir) and self._pattern_excluded(match, below, root):
                continue
            real = os.path.realpath(match)
            if self.output_folder is not None and _within(real, self.output_folder):
                self.is_output(self.output_folder, self.output_folder)
                continue
            plain = os.path.normpath(os.path.join(root_real, below))
            if self.follow or real == plain:
                self._file(match, mode, _relative_name(match))
            elif not _within(real, root_real):
                self.skip(
                    match,
                    "symbolic link to outside the folder",
                    f"-> outside {root} (a symbolic link; --follow-symlinks to include)",
                )
            elif self._left_out(relative := os.path.relpath(real, root_real), real, root):
                self.skip(
                    match,
                    "symbolic link to a path the walk leaves out",
                    f"-> {relative} (a symbolic link to a path the walk leaves out; --follow-symlinks to include)",
                )
            else:
                # A link inside the pattern's folder: its target is read, at its own path.
                shown = os.path.join(root, relative)
                self._file(shown, mode, _relative_name(shown))

    def _pattern_excluded(self, match: str, below: str, root: str) -> bool:
        """Skip (and name) a pattern's match that git ignores or ``--exclude`` names,
        itself or through a folder above it (below the pattern's folder)."""
        parts = below.split(os.sep)
        ignored = self.ignored_below(root)
        if ignored is not None and ignored.covers("/".join(parts)):
            self.skip(match, "git-ignored", "(ignored by git)")
            return True
        for end in range(1, len(parts) + 1):
            if self.excluded(match, "/".join(parts[:end]), parts[end - 1], end < len(parts), None):
                return True
        return False


def _within(path: str, folder: str) -> bool:
    """Whether the real path ``path`` is ``folder`` or below it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _static_prefix(pattern: str) -> str:
    """The folder a glob pattern searches: its leading components without wildcards."""
    parts: list[str] = []
    for part in pattern.split(os.sep):
        if glob.has_magic(part):
            break
        parts.append(part)
    prefix = os.sep.join(parts)
    return prefix or (os.sep if pattern.startswith(os.sep) else ".")


def _relative_name(path: str) -> str:
    """Where a file given by path lands under ``-o DIR``: its path below the working folder."""
    absolute = os.path.abspath(path)
    here = os.path.abspath(os.curdir)
    if absolute.startswith(here + os.sep):
        return os.path.relpath(absolute, here)
    return os.path.basename(absolute)
