"""Files and folders are input: links, FIFOs, devices, owners, unreadable folders, scale.

A repository (possibly a stranger's pull request) decides what its tree holds: symbolic
links pointing out of it, FIFOs that block a reader, folders nobody may read. Only what
the user names on the command line decides where writes go. Every case runs the CLI on
real files; the outside file an attack aims at must stay byte for byte as it was.
"""

from __future__ import annotations

import errno
import os
import platform
import shutil
import stat
import struct
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from _unprivileged import CTXMGR, run_unprivileged
from typer.testing import CliRunner

from ctxmgr import _io as io
from ctxmgr.cli import app
from ctxmgr.errors import OutputError

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "support-chat.json"
LINK_HINT = "--follow-symlinks writes to its target"
runner = CliRunner()


def _chat(turns: int = 3) -> bytes:
    messages: list[dict[str, str]] = [{"role": "system", "content": "be brief"}]
    for n in range(turns):
        messages += [{"role": "user", "content": f"question {n}"}, {"role": "assistant", "content": f"answer {n}"}]
    return orjson.dumps({"messages": messages})


def _users(path: Path) -> int:
    return sum(1 for m in orjson.loads(path.read_bytes())["messages"] if m["role"] == "user")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A cloned repository's folder of chats, and a file of the user's outside it."""
    chats = tmp_path / "repo" / "chats"
    chats.mkdir(parents=True)
    (chats / "a.json").write_bytes(_chat())
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "bashrc.json").write_bytes(_chat())  # a JSON file, so a rewrite would succeed
    return chats


def _outside(repo: Path) -> Path:
    return repo.parent.parent / "home" / "bashrc.json"


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def _ctxmgr(*arguments: str, timeout: float = 20, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CTXMGR, *arguments], capture_output=True, text=True, timeout=timeout, check=False, **kwargs)


# -- writes never follow a planted link ------------------------------------------------------


def test_in_place_on_a_planted_link_is_refused_and_the_target_untouched(repo: Path) -> None:
    outside = _outside(repo)
    before = outside.read_bytes()
    link = repo / "chat.json"
    link.symlink_to(os.path.relpath(outside, repo))
    result = runner.invoke(app, ["trim", "-n", "1", "-i", str(link)])
    assert result.exit_code == 2
    line = _one_error_line(result.stderr)
    assert line.startswith(f"error: {link}: is a symbolic link")
    assert LINK_HINT in line
    assert outside.read_bytes() == before
    assert link.is_symlink()
    assert sorted(os.listdir(repo)) == ["a.json", "chat.json"]  # no temporary left


@pytest.mark.parametrize(
    "command",
    [
        ["summarize", "--model", "offline", "--max-messages", "2", "--keep-recent", "1"],
        ["convert", "--to", "openai-chat"],
        ["run", "--manager", "ctxmgr.state:MessageContextManager", "--option", "max_messages=1"],
    ],
    ids=lambda c: c[0],
)
def test_every_writing_command_refuses_a_planted_link(repo: Path, command: list[str]) -> None:
    before = _outside(repo).read_bytes()
    link = repo / "chat.json"
    link.symlink_to(_outside(repo))
    for arguments in (["-i", str(link)], [str(repo / "a.json"), "-o", str(link)]):
        result = runner.invoke(app, [*command, *arguments])
        assert result.exit_code == 2, result.output
        assert _one_error_line(result.stderr).startswith(f"error: {link}: is a symbolic link")
    assert _outside(repo).read_bytes() == before
    result = runner.invoke(app, [*command, "-i", "--follow-symlinks", str(link)])
    assert result.exit_code == 0, result.output
    assert _outside(repo).read_bytes() != before


def test_follow_symlinks_writes_through_the_link_and_keeps_it(repo: Path) -> None:
    outside = _outside(repo)
    link = repo / "chat.json"
    link.symlink_to(outside)
    result = runner.invoke(app, ["trim", "-n", "1", "-i", "--follow-symlinks", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert _users(outside) == 1


def test_output_file_that_is_a_planted_link_is_refused(repo: Path) -> None:
    outside = _outside(repo)
    before = outside.read_bytes()
    out = repo / "out.json"
    out.symlink_to(outside)
    result = runner.invoke(app, ["trim", "-n", "1", str(repo / "a.json"), "-o", str(out)])
    assert result.exit_code == 2
    assert _one_error_line(result.stderr).startswith(f"error: {out}: is a symbolic link")
    assert outside.read_bytes() == before


def test_a_link_inside_the_output_folder_is_refused_even_pointing_inside(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """out/a.json -> out/b.json: the output of a.json must not land in b.json."""
    out = repo.parent / "out"
    out.mkdir()
    (out / "b.json").write_bytes(b"[1]\n")
    (out / "chats").mkdir()
    (out / "chats" / "a.json").symlink_to(out / "b.json")
    monkeypatch.chdir(repo.parent)
    result = runner.invoke(app, ["trim", "-n", "1", "chats/a.json", "-o", "out/"])
    assert result.exit_code == 2
    assert "is a symbolic link" in _one_error_line(result.stderr)
    assert (out / "b.json").read_bytes() == b"[1]\n"


def test_a_linked_subfolder_of_the_output_folder_leading_outside_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    escape = repo.parent.parent / "home"
    out = repo.parent / "out"
    out.mkdir()
    (out / "chats").symlink_to(escape)  # out/chats/a.json would land in the user's folder
    monkeypatch.chdir(repo.parent)
    for extra in ([], ["--follow-symlinks"]):
        result = runner.invoke(app, ["trim", "-n", "1", "chats/a.json", "-o", "out/", *extra])
        assert result.exit_code == 2
        assert "would be written outside out" in _one_error_line(result.stderr)
    assert sorted(os.listdir(escape)) == ["bashrc.json"]


def test_a_named_folder_planted_as_a_link_is_not_written_through(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workflow says `ctxmgr trim -i chats/` or `-o out/`; the pull request made them links."""
    home = _outside(repo).parent
    before = _outside(repo).read_bytes()
    (repo.parent / "linked").symlink_to(home)
    monkeypatch.chdir(repo.parent)
    for arguments in (["-i", "linked"], ["-i", "linked/bashrc.json"], ["chats", "-o", "linked/"]):
        result = runner.invoke(app, ["trim", "-n", "1", *arguments])
        assert result.exit_code == 2, arguments
        assert _one_error_line(result.stderr).startswith("error: linked: is a symbolic link"), arguments
        assert sorted(os.listdir(home)) == ["bashrc.json"]
        assert _outside(repo).read_bytes() == before
    # Named from outside the working folder, the path's folders are the user's own.
    monkeypatch.chdir(repo)
    result = runner.invoke(app, ["trim", "-n", "1", "-i", str(repo.parent / "linked" / "bashrc.json")])
    assert result.exit_code == 0, result.output
    assert _users(_outside(repo)) == 1


