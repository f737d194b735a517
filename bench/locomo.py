"""Long-term recall on LoCoMo: what squad's memory puts in front of a question, offline.

    python -m bench.locomo PATH [--json] [--ranking lexical|hashing|minilm]

PATH is a LoCoMo JSON file (a list of samples with ``conversation`` and ``qa``), such as the
three conversations in ``../shared/data/locomo/locomo-dev.json`` (from "Evaluating Very
Long-Term Conversational Memory of LLM Agents", Maharana et al., ACL 2024, released by Snap
Research under CC BY-NC 4.0: evaluation only, not in this repository, not in ``make bench``).

For each conversation, in a squad home of its own (a real SQLite store and workspace):

1. Replay. Each session's turns are recorded in order as the conversation of one agent, the
   clock at the session's date (a few seconds per turn), so relative dates resolve against
   it: ``speaker_a``'s turns as user messages (with their author), ``speaker_b``'s as the
   agent's (the agent is named after them). Shared photos come as ``[shares a photo: ...]``.
   The background extractor runs as the daemon would run it: every ``trigger_interval``
   replies, and once more at the end of each session; it files facts (the offline extractor,
   no model) and keeps every message in the agent's conversation archive.
2. Consolidation: the memory maintenance squad runs on a schedule (``run_gc``), at the end.
3. Questions. For each question of categories 1-4 the memory block squad would inject with
   the question as the next message, at 500, 1,000 and 2,000 tokens, the whole block
   counted (its wrapper too). The budget is split as a squad would configure it: a quarter
   for the memory layers (``memory.max_tokens``, 60/40 A/B, unused share lent across and on
   to recall), the rest for recall (``memory.recall_max_tokens``); see :data:`RECALL_SHARE`.

Scores, per budget and per category:

- evidence hit rate: the share of questions whose context holds a line derived from one of
  the question's evidence turns: a recalled message, a Layer A fact or a memory.md line whose
  source message (the seqs squad records as provenance) is an evidence turn;
- answer in context: the share whose context holds the gold answer: some line (a recalled
  message with its day heading) has a span whose token F1 against the answer, after LoCoMo's
  normalisation (lower case, no punctuation or articles, here with squad's light stemming),
  is at least 0.5;
- tokens: what was injected (the memory block as counted for the agent's model).

Baselines in the same run: BM25 over the raw turns (``speaker: text``, squad's tokeniser
without stemming) packed best first into the same budget; the most recent turns in the
budget; and the full history. Ingest time is the wall time of step 1 and 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import statistics
import string
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.support import temp_settings
from squad.memory.assembly import CLOSE_MARK, MEMORY_TITLE, OPEN_MARK, WARNING
from squad.text.lexical import stem, term_counts
from squad.text.tokens import TokenCounter, counter_for_model

BUDGETS = (500, 1000, 2000)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TARGET_HIT_RATE = 0.85
TARGET_INGEST_S = 60.0
MODEL = "offline"
MEMORY_FRAME = (MEMORY_TITLE, OPEN_MARK, WARNING, CLOSE_MARK)
TURN_STEP = timedelta(seconds=20)
RECALL_SHARE = 0.75
"""Share of a budget given to recall (``memory.recall_max_tokens``); the rest is the memory
layers' ``memory.max_tokens`` (60/40 A/B). Chosen on the three dev conversations: at 2,000
tokens 0.5 scored 84.2%, 0.75 86.5%, 0.85 86.8% (the facts the offline extractor files from
small talk are mostly the same turns, shorter and without their day)."""


# -- the data ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    dia: str
    speaker: str
    text: str
    session: int
    when: datetime


@dataclass(frozen=True)
class Question:
    text: str
    answer: str
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample: str
    speaker_a: str
    speaker_b: str
    turns: list[Turn]
    questions: list[Question]


def session_time(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` as an aware datetime (UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: Path) -> list[Conversation]:
    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        turns: list[Turn] = []
        number = 1
        while f"session_{number}" in conv:
            start = session_time(conv[f"session_{number}_date_time"])
            for i, turn in enumerate(conv[f"session_{number}"]):
                text = turn["text"]
                if turn.get("blip_caption"):
                    text = f"{text} [shares a photo: {turn['blip_caption']}]"
                when = start + i * TURN_STEP
                turns.append(Turn(turn["dia_id"], turn["speaker"], text, number, when))
            number += 1
        questions = [
            Question(
                q["question"], str(q["answer"]), _dia_ids(q.get("evidence", ())), q["category"]
            )
            for q in sample["qa"]
            if q.get("category") in CATEGORIES and "answer" in q
        ]
        out.append(
            Conversation(
                sample["sample_id"], conv["speaker_a"], conv["speaker_b"], turns, questions
            )
        )
    return out


_DIA_ID = re.compile(r"D\d+:\d+")


def _dia_ids(evidence: Sequence[str]) -> frozenset[str]:
    """Evidence dia ids; a few LoCoMo entries pack several into one string ("D8:6; D9:17")."""
    return frozenset(found for item in evidence for found in _DIA_ID.findall(str(item)))


# -- scoring -----------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def answer_tokens(text: str) -> list[str]:
    """LoCoMo's answer normalisation (lower case, punctuation and articles out), stemmed."""
    text = _ARTICLES.sub(" ", text.lower().replace(",", "").translate(_PUNCT))
    return [stem(word) for word in text.split()]


