"""``squad chat``: one agent in its workspace context, one turn per message.

Every turn rebuilds the system prompt (boot files, memory ranked against the message), keeps
the conversation in the store (session ``chat``), and charges the squad's spend ledger.

A credential pasted into a turn reaches the model on that turn only: the store keeps the
message with it redacted (:class:`~squad.store.conversation.ConversationStore`), later turns
load that, and what they send (history and its summary) is redacted again, for rows stored
before redaction on write, as is what the model summariser reads
(:class:`~squad.chat.summarise.ModelSummariser`).

Every message of a turn, the user's, the assistant's and each tool's, is stored that way, and
the session keeps in memory (:attr:`ChatSession.seen`, never written anywhere) the credential
values its messages carried: a later message that repeats one ("OK, Blu3Whale$2024 is saved")
is stored, sent, summarised and offered to the memory tools with it redacted too, although
the detector alone would not see it there and the user's message was stored redacted. After
a restart (a new session) those values are gone: an echo of one is then redacted only where
the detector recognises it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from squad.chat.compress import compress_history
from squad.chat.rolling import SUMMARY_FILE, RollingSummariser
from squad.chat.summarise import ModelSummariser
from squad.errors import LimitReached
from squad.memory.agent import AgentContext
from squad.memory.decisions.tools import DecisionTools
from squad.memory.tools import MemoryTools
from squad.model.offline import is_offline
from squad.model.types import ChatModel, Message, ModelReply
from squad.paths import contained
from squad.runtime.agent import run_turn
from squad.runtime.files_tool import WorkspaceFiles
from squad.runtime.limits import RunBudget
from squad.runtime.mcp_client.journal import turn_identity
from squad.runtime.mcp_client.tools import McpTools
from squad.runtime.prices import require_prices
from squad.runtime.runlog import RunLog
from squad.runtime.tools import tool_from_function
from squad.runtime.tracing import NO_TRACE, TurnTrace, model_attributes
from squad.spec.models import ModelSpec
from squad.text.secrets import CUE_MESSAGES, SeenSecrets, redact_conversation
from squad.text.tokens import counter_for_model

if TYPE_CHECKING:
    from squad.runtime.runner import SquadRunner

__all__ = ["CHAT_SESSION", "ChatSession", "without_credentials"]

CHAT_SESSION = "chat"
CHAT_WINDOW = 400
"""Messages of a chat read per turn: compression works on this recent window, so a turn's cost
does not grow with a session that lasts for weeks (what fell out of it lives on in what the
extractor learned)."""


@dataclass
class _ChatRecorder:
    session: ChatSession

    def message(self, role: str, content: str, *, tool_name: str | None = None) -> None:
        s = self.session
        s.heard(content)
        s.runner.store.conversation.record_message(
            s.ctx.squad.name,
            s.ctx.agent.id,
            role,
            content,
            session_id=CHAT_SESSION,
            tool_name=tool_name,
            known=s.seen,
        )

    def model_call(self, reply: ModelReply) -> None:
        s = self.session
        s.runner.store.spend.record(s.ctx.squad.name, agent=s.ctx.agent.id, **reply.spend())

    def tool_call(self, name: str, arguments: dict[str, Any], result: str) -> None:
        return None


class _ShownNames(_ChatRecorder):
    """A chat turn's recorder that stores MCP tools as ``server.tool``, as runs do."""

    def __init__(self, session: ChatSession, shown: dict[str, str]) -> None:
        super().__init__(session)
        self._shown = shown

    def message(self, role: str, content: str, *, tool_name: str | None = None) -> None:
        shown = self._shown.get(tool_name, tool_name) if tool_name else tool_name
        super().message(role, content, tool_name=shown)


