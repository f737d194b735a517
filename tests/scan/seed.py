"""A squad home with credentials an older detector let through, in every place squad keeps text.

The write paths refuse or redact credentials with today's detector, so the seeding blinds them
(as the detector of an older release was blind to these values) and writes files as an older
squad or a person would have. Each place gets its own value, so a test can say which place
kept one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData as SaMetaData
from sqlalchemy import Table as SaTable
from sqlalchemy import create_engine, inspect, select

from squad.app import App
from squad.history import lock
from squad.history.author import Author
from squad.settings import Settings
from tests.conftest import BASIC_YAML, propose

SQUAD = "demo"
CUE_PASSWORD = "Tr0ub4dor&3xQ"
"""A bare value after its cue ("what's the staging db password?"): found only in context."""


def token(tag: str) -> str:
    """A GitHub token of its own for each place (found by its prefix whatever the context)."""
    body = (tag.upper() + "q7Xz" * 12)[:36]
    return f"ghp_{body}"


LEAKS: dict[str, str] = {
    place: token(tag)
    for place, tag in {
        "memory": "MEM",
        "daily_log": "DAY",
        "layer_a": "LAYA",
        "conversation_user": "USR",
        "conversation_assistant": "ASST",
        "conversation_tool": "TOOL",
        "chat_summary": "SUM",
        "checkpoint": "CKPT",
        "checkpoint_write": "CKW",
        "run_log": "RLOG",
        "mcp_stderr": "MCPE",
        "review": "REV",
        "task_output": "TASK",
    }.items()
}
"""place -> the value seeded there."""


def needles() -> list[str]:
    """What must be nowhere after a fix: each value, compared without case (the fact index
    keeps terms in lower case)."""
    return [*LEAKS.values(), CUE_PASSWORD]


@dataclass(frozen=True)
class Seeded:
    settings: Settings
    workspace: Path
    run_id: str


@contextmanager
def blind_detector(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The store's write paths as an older detector saw these values: nothing to redact."""
    import squad.text.secrets as secrets

    with monkeypatch.context() as patch:
        patch.setattr(secrets, "redact", lambda text, **_: (text, []))
        patch.setattr(secrets, "redact_conversation", lambda msgs, **_: list(msgs))
        patch.setattr(secrets, "needs_previous", lambda text: False)
        patch.setattr(secrets, "refuse_secrets", lambda *args, **kwargs: None)
        patch.setattr(secrets, "contains_secret", lambda *args, **kwargs: False)
        yield


