"""squad as a Model Context Protocol server: its squads' memory, decisions and runs for other
agents (Claude Code, Codex, another squad) over stdio (``squad mcp``) or streamable HTTP
(``/mcp`` on the dashboard's server)."""
