"""squad's built-in offline model: deterministic, plausible answers from the prompt's own words.

It is the default model (``offline``) so a squad runs end to end on a fresh machine with no key
and no network. It is not an LLM: it reads the system prompt and the last user message, decides
what is asked, and answers from their words. Same messages in, same answer out: no randomness,
no clock. :class:`OfflineModel` is a :class:`~squad.model.types.ChatModel` of its own (as
pydantic-ai's ``TestModel`` is a ``Model``): it never loads litellm, makes no request and costs
nothing; :func:`answer` is its pure part.

What it recognises, first match wins (labels are case-insensitive, ``Label: value`` lines or
``## Label`` headings, so the prompts that work here read naturally to a real model too):

=============  =====================================================  ===========================
kind           recognised when the prompt...                          answer
=============  =====================================================  ===========================
tool result    ends with a ``tool`` message                           a line quoting the result
plan           mentions a plan, tasks and JSON                        ``{"tasks": [...]}``
review         names both verdicts, APPROVED and CHANGES REQUESTED    ``APPROVED: ...`` or
                                                                      ``CHANGES REQUESTED: ...``
work           has a ``Task:`` section                                a markdown deliverable
tool call      offers a memory tool and the user asks to remember     a ``memory_append`` call
chat           anything else                                          a reply quoting the message
=============  =====================================================  ===========================

Plans: the goal is the ``Goal:`` (or ``Squad goal:``) section, split into one task per sentence
or clause (``;``, ``then``, ``and`` before a verb); agents come from an ``Agents:`` (or ``Your
team:``) section, as a comma list or bullets, or from ``agents: a, b`` inside a sentence; each
task goes to the agent whose id or role shares a word stem with it, else round-robin; each task
depends on the one before. Reviews approve when the ``Work:`` section mentions every key term
(content word) of the ``Task:`` section. A request to remember something becomes a memory tool
call into the section :func:`squad.classifier.subjects.section_for` picks, the same
classifier the offline fact extractor uses. It extracts no facts itself: with the offline model,
the background extractor uses its offline classifier and makes no call.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from squad.model import prompt_text as pt
from squad.model.offline_name import CONTEXT_WINDOW, MODEL_NAME, is_offline
from squad.model.types import (
    FREE,
    Message,
    ModelEvent,
    ModelReply,
    Price,
    TokenCallback,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "CONTEXT_WINDOW",
    "MODEL_NAME",
    "OfflineAnswer",
    "OfflineModel",
    "answer",
    "count_usage",
    "is_offline",
    "plan_tasks",
]

Kind = Literal["tool_result", "plan", "review", "tool_call", "work", "chat"]


@dataclass(frozen=True)
class OfflineAnswer:
    """What the offline model says, and which kind of request it took the prompt for."""

    kind: Kind
    content: str
    tool_calls: tuple[ToolCall, ...] = ()


# -- entry points -----------------------------------------------------------------------------


class OfflineModel:
    """The built-in offline model as a :class:`~squad.model.types.ChatModel`.

    Answers are computed in this process: no request, no retry, no cost (usage is counted with
    the offline tokenizer, so budgets and run summaries read as they would on a real model).
    With ``on_token`` the answer streams word by word. Stateless, so one instance may serve
    any number of threads. ``on_event`` gets one ``call`` event per answer, as from the seam.
    """

    def __init__(self, *, on_event: Callable[[ModelEvent], None] | None = None) -> None:
        self._on_event = on_event

    @property
    def name(self) -> str:
        return MODEL_NAME

    def __repr__(self) -> str:
        return "OfflineModel()"

    def price(self) -> Price:
        """Free: it answers in this process."""
        return FREE

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        """Nothing to reserve: a free model's call costs nothing."""
        return 0.0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        started = time.perf_counter()
        reply = answer(messages, tools, response_format)
        prompt, completion = count_usage(messages, reply)
        if on_token is not None:
            for piece in re.findall(r"\s*\S+\s*", reply.content):
                on_token(piece)
        usage = Usage(prompt, completion, 0.0)
        latency = time.perf_counter() - started
        if self._on_event is not None:
            self._on_event(ModelEvent("call", MODEL_NAME, 1, latency, usage=usage))
        return ModelReply(reply.content, reply.tool_calls, usage, latency, MODEL_NAME, 1)