def f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    common = Counter(predicted) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def holds_answer(items: Sequence[str], gold: Sequence[str]) -> bool:
    """Some item has a span (about the answer's length) with token F1 >= 0.5."""
    if not gold:
        return False
    wanted = set(gold)
    for item in items:
        tokens = answer_tokens(item)
        if not wanted.intersection(tokens):
            continue
        for size in range(max(1, len(gold) - 1), len(gold) + 2):
            for start in range(0, max(1, len(tokens) - size + 1)):
                if f1(tokens[start : start + size], gold) >= 0.5:
                    return True
    return False


@dataclass
class Tally:
    """Hits and tokens of one method at one budget, overall and per category."""

    questions: int = 0
    evidence: int = 0
    answer: int = 0
    tokens: list[int] = field(default_factory=list)
    by_category: dict[int, list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0])
    )

    def add(self, category: int, evidence: bool, answer: bool, tokens: int) -> None:
        self.questions += 1
        self.evidence += evidence
        self.answer += answer
        self.tokens.append(tokens)
        row = self.by_category[category]
        row[0] += 1
        row[1] += evidence
        row[2] += answer

    def to_dict(self) -> dict[str, Any]:
        n = max(self.questions, 1)
        return {
            "evidence_hit_rate": round(self.evidence / n, 4),
            "answer_in_context": round(self.answer / n, 4),
            "tokens_mean": round(statistics.fmean(self.tokens), 1) if self.tokens else 0.0,
            "by_category": {
                CATEGORIES[c]: {
                    "questions": row[0],
                    "evidence_hit_rate": round(row[1] / row[0], 4),
                    "answer_in_context": round(row[2] / row[0], 4),
                }
                for c, row in sorted(self.by_category.items())
            },
        }


# -- baselines over the raw turns --------------------------------------------------------


def raw_line(turn: Turn) -> str:
    return f"{turn.speaker}: {turn.text}"


def bm25_order(conv: Conversation, query: str) -> list[int]:
    """Turn indexes by BM25 (k1 1.2, b 0.75) of ``speaker: text`` against ``query``."""
    docs = [term_counts(raw_line(t), stemmed=False) for t in conv.turns]
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(doc.keys())
    wanted = term_counts(query, stemmed=False)
    scores = []
    for doc in docs:
        length, score = sum(doc.values()), 0.0
        for term in wanted:
            tf = doc.get(term, 0)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
        scores.append(score)
    return sorted(range(n), key=lambda i: (-scores[i], i))


def pack(
    order: Sequence[int], lines: Sequence[str], budget: int, counter: TokenCounter
) -> list[int]:
    kept, used = [], 0
    for index in order:
        cost = counter.count(lines[index]) + 1
        if used + cost <= budget:
            kept.append(index)
            used += cost
    return kept


# -- squad -------------------------------------------------------------------------------


