"""Transcript files for ``squad memory extract``: reading them, and extracting across batches."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from squad.errors import UsageError
from squad.extraction.transcript import extract_transcript, read_transcript

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def test_json_lines_and_json_lists_read_alike(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    lines = tmp_path / "t.jsonl"
    lines.write_text("\n".join(json.dumps(m) for m in messages) + "\n\n")
    listed = tmp_path / "t.json"
    listed.write_text(json.dumps(messages, indent=2))
    assert (
        read_transcript(lines)
        == read_transcript(listed)
        == [("user", "hi"), ("assistant", "hello")]
    )


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such transcript file"):
        read_transcript(tmp_path / "nope.jsonl")


def test_a_fact_repeated_in_a_later_batch_is_a_duplicate_and_turns_count_all_messages() -> None:
    fact = "In this repo the API listens on port 8080."
    messages = [("system", "You are an agent."), ("user", fact)]
    messages += [("user", f"Note {i}.") for i in range(45)] + [("user", fact)]
    result = extract_transcript(messages, now=NOW, model=None)
    assert [(d.kind, d.reason, d.candidate.source_turns) for d in result.decisions] == [
        ("write", "new", (1,)),
        ("drop", "duplicate", (47,)),
    ]


def test_the_demo_conversation_teaches_facts_and_no_junk() -> None:
    path = Path(__file__).resolve().parents[2] / "examples" / "onboarding-chat.jsonl"
    result = extract_transcript(read_transcript(path), now=NOW, model=None)
    written = {d.candidate.text: d.candidate.scope for d in result.decisions if d.kind == "write"}
    assert written == {
        "In this repo the docs live in docs/ and we build them with MkDocs Material.": "project",
        "I prefer short answers with the code first, then one line of explanation.": (
            "experiential"
        ),
        "We decided to publish the docs every Friday after the release.": "project",
        "The staging site is at https://docs-staging.example.dev.": "project",
    }