def answer(
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] = (),
    response_format: Mapping[str, Any] | None = None,
) -> OfflineAnswer:
    """Answer ``messages``, offering ``tools``; same input, same answer."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    prompt = f"{system}\n{user}".lower()

    if messages and messages[-1].role == "tool":
        reply = _tool_result(messages)
    elif all(pt.mentions(prompt, w) for w in ("plan", r"tasks?", "json")):
        reply = OfflineAnswer("plan", _plan(system, user))
    elif "approved" in prompt and "changes requested" in prompt:
        reply = OfflineAnswer("review", _review(system, user))
    elif (task := pt.section(user, "task") or pt.section(system, "task")) is not None:
        expected = pt.section(user, "expected") or pt.section(system, "expected")
        reply = OfflineAnswer("work", _work(task, expected))
    elif (call := _memory_call(user, tools)) is not None:
        reply = OfflineAnswer("tool_call", "", (call,))
    else:
        reply = OfflineAnswer("chat", _chat(user))
    if _wants_json(response_format) and reply.kind not in ("plan", "tool_call"):
        reply = OfflineAnswer(reply.kind, json.dumps({"answer": reply.content}))
    return reply


def count_usage(messages: Sequence[Message], reply: OfflineAnswer) -> tuple[int, int]:
    """(prompt tokens, completion tokens), counted with the offline model's tokenizer."""
    from squad.text.tokens import counter_for_model

    counter = counter_for_model(MODEL_NAME)
    prompt = sum(counter.count(m.content) for m in messages)
    completion = counter.count(reply.content) + sum(
        counter.count(c.name + json.dumps(c.arguments)) for c in reply.tool_calls
    )
    return prompt, completion


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:12]


def _phrases() -> dict[str, Any]:
    """The templates of ``squad/prompts/offline.yaml``: the one source of the offline model's
    fixed phrases, read by :mod:`squad.text.chatter` too so they are never filed as facts."""
    from squad import prompts

    return prompts.offline_phrases()


def _wants_json(response_format: Mapping[str, Any] | None) -> bool:
    return response_format is not None and str(response_format.get("type", "")).startswith("json")


# -- plans ------------------------------------------------------------------------------------


def _agents(system: str, user: str) -> list[tuple[str, str]]:
    """(id, role text) of the agents a plan may use, from the user message first."""
    for text in (user, system):
        section = pt.section(text, "agents")
        found = _agent_list(section) if section else []
        if not found:
            inline = re.search(r"\bagents?\b(?: ids?)?[^:\n.]{0,40}:\s*([^\n]+)", text, re.I)
            found = _agent_list(inline[1]) if inline else []
        if found:
            return found
    return []


def _agent_list(text: str) -> list[tuple[str, str]]:
    """Agents as a bullet list (the first block of bullets) or a comma list on the first line."""
    bullet = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*[`*_]*([A-Za-z0-9][A-Za-z0-9-]*)[`*_]*(.*)$")
    pairs: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = bullet.match(line)
        if match:
            pairs.append((match[1].lower(), match[2]))
        elif pairs:
            break
    if not pairs:
        first_line = text.strip().splitlines()[0] if text.strip() else ""
        listed = re.split(r"[.;](?:\s|$)", first_line)[0]
        pairs = [(t.strip("`'\"*_[]()").lower(), "") for t in re.split(r"[,\s]+", listed)]
    out: list[tuple[str, str]] = []
    for ident, role in pairs:
        if pt.SLUG.match(ident) and ident not in {a for a, _ in out} | {"and", "or"}:
            out.append((ident, role))
    return out


def _goal(system: str, user: str) -> str:
    goal = pt.section(user, "goal", paragraphs=True) or pt.section(system, "goal", paragraphs=True)
    if goal:
        return goal
    kept = [
        s for s in pt.sentences(user) if not re.search(r"\b(json|plan|agents?|tasks?)\b", s, re.I)
    ]
    return " ".join(kept) or "the goal"


def _stems(text: str) -> set[str]:
    return {pt.stem(w) for w in pt.words(text) if w not in pt.STOPWORDS}


def _task_id(clause: str, taken: set[str]) -> str:
    words = [
        w for w in pt.words(clause) if w not in pt.STOPWORDS and re.fullmatch(r"[a-z0-9-]+", w)
    ]
    base = "-".join(words[:3]).strip("-")[:40].strip("-") or "task"
    ident, n = base, 2
    while ident in taken:
        ident, n = f"{base}-{n}", n + 1
    taken.add(ident)
    return ident


