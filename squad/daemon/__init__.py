"""The squad daemon: schedules squads from a folder of YAML files, watches it, runs them.

Modules by concept: ``triggers`` (schedule -> APScheduler trigger, pure), ``definitions``
(the folder's files and what changed, pure planning), ``catalog`` (the loaded squads),
``scheduler`` (APScheduler), ``runqueue`` and ``runs`` (bounded, one run per squad),
``watcher`` (inotify, debounced), ``lock`` (one daemon per home), ``eventlog``
(``daemon.jsonl``), ``jobs`` (retention, memory consolidation, the extraction sweep),
``reload`` (settings.yaml edits), ``status`` (``squad status``), ``components`` (each duty
of a running daemon, started in order and stopped in reverse), ``context`` (what they
share), ``layout`` (which components, in what order) and ``service`` (the :class:`Daemon`
that runs them).

Names are imported on first use, so ``squad stop`` does not pay for the scheduler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from squad.daemon.service import Daemon
    from squad.daemon.status import collect_status

__all__ = ["Daemon", "collect_status"]


def __getattr__(name: str) -> Any:
    if name == "Daemon":
        from squad.daemon.service import Daemon

        return Daemon
    if name == "collect_status":
        from squad.daemon.status import collect_status

        return collect_status
    raise AttributeError(f"module 'squad.daemon' has no attribute {name!r}")
