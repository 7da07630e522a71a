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

Where Ray runs: ``RAY_ADDRESS`` names an existing cluster; without it a local Ray is
started for the run (a few seconds). A Ray already started in this process (a library
user's, the tests') is used as it is. ctxmgr must be installed on the workers.

Keys: a worker reads its provider's key from its own environment, as ctxmgr does on
one machine. Nothing ctxmgr sends to Ray holds a key: the ``runtime_env`` it passes
carries no variable, and a manager whose pickled form holds a key known to this
process (``--api-key-file``, a key variable) is refused before anything is sent.
"""

from __future__ import annotations

import functools
import logging
import os
import pickle
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any

from ctxmgr.errors import InputError, OutputError, UsageError
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
) -> list[FileResult]:
    """Compact the datasets at ``paths`` (files or folders, anything Ray Data reads)
    with Ray Data tasks, writing to ``output``; one :class:`FileResult` per file, in order.

    Raises:
        UsageError: Ray is not installed, a key would be shipped, or several files
            would go to one file or standard output.
    """
    ray = _import_ray()
    payload = _shippable(manager)
    _connect(ray)
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
    names = _Names(readable)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    split = functools.partial(_split, names=names, settings=settings, chunk_bytes=chunk_bytes, cpus=cpus)
    compact = functools.partial(_compact_stretch, payload=payload, settings=settings)
    try:
        files = ray.data.read_binary_files([names.readable(p) for p in readable], include_paths=True)
    except (OSError, ValueError) as exc:  # nothing found at a remote path, no such bucket...
        raise InputError(f"cannot read: {exc}", source=", ".join(readable)) from None
    _check_one_file(output, files.input_files())
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


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return ray


def _connect(ray: Any) -> None:
    """Join the cluster ``RAY_ADDRESS`` names, else start a local Ray (unless this
    process already has one)."""
    if ray.is_initialized():
        return
    address = os.environ.get("RAY_ADDRESS") or None
    ray.init(
        address=address,
        runtime_env=runtime_env(),
        include_dashboard=False,
        log_to_driver=False,  # the workers' log lines are Ray's, not ctxmgr's report
        configure_logging=False,
    )


def _shippable(manager: BaseContextManager[Any]) -> bytes:
    """The manager as the tasks receive it; refused if it holds a key this process knows."""
    import ray.cloudpickle as cloudpickle

    from ctxmgr._redact import hide_url_credentials, scrub

    dumps: Callable[[Any], bytes] = cloudpickle.dumps  # pickles closures and local classes too
    payload = dumps(manager)
    text = payload.decode("latin-1")
    if scrub(text) != hide_url_credentials(text):
        raise UsageError(
            "--engine ray sends no API key to the workers: drop --api-key-file and set the provider's "
            "key variable (OPENAI_API_KEY, GEMINI_API_KEY) in the workers' environment"
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
                return given, os.path.basename(bare)
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
    if len(found) > 1 and output.writes:
        _sink(output, "", 2)


def _sink(output: RayOutput, relative: str, index: int) -> Sink:
    if not output.writes:
        return NullSink()
    path = output.path
    if path is None or path == "-":
        if index > 1:
            raise UsageError("several inputs cannot all go to standard output; use -o DIR/")
        return StdoutSink()
    if path.endswith("/") or ("://" not in path and os.path.isdir(path)):
        stem = relative[: -len(".jsonl")] if relative.endswith(".jsonl") else relative
        base = path.rstrip("/") + "/" + stem
        return _PartsSink(base)
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
        for number, part in enumerate(self._parts):
            target = f"{self._base}-{number:05d}.jsonl"
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
        error = InputError(
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


def _head(data: bytes) -> bytes:
    """The start of ``data`` up to the end of its first line that is not blank."""
    start = len(data) - len(data[:_MIN_CHUNK].lstrip()) if data[:_MIN_CHUNK].strip() else 0
    end = data.find(b"\n", start)
    return data if end == -1 else data[: end + 1]


def _settle(data: bytes, name: str, settings: Settings) -> tuple[int, str | None]:
    """``(line, format)``: the first line that settles the dataset's format, as the
    one-machine path finds it (``(0, None)``: none does)."""
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
    known = row["format"] if row["settled"] and first > row["settled"] else None
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
