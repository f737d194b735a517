"""A hand-written stdio MCP server that writes lines of garbage to stdout, as a server printing
its own logs there does: ``--lines N`` (default 3000) in all, half before its answer to the
handshake and half before its answer to a tool call. With ``FLOOD_SAYS`` in its environment it
also prints, as a server printing its configuration does, that value on its stderr and in its
first garbage line, and one stderr line of 100,000 characters. Standard library only."""

from __future__ import annotations

import json
import os
import sys

LINES = int(sys.argv[sys.argv.index("--lines") + 1]) if "--lines" in sys.argv else 3000
SCHEMA = {"type": "object", "properties": {}}
TOOLS = [{"name": "hello", "description": "Says hello.", "inputSchema": SCHEMA}]
HELLO = {"content": [{"type": "text", "text": "hello from the flood"}]}
sent = 0


SAYS = os.environ.get("FLOOD_SAYS")


def garbage() -> None:
    global sent
    for _ in range(LINES // 2):
        sent += 1
        said = f" (token={SAYS})" if SAYS and sent == 1 else ""
        sys.stdout.write(f"DEBUG log line {sent}: not JSON at all{said}\n")


def answer(message_id: object, result: object, *, noisy: bool = False) -> None:
    if noisy:
        garbage()
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    if SAYS:
        sys.stderr.write(f"flooding: starting with api_token={SAYS}\n")
        sys.stderr.write("x" * 100_000 + "\n")
        sys.stderr.write(f"flooding: retrying auth, Authorization: Bearer {SAYS}")  # no newline
        sys.stderr.flush()
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": "flooding", "version": "0"}
            answer(message_id, {"protocolVersion": version, "capabilities": {"tools": {}},
                                "serverInfo": info}, noisy=True)  # fmt: skip
        elif method == "tools/list":
            answer(message_id, {"tools": TOOLS})
        elif method == "tools/call":
            answer(message_id, HELLO, noisy=True)
        else:
            answer(message_id, {})


if __name__ == "__main__":
    main()
