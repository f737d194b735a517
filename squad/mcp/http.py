"""squad's MCP server over streamable HTTP, at ``/mcp`` on the dashboard's server.

It is a :class:`~squad.web.server.Extension`: its route sits behind the web guard (the same
token as the API: ``Authorization: Bearer <$SQUAD_HOME/api-token>``, the same Host check), so
the SDK's own DNS-rebinding check is off, and its session manager runs in the server's event
loop for as long as the server serves. Sessions are stateful: the client's name, which the
audit log records, comes from the session's handshake.
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

__all__ = ["MCP_PATH", "McpEndpoint", "mcp_endpoint"]

MCP_PATH = "/mcp"


class McpEndpoint:
    """``/mcp`` for one server."""

    def __init__(self, server: SquadServer) -> None:
        self._server = server
        starlette = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.routes: Sequence[BaseRoute] = list(starlette.routes)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self._server.session_manager.run():
            yield


def mcp_endpoint(scope: Scope | None = None) -> ExtensionFactory:
    """The extension that serves ``/mcp`` for the web server's app and run control."""

    def make(app: App, control: RunControl) -> McpEndpoint:
        return McpEndpoint(build_server(app, control=control, scope=scope or Scope()))

    return make