class SteppedClock:
    """The replay's clock: set to each turn's time; monotonic."""

    def __init__(self) -> None:
        self.now = datetime(2000, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def set(self, when: datetime) -> None:
        self.now = max(self.now + timedelta(microseconds=1), when)


SQUAD = """\
name: {name}
process: sequential
agents:
  - {{id: friend, name: {agent}, role: Talks with {user} about life, profile: locomo-{name}}}
tasks:
  - {{id: chat, description: Keep the conversation going, agent: friend}}
memory: {{max_tokens: 1000, share_unused: true}}
"""


@dataclass
class Ingested:
    ctx: Any
    dia_of_seq: dict[int, str]
    line_sources: dict[str, set[int]]
    seconds: float
    facts: int
    archived: int


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def ingest(app: Any, clock: SteppedClock, conv: Conversation) -> Ingested:
    from squad.extraction.job import AgentExtractor, interval_of
    from squad.memory.agent import AgentContext
    from squad.memory.gc import GcPolicy, run_gc
    from squad.spec.loader import squad_from_text

    started = time.perf_counter()
    name = f"locomo-{_slug(conv.sample)}"
    spec = squad_from_text(SQUAD.format(name=name, agent=conv.speaker_b, user=conv.speaker_a))
    clock.set(conv.turns[0].when - timedelta(minutes=1))
    workspace = app.squads.create(spec).path
    ctx = AgentContext.of(spec, "friend", workspace)
    extractor = AgentExtractor(app.memory, lambda c: None, clock=clock)
    interval = interval_of(ctx)
    conversation = app.store.conversation
    dia_of_seq: dict[int, str] = {}
    line_sources: dict[str, set[int]] = defaultdict(set)
    replies = 0

    def extract(force: bool) -> None:
        for report in extractor.run(ctx, force=force):
            for entry in report.written:
                line_sources[_fact_key(entry["text"])].update(entry.get("source_seqs", ()))

    for index, turn in enumerate(conv.turns):
        clock.set(turn.when)
        role = "assistant" if turn.speaker == conv.speaker_b else "user"
        record = conversation.record_message(
            spec.name,
            "friend",
            role,
            turn.text,
            session_id=f"session-{turn.session}",
            author=None if role == "assistant" else turn.speaker,
        )
        dia_of_seq[record.seq] = turn.dia
        if role == "assistant":
            replies += 1
            if replies % interval == 0:
                extract(force=False)
        last_of_session = (
            index + 1 == len(conv.turns) or conv.turns[index + 1].session != turn.session
        )
        if last_of_session:
            clock.set(turn.when + timedelta(minutes=5))
            extract(force=True)
    run_gc(app.store, {spec.name: workspace}, now=clock(), policy=GcPolicy())
    seconds = time.perf_counter() - started
    facts = len(app.store.memory.facts(app.memory.namespace_id(ctx), limit=100_000))
    archived = len(app.store.memory.facts(app.memory.archive_id(ctx), limit=100_000))
    return Ingested(ctx, dia_of_seq, line_sources, seconds, facts, archived)


def _fact_key(text: str) -> str:
    return " ".join(text.split()).casefold()


def squad_context(
    app: Any, ingested: Ingested, question: str, budget: int
) -> tuple[int, set[int], list[str]]:
    """Tokens injected, the seqs behind its lines, and its lines (recalled ones with their
    day) for the memory block of ``question`` at ``budget``."""
    from squad.extraction.lines import parse_line

    counter = app.memory.counter(ingested.ctx)
    inside = budget - counter.count("\n".join(MEMORY_FRAME))  # the wrapper counts too
    memory_share = inside - round(inside * RECALL_SHARE)
    block = app.memory.memory_block(
        ingested.ctx,
        message=question,
        max_tokens=memory_share,
        recall_tokens=inside - memory_share,
        touch=False,
    )
    sources = set(block.recalled) | set(block.experience_sources)
    items: list[str] = []
    day = ""
    in_recall = False
    for line in block.text.splitlines():
        if line.startswith("### Earlier conversation"):
            in_recall = True
        if line.startswith("#### "):
            day = line[5:]
            continue
        if not line.startswith("- "):
            continue
        items.append(f"{day} {line}" if in_recall else line)
        if not in_recall:
            parsed = parse_line(line)
            if parsed is not None:
                sources |= ingested.line_sources.get(_fact_key(parsed.text), set())
    return counter.count(block.text), sources, items


# -- the run -----------------------------------------------------------------------------


def evaluate(path: Path, ranking: str = "lexical") -> dict[str, Any]:
    from squad.app import App

    conversations = load(path)
    counter = counter_for_model(MODEL)
    methods = ("squad", "bm25_raw", "recent", "full")
    tallies = {(m, b): Tally() for m in methods for b in BUDGETS}
    ingest_s: list[float] = []
    stats: list[dict[str, Any]] = []
    for conv in conversations:
        clock = SteppedClock()
        with temp_settings() as settings:
            settings = dataclasses.replace(settings, memory_ranking=ranking)
            with App.open(settings, clock=clock) as app:
                ingested = ingest(app, clock, conv)
                ingest_s.append(ingested.seconds)
                stats.append(
                    {
                        "sample": conv.sample,
                        "turns": len(conv.turns),
                        "facts": ingested.facts,
                        "archived": ingested.archived,
                        "ingest_s": round(ingested.seconds, 2),
                    }
                )
                dia_of_seq = ingested.dia_of_seq
                lines = [raw_line(t) for t in conv.turns]
                full_tokens = counter.count("\n".join(lines))
                for q in conv.questions:
                    gold = answer_tokens(q.answer)
                    order = bm25_order(conv, q.text)
                    for budget in BUDGETS:
                        tokens, sources, items = squad_context(app, ingested, q.text, budget)
                        dias = {dia_of_seq[s] for s in sources if s in dia_of_seq}
                        tallies[("squad", budget)].add(
                            q.category, bool(dias & q.evidence), holds_answer(items, gold), tokens
                        )
                        for method, picked in (
                            ("bm25_raw", pack(order, lines, budget, counter)),
                            ("recent", pack(range(len(lines) - 1, -1, -1), lines, budget, counter)),
                        ):
                            shown = [lines[i] for i in picked]
                            tallies[(method, budget)].add(
                                q.category,
                                any(conv.turns[i].dia in q.evidence for i in picked),
                                holds_answer(shown, gold),
                                counter.count("\n".join(shown)),
                            )
                    tallies[("full", BUDGETS[-1])].add(
                        q.category, True, holds_answer(lines, gold), full_tokens
                    )
    questions = sum(len(c.questions) for c in conversations)
    return {
        "conversations": len(conversations),
        "questions": questions,
        "ranking": ranking,
        "budgets": {str(b): tallies[("squad", b)].to_dict() for b in BUDGETS},
        "baselines": {
            "bm25_raw": {str(b): tallies[("bm25_raw", b)].to_dict() for b in BUDGETS},
            "recent": {str(b): tallies[("recent", b)].to_dict() for b in BUDGETS},
            "full": tallies[("full", BUDGETS[-1])].to_dict(),
        },
        "ingest_s_per_conversation": round(statistics.fmean(ingest_s), 2),
        "per_conversation": stats,
        "targets": {
            "evidence_hit_rate_at_2000": TARGET_HIT_RATE,
            "ingest_s_per_conversation": TARGET_INGEST_S,
        },
    }


def render(result: dict[str, Any]) -> Iterator[str]:
    yield (
        f"LoCoMo: {result['conversations']} conversations, {result['questions']} questions "
        f"(categories 1-4), ranking {result['ranking']}"
    )
    yield ""
    yield f"{'method':<10} {'budget':>6} {'evidence':>9} {'answer':>7} {'tokens':>7}"
    rows: list[tuple[str, str, dict[str, Any]]] = [
        ("squad", b, v) for b, v in result["budgets"].items()
    ]
    for name in ("bm25_raw", "recent"):
        rows += [(name, b, v) for b, v in result["baselines"][name].items()]
    rows.append(("full", "all", result["baselines"]["full"]))
    for name, budget, v in rows:
        yield (
            f"{name:<10} {budget:>6} {v['evidence_hit_rate']:>9.1%} "
            f"{v['answer_in_context']:>7.1%} {v['tokens_mean']:>7.0f}"
        )
    yield ""
    yield "squad by category (evidence / answer):"
    for budget, v in result["budgets"].items():
        cells = ", ".join(
            f"{c} {d['evidence_hit_rate']:.0%}/{d['answer_in_context']:.0%} (n={d['questions']})"
            for c, d in v["by_category"].items()
        )
        yield f"  {budget:>5}: {cells}"
    yield ""
    for s in result["per_conversation"]:
        yield (
            f"{s['sample']}: {s['turns']} turns, {s['facts']} facts, {s['archived']} archived, "
            f"ingest {s['ingest_s']:.1f} s"
        )
    hit = result["budgets"]["2000"]["evidence_hit_rate"]
    ingest_s = result["ingest_s_per_conversation"]
    yield ""
    yield (
        f"target: evidence hit rate >= {TARGET_HIT_RATE:.0%} at 2,000 tokens: {hit:.1%} "
        f"({'met' if hit >= TARGET_HIT_RATE else 'NOT met'}); ingest < {TARGET_INGEST_S:.0f} s "
        f"per conversation: {ingest_s:.1f} s ({'met' if ingest_s < TARGET_INGEST_S else 'NOT met'})"
    )


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.locomo", description=__doc__.split("\n")[0]
    )
    parser.add_argument("path", type=Path, help="a LoCoMo JSON file (e.g. locomo-dev.json)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--ranking",
        choices=("lexical", "hashing", "minilm"),
        default="lexical",
        help="memory.ranking for Layer A facts (default lexical)",
    )
    args = parser.parse_args(argv)
    if not args.path.is_file():
        print(f"bench.locomo: no such file {args.path}", file=sys.stderr)
        return 2
    try:
        load(args.path)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        print(
            f"bench.locomo: {args.path} is not LoCoMo data ({type(exc).__name__}: {exc}); it "
            "needs a JSON list of samples with conversation and qa",
            file=sys.stderr,
        )
        return 2
    result = evaluate(args.path, args.ranking)
    if args.json:
        out(json.dumps(result))
    else:
        for line in render(result):
            out(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
