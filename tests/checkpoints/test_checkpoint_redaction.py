"""``Checkpoints.scrub``: credentials in run checkpoints found and redacted through the saver's
own serde, on every backend (SQLite beside the store, the Postgres store's database)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.types import Send

from tests.checkpoints.test_checkpoints_contract import backend  # noqa: F401 - the fixture

ERROR = "__error__"
"""LangGraph's channel of a failed step's error (private to it since 1.0)."""
TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


def test_a_scrub_finds_then_redacts_state_writes_and_metadata_and_finds_nothing_after(
    backend: tuple[str, Any],  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    kind, fresh = backend
    checkpoints = fresh()
    config: Any = {"configurable": {"thread_id": "run-1", "checkpoint_ns": ""}}
    state = {"feedback": {"draft": f"push with {TOKEN}"}, "error": f"401 for {TOKEN}", "n": 3}
    with checkpoints.saver() as saver:
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = state
        checkpoint["channel_versions"] = {"feedback": 1, "error": 1, "n": 1}
        saved = saver.put(config, checkpoint, {"source": "loop", "note": TOKEN}, {"feedback": 1})
        saver.put_writes(saved, [("branch:to:task", Send("task", {"view": f"use {TOKEN}"}))], "t1")
        other = {"configurable": {"thread_id": "run-2", "checkpoint_ns": ""}}
        saver.put(other, empty_checkpoint(), {"source": "loop"}, {})

    looked = checkpoints.scrub(fix=False)
    only_other = checkpoints.scrub(fix=False, threads=["run-2"])
    fixed = checkpoints.scrub(fix=True)
    again = checkpoints.scrub(fix=True)

    assert looked.supported and {f.thread_id for f in looked.findings} == {"run-1"}
    kinds = {f.kind for finding in looked.findings for f in finding.found}
    assert kinds == {"github_token"}
    wheres = sorted(f.where for finding in looked.findings for f in finding.found)
    assert any(w.endswith(".feedback.draft") for w in wheres)
    assert any(w.endswith(".arg.view") for w in wheres)
    assert any(w.startswith("metadata") for w in wheres), wheres
    assert not any(f.fixed for f in looked.findings)
    assert only_other.findings == ()
    assert [f.fixed for f in fixed.findings] == [True] * len(looked.findings)
    assert again.findings == () and again.scanned == fixed.scanned
    with checkpoints.saver() as saver:
        latest = saver.get_tuple(config)
    assert latest is not None
    values = latest.checkpoint["channel_values"]
    assert values["feedback"] == {"draft": "push with [REDACTED:github_token]"}
    assert values["error"] == "401 for [REDACTED:github_token]" and values["n"] == 3
    ((_, channel, sent),) = latest.pending_writes or []
    assert channel == "branch:to:task" and sent == Send(
        "task", {"view": "use [REDACTED:github_token]"}
    )
    assert latest.metadata["note"] == "[REDACTED:github_token]"
    if kind == "sqlite":
        for path in (tmp_path / "home").iterdir():
            assert TOKEN[4:].encode() not in path.read_bytes(), path.name


def test_a_failed_steps_error_is_written_with_its_credentials_redacted(
    backend: tuple[str, Any],  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    # LangGraph writes an exception raised in a node to the __error__ channel as its repr; the
    # error is the one value no squad code redacted before it reached the checkpointer.
    kind, fresh = backend
    checkpoints = fresh()
    config: Any = {"configurable": {"thread_id": "run-1", "checkpoint_ns": ""}}
    with checkpoints.saver() as saver:
        saved = saver.put(config, empty_checkpoint(), {"source": "loop"}, {})
        saver.put_writes(saved, [(ERROR, RuntimeError(f"upload refused for {TOKEN}"))], "t1")
        saver.put_writes(saved, [("outputs", {"draft": "kept as it is"})], "t2")
        latest = saver.get_tuple(config)

    assert latest is not None
    written = {channel: value for _, channel, value in latest.pending_writes or []}
    assert written[ERROR] == "RuntimeError('upload refused for [REDACTED:github_token]')"
    assert written["outputs"] == {"draft": "kept as it is"}
    assert checkpoints.scrub(fix=False).findings == ()
    if kind == "sqlite":
        for path in (tmp_path / "home").iterdir():
            assert TOKEN[4:].encode() not in path.read_bytes(), path.name
