"""What every command starts from: this invocation's settings, and the App over them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from squad.app import App

__all__ = ["open_app"]


def open_app() -> App:
    """The app for this invocation's settings (environment + ``configs/settings.yaml``)."""
    from squad.app import App
    from squad.settings import Settings

    return App.open(Settings.load())
