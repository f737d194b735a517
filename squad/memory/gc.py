"""Memory gc, the consolidation pass: decay, TTL and promotion proposals, never deletion.

``run_gc`` goes over every namespace and workspace (the daemon calls it nightly; ``squad
memory gc`` on demand) and:

1. **expires** (TTL) active experiential facts past their ``expires_at``, and transient ones
   without one that nobody used for :attr:`GcPolicy.transient_ttl_days`: status ``expired``;
2. **decays** the rest by recency: a fact's score is ``0.5 ** (days unused / half-life) *
   (1 + log2(1 + access_count))``, where "unused" counts from its last change or retrieval,
   whichever is later. Below :attr:`GcPolicy.dormant_below` the fact becomes ``dormant``:
   kept, listed by ``squad memory show --all``, out of retrieval until revived
   (``store.maintenance.revive`` / ``squad memory revive``). With the defaults (half-life
   30 days, threshold 0.25) a fact never retrieved goes dormant after 60 days unused, one
   retrieved once after 90, seven times after 120;
3. **proposes** promoting project facts (memory.md lines) seen in
   :attr:`GcPolicy.min_sources` or more distinct runs or chat sessions to experiential memory.
   Proposals are reported and audited, once each; nothing is promoted automatically.

Expired and dormant facts lose their index rows, so retrieval cost stays bounded by the live
facts. Every change is audited in the workspace's ``logs/memory-audit.jsonl`` (actor ``gc``);
the rows keep their status and ``updated_at``. A dry run computes the same report and writes
nothing. The scoring and the report are pure; :func:`run_gc` is the edge.
"""

from __future__ import annotations

import math
import shlex
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from squad.memory.audit import AuditLog, AuditRecord
from squad.memory.sightings import sighting_key

if TYPE_CHECKING:
    from squad.store import FactRecord, Store

__all__ = [
    "FactChange",
    "GcPolicy",
    "GcReport",
    "GcReportDict",
    "NamespaceChanges",
    "Proposal",
    "decay_score",
    "is_fading",
    "last_used",
    "run_gc",
    "sighting_key",
]

ACTOR = "gc"
_DAY = 86_400.0
_PAGE = 1000


@dataclass(frozen=True)
class GcPolicy:
    """How memory gc decides; the defaults are what the daemon uses."""

    half_life_days: float = 30.0
    """Days unused after which a fact's recency weight halves."""
    dormant_below: float = 0.25
    """Score under which an active fact becomes dormant (between 0 and 1)."""
    transient_ttl_days: float | None = 14.0
    """Days unused after which a transient fact without ``expires_at`` expires (None: never)."""
    min_sources: int = 3
    """Distinct runs or chat sessions a project fact needs to be proposed for promotion."""

    def __post_init__(self) -> None:
        if not self.half_life_days > 0:
            raise ValueError(f"half_life_days must be above 0, got {self.half_life_days!r}")
        if not 0 < self.dormant_below < 1:
            raise ValueError(
                f"dormant_below must be between 0 and 1 (exclusive), got {self.dormant_below!r}"
            )
        if self.transient_ttl_days is not None and not self.transient_ttl_days > 0:
            raise ValueError(
                f"transient_ttl_days must be above 0 or None, got {self.transient_ttl_days!r}"
            )
        if self.min_sources < 1:
            raise ValueError(f"min_sources must be at least 1, got {self.min_sources!r}")

    @property
    def transient_ttl(self) -> timedelta | None:
        days = self.transient_ttl_days
        return None if days is None else timedelta(days=days)

    def unused_since(self, now: datetime) -> datetime:
        """Facts used after this instant score at least the threshold, whatever their count.

        A never-retrieved fact reaches the threshold after ``half_life * log2(1 /
        dormant_below)`` days; one more second keeps the store's pre-filter a superset.
        """
        days = self.half_life_days * math.log2(1 / self.dormant_below)
        return now - timedelta(days=days) + timedelta(seconds=1)


