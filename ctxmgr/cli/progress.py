"""The progress bar of a run on a terminal: bytes read of all inputs, with the
percentage and the time left, conversations done and, for summaries, calls made.

It appears only once a run has lasted :data:`SHOW_AFTER` seconds (a quick run never
flashes a bar) and is redrawn on updates, at most :data:`REDRAW_EVERY` seconds apart,
never by a timer thread: a process running a thread must not fork, and the parallel
trim forks.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ctxmgr import _io as io
from ctxmgr.cli.console import printable

if TYPE_CHECKING:
    from rich.console import Console

SHOW_AFTER = 0.3
REDRAW_EVERY = 0.1
WIDE = 110
"""Terminals this wide get every figure in full; narrower ones (80 columns) a shorter line."""


def input_size(path: str | None) -> int | None:
    """Bytes left to read of an input (``None``: not known, as for a pipe)."""
    try:
        if io.is_stdio(path):
            status = os.fstat(0)
            offset = os.lseek(0, 0, os.SEEK_CUR) if stat.S_ISREG(status.st_mode) else 0
        else:
            status, offset = os.stat(str(path)), 0
    except OSError:
        return None
    return max(0, status.st_size - offset) if stat.S_ISREG(status.st_mode) else None


class ProgressView:
    """One bar for the whole run; :meth:`file` gives each input its own counter."""

    def __init__(self, console: Console, paths: Sequence[str | None], summarizer: Any = None) -> None:
        self._console = console
        self._files = len(paths)
        self._sizes = sizes = [input_size(path) for path in paths]
        self._name = printable(io.STDIN_NAME if io.is_stdio(paths[0]) else str(paths[0])) if len(paths) == 1 else ""
        # Unknown when one input's size is (standard input from a pipe): the bar pulses.
        self._total = None if any(size is None for size in sizes) else sum(size or 0 for size in sizes)
        self._summarizer = summarizer
        self._started = time.monotonic()
        self._drawn_at = 0.0
        self._bar: Any = None
        self._name_room = 30
        self._task: Any = None
        self.files_done = 0
        self.conversations = 0
        self.bytes_done = 0

    def file(self, index: int) -> tuple[Callable[[int, int], None], Callable[[], None]]:
        """The ``progress(conversations, nbytes)`` callback for input ``index``, and the
        call that marks it done. Its bytes never count past its size, and count in full
        once it is done (however it was read)."""
        size = self._sizes[index]
        counted = 0

        def advance(conversations: int, nbytes: int) -> None:
            nonlocal counted
            if size is not None:
                nbytes = max(0, min(nbytes, size - counted))
            counted += nbytes
            self.conversations += conversations
            self.bytes_done += nbytes
            self._update()

        def done() -> None:
            nonlocal counted
            if size is not None and counted < size:
                self.bytes_done += size - counted
                counted = size
            self.files_done += 1
            self._update(force=True)

        return advance, done

    def _update(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drawn_at < REDRAW_EVERY:
            return
        if self._bar is None:
            if now - self._started < SHOW_AFTER:
                return
            self._start()
        self._drawn_at = now
        calls = (self._summarizer.calls, self._summarizer.tokens) if self._summarizer is not None else None
        self._bar.update(
            self._task,
            completed=self.bytes_done,
            description=self._description(),
            conversations=self.conversations,
            calls=calls,
            elapsed=now - self._started,
            refresh=True,
        )

    def _start(self) -> None:
        from rich.progress import BarColumn, Progress, TextColumn

        wide = self._console.width >= WIDE
        self._bar = Progress(
            # A file name is data: "[reverse]" or "[/b]" in it is shown, never obeyed.
            TextColumn("{task.description}", markup=False),
            BarColumn(bar_width=20 if wide else 10),
            _figures_column(wide),
            console=self._console,
            transient=True,
            auto_refresh=False,  # no timer thread (see the module's docstring)
            # Output goes where it was sent: data to standard output stays data.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._bar.start()
        self._task = self._bar.add_task(self._description(), total=self._total)
        self._name_room = 30 if wide else 16

    def _description(self) -> str:
        if self._files > 1:
            return f"files {self.files_done}/{self._files}"
        room = self._name_room
        return self._name if len(self._name) <= room else "..." + self._name[3 - room :]

    def close(self) -> None:
        """Take the bar off the terminal (a transient bar leaves no trace)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _figures_column(wide: bool) -> Any:
    """The figures after the bar: ``45% 45.1/100.2 MB 1,234 conversations, 21 calls,
    ~62,104 tokens sent 0:00:12, 0:00:15 left``; on a narrow terminal ``45% 1,234 conv.,
    21 calls 0:00:15 left``. Without a total (a pipe) there is no percentage and no
    time left, only what was read."""
    from rich.filesize import decimal
    from rich.progress import ProgressColumn
    from rich.text import Text

    def clock(seconds: float | None) -> str:
        if seconds is None:
            return "-:--:--"
        whole = int(seconds)
        return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"

    class Figures(ProgressColumn):
        def render(self, task: Any) -> Text:
            parts = []
            if task.total is None:
                parts.append(f"{decimal(int(task.completed))} read")
            elif wide:
                parts.append(f"{task.percentage:3.0f}% {_both(int(task.completed), int(task.total))}")
            else:
                parts.append(f"{task.percentage:3.0f}%")
            conversations = task.fields.get("conversations", 0)
            counts = f"{conversations:,} {'conversations' if wide else 'conv.'}"
            calls = task.fields.get("calls")
            if calls is not None:
                counts += f", {calls[0]:,} calls" + (f", ~{calls[1]:,} tokens sent" if wide else "")
            parts.append(counts)
            elapsed = task.fields.get("elapsed")  # since the run began, not the bar
            if task.total is None:
                parts.append(clock(elapsed))
            elif wide:
                parts.append(f"{clock(elapsed)}, {clock(task.time_remaining)} left")
            else:
                parts.append(f"{clock(task.time_remaining)} left")
            return Text(" ".join(parts))

    return Figures()


def _both(done: int, total: int) -> str:
    """``45.1/100.2 MB``: both in the total's unit."""
    for unit, suffix in ((10**9, "GB"), (10**6, "MB"), (10**3, "kB")):
        if total >= unit:
            return f"{done / unit:.1f}/{total / unit:.1f} {suffix}"
    return f"{done}/{total} bytes"
