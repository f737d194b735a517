"""Twelve weeks of one squad's life, for ``bench.memory_weeks``: chats, scheduled runs, questions.

Written for this benchmark (nothing from the evaluation data). The squad ``atlas`` has one
agent, ``assistant``, that a person (Mina, the tech lead) chats with on workdays and that a
schedule runs every workday morning (a digest) and every Friday (a weekly status). What the
weeks hold:

- **story facts**, hand-written: the project and the person, told once and then **repeated**
  in later weeks in other words or the same ones;
- **changed facts**: the deploy day (Fridays, week 6 Tuesdays), the billing service's owner
  (week 6), the CI system (week 9), and a fact told in **Korean** in week 2 (the staging
  server's port) **corrected in English** in week 8;
- **daily notes**: facts about the project's many small services, generated from templates
  with a fixed seed, each about a component of its own (so none changes another), about one
  in seven told again later;
- **junk**: greetings, thanks, off-topic remarks and questions (:data:`JUNK`);
- requests to remember, which the offline model turns into a ``memory_append`` call (so its
  tool receipt is in the conversation), and the offline model's own replies: its disclaimer,
  "You said: ...", "Noted (key points: ...)", the runs' restatement of their task.

:data:`CHATTER` lists what no memory line may contain (the offline model's fixed phrases and
the runs' task wording); :data:`JUNK` what no memory line may be. Questions (:data:`QUESTIONS`)
name, for the week they are about, the evidence that must be in the memory block and, for a
changed fact, the stale wording that must not (the matching rule: :func:`normalised` and
:func:`holds`).
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass
from functools import cache

__all__ = [
    "CHATTER",
    "JUNK",
    "QUESTIONS",
    "SQUAD_YAML",
    "WEEKS",
    "Chat",
    "Question",
    "Run",
    "Week",
    "holds",
    "normalised",
    "weeks",
]

WEEKS = 12
PROBE_WEEKS = (1, 6, 12)
SEED = 20270104
DAILY_NOTES = 8
"""Generated project facts told per workday chat (the volume that fills memory.md)."""

SQUAD_YAML = """\
name: atlas
goal: Help the Atlas team build and run the Atlas web app.
agents:
  - {id: assistant, role: Assistant to the Atlas team, lead: true}
tasks:
  - {id: digest, description: "Write the morning digest: open issues, deploys due, who is on call.",
     agent: assistant}
"""


@dataclass(frozen=True)
class Chat:
    """One chat session: the person's messages, in order (the agent answers each)."""

    day: int
    """0 is Monday."""
    messages: tuple[str, ...]


@dataclass(frozen=True)
class Run:
    """One scheduled run of the squad, with its goal."""

    day: int
    hour: int
    goal: str


@dataclass(frozen=True)
class Week:
    number: int
    chats: tuple[Chat, ...]
    runs: tuple[Run, ...]


@dataclass(frozen=True)
class Question:
    """A question about what was true at the end of week ``week`` (and still is later)."""

    week: int
    """The probe week it belongs to (1, 6 or 12)."""
    text: str
    evidence: tuple[str, ...]
    """Phrases that must all be in the injected block (:func:`holds`)."""
    stale: tuple[str, ...] = ()
    """Phrases of a superseded version: none may be in the injected block."""


def normalised(text: str) -> str:
    """``text`` as the matching rule reads it: NFKC, case folded, every run of characters that
    are not letters or digits one space, with a space at each end (so a phrase matches whole
    words only)."""
    flat = unicodedata.normalize("NFKC", text).casefold()
    return " " + " ".join(re.findall(r"[^\W_]+", flat)) + " "


def holds(text: str, phrase: str) -> bool:
    """Whether ``text`` says ``phrase``: its normalised form inside ``text``'s, whole words."""
    return normalised(phrase) in normalised(text)


# -- what is said -----------------------------------------------------------------------------

