"""The web front end served by uvicorn on a thread of its own: inside ``squad daemon`` (as a
daemon attachment) or alone (``squad dashboard``).

The socket is bound here, before uvicorn starts, so a port in use or an address that cannot
be bound is a clear :class:`~squad.errors.UsageError` instead of a log line from a thread.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypedDict

from squad.errors import UsageError
from squad.web.tokens import login_url

if TYPE_CHECKING:
    import uvicorn
    from starlette.routing import BaseRoute

    from squad.app import App
    from squad.daemon.service import Daemon
    from squad.web.control import RunControl

__all__ = ["Extension", "ExtensionFactory", "WebAttachment", "WebServer", "login_url"]


class Extension(Protocol):
    """More routes on the same server and behind the same guard (the MCP endpoint), with
    what must run in the server's event loop while it serves."""

    routes: Sequence[BaseRoute]

    def running(self) -> AbstractAsyncContextManager[None]: ...


ExtensionFactory = Callable[["App", "RunControl"], Extension]
"""Builds an extension for the app and run control the server is given."""


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


@dataclass(frozen=True)
class Bound:
    host: str
    port: int

    @property
    def url(self) -> str:
        """Where this machine reaches it (a wildcard bind is reached through loopback)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        return f"http://{_url_host(host)}:{self.port}/"


class WebServer:
    """The ASGI app of :func:`squad.web.app.create_app` on a real uvicorn server."""

    def __init__(
        self,
        app: App,
        control: RunControl,
        *,
        host: str,
        port: int,
        allowed_hosts: tuple[str, ...] = (),
        extensions: Sequence[ExtensionFactory] = (),
    ) -> None:
        self._app = app
        self._control = control
        self._host = host
        self._port = port
        self._allowed = allowed_hosts
        self._extensions = extensions
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.bound: Bound | None = None

    def start(self, timeout: float = 30.0) -> Bound:
        import uvicorn

        from squad.web.app import create_app
        from squad.web.tokens import load_or_create_token

        sock = _bind(self._host, self._port)
        port = int(sock.getsockname()[1])
        token = load_or_create_token(self._app.settings.home)
        extensions = [make(self._app, self._control) for make in self._extensions]
        asgi = create_app(
            self._app,
            self._control,
            token=token,
            allowed_hosts=(self._host, *self._allowed),
            routes=[route for extension in extensions for route in extension.routes],
        )
        config = uvicorn.Config(
            asgi,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(
            target=_serve, args=(server, sock, extensions), name="squad-web", daemon=True
        )
        self._thread.start()
        deadline = threading.Event()
        for _ in range(int(timeout / 0.02)):
            if server.started or not self._thread.is_alive():
                break
            deadline.wait(0.02)
        if not server.started:
            sock.close()
            raise UsageError(f"the web server on {self._host}:{port} did not start")
        self.bound = Bound(self._host, port)
        return self.bound

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)

    def wait(self) -> None:
        """Until the server thread ends (``stop`` from a signal handler ends it)."""
        if self._thread is not None:
            while self._thread.is_alive():
                self._thread.join(0.5)


def _serve(server: uvicorn.Server, sock: socket.socket, extensions: list[Extension]) -> None:
    """uvicorn's ``run``, with each extension running in the same loop around it."""

    async def serve() -> None:
        async with AsyncExitStack() as stack:
            for extension in extensions:
                await stack.enter_async_context(extension.running())
            await server.serve(sockets=[sock])

    asyncio.run(serve())


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UsageError(f"cannot bind the web server to {host!r}: {exc.strerror}") from None
    # The protocol from getaddrinfo (TCP), not 0: asyncio sets TCP_NODELAY on accepted
    # connections only for a socket that says it is TCP, and without it a response written
    # in two pieces waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(infos[0][0], socket.SOCK_STREAM, infos[0][2])
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(infos[0][4])
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot serve on {host}:{port}: {exc.strerror}; choose another port "
            "(daemon.http.port in settings.yaml, or --port)"
        ) from None
    sock.setblocking(False)
    return sock


class Published(TypedDict):
    """What the web server publishes in the daemon's heartbeat state (``http``)."""

    url: str
    host: str
    port: int


class WebAttachment:
    """The web server as a daemon attachment: it starts when the daemon is ready, submits
    runs to the daemon's queue, and stops first when the daemon stops."""

    name = "http"

    def __init__(
        self,
        app: App,
        *,
        host: str,
        port: int,
        allowed_hosts: tuple[str, ...],
        extensions: Sequence[ExtensionFactory] = (),
    ):
        self._app = app
        self._host = host
        self._port = port
        self._allowed = allowed_hosts
        self._extensions = extensions
        self._server: WebServer | None = None

    def start(self, daemon: Daemon) -> Published:
        from squad.web.control import DaemonControl

        self._server = WebServer(
            self._app,
            DaemonControl(daemon),
            host=self._host,
            port=self._port,
            allowed_hosts=self._allowed,
            extensions=self._extensions,
        )
        bound = self._server.start()
        return {"url": bound.url, "host": bound.host, "port": bound.port}

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
