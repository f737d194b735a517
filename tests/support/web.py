"""The dashboard and HTTP API of an :class:`~squad.app.App`, served on loopback for a test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from squad.app import App


@dataclass
class Site:
    """A served home: its address, token and a client that sends the token."""

    url: str
    token: str
    client: httpx.Client

    def get(self, path: str) -> httpx.Response:
        return self.client.get(path)


@contextmanager
def serve(app: App) -> Iterator[Site]:
    """``app``'s web server under real uvicorn on 127.0.0.1 (a free port), runs started from it
    in this process; stopped, its runs finished or stopped, on leaving."""
    from squad.web.control import LocalControl
    from squad.web.server import WebServer
    from squad.web.tokens import load_or_create_token

    control = LocalControl(app, workers=1)
    server = WebServer(app, control, host="127.0.0.1", port=0)
    bound = server.start()
    token = load_or_create_token(app.settings.home)
    try:
        with httpx.Client(
            base_url=bound.url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        ) as client:
            yield Site(bound.url, token, client)
    finally:
        server.stop()
        control.close(10)
