"""``scan_home`` over a home whose stored text holds credentials an older detector missed.

Real SQLite store and checkpoints, real files and a real git history; the only stand-in is
the older detector itself, blinded while the values are seeded (:mod:`tests.scan.seed`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from squad.app import App
from squad.memory.audit import AuditLog
from squad.scan import HISTORY_NOTE, scan_home
from squad.settings import Settings
from squad.text.secrets import detector_version
from tests.scan.seed import (
    CUE_PASSWORD,
    LEAKS,
    SQUAD,
    files_holding,
    needles,
    rows_holding,
    seed_home,
)

PLACE_OF = {
    "memory": "memory",
    "daily_log": "daily_log",
    "layer_a": "layer_a",
    "conversation_user": "conversation",
    "conversation_assistant": "conversation",
    "conversation_tool": "conversation",
    "chat_summary": "chat_summary",
    "checkpoint": "checkpoint",
    "checkpoint_write": "checkpoint",
    "run_log": "run_log",
    "mcp_stderr": "mcp_stderr",
    "review": "review",
    "task_output": "task_output",
}


def _git_blob(workspace: Path, commit: str, path: str) -> bytes:
    import pygit2

    repo = pygit2.Repository(str(workspace / ".git"))
    tree = repo.revparse_single(commit).peel(pygit2.Commit).tree
    return repo[tree[path].id].data


def test_a_scan_names_every_place_and_kind_and_never_the_value(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_home(settings, monkeypatch)

    with App.open(settings) as app:
        report = scan_home(app, fix=False)

    assert report.exit_code == 1 and report.complete and not report.fixed
    places = {f.place for f in report.findings}
    assert set(PLACE_OF.values()) | {"archive"} <= places
    found = {(f.place, f.kind) for f in report.findings}
    assert ("conversation", "followup_secret") in found  # the bare value after its cue
    assert ("archive", "followup_secret") in found
    assert ("memory", "github_token") in found
    memory = next(f for f in report.findings if f.place == "memory")
    assert memory.where == f"{SQUAD}: agents/writer/memory.md line 8"
    rendered = "\n".join(report.lines()) + json.dumps(report.to_dict())
    for value in needles():
        assert value not in rendered
    assert HISTORY_NOTE in rendered
    assert files_holding(settings.workspaces, [LEAKS["memory"]])  # nothing was changed


def test_a_fix_leaves_no_value_on_disk_but_in_git_history_audits_and_commits_each(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seeded = seed_home(settings, monkeypatch)
    before = files_holding(tmp_path, needles())
    assert {value for values in before.values() for value in values} == set(needles())

    with App.open(settings) as app:
        report = scan_home(app, fix=True)

    assert report.exit_code == 0, report.lines()
    assert report.findings and all(f.fixed for f in report.findings)
    assert report.settled
    assert files_holding(tmp_path, needles()) == {}
    assert rows_holding(settings.database_url, needles()) == {}
    assert rows_holding(f"sqlite:///{settings.home / 'checkpoints.sqlite'}", needles()) == {}
    memory = (seeded.workspace / "agents" / "writer" / "memory.md").read_text()
    assert "- The deploy bot pushes with [REDACTED:github_token] (2030-01-01)" in memory

    # One audit line per value, in the workspace's log (the home's for rows of no squad).
    records = [r for r in AuditLog(seeded.workspace).records() if r.actor == "scan"]
    assert len(records) == sum(1 for f in report.findings if f.squad == SQUAD)
    assert {r.details["place"] for r in records if r.details} >= set(PLACE_OF.values())
    for record in records:
        assert record.operation == "redact" and record.time
        assert record.details is not None and record.details["detector"] == detector_version()
        assert record.note == f"{record.details['kind']} redacted"
    audit_text = (seeded.workspace / "logs" / "memory-audit.jsonl").read_text().lower()
    assert not any(value.lower() in audit_text for value in needles())

    # The workspace's tracked files are committed; the commit before still has the value.
    import pygit2

    repo = pygit2.Repository(str(seeded.workspace / ".git"))
    head = repo[repo.head.target]
    assert head.message.startswith("memory scan: redacted 3 credentials")
    assert "Squad-Actor: scan" in head.message
    assert f"Squad-Detector: {detector_version()}" in head.message
    assert not any(value in head.message for value in needles())
    assert report.commits == (f"{SQUAD} {str(head.id)[:10]}",)
    committed = _git_blob(seeded.workspace, "HEAD", "agents/writer/memory.md")
    assert LEAKS["memory"].encode() not in committed
    assert LEAKS["memory"].encode() in _git_blob(
        seeded.workspace, "HEAD~1", "agents/writer/memory.md"
    )
    assert _git_blob(seeded.workspace, "HEAD", "tasks/draft/output.md").count(b"[REDACTED:") == 1

    # The fact index follows the redacted text: the old terms are gone, the new ones found.
    with App.open(settings) as app:
        (fact,) = [f for f in app.store.memory.search_facts("pushes") if f.squad == SQUAD]
        assert fact.text == "pushes with [REDACTED:github_token]"
        again = scan_home(app, fix=True)
    assert again.findings == () and again.commits == () and again.exit_code == 0
    assert repo[repo.head.target].id == head.id


def test_a_scan_of_one_squad_leaves_the_home_alone_and_an_unknown_squad_is_refused(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from squad.errors import NotFound

    seeded = seed_home(settings, monkeypatch)
    (settings.home / "USER.md").write_text(f"my token: {LEAKS['memory']}\n")

    with App.open(settings) as app:
        mine = scan_home(app, fix=False, squad=SQUAD)
        with pytest.raises(NotFound, match="no squad or workspace named 'nope'"):
            scan_home(app, fix=True, squad="nope")
        everything = scan_home(app, fix=False)

    assert mine.squads == (SQUAD,)
    assert {f.squad for f in mine.findings} == {SQUAD}
    assert not any(f.place == "boot" for f in mine.findings)
    assert any(f.place == "boot" and f.where == "home: USER.md line 1" for f in everything.findings)
    assert seeded.run_id in " ".join(f.where for f in mine.findings if f.place == "checkpoint")
    assert CUE_PASSWORD not in json.dumps(everything.to_dict())
