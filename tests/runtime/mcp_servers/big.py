"""An MCP server (stdio) whose ``big`` tool answers with ``size`` characters of text lines,
one of them carrying a made-up credential that starts ``secret_at`` characters in (if > 0)."""

from __future__ import annotations

from mcp.server import MCPServer

server = MCPServer("big", log_level="WARNING")
LINE = "the quick brown fox jumps over the lazy dog, line after line of tool output\n"
CREDENTIAL = "sk-proj-" + "Q7w8E9r0" * 6


@server.tool()
def big(size: int, secret_at: int = 0) -> str:
    """Answer with ``size`` characters; a credential at ``secret_at`` if that is > 0."""
    text = (LINE * (size // len(LINE) + 1))[:size]
    if secret_at > 0:
        spaced = f" {CREDENTIAL} "  # a word of its own, as a key in output stands
        text = text[: secret_at - 1] + spaced + text[secret_at - 1 + len(spaced) :]
    return text


if __name__ == "__main__":
    server.run()