def last_used(fact: FactRecord) -> datetime:
    """The later of the fact's last change and its last retrieval."""
    accessed = fact.last_accessed_at
    return fact.updated_at if accessed is None else max(fact.updated_at, accessed)


def decay_score(
    last_use: datetime, access_count: int, now: datetime, *, half_life_days: float
) -> float:
    """Recency weight (halving every ``half_life_days`` unused) times ``1 + log2(1 + uses)``."""
    days = max(0.0, (now - last_use).total_seconds() / _DAY)
    return float(0.5 ** (days / half_life_days) * (1 + math.log2(1 + max(0, access_count))))


def is_fading(fact: FactRecord, now: datetime, policy: GcPolicy) -> bool:
    """True when the fact's decay score at ``now`` is under the policy's threshold."""
    score = decay_score(
        last_used(fact), fact.access_count, now, half_life_days=policy.half_life_days
    )
    return score < policy.dormant_below


# -- the report --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FactChange:
    """One experiential fact gc expired or made dormant."""

    id: int
    squad: str
    agent: str
    text: str
    reason: str
    """``score 0.190: 75 days unused, 0 retrievals``, ``expired at <iso time>`` or
    ``transient, unused for 14 days``."""


@dataclass(frozen=True)
class NamespaceChanges:
    """What gc changed (or, in a dry run, would change) in one namespace."""

    namespace_id: int
    name: str
    identity: str
    dormant: tuple[FactChange, ...] = ()
    expired: tuple[FactChange, ...] = ()
    postings_removed: int = 0


@dataclass(frozen=True)
class Proposal:
    """A project fact proposed for promotion to experiential memory."""

    squad: str
    agent: str
    key: str
    text: str
    sources: tuple[str, ...]


def _change_dict(change: FactChange) -> FactChangeDict:
    return {
        "id": change.id,
        "squad": change.squad,
        "agent": change.agent,
        "text": change.text,
        "reason": change.reason,
    }


class GcPolicyDict(TypedDict):
    half_life_days: float
    dormant_below: float
    transient_ttl_days: float | None
    min_sources: int


class GcTotals(TypedDict):
    dormant: int
    expired: int
    postings_removed: int
    proposals: int


class FactChangeDict(TypedDict):
    id: int
    squad: str
    agent: str
    text: str
    reason: str


class NamespaceChangesDict(TypedDict):
    id: int
    name: str
    identity: str
    dormant: list[FactChangeDict]
    expired: list[FactChangeDict]
    postings_removed: int


class ProposalDict(TypedDict):
    squad: str
    agent: str
    key: str
    text: str
    sources: list[str]
    count: int


class GcReportDict(TypedDict):
    """:meth:`GcReport.to_dict`: what ``squad memory gc --json`` prints and consolidation logs."""

    at: str
    dry_run: bool
    policy: GcPolicyDict
    totals: GcTotals
    namespaces: list[NamespaceChangesDict]
    proposals: list[ProposalDict]
    audited: list[str]