def test_dev_stdout_as_output_is_refused_and_dash_still_works(repo: Path) -> None:
    proc = _ctxmgr("trim", "-n", "1", str(repo / "a.json"), "-o", "/dev/stdout")
    assert proc.returncode == 2
    assert _one_error_line(proc.stderr).startswith("error: /dev/stdout: is a symbolic link")
    proc = _ctxmgr("trim", "-n", "1", str(repo / "a.json"), "-o", "/dev/stdout", "--follow-symlinks")
    assert proc.returncode == 2  # standard output is a pipe here: never renamed over
    assert _one_error_line(proc.stderr) == (
        "error: /dev/stdout: a FIFO (named pipe), not a regular file; not replaced (-o - writes to standard output)"
    )
    proc = _ctxmgr("trim", "-n", "1", str(repo / "a.json"), "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(proc.stdout)["messages"][-1]["content"] == "answer 2"


def test_a_file_swapped_for_a_link_while_being_written_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"[0]\n")
    for expect in (False, True):
        path = tmp_path / "chat.json"
        path.unlink(missing_ok=True)
        path.write_bytes(b"[1]\n")
        writer = io.AtomicWriter(path, expect=os.stat(path) if expect else None)
        writer.write(b"[2]\n")
        path.unlink()
        path.symlink_to(outside)  # swapped after the check, before the rename
        if expect:  # an in-place rewrite: the path changed since it was read
            with pytest.raises(OutputError, match="changed while ctxmgr was working on it"):
                writer.commit()
            assert path.is_symlink()
        else:  # the rename replaces the link itself, never its target
            writer.commit()
            assert not path.is_symlink()
            assert path.read_bytes() == b"[2]\n"
        assert outside.read_bytes() == b"[0]\n"


def test_a_file_name_cannot_forge_a_line(repo: Path) -> None:
    (repo / "x\nerror: all good.json").symlink_to(_outside(repo))
    result = runner.invoke(app, ["trim", "-n", "1", "--check", str(repo)])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        f"skipped: {repo}/x\\nerror: all good.json -> outside {repo} (a symbolic link; --follow-symlinks to include)"
    )


