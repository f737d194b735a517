"""Durable file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import queue
import secrets
import signal
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "SQLITE_COMPANIONS",
    "append",
    "atomic_write",
    "create_new",
    "durable_later",
    "fsync_dir",
    "in_background",
    "new_file_over",
    "private_dir",
    "private_file",
    "read_all",
    "read_up_to",
    "read_when_no_writer",
    "replace_if_unchanged",
    "rewrite_in_place",
]


@functools.cache
def _token(pid: int) -> str:
    """This process's part of temporary names: its pid and a random part (a pid alone
    repeats across containers sharing a folder). Keyed by pid, so a fork gets its own."""
    return f"{pid:x}-{secrets.token_hex(4)}"


def fsync_dir(path: Path) -> None:
    """Make a rename or creation inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def durable_later(path: Path) -> Callable[[], None]:
    """Make the file ``path`` (just written or renamed into place) and its folder entry
    durable in the background (:func:`in_background`); the returned call waits for that,
    raising what the fsync raised. The caller does other durable work meanwhile (a store
    commit): the two fsyncs overlap instead of following each other."""

    def sync() -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(path.parent)

    return in_background(sync)


def in_background(work: Callable[[], object]) -> Callable[[], None]:
    """Run ``work`` (a few file system calls: an fsync, a history object written ahead) on
    one of this process's few background threads; the returned call waits for it and raises
    what it raised (nothing need wait). The threads live as long as the process: starting one
    per file cost a turn 0.2-0.7 ms, more than the fsync it waited for on a quiet disk."""
    return _BACKGROUND.submit(work)


class _Background:
    """Up to :attr:`MOST` daemon threads taking jobs from one queue, each started when a job
    finds no thread idle; a forked child starts its own (the parent's are not in it)."""

    MOST = 4
    """Enough for the tasks of a parallel step to fsync together (one journal commit on
    ext4 serves the fsyncs waiting for it)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """No thread, nothing queued (a forked child's state: its parent's threads are not
        in it, and its lock may have been held by one of them)."""
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._threads = 0
        self._idle = 0
        """Threads waiting for a job."""
        self._waiting = 0
        """Jobs queued that no thread has taken yet."""

    def submit(self, work: Callable[[], object]) -> Callable[[], None]:
        done = threading.Event()
        failed: list[BaseException] = []

        def job() -> None:
            try:
                work()
            except BaseException as exc:  # noqa: BLE001  # handed to the waiting caller
                failed.append(exc)
            finally:
                done.set()

        with self._lock:
            self._jobs.put(job)
            self._waiting += 1
            if self._waiting > self._idle and self._threads < self.MOST:
                self._threads += 1
                self._idle += 1
                threading.Thread(
                    target=self._work, args=(self._jobs,), name="squad-background", daemon=True
                ).start()

        def wait() -> None:
            done.wait()
            if failed:
                raise failed[0]

        return wait

    def _work(self, jobs: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            job = jobs.get()
            with self._lock:
                self._waiting -= 1
                self._idle -= 1
            job()
            with self._lock:
                self._idle += 1


_BACKGROUND = _Background()
"""The process's background file work (no thread until the first job)."""
if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_BACKGROUND.reset)


def _temp_name(path: Path) -> Path:
    """A temporary name beside ``path`` that no other writer uses: this process's token and
    this thread's id."""
    return path.with_name(f".{path.name}.{_token(os.getpid())}-{threading.get_ident():x}.tmp")