# Story facts by (week, day): the person's messages in that day's chat, before the daily notes.
STORY: dict[tuple[int, int], tuple[str, ...]] = {
    (1, 0): (
        "I'm Mina, the tech lead of the Atlas team.",
        "The Atlas backend is written in Go and listens on port 8080.",
        "We deploy on Fridays.",
    ),
    (1, 1): (
        "I prefer short answers with code examples.",
        "The staging database is Postgres 15.",
    ),
    (1, 2): (
        "Our CI runs on GitHub Actions.",
        "Remember that the release branch is named release-atlas.",
    ),
    (1, 3): ("Ji-ho owns the billing service.",),
    (1, 4): ("The Atlas design docs live in the docs/design folder.",),
    (2, 0): ("스테이징 서버는 포트 9000에서 돌아가요.",),
    (2, 2): ("Reminder: the Atlas backend listens on port 8080.",),
    (2, 3): ("We deploy on Fridays.",),
    (3, 1): ("The on-call rotation changes every Monday at 10:00.",),
    (3, 3): ("I prefer short answers with code examples.",),
    (4, 0): ("We use Redis 7 for the session cache.",),
    (4, 2): ("Ji-ho owns the billing service.",),
    (4, 4): ("Remember that the release branch is named release-atlas.",),
    (5, 1): ("The code freeze for Atlas v2 starts on 2027-02-15.",),
    (5, 3): ("The Atlas backend is written in Go and listens on port 8080.",),
    (6, 0): (
        "We now deploy on Tuesdays, not Fridays.",
        "The API rate limit is 600 requests per minute.",
    ),
    (6, 1): ("Dana owns the billing service now; Ji-ho moved to the search team.",),
    (6, 3): ("Error budgets are reviewed on the first Thursday of each month.",),
    (7, 1): ("We now deploy on Tuesdays, not Fridays.",),
    (7, 3): ("The staging database is Postgres 15.",),
    (8, 2): ("Correction: the staging server runs on port 9100, not 9000.",),
    (9, 0): ("We switched CI from GitHub Actions to Buildkite.",),
    (9, 3): ("Dana owns the billing service now; Ji-ho moved to the search team.",),
    (10, 1): ("I prefer short answers with code examples.",),
    (10, 4): ("The API rate limit is 600 requests per minute.",),
    (11, 2): ("The Atlas backend is written in Go and listens on port 8080.",),
    (12, 0): (
        "The analytics dashboard for Atlas is served at stats.atlas.example.",
        "Remember that the Atlas mobile app ships every second Thursday.",
    ),
    (12, 1): ("Hana joined the Atlas team as a frontend engineer.",),
    (12, 2): ("We deploy on Tuesdays.",),
}

JUNK = (
    "Good morning!",
    "Thanks, that's all for today.",
    "Thanks!",
    "ok",
    "haha nice",
    "Did anyone watch the match last night?",
    "The coffee machine on the third floor is broken again.",
    "See you tomorrow.",
    "안녕하세요!",
    "감사합니다!",
)
"""What the person says that is no fact of the project or the person: never filed."""

CHATTER = (
    "you said",
    "you asked",
    "squad's offline model",
    "i am squad s offline model",
    "configure a model",
    "key points",
    "i can only restate it",
    "answered",
    "anything else",
    "this deliverable addresses the task",
    "written by squad s offline model",
    "expected output as asked",
    "the task gives no details beyond its description",
    "covered",
    "write the morning digest",
    "write the weekly status",
    "saved to",
    "memory md",
)
"""Phrases of the model's own words (the offline model's fixed phrases, tool receipts, the
runs' task restated): a memory line holding one (:func:`holds`) is chatter filed."""

QUESTIONS = (
    Question(1, "Who is the tech lead of the Atlas team?", ("mina", "tech lead")),
    Question(1, "Which port does the Atlas backend listen on?", ("port 8080",)),
    Question(1, "How does Mina like answers to be written?", ("short answers",)),
    Question(1, "Which database does staging use?", ("postgres 15",)),
    Question(1, "What is the release branch called?", ("release atlas",)),
    Question(1, "Where are the Atlas design docs?", ("docs design",)),
    Question(
        6,
        "Which day of the week do we deploy?",
        ("deploy on tuesdays",),
        ("deploy on fridays",),
    ),
    Question(
        6,
        "Who owns the billing service?",
        ("dana owns the billing service",),
        ("ji ho owns the billing service",),
    ),
    Question(6, "What is the API rate limit?", ("600 requests per minute",)),
    Question(6, "When are error budgets reviewed?", ("first thursday",)),
    Question(
        12,
        "Which port does the staging server run on?",
        ("port 9100",),
        ("포트 9000에서",),
    ),
    Question(
        12,
        "Which CI system do we use?",
        ("buildkite",),
        ("ci runs on github actions",),
    ),
    Question(12, "Where is the Atlas analytics dashboard?", ("stats atlas example",)),
    Question(12, "How often does the Atlas mobile app ship?", ("every second thursday",)),
    Question(12, "Who joined the Atlas team as a frontend engineer?", ("hana",)),
)

