"""The tools every agent turn in a run is offered, before the MCP servers' own.

The workspace's files always (write, read, list); with the agent's memory on, its memory
(read, append, search, daily log), the squad's decisions (record, search) and its working
memory. Each set is a class of plain methods; :func:`~squad.runtime.tools.tool_from_function`
turns each method into a tool.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from squad.memory.agent import AgentContext
from squad.memory.decisions.log import DecisionLog
from squad.memory.decisions.tools import DecisionTools
from squad.memory.service import MemoryService
from squad.memory.tools import MemoryTools
from squad.memory.working_tools import WorkingMemoryTools
from squad.runtime.files_tool import WorkspaceFiles
from squad.runtime.tools import Tool, tool_from_function

__all__ = ["builtin_tools"]


def builtin_tools(
    memory: MemoryService,
    decisions: DecisionLog,
    ctx: AgentContext,
    *,
    files: WorkspaceFiles,
    known: Collection[str],
) -> list[Tool]:
    """The built-in tools of ``ctx``'s agent; ``known`` are the credential values the run has
    seen, refused wherever a tool would write them."""
    functions: list[Callable[..., str]] = [files.write_file, files.read_file, files.list_files]
    if ctx.memory_enabled:
        memory_tools = MemoryTools(memory, ctx, known=known)
        decision_tools = DecisionTools(decisions, ctx, known=known)
        functions += [
            memory_tools.memory_read,
            memory_tools.memory_append,
            memory_tools.memory_search,
            memory_tools.memory_write_daily,
            decision_tools.decision_record,
            decision_tools.decision_search,
            WorkingMemoryTools(memory, ctx, known=known).working_memory_update,
        ]
    return [tool_from_function(f) for f in functions]