def _write_temp(path: Path, data: bytes, *, durable: bool = True, mode: int | None = None) -> Path:
    """``data`` in a new temporary file beside ``path``; ``mode`` sets its permission bits
    exactly (no umask), otherwise it gets 0o644 less the umask, like any new file."""
    temp = _temp_name(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if mode is not None and hasattr(os, "fchmod"):  # Windows before 3.13 has none
            os.fchmod(fd, mode)
        if durable:
            os.fsync(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    finally:
        os.close(fd)
    return temp


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data``: temporary file, fsync, rename, fsync the folder.

    ``durable=False`` skips the fsyncs: still atomic for readers and across a process kill
    (the page cache survives it), but an OS crash may lose it. For files derived from the
    store (``status.json``) that the next write rewrites anyway.

    The new file keeps the permission bits of the regular file it replaces (a 0o600 file
    stays 0o600, a read-only one stays read-only): a rename would otherwise swap in a
    default-mode file. Refusing to replace a read-only file is the caller's policy.
    """
    _replace(path, data, durable=durable, unless=lambda: False)


def _replace(path: Path, data: bytes, *, durable: bool, unless: Callable[[], bool]) -> bool:
    """Write ``data`` beside ``path`` and rename it over, unless ``unless()`` says no once it
    is on disk (the temporary file is then removed); True if ``path`` was replaced."""
    temp = _write_temp(path, data, durable=durable, mode=_permissions(path))
    try:
        if unless():
            temp.unlink()
            return False
        temp.replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    if durable:
        fsync_dir(path.parent)
    return True


def replace_if_unchanged(
    path: Path, data: bytes, seen_fd: int | None, seen: bytes | None, *, durable: bool = True
) -> bool:
    """Replace ``path`` with ``data`` unless it changed since it was read as ``seen`` through
    the descriptor ``seen_fd`` (both None: there was no file); False, nothing written, if it
    did. Another writer that takes no lock (a person's editor) is seen by the file's identity
    (device, inode: a rename over it) and its bytes (a rewrite, even of the same size within
    one timestamp tick), checked after the new file is on disk, right before the rename.

    Bytes only appended meanwhile (a shell's ``>>``, a logger) are no change here: they went
    to the file still open as ``seen_fd``, which the rename takes away from ``path``; the
    caller reads them there (:func:`read_all`) after the rename and adds them to the new file
    (:func:`append`). So a steady appender cannot keep a write from ever landing, and what it
    writes in the instant between the check and the rename is found the same way.
    """
    if seen_fd is None or seen is None:
        return create_new(path, data)  # never clobbers a file made since the read
    return _replace(path, data, durable=durable, unless=lambda: _changed(path, seen_fd, seen))


def _changed(path: Path, seen_fd: int, seen: bytes) -> bool:
    """Whether the file at ``path`` is no longer the one open as ``seen_fd`` holding ``seen``
    (or ``seen`` followed by appended bytes)."""
    try:
        now = path.stat()
    except FileNotFoundError:
        return True
    held = os.fstat(seen_fd)
    if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino) or held.st_size < len(seen):
        return True
    return read_all(seen_fd)[: len(seen)] != seen


def append(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Add ``data`` at the end of ``path`` in place, as ``>>`` does: never replaces anything,
    and other appenders' writes stay whole beside it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


WRITER_WAIT_S = 1.0
"""How long :func:`read_when_no_writer` waits for the last writer of a replaced file."""
_F_SETLEASE = getattr(fcntl, "F_SETLEASE", None)
_F_SETSIG = getattr(fcntl, "F_SETSIG", 10)


def read_when_no_writer(fd: int, *, timeout_s: float = WRITER_WAIT_S) -> bytes:
    """Every byte of the file open as ``fd`` (read-only) once no process holds it open for
    writing, or after ``timeout_s``: what a file just renamed away ends up holding.

    A person's ``>>`` opens the file, writes and closes; one who opened it just before squad's
    rename writes to the file the rename took away, maybe after squad read it. Linux tells
    whether anyone still has a file open for writing: a read lease (``F_SETLEASE``) is refused
    while someone does. Taken and given back at once; a lease break (an open through another
    link in that instant) is signalled as SIGURG, which is ignored, instead of SIGIO, which
    would end the process. Where leases are not supported (another system, some network
    filesystems) the file is read again after 5 ms until it stops growing.
    """
    deadline = time.monotonic() + timeout_s
    if _F_SETLEASE is not None:
        while True:
            try:
                fcntl.fcntl(fd, _F_SETSIG, signal.SIGURG)
                fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
            except OSError as exc:
                if exc.errno != errno.EAGAIN:
                    break  # no leases here: settle instead
                if time.monotonic() >= deadline:
                    return read_all(fd)
                time.sleep(0.001)
                continue
            fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
            return read_all(fd)
    seen = read_all(fd)
    while time.monotonic() < deadline:
        time.sleep(0.005)
        now = read_all(fd)
        if now == seen:
            break
        seen = now
    return seen


def read_all(fd: int) -> bytes:
    """Every byte of the regular file open as ``fd``, from its start (the offset is kept)."""
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 16, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _permissions(path: Path) -> int | None:
    """The permission bits of the regular file at ``path`` (links followed), if there is one."""
    try:
        status = path.stat()
    except OSError:  # missing, or not reachable: the rename will say what is wrong
        return None
    return stat.S_IMODE(status.st_mode) & 0o777 if stat.S_ISREG(status.st_mode) else None


def new_file_over(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` as a new file: the old one (if any) unlinked, then a new one
    created there, with the old one's permission bits; not fsynced.

    Cheaper than :func:`atomic_write` on a busy ext4 (a rename over an existing file makes it
    write the new file's data out first: about 2 ms there, against 0.1-0.2 ms for this), but
    not atomic: a reader may find no file, or an empty one, for the moment of the write, and
    a kill in that moment leaves it so. Only for files something rewrites anyway whose
    moment without content hurts no one: a task's ``status.json`` (a view of the store), and
    its ``output.md`` before the store says the task is done (a task that is not done is
    redone on resume, and nothing reads its output until then)."""
    mode = _permissions(path)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644 if mode is None else mode)
    except FileExistsError:  # another writer made one meanwhile: replace it whole
        atomic_write(path, data, durable=False)
        return
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


IN_PLACE_MAX = 4096
"""The largest text :func:`rewrite_in_place` writes in place: one page of the page cache,
which one ``write`` fills whole or not at all, a kill notwithstanding."""


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Put ``data`` in the file ``path`` by writing over its start, in one write, padded with
    spaces to the old text's length, then cut to its own length; the file (and its folder)
    made when missing. Not fsynced.

    No new file, no rename, no truncation to nothing: the file system's journal has no name
    or inode to change, and ext4 does not force the data out first as it does for a rename
    over a file or a truncation to nothing (:func:`new_file_over` still unlinks one and
    makes another). Only for a small text a reader takes whole and in which trailing spaces
    mean nothing (JSON), with one writer at a time: a task's ``status.json``. A text of one
    page is written whole or not at all, so a kill leaves the old text, the new one padded,
    or the new one, never a mix and never nothing (after the first write); a reader in the
    instant of the write may see a mix. Past :data:`IN_PLACE_MAX` (the old text or the new)
    it is :func:`new_file_over`.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o644)
    except OSError:  # a link, a folder, a pipe...: replaced by a file, or its error raised
        new_file_over(path, data)
        return
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and max(info.st_size, len(data)) <= IN_PLACE_MAX:
            pad = b" " * (info.st_size - len(data))
            text = data + pad
            if os.pwrite(fd, text, 0) == len(text):
                if pad:
                    os.ftruncate(fd, len(data))
                return
    finally:
        os.close(fd)
    new_file_over(path, data)  # too long for one page (or a short write): a new file


def create_new(path: Path, data: bytes) -> bool:
    """Create ``path`` with ``data`` unless it exists; never clobbers. True if created.

    A path that is there already costs a ``stat`` (no temporary file, no fsync): a daemon
    start asks this of every agent's memory.md of every squad."""
    if os.path.lexists(path):
        return False  # as the link below would say; one made meanwhile makes that say it
    temp = _write_temp(path, data)
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        temp.unlink()
    fsync_dir(path.parent)
    return True


SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database (with the database file's permission bits)."""


def private_dir(path: Path) -> None:
    """Make the folder ``path`` (and any missing folder above it) readable by this user only
    (0700), as the squad home is; a folder that exists is left as its owner set it."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process made it first: its mode is theirs
        folder.chmod(0o700)  # mkdir's mode passes through the umask


def private_file(path: Path, *, companions: tuple[str, ...] = ()) -> None:
    """Make sure the file ``path`` exists (empty if new) readable and writable by this user
    only (0600), as the API token is; an existing one others may read is tightened, and so
    are the files beside it named ``path`` + each of ``companions`` (a database's WAL)."""
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except FileExistsError:
        pass
    else:
        os.close(fd)
    for target in (path, *(path.with_name(path.name + c) for c in companions)):
        try:
            status = target.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISREG(status.st_mode) and status.st_mode & 0o077:
            target.chmod(stat.S_IMODE(status.st_mode) & 0o700)


def read_up_to(fd: int, count: int) -> bytes:
    """At most ``count`` bytes from ``fd``, read in chunks, so a huge or still-growing file
    (or ``/dev/zero``) never fills memory. Ask for one byte past a limit to tell a file that
    reached it from one that passed it."""
    chunks = []
    while count > 0:
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)
