"""MCP tools for squad's agents: the servers of ``mcp_servers:`` as tools of the agents' turns.

:class:`McpTools` starts the servers the run's agents may use when the run starts (through
:mod:`squad.runtime.mcp_client.bridge`, which alone imports the SDK) and stops them when it ends;
:meth:`McpTools.for_turn` gives one turn the tools its agent lists in ``tools:``.

Names: a tool is shown and logged as ``server.tool``, but OpenAI-style APIs accept only
function names matching ``^[a-zA-Z0-9_-]{1,64}$``, so the model is offered ``server__tool``
and its calls are mapped back by table lookup, never by parsing. Server names are slugs (no
``_``), so the first ``__`` always ends the server's name. A tool whose name does not fit (a
'.' or space in it, too long) is left out, with an ``mcp_tool_skipped`` event.

Every answer is journaled (:mod:`squad.runtime.mcp_client.journal`) before the model sees it, so a
resumed run answers an identical call of the same turn from the journal.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.model.types import ToolSpec
from squad.paths import contained
from squad.runtime.mcp_client.journal import (
    MAX_RESULT_CHARS,
    JournalEntry,
    McpJournal,
    bound_answer,
    journal_path,
)
from squad.runtime.tools import Tool
from squad.spec.models import SquadSpec, split_tool_ref

if TYPE_CHECKING:
    from squad.runtime.mcp_client.bridge import McpBridge

__all__ = [
    "MAX_RESULT_CHARS",
    "CallOutcome",
    "McpCall",
    "McpTools",
    "RemoteTool",
    "TurnTools",
    "offered_name",
    "servers_in_use",
]

OFFERED_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SEPARATOR = "__"
MAX_DESCRIPTION_CHARS = 1024

Emit = Callable[..., object]
"""The run log's ``emit(event, **fields)``."""


def offered_name(server: str, tool: str) -> str | None:
    """The name the model is offered for ``server.tool``, or None when none fits."""
    name = f"{server}{SEPARATOR}{tool}"
    return name if OFFERED_NAME.match(name) else None


def servers_in_use(spec: SquadSpec) -> list[str]:
    """The servers some agent of ``spec`` may use, in definition order: the ones a run starts."""
    used = {split_tool_ref(entry)[0] for agent in spec.agents for entry in agent.tools}
    return [name for name in spec.mcp_servers if name in used]


