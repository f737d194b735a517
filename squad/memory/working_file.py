"""Where working memory lives while its run works: ``agents/<agent>/working-memory/<run-id>.json``.

A file in the workspace, so a run resumed after a kill finds its working memory where it left
it, and a person opening the folder sees what each agent is doing. One file per run: a run
waiting for approval keeps its own while other runs of the squad come and go. It holds the
run's id, when it last changed and the state (:class:`~squad.memory.working.WorkingMemory`).
Tasks of one agent that run at once update it together: each update takes the agent's lock
(one ``agents/<agent>/.working-memory.lock``, so ended runs leave no lock files behind),
re-reads the file and replaces it atomically; the folder goes when its last file does. The
folder stays out of the workspace's history (it is transient: what a file held goes to the
daily log when its run ends).

A file that is not what squad writes (not JSON, hand-edited into another shape, another run's
id inside) reads as no working memory; the next update replaces it.

A turn reads the file three times and writes it twice (its task's start and end, the prompt
between), so both are cheap:

- a write moves the old file aside (``.<run-id>.json.prev``), renames the new one in and
  removes the old: renames to free names, which ext4 does at once, where a rename over an
  existing file makes it write the new file's data out first (about 2 ms a rename on a busy
  disk). Atomic for squad all the same: a reader finding no file in the instant between the
  renames (or after a kill there) reads the one aside, the state before the write;
- a :class:`WorkingCache` (one per memory service) keeps the last record read or written of
  each file with the file's bytes: a read that finds the same bytes parses nothing. It is the
  bytes that are compared, not the file's size and time (an edit in place within one tick of
  the filesystem's clock keeps both), so a change by anyone is always read.
- a change may be held back (:meth:`WorkingMemoryFile.defer`): the runtime holds a task's
  start so that a turn that ends soon writes its start and its end at once. A held change is
  the memory service's (its :class:`WorkingCache`): every read in this process sees it (the
  prompt, the dashboard of a daemon) and the next update of the file writes it first.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from squad.clock import Clock, utc_now
from squad.errors import MemoryError_
from squad.memory.file_io import LOCK_TIMEOUT_S, lock_file, locked
from squad.memory.working import WorkingMemory, WorkingMemoryDict
from squad.paths import check_name, contained

__all__ = [
    "WORKING_MEMORY_FOLDER",
    "WorkingCache",
    "WorkingMemoryFile",
    "WorkingRecord",
    "WorkingRecordDict",
    "working_runs",
]

WORKING_MEMORY_FOLDER = "working-memory"
_ASIDE = ".prev"
"""The suffix of the old file while a write swaps the new one in (``.<run-id>.json.prev``)."""
CACHE_KEPT = 256
"""Files a :class:`WorkingCache` keeps, the least recently used going first: a run's agents."""

Change = Callable[[WorkingMemory], WorkingMemory]


class WorkingRecordDict(WorkingMemoryDict):
    """:meth:`WorkingRecord.to_dict`: whose run, when, the fields, and the text shown."""

    run_id: str
    updated_at: str
    text: str


@dataclass(frozen=True)
class WorkingRecord:
    """What a file holds: whose run, when it last changed, the state."""

    run_id: str
    updated_at: str
    state: WorkingMemory

    def to_dict(self) -> WorkingRecordDict:
        return {
            "run_id": self.run_id,
            "updated_at": self.updated_at,
            **self.state.to_dict(),
            "text": self.state.render(),
        }