@dataclass(frozen=True)
class GcReport:
    """What one gc pass changed; ``dry_run`` reports what it would change."""

    at: datetime
    dry_run: bool
    policy: GcPolicy
    namespaces: tuple[NamespaceChanges, ...] = ()
    proposals: tuple[Proposal, ...] = ()
    audited: tuple[str, ...] = ()
    """Workspaces whose memory-audit.jsonl got records (none in a dry run)."""

    @property
    def dormant(self) -> int:
        return sum(len(ns.dormant) for ns in self.namespaces)

    @property
    def expired(self) -> int:
        return sum(len(ns.expired) for ns in self.namespaces)

    @property
    def postings_removed(self) -> int:
        return sum(ns.postings_removed for ns in self.namespaces)

    def to_dict(self) -> GcReportDict:
        """JSON-ready: times in ISO 8601, tuples as lists."""
        return {
            "at": self.at.isoformat(),
            "dry_run": self.dry_run,
            "policy": {
                "half_life_days": self.policy.half_life_days,
                "dormant_below": self.policy.dormant_below,
                "transient_ttl_days": self.policy.transient_ttl_days,
                "min_sources": self.policy.min_sources,
            },
            "totals": {
                "dormant": self.dormant,
                "expired": self.expired,
                "postings_removed": self.postings_removed,
                "proposals": len(self.proposals),
            },
            "namespaces": [
                {
                    "id": ns.namespace_id,
                    "name": ns.name,
                    "identity": ns.identity,
                    "dormant": [_change_dict(change) for change in ns.dormant],
                    "expired": [_change_dict(change) for change in ns.expired],
                    "postings_removed": ns.postings_removed,
                }
                for ns in self.namespaces
            ],
            "proposals": [
                {
                    "squad": p.squad,
                    "agent": p.agent,
                    "key": p.key,
                    "text": p.text,
                    "sources": list(p.sources),
                    "count": len(p.sources),
                }
                for p in self.proposals
            ],
            "audited": list(self.audited),
        }

    def render(self) -> str:
        """The report as text for a person (``squad memory gc``)."""
        mode = " (dry run: nothing written)" if self.dry_run else ""
        lines = [
            f"memory gc at {self.at.isoformat(timespec='seconds')}{mode}: "
            f"{self.dormant} dormant, {self.expired} expired, "
            f"{self.postings_removed} index rows removed, {len(self.proposals)} proposals"
        ]
        for ns in self.namespaces:
            lines.append(f"{ns.name} [{ns.identity}]")
            for label, changes in (("dormant", ns.dormant), ("expired", ns.expired)):
                for change in changes:
                    lines.append(f"  {label} {change.id}: {change.text}  ({change.reason})")
        if self.proposals:
            lines.append("promotion proposals (project -> experiential):")
            for p in self.proposals:
                lines.append(
                    f"  {p.squad}/{p.agent}: {p.text}  (seen in {len(p.sources)}: "
                    f"{', '.join(p.sources)})"
                )
                lines.append(f"    squad memory promote {p.squad} {p.agent} {shlex.quote(p.key)}")
        return "\n".join(lines)


# -- the pass ----------------------------------------------------------------------------------


def run_gc(
    store: Store,
    workspaces: Mapping[str, Path],
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    policy: GcPolicy | None = None,
) -> GcReport:
    """One consolidation pass over every namespace and workspace; see the module docstring.

    ``workspaces`` maps each squad to its workspace folder (where its audit records go).
    ``now`` defaults to the store's clock. With ``dry_run`` nothing is written (store or audit
    log) and the report says what would have changed.
    """
    policy = policy or GcPolicy()
    maintenance = store.maintenance
    now = now or maintenance.now()
    if now.utcoffset() is None:
        raise ValueError(f"naive now {now!r}; pass a timezone-aware datetime")
    due = maintenance.due_to_expire(now, transient_ttl=policy.transient_ttl)
    due_ids = {fact.id for fact in due}
    cutoff = policy.unused_since(now)
    fading = [
        fact
        for fact in _decay_candidates(store, cutoff)
        if fact.id not in due_ids and is_fading(fact, now, policy)
    ]
    proposals = maintenance.promotion_candidates(policy.min_sources)
    if dry_run:
        removed = maintenance.postings([*due_ids, *(f.id for f in fading)])
        expired, dormant = due, fading
    else:
        gone = maintenance.expire(due_ids, now, transient_ttl=policy.transient_ttl)
        faded = maintenance.make_dormant([f.id for f in fading], unused_since=cutoff)
        removed = gone | faded
        expired = [f for f in due if f.id in gone]
        dormant = [f for f in fading if f.id in faded]
        proposals = [p for p in proposals if maintenance.mark_proposed(p.squad, p.agent, p.key)]
    report = GcReport(
        at=now,
        dry_run=dry_run,
        policy=policy,
        namespaces=_by_namespace(store, now, policy, expired, dormant, removed),
        proposals=tuple(Proposal(p.squad, p.agent, p.key, p.text, p.sources) for p in proposals),
    )
    if dry_run:
        return report
    return replace(report, audited=tuple(_audit(workspaces, report, expired, dormant)))


