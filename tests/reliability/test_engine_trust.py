"""`--engine ray` run on a repository a stranger changed, on a machine other users share.

One real run serves the module: the `ctxmgr` command (never `python -m`, which imports
from the current folder by Python's own rule) summarizes a dataset with `--engine ray`,
its current folder a git repository with an `orjson.py` and a `pydantic.py` planted at
its root, its key in the environment. The loopback server holds the first summary
request while the local Ray ctxmgr started is up, and meanwhile this module looks at it
as an attacker would: the sockets its processes listen on, and what a real other user
of the machine (made with `useradd`) can read of it or run in it. Then the answer is
let go and the run ends.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA
from llm_server import LLMServer, RecordedRequest, Reply

from ctxmgr.errors import OutputError

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

CTXMGR = Path(sys.executable).with_name("ctxmgr")
WORKER_KEY = "sk-victims-key-0123456789abcdef"
OTHER_USER = "ctxmgr-other"
PLANTED = ("orjson", "pydantic")  # imported by every task; a ctxmgr/ folder would be too
NOTE = re.compile(
    r"^note: --engine ray: started a local Ray for this run \(listening on 127\.0\.0\.1 only, "
    r".*files in (\S+), mode 700\); set RAY_ADDRESS to use a cluster of your own$"
)

# What a planted module does: leave a mark, then hand over to the real module, so
# that the run goes on as if nothing happened (the attack is silent).
PLANTED_CODE = """\
import os, sys
_here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_here, "RAN-" + __name__), "a") as _mark:
    _mark.write(f"{os.getpid()} key={os.environ.get('OPENAI_API_KEY', '')}\\n")
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules[__name__]
import importlib
sys.modules[__name__] = importlib.import_module(__name__)
"""

# What the other user tries, with the machine's own Python: to read the session's files
# and find the cluster's token.
READER = """\
import glob, json, os, sys
session, victim = sys.argv[1:3]
token = sys.stdin.read().strip()
seen = {"listed": None, "read": [], "token": False}
try:
    seen["listed"] = sorted(os.listdir(session))
except OSError as exc:
    seen["listed_error"] = type(exc).__name__
for path in glob.glob(os.path.join(session, "**"), recursive=True):
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        seen["read"].append(path)
        seen["token"] = seen["token"] or token.encode() in data
    except OSError:
        pass
elsewhere = glob.glob("/proc/[0-9]*/cmdline") + glob.glob("/proc/[0-9]*/environ")
for path in [os.path.join(os.path.expanduser("~" + victim), ".ray", "auth_token"), *elsewhere]:
    try:
        with open(path, "rb") as handle:
            seen["token"] = seen["token"] or token.encode() in handle.read()
    except OSError:
        pass
print(json.dumps(seen), flush=True)
"""

# What a process without the token tries: to attach a driver and run a task.
ATTACHER = """\
import json, os, sys
port, mark = sys.argv[1:3]
seen = {"attached": "ended while attaching"}
# Ray's core may end the process itself when the cluster turns it away (a fatal log, not
# an exception): this line is then the last one, and it was not let in.
print(json.dumps(seen), flush=True)
import ray
try:
    ray.init(address="127.0.0.1:" + port, log_to_driver=False, include_dashboard=False)

    @ray.remote
    def plant():
        with open(mark, "w") as handle:
            handle.write("ran in the victim's Ray")
        return os.getuid()

    seen["attached"] = ray.get(plant.remote(), timeout=30)
except BaseException as exc:
    seen["attached"] = "refused: " + type(exc).__name__