def plan_tasks(goal: str, agents: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """The offline planner, pure: one task per clause of ``goal`` (at most eight), each for
    the agent of ``agents`` ((id, role) pairs) whose id or role shares a word stem with it,
    else the next one that is not a reviewer, each depending on the one before; tasks in the
    plan JSON's shape. Empty when the goal has no clause to plan, or there is no agent.

    Runs answer plan requests with it (as the offline model), and a run whose lead cannot
    write a valid plan runs its plan instead (:meth:`squad.runtime.executor.RunExecutor.plan`).
    """
    clauses = pt.clauses(goal)[:8]
    if not agents or not clauses:
        return []
    doers = [a for a in agents if "revi" not in _stems(f"{a[0]} {a[1]}")] or list(agents)
    taken: set[str] = set()
    tasks: list[dict[str, Any]] = []
    for i, clause in enumerate(clauses):
        stems = _stems(clause)
        scored = [(len(stems & _stems(f"{ident} {role}")), ident) for ident, role in agents]
        best = max(scored, key=lambda s: s[0])
        agent = best[1] if best[0] > 0 else doers[i % len(doers)][0]
        ident = _task_id(clause, taken)
        depends = [tasks[-1]["id"]] if tasks else []
        tasks.append(
            {
                "id": ident,
                "description": pt.sentence_case(clause),
                "agent": agent,
                "depends_on": depends,
            }
        )
    return tasks


def _plan(system: str, user: str) -> str:
    agents = _agents(system, user) or [("agent", "")]
    tasks = plan_tasks(_goal(system, user), agents)
    tasks = tasks or plan_tasks("Work toward the goal", agents)
    return json.dumps({"tasks": tasks}, indent=2)


# -- reviews and work -------------------------------------------------------------------------


def _review(system: str, user: str) -> str:
    phrases = _phrases()["review"]
    task = pt.section(user, "task") or pt.section(system, "task") or ""
    work = pt.section(user, "work")
    if work is None:
        work = user.replace(task, "") if task else ""
    if not work.strip():
        return str(phrases["empty"])
    terms = pt.terms(task)
    present = {w for w in pt.words(work)}
    missing = [t for t in terms if not any(w.startswith(pt.stem(t)) for w in present)]
    if missing:
        return str(phrases["changes"]).format(missing=", ".join(repr(t) for t in missing))
    return str(phrases["approved"]).format(terms=", ".join(terms) or "nothing specific")


def _work(task: str, expected: str | None) -> str:
    phrases = _phrases()
    description = " ".join(task.split())
    clauses = pt.clauses(description) or [description]
    title = pt.shorten(clauses[0].split(",")[0].rstrip("."), 70)
    steps = "\n".join(f"{i}. {pt.sentence_case(c)}" for i, c in enumerate(clauses, 1))
    terms = pt.terms(description)
    result = (
        str(phrases["work_result"]).format(terms=", ".join(terms))
        if terms
        else str(phrases["work_result_empty"])
    )
    expected_line = (
        str(phrases["work_expected"]).format(expected=" ".join(expected.split()))
        if expected
        else ""
    )
    return str(phrases["work"]).format(
        title=title[:1].upper() + title[1:],
        description=description,
        steps=steps,
        result=result,
        expected=expected_line,
    )


# -- tools and chat ---------------------------------------------------------------------------

_REMEMBER = re.compile(
    r"\b(?:remember|memori[sz]e|note down|make a note|don't forget|save (?:this|that)? ?"
    r"(?:to|in) (?:your )?memory)\b[\s,:]*(?:that\b|this\b)?[\s,:]*(?P<what>.*)",
    re.I | re.S,
)
_TEXT_ARGS = frozenset({"text", "content", "note", "fact", "value", "memory", "entry", "line"})


def _memory_call(user: str, tools: Sequence[ToolSpec]) -> ToolCall | None:
    from squad.classifier.subjects import section_for

    match = _REMEMBER.search(user)
    if not tools or match is None or user.rstrip().endswith("?"):
        return None
    chosen = next((t for t in tools if t.name == "memory_append"), None)
    chosen = chosen or next(
        (
            t
            for t in tools
            if "memory" in t.name and re.search(r"append|add|write|save|remember", t.name)
        ),
        None,
    )
    if chosen is None:
        return None
    what = pt.sentence_case(" ".join((match["what"] or user).split())) or pt.sentence_case(user)
    section = section_for(what)
    schema = chosen.parameters
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or properties)
    arguments: dict[str, Any] = {}
    for name, prop in properties.items():
        if name == "section":
            arguments[name] = section
        elif name in _TEXT_ARGS:
            arguments[name] = what
        elif name in required:
            arguments[name] = _placeholder_value(prop, what)
    return ToolCall(f"call_{_digest(chosen.name, user)}", chosen.name, arguments)


def _placeholder_value(prop: Any, text: str) -> Any:
    prop = prop if isinstance(prop, Mapping) else {}
    if prop.get("enum"):
        return prop["enum"][0]
    kind = prop.get("type")
    return {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}.get(
        str(kind), text
    )


def _tool_result(messages: Sequence[Message]) -> OfflineAnswer:
    last = messages[-1]
    name = last.name or next(
        (c.name for m in reversed(messages) for c in m.tool_calls if c.id == last.tool_call_id),
        "",
    )
    lines = [ln.strip() for ln in last.content.splitlines() if ln.strip()]
    result = pt.shorten(lines[0], 200) if lines else "(nothing)"
    text = str(_phrases()["tool_result"]).format(tool=name or "the tool", result=result)
    return OfflineAnswer("tool_result", text)


def _chat(user: str) -> str:
    phrases = _phrases()["chat"]
    text = " ".join(user.split())
    if not text:
        return str(phrases["empty"])
    terms = pt.terms(text, limit=3)
    topics = str(phrases["topics"]).format(terms=", ".join(terms)) if terms else ""
    template = phrases["question"] if text.endswith("?") else phrases["statement"]
    return str(template).format(quote=pt.shorten(text, 200), topics=topics)
