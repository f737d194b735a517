"""A hand-written stdio JSON-RPC server that speaks MCP's handshake and listing correctly but
answers tool calls with results that are no CallToolResult, and lists tools whose names or
schemas cannot be offered to a model. Standard library only."""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "broken", "description": "Answers with content that is not a list.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "noisy", "description": "Answers with a result missing its content.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "fine", "description": "Answers properly.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "has.dot", "description": "A name a model API refuses.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "x" * 80, "description": "Too long.",
     "inputSchema": {"type": "object", "properties": {}}},
]  # fmt: skip
RESULTS = {
    "broken": {"content": "not a list"},
    "noisy": {"isError": "maybe", "content": [{"type": "nonsense"}]},
    "fine": {"content": [{"type": "text", "text": "fine answer"}]},
}


def answer(message_id: object, result: object = None, error: object = None) -> None:
    reply = {"jsonrpc": "2.0", "id": message_id}
    reply.update({"error": error} if error is not None else {"result": result})
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue  # a notification
        if method == "initialize":
            answer(
                message_id,
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "malformed", "version": "0"},
                },
            )
        elif method == "tools/list":
            answer(message_id, {"tools": TOOLS})
        elif method == "tools/call":
            answer(message_id, RESULTS.get(message["params"]["name"], {"content": 7}))
        else:
            answer(message_id, error={"code": -32601, "message": f"no method {method}"})


if __name__ == "__main__":
    main()
