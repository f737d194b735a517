"""squad's MCP resources: what a workspace holds, as ``squad://<squad>/...`` URIs.

=====================================================  =========================================
``squad://<squad>/manifest``                           the workspace manifest (JSON)
``squad://<squad>/decisions.md``                       the squad's decisions log
``squad://<squad>/agents/<agent>/memory.md``           one agent's project memory
``squad://<squad>/plans/<plan>.md``                    a plan of a hierarchical run
``squad://<squad>/tasks/<task>/output.md``             a task's latest output
``squad://<squad>/runs/<run-id>/log``                  a run's event log (JSON lines)
=====================================================  =========================================

Listing names what exists now (the newest runs only; older ones are read by URI, as the
templates say). Files are read with the workspace's own preview reader (inside the
workspace, text only, capped) and leave with their credentials redacted.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from squad.errors import NotFound
from squad.mcp.tools import Scope
from squad.paths import SLUG
from squad.text.natural import natural_key
from squad.web.redaction import redacted_text

if TYPE_CHECKING:
    from pathlib import Path

    from squad.app import App

__all__ = ["TEMPLATES", "Resource", "SquadResources"]

MAX_BYTES = 128 * 1024
"""What one read returns at most, cut before it is redacted (redaction costs about 4 s of
CPU per MB here, and a client may read as often as it likes): the dashboard's preview size."""
LISTED_RUNS = 10
_URI = re.compile(
    rf"^squad://(?P<squad>{SLUG})/(?P<rest>manifest|decisions\.md"
    rf"|agents/(?P<agent>{SLUG})/memory\.md"
    rf"|plans/(?P<plan>plan-\d{{3,}}\.md)"
    rf"|tasks/(?P<task>{SLUG})/output\.md"
    rf"|runs/(?P<run>[A-Za-z0-9][A-Za-z0-9_-]{{0,99}})/log)$"
)


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    description: str
    mime_type: str


MD, JSON, JSONL = "text/markdown", "application/json", "application/x-ndjson"
TEMPLATES: tuple[Resource, ...] = (
    Resource("squad://{squad}/manifest", "manifest", "A squad's workspace manifest.", JSON),
    Resource("squad://{squad}/decisions.md", "decisions", "A squad's decisions log.", MD),
    Resource(
        "squad://{squad}/agents/{agent}/memory.md", "memory", "An agent's project memory.", MD
    ),
    Resource("squad://{squad}/plans/{plan}", "plan", "A plan (plan-001.md, ...).", MD),
    Resource("squad://{squad}/tasks/{task}/output.md", "output", "A task's latest output.", MD),
    Resource("squad://{squad}/runs/{run_id}/log", "run log", "A run's event log.", JSONL),
)


class SquadResources:
    """The resources of ``app``'s squads within ``scope``."""

    def __init__(self, app: App, scope: Scope) -> None:
        self._app = app
        self._scope = scope

    def list(self) -> builtins.list[Resource]:
        found: builtins.list[Resource] = []
        for workspace in self._app.squads.all_workspaces():
            if self._scope.allows(workspace.squad):
                found += self._of(workspace.squad, workspace.path)
        return [r for r in found if _URI.match(r.uri)]

    def _of(self, squad: str, root: Path) -> builtins.list[Resource]:
        from squad.workspace.layout import MANIFEST_NAME

        base = f"squad://{squad}"
        found = []
        if (root / MANIFEST_NAME).is_file():
            found.append(Resource(f"{base}/manifest", f"{squad} manifest", "Manifest.", JSON))
        if (root / "decisions.md").is_file():
            found.append(Resource(f"{base}/decisions.md", f"{squad} decisions", "Decisions.", MD))
        for memory in sorted(root.glob("agents/*/memory.md")):
            agent = memory.parent.name
            uri = f"{base}/agents/{agent}/memory.md"
            found.append(Resource(uri, f"{squad}/{agent} memory", f"Memory of {agent}.", MD))
        for plan in sorted(root.glob("plans/plan-*.md"), key=lambda p: natural_key(p.name)):
            found.append(Resource(f"{base}/plans/{plan.name}", f"{squad} {plan.stem}", "Plan.", MD))
        for output in sorted(root.glob("tasks/*/output.md")):
            task = output.parent.name
            uri = f"{base}/tasks/{task}/output.md"
            found.append(Resource(uri, f"{squad}/{task} output", f"Output of {task}.", MD))
        return found + self._runs(squad, root)

    def _runs(self, squad: str, root: Path) -> builtins.list[Resource]:
        from squad.runtime.runlog import run_log_path

        if not self._app.database_exists():
            return []
        found = []
        for run in self._app.store.list_runs(squad, LISTED_RUNS):
            if run_log_path(root, run.id).is_file():
                uri = f"squad://{squad}/runs/{run.id}/log"
                found.append(Resource(uri, f"{squad} run {run.id}", run.status.value, JSONL))
        return found

    def read(self, uri: str) -> tuple[str, str]:
        """The text of ``uri`` and its MIME type; NotFound for anything not there (or not
        in scope), WorkspaceError for what is there but not text."""
        from squad.workspace.inspect import preview
        from squad.workspace.layout import MANIFEST_NAME

        match = _URI.match(uri)
        if match is None:
            raise NotFound(
                f"no resource {uri!r}: squad's URIs look like squad://<squad>/manifest, "
                "squad://<squad>/agents/<agent>/memory.md, squad://<squad>/runs/<run-id>/log"
            )
        squad = self._scope.check(match["squad"])
        root = self._app.squads.locate(squad).path
        rest = match["rest"]
        if rest == "manifest":
            relative, mime = MANIFEST_NAME, JSON
        elif rest == "decisions.md":
            relative, mime = "decisions.md", MD
        elif match["agent"]:
            relative, mime = f"agents/{match['agent']}/memory.md", MD
        elif match["plan"]:
            relative, mime = f"plans/{match['plan']}", MD
        elif match["task"]:
            relative, mime = f"tasks/{match['task']}/output.md", MD
        else:
            relative, mime = f"logs/run-{match['run']}.jsonl", JSONL
        try:
            shown = preview(root, relative, max_bytes=MAX_BYTES)
        except NotFound:
            raise NotFound(f"no resource {uri!r} (nothing at {relative} in {squad})") from None
        text = shown.text
        if shown.truncated:
            text += (
                f"\n[truncated at {MAX_BYTES:,} bytes: read {relative} in the workspace for "
                "the rest]\n"
            )
        return redacted_text(text)[0], mime
