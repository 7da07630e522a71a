"""Compact datasets as Ray Data tasks (``--engine ray``), locally or on a cluster.

How it runs::

    read_binary_files(paths)        one row per input file (a local folder, s3://, gs://...)
      └─ flat_map(_split)           the file cut at line ends into stretches of about
                                    ``chunk_bytes``, each with the number of its first
                                    line and the dataset's format (settled by its first
                                    good line, found here, read in order)
      └─ repartition(1 row a block) one task per stretch
      └─ map(_compact_stretch)      ctxmgr.files.compact_lines() on the stretch's lines
                                    (finish=False): output bytes, warnings, errors, counts
      └─ iter_rows() in order       this process merges the counts (FileResult.merge),
                                    words what conversions dropped once for the file,
                                    and writes the output

Every stretch is compacted with the line numbers and the format the one-machine path
would have at that point, so the output, joined in order, is byte for byte the same,
and so are the warnings, errors and counts. Writes stay all-or-nothing: the output is
held back (spooled to disk past 16 MB) until the file's last stretch is in, then
written (atomically for a local file).

Where Ray runs: ``RAY_ADDRESS`` names an existing cluster (the user's choice, joined as
it is); without it a local Ray is started for the run (a few seconds) and stopped at its
end. A Ray already started in this process (a library user's, the tests') is used as it
is. ctxmgr must be installed on the workers.

The local Ray ctxmgr starts is the user's alone: its servers listen on 127.0.0.1 only,
it requires a token made for the run (never written to a file), and its session files
(logs, sockets, ports) live in a folder of mode 700, removed at the end.

What the workers import: Ray puts the driver's current folder first on every worker's
import path, and starts the workers there. The current folder is a repository, possibly
an attacker's (an ``orjson.py`` at its root would run in every worker, with the key in
its environment), so a local Ray is started from its empty private folder and a cluster
joined from ``/`` (a temporary folder would be gone when the workers read it, free for
another user to make again): the workers import what is installed, as the ``ctxmgr``
command does.

Keys: a worker reads its provider's key from its own environment, as ctxmgr does on
one machine. Nothing ctxmgr sends to Ray holds a key: the ``runtime_env`` it passes
carries no variable, and a manager whose pickled form holds a key known to this
process (``--api-key-file``, a key variable) is refused before anything is sent.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import pickle
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any

from ctxmgr._io import check_write_target
from ctxmgr.errors import InputError, OutputError, UnknownFormatError, UsageError
from ctxmgr.files import FileResult, FileSink, NullSink, Settings, Sink, StdoutSink, compact_lines
from ctxmgr.files._compaction import finish_dataset
from ctxmgr.files._reading import numbered_lines, sniff_dataset
from ctxmgr.state._managers import BaseContextManager, MessageContextManager

__all__ = ["INSTALL_HINT", "RayOutput", "compact_on_ray", "runtime_env"]

INSTALL_HINT = "--engine ray needs Ray Data: pip install 'ctxmgr[ray]'"

_MIN_CHUNK = 64 << 10
_MAX_CHUNK = 16 << 20


@dataclass
class RayOutput:
    """Where the compacted datasets go.

    Attributes:
        path: ``None`` or ``"-"``: standard output; a name ending in ``/`` (or an
            existing local folder): ordered part files ``NAME-00000.jsonl``... in it,
            one per stretch of each input file; anything else: one file, the parts
            joined in order. Local paths are written atomically; ``s3://``, ``gs://``
            ... through pyarrow's file systems, once the file's last stretch is in.
        writes: ``False`` discards the output (``--check``, ``--json`` on stdout).
    """

    path: str | None = None
    writes: bool = True


def runtime_env() -> dict[str, Any]:
    """The ``runtime_env`` ctxmgr passes to Ray: no variables (keys come from the
    workers' own environment), and Ray's own logging left to Ray."""
    return {}


def compact_on_ray(
    paths: Sequence[str],
    manager: BaseContextManager[Any],
    settings: Settings,
    output: RayOutput,
    *,
    chunk_bytes: int | None = None,
    relative: Mapping[str, str] | None = None,
    notify: Callable[[str], None] | None = None,
) -> list[FileResult]:
    """Compact the datasets at ``paths`` (files or folders, anything Ray Data reads)
    with Ray Data tasks, writing to ``output``; one :class:`FileResult` per file, in order.

    A folder is listed by Ray Data as it is: the command line walks local folders itself
    (git-ignored, hidden and linked-out entries left out and named) and passes files.

    Args:
        relative: For a file of ``paths``, its name below ``-o DIR/`` (``sub/a.jsonl``);
            by default its base name.
        notify: Called with what the run should tell the user as it happens: that a
            local Ray was started for it, and how it is kept to this user.

    Raises:
        UsageError: Ray is not installed, a key would be shipped, or several files
            would go to one file or standard output.
        OutputError: a file's name would put its output outside ``-o DIR/``.
    """
    saved = _prepare_local_ray() if _starts_a_local_ray() else None
    try:
        ray = _import_ray()
        payload = _shippable(manager)
        started = _connect(ray, notify or (lambda _text: None), saved)
    except BaseException:
        _restore(saved or {})
        raise
    try:
        return _compact(ray, paths, payload, settings, output, chunk_bytes, relative or {})
    finally:
        if started is not None:
            started.stop(ray)


def _compact(
    ray: Any,
    paths: Sequence[str],
    payload: bytes,
    settings: Settings,
    output: RayOutput,
    chunk_bytes: int | None,
    relative: Mapping[str, str],
) -> list[FileResult]:
    from ray.data import DataContext

    context = DataContext.get_current()
    context.execution_options.preserve_order = True  # the output is joined in line order
    results: list[FileResult] = []
    readable: list[str] = []
    for path in paths:
        missing = _missing_local(path)
        if missing is not None:
            results.append(FileResult(source=path, kind="dataset", input_error=missing))
        else:
            readable.append(path)
    if not readable:
        return results
    names = _Names(readable, dict(relative))
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    split = functools.partial(_split, names=names, settings=settings, chunk_bytes=chunk_bytes, cpus=cpus)
    compact = functools.partial(_compact_stretch, payload=payload, settings=settings)
    try:
        files = ray.data.read_binary_files([names.readable(p) for p in readable], include_paths=True)
    except (OSError, ValueError) as exc:  # nothing found at a remote path, no such bucket...
        raise InputError(f"cannot read: {exc}", source=", ".join(readable)) from None
    found = files.input_files()
    _check_one_file(output, found)
    _check_names(output, [names.name(f)[1] for f in found])
    stretches = files.flat_map(split).repartition(target_num_rows_per_block=1).map(compact)
    # Ray Data's progress lines are for a terminal; in a log they would bury ctxmgr's report.
    logger = logging.getLogger("ray.data")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        written = _collect(stretches.iter_rows(), settings, output)
    finally:
        logger.setLevel(level)
    return results + written


# -- this process ---------------------------------------------------------------------


_LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch, read once when it is imported: off, a Ray started here takes 127.0.0.1
as its node's address, and its servers (GCS, raylet, workers, agents) listen there
only. On Linux it is on by default: the machine's address, and every interface."""

_TOKEN_VARIABLES = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")

_TOKEN_BY_DEFAULT = (2, 59)
"""The first Ray whose ``ray.init()`` requires a token for a cluster it starts (and
reads the token settings again when it does, whenever Ray was imported)."""


def _version(text: str) -> tuple[int, ...]:
    numbers = []
    for part in text.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        numbers.append(int(digits or 0))
    return tuple(numbers)


def _starts_a_local_ray() -> bool:
    """Whether this run will start a local Ray: no ``RAY_ADDRESS`` (or ``local``), and
    no Ray already running in this process."""
    # "local" asks Ray to start a cluster on this machine, as no address does: it gets the
    # same loopback, token and private folder.
    if (os.environ.get("RAY_ADDRESS") or "local") != "local":
        return False
    imported = sys.modules.get("ray")
    return imported is None or not imported.is_initialized()


def _prepare_local_ray() -> dict[str, str | None]:
    """Set what the local Ray must be started with, before Ray is imported (it reads
    some of it then); the variables as they were, to put back at the end.

    A token made for this run is held only in the environment of this user's processes,
    never in a file: Ray's default is ``~/.ray/auth_token``, readable by all under the
    usual umask. ``RAY_AUTH_MODE=token`` makes Ray require it; a ``disabled`` from the
    environment would let any local user in, so it does not count here.
    """
    saved = {name: os.environ.get(name) for name in (*_TOKEN_VARIABLES, _LOOPBACK_SWITCH)}
    os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
    if "ray" not in sys.modules:
        os.environ[_LOOPBACK_SWITCH] = "0"
        os.environ["RAY_AUTH_MODE"] = "token"
    elif os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        # Imported already, Ray has read its mode: without the variable, ray.init()
        # turns the token on itself and reads it again (Ray 2.59 and later).
        os.environ.pop("RAY_AUTH_MODE", None)
    return saved


def _restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return ray


@contextlib.contextmanager
def _working_folder(folder: str) -> Iterator[None]:
    """Run the block in ``folder``: Ray ships the current folder to the workers' import
    path and starts them there, so it must not be the repository's."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


@dataclass
class _LocalRay:
    """A Ray this run started: stopped at its end, its folder removed, the variables
    set for it put back as they were."""

    folder: str
    saved: dict[str, str | None]
    notify: Callable[[str], None]

    def stop(self, ray: Any) -> None:
        try:
            ray.shutdown()
        finally:
            _restore(self.saved)
            try:
                shutil.rmtree(self.folder)
            except OSError as exc:
                where = self.folder
                self.notify(f"--engine ray: could not remove the local Ray's folder {where}: {exc.strerror or exc}")


def _connect(ray: Any, notify: Callable[[str], None], saved: dict[str, str | None] | None = None) -> _LocalRay | None:
    """Join the cluster ``RAY_ADDRESS`` names, else start a local Ray (unless this
    process already has one; ``saved``: the variables :func:`_prepare_local_ray` set);
    the local Ray this run started, to stop at its end."""
    if ray.is_initialized():
        _restore(saved or {})
        return None
    address = os.environ.get("RAY_ADDRESS") or None
    if address == "local":
        address = None  # Ray reads "local" as no address: start a cluster here
    options: dict[str, Any] = {
        "runtime_env": runtime_env(),
        "include_dashboard": False,
        "log_to_driver": False,  # the workers' log lines are Ray's, not ctxmgr's report
        "configure_logging": False,
    }
    if address is not None or saved is None:
        # Ray records the current folder for the workers' import path, and they read it
        # when they start, long after this call: a temporary folder would be gone by then,
        # free for another local user to make again under its name. The root folder is
        # on every node and no ordinary user can add a module to it.
        with _working_folder(os.path.abspath(os.sep)):
            ray.init(address=address, **options)
        return None
    if _version(ray.__version__) < _TOKEN_BY_DEFAULT:
        _restore(saved)
        raise UsageError(
            f"--engine ray: Ray {ray.__version__} starts a local cluster that any user of this machine could run "
            "code in; use Ray 2.59 or later (pip install -U 'ctxmgr[ray]'), or start a cluster yourself and set "
            "RAY_ADDRESS"
        )
    # Mode 700, whatever the umask: Ray makes its own session folder inside writable by
    # all (mode 777), so this one is what keeps other users out of its sockets and logs.
    # Its own session folder also means Ray finds no address in $TMPDIR/ray/ray_current_cluster
    # (a folder every user may write), which a plain ray.init() would join instead.
    folder = tempfile.mkdtemp(prefix="ctxmgr-ray-", dir=os.environ.get("RAY_TMPDIR") or None)
    started = _LocalRay(folder, saved, notify)
    # Ray's own warning says how to turn the token off: not a choice ctxmgr offers.
    token_logger = logging.getLogger("ray._private.authentication.authentication_token_setup")
    level = token_logger.level
    token_logger.setLevel(logging.ERROR)
    try:
        with _working_folder(folder):
            ray.init(_temp_dir=os.path.join(folder, "r"), **options)
    except BaseException:
        started.stop(ray)
        raise
    finally:
        token_logger.setLevel(level)
    listens = ray.util.get_node_ip_address()
    where = "on 127.0.0.1 only"
    if listens not in ("127.0.0.1", "::1"):
        where = f"on {listens}: Ray was imported before ctxmgr could ask it for loopback"
    notify(
        f"--engine ray: started a local Ray for this run (listening {where}, with a token of this run, "
        f"files in {folder}, mode 700); set RAY_ADDRESS to use a cluster of your own"
    )
    return started


def _shippable(manager: BaseContextManager[Any]) -> bytes:
    """The manager as the tasks receive it; refused if it holds a key this process knows."""
    import ray.cloudpickle as cloudpickle

    from ctxmgr._provider_registry import help_key_variables
    from ctxmgr._redact import hide_url_credentials, scrub

    dumps: Callable[[Any], bytes] = cloudpickle.dumps  # pickles closures and local classes too
    payload = dumps(manager)
    text = payload.decode("latin-1")
    if scrub(text) != hide_url_credentials(text):
        raise UsageError(
            "--engine ray sends no API key to the workers: drop --api-key-file and set the provider's "
            f"key variable ({help_key_variables(', ')}) in the workers' environment"
        )
    return payload


def _missing_local(path: str) -> InputError | None:
    if "://" in path or os.path.exists(path):
        return None
    return InputError("no such file or folder", source=path)


@dataclass
class _Names:
    """The names messages give each file: as the user wrote it (``data/a.jsonl``),
    and a file found in a folder as the folder's name joined with its own."""

    given: list[str]
    relative: dict[str, str] = field(default_factory=dict)  # a given file's name below -o DIR/
    _absolute: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._absolute = [(self._bare(self.readable(p)), p) for p in self.given]

    @staticmethod
    def readable(path: str) -> str:
        return path if "://" in path else os.path.abspath(path)

    @staticmethod
    def _bare(path: str) -> str:
        return path.split("://", 1)[1] if "://" in path else path

    def name(self, found: str) -> tuple[str, str]:
        """``(name, relative)``: the file's name, and its name inside the folder given."""
        bare = self._bare(found).rstrip("/")
        for absolute, given in self._absolute:
            absolute = absolute.rstrip("/")
            if bare == absolute:
                return given, self.relative.get(given, os.path.basename(bare))
            if bare.startswith(absolute + "/"):
                relative = bare[len(absolute) + 1 :]
                return f"{given.rstrip('/')}/{relative}", relative
        return found, os.path.basename(bare)


def _collect(rows: Iterator[dict[str, Any]], settings: Settings, output: RayOutput) -> list[FileResult]:
    """Merge the stretches' reports in order and hold back their output; commit every
    file's once all are in (so that a refusal met at the second file leaves the first
    unwritten too)."""
    files: list[tuple[FileResult, Sink]] = []
    failed: set[int] = set()  # files whose stretch failed: the rest is not wanted
    try:
        for row in rows:
            if not files or row["name"] != files[-1][0].source:
                result = FileResult(source=row["name"], kind="dataset")
                sink = _sink(output, row["relative"], len(files) + 1)
                result.destination = sink.name
                files.append((result, sink))
            result, sink = files[-1]
            if len(files) - 1 in failed:
                continue
            report = pickle.loads(row["report"])
            _merge(result, report)
            if report["error"] is not None:
                result.input_error = _rebuilt(report["error"])
                sink.abort()
                failed.add(len(files) - 1)
                continue
            if isinstance(sink, _PartsSink):
                sink.next_part()
            sink.write(row["data"])
    except BaseException:
        for _, sink in files:
            sink.abort()
        raise
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()  # stops Ray Data's execution if it was cut short
    for index, (result, sink) in enumerate(files):
        _finish(result, sink, settings, stopped=index in failed)
    return [result for result, _ in files]


def _finish(result: FileResult, sink: Sink, settings: Settings, stopped: bool) -> None:
    if not stopped:
        # As the one-machine path: what conversions dropped is worded once for the file
        # (the stretches were compacted with finish=False), then the sink is committed or
        # aborted under --strict/--lossless errors.
        finish_dataset(result.source, sink, settings, result, lambda: None)
    if not result.written:
        result.destination = None if isinstance(sink, NullSink) else result.destination


def _merge(result: FileResult, report: dict[str, Any]) -> None:
    part: FileResult = report["result"]
    if result.format is None:
        result.format = part.format
    result.merge(part)
    result.provider_errors.extend(_rebuilt(e) for e in report["provider_errors"])


def _check_one_file(output: RayOutput, found: Sequence[str]) -> None:
    """Refuse several input files for an output that takes one, before any is read."""
    if len(found) > 1 and output.writes and _parts_folder(output) is None:
        _sink(output, "", 2)


def _check_names(output: RayOutput, relative: Sequence[str]) -> None:
    """Refuse, before any is read, a file whose name would put its parts outside
    ``-o DIR/``: a remote object's name is the bucket owner's, and may hold ``..``."""
    if _parts_folder(output) is None:
        return
    for name in relative:
        _part_stem(output, name)


def _parts_folder(output: RayOutput) -> str | None:
    path = output.path
    if not output.writes or path is None or path == "-":
        return None
    if path.endswith("/") or ("://" not in path and os.path.isdir(path)):
        return path
    return None


def _part_stem(output: RayOutput, relative: str) -> str:
    """``DIR/NAME`` for a file named ``relative`` below ``DIR`` (its parts are
    ``DIR/NAME-00000.jsonl``...), refused when the name leaves ``DIR``."""
    folder = output.path or ""
    parts = relative.split("/")
    if relative.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise OutputError(f"{relative}: would be written outside {folder}")
    stem = relative[: -len(".jsonl")] if relative.endswith(".jsonl") else relative
    return folder.rstrip("/") + "/" + stem


def _sink(output: RayOutput, relative: str, index: int) -> Sink:
    if not output.writes:
        return NullSink()
    path = output.path
    if path is None or path == "-":
        if index > 1:
            raise UsageError("several inputs cannot all go to standard output; use -o DIR/")
        return StdoutSink()
    if _parts_folder(output) is not None:
        return _PartsSink(_part_stem(output, relative))
    if index > 1:
        raise UsageError(f"-o {path}: several inputs need a folder (-o DIR/), not a file")
    return _remote_file(path) if "://" in path else FileSink(path)


class _PartsSink:
    """Ordered part files ``BASE-00000.jsonl``..., written when the file is done."""

    def __init__(self, base: str) -> None:
        self.name: str | None = base + "-*.jsonl"
        self._base = base
        self._parts: list[IO[bytes]] = []

    def next_part(self) -> None:
        self._parts.append(tempfile.SpooledTemporaryFile(max_size=16 << 20))  # noqa: SIM115

    def write(self, data: bytes) -> None:
        if not self._parts:
            self.next_part()
        self._parts[-1].write(data)

    def commit(self) -> None:
        targets = [f"{self._base}-{number:05d}.jsonl" for number in range(len(self._parts))]
        for target in targets:
            if "://" not in target:
                check_write_target(target)  # a link or a FIFO at a part's name: none is written
        for part, target in zip(self._parts, targets, strict=True):
            sink = _remote_file(target) if "://" in target else FileSink(target, make_parents=True)
            part.seek(0)
            while chunk := part.read(1 << 20):
                sink.write(chunk)
            sink.commit()
            part.close()
        self._parts = []

    def abort(self) -> None:
        for part in self._parts:
            part.close()
        self._parts = []


class _RemoteFile:
    """A file in a pyarrow file system (``s3://``, ``gs://``...), written at commit."""

    def __init__(self, uri: str) -> None:
        self.name: str | None = uri
        self._buffer: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115

    def write(self, data: bytes) -> None:
        self._buffer.write(data)

    def commit(self) -> None:
        from pyarrow import fs

        self._buffer.seek(0)
        try:
            filesystem, where = fs.FileSystem.from_uri(self.name)
            with filesystem.open_output_stream(where) as stream:
                while chunk := self._buffer.read(1 << 20):
                    stream.write(chunk)
        except (OSError, ValueError) as exc:
            raise OutputError(f"{self.name}: cannot write: {exc}") from None
        finally:
            self._buffer.close()

    def abort(self) -> None:
        self._buffer.close()


def _remote_file(uri: str) -> _RemoteFile:
    return _RemoteFile(uri)


def _portable(error: BaseException) -> tuple[type[BaseException], dict[str, Any], tuple[Any, ...]]:
    """An exception as data that pickles back to the same exception (ctxmgr's errors
    take keyword arguments, which ``BaseException``'s pickling drops)."""
    return type(error), dict(vars(error)), error.args


def _rebuilt(portable: tuple[type[BaseException], dict[str, Any], tuple[Any, ...]]) -> Any:
    kind, attributes, args = portable
    error = kind.__new__(kind)
    error.__dict__.update(attributes)
    error.args = args
    return error


# -- the tasks ----------------------------------------------------------------------


def _split(
    row: dict[str, Any], *, names: _Names, settings: Settings, chunk_bytes: int | None, cpus: int
) -> list[dict[str, Any]]:
    """One input file as stretches of lines, each with what compacting it needs to know."""
    data: bytes = row["bytes"]
    name, relative = names.name(row["path"])

    def stretch(seq: int, first: int, piece: bytes, settled: int, fmt: str | None, error: Any = None) -> dict[str, Any]:
        return {
            "name": name,
            "relative": relative,
            "seq": seq,
            "first": first,
            "settled": settled,
            "format": fmt or "",
            "data": piece,
            "error": pickle.dumps(error),
        }

    if not sniff_dataset(_head(data), name):
        error = _no_conversation(data, name, settings) or InputError(
            "--engine ray compacts datasets (JSONL, one conversation per line); "
            "this file is not one: compact it without --engine",
            source=name,
        )
        return [stretch(0, 1, b"", 0, None, _portable(error))]
    settled, fmt = _settle(data, name, settings)
    size = chunk_bytes or min(_MAX_CHUNK, max(_MIN_CHUNK, len(data) // (4 * cpus)))
    rows: list[dict[str, Any]] = []
    start, first = 0, 1
    while start < len(data):
        end = data.find(b"\n", min(start + size, len(data)) - 1)
        end = len(data) if end == -1 else end + 1
        rows.append(stretch(len(rows), first, data[start:end], settled, fmt))
        first += data.count(b"\n", start, end)
        start = end
    return rows


def _no_conversation(data: bytes, name: str, settings: Settings) -> UnknownFormatError | None:
    """The error the one-machine path gives a file of valid JSON in no conversation
    format (a ``package.json``): the command line skips such a file a walk found."""
    if settings.fmt is not None:
        return None
    import orjson

    from ctxmgr.formats import detect_candidates

    try:
        detect_candidates(orjson.loads(data), source=name)
    except UnknownFormatError as error:
        return error
    except (orjson.JSONDecodeError, InputError):
        return None
    return None


def _head(data: bytes) -> bytes:
    """The start of ``data`` up to the end of its first line that is not blank."""
    start = len(data) - len(data[:_MIN_CHUNK].lstrip()) if data[:_MIN_CHUNK].strip() else 0
    end = data.find(b"\n", start)
    return data if end == -1 else data[: end + 1]


def _settle(data: bytes, name: str, settings: Settings) -> tuple[int, str | None]:
    """``(line, format)``: the first line that settles the dataset's format, as the
    one-machine path finds it (``(0, None)``: none does; ``(-1, format)``: a line of the
    first read that only one format reads settles it for every line, see
    :func:`~ctxmgr.files._loading.settled_format`)."""
    if settings.fmt is None:
        from ctxmgr.files._loading import settled_format
        from ctxmgr.files._reading import SNIFF_BYTES

        ahead = settled_format(data[:SNIFF_BYTES], name)
        if ahead is not None:
            return -1, ahead
    probe = replace(
        settings, to=None, fast=False, check_rules=False, measure=False, on_error="skip", concurrency=1, strict=False
    )
    probe_manager = MessageContextManager()
    try:
        for number, raw in numbered_lines([data], source=name):
            if not raw.strip():
                continue
            found = compact_lines(
                [raw], probe_manager, probe, first_line=number, source=name, finish=False
            ).result.format
            if found is not None:
                return number, found
    except InputError:
        pass  # a NUL in the last line: the stretch that holds it reports it
    return 0, None


@functools.lru_cache(maxsize=4)
def _manager(payload: bytes) -> BaseContextManager[Any]:
    """The manager, unpickled once per worker process (a summary chain keeps its cache)."""
    manager: BaseContextManager[Any] = pickle.loads(payload)
    return manager


def _compact_stretch(row: dict[str, Any], *, payload: bytes, settings: Settings) -> dict[str, Any]:
    """Compact one stretch: its output bytes and a pickled report."""
    early = pickle.loads(row["error"])
    empty = FileResult(source=row["name"], kind="dataset")
    if early is not None:
        return _row(row, b"", {"result": empty, "provider_errors": [], "error": early})
    first: int = row["first"]
    known = row["format"] if row["settled"] and first > row["settled"] else None  # -1: every stretch
    try:
        lines = [raw for _, raw in numbered_lines([row["data"]], first, source=row["name"])]
    except InputError as error:
        return _row(row, b"", {"result": empty, "provider_errors": [], "error": _portable(error)})
    # The stretch's result is this object whether or not a bad line stops the call: under
    # on_error="fail" it then holds the lines before the bad one, as the one-machine
    # report counts them; the output is not wanted (nothing of the file is written).
    result = FileResult(source=row["name"], kind="dataset")
    data, failure = b"", None
    try:
        done = compact_lines(
            lines,
            _manager(payload),
            settings,
            first_line=first,
            dataset_format=known,
            source=row["name"],
            finish=False,  # what conversions dropped is worded once, for the whole file
            into=result,
        )
        data = done.data()  # each line with its line feed, as the one-machine path writes it
    except InputError as error:
        failure = error if error.source is not None else error.located(row["name"])
    errors = [_portable(e) for e in result.provider_errors]
    result.provider_errors = []
    report = {
        "result": result,
        "provider_errors": errors,
        "error": None if failure is None else _portable(failure),
    }
    return _row(row, data, report)


def _row(row: dict[str, Any], data: bytes, report: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": row["name"],
        "relative": row["relative"],
        "seq": row["seq"],
        "data": data,
        "report": pickle.dumps(report),
    }