@dataclass(frozen=True)
class RemoteTool:
    """A tool a server listed."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class CallOutcome:
    """What a call gave: the text for the model, and whether it is an error.

    ``failure`` is set when the server gave no usable answer (it exited, hung past its
    timeout, answered with something that is no tool result): nothing was answered, so the
    journal keeps nothing and a resumed run calls again.
    """

    text: str
    is_error: bool
    duration_s: float
    failure: str | None = None


@dataclass(frozen=True)
class McpCall:
    """One MCP call as the run log records it."""

    server: str
    tool: str
    """As shown: 'server.tool'."""
    duration_s: float
    is_error: bool
    replayed: bool = False
    """Answered from the journal of an earlier attempt at the same turn."""
    failure: str | None = None


@dataclass
class TurnTools:
    """The MCP tools of one turn, and the details of the calls it made for the recorder."""

    tools: list[Tool] = field(default_factory=list)
    shown: dict[str, str] = field(default_factory=dict)
    """Offered name -> 'server.tool'."""
    calls: dict[str, McpCall] = field(default_factory=dict)
    """Offered name -> its latest call; the recorder takes it when logging the call."""

    def take(self, offered: str) -> McpCall | None:
        return self.calls.pop(offered, None)


@dataclass(frozen=True)
class _Offer:
    server: str
    tool: str
    spec: ToolSpec

    @property
    def shown(self) -> str:
        return f"{self.server}.{self.tool}"


class McpTools:
    """The MCP servers of one run; use :meth:`start`, then :meth:`close` when the run ends."""

    def __init__(self, spec: SquadSpec, bridge: McpBridge, journal: McpJournal, emit: Emit):
        self._spec = spec
        self._bridge = bridge
        self._journal = journal
        self._emit = emit
        self._offers: dict[str, _Offer] = {}
        self._by_agent: dict[str, list[str]] = {}
        self._closed = threading.Event()

    @classmethod
    def start(
        cls,
        spec: SquadSpec,
        workspace: Path,
        run_id: str,
        emit: Emit,
        *,
        progress: Callable[[str], None] | None = None,
        known: Collection[str] = (),
    ) -> McpTools | None:
        """Start the servers the agents of ``spec`` may use; None when there are none.
        ``known``: the run's credential values, redacted from the answers journaled.

        A server that cannot start is reported (``mcp_error``, a progress line) and its tools
        are not offered; the run goes on without them.
        """
        names = servers_in_use(spec)
        if not names:
            return None
        from squad.runtime.mcp_client.bridge import McpBridge  # the SDK: about a second to import

        errlog = contained(workspace, "logs", f"run-{run_id}.mcp-stderr.log")
        errlog.parent.mkdir(parents=True, exist_ok=True)
        bridge = McpBridge(
            {name: spec.mcp_servers[name] for name in names},
            cwd=workspace,
            run_id=run_id,
            errlog=errlog,
        )
        journal = McpJournal(journal_path(workspace, run_id), known=known)
        tools = cls(spec, bridge, journal, emit)
        started = time.monotonic()
        try:
            listed = bridge.start()
        except BaseException:
            bridge.close()
            raise
        tools._offer(listed, time.monotonic() - started)
        say = progress or (lambda _: None)
        for server, result in listed.items():
            if isinstance(result, str):
                say(f"mcp: server {server!r} did not start ({result}); going on without it")
            else:
                say(f"mcp: server {server!r} started with {len(result)} tools")
        return tools

    def close(self) -> None:
        """Stop every server and wait for them; idempotent."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._bridge.close()
        self._journal.close()
        for server, error in self._bridge.close_errors.items():
            self._emit("mcp_error", server=server, error=f"while stopping: {error}")
        for server, noise in self._bridge.noise.items():
            if noise.lines or noise.oversized:  # the lines themselves are in the stderr log
                self._emit(
                    "mcp_server_noise", server=server, lines=noise.lines, oversized=noise.oversized
                )
        self._emit("mcp_servers_stopped", servers=servers_in_use(self._spec))

    def __enter__(self) -> McpTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tool_names(self, agent_id: str) -> list[str]:
        """The tools ``agent_id`` is offered, as shown ('server.tool')."""
        return [self._offers[o].shown for o in self._by_agent.get(agent_id, [])]

    def for_turn(self, agent_id: str, turn: str) -> TurnTools:
        """The tools of one turn of ``agent_id``; ``turn`` names it in the journal."""
        result = TurnTools()
        for offered in self._by_agent.get(agent_id, []):
            offer = self._offers[offered]
            result.shown[offered] = offer.shown
            result.tools.append(Tool(offer.spec, self._function(offer, turn, result)))
        return result

    # -- internals -------------------------------------------------------------------------

    def _offer(self, listed: dict[str, list[RemoteTool] | str], elapsed: float) -> None:
        for server, tools in listed.items():
            if isinstance(tools, str):
                self._emit("mcp_error", server=server, error=f"cannot start: {tools}")
                continue
            kept = [t.name for t in tools if self._add_offer(t) is not None]
            self._emit(
                "mcp_server_started",
                server=server,
                transport=self._spec.mcp_servers[server].transport,
                tools=kept,
                startup_s=round(elapsed, 3),
            )
        for agent in self._spec.agents:
            self._by_agent[agent.id] = self._allowed(agent.id, agent.tools, listed)

    def _add_offer(self, tool: RemoteTool) -> str | None:
        offered = offered_name(tool.server, tool.name)
        if offered is None or offered in self._offers:
            reason = (
                f"its name {tool.name!r} cannot be offered as a function name "
                f"(letters, digits, '_' and '-', {tool.server}__<tool> at most 64 characters)"
                if offered is None
                else "the server lists it twice"
            )
            self._emit("mcp_tool_skipped", server=tool.server, tool=tool.name, reason=reason)
            return None
        schema = tool.input_schema if tool.input_schema.get("type") == "object" else None
        if schema is None:
            self._emit(
                "mcp_tool_skipped",
                server=tool.server,
                tool=tool.name,
                reason="its input schema is not a JSON schema of type 'object'",
            )
            return None
        description = f"{tool.description.strip()[:MAX_DESCRIPTION_CHARS]} (MCP: {tool.server})"
        spec = ToolSpec(offered, description, schema)
        self._offers[offered] = _Offer(tool.server, tool.name, spec)
        return offered

    def _allowed(
        self, agent_id: str, entries: Iterable[str], listed: dict[str, list[RemoteTool] | str]
    ) -> list[str]:
        allowed: list[str] = []
        for entry in entries:
            server, tool = split_tool_ref(entry)
            if isinstance(listed.get(server), str) or server not in listed:
                continue  # failed to start: reported once above
            offers = [
                name
                for name, offer in self._offers.items()
                if offer.server == server and (tool is None or offer.tool == tool)
            ]
            if tool is not None and not offers:
                self._emit("mcp_tool_missing", agent=agent_id, server=server, tool=tool)
            allowed += [name for name in offers if name not in allowed]
        return allowed

    def _function(self, offer: _Offer, turn: str, record: TurnTools) -> Callable[..., str]:
        offered = offer.spec.name

        def call(**arguments: Any) -> str:
            outcome, replayed = self._call(offer, turn, arguments)
            record.calls[offered] = McpCall(
                offer.server,
                offer.shown,
                round(outcome.duration_s, 4),
                outcome.is_error,
                replayed=replayed,
                failure=outcome.failure,
            )
            return outcome.text

        return call

    def _call(
        self, offer: _Offer, turn: str, arguments: dict[str, Any]
    ) -> tuple[CallOutcome, bool]:
        key = self._journal.next_key(turn, offer.shown, arguments)
        earlier = self._journal.recorded(key)
        if earlier is not None:
            return CallOutcome(bound_answer(earlier.text)[0], earlier.is_error, 0.0), True
        outcome = self._bridge.call(offer.server, offer.tool, arguments)
        if outcome.failure is not None:
            self._emit("mcp_error", server=offer.server, tool=offer.shown, error=outcome.failure)
            return outcome, False
        # Cut first: the journal redacts what it keeps, and redacting megabytes takes minutes.
        text, cut = bound_answer(outcome.text)
        outcome = replace(outcome, text=text)
        self._journal.record(
            key,
            JournalEntry(text, outcome.is_error),
            server=offer.server,
            duration_s=round(outcome.duration_s, 4),
            **({"cut_chars": cut} if cut else {}),
        )
        return outcome, False
