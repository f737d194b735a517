"""How squad reads and rewrites an agent's memory files without losing a byte of anyone's.

Squad's writers share a lock (:func:`locked`); a person editing the file takes none, so a
write never clobbers a change made between its read and its rename
(:func:`write_unclobbered`): the file is held open from the read on; a rename over it or a
rewrite seen before the rename (identity, size, bytes) makes the write start again on the new
bytes, and lines appended to it meanwhile are carried over to the new file. A file someone
keeps rewriting is a :class:`StaleWriteError`, nothing written. An append adds in place.

A write never changes bytes it did not mean to: a file made read-only and text that cannot be
stored as UTF-8 are refused. A folder or other non-file where the file belongs is a clear
error for reads and writes alike. :mod:`squad.memory.files` (``memory.md``) and
:mod:`squad.memory.daily` (the dated logs) build on these.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from squad.clock import Clock, utc_now
from squad.diskfull import as_disk_full
from squad.errors import MemoryError_, MemoryFileError, StaleWriteError
from squad.fsutil import append, atomic_write, read_all, read_when_no_writer, replace_if_unchanged
from squad.history.hooks import NO_HISTORY, WriteHook
from squad.history.merge import carry_over
from squad.memory.audit import AuditLog, sha256_text
from squad.paths import check_name

if TYPE_CHECKING:
    from filelock import FileLock

__all__ = [
    "DEFAULT_CAP_BYTES",
    "LOCK_TIMEOUT_S",
    "WRITE_ATTEMPTS",
    "AgentFile",
    "append_unclobbered",
    "lock_file",
    "locked",
    "mkdir_lock",
    "not_utf8",
    "read_file_bytes",
    "refuse_read_only",
    "refuse_unencodable",
    "rewrite",
    "version_of",
    "write_failed",
    "write_unclobbered",
]


LOCK_TIMEOUT_S = 30.0


DEFAULT_CAP_BYTES = 50 * 1024


WRITE_ATTEMPTS = 20
"""How often a write starts again on a file someone else keeps rewriting before giving up."""


def locked(path: Path) -> FileLock:
    """The lock every writer of ``path`` holds (a ``.<name>.lock`` file beside it).

    filelock (and the logging it imports) loads here, on the first write: a command that
    only reads memory (``squad memory context``) never locks."""
    from filelock import FileLock

    return FileLock(str(lock_file(path)), timeout=LOCK_TIMEOUT_S)


def lock_file(path: Path) -> Path:
    """The file of :func:`locked`'s lock of ``path``."""
    return path.with_name(f".{path.name}.lock")


class AgentFile:
    """What every per-agent memory file shares: where, how big it may grow, clock, audit."""

    def __init__(
        self,
        workspace: Path,
        agent: str,
        *,
        cap_bytes: int = DEFAULT_CAP_BYTES,
        clock: Clock = utc_now,
        history: WriteHook = NO_HISTORY,
    ) -> None:
        """``history`` is held around each write and told its bytes (the workspace's
        history: committed alone outside a run, with the run inside one)."""
        self.workspace = workspace
        self.agent = check_name(agent, what="agent id")
        self.cap_bytes = cap_bytes
        self._clock = clock
        self._audit = AuditLog(workspace)
        self._history = history


class _NoFile(Exception):  # control flow inside one rewrite: never raised out of it
    """The file to rewrite is not there (a rewrite never makes one)."""


def rewrite(
    path: Path,
    relative: str,
    make: Callable[[bytes], bytes],
    *,
    lock: Path | None = None,
) -> tuple[bytes, bytes] | None:
    """Replace the file at ``path`` with ``make(its bytes)`` as squad's memory writes do: under
    the lock its writers take (:func:`locked` of ``lock``, the file itself by default), losing
    no change a person makes meanwhile (:func:`write_unclobbered`), atomically. For rewrites
    of a whole file that are no section edit (a credential scan's redactions). The bytes before
    and after; None when there is no file (none is made). A read-only file is refused
    (:class:`MemoryFileError`), a lock held past its timeout is a :class:`MemoryError_`."""

    def made(raw: bytes | None) -> bytes:
        if raw is None:
            raise _NoFile
        refuse_read_only(path, relative)
        return make(raw)

    from filelock import Timeout

    try:
        with locked(lock or path):
            before, after = write_unclobbered(path, relative, made)
    except _NoFile:
        return None
    except Timeout:
        raise MemoryError_(f"{relative} is locked by another writer; try again") from None
    except OSError as exc:
        raise write_failed(exc, path, relative) from None
    assert before is not None  # made() refuses a missing file
    return before, after