def test_the_project_config_cannot_turn_following_links_on(repo: Path) -> None:
    (repo.parent / "ctxmgr.toml").write_text("follow-symlinks = true\n")
    link = repo / "chat.json"
    link.symlink_to(_outside(repo))
    before = _outside(repo).read_bytes()
    proc = _ctxmgr("trim", "-n", "1", "-i", "chats/chat.json", cwd=repo.parent)
    assert proc.returncode == 2
    assert "follow-symlinks" in proc.stderr
    assert _outside(repo).read_bytes() == before


# -- folder walks and patterns do not follow links out of the tree ---------------------------


def test_a_walk_skips_and_names_links_out_of_the_tree(repo: Path) -> None:
    outside = _outside(repo)
    before = outside.read_bytes()
    (repo / "evil.json").symlink_to(outside)
    (repo / "elsewhere").symlink_to(outside.parent)  # a folder outside
    result = runner.invoke(app, ["trim", "-n", "1", "-i", "--no-backup", str(repo)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"skipped: {repo / 'elsewhere'} -> outside {repo} (a symbolic link; --follow-symlinks to include)",
        f"skipped: {repo / 'evil.json'} -> outside {repo} (a symbolic link; --follow-symlinks to include)",
        "1 file: 1 changed; 2 skipped",
    ]
    assert outside.read_bytes() == before
    assert _users(repo / "a.json") == 1
    report = orjson.loads(runner.invoke(app, ["trim", "-n", "1", "--json", str(repo)]).stdout)
    assert report["skipped"] == [
        {"path": str(repo / "elsewhere"), "reason": "symbolic link to outside the folder"},
        {"path": str(repo / "evil.json"), "reason": "symbolic link to outside the folder"},
    ]
    assert [f["path"] for f in report["files"]] == [str(repo / "a.json")]


def test_a_walk_follows_links_out_only_when_asked(repo: Path, tmp_path: Path) -> None:
    (repo / "evil.json").symlink_to(_outside(repo))
    (repo / "elsewhere").symlink_to(_outside(repo).parent)
    result = runner.invoke(app, ["trim", "-n", "1", "-o", str(tmp_path / "out"), "--follow-symlinks", str(repo)])
    assert result.exit_code == 0, result.output
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.json")) == [
        "a.json",
        "evil.json",
    ]
    # elsewhere/bashrc.json is the same file as evil.json: read once, and said so.
    assert result.stderr.splitlines() == [
        f"skipped: {repo / 'elsewhere' / 'bashrc.json'} (the same file as another input)",
        "2 files: 2 changed; 1 skipped",
    ]


def test_a_link_inside_the_tree_is_read_once_at_its_target(repo: Path) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "again.json").symlink_to("../a.json")
    (repo / "hidden.json").symlink_to(".secret.json")
    (repo / ".secret.json").write_bytes(_chat())
    result = runner.invoke(app, ["trim", "-n", "1", "--json", str(repo)])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert [f["path"] for f in report["files"]] == [str(repo / "a.json")]
    assert [s["reason"] for s in report["skipped"]] == [
        "hidden file",
        "symbolic link to a path the walk leaves out",
        "symbolic link inside the folder",
    ]


def test_a_loop_of_links_ends(repo: Path) -> None:
    (repo / "loop").symlink_to(repo)
    (repo / "sub").mkdir()
    (repo / "sub" / "up").symlink_to("..")
    for extra in ([], ["--follow-symlinks"]):
        proc = _ctxmgr("trim", "-n", "1", "--json", *extra, str(repo))
        assert proc.returncode == 0, proc.stderr
        assert [f["path"] for f in orjson.loads(proc.stdout)["files"]] == [str(repo / "a.json")]


def test_a_glob_does_not_follow_links_out(repo: Path) -> None:
    (repo / "evil.json").symlink_to(_outside(repo))
    before = _outside(repo).read_bytes()
    result = runner.invoke(app, ["trim", "-n", "1", "-i", str(repo / "*.json")])
    assert result.exit_code == 0, result.output
    assert f"skipped: {repo / 'evil.json'} -> outside {repo}" in result.stderr
    assert _outside(repo).read_bytes() == before
    assert _users(repo / "a.json") == 1