print(json.dumps(seen), flush=True)
"""


@dataclass
class Listening:
    address: str
    port: int
    process: str


@dataclass
class HeldRun:
    """What was seen of the run while Ray was up, and how it ended."""

    repo: Path
    folder: Path | None = None  # the private folder the note names
    folder_mode: int | None = None
    session: Path | None = None
    listening: list[Listening] = field(default_factory=list)
    attacker: dict[str, Any] | None = None  # what another user read
    attacher: dict[str, Any] | None = None  # what a driver without the token ran
    attacker_skipped: str | None = None
    joined_planted: bool | None = None
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""


def _descendants(root: int) -> set[int]:
    children: dict[int, set[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), set()).add(int(stat.parent.name))
    found, pending = {root}, [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    # /proc/net/tcp* print each 32-bit word of the address in the host's byte order.
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4)) if sys.byteorder == "little" else raw
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, words)


def _listening(pids: set[int]) -> list[Listening]:
    """The TCP sockets these processes listen on."""
    owner: dict[str, str] = {}
    for pid in pids:
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    owner[target[8:-1]] = name
        except OSError:
            continue  # a worker that just ended
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in owner:  # LISTEN
                address, port = fields[1].split(":")
                found.append(Listening(_address(address), int(port, 16), owner[fields[9]]))
    return found


def _other_user() -> tuple[int, int] | str:
    """A real other user of this machine: (uid, gid), or why there can be none."""
    if os.geteuid() != 0:
        return "not root: no second user can be made to attack the run"
    if shutil.which("useradd") is None or shutil.which("setpriv") is None:
        return "useradd or setpriv is not installed"
    try:
        entry = pwd.getpwnam(OTHER_USER)
    except KeyError:
        made = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER_USER],
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            return f"useradd failed: {made.stderr.strip()}"
        entry = pwd.getpwnam(OTHER_USER)
    return entry.pw_uid, entry.pw_gid


def _python_for_anyone() -> str | None:
    """An interpreter of this one's version that another user may run (the tests' may
    live under /root), to import the installed Ray with."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _attack(run: HeldRun, token: str, port: int) -> None:
    """What another user of the machine can do to the run's Ray, in two parts. What tells
    the owner from another user is file access, so a real other user tries to read the
    session and find the token; a port on 127.0.0.1 answers any user alike, so a driver
    without the token tries to attach from this interpreter (another user could not
    import this Ray: the tests' Python may live in a folder only its owner can open)."""
    common = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "RAY_ADDRESS": "",
        # Without it the attacker's Ray would turn 127.0.0.1 into the machine's address,
        # where nothing listens, and wait minutes: asking at loopback gets Ray's answer.
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_gcs_rpc_server_connect_timeout_s": "3",
        "RAY_NUM_REDIS_GET_RETRIES": "3",  # its tries at the GCS: an answer comes on the first
    }
    mark = run.repo / "ATTACKED"
    attached = _last_report([sys.executable, "-c", ATTACHER, str(port), str(mark)], env=common)
    run.attacher = {**attached, "marked": mark.exists()}

    user = _other_user()
    python = _python_for_anyone()
    if isinstance(user, str) or python is None:
        run.attacker_skipped = user if isinstance(user, str) else "no Python another user may run"
        return
    uid, gid = user
    victim = pwd.getpwuid(os.geteuid()).pw_name
    as_other = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    # The token on standard input, not as an argument: every user may read every process's arguments.
    run.attacker = _last_report([*as_other, python, "-c", READER, str(run.session), victim], env=common, given=token)


