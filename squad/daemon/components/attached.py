"""Services that live as long as the daemon and are given to it by a front end (the HTTP API
and dashboard, :class:`squad.web.server.WebAttachment`): the last components to start."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from squad.errors import SquadError

if TYPE_CHECKING:
    from squad.daemon.context import DaemonContext
    from squad.daemon.service import Daemon

__all__ = ["Attached", "Attachment"]


class Attachment(Protocol):
    """A service that lives as long as the daemon (the HTTP API and dashboard)."""

    name: str
    """Its key in the heartbeat state and the prefix of its log events."""

    def start(self, daemon: Daemon) -> Mapping[str, object]:
        """Start; what to publish in the heartbeat state (never a secret). A SquadError
        means it could not start."""
        ...

    def stop(self) -> None: ...


class Attached:
    """An attachment as a component: one that cannot start is logged (``<name>_failed``),
    and the daemon goes on scheduling without it."""

    def __init__(self, attachment: Attachment, daemon: Daemon) -> None:
        self.name = attachment.name
        self._attachment = attachment
        self._daemon = daemon

    def start(self, ctx: DaemonContext) -> None:
        try:
            published = self._attachment.start(self._daemon)
        except SquadError as exc:
            ctx.log.emit(f"{self.name}_failed", error=str(exc))
        else:
            ctx.attached[self.name] = published
            ctx.log.emit(f"{self.name}_ready", **published)

    def stop(self, ctx: DaemonContext) -> None:
        if self.name in ctx.attached:
            self._attachment.stop()