def working_runs(workspace: Path, agent: str) -> list[str]:
    """The runs with a working memory file of ``agent``, in name order."""
    folder = contained(workspace, "agents", check_name(agent, what="agent id"))
    folder = folder / WORKING_MEMORY_FOLDER
    try:
        names = [p.name for p in folder.iterdir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise MemoryError_(f"cannot list {folder}: {exc.strerror}") from None
    runs = {n.removesuffix(".json") for n in names if n.endswith(".json") and n[0] != "."}
    # A file only aside: a write was killed between its renames (read() reads it there).
    aside = f".json{_ASIDE}"
    runs |= {n[1 : -len(aside)] for n in names if n.endswith(aside) and n[0] == "." and n[1:2]}
    return sorted(runs)


class WorkingCache:
    """The last record read or written of each working memory file, with the bytes it was
    read from; thread-safe. A record is handed out only for the same bytes, so what it
    returns is always what the file holds."""

    def __init__(self, kept: int = CACHE_KEPT) -> None:
        self._kept = kept
        self._records: OrderedDict[Path, tuple[bytes, WorkingRecord | None]] = OrderedDict()
        self._held: dict[Path, list[Change]] = {}
        """Changes held back from each file (:meth:`WorkingMemoryFile.defer`)."""
        self._lock = threading.Lock()

    def get(self, path: Path, raw: bytes) -> tuple[bool, WorkingRecord | None]:
        """``(True, record)`` when ``path`` last held ``raw`` (the record None: bytes squad
        cannot read); ``(False, None)`` when they must be parsed."""
        with self._lock:
            kept = self._records.get(path)
            if kept is None or kept[0] != raw:
                return False, None
            self._records.move_to_end(path)
            return True, kept[1]

    def put(self, path: Path, raw: bytes, record: WorkingRecord | None) -> None:
        with self._lock:
            self._records[path] = (raw, record)
            self._records.move_to_end(path)
            while len(self._records) > self._kept:
                self._records.popitem(last=False)

    def forget(self, path: Path) -> None:
        with self._lock:
            self._records.pop(path, None)

    def defer(self, path: Path, change: Change) -> None:
        """Hold ``change`` of ``path`` for its next update (never dropped to keep the cache
        small: a run's held changes are written by the end of its turns)."""
        with self._lock:
            self._held.setdefault(path, []).append(change)

    def held(self, path: Path) -> tuple[Change, ...]:
        """The changes of ``path`` held, oldest first."""
        with self._lock:
            return tuple(self._held.get(path, ()))

    def take_held(self, path: Path) -> tuple[Change, ...]:
        """:meth:`held`, no longer held (the caller writes them, or gives them back)."""
        with self._lock:
            return tuple(self._held.pop(path, ()))

    def give_back(self, path: Path, changes: tuple[Change, ...]) -> None:
        """Hold again ``changes`` taken that could not be written, before any held since."""
        if changes:
            with self._lock:
                self._held[path] = [*changes, *self._held.get(path, ())]


class WorkingMemoryFile:
    """The working memory file of one agent in one run."""

    def __init__(
        self,
        workspace: Path,
        agent: str,
        run_id: str,
        *,
        clock: Clock = utc_now,
        cache: WorkingCache | None = None,
    ) -> None:
        """``cache``: records kept between reads (the memory service's); None reads the file
        every time."""
        self.workspace = workspace
        self.agent = check_name(agent, what="agent id")
        self.run_id = check_name(run_id, what="run id")
        self._clock = clock
        self._cache = cache
        name = f"{self.run_id}.json"
        self.path = contained(workspace, "agents", self.agent, WORKING_MEMORY_FOLDER, name)
        self._aside = self.path.with_name(f".{name}{_ASIDE}")
        self.relative = f"agents/{self.agent}/{WORKING_MEMORY_FOLDER}/{name}"

    def read(self) -> WorkingRecord | None:
        """The record in the file, with the changes held back applied (:meth:`defer`); None
        when there is none (or none squad can read)."""
        record = self._read_file()
        held = self._cache.held(self.path) if self._cache is not None else ()
        return self._with(record, held) if held else record

    def _with(
        self, record: WorkingRecord | None, changes: tuple[Change, ...]
    ) -> WorkingRecord | None:
        """``record`` with ``changes`` applied (None if that leaves nothing)."""
        state = record.state if record is not None else WorkingMemory()
        for change in changes:
            state = change(state)
        if record is not None:
            return replace(record, state=state)
        return None if state.empty else WorkingRecord(self.run_id, self._clock().isoformat(), state)

    def defer(self, change: Change) -> None:
        """Hold ``change`` back: reads in this process see it at once, the next
        :meth:`update` writes it (or writes it now, without a cache to hold it)."""
        if self._cache is None:
            self.update(change)
        else:
            self._cache.defer(self.path, change)

    def _read_file(self) -> WorkingRecord | None:
        """The record the file holds."""
        # The file, else the old one a write moved aside, else the file that write put in.
        for path in (self.path, self._aside, self.path):
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                continue
            except OSError as exc:
                raise MemoryError_(f"cannot read {self.relative}: {exc.strerror}") from None
            try:
                return self._read_open(path, fd)
            except OSError as exc:
                raise MemoryError_(f"cannot read {self.relative}: {exc.strerror}") from None
            finally:
                os.close(fd)
        return None

    def _read_open(self, path: Path, fd: int) -> WorkingRecord | None:
        """The record in the file open as ``fd``; parsed only when its bytes are not the
        cache's."""
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        raw = b"".join(chunks)
        if self._cache is not None:
            known, record = self._cache.get(path, raw)
            if known:
                return record
        record = self._parse(raw)
        if self._cache is not None:
            self._cache.put(path, raw, record)
        return record

    def _parse(self, raw: bytes) -> WorkingRecord | None:
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or data.get("run_id") != self.run_id:
            return None
        state = data.get("state")
        return WorkingRecord(
            self.run_id,
            str(data.get("updated_at", "")),
            WorkingMemory.from_dict(state if isinstance(state, dict) else {}),
        )

    def update(self, change: Change) -> WorkingMemory:
        """Apply the changes held back, then ``change``, to the run's state and write it when
        it changed; the state after."""
        with self._locked():
            record = self._read_file()
            held = self._cache.take_held(self.path) if self._cache is not None else ()
            try:
                before = record.state if record is not None else None
                after = before or WorkingMemory()
                for each in (*held, change):
                    after = each(after)
                if after != before and not (before is None and after.empty):
                    self._write(WorkingRecord(self.run_id, self._clock().isoformat(), after))
            except BaseException:
                if self._cache is not None:
                    self._cache.give_back(self.path, held)
                raise
            return after

    def take(self) -> WorkingRecord | None:
        """Remove the file and return what it held, with the changes held back."""
        with self._locked():
            held = self._cache.take_held(self.path) if self._cache is not None else ()
            record = self._with(self._read_file(), held)
            for path in (self.path, self._aside):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                if self._cache is not None:
                    self._cache.forget(path)
            with contextlib.suppress(OSError):  # not empty: other runs' files are there
                self.path.parent.rmdir()
            return record

    def _write(self, record: WorkingRecord) -> None:
        data = {
            "run_id": record.run_id,
            "updated_at": record.updated_at,
            "state": record.state.to_dict(),
        }
        try:
            # A view of the run's state: atomic, but not worth an fsync per file touched.
            raw = (json.dumps(data, indent=2) + "\n").encode()
            self._swap_in(raw)
        except OSError as exc:
            raise MemoryError_(f"cannot write {self.relative}: {exc.strerror}") from None
        if self._cache is not None:
            self._cache.put(self.path, raw, record)

    def _swap_in(self, data: bytes) -> None:
        """Put ``data`` in the file (see the module: the old one aside, the new one renamed
        in, the old one removed), keeping the old file's permission bits. The caller holds
        the lock."""
        mode: int | None = None  # a new file's: 0o644 less the umask
        with contextlib.suppress(FileNotFoundError):
            old = self.path.stat()
            if stat.S_ISREG(old.st_mode):
                mode = stat.S_IMODE(old.st_mode)
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}-{threading.get_ident():x}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(temp, flags, 0o644)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if mode is not None:
                    os.fchmod(fd, mode)
            finally:
                os.close(fd)
            with contextlib.suppress(FileNotFoundError):  # none yet, or aside since a kill
                self.path.rename(self._aside)
            temp.rename(self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
            if not self.path.exists():  # the old file back where it was
                with contextlib.suppress(OSError):
                    self._aside.rename(self.path)
            raise
        with contextlib.suppress(FileNotFoundError):
            self._aside.unlink()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        from filelock import Timeout

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _flocked(self.path.parent):  # agents/<agent>/.working-memory.lock
                yield
        except Timeout:
            raise MemoryError_(f"{self.relative} is locked; try again") from None
        except OSError as exc:
            raise MemoryError_(f"cannot write {self.relative}: {exc.strerror}") from None


_POLL_S = 0.005
"""How often a writer waiting for the agent's lock tries again."""
_NO_FLOCK = frozenset({errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK})


@contextlib.contextmanager
def _flocked(folder: Path) -> Iterator[None]:
    """Hold :func:`~squad.memory.file_io.locked` of ``folder`` as that lock would (an
    exclusive ``flock`` of its file, which it takes too: the two exclude each other),
    without its bookkeeping (half a working memory update's time); that lock itself where
    the filesystem has no ``flock``. A wait past :data:`LOCK_TIMEOUT_S` is its Timeout."""
    path = lock_file(folder)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno in _NO_FLOCK:
                    os.close(fd)
                    fd = -1
                    with locked(folder):
                        yield
                    return
                if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                    raise
            if time.monotonic() >= deadline:
                from filelock import Timeout

                raise Timeout(str(path))
            time.sleep(_POLL_S)
        yield
    finally:
        if fd >= 0:
            os.close(fd)  # lets the lock go