def _last_report(command: list[str], *, env: dict[str, str], given: str = "") -> dict[str, Any]:
    """The last JSON line ``command`` printed, with its exit code."""
    done = subprocess.run(
        command, input=given, capture_output=True, text=True, env=env, cwd="/", timeout=180, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(lines[-1])
    report["returncode"] = done.returncode
    return report


def _token(pids: set[int]) -> str:
    """The token of the run's Ray, as its owner can find it: in the environment of the
    processes ctxmgr started, else in Ray's default file."""
    for pid in pids:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for entry in environ:
            if entry.startswith(b"RAY_AUTH_TOKEN="):
                return entry.split(b"=", 1)[1].decode()
    default = Path.home() / ".ray" / "auth_token"
    return default.read_text().strip() if default.exists() else "no-token-found"


def _gcs_port(session: Path) -> int:
    (port_file,) = session.glob("gcs_server_port_*")
    return int(port_file.read_text())


@pytest.fixture(scope="module")
def held_run(tmp_path_factory: pytest.TempPathFactory) -> HeldRun:
    repo = tmp_path_factory.mktemp("stranger-repo")
    logs = tmp_path_factory.mktemp("logs")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    lines = (DATA / "tau-airline-slice.jsonl").read_bytes().splitlines(keepends=True)
    (repo / "chats.jsonl").write_bytes(b"".join(lines[:2]))
    for name in PLANTED:
        (repo / f"{name}.py").write_text(PLANTED_CODE)
    run = HeldRun(repo)
    release = threading.Event()

    def held(request: RecordedRequest) -> Reply:
        release.wait(300)
        return Reply.ok("The user asked to change a flight.")

    # Ray's default folder, $TMPDIR/ray, is writable by all: a file there names the
    # cluster a plain ray.init() joins. Here it names a listener that only counts.
    temporary = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    (temporary / "ray").mkdir(mode=0o777)
    # On 127.0.0.2, still loopback: Ray would read 127.0.0.1 as this machine's own address.
    planted = socket.create_server(("127.0.0.2", 0))
    (temporary / "ray" / "ray_current_cluster").write_text(f"127.0.0.2:{planted.getsockname()[1]}\n")
    drop = ("OPENAI", "GEMINI", "GOOGLE", "ANTHROPIC", "CTXMGR", "RAY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(OPENAI_API_KEY=WORKER_KEY, XDG_CACHE_HOME=str(logs / "cache"), NO_COLOR="1", COLUMNS="100")
    env.update(TMPDIR=str(temporary))
    out, err = logs / "stdout", logs / "stderr"
    with LLMServer() as server, out.open("w") as stdout, err.open("w") as stderr:
        server.responder = held
        command = [str(CTXMGR), "summarize", "chats.jsonl", "--model", "gpt-4o-mini", "--base-url", server.openai_url]
        command += ["--no-cache", "--timeout", "400", "--max-messages", "12", "--keep-recent", "4"]
        command += ["--engine", "ray", "-o", "summarized.jsonl", "--json"]
        process = subprocess.Popen(command, cwd=repo, env=env, stdout=stdout, stderr=stderr)
        try:
            while server.in_flight == 0 and process.poll() is None:
                if select.select([planted], [], [], 0.2)[0]:
                    process.kill()  # it joined the planted address, where it would wait forever
            if server.in_flight:
                # Ray is up and a worker waits on the answer: look at it now.
                notes = [m for line in err.read_text().splitlines() if (m := NOTE.match(line))]
                run.folder = Path(notes[0].group(1)) if notes else None
                if run.folder is not None:
                    run.folder_mode = run.folder.stat().st_mode & 0o777
                # The session folder: in the folder the note names, else Ray's default.
                sessions = (run.folder / "r" if run.folder else temporary / "ray").glob("session_2*")
                run.session = max(sessions, key=lambda p: p.stat().st_mtime)
                pids = _descendants(process.pid)
                run.listening = _listening(pids)
                _attack(run, _token(pids), _gcs_port(run.session))
        finally:
            release.set()
            try:
                run.returncode = process.wait(timeout=300)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                planted.setblocking(False)
                try:
                    planted.accept()[0].close()  # a connection made and closed still waits here
                    run.joined_planted = True
                except BlockingIOError:
                    run.joined_planted = False
                planted.close()
                shutil.rmtree(temporary, ignore_errors=True)
    run.stdout, run.stderr = out.read_text(), err.read_text()
    return run


def test_code_planted_in_the_repository_never_runs_in_the_workers(held_run: HeldRun) -> None:
    """Ray puts the driver's current folder first on the workers' import path: ctxmgr
    starts Ray from an empty private folder, so the workers import what is installed."""
    assert held_run.returncode == 0, held_run.stderr
    ran = {path.name: path.read_text() for path in held_run.repo.glob("RAN-*")}
    assert ran == {}, f"planted modules ran in the workers: {ran}"
    report = json.loads(held_run.stdout)
    assert report["totals"]["summary_calls"] > 0
    assert (held_run.repo / "summarized.jsonl").read_bytes().count(b"\n") == 2


def test_the_run_says_it_started_a_local_ray_and_removes_its_folder(held_run: HeldRun) -> None:
    notes = [line for line in held_run.stderr.splitlines() if NOTE.match(line)]
    assert len(notes) == 1, held_run.stderr
    report = json.loads(held_run.stdout)
    assert [n["message"] for n in report["notes"]] == [notes[0].removeprefix("note: ")]
    assert held_run.folder is not None
    assert held_run.folder_mode == 0o700
    assert not held_run.folder.exists(), "the local Ray's folder is removed at the end of the run"


def test_the_local_ray_listens_on_loopback_only(held_run: HeldRun) -> None:
    processes = {entry.process for entry in held_run.listening}
    assert {"gcs_server", "raylet"} <= processes, held_run.listening
    exposed = [e for e in held_run.listening if e.address not in ("127.0.0.1", "::1", "::ffff:127.0.0.1")]
    assert exposed == [], exposed


def test_another_user_can_read_neither_the_session_nor_the_token(held_run: HeldRun) -> None:
    if held_run.attacker_skipped is not None:
        pytest.skip(held_run.attacker_skipped)
    seen = held_run.attacker
    assert seen is not None
    assert seen["listed"] is None, f"another user listed the session folder: {seen['listed']}"
    assert seen["read"] == []
    assert seen["token"] is False, "another user found the cluster's token"


def test_a_driver_without_the_token_cannot_run_a_task_in_it(held_run: HeldRun) -> None:
    seen = held_run.attacher
    assert seen is not None
    assert seen["marked"] is False, "a task ran in the run's Ray"
    refused = str(seen["attached"]).startswith("refused: ")
    ended = seen["attached"] == "ended while attaching" and seen["returncode"] != 0
    assert refused or ended, seen


def test_a_cluster_address_planted_in_the_temporary_folder_is_not_joined(held_run: HeldRun) -> None:
    """Another user can write $TMPDIR/ray/ray_current_cluster; a plain ray.init() would
    join the cluster it names, send it the data and unpickle what comes back."""
    assert held_run.joined_planted is False
    assert held_run.returncode == 0, held_run.stderr


@pytest.mark.parametrize("name", ["../../escaped.jsonl", "/tmp/escaped.jsonl", "chats/../../../escaped.jsonl"])
def test_a_remote_name_cannot_put_a_part_outside_the_output_folder(tmp_path: Path, name: str) -> None:
    """A bucket's object names are its owner's: one holding `..` or a leading `/` is
    refused before anything is read or written, worded as the one-machine path words it."""
    from ctxmgr._engines import ray as engine

    output = engine.RayOutput(f"{tmp_path}/out/")
    with pytest.raises(OutputError) as refused:
        engine._sink(output, name, 1).commit()
    assert str(refused.value) == f"{name}: would be written outside {tmp_path}/out/"
    with pytest.raises(OutputError):
        engine._check_names(output, ["fine.jsonl", name])
    assert list(tmp_path.iterdir()) == []
    assert not Path("/tmp/escaped.jsonl").exists()