def _decay_candidates(store: Store, cutoff: datetime) -> Iterable[FactRecord]:
    after = 0
    while True:
        page = store.maintenance.decay_candidates(cutoff, after_id=after, limit=_PAGE)
        yield from page
        if len(page) < _PAGE:
            return
        after = page[-1].id


def _by_namespace(
    store: Store,
    now: datetime,
    policy: GcPolicy,
    expired: list[FactRecord],
    dormant: list[FactRecord],
    removed: dict[int, int],
) -> tuple[NamespaceChanges, ...]:
    touched = {f.namespace_id for f in [*expired, *dormant]}
    if not touched:
        return ()
    names = {ns.id: ns for ns in store.memory.list_namespaces() if ns.id in touched}
    out = []
    for namespace_id in sorted(touched, key=lambda i: (names[i].name, i)):
        mine_expired = [f for f in expired if f.namespace_id == namespace_id]
        mine_dormant = [f for f in dormant if f.namespace_id == namespace_id]
        out.append(
            NamespaceChanges(
                namespace_id=namespace_id,
                name=names[namespace_id].name,
                identity=names[namespace_id].identity,
                dormant=tuple(_change(f, _decay_reason(f, now, policy)) for f in mine_dormant),
                expired=tuple(_change(f, _expiry_reason(f, policy)) for f in mine_expired),
                postings_removed=sum(removed.get(f.id, 0) for f in [*mine_expired, *mine_dormant]),
            )
        )
    return tuple(out)


def _change(fact: FactRecord, reason: str) -> FactChange:
    return FactChange(fact.id, fact.squad, fact.agent, fact.text, reason)


def _decay_reason(fact: FactRecord, now: datetime, policy: GcPolicy) -> str:
    used = last_used(fact)
    score = decay_score(used, fact.access_count, now, half_life_days=policy.half_life_days)
    days = (now - used).total_seconds() / _DAY
    return f"score {score:.3f}: {days:.0f} days unused, {fact.access_count} retrievals"


def _expiry_reason(fact: FactRecord, policy: GcPolicy) -> str:
    if fact.expires_at is not None:
        return f"expired at {fact.expires_at.isoformat(timespec='seconds')}"
    return f"transient, unused for {policy.transient_ttl_days:g} days"


# -- audit -------------------------------------------------------------------------------------


def _audit(
    workspaces: Mapping[str, Path],
    report: GcReport,
    expired: list[FactRecord],
    dormant: list[FactRecord],
) -> list[str]:
    """One audit record per change, in the workspace of the squad it concerns.

    Changes of squads with no workspace left are recorded in the store only (status and
    ``updated_at``). Returns the workspaces written to.
    """
    time = report.at.isoformat()
    records: dict[Path, list[AuditRecord]] = defaultdict(list)
    reasons = {c.id: c.reason for ns in report.namespaces for c in (*ns.dormant, *ns.expired)}
    for operation, facts in (("expire", expired), ("dormant", dormant)):
        for fact in facts:
            if fact.squad in workspaces:
                records[workspaces[fact.squad]].append(
                    _record(time, operation, f"fact:{fact.id}", reasons.get(fact.id))
                )
    for p in report.proposals:
        if p.squad in workspaces:
            note = (
                f"promote to experiential? seen in {len(p.sources)} runs/sessions "
                f"({', '.join(p.sources)}): {p.text}"
            )
            records[workspaces[p.squad]].append(
                _record(time, "propose", f"agents/{p.agent}/memory.md", note)
            )
    for workspace, lines in sorted(records.items()):
        log = AuditLog(workspace)
        for record in lines:
            log.append(record)
    return [str(path) for path in sorted(records)]


def _record(time: str, operation: str, where: str, note: str | None) -> AuditRecord:
    return AuditRecord(
        time=time,
        actor=ACTOR,
        operation=operation,
        file=where,
        note=note,
    )
