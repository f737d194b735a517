"""What a daemon component is, and how a list of them starts and stops.

A long-lived daemon is an ordered list of components (Celery's worker bootsteps): each starts
after the ones before it, so it may use what they set up, and stops before them. When a start
fails half-way, the components already started stop, in reverse, and the failure goes on up.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from squad.daemon.context import DaemonContext

__all__ = ["Component", "Lifecycle", "Reconfigurable", "Ticking"]


class Component(Protocol):
    """One duty of the daemon that lives as long as it does."""

    name: str
    """Its name in the log (``<name>_error`` when its stop fails)."""

    def start(self, ctx: DaemonContext) -> None:
        """Set up, after every component before it in the list started; raise to refuse."""
        ...

    def stop(self, ctx: DaemonContext) -> None:
        """Let go of what :meth:`start` took, before the components before it stop."""
        ...


@runtime_checkable
class Ticking(Protocol):
    """A component with work to do at every turn of the daemon's main loop."""

    def tick(self, ctx: DaemonContext, *, woken: bool) -> None:
        """One turn; ``woken`` when the loop was woken by a change (a run, a reload, a fire),
        not by the heartbeat's timeout. A change to report sets ``ctx.wake``."""
        ...


@runtime_checkable
class Reconfigurable(Protocol):
    """A component that applies live settings (:func:`squad.daemon.reload.reload_settings`)."""

    def reconfigure(self, ctx: DaemonContext, applied: tuple[str, ...]) -> None:
        """``ctx.settings`` now has new values for the ``applied`` fields."""
        ...


class Lifecycle:
    """Starts components in order and stops the started ones in reverse order."""

    def __init__(self, components: Iterable[Component]) -> None:
        self.components = tuple(components)
        self.started: list[Component] = []
        """Those whose :meth:`Component.start` returned, in the order they started."""

    def start(self, ctx: DaemonContext) -> None:
        """Start each component in order; the first failure is raised, and those already
        started are left for :meth:`stop`."""
        for component in self.components:
            component.start(ctx)
            self.started.append(component)

    def ticking(self) -> list[Ticking]:
        return [c for c in self.started if isinstance(c, Ticking)]

    def stop(self, ctx: DaemonContext) -> None:
        """Stop the started components, last first. A stop that fails is logged
        (``<name>_error``) and the others still stop: the daemon must let go of its home."""
        while self.started:
            component = self.started.pop()
            try:
                component.stop(ctx)
            except Exception as exc:  # noqa: BLE001 - logged; the rest must still stop
                ctx.log.emit(f"{component.name}_error", error=f"{type(exc).__name__}: {exc}")