def append_unclobbered(
    path: Path, relative: str, make: Callable[[bytes | None], bytes]
) -> tuple[bytes | None, bytes]:
    """Add to the end of ``path``, in place (``O_APPEND``, as ``>>`` does), what ``make(its
    bytes)`` adds after them; a file not there yet is made whole (:func:`write_unclobbered`).
    Nothing is replaced, so a person appending at the same time, even through a descriptor
    opened long before, loses nothing: both writes land whole, one after the other. Returns
    the bytes read and those bytes with squad's addition (what history and audit record)."""
    with _held(path, relative) as (_, raw):
        if raw is not None:
            data = make(raw)
            if not data.startswith(raw):
                raise ValueError("an append must keep the file's bytes as they are")
            append(path, data[len(raw) :])
            return raw, data
    return write_unclobbered(path, relative, make)


def write_unclobbered(
    path: Path, relative: str, make: Callable[[bytes | None], bytes]
) -> tuple[bytes | None, bytes]:
    """Replace ``path`` with ``make(its bytes)`` (None: no file) and lose nobody's change.

    The caller holds the file's lock, which squad's writers share; a person does not take it.
    So the file is held open from the read on. Replaced or rewritten before the rename, the
    write starts again on what the file holds then. Lines appended to it meanwhile (the usual
    hand edit: ``>>``, an editor's append) went to the file the rename takes away: they are
    read there and appended to the new file, as the person appended them (after any lines they
    appended since the rename, which are there already). A rewrite in the instant between the
    check and the rename is carried over with a line merge (:func:`carry_over`). Returns the
    bytes the write was made from and the bytes it wrote (so history and audit record squad's
    own change; what a person wrote stays theirs).
    """
    made: tuple[bytes | None, bytes] | None = None
    late: tuple[bytes, bytes] | None = None  # (the file as replaced, what a person made it)
    for _ in range(WRITE_ATTEMPTS):
        with _held(path, relative) as (fd, raw):
            if late is None:
                data = make(raw)
                if raw is not None and data == raw:
                    return raw, data  # nothing to change: the file is left as it is
            else:
                carried = carry_over(*late, raw or b"")
                if carried is None:
                    raise MemoryFileError(_unmerged(path, relative, late[1]))
                data = carried
            if not replace_if_unchanged(path, data, fd, raw):
                continue
            after = read_when_no_writer(fd) if fd is not None and raw is not None else None
        if made is None:
            made = (raw, data)
        if after is None or after == raw:
            return made
        assert raw is not None
        if after.startswith(raw):
            tail = after[len(raw) :]
            if data and not data.endswith((b"\n", b"\r")) and not tail.startswith(b"\n"):
                tail = b"\n" + tail
            append(path, tail)
            return made
        late = (raw, after)
    if made is None:
        raise StaleWriteError(
            f"{relative} kept changing while squad wrote it ({WRITE_ATTEMPTS} tries): someone "
            "else is rewriting it; nothing was written, try again when they are done"
        )
    assert late is not None
    raise MemoryFileError(_unmerged(path, relative, late[1]))


def _unmerged(path: Path, relative: str, theirs: bytes) -> str:
    """Keep a change squad could not carry over beside the file; the message saying where."""
    kept = path.with_name(f"{path.name}.{utc_now().strftime('%Y%m%dT%H%M%S%f')}.unmerged")
    atomic_write(kept, theirs)
    return (
        f"{relative} was changed by someone else at the moment squad wrote it, and squad could "
        f"not merge that change into its own; their version is kept whole in {kept.name} "
        "beside it: merge it by hand"
    )


