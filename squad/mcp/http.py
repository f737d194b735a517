"""squad's MCP server over streamable HTTP, at ``/mcp`` on the dashboard's server.

It is a :class:`~squad.web.server.Extension`: its route sits behind the web guard (the same
token as the API: ``Authorization: Bearer <$SQUAD_HOME/api-token>``, the same Host check), so
the SDK's own DNS-rebinding check is off, and its session manager runs in the server's event
loop for as long as the server serves. Sessions are stateful: the client's name, which the
audit log records, comes from the session's handshake.

A daemon serves for weeks and a client may open sessions and never close them, so sessions
are bounded: one with no request in flight (and no open event stream) for
:data:`SESSION_IDLE_TIMEOUT` ends, its id then answering 404 (clients open a new one), and
while :data:`MAX_SESSIONS` are open a request for another is refused (503, "Too many open
sessions") rather than an idle one evicted: a live client never loses its session to a new
one, and the cap frees itself as idle sessions expire.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from mcp.server.transport_security import TransportSecuritySettings

from squad.mcp.server import SquadServer, build_server
from squad.mcp.tools import Scope

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from squad.app import App
    from squad.web.control import RunControl
    from squad.web.server import ExtensionFactory

__all__ = ["MAX_SESSIONS", "MCP_PATH", "SESSION_IDLE_TIMEOUT", "McpEndpoint", "mcp_endpoint"]

MCP_PATH = "/mcp"
SESSION_IDLE_TIMEOUT = 30 * 60.0
"""Seconds a session may sit idle before it ends: longer than a person leaves an editor's
agent between questions in one sitting; a client whose session ended opens another."""
MAX_SESSIONS = 100
"""Sessions open at once. The clients of one person's daemon (editors, desktop assistants,
scripts) hold a few each; ~25 KB a session bounds them near 2.5 MB (10,000, the SDK's
default, would allow ~250 MB)."""


class McpEndpoint:
    """``/mcp`` for one server."""

    def __init__(
        self,
        server: SquadServer,
        *,
        session_idle_timeout: float = SESSION_IDLE_TIMEOUT,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self._server = server
        starlette = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            session_idle_timeout=session_idle_timeout,
            max_sessions=max_sessions,
        )
        self.routes: Sequence[BaseRoute] = list(starlette.routes)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self._server.session_manager.run():
            yield


def mcp_endpoint(
    scope: Scope | None = None,
    *,
    session_idle_timeout: float = SESSION_IDLE_TIMEOUT,
    max_sessions: int = MAX_SESSIONS,
) -> ExtensionFactory:
    """The extension that serves ``/mcp`` for the web server's app and run control (the
    session bounds are for tests to shorten)."""

    def make(app: App, control: RunControl) -> McpEndpoint:
        return McpEndpoint(
            build_server(app, control=control, scope=scope or Scope()),
            session_idle_timeout=session_idle_timeout,
            max_sessions=max_sessions,
        )

    return make
