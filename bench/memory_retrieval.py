"""Does experiential-memory retrieval stay flat as a namespace grows?

``python -m bench.memory_retrieval`` builds SQLite stores of 1,000, 10,000 and 100,000 facts
and prints the median time of one ``relevant_facts(..., limit=200)`` for each, and the ratio of
the 100k time to the 1k time (target: at most 3). Facts are generated deterministically: a
few hundred everyday words drawn with Zipf-like weights, so some terms are in most facts and
most terms in few, plus project names, hosts and versions from a long tail.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from squad.store import NewFact, Store

QUERY = "how should the billing service configure its postgres connection pool before deploying?"
TARGET_RATIO = 3.0
SIZES = (1_000, 10_000, 100_000)

_WORD_TEXT = """
user prefers wants asked likes dislikes always never usually team project repository service
api endpoint database postgres sqlite redis cache queue worker job schedule cron deploy deploys
deployment release staging production cluster kubernetes docker image container helm chart
config configuration setting settings option flag environment variable secret token key
python typescript rust golang java react vue django fastapi flask pytest ruff mypy lint format
test tests testing coverage benchmark performance latency throughput memory cpu disk network
log logs logging metrics tracing alert alerts dashboard grafana prometheus sentry error errors
bug bugs fix fixes patch review reviews approve merge branch commit rebase squash tag version
billing payments invoice invoices customer customers account accounts order orders checkout
search index query queries ranking relevance embedding vector model models prompt prompts
agent agents planner writer reviewer researcher tool tools function call calls retry timeout
file files folder folders path paths workspace workspaces markdown json yaml csv report reports
connection pool pooling migration migrations schema table tables column columns row rows
backup restore snapshot replica primary failover region zone latency budget cost costs price
style naming convention snake case camel tabs spaces indentation line length docstring comment
monday tuesday wednesday thursday friday weekend morning evening timezone utc deadline sprint
english korean german spanish language translation answer answers short concise detailed
"""
_WORDS = _WORD_TEXT.split()

_PHRASES = [
    "The {a} {b} uses {c} for {d}.",
    "{A} {b} prefers {c} over {d} in {e}.",
    "Never {b} the {c} {d} without asking; {e} broke last time.",
    "{A} {c} lives on {host} and runs {proj} {ver}.",
    "When {b} {c}, remember that {d} {e} needs {f}.",
    "{proj} {ver}: {c} {d} moved to {host}.",
    "Ask before changing {c} {d}; the {e} team owns it.",
    "{A} {b} {c} {d} {e} {f}.",
]


def generate_facts(count: int, seed: int = 20261129) -> Iterator[NewFact]:
    """``count`` deterministic, varied facts."""
    rng = random.Random(seed)
    weights = [1.0 / (rank + 1) ** 0.9 for rank in range(len(_WORDS))]
    for i in range(count):
        w = rng.choices(_WORDS, weights, k=6)
        text = rng.choice(_PHRASES).format(
            A=w[0].capitalize(),
            a=w[0],
            b=w[1],
            c=w[2],
            d=w[3],
            e=w[4],
            f=w[5],
            host=f"db{rng.randrange(400)}.internal",
            proj=f"proj{rng.randrange(5000)}",
            ver=f"v{rng.randrange(9)}.{rng.randrange(40)}",
        )
        yield NewFact(text=text, squad=f"squad{i % 17}", agent="planner", source="extraction")


def measure(n_facts: int, repeat: int = 15) -> float:
    """Median seconds of ``relevant_facts(ns, QUERY, limit=200)`` over ``n_facts`` facts."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store.open(f"sqlite:///{Path(tmp) / 's.db'}") as store,
    ):
        namespace = store.memory.ensure_namespace("profile:bench", "Agent Experience: Bench")
        store.memory.add_facts_bulk(namespace.id, generate_facts(n_facts))
        store.memory.relevant_facts(namespace.id, QUERY, limit=200)  # warm the caches
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            found = store.memory.relevant_facts(namespace.id, QUERY, limit=200)
            samples.append(time.perf_counter() - start)
        assert len(found) == min(200, n_facts)
        return statistics.median(samples)


def main() -> int:
    times = {}
    for size in SIZES:
        start = time.perf_counter()
        times[size] = measure(size)
        took = time.perf_counter() - start
        print(
            f"{size:>8,} facts: {times[size] * 1000:7.2f} ms per retrieval  (built in {took:.1f}s)"
        )
    ratio = times[SIZES[-1]] / times[SIZES[0]]
    flag = "ok" if ratio <= TARGET_RATIO else "OVER"
    print(f"ratio {SIZES[-1]:,}/{SIZES[0]:,}: {ratio:.2f}x (target <= {TARGET_RATIO:.0f}x)  {flag}")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