def test_a_glob_reads_a_link_inside_its_folder_at_the_target_but_never_a_hidden_one(repo: Path) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "b.json").write_bytes(_chat())
    (repo / "b.json").symlink_to("sub/b.json")
    (repo / ".env.json").write_bytes(_chat())
    (repo / "env.json").symlink_to(".env.json")
    (repo / "dir.json").symlink_to("sub")  # a folder: not searched, as for any folder a pattern matches
    result = runner.invoke(app, ["trim", "-n", "1", "-i", "--no-backup", str(repo / "*.json")])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"skipped: {repo / 'env.json'} -> .env.json (a symbolic link to a path the walk leaves out; "
        "--follow-symlinks to include)",
        "2 files: 2 changed; 1 skipped",
    ]
    assert _users(repo / "sub" / "b.json") == 1
    assert (repo / "b.json").is_symlink()
    assert (repo / ".env.json").read_bytes() == _chat()


# -- FIFOs, devices and sockets --------------------------------------------------------------


def test_a_fifo_met_in_a_walk_is_an_error_never_opened(repo: Path) -> None:
    os.mkfifo(repo / "pipe.json")
    (repo / "b.json").write_bytes(_chat())
    proc = _ctxmgr("trim", "-n", "1", "-i", "--no-backup", str(repo), timeout=15)  # opening it would block forever
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {repo / 'pipe.json'}: a FIFO (named pipe), not a regular file; not read",
        "3 files: 2 changed, 1 failed",
    ]
    assert _users(repo / "a.json") == _users(repo / "b.json") == 1
    assert stat.S_ISFIFO(os.lstat(repo / "pipe.json").st_mode)


def test_a_fifo_matched_by_a_pattern_or_met_by_validate_is_an_error(repo: Path) -> None:
    os.mkfifo(repo / "pipe.json")
    proc = _ctxmgr("trim", "-n", "1", "--check", str(repo / "*.json"), timeout=15)
    assert proc.returncode == 2
    assert "pipe.json: a FIFO (named pipe), not a regular file; not read" in proc.stderr
    for command in ("validate", "stats"):
        proc = _ctxmgr(command, str(repo), timeout=15)
        assert proc.returncode == 2, (command, proc.stderr)
        assert "a FIFO (named pipe), not a regular file" in proc.stderr


def test_a_fifo_named_as_input_is_read_as_a_stream(tmp_path: Path) -> None:
    pipe = tmp_path / "chat.json"
    os.mkfifo(pipe)

    def feed() -> None:
        with open(pipe, "wb") as writer:
            writer.write(_chat())

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    proc = _ctxmgr("trim", "-n", "1", str(pipe), timeout=15)
    feeder.join(5)
    assert proc.returncode == 0, proc.stderr
    assert sum(m["role"] == "user" for m in orjson.loads(proc.stdout)["messages"]) == 1


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for <(...)")
def test_process_substitution_and_dev_stdin_are_read(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_bytes(_chat())
    command = " ".join([*CTXMGR, "trim", "-n", "1", f"<(cat {source})"])
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=20, check=False)
    assert proc.returncode == 0, proc.stderr
    assert sum(m["role"] == "user" for m in orjson.loads(proc.stdout)["messages"]) == 1
    with source.open("rb") as stdin:
        named = subprocess.run(
            [*CTXMGR, "trim", "-n", "1", "/dev/stdin"], stdin=stdin, capture_output=True, timeout=20, check=False
        )
    assert named.returncode == 0, named.stderr
    assert sum(m["role"] == "user" for m in orjson.loads(named.stdout)["messages"]) == 1


def test_a_fifo_as_a_write_target_is_refused_not_replaced(tmp_path: Path) -> None:
    pipe = tmp_path / "chat.json"
    os.mkfifo(pipe)
    proc = _ctxmgr("trim", "-n", "1", "-i", str(pipe), timeout=15)  # reading first would block
    assert proc.returncode == 2
    line = _one_error_line(proc.stderr)
    assert line.startswith(f"error: {pipe}: a FIFO (named pipe), not a regular file; not replaced")
    source = tmp_path / "source.json"
    source.write_bytes(_chat())
    proc = _ctxmgr("trim", "-n", "1", str(source), "-o", str(pipe), timeout=15)
    assert proc.returncode == 2
    assert "not replaced (-o - writes to standard output)" in _one_error_line(proc.stderr)
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["chat.json", "source.json"]


