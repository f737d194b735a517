"""An MCP server (stdio) whose ``boom`` tool kills it mid-call; ``echo`` works until then."""

from __future__ import annotations

import os

from mcp.server import MCPServer

server = MCPServer("crashing", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
def boom() -> str:
    """Exit the server process without answering."""
    os._exit(3)


if __name__ == "__main__":
    server.run()