def seed_home(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Seeded:
    """A home with squad ``demo`` and a leaked value in each place of :data:`LEAKS`."""
    settings.squads_dir.mkdir(parents=True, exist_ok=True)
    definition = settings.squads_dir / "demo.yaml"
    definition.write_text(BASIC_YAML)
    with App.open(settings) as app:
        app.squads.create_from_file(definition)
        workspace = app.squads.locate(SQUAD).path
        _seed_files(app, workspace)
        run_id = _seed_store(app, monkeypatch)
        _seed_checkpoint(app, run_id)
        (workspace / "logs" / f"run-{run_id}.jsonl").write_text(
            json.dumps({"event": "run_start", "run_id": run_id})
            + "\n"
            + json.dumps({"event": "tool_result", "output": f"export GH={LEAKS['run_log']}"})
            + "\n"
        )
        (workspace / "logs" / f"run-{run_id}.mcp-stderr.log").write_text(
            f"github-mcp: starting with GITHUB_TOKEN={LEAKS['mcp_stderr']}\nlistening on stdio\n"
        )
    return Seeded(settings, workspace, run_id)


def _seed_files(app: App, workspace: Path) -> None:
    writer = workspace / "agents" / "writer"
    memory = writer / "memory.md"
    memory.write_text(
        memory.read_text() + f"- The deploy bot pushes with {LEAKS['memory']} (2030-01-01)\n"
    )
    # An older squad committed it (today's staging check would keep it out of a commit).
    history = app.history(workspace, SQUAD)
    history.start()
    with lock.exclusive(workspace):
        history.repository.commit_blobs(
            Author("extractor"),
            "memory: extractor\n",
            {"agents/writer/memory.md": memory.read_bytes()},
        )
    (writer / "daily").mkdir(exist_ok=True)
    (writer / "daily" / "2030-01-01.md").write_text(
        f"# 2030-01-01\n\n## 10:00:00 extractor\n\nCI uses {LEAKS['daily_log']} to push.\n"
    )
    (writer / "chat-summary.json").write_text(
        json.dumps(
            {"summary": f"- user shared the token {LEAKS['chat_summary']}", "covered": []},
            indent=2,
        )
        + "\n"
    )
    output = workspace / "tasks" / "draft" / "output.md"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(f"# Draft\n\nClone with https://{LEAKS['task_output']}@github.com/a/b\n")


def _seed_store(app: App, monkeypatch: pytest.MonkeyPatch) -> str:
    store = app.store
    run = store.create_run(SQUAD, trigger="manual")
    with blind_detector(monkeypatch):
        namespace = store.memory.ensure_namespace(
            f"squad:{SQUAD}/writer", "Agent Experience: Writer"
        )
        store.memory.add_fact(
            namespace.id, f"pushes with {LEAKS['layer_a']}", squad=SQUAD, agent="writer"
        )
        talk = store.conversation
        talk.record_message(
            SQUAD, "writer", "user", f"my token is {LEAKS['conversation_user']}", session_id="chat"
        )
        talk.record_message(
            SQUAD,
            "writer",
            "assistant",
            f"Saved {LEAKS['conversation_assistant']}.",
            session_id="chat",
        )
        talk.record_message(
            SQUAD,
            "writer",
            "tool",
            f"GH_TOKEN={LEAKS['conversation_tool']}",
            session_id="chat",
            tool_name="files",
        )
        talk.record_message(
            SQUAD, "writer", "assistant", "What's the staging db password?", session_id="chat"
        )
        talk.record_message(SQUAD, "writer", "user", CUE_PASSWORD, session_id="chat")
        archive = store.memory.ensure_namespace(f"archive:{SQUAD}/writer", "Conversation archive")
        from squad.store.records import NewFact

        store.archive.add(
            archive.id,
            [
                NewFact("Writer: What's the staging db password?", SQUAD, "writer", turns=(4,)),
                NewFact(f"user: {CUE_PASSWORD}", SQUAD, "writer", turns=(5,)),
            ],
        )
        propose(store, SQUAD, "writer", f"CI pushes with {LEAKS['review']}")
    return run.id


def _seed_checkpoint(app: App, run_id: str) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    with app.checkpoints.saver() as saver:
        config: Any = {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {
            "feedback": {"draft": f"push with {LEAKS['checkpoint']}"},
            "planned": True,
        }
        saved = saver.put(config, checkpoint, {"source": "loop", "step": 1}, {})
        saver.put_writes(saved, [("feedback", {"draft": f"or {LEAKS['checkpoint_write']}"})], "t1")


def files_holding(root: Path, values: list[str]) -> dict[str, list[str]]:
    """Every file under ``root`` outside ``.git`` folders whose bytes hold one of ``values``
    (without case), with the values it holds."""
    found: dict[str, list[str]] = {}
    lowered = [v.lower().encode() for v in values]
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes().lower()
        hits = [v for v, low in zip(values, lowered, strict=True) if low in data]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def rows_holding(url: str, values: list[str]) -> dict[str, list[str]]:
    """Every table.column of the database at ``url`` holding one of ``values`` in any row
    (text, JSON and binary columns alike, without case)."""
    engine = create_engine(url)
    found: dict[str, list[str]] = {}
    try:
        meta = SaMetaData()
        with engine.connect() as conn:
            for name in inspect(conn).get_table_names():
                table = SaTable(name, meta, autoload_with=conn)
                for row in conn.execute(select(table)):
                    for column, value in row._mapping.items():
                        if value is None:
                            continue
                        text = (
                            value.decode("utf-8", "replace")
                            if isinstance(value, bytes)
                            else value
                            if isinstance(value, str)
                            else json.dumps(value, default=str)
                        ).lower()
                        for v in values:
                            if v.lower() in text:
                                found.setdefault(f"{name}.{column}", []).append(v)
    finally:
        engine.dispose()
    return found
