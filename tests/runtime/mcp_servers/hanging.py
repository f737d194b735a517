"""An MCP server (stdio) whose ``wait`` tool never answers; with ``--at-start`` it never even
answers the handshake."""

from __future__ import annotations

import sys
import time

from mcp.server import MCPServer

server = MCPServer("hanging", log_level="WARNING")


@server.tool()
async def wait() -> str:
    """Never return."""
    import anyio

    await anyio.sleep_forever()
    return "unreachable"


@server.tool()
def quick() -> str:
    """Return at once."""
    return "quick answer"


if __name__ == "__main__":
    if "--at-start" in sys.argv:
        while True:
            time.sleep(3600)
    server.run()
