"""``squad status`` (and the dashboard's overview, which adds to it): the daemon, up or down,
every squad, what runs and waits, and what needs a person."""

from __future__ import annotations

from typing import Any, Literal

from squad.views._base import View
from squad.views.cluster import ClusterUnreachable, ClusterView
from squad.views.runs import Approval
from squad.views.squads import SquadStatus, SquadSummary

__all__ = [
    "Backlog",
    "Checkpoints",
    "DaemonState",
    "Overview",
    "PausedHistory",
    "Status",
    "StatusSummary",
    "WaitingApproval",
]


class DaemonState(View):
    """Whether a daemon is up for the home, and why not when it is down."""

    state: Literal["up", "down"]
    pid: int | None
    host: str | None
    started_at: str | None
    uptime_s: float | None
    heartbeat_at: str | None
    heartbeat_age_s: float | None
    reason: str | None
    """Why it is down (None when up)."""
    stopped_at: str | None = None
    """When its last heartbeat said it stopped."""
    configs: str | None = None
    """The squads folder it loads (or would load)."""
    configs_missing: bool = False


class Backlog(View):
    """Messages of one agent not yet read by the extractor."""

    squad: str
    agent: str
    messages: int


class WaitingApproval(View):
    run_id: str
    squad: str
    task: str | None
    agent: str | None
    since: str


class PausedHistory(View):
    """A workspace whose history cannot be written: its runs go on uncommitted."""

    squad: str
    workspace: str
    state: str
    """``foreign`` or ``broken``."""
    reason: str | None


class LeftBehind(View):
    """Checkpoints of another backend, kept from before a switch."""

    file: str
    runs: list[str]
    note: str


class Checkpoints(View):
    backend: Literal["sqlite", "postgres"]
    where: str
    left_behind: LeftBehind | None


class StatusSummary(View):
    """The counts ``squad status`` opens with."""

    squads: int
    running: int
    queued: int
    waiting_approvals: int
    failed_files: int
    failed_runs: int
    history_paused: int
    backlog_agents: int
    backlog_messages: int


class Status(View):
    daemon: DaemonState
    squads: list[SquadStatus]
    running: list[dict[str, Any]]
    """Runs under way, as the daemon's heartbeat has them (empty when it is down)."""
    queue: list[dict[str, Any]]
    queue_length: int
    failed_files: list[dict[str, Any]]
    """Squad files that did not load: ``file``, ``squad``, ``error``, ``problems``."""
    settings_restart_needed: list[str]
    jobs: dict[str, Any]
    http: dict[str, Any] | None
    """The daemon's dashboard (``url``, ``host``, ``port``), when it serves one."""
    extraction_backlog: list[Backlog]
    waiting_approvals: list[WaitingApproval]
    history_paused: list[PausedHistory]
    checkpoints: Checkpoints | None
    summary: StatusSummary
    cluster: ClusterView | ClusterUnreachable | None = None
    """Only in cluster mode: the cluster, or why its queue could not be read."""


class Overview(Status):
    """The dashboard's overview: the status, each squad with its spend against its cap, the
    approvals waiting and the server answering."""

    squads: list[SquadSummary]  # type: ignore[assignment]  # each with its spend
    approvals: list[Approval]
    server: dict[str, Any] | None