# -- daily notes: generated ---------------------------------------------------------------------

_FIRST = (
    "amber", "basalt", "cedar", "cobalt", "coral", "delta", "ember", "falcon", "garnet", "harbor",
    "indigo", "jasper", "kestrel", "lumen", "maple", "nickel", "onyx", "pewter", "quartz", "raven",
    "sable", "tundra", "umber", "violet", "willow", "zephyr", "aspen", "birch", "copper", "dune",
    "flint", "glacier", "hazel", "iris", "juniper", "lotus", "marble", "opal", "pine", "saffron",
)  # fmt: skip
_SECOND = (
    "ledger", "gateway", "indexer", "mailer", "scheduler", "importer", "exporter", "cache",
    "resizer", "notifier", "crawler", "reporter", "validator", "renderer", "uploader", "archiver",
)  # fmt: skip
_KINDS = ("service", "job", "worker", "queue")
_CLAIMS = (
    "runs on port {n}",
    "keeps its logs for {d} days",
    "times out after {d} seconds",
    "retries failed requests {r} times",
    "needs {r} GB of memory",
    "alerts after {d} errors in a row",
    "is pinned to release {r}.{d}",
    "writes its reports to the {w} bucket",
)
_BUCKETS = ("atlas-raw", "atlas-daily", "atlas-cold", "atlas-exports", "atlas-audit")
_AGAIN = ("As I said, {fact}", "Reminder: {fact}", "{fact}")
REPEAT_SHARE = 1 / 7


def _notes(count: int, rnd: random.Random) -> list[str]:
    """``count`` daily notes, each about a component of its own; about one in seven repeats an
    earlier note, in the same words or after "As I said," / "Reminder:"."""
    components = [f"{a}-{b}" for a in _FIRST for b in _SECOND]
    rnd.shuffle(components)
    told: list[str] = []
    out: list[str] = []
    for _ in range(count):
        if told and rnd.random() < REPEAT_SHARE:
            fact = rnd.choice(told)
            again = rnd.choice(_AGAIN)
            out.append(again.format(fact=fact[0].lower() + fact[1:] if again[0] != "{" else fact))
            continue
        name = components.pop()
        claim = rnd.choice(_CLAIMS).format(
            n=rnd.randrange(3000, 9999),
            d=rnd.randrange(2, 90),
            r=rnd.randrange(2, 12),
            w=rnd.choice(_BUCKETS),
        )
        fact = f"The {name} {rnd.choice(_KINDS)} {claim}."
        told.append(fact)
        out.append(fact)
    return out


@cache
def weeks(count: int = WEEKS, notes_per_day: int = DAILY_NOTES) -> tuple[Week, ...]:
    """The first ``count`` weeks, the same every time (a fixed seed)."""
    rnd = random.Random(SEED)
    notes = iter(_notes(count * 5 * notes_per_day, rnd))
    out = []
    for number in range(1, count + 1):
        chats = []
        runs = []
        for day in range(5):
            greeting = JUNK[8] if (number * 5 + day) % 4 == 0 else JUNK[0]
            said = [greeting, *STORY.get((number, day), ())]
            said += [next(notes) for _ in range(notes_per_day)]
            if (number + day) % 2:
                said.insert(len(said) // 2, JUNK[3 + (number + day) % 4])
            said.append((JUNK[2], JUNK[9])[(number + day) % 2] if day < 4 else JUNK[1])
            chats.append(Chat(day, tuple(said)))
            runs.append(Run(day, 7, f"Morning digest for week {number}, day {day + 1}."))
        runs.append(
            Run(4, 17, f"Write the weekly status of week {number}: deploys, incidents, on-call.")
        )
        out.append(Week(number, tuple(chats), tuple(runs)))
    return tuple(out)
