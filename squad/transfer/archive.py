"""The export archive: a gzipped tar written atomically, and read back refusing anything that
could escape, surprise or exhaust the reader.

An archive holds only regular files and folders with relative names under the top-level
entries :data:`TOP`. Reading checks every member before any byte of it is written: no
absolute name, no ``..``, no backslash or NUL, no link (symbolic or hard), device or FIFO,
no name longer than :data:`MAX_NAME`, no more than :data:`MAX_MEMBERS` members, no file over
:data:`MAX_FILE_BYTES` and no more than :data:`MAX_TOTAL_BYTES` in all (counted as the bytes
are read, not as the header claims). Files are created with ``O_EXCL`` and ``O_NOFOLLOW``
inside a new folder, so nothing outside it is ever touched; a refusal is a
:class:`~squad.errors.UsageError` naming the member, and the caller removes the folder.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tarfile
import time
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from squad.errors import UsageError
from squad.fsutil import fsync_dir

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_MEMBERS",
    "MAX_NAME",
    "MAX_TOTAL_BYTES",
    "TOP",
    "extract",
    "write_archive",
]

TOP = frozenset(
    {"manifest.json", "workspace", "experience.jsonl", "decisions.jsonl", "boot", "squad.yaml"}
)
MAX_MEMBERS = 500_000
MAX_NAME = 1024
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_TOTAL_BYTES = 8 * 1024 * 1024 * 1024
_CHUNK = 1 << 20


def write_archive(target: Path, members: Iterable[tuple[str, Path | bytes]]) -> int:
    """Write ``members`` (archive name, file on disk or bytes) to ``target`` atomically: a
    temporary file beside it, renamed over nothing (an existing ``target`` is refused by the
    caller). Returns the archive's size."""
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with tarfile.open(temp, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            for name, source in members:
                info = tarfile.TarInfo(name)
                info.mode = 0o644
                info.mtime = int(time.time())
                if isinstance(source, bytes):
                    info.size = len(source)
                    tar.addfile(info, io.BytesIO(source))
                    continue
                st = source.lstat()
                info.size = st.st_size
                info.mtime = int(st.st_mtime)
                with source.open("rb") as handle:
                    tar.addfile(info, handle)
        with temp.open("rb") as handle:
            os.fsync(handle.fileno())
        temp.rename(target)
        fsync_dir(target.parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    return target.stat().st_size


def _checked_name(name: str) -> PurePosixPath:
    if not name or len(name) > MAX_NAME or "\x00" in name or "\\" in name:
        raise UsageError(f"archive member {name[:200]!r} has a name squad never writes")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or name.startswith("/"):
        raise UsageError(f"archive member {name[:200]!r} would be written outside the squad")
    if not path.parts or path.parts[0] not in TOP:
        raise UsageError(
            f"archive member {name[:200]!r} is not part of a squad export (expected only "
            f"{', '.join(sorted(TOP))})"
        )
    return path


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym() or member.islnk():
        return "a link"
    if member.isdev() or member.ischr() or member.isblk():
        return "a device"
    if member.isfifo():
        return "a FIFO"
    return "a special entry"


def extract(archive: Path, into: Path) -> list[str]:
    """Extract ``archive`` into the new folder ``into`` (made here; it must not exist);
    the names of the files written. Every refusal is a UsageError naming the member."""
    try:
        size = archive.stat().st_size
    except OSError as exc:
        raise UsageError(f"cannot read {archive}: {exc.strerror or exc}") from None
    if not archive.is_file():
        raise UsageError(f"{archive} is not a file")
    if size > MAX_TOTAL_BYTES:
        raise UsageError(f"{archive} is {size:,} bytes, over the {MAX_TOTAL_BYTES:,}-byte cap")
    into.mkdir()
    written: list[str] = []
    total = 0
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for count, member in enumerate(tar, start=1):
                if count > MAX_MEMBERS:
                    raise UsageError(f"{archive} has over {MAX_MEMBERS:,} members")
                path = _checked_name(member.name)
                if member.isdir():
                    _make_dirs(into, path.parts)
                    continue
                if not member.isreg():
                    raise UsageError(
                        f"archive member {member.name[:200]!r} is {_kind(member)}; a squad "
                        "export holds only files and folders"
                    )
                if member.size > MAX_FILE_BYTES:
                    raise UsageError(
                        f"archive member {member.name[:200]!r} is {member.size:,} bytes, over "
                        f"the {MAX_FILE_BYTES:,}-byte cap"
                    )
                total += _copy(tar, member, into, path)
                if total > MAX_TOTAL_BYTES:
                    raise UsageError(f"{archive} holds over {MAX_TOTAL_BYTES:,} bytes")
                written.append(str(path))
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, tarfile.TarError | EOFError):
            reason = exc.strerror or str(exc)
        else:
            reason = str(exc) or type(exc).__name__
        raise UsageError(
            f"{archive} is not a readable squad export (a gzipped tar): {reason}"
        ) from None
    return written


def _make_dirs(root: Path, parts: tuple[str, ...]) -> Path:
    folder = root
    for part in parts:
        folder = folder / part
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            folder.mkdir()
            continue
        if not stat.S_ISDIR(mode):
            raise UsageError(f"archive member {'/'.join(parts)!r} clashes with a file before it")
    return folder


def _copy(tar: tarfile.TarFile, member: tarfile.TarInfo, root: Path, path: PurePosixPath) -> int:
    folder = _make_dirs(root, path.parts[:-1])
    target = folder / path.parts[-1]
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, 0o644)
    except FileExistsError:
        raise UsageError(f"archive member {member.name[:200]!r} appears twice") from None
    source = tar.extractfile(member)
    assert source is not None  # a regular file
    copied = 0
    try:
        while chunk := source.read(_CHUNK):
            copied += len(chunk)
            if copied > member.size or copied > MAX_FILE_BYTES:
                raise UsageError(f"archive member {member.name[:200]!r} is longer than it says")
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return copied
