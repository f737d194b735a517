"""``squad mcp --print-config HOST``: how Claude Code, Codex or Cursor should launch ``squad
mcp``, from any folder and without squad on PATH.

The command is the absolute path of the running interpreter's ``squad`` script (a clone's
``.venv/bin/squad``, a pipx or uv tool venv's), else ``<python> -m squad``; the environment
pins the squad home, configs and workspaces this invocation resolved, since a host starts the
server in a folder of its own choosing.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

__all__ = ["WHERE", "Host", "render", "server_command", "server_env"]

Host = Literal["claude", "codex", "cursor"]
"""The MCP hosts a configuration can be printed for."""

WHERE: dict[str, str] = {
    "claude": "run this command once (--scope user: every project; drop it for this one only)",
    "codex": "add this to ~/.codex/config.toml",
    "cursor": "put this in .cursor/mcp.json (this project) or ~/.cursor/mcp.json (every "
    "project); merge it into an existing mcpServers",
}
"""Where each host's configuration goes, said on stderr so stdout stays pasteable."""

_LOCATIONS = ("SQUAD_HOME", "SQUAD_CONFIGS", "SQUAD_WORKSPACES")


def server_command(executable: str | None = None) -> list[str]:
    """The absolute command that starts this installation's squad: the ``squad`` script
    beside the interpreter when there is one, else ``<interpreter> -m squad``."""
    python = Path(executable or sys.executable).absolute()  # not resolved: a venv's link
    script = python.parent / ("squad.exe" if os.name == "nt" else "squad")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(python), "-m", "squad"]


def server_env(
    home: Path, configs: Path, workspaces: Path, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables that make the server find this invocation's squad home, configs and
    workspaces from any folder; SQUAD_DATABASE_URL too when the environment sets it (it wins
    over settings.yaml, so the server would otherwise open another store)."""
    env = os.environ if environ is None else environ
    pinned = dict(zip(_LOCATIONS, (str(home), str(configs), str(workspaces)), strict=True))
    if env.get("SQUAD_DATABASE_URL"):
        pinned["SQUAD_DATABASE_URL"] = env["SQUAD_DATABASE_URL"]
    return pinned


def render(host: Host, command: Sequence[str], env: Mapping[str, str]) -> str:
    """The configuration text for ``host`` that launches ``command`` with ``env``."""
    program, *args = command
    if host == "claude":
        words = ["claude", "mcp", "add", "squad", "--scope", "user"]
        for name, value in env.items():
            words += ["-e", f"{name}={value}"]
        return shlex.join([*words, "--", *command]) + "\n"
    if host == "codex":
        lines = [
            "[mcp_servers.squad]",
            f"command = {_toml(program)}",
            f"args = [{', '.join(_toml(a) for a in args)}]",
            "",
            "[mcp_servers.squad.env]",
            *(f"{name} = {_toml(value)}" for name, value in env.items()),
        ]
        return "\n".join(lines) + "\n"
    server = {"command": program, "args": args, "env": dict(env)}
    return json.dumps({"mcpServers": {"squad": server}}, indent=2, ensure_ascii=False) + "\n"


def _toml(text: str) -> str:
    """``text`` as a TOML basic string: JSON's escapes, plus DEL, which TOML also forbids raw
    (characters past U+FFFF stay literal: JSON's surrogate escapes are not TOML)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007F")