# -- owner, group, mode and hard links -------------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_in_place_keeps_owner_group_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(_chat())
    os.chown(path, 65534, 65534)
    path.chmod(0o640)
    result = runner.invoke(app, ["trim", "-n", "1", "-i", str(path)])
    assert result.exit_code == 0, result.output
    backup = tmp_path / "chat.json.ctxmgr-removed.jsonl"
    assert result.stderr == f"backup: {backup} (ctxmgr restore {path} puts the file back)\n"
    assert (backup.stat().st_uid, stat.S_IMODE(backup.stat().st_mode)) == (os.geteuid(), 0o600)
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (65534, 65534, 0o640)
    assert _users(path) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_parallel_in_place_keeps_the_owner(tmp_path: Path) -> None:
    line = orjson.dumps({"messages": [{"role": "user", "content": "x" * 2000}, {"role": "user", "content": "y"}]})
    path = tmp_path / "big.jsonl"
    path.write_bytes((line + b"\n") * (9 * 1024 * 1024 // len(line)))
    os.chown(path, 65534, 65534)
    result = runner.invoke(app, ["trim", "-n", "1", "-i", "--jobs", "2", str(path)])
    assert result.exit_code == 0, result.output
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)
    assert path.stat().st_size < 1024 * 1024


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_an_owner_that_cannot_be_kept_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(_chat())
    os.chown(path, 65534, 65534)
    path.chmod(0o666)
    proc = run_unprivileged(["trim", "-n", "1", "-i", "--no-backup", str(path)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode().splitlines() == [
        f"warning: {path}: owner 65534:65534 not kept (not permitted); now owned by you"
    ]
    assert path.stat().st_uid == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o666
    assert _users(path) == 1


def test_a_hard_linked_file_is_rewritten_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(_chat())
    other = tmp_path / "other-name.json"
    os.link(path, other)
    result = runner.invoke(app, ["trim", "-n", "1", "-i", "--no-backup", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"warning: {path}: had 1 other hard link, which keeps the old content (the rewrite replaced this name only)"
    ]
    assert _users(path) == 1
    assert other.read_bytes() == _chat()


# -- extended attributes: the POSIX ACL and user.* ---------------------------------------------
#
# setfacl is not installed everywhere, so the ACL is written as the kernel stores it in
# system.posix_acl_access: little-endian, a u32 version (2), then entries of u16 tag,
# u16 permissions, u32 id (all ones for the entries that name no one).

ACL_VERSION = 2
USER_OBJ, USER, GROUP_OBJ, MASK, OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
NOBODY = 0xFFFFFFFF
ACL = "system.posix_acl_access"
DEFAULT_ACL = "system.posix_acl_default"
ORIGIN = "user.origin"


def _acl(*entries: tuple[int, int, int]) -> bytes:
    return struct.pack("<I", ACL_VERSION) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


# The owner may read and write, user 4242 too; the file's group nothing. The mask (rw)
# is what the mode's group bits show, so a copy without the ACL gives the group rw.
DENY_GROUP = _acl((USER_OBJ, 6, NOBODY), (USER, 6, 4242), (GROUP_OBJ, 0, NOBODY), (MASK, 6, NOBODY), (OTHER, 0, NOBODY))


def _attributes(path: Path) -> dict[str, bytes]:
    return {name: os.getxattr(path, name) for name in sorted(os.listxattr(path)) if not name.startswith("security.")}


def _with_attributes(path: Path) -> None:
    """Give ``path`` the ACL denying its group and a user attribute, or skip the test
    when the file system under the test folder keeps neither."""
    try:
        os.setxattr(path, ACL, DENY_GROUP)
        os.setxattr(path, ORIGIN, b"downloaded from \xff example")
    except OSError as exc:
        pytest.skip(f"the file system of {path.parent} has no POSIX ACLs or user attributes: {exc.strerror}")
    assert stat.S_IMODE(path.stat().st_mode) == 0o660  # the mask shows as the group's bits


_REWRITES = {
    "trim": ["trim", "-n", "1", "-i"],
    "summarize": ["summarize", "--model", "offline", "--max-messages", "2", "--keep-recent", "1", "-i"],
    "convert": ["convert", "--to", "native", "-i"],
}


@pytest.mark.parametrize("command", list(_REWRITES))
def test_an_in_place_rewrite_keeps_the_acl_and_user_attributes(tmp_path: Path, command: str) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(_chat())
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)
    _with_attributes(path)
    other = tmp_path / "other-name.json"
    os.link(path, other)
    before = (path.stat().st_uid, path.stat().st_gid, stat.S_IMODE(path.stat().st_mode))
    proc = _ctxmgr(*_REWRITES[command], str(path))
    assert proc.returncode == 0, proc.stderr
    hard_link = (
        f"warning: {path}: had 1 other hard link, which keeps the old content (the rewrite replaced this name only)"
    )
    assert hard_link in proc.stderr.splitlines()
    assert "error" not in proc.stderr
    assert path.read_bytes() != _chat()
    assert _attributes(path) == {ACL: DENY_GROUP, ORIGIN: b"downloaded from \xff example"}
    assert (path.stat().st_uid, path.stat().st_gid, stat.S_IMODE(path.stat().st_mode)) == before
    assert other.read_bytes() == _chat()
    assert _attributes(other) == {ACL: DENY_GROUP, ORIGIN: b"downloaded from \xff example"}


def test_a_folder_default_acl_does_not_widen_a_rewritten_file(tmp_path: Path) -> None:
    """The new file is created in the folder, which may hand it a default ACL the file
    never had (here: access for user 4242); the rewrite keeps the file's own, none."""
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "chat.json"
    path.write_bytes(_chat())
    path.chmod(0o600)
    default = _acl(
        (USER_OBJ, 7, NOBODY), (USER, 6, 4242), (GROUP_OBJ, 0, NOBODY), (MASK, 6, NOBODY), (OTHER, 0, NOBODY)
    )
    try:
        os.setxattr(folder, DEFAULT_ACL, default)
    except OSError as exc:
        pytest.skip(f"the file system of {tmp_path} has no POSIX ACLs: {exc.strerror}")
    proc = _ctxmgr("trim", "-n", "1", "-i", str(path))
    assert proc.returncode == 0, proc.stderr
    assert _users(path) == 1
    assert _attributes(path) == {}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# A filter, inherited across exec, that makes every call setting an extended attribute
# fail with EOPNOTSUPP: what a file system without ACLs answers. The kernel then refuses
# the copy exactly as such a target would, for a run that could read the original's.
_SETXATTR_CALLS = {"x86_64": (0xC000003E, (188, 189, 190)), "aarch64": (0xC00000B7, (5, 6, 7))}


def _refuse_setting_attributes() -> None:
    import ctypes

    arch, calls = _SETXATTR_CALLS[platform.machine()]
    load, jump_equal, ret = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
    allow, refuse = 0x7FFF0000, 0x00050000 | errno.EOPNOTSUPP  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO
    program = [(load, 0, 0, 4), (jump_equal, 0, len(calls) + 1, arch), (load, 0, 0, 0)]
    program += [(jump_equal, len(calls) - n, 0, call) for n, call in enumerate(calls)]
    program += [(ret, 0, 0, allow), (ret, 0, 0, refuse)]

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(program))(*(Filter(*entry) for entry in program))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(22, 2, ctypes.byref(Program(len(program), filters)), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


@pytest.mark.skipif(
    platform.machine() not in _SETXATTR_CALLS, reason="the syscall filter is written for x86_64 and aarch64"
)
def test_a_rewrite_that_cannot_keep_the_acl_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(_chat())
    _with_attributes(path)
    proc = _ctxmgr("trim", "-n", "1", "-i", str(path), preexec_fn=_refuse_setting_attributes)
    assert proc.returncode == 2, proc.stderr
    line = _one_error_line(proc.stderr)
    assert line.startswith(f"error: {path}: cannot keep its extended attributes {ACL} (the POSIX ACL): "), line
    assert ORIGIN in line
    assert line.endswith("not rewritten, so that its permissions do not change")
    assert path.read_bytes() == _chat()
    assert _attributes(path) == {ACL: DENY_GROUP, ORIGIN: b"downloaded from \xff example"}
    assert os.listdir(tmp_path) == ["chat.json"]


# -- a run never reads its own outputs back --------------------------------------------------


def test_an_output_folder_inside_the_input_folder_is_not_read(repo: Path) -> None:
    out = repo / "out"
    for _ in range(2):
        result = runner.invoke(app, ["trim", "-n", "1", str(repo), "-o", f"{out}/"])
        assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"skipped: {out} (the output folder)", "1 file: 1 changed; 1 skipped"]
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["a.json"]


# -- unreadable folders and files are errors, never skipped ----------------------------------


@pytest.mark.parametrize("mode", [0o000, 0o444, 0o111])
def test_check_fails_on_a_folder_it_could_not_read(repo: Path, mode: int) -> None:
    locked = repo / "locked"
    locked.mkdir()
    (locked / "b.json").write_bytes(_chat())
    locked.chmod(mode)
    try:
        proc = run_unprivileged(["trim", "-n", "100", "--check", str(repo)])
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 2, proc.stderr  # not 0: b.json was never read
    stderr = proc.stderr.decode()
    assert str(locked) in stderr
    assert "permission denied" in stderr.lower()


def test_check_fails_on_a_file_it_could_not_read(repo: Path) -> None:
    (repo / "b.json").write_bytes(_chat())
    (repo / "b.json").chmod(0)
    proc = run_unprivileged(["trim", "-n", "100", "--check", str(repo)])
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        f"error: {repo / 'b.json'}: permission denied",
        "2 files: 1 unchanged, 1 failed",
    ]


# -- scale: the folder is listed once per run, not once per file -----------------------------


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    real_listdir, real_scandir = os.listdir, os.scandir

    def listdir(path: Any = ".") -> list[str]:
        counts[os.path.abspath(path)] += 1
        return real_listdir(path)

    def scandir(path: Any = ".") -> Any:
        counts[os.path.abspath(path)] += 1
        return real_scandir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setattr(os, "scandir", scandir)
    return counts


@pytest.mark.parametrize("changed", [True, False], ids=["rewritten", "unchanged"])
def test_a_folder_is_listed_a_constant_number_of_times(tmp_path: Path, listings: Counter[str], changed: bool) -> None:
    per_size = {}
    for size in (10, 200):
        folder = tmp_path / str(size)
        folder.mkdir()
        for n in range(size):
            (folder / f"{n:04}.json").write_bytes(_chat())
        listings.clear()
        result = runner.invoke(app, ["trim", "-n", "1" if changed else "100", "-i", str(folder)])
        assert result.exit_code == 0, result.output
        per_size[size] = listings[str(folder)]
    assert per_size[10] == per_size[200] <= 2, per_size


def test_one_run_removes_leftovers_of_killed_writes_of_any_file_in_the_folder(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    (tmp_path / "a.json").write_bytes(_chat())
    (tmp_path / "gone.json").write_bytes(b"[]")
    leftover = tmp_path / f".gone.json.{int(dead.stdout)}.abcd1234{io.TEMP_SUFFIX}"
    leftover.write_bytes(b"[half")
    alive = tmp_path / f".gone.json.{os.getpid()}.abcd1234{io.TEMP_SUFFIX}"  # a write in progress
    alive.write_bytes(b"[")
    result = runner.invoke(app, ["trim", "-n", "1", "-i", "--no-backup", str(tmp_path / "a.json")])
    assert result.exit_code == 0, result.output
    assert not leftover.exists()
    assert alive.exists()
    said = f"note: {tmp_path}: removed 1 leftover temporary file of interrupted ctxmgr runs"
    assert result.stderr.splitlines() == [said]


def test_a_folder_of_nothing_but_skipped_links_says_so(repo: Path) -> None:
    (repo / "a.json").unlink()
    (repo / "evil.json").symlink_to(_outside(repo))
    result = runner.invoke(app, ["trim", "-n", "1", "--check", str(repo)])
    assert result.exit_code == 2
    line = _one_error_line(result.stderr)
    assert line == f"error: {repo}: no .json, .jsonl or .traj files in this folder (1 skipped: {repo / 'evil.json'})"
    result = runner.invoke(app, ["trim", "-n", "1", "--check", str(repo / "*.json")])
    assert result.exit_code == 2
    line = _one_error_line(result.stderr)
    assert line == f"error: {repo / '*.json'}: no file matches this pattern (1 skipped: {repo / 'evil.json'})"


@pytest.mark.parametrize("command", ["stats", "validate"])
def test_reading_commands_name_skipped_links_and_follow_them_only_when_asked(repo: Path, command: str) -> None:
    (repo / "evil.json").symlink_to(_outside(repo))
    result = runner.invoke(app, [command, str(repo), "--json"])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert [f["path"] for f in report["files"]] == [str(repo / "a.json")]
    skipped = f"{repo / 'evil.json'} -> outside {repo} (a symbolic link; --follow-symlinks to include)"
    assert report["notes"] == [{"level": "skipped", "message": skipped}]
    assert result.stderr.splitlines() == [f"skipped: {skipped}"]
    followed = orjson.loads(runner.invoke(app, [command, str(repo), "--json", "--follow-symlinks"]).stdout)
    assert sorted(f["path"] for f in followed["files"]) == [str(repo / "a.json"), str(repo / "evil.json")]


def test_hidden_files_and_folders_left_out_of_a_walk_are_named(repo: Path) -> None:
    """A walk leaves out what starts with "." (as tools leave out .git), never silently."""
    (repo / ".draft.json").write_bytes(_chat())
    (repo / ".git").mkdir()
    (repo / ".fixtures").mkdir()
    (repo / ".fixtures" / "b.json").write_bytes(_chat())
    result = runner.invoke(app, ["trim", "-n", "1", "--check", str(repo)])
    assert result.exit_code == 1  # a.json would change; the hidden ones were not read
    assert result.stderr.splitlines()[:3] == [
        f"skipped: {repo / '.draft.json'} (a hidden file; name it to include it)",
        f"skipped: {repo / '.fixtures'} (a hidden folder; name it to include it)",
        f"skipped: {repo / '.git'} (a hidden folder; name it to include it)",
    ]
    assert (
        result.stderr.splitlines()[-1]
        == "1 file: 1 would change; 3 skipped (1 hidden or package path with files not read)"
    )
    named = runner.invoke(app, ["trim", "-n", "1", "--check", str(repo / ".fixtures")])
    assert f"would change {repo / '.fixtures' / 'b.json'}" in named.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_check_names_tracked_fixtures_a_pull_request_put_in_hidden_or_package_folders(tmp_path: Path) -> None:
    """--check leaves hidden and package folders out (every repository has .git, .github,
    .venv), but one holding files git tracks is what a pull request would hide a bad
    fixture in: it is named for that, on standard error, in the closing line and in --json."""
    repo = tmp_path / "repo"
    for folder in ("fixtures", ".fixtures", "venv", ".venv", ".github"):
        (repo / folder).mkdir(parents=True)
    (repo / "fixtures" / "good.json").write_bytes(_chat(1))
    (repo / ".fixtures" / "bad.json").write_bytes(_chat(9))
    (repo / "venv" / "bad.json").write_bytes(_chat(9))
    (repo / ".github" / "workflow.yml").write_text("on: pull_request\n")
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")  # untracked, as a virtualenv is
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "fixtures", ".fixtures", "venv", ".github"], check=True)
    proc = _ctxmgr("trim", "-n", "3", "--check", ".", cwd=repo)
    assert proc.returncode == 0, proc.stderr  # left out still: only good.json was read
    lines = proc.stderr.splitlines()
    assert "skipped: ./.fixtures (a hidden folder holding 1 file git tracks, not read; name it to include it)" in lines
    assert (
        "skipped: ./venv (a folder of installed packages holding 1 file git tracks, not read; name it to include it)"
        in lines
    )
    assert "skipped: ./.github (a hidden folder; name it to include it)" in lines  # no .json in it
    assert "skipped: ./.venv (a hidden folder; name it to include it)" in lines
    assert lines[-1] == "1 file: 1 unchanged; 5 skipped (2 hidden or package paths with files not read)"
    report = orjson.loads(_ctxmgr("trim", "-n", "3", "--check", "--json", ".", cwd=repo).stdout)
    assert report["totals"]["unread"] == 2
    assert {s["path"] for s in report["skipped"] if s["reason"] == "left out, holds tracked files"} == {
        "./.fixtures",
        "./venv",
    }


