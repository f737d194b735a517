"""Start the model client's import as soon as a command knows it will call a real model,
and show on a terminal whatever wait is left when the first call needs it.

litellm takes seconds to import (:mod:`squad.model.litellm_load`). A command that has read
its squad calls :func:`preload_for` before it opens the store and builds the run: the import
overlaps that set-up. Squads on the built-in offline model never load litellm, and neither
does any command that does not call one (``squad --help``, ``validate``, ``status``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from squad.cli.output import Output

if TYPE_CHECKING:
    from squad.app import App
    from squad.spec.models import SquadSpec

__all__ = ["LOADING", "LoadingNotice", "preload", "preload_for"]

LOADING = "loading the model client..."
"""What a terminal shows while a command waits for litellm's import."""


class LoadingNotice:
    """Shows :data:`LOADING` as a progress line (``HH:MM:SS  text``, as ``squad run``'s) when
    ``err`` is a terminal; says nothing otherwise (the run log keeps the wait:
    ``model_client_wait``)."""

    def __init__(self, err: Output) -> None:
        self._err = err

    def waiting(self) -> None:
        if self._err.rich:
            stamp = datetime.now().strftime("%H:%M:%S")
            self._err.line(f"{stamp}  {LOADING}", style="cyan")

    def waited(self, seconds: float) -> None:
        pass


def preload(app: App, names: Iterable[str], err: Output) -> bool:
    """Start litellm's import in the background when any of ``names`` is a real model that
    ``app``'s model factory would call; a wait for it is shown on ``err`` when that is a
    terminal. True when it started (or had started)."""
    from squad.model.factory import preload_client

    return preload_client(names, LoadingNotice(err), factory=app.model_factory)


def preload_for(app: App, spec: SquadSpec, err: Output, *, override: str | None = None) -> bool:
    """:func:`preload` for the models ``spec`` (or ``override``) names."""
    from squad.model.factory import squad_models

    return preload(app, squad_models(spec, override=override), err)
