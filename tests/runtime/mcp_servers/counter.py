"""An MCP server (stdio) with a side effect to count: ``bump`` appends its note to the file
named by the first argument and says how many lines the file holds now."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server import MCPServer

server = MCPServer("counter", log_level="WARNING")
LEDGER = Path(sys.argv[1])


@server.tool()
def bump(note: str) -> str:
    """Append the note to the ledger; answer with the new line count."""
    with LEDGER.open("a", encoding="utf-8") as ledger:
        ledger.write(note + "\n")
    count = len(LEDGER.read_text(encoding="utf-8").splitlines())
    return f"bump {count}: {note}"


if __name__ == "__main__":
    server.run()
