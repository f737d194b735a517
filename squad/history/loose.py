"""Git objects written ahead of a commit, in plain Python, while a run still works.

A run's commit writes each changed file's blob and each changed folder's tree as a loose
object: a temporary file, a link to its name, a new fan-out folder now and then, about a
dozen system calls an object, one object after another at the run's end, inside the run's
time (a chain of 20 tasks: 20 ``status.json`` blobs and 22 trees, 1 ms each on a busy disk).
libgit2 writes no object that is already there (it only touches it), so what a task's end
makes known ahead is written here on a background thread as the task ends: its
``status.json`` blob and its folder's tree. Python's file calls let go of the GIL while they
wait, so the writes overlap the next turns instead of following the last one.

Only what the commit would write anyway, so nothing here widens what a history holds:
``status.json`` is squad's own record, which the staging policy never refuses, and a tree
names blobs by hash without holding their bytes (a task's ``output.md`` blob is left to the
commit, which checks it for credentials first). A guess that turns out wrong (a file changed
again, one the ignore rules leave out) is an unreferenced object: git's gc prunes it. Only in
a repository of SHA-1 objects whose ``.git`` is a plain folder (squad makes its histories so);
anything else is left to the commit.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
import zlib
from pathlib import Path

from squad.fsutil import read_all

__all__ = ["folder_tree", "object_id", "write_ahead", "write_object", "writes_ahead"]

_SKIPPED_SUFFIXES = (".tmp", ".lock")
"""Names the history's ignore rules leave out (atomic writes' temporary files, locks)."""


def object_id(kind: str, data: bytes) -> tuple[str, bytes]:
    """The SHA-1 id (hex) of a git object of ``kind`` holding ``data``, and its raw bytes."""
    raw = f"{kind} {len(data)}\0".encode() + data
    return hashlib.sha1(raw, usedforsecurity=False).hexdigest(), raw


def writes_ahead(git_dir: Path) -> bool:
    """Whether objects may be written into ``git_dir`` here: a plain folder (not a link, not
    a ``.git`` file) of a repository whose objects are SHA-1."""
    try:
        if not stat.S_ISDIR(os.lstat(git_dir / "objects").st_mode):
            return False
        config = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "objectformat" not in config.lower()


def write_object(git_dir: Path, kind: str, data: bytes) -> str:
    """The object (``kind``, ``data``) in ``git_dir``'s loose objects, as git writes one: a
    new temporary file linked to its name, so a reader finds the whole object or none; one
    already there is left as it is. Its id."""
    oid, raw = object_id(kind, data)
    folder = git_dir / "objects" / oid[:2]
    final = folder / oid[2:]
    if os.path.lexists(final):
        return oid
    folder.mkdir(exist_ok=True)
    # git's prune clears tmp_obj_*; a name of this writer's own, made new (O_EXCL), so no
    # other writer of the same object truncates a file already linked to its name.
    temp = folder / f"tmp_obj_squad_{os.getpid()}_{secrets.token_hex(6)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o444)
    try:
        try:
            view = memoryview(zlib.compress(raw))
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):  # another writer's: the same bytes
            os.link(temp, final)
    finally:
        temp.unlink()
    return oid


def folder_tree(folder: Path) -> tuple[bytes, dict[str, bytes]] | None:
    """The tree object's bytes for ``folder`` if it holds only regular files (none: a
    subfolder or a link makes it a commit's own work), with each file's bytes by name."""
    entries: list[tuple[bytes, bytes]] = []
    files: dict[str, bytes] = {}
    with os.scandir(folder) as listing:
        for entry in listing:
            name = entry.name
            if name.startswith(".") or name.endswith(_SKIPPED_SUFFIXES):
                continue
            read = _regular_file(entry.path)
            if read is None:
                return None
            data, info = read
            files[name] = data
            mode = b"100755" if info.st_mode & stat.S_IXUSR else b"100644"
            oid = bytes.fromhex(object_id("blob", data)[0])
            raw = os.fsencode(name)
            entries.append((raw, mode + b" " + raw + b"\0" + oid))
    if not entries:
        return None
    return b"".join(line for _, line in sorted(entries)), files


def _regular_file(path: str) -> tuple[bytes, os.stat_result] | None:
    """The bytes and status of the regular file at ``path``, never through a link (one put
    there since the folder was listed is not followed); None for anything else."""
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return read_all(fd), info
    finally:
        os.close(fd)


def write_ahead(git_dir: Path, folder: Path, blobs: tuple[str, ...] = ("status.json",)) -> None:
    """``folder``'s tree and the blobs of its files named in ``blobs``, written ahead of the
    commit that will want them (see the module docstring); nothing when ``folder`` holds more
    than files. A file system error leaves the work to the commit."""
    try:
        listed = folder_tree(folder)
        if listed is None:
            return
        tree, files = listed
        for name in blobs:
            if name in files:
                write_object(git_dir, "blob", files[name])
        write_object(git_dir, "tree", tree)
    except OSError:
        return
