"""The folder watcher (inotify, debounced, :mod:`squad.daemon.watcher`): hot reload of the
squads folder and of settings.yaml, and a log line when a boot memory file changes.

Boot files (``SOUL.md``, ``USER.md``, ``AGENTS.md``, :mod:`squad.memory.boot`) are followed
only to log changes: prompts read them fresh at every turn and nothing caches them.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from squad.daemon.definitions import is_definition_file
from squad.daemon.reload import is_settings_file, reload_settings
from squad.daemon.watcher import FolderWatcher, Watch

if TYPE_CHECKING:
    from squad.daemon.context import DaemonContext

__all__ = ["BOOT_NAMES", "Watching"]

BOOT_NAMES = frozenset({"SOUL.md", "USER.md", "AGENTS.md"})


def _stat_mark(path: Path) -> tuple[int, int, int] | None:
    """A file's identity, size and modification time; None when it is missing."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def _content_mark(path: Path) -> str | None:
    """SHA-256 of a boot file's bytes; None when it is missing or not a readable file."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None


@functools.cache
def _default_soul_mark() -> str:
    """The mark of the default persona squad writes into a home that has no SOUL.md."""
    from squad.prompts import load

    return hashlib.sha256(load("SOUL.md").encode()).hexdigest()


class Watching:
    """Watches the squads folder, the home's boot files and settings.yaml; at each tick,
    re-watches a folder deleted and made again, and looks at each workspace's AGENTS.md."""

    name = "watcher"

    def __init__(self) -> None:
        self._watcher: FolderWatcher | None = None
        self._rules: dict[Path, tuple[int, int, int] | None] = {}
        """Each workspace AGENTS.md followed (:meth:`_follow_workspaces`), as last stat'ed."""
        self._lock = threading.Lock()
        self._marks: dict[Path, str | None] = {}
        """Each boot file's content as last seen (:func:`_content_mark`), so that an event
        that changed no byte, or squad's own default SOUL.md, is not logged as a change."""

    def start(self, ctx: DaemonContext) -> None:
        # Before the first scan (StartupRuns), so no file written meanwhile goes unnoticed;
        # what it sees waits for start-up to finish (``ctx.ready``).
        home, squads_dir = ctx.settings.home, ctx.squads_dir
        for name in BOOT_NAMES:
            self._marks[home / name] = _content_mark(home / name)

        def config_file(path: Path) -> bool:
            return path.parent == squads_dir and is_definition_file(path)

        def home_boot(path: Path) -> bool:
            return path.parent == home and path.name in BOOT_NAMES

        watches = [Watch(squads_dir, config_file), Watch(home, home_boot)]
        if ctx.read_settings is not None and ctx.settings.configs.is_dir():
            configs = ctx.settings.configs
            watches.append(Watch(configs, lambda path: is_settings_file(configs, path)))
        log = ctx.log
        self._watcher = FolderWatcher(
            functools.partial(self._on_files_changed, ctx),
            delay=ctx.debounce_s,
            on_error=lambda exc: log.emit(
                "job_error", job="reload", error=f"{type(exc).__name__}: {exc}"
            ),
        )
        ctx.followers.append(functools.partial(self._follow_workspaces, ctx))
        self._watcher.start(watches)

    def stop(self, ctx: DaemonContext) -> None:
        if self._watcher is not None:
            self._watcher.stop()

    def tick(self, ctx: DaemonContext, *, woken: bool) -> None:
        if self._check_folders(ctx):
            ctx.wake.set()
        self._check_workspace_rules(ctx)

    def _check_folders(self, ctx: DaemonContext) -> bool:
        """Re-establish the watch of a folder that was deleted and made again (its inotify
        watch died with it), and say while the squads folder is missing; True on a change."""
        if self._watcher is None or ctx.catalog is None:
            return False
        try:
            missing, restored = self._watcher.refresh()
        except Exception as exc:  # noqa: BLE001 - logged; the next tick tries again
            ctx.log.emit("job_error", job="watch", error=f"{type(exc).__name__}: {exc}")
            return False
        configs = ctx.squads_dir
        changed = False
        if configs in missing and not ctx.configs_missing:
            ctx.catalog.reconcile()  # first: a state that says missing has no squads left
            ctx.configs_missing = changed = True
            ctx.log.emit(
                "configs_missing",
                folder=str(configs),
                note="its squads are unscheduled until the folder is back",
            )
        if configs in restored:
            ctx.configs_missing, changed = False, True
            ctx.log.emit("configs_restored", folder=str(configs))
            ctx.reconcile()
        for folder in sorted(restored - {configs}):
            ctx.log.emit("watch_restored", folder=str(folder))
        return changed

    def _follow_workspaces(self, ctx: DaemonContext) -> None:
        """Follow each loaded squad's workspace ``AGENTS.md``: remember how it is now (a
        squad new to the daemon) and forget those of squads gone.

        Looked at from the main thread at every tick (:meth:`_check_workspace_rules`), not
        watched: a watch costs a thread each (watchdog's emitter), so a daemon of 100
        squads idled at 100 more threads; a ``stat`` of each file every few seconds costs
        next to nothing, and the change is only logged (prompts read the file fresh)."""
        if ctx.catalog is None:
            return
        wanted = {squad.workspace / "AGENTS.md" for squad in ctx.catalog.squads().values()}
        with self._lock:
            for path in set(self._rules) - wanted:
                del self._rules[path]
                self._marks.pop(path, None)
            for path in wanted - set(self._rules):
                self._rules[path] = _stat_mark(path)
                self._marks[path] = _content_mark(path)

    def _check_workspace_rules(self, ctx: DaemonContext) -> None:
        """Log ``boot_changed`` for each workspace ``AGENTS.md`` whose content changed."""
        with self._lock:
            moved = set()
            for path, before in self._rules.items():
                mark = _stat_mark(path)
                if mark != before:
                    self._rules[path] = mark
                    moved.add(path)
            changed = self._boot_changes(ctx, moved) if moved else []
        if changed:
            ctx.log.emit("boot_changed", files=changed)

    def _boot_changes(self, ctx: DaemonContext, paths: set[Path]) -> list[str]:
        """The boot files among ``paths`` whose content a person changed.

        Left out: a file whose bytes are as last seen (a touch, a rewrite of the same text),
        and the default SOUL.md that squad itself writes where the home had none (a run's
        first prompt does): the daemon's own write is no news."""
        changed = []
        for path in sorted(p for p in paths if p.name in BOOT_NAMES):
            mark = _content_mark(path)
            unknown = path not in self._marks
            before = self._marks.get(path)
            self._marks[path] = mark
            if not unknown and mark == before:
                continue
            own_default = (
                path == ctx.settings.home / "SOUL.md"
                and before is None
                and mark == _default_soul_mark()
            )
            if not own_default:
                changed.append(str(path))
        return changed

    def _on_files_changed(self, ctx: DaemonContext, paths: set[Path]) -> None:
        with self._lock:
            boot = self._boot_changes(ctx, paths)
        if boot:
            # Prompts read boot files fresh at every turn (squad.memory.boot) and nothing
            # caches them, so live agents see the change at their next turn: just log it.
            ctx.log.emit("boot_changed", files=boot)
        configs = any(p.parent == ctx.squads_dir for p in paths)
        ctx.ready.wait()
        settings = any(is_settings_file(ctx.settings.configs, p) for p in paths)
        if settings and not ctx.stopping.is_set():
            reload_settings(ctx)
        if configs and ctx.catalog is not None and not ctx.stopping.is_set():
            ctx.reconcile()
            ctx.wake.set()