def test_json_with_a_write_writes_the_data_and_reports_on_standard_output(repo: Path) -> None:
    before = (repo / "a.json").read_bytes()
    result = runner.invoke(app, ["trim", "-n", "1", "--json", "-i", str(repo / "a.json")])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    report = orjson.loads(result.stdout)
    assert report["files"][0]["destination"] == str(repo / "a.json")
    assert (repo / "a.json").read_bytes() != before


def test_a_folder_dressed_as_a_repository_cannot_hide_its_files_from_check(tmp_path: Path) -> None:
    """Git takes a folder holding HEAD, config, objects/ and refs/ for a repository of its
    own: asked from inside it, git would apply that folder's ignore rules (``bad.json``).
    The walk names the repository it found above, so the real one answers."""
    repo = tmp_path / "repo"
    fixtures = repo / "fixtures"
    fixtures.mkdir(parents=True)
    (fixtures / "good.json").write_bytes(_chat(1))
    (fixtures / "bad.json").write_bytes(_chat(9))
    (fixtures / "HEAD").write_text("ref: refs/heads/main\n")
    (fixtures / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n")
    for name in ("objects", "refs", "info"):
        (fixtures / name).mkdir()
        (fixtures / name / "keep").write_text("")
    (fixtures / "info" / "exclude").write_text("bad.json\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "fixtures"], check=True)
    proc = _ctxmgr("trim", "-n", "3", "--check", "fixtures", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    assert "would change fixtures/bad.json" in proc.stderr
    assert "ignored by git" not in proc.stderr