class ChatSession:
    history_budget: int | None = None
    """Tokens of earlier conversation sent with each turn; past them, older turns are
    compressed (summary + landmarks + recent turns, :mod:`squad.chat.compress`). None: the
    prompt's history region, plus what the system prompt's regions leave unused
    (:meth:`~squad.memory.regions.Regions.history_room`), sized from the model's window."""

    def __init__(
        self, runner: SquadRunner, ctx: AgentContext, model: ChatModel, model_spec: ModelSpec
    ) -> None:
        self.runner = runner
        self.ctx = ctx
        self.model = model
        self.model_spec = model_spec
        self._budget: RunBudget | None = None
        self._mcp: McpTools | None = None
        self._mcp_log: RunLog | None = None
        self._mcp_started = False
        self.session_id = f"chat-{ctx.agent.id}-{uuid.uuid4().hex[:12]}"
        """Names this session's MCP servers and their journal and log (``logs/run-<it>...``)."""
        self.seen = SeenSecrets()
        """The credential values this session's messages carried, in memory only: redacted
        wherever a later message, summary, log line or memory write repeats them."""
        self._recent: list[str] | None = None
        """The session's last :data:`CUE_MESSAGES` messages as said (a bare value's cue may be
        in them); None until the first turn reads the stored ones."""
        self.summariser: RollingSummariser | None = None
        """The model's rolling summary of folded messages; None on the offline model, whose
        history is summarised offline (no call)."""
        if not is_offline(model_spec.name):
            self.summariser = RollingSummariser(
                contained(ctx.workspace, "agents", ctx.agent.id, SUMMARY_FILE),
                self._model_summary,
                model=model_spec.name,
                known=self.seen,
            )

    @classmethod
    def open(
        cls, runner: SquadRunner, squad: str, agent: str, *, model: str | None = None
    ) -> ChatSession:
        spec, workspace = runner.squad_of(squad)
        ctx = AgentContext.of(spec, agent, workspace)
        model_spec = ModelSpec(name=model) if model else (ctx.agent.model or spec.model)
        require_prices(spec, runner.model_factory, override=model, agents=(agent,))
        return cls(runner, ctx, runner.model_factory(model_spec, lambda event: None), model_spec)

    def say(self, text: str, *, on_token: Callable[[str], None] | None = None) -> str:
        store, ctx = self.runner.store, self.ctx
        budget = RunBudget(
            10**9, ctx.squad.limits.max_cost_usd, store.spend.of_squad(ctx.squad.name).cost_usd
        )
        self._budget = budget
        window = store.conversation.messages(
            ctx.squad.name, ctx.agent.id, session_id=CHAT_SESSION, newest=CHAT_WINDOW
        )
        if self._recent is None:
            self._recent = [m.content for m in window[-CUE_MESSAGES:]]
        prompt = self.runner.memory.prompt(
            ctx,
            message=text,
            recall_before=window[0].seq if window else None,
            model=self.model_spec,
        )
        history = compress_history(
            [
                Message("user" if m.role == "user" else "assistant", m.content)
                for m in window
                if m.role in ("user", "assistant")
            ],
            budget=(
                prompt.regions.history_room(prompt.used)
                if self.history_budget is None
                else self.history_budget
            ),
            counter=counter_for_model(self.model_spec.name),
            summariser=self.summariser,
        ).messages
        history = without_credentials(history, known=self.seen)
        files = WorkspaceFiles(ctx.workspace, "chat")
        functions: list[Callable[..., str]] = [files.read_file, files.list_files, files.write_file]
        if ctx.memory_enabled:
            tools = MemoryTools(self.runner.memory, ctx, known=self.seen)
            decisions = DecisionTools(self.runner.decisions, ctx, known=self.seen)
            functions += [
                tools.memory_read,
                tools.memory_append,
                tools.memory_search,
                tools.memory_read_daily,
                tools.memory_write_daily,
                decisions.decision_record,
                decisions.decision_search,
            ]
        offered = [tool_from_function(f) for f in functions]
        shown: dict[str, str] = {}
        mcp = self._servers()
        if mcp is not None:
            turn = mcp.for_turn(ctx.agent.id, turn_identity(CHAT_SESSION, ctx.agent.id, text))
            offered += turn.tools
            shown = turn.shown
        result = run_turn(
            model=self.model,
            system_prompt=prompt.text,
            user_message=text,
            history=history,
            tools=offered,
            recorder=_ShownNames(self, shown),
            budget=budget,
            timeout_s=self.model_spec.timeout_s or 120.0,
            on_token=on_token,
            trace=self._trace(),
        )
        self.runner.extraction.notify(ctx, 1)  # queues a background pass at the interval
        return result.text

    def heard(self, content: str) -> None:
        """Keep the credential values of ``content``, one of this session's messages as said,
        judged after the ones before it (in memory only: :attr:`seen`)."""
        recent = self._recent or []
        self.seen.learn(content, previous=recent)
        self._recent = [*recent, content][-CUE_MESSAGES:]

    def _trace(self) -> TurnTrace:
        """Each chat turn is a trace of its own: ``invoke_agent`` with its calls inside."""
        telemetry = self.runner.telemetry
        if not telemetry.enabled:
            return NO_TRACE
        return TurnTrace(
            telemetry,
            self.ctx.agent.id,
            model_attributes(self.model_spec),
            None,
            {"gen_ai.conversation.id": self.session_id, "squad.name": self.ctx.squad.name},
        )

    def _servers(self) -> McpTools | None:
        """The MCP servers this agent may use (its ``tools:``), started at the first turn and
        kept for the session; None when it lists none."""
        if not self._mcp_started:
            self._mcp_started = True
            ctx = self.ctx
            mine = ctx.squad.model_copy(update={"agents": [ctx.agent]})
            if ctx.agent.tools:
                self._mcp_log = RunLog(ctx.workspace, self.session_id, known=self.seen)
                self._mcp = McpTools.start(
                    mine, ctx.workspace, self.session_id, self._mcp_log.emit, known=self.seen
                )
        return self._mcp

    def close(self) -> None:
        """Stop the session's MCP servers (idempotent); the conversation stays stored."""
        mcp, self._mcp = self._mcp, None
        if mcp is not None:
            mcp.close()
        log, self._mcp_log = self._mcp_log, None
        if log is not None:
            log.close()

    def __enter__(self) -> ChatSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _model_summary(
        self, previous: str, messages: Sequence[Message], max_tokens: int
    ) -> str | None:
        """The chat model's summary of folded messages, charged to the squad like a turn;
        None (the offline summary stands in) when the spend cap is reached."""
        budget = self._budget
        reserved = 0.0
        if budget is not None:
            reserved = self.model.reserve_usd([Message.user(previous), *messages], ())
            try:
                budget.reserve(reserved)  # as a turn does: the call must fit the cap first
            except LimitReached:
                return None
        summariser = ModelSummariser(
            self.model,
            timeout_s=self.model_spec.timeout_s or 60.0,
            on_reply=self._charge,
            known=self.seen,
        )
        try:
            return summariser.summarise(previous, messages, max_tokens)
        finally:
            if budget is not None:
                budget.settle(reserved, 0, 0, 0.0)  # _charge counted what it really cost

    def _charge(self, reply: ModelReply) -> None:
        ctx = self.ctx
        self.runner.store.spend.record(ctx.squad.name, agent=ctx.agent.id, **reply.spend())
        if self._budget is not None:
            self._budget.charge(
                reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.cost_usd
            )


def without_credentials(
    messages: Sequence[Message], *, known: Collection[str] = ()
) -> tuple[Message, ...]:
    """``messages`` with credentials redacted, each judged after the ones before it, and every
    occurrence of a ``known`` value (one found earlier in the session)."""
    contents = redact_conversation([m.content for m in messages], known=known)
    return tuple(
        m if text == m.content else replace(m, content=text)
        for m, text in zip(messages, contents, strict=True)
    )
