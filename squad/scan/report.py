"""What a scan found, where, and what it did: one view for the CLI, its JSON and the daemon's log.

A finding names its place, where in it (a file and line, a row and column) and the kind of
credential, never the value.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TypedDict

__all__ = [
    "HISTORY_NOTE",
    "PLACES",
    "Finding",
    "FindingDict",
    "ScanReport",
    "ScanReportDict",
    "ScanSummary",
]

PLACES: dict[str, str] = {
    "memory": "memory.md files",
    "daily_log": "daily logs (agents/*/daily/*.md)",
    "working_memory": "working memory (agents/*/working-memory/*.json)",
    "chat_summary": "chat summaries (agents/*/chat-summary.json)",
    "task_output": "task outputs (tasks/*/output.md)",
    "plan": "plans (plans/*.md)",
    "decisions_file": "decisions.md",
    "boot": "boot files (SOUL.md, USER.md, AGENTS.md)",
    "run_log": "run logs (logs/run-*.jsonl)",
    "mcp_journal": "MCP journals (logs/run-*.mcp.jsonl)",
    "mcp_stderr": "MCP servers' stderr (logs/run-*.mcp-stderr.log)",
    "audit_log": "memory audit logs (logs/memory-audit.jsonl)",
    "log": "other logs (daemon, dashboard, MCP server, worker)",
    "conversation": "conversation store (every role)",
    "layer_a": "Layer A facts",
    "archive": "conversation archives (recall)",
    "review": "memory review queue",
    "decision": "decisions",
    "extraction": "extraction passes",
    "sighting": "promotion sightings",
    "run": "runs (goals, errors, summaries)",
    "task": "task states (errors)",
    "checkpoint": "run checkpoints (LangGraph)",
}
"""Every place a scan covers, in the order reports list them."""

HISTORY_NOTE = (
    "a workspace's git history (.git) still holds values committed before they were "
    "redacted, and copies made elsewhere (backups, exports, a model provider's logs, "
    "terminals) are out of reach: rotate every credential found"
)


class FindingDict(TypedDict):
    place: str
    where: str
    kind: str
    fixed: bool
    squad: str | None
    note: str | None


class _Figures(TypedDict):
    detector: str
    found: int
    fixed: int
    remaining: int
    kinds: dict[str, int]
    """Findings per kind of credential."""
    places: dict[str, int]
    """Findings per place (those with any)."""
    commits: list[str]
    complete: bool
    seconds: float


class ScanSummary(_Figures):
    """:meth:`ScanReport.summary`: the figures alone (the daemon's log line)."""

    squads: int


class ScanReportDict(_Figures):
    """:meth:`ScanReport.to_dict`: what ``squad scan --json`` prints."""

    squads: list[str]
    fix: bool
    findings: list[FindingDict]
    counts: dict[str, dict[str, int]]
    notes: list[str]
    deferred: list[str]
    history_note: str


@dataclass(frozen=True)
class Finding:
    """One credential in one place."""

    place: str
    """A key of :data:`PLACES`."""
    where: str
    """``docs: agents/writer/memory.md line 3``, ``docs: message:12 content line 1``..."""
    kind: str
    """The detector's kind (``github_token``, ``password_assignment``...)."""
    fixed: bool = False
    squad: str | None = None
    note: str | None = None
    """Why it was left in place when a fix was asked."""
    retry: bool = False
    """Left for a passing reason (a live run, a lock held): a later scan can fix it."""

    def to_dict(self) -> FindingDict:
        return {
            "place": self.place,
            "where": self.where,
            "kind": self.kind,
            "fixed": self.fixed,
            "squad": self.squad,
            "note": self.note,
        }


@dataclass(frozen=True)
class ScanReport:
    """A whole scan: the detector, what was read, found and fixed."""

    detector: str
    fix: bool
    squads: tuple[str, ...]
    findings: tuple[Finding, ...]
    scanned: dict[str, int] = field(default_factory=dict)
    """Items read per place (files, rows, checkpoints)."""
    notes: tuple[str, ...] = ()
    """What the scan could not cover, and what it did besides (a cache dropped, a commit)."""
    commits: tuple[str, ...] = ()
    """``<squad> <sha>`` of each commit a fix made."""
    deferred: tuple[str, ...] = ()
    """What a fix left for a later scan, unread (the checkpoints of a live run)."""
    seconds: float = 0.0
    complete: bool = True
    """False: stopped before the end (the daemon stopping)."""

    @property
    def remaining(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.fixed)

    @property
    def fixed(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.fixed)

    @property
    def exit_code(self) -> int:
        """0: nothing left (none found, or all redacted); 1: credentials remain."""
        return 1 if self.remaining else 0

    @property
    def settled(self) -> bool:
        """Complete, and nothing left that a later scan could fix: the daemon records its
        detector as scanned with."""
        return self.complete and not self.deferred and not any(f.retry for f in self.remaining)

    def counts(self) -> dict[str, dict[str, int]]:
        """Per place with anything read or found: read, found and fixed."""
        found = Counter(f.place for f in self.findings)
        fixed = Counter(f.place for f in self.fixed)
        return {
            place: {
                "scanned": self.scanned.get(place, 0),
                "found": found[place],
                "fixed": fixed[place],
            }
            for place in PLACES
            if self.scanned.get(place) or found[place]
        }

    def summary(self) -> ScanSummary:
        """The figures alone (the daemon's log line)."""
        return {
            "detector": self.detector,
            "squads": len(self.squads),
            "found": len(self.findings),
            "fixed": len(self.fixed),
            "remaining": len(self.remaining),
            "kinds": dict(Counter(f.kind for f in self.findings)),
            "places": {p: c["found"] for p, c in self.counts().items() if c["found"]},
            "commits": list(self.commits),
            "complete": self.complete,
            "seconds": round(self.seconds, 3),
        }

    def to_dict(self) -> ScanReportDict:
        summary = self.summary()
        return {
            "detector": summary["detector"],
            "squads": list(self.squads),
            "found": summary["found"],
            "fixed": summary["fixed"],
            "remaining": summary["remaining"],
            "kinds": summary["kinds"],
            "places": summary["places"],
            "commits": summary["commits"],
            "complete": summary["complete"],
            "seconds": summary["seconds"],
            "fix": self.fix,
            "findings": [f.to_dict() for f in self.findings],
            "counts": self.counts(),
            "notes": list(self.notes),
            "deferred": list(self.deferred),
            "history_note": HISTORY_NOTE,
        }

    def lines(self) -> list[str]:
        """The report as text: each find, then a table per place, then what it means."""
        out = [
            f"scanned with detector {self.detector}: "
            + (f"{len(self.squads)} squad{'s' if len(self.squads) != 1 else ''}")
            + f" in {self.seconds:.1f}s"
        ]
        for finding in self.findings:
            state = "redacted" if finding.fixed else "found"
            note = f" ({finding.note})" if finding.note else ""
            out.append(f"  {state}: {finding.where}: {finding.kind}{note}")
        counts = self.counts()
        if counts:
            out.append(f"{'place':<52}{'read':>8}{'found':>7}{'fixed':>7}")
            for place, row in counts.items():
                out.append(
                    f"{PLACES[place]:<52}{row['scanned']:>8}{row['found']:>7}{row['fixed']:>7}"
                )
        out += [f"note: {note}" for note in self.notes]
        out += [f"committed: {commit}" for commit in self.commits]
        out += [f"left for a later scan: {item}" for item in self.deferred]
        if not self.findings:
            out.append("no credentials found")
        elif self.remaining and not self.fix:
            out.append(
                f"{len(self.remaining)} credentials found; `squad memory scan --fix` "
                "redacts them in place"
            )
        else:
            out.append(f"{len(self.fixed)} redacted, {len(self.remaining)} left")
        if self.findings:
            out.append(f"note: {HISTORY_NOTE}")
        if not self.complete:
            out.append("note: the scan stopped before the end; run it again")
        return out