@contextmanager
def _held(path: Path, relative: str) -> Iterator[tuple[int | None, bytes | None]]:
    """The descriptor and bytes of the regular file at ``path`` (both None: no file), the
    descriptor open for the block."""
    fd = _open_regular(path, relative)
    if fd is None:
        yield None, None
        return
    try:
        try:
            raw = read_all(fd)
        except OSError as exc:
            raise MemoryFileError(f"cannot read {relative}: {exc.strerror}") from None
        yield fd, raw
    finally:
        os.close(fd)


def write_failed(exc: OSError, path: Path, relative: str) -> MemoryError_:
    """A memory write the disk refused; on a full disk, which disk, its free space and what
    to do (still a memory error: the agent or person who wrote is told the write failed)."""
    full = as_disk_full(exc, path)
    said = f"cannot write {relative}: {exc.strerror}; nothing was written"
    return MemoryError_(said if full is None else f"{said}: {full}")


def mkdir_lock(path: Path) -> FileLock:
    path.parent.mkdir(parents=True, exist_ok=True)
    return locked(path)


def version_of(raw: bytes) -> str:
    return sha256_text(raw) if raw else ""


def read_file_bytes(path: Path, relative: str) -> bytes | None:
    """The bytes of the regular file at ``path``; None when there is none.

    A folder, pipe or other non-file in its place, or a file that cannot be read, is a
    :class:`MemoryFileError` naming ``relative`` (never a wait on a pipe, never a traceback).
    """
    fd = _open_regular(path, relative)
    if fd is None:
        return None
    try:
        return read_all(fd)  # a regular file (checked): read whole, however large it grew
    except OSError as exc:
        raise MemoryFileError(f"cannot read {relative}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _open_regular(path: Path, relative: str) -> int | None:
    """A descriptor of the regular file at ``path``; None when there is none."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise MemoryFileError(_not_a_file(relative, "a folder")) from None
    except OSError as exc:
        raise MemoryFileError(f"cannot read {relative}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise MemoryFileError(f"cannot read {relative}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise MemoryFileError(_not_a_file(relative, _kind(mode)))
    return fd


def refuse_read_only(path: Path, relative: str) -> None:
    """Refuse to replace a file someone made read-only: a rename would quietly defeat that."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(status.st_mode)
    if not mode & 0o222:
        raise MemoryFileError(
            f"{relative} is read-only (mode {mode:04o}), so squad leaves it as it is and "
            f"nothing was written; to let squad write it again: chmod u+w {path}"
        )
    if not os.access(path, os.W_OK):
        raise MemoryFileError(
            f"{relative} is not writable by this user (mode {mode:04o}, owner uid "
            f"{status.st_uid}); nothing was written. Fix its owner or mode to let squad write it"
        )


def refuse_unencodable(text: str, *, what: str) -> None:
    """Refuse text that cannot be stored as UTF-8 (a lone surrogate, from broken JSON say)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MemoryError_(
            f"the {what} holds {text[exc.start]!r} at character {exc.start}, which is not a "
            "Unicode character and cannot be stored; nothing was written"
        ) from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    return "a socket" if stat.S_ISSOCK(mode) else "a device"


def _not_a_file(relative: str, what: str) -> str:
    return (
        f"{relative} is {what}, not a file squad can read or write; move it aside (squad "
        "creates the file when it first writes), then try again"
    )


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def not_utf8(raw: bytes, exc: UnicodeDecodeError, relative: str) -> str:
    """Where ``raw`` stops being UTF-8, as a person fixes it: byte offset, line, column."""
    start = exc.start
    line = len(_LINE_BREAK.findall(raw, 0, start)) + 1
    column = start - max(raw.rfind(b"\n", 0, start), raw.rfind(b"\r", 0, start))
    bad = " ".join(f"0x{byte:02x}" for byte in raw[start : exc.end])
    hint = (
        "it looks like UTF-16: save it as UTF-8"
        if raw.startswith((b"\xff\xfe", b"\xfe\xff"))
        else "fix or delete that byte in an editor, or convert the whole file to UTF-8 "
        "(iconv -f latin1 -t utf-8, say)"
    )
    return (
        f"{relative} is not valid UTF-8: byte offset {start} (line {line}, column {column}) "
        f"holds {bad}. squad will not rewrite a file it cannot read exactly, so nothing was "
        f"written; {hint}, then try again"
    )
