"""squad as an MCP *client*: the agents' MCP tools (the servers a squad's YAML lists).

:mod:`.tools` is the sync side a turn uses, :mod:`.bridge` the async side and the only importer
of the MCP SDK, :mod:`.stdio` the stdio transport, :mod:`.launch` the launcher that ties a
server's life to squad's, :mod:`.journal` the journal that makes a resumed turn replay answers.
squad as an MCP *server* is :mod:`squad.mcp`.
"""
