"""squad as an MCP server: the tools of :mod:`squad.mcp.tools` and the resources of
:mod:`squad.mcp.resources` on the official SDK's :class:`mcp.server.MCPServer`.

One server serves stdio (``squad mcp``) and streamable HTTP (``/mcp`` on the dashboard's
app, :mod:`squad.mcp.http`). Tool schemas come from the signatures below; an argument the
schema does not know, a value it refuses or a refusal of squad's own (a credential, a stale
write, an unknown squad) comes back as a tool error whose text says what is wrong, and
nothing is written. Writes are audited as ``mcp:<client name>``. A read-only server does not
offer the writing tools at all.

The SDK costs about a second to import: only ``squad mcp`` and a served ``/mcp`` load it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp_types import Resource as MCPResource
from mcp_types import ResourceTemplate as MCPResourceTemplate
from pydantic import BaseModel, Field, ValidationError

from squad.errors import NotFound, SquadError
from squad.mcp.resources import TEMPLATES, SquadResources
from squad.mcp.tools import Scope, SquadTools
from squad.paths import SLUG_PATTERN
from squad.views import (
    ApprovalQueued,
    ContextPreview,
    Decision,
    DecisionList,
    Forgotten,
    MemoryHistory,
    MemoryRead,
    MemoryRevert,
    MemorySearch,
    Remembered,
    RunAccepted,
    SquadList,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from squad.app import App
    from squad.web.control import RunControl

__all__ = ["SquadServer", "build_server"]

INSTRUCTIONS = """\
squad keeps the memory of teams of LLM agents (squads). Use `squads` first to see the squads
and their agents. `memory_search` finds what the agents know (project memory in each agent's
memory.md, experiential facts that follow an agent); `memory_context` shows the exact memory
an agent would be given for a message. Decisions with their reasons are kept apart:
`decision_search` before re-deciding something, `decision_record` when something is decided.
Runs: `run_start`, `run_status`, `run_approve`."""

SquadName = Annotated[str, Field(pattern=SLUG_PATTERN, description="Squad name (see `squads`).")]
AgentId = Annotated[str, Field(pattern=SLUG_PATTERN, description="Agent id within the squad.")]
Query = Annotated[
    str, Field(min_length=1, max_length=1000, description="Words to find (case-insensitive).")
]
Section = Annotated[
    str, Field(min_length=1, max_length=100, description="A memory.md section, e.g. Insights.")
]
RunId = Annotated[
    str,
    Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$", description="Run id (see run_status)."),
]
Line = Annotated[str, Field(min_length=1, max_length=2000)]
_CLIENT = re.compile(r"[^A-Za-z0-9._ -]+")


def client_actor(ctx: Context[Any, Any] | None) -> str:
    """``mcp:<client name>`` for the audit log (``mcp:unknown`` when the client gave none)."""
    name = None
    try:
        params = ctx.session.client_params if ctx is not None else None
        name = params.client_info.name if params is not None else None
    except (AttributeError, ValueError):  # outside a request, or a session without a handshake
        name = None
    cleaned = _CLIENT.sub("-", name or "").strip(" -")[:64]
    return f"mcp:{cleaned or 'unknown'}"


class SquadServer(MCPServer[Any]):
    """An MCPServer whose tool errors say what is wrong and whose resources are listed live."""

    def __init__(self, resources: SquadResources, *, name: str, version: str) -> None:
        super().__init__(name, version=version, instructions=INSTRUCTIONS, log_level="WARNING")
        self._resources = resources
        self._arguments: dict[str, frozenset[str]] = {}

    def add(self, function: Callable[..., Any], *, read_only: bool) -> None:
        import inspect

        from mcp_types import ToolAnnotations

        parameters = inspect.signature(function).parameters
        self._arguments[function.__name__] = frozenset(p for p in parameters if p != "ctx")
        hints = ToolAnnotations(
            read_only_hint=read_only, destructive_hint=False, open_world_hint=False
        )
        self.add_tool(function, annotations=hints)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        known = self._arguments.get(name)
        if known is not None and set(arguments) - known:
            unknown = ", ".join(sorted(set(arguments) - known))
            takes = ", ".join(sorted(known)) or "no arguments"
            raise ToolError(f"{name} has no argument {unknown}; it takes: {takes}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            raise ToolError(_explained(name, exc)) from None

    async def list_resources(self) -> list[MCPResource]:
        found = await anyio.to_thread.run_sync(self._resources.list)
        return [
            MCPResource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
            for r in found
        ]

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        return [
            MCPResourceTemplate(
                uri_template=t.uri, name=t.name, description=t.description, mime_type=t.mime_type
            )
            for t in TEMPLATES
        ]

    async def read_resource(
        self, uri: Any, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents]:
        try:
            text, mime = await anyio.to_thread.run_sync(self._resources.read, str(uri))
        except NotFound as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except SquadError as exc:
            raise ResourceError(str(exc)) from None
        return [ReadResourceContents(content=text, mime_type=mime)]


def _explained(name: str, exc: ToolError) -> str:
    cause = exc.__cause__
    if isinstance(cause, SquadError):
        return str(cause)
    if isinstance(cause, ValidationError):
        problems = []
        for error in cause.errors(include_url=False):
            where = ".".join(str(part) for part in error["loc"]) or "arguments"
            problems.append(f"{where}: {error['msg']}")
        return f"bad arguments for {name}: " + "; ".join(problems)
    text = str(exc)
    return text.removeprefix(f"Error executing tool {name}: ")


def _object(view: BaseModel) -> dict[str, Any]:
    """A tool that answers one of two views says so as a JSON object: the SDK would wrap a
    union's structured content in ``{"result": ...}``, unlike every other tool's."""
    return view.model_dump(mode="json")


def build_server(
    app: App,
    *,
    control: RunControl | None = None,
    scope: Scope | None = None,
) -> SquadServer:
    """The MCP server of ``app`` within ``scope``; runs go to ``control`` (None: run_start
    and run_approve say this server cannot start runs)."""
    from importlib.metadata import version

    scope = scope or Scope()
    tools = SquadTools(app, control, scope)
    server = SquadServer(SquadResources(app, scope), name="squad", version=version("squad"))

    def squads() -> SquadList:
        """List the squads this server shows, with their agents (id, role, model)."""
        return tools.squads()

    def memory_search(
        query: Query,
        squad: SquadName | None = None,
        agent: AgentId | None = None,
        layer: Annotated[
            Literal["project", "experiential", "conversation"] | None,
            Field(
                description="project: memory.md files; experiential: facts; conversation: "
                "earlier messages agents recall (default all)."
            ),
        ] = None,
        section: Section | None = None,
        case_sensitive: bool = False,
        context: Annotated[int, Field(ge=0, le=20, description="Lines around each hit.")] = 0,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> MemorySearch:
        """Search what the agents know: every memory.md line, experiential fact and recalled
        conversation message matching the query, filtered by squad, agent, layer or section;
        fact hits carry their id (``where: fact:N``), messages their seq (``message:N``)."""
        return tools.memory_search(
            query,
            squad=squad,
            agent=agent,
            layer=layer,
            section=section,
            case_sensitive=case_sensitive,
            context=context,
            limit=limit,
        )

    def memory_read(squad: SquadName, agent: AgentId, section: Section | None = None) -> MemoryRead:
        """Read one agent's project memory (memory.md): all of it, or one section."""
        return tools.memory_read(squad, agent, section)

    def memory_context(
        squad: SquadName,
        agent: AgentId,
        message: Annotated[str, Field(max_length=20_000, description="The next message.")] = "",
        max_tokens: Annotated[int | None, Field(ge=0, le=200_000)] = None,
    ) -> ContextPreview:
        """The exact memory block the agent's next prompt would get for this message, with
        its token accounting (60% experiential / 40% project, what was dropped)."""
        return tools.memory_context(squad, agent, message, max_tokens)

    def decision_search(
        query: Query,
        squad: SquadName | None = None,
        include_superseded: bool = False,
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
    ) -> DecisionList:
        """Find decisions already taken (title, decision, reasons, alternatives) before
        deciding again; superseded ones only if asked."""
        return tools.decision_search(
            query, squad=squad, include_superseded=include_superseded, limit=limit
        )

    def run_status(run_id: RunId | None = None, squad: SquadName | None = None) -> dict[str, Any]:
        """One run (tasks, outputs, spend, the task awaiting approval, its commit in the
        workspace's history and the diff against the squad's previous run) by run_id, or the
        recent runs of a squad."""
        return _object(tools.run_status(run_id, squad))

    def memory_history(
        squad: SquadName,
        agent: AgentId,
        limit: Annotated[int, Field(ge=1, le=1000)] = 50,
    ) -> MemoryHistory:
        """Every change to an agent's memory, newest first: who made it (an agent in a run,
        the extractor, a person, an MCP client), when, which run or extraction pass, the
        memory.md lines removed and added and the facts changed; each id can be reverted."""
        return tools.memory_history(squad, agent, limit)

    reads = (
        squads,
        memory_search,
        memory_read,
        memory_context,
        memory_history,
        decision_search,
        run_status,
    )
    for read in reads:
        server.add(read, read_only=True)
    if scope.read_only:
        return server

    def remember(
        squad: SquadName,
        agent: AgentId,
        text: Annotated[str, Field(min_length=1, max_length=2000, description="One fact.")],
        layer: Annotated[
            Literal["project", "experiential"],
            Field(
                description="project: a dated line in the agent's memory.md of this squad; "
                "experiential: a fact that follows the agent across squads."
            ),
        ],
        ctx: Context[Any, Any],
        section: Section | None = None,
    ) -> Remembered:
        """Store one fact in an agent's memory (credentials are refused)."""
        return tools.remember(squad, agent, text, layer, section, actor=client_actor(ctx))

    def forget(
        fact_id: Annotated[int, Field(ge=1, description="The fact's id (memory_search).")],
        reason: Annotated[str, Field(min_length=1, max_length=2000)],
        ctx: Context[Any, Any],
    ) -> Forgotten:
        """Take an experiential fact out of memory, saying why (kept, hidden, for audit)."""
        return tools.forget(fact_id, reason, actor=client_actor(ctx))

    def decision_record(
        squad: SquadName,
        title: Annotated[str, Field(min_length=1, max_length=200)],
        decision: Annotated[str, Field(min_length=1, max_length=2000)],
        reasons: Annotated[list[Line], Field(min_length=1, max_length=20)],
        ctx: Context[Any, Any],
        alternatives: Annotated[list[Line], Field(max_length=20)] = [],  # noqa: B006
        supersedes: Annotated[int | None, Field(ge=1, description="Id it replaces.")] = None,
    ) -> Decision:
        """Record a decision with its reasons and the alternatives considered; it goes to
        the squad's decisions log (and decisions.md), never into the always-loaded memory."""
        return tools.decision_record(
            squad,
            title,
            decision,
            reasons,
            alternatives,
            supersedes,
            actor=client_actor(ctx),
        )

    def run_start(
        squad: SquadName,
        ctx: Context[Any, Any],
        goal: Annotated[str | None, Field(max_length=20_000)] = None,
    ) -> RunAccepted:
        """Start a run of the squad now (with an optional goal); it is queued and begins when
        the squad has no other run."""
        return tools.run_start(squad, goal, actor=client_actor(ctx))

    def run_approve(
        run_id: RunId,
        task: Annotated[str, Field(pattern=SLUG_PATTERN)],
        approved: bool,
        ctx: Context[Any, Any],
        reason: Annotated[str, Field(max_length=5000)] = "",
    ) -> ApprovalQueued:
        """Approve, or reject with a reason, the task a paused run waits on."""
        return tools.run_approve(run_id, task, approved, reason, actor=client_actor(ctx))

    def memory_revert(
        squad: SquadName,
        agent: AgentId,
        change: Annotated[
            str, Field(pattern=r"^[0-9a-f]{4,40}$", description="The id memory_history gives.")
        ],
        ctx: Context[Any, Any],
    ) -> MemoryRevert:
        """Undo one change to an agent's memory, as a new change that names you: lines it
        added are removed, lines it removed put back, facts it added forgotten and facts it
        took out brought back. History is never rewritten."""
        return tools.memory_revert(squad, agent, change, actor=client_actor(ctx))

    def memory_review(
        squad: SquadName,
        agent: AgentId,
        ctx: Context[Any, Any],
        action: Annotated[
            Literal["list", "approve", "reject", "edit"],
            Field(
                description="list: the facts waiting; approve or reject: the ids given; edit: "
                "approve the one id with `text` instead."
            ),
        ] = "list",
        ids: Annotated[list[Annotated[int, Field(ge=1, le=2**31 - 1)]], Field(max_length=500)] = [],  # noqa: B006
        text: Annotated[str | None, Field(min_length=1, max_length=2000)] = None,
    ) -> dict[str, Any]:
        """The agent's review queue (memory.review: low_confidence or all): facts the
        extractor proposed wait here, never in a prompt, until approved (written as the
        extractor would have), edited or rejected (never proposed again). Each decision is
        audited and committed as yours."""
        return _object(
            tools.memory_review(squad, agent, action, ids, text, actor=client_actor(ctx))
        )

    writes = (remember, forget, memory_revert, memory_review, decision_record)
    for write in (*writes, run_start, run_approve):
        server.add(write, read_only=False)
    return server
