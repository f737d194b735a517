"""Folder watching for hot reload: inotify through watchdog, debounced, no polling.

Editors save in bursts (write, rename, chmod), so changed paths are collected until no new
one came for ``delay`` seconds, then handed over in one batch. Every thread here sleeps in
a blocking call (``poll(2)`` on the inotify descriptor, a queue, a condition variable) until
something happens, so a quiet folder costs no CPU.
"""

from __future__ import annotations

import contextlib
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Debouncer", "FolderWatcher", "Watch"]

_OBSERVER_TIMEOUT_S = 3600.0
"""How long watchdog's dispatcher blocks on its queue between checks; stop() wakes it."""


class Debouncer:
    """Collects items and calls ``flush(items)`` once none came for ``delay`` seconds."""

    def __init__(
        self,
        delay: float,
        flush: Callable[[set[Path]], None],
        *,
        name: str = "squad-debounce",
        on_error: Callable[[BaseException], object] | None = None,
    ) -> None:
        self._delay = delay
        self._flush = flush
        self._on_error = on_error
        self._cond = threading.Condition()
        self._items: set[Path] = set()
        self._last = 0.0
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add(self, item: Path) -> None:
        with self._cond:
            self._items.add(item)
            self._last = time.monotonic()
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _take(self) -> set[Path] | None:
        """Wait for a quiet batch; None once stopped."""
        with self._cond:
            while not self._items and not self._stopped:
                self._cond.wait()
            while not self._stopped:
                quiet_for = time.monotonic() - self._last
                if quiet_for >= self._delay:
                    break
                self._cond.wait(self._delay - quiet_for)
            if self._stopped:
                return None
            items, self._items = self._items, set()
            return items

    def _loop(self) -> None:
        while (items := self._take()) is not None:
            try:
                self._flush(items)
            except Exception as exc:  # reported, never swallowed: the watcher must go on
                if self._on_error is None:
                    raise
                self._on_error(exc)


@dataclass(frozen=True)
class Watch:
    """A folder to watch (its direct children only) and which paths in it matter."""

    folder: Path
    accept: Callable[[Path], bool]


class FolderWatcher:
    """Watches folders and hands batches of changed, accepted paths to ``on_change``.

    Folders are watched one level deep: recursive inotify watches race with folders being
    created under them (and watchdog then warns from its reader thread), and nothing the
    daemon needs lies deeper. Folders can be added and removed while it runs.
    """

    def __init__(
        self,
        on_change: Callable[[set[Path]], None],
        *,
        delay: float = 0.5,
        on_error: Callable[[BaseException], object] | None = None,
    ) -> None:
        self._debouncer = Debouncer(delay, on_change, on_error=on_error)
        self._observer: Any = None
        self._watches: dict[Path, Any] = {}
        self._specs: dict[Path, Watch] = {}
        self._identity: dict[Path, tuple[int, int] | None] = {}
        """Each folder's (device, inode) when its watch was made; None while it is missing."""
        self._lock = threading.Lock()

    def start(self, watches: list[Watch] | None = None) -> None:
        from watchdog.observers import Observer

        self._debouncer.start()
        observer = Observer(timeout=_OBSERVER_TIMEOUT_S)
        observer.daemon = True
        observer.start()
        self._observer = observer
        for watch in watches or []:
            self.watch(watch)

    def watch(self, watch: Watch) -> None:
        """Start watching ``watch.folder`` (created if missing); no-op if already watched."""
        with self._lock:
            if watch.folder in self._specs or self._observer is None:
                return
            watch.folder.mkdir(parents=True, exist_ok=True)
            self._specs[watch.folder] = watch
            self._schedule(watch)

    def _schedule(self, watch: Watch) -> None:
        """Watch the folder as it is now (the lock held); a folder gone meanwhile is missing."""
        from watchdog.events import (
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
        )

        kinds = [FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent]
        identity = _identity(watch.folder)
        self._identity[watch.folder] = identity
        if identity is None:
            return
        handler = _handler(watch.accept, self._debouncer.add)
        try:
            self._watches[watch.folder] = self._observer.schedule(
                handler, str(watch.folder), recursive=False, event_filter=kinds
            )
        except OSError:  # removed between the stat and the inotify watch
            self._identity[watch.folder] = None

    def unwatch(self, folder: Path) -> None:
        with self._lock:
            self._specs.pop(folder, None)
            self._identity.pop(folder, None)
            self._drop(folder)

    def _drop(self, folder: Path) -> None:
        handle = self._watches.pop(folder, None)
        if handle is not None and self._observer is not None:
            # the kernel may already have dropped a deleted folder's watch
            with contextlib.suppress(KeyError, OSError):
                self._observer.unschedule(handle)

    def refresh(self) -> tuple[set[Path], set[Path]]:
        """Check that every watched folder is still the one watched: a folder deleted (its
        inotify watch dies with it) is reported missing, and one that is back, or was
        replaced by a new folder of the same name, is watched again. Returns the folders
        missing now and those watched again by this call; cheap (a ``stat`` per folder)."""
        missing: set[Path] = set()
        restored: set[Path] = set()
        with self._lock:
            if self._observer is None:
                return missing, restored
            for folder, watch in self._specs.items():
                now = _identity(folder)
                if now is not None and now == self._identity.get(folder):
                    continue
                self._drop(folder)
                if now is None:
                    self._identity[folder] = None
                    missing.add(folder)
                    continue
                self._schedule(watch)
                if self._identity.get(folder) is None:
                    missing.add(folder)
                else:
                    restored.add(folder)
        return missing, restored

    def folders(self) -> set[Path]:
        with self._lock:
            return set(self._specs)

    def stop(self) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
            self._watches.clear()
            self._specs.clear()
            self._identity.clear()
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
        self._debouncer.stop()


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        found = folder.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISDIR(found.st_mode) else None


def _handler(accept: Callable[[Path], bool], add: Callable[[Path], None]) -> Any:
    """A watchdog event handler passing the accepted paths of file events to ``add``."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.is_directory:
                return
            for raw in (event.src_path, event.dest_path):
                if raw:
                    path = Path(raw.decode() if isinstance(raw, bytes) else raw)
                    if accept(path):
                        add(path)

    return Handler()
