"""An MCP server (stdio) that starts a helper of its own, as ``npx`` and ``uvx`` do: a
grandchild of squad that sleeps, ignores SIGTERM and holds none of the server's pipes. Its pid
is written to the file named by the first argument once it runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mcp.server import MCPServer

HELPER = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)"

server = MCPServer("spawning", log_level="WARNING")


@server.tool()
def ping() -> str:
    """Answer at once."""
    return "pong"


if __name__ == "__main__":
    helper = subprocess.Popen(
        [sys.executable, "-c", HELPER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    target = Path(sys.argv[1])
    partial = target.with_suffix(".partial")
    partial.write_text(str(helper.pid), encoding="utf-8")
    os.replace(partial, target)
    server.run()
