"""What every command starts from: this invocation's settings, and the App over them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from squad.app import App

__all__ = ["open_app"]


def open_app(*, reading: bool = False) -> App:
    """The app for this invocation's settings (environment + ``configs/settings.yaml``); a
    workspace whose history is paused is said on stderr (once per workspace and reason).
    ``reading``: for a command that only reads (:class:`~squad.app.App`'s ``reading``)."""
    from squad.app import App
    from squad.settings import Settings

    app = App.open(Settings.load(), reading=reading)
    app.on_history_event(_HistoryWarnings())
    return app


class _HistoryWarnings:
    """``history_paused`` events as one warning line each on stderr."""

    def __init__(self) -> None:
        self._said: set[tuple[str, str]] = set()

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        import sys

        from squad.cli.output import visible

        key = (str(fields.get("workspace")), str(fields.get("reason")))
        if event != "history_paused" or key in self._said:
            return
        self._said.add(key)
        sys.stderr.write(
            visible(f"warning: history paused for {fields.get('squad')}: {fields.get('reason')}")
            + "\n"
        )
