"""Safe memory writes: locks, atomic replace, version checks, caps, audit, secrets, crashes."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

from squad.errors import MemoryError_, MemoryFullError, SecretInMemoryError, StaleWriteError
from squad.memory.audit import AuditLog, sha256_text
from squad.memory.files import DailyLog, MemoryFile
from squad.workspace.layout import memory_seed
from tests.conftest import FrozenClock


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "agents" / "planner").mkdir(parents=True)
    (ws / "agents" / "planner" / "memory.md").write_text(memory_seed())
    return ws


def memory(workspace: Path, **kwargs: object) -> MemoryFile:
    return MemoryFile(workspace, "planner", **kwargs)  # type: ignore[arg-type]


def test_append_writes_and_audits_with_hashes(workspace: Path, clock: FrozenClock) -> None:
    file = memory(workspace, clock=clock)
    before = file.path.read_bytes()
    result = file.append("Decisions", "- JWT for auth", actor="agent:planner")
    assert file.read("Decisions") == "- JWT for auth\n\n"
    (record,) = AuditLog(workspace).records()
    assert record.actor == "agent:planner" and record.operation == "append"
    assert record.file == "agents/planner/memory.md" and record.section == "Decisions"
    assert record.old_sha256 == sha256_text(before) == result.old_version
    assert record.new_sha256 == sha256_text(file.path.read_bytes()) == result.new_version
    assert record.time == clock.now.isoformat()


def test_write_based_on_a_stale_read_is_refused(workspace: Path) -> None:
    file = memory(workspace)
    seen = file.snapshot()
    file.append("Insights", "- someone else wrote this", actor="other")
    current = file.path.read_bytes()
    with pytest.raises(StaleWriteError, match="changed since it was read"):
        file.replace("Insights", "- my version", actor="me", expected_version=seen.version)
    assert file.path.read_bytes() == current
    fresh = file.snapshot()
    file.replace("Insights", "- my version", actor="me", expected_version=fresh.version)
    assert file.read("Insights") == "- my version\n"


def test_write_over_the_cap_is_refused_never_truncated(workspace: Path) -> None:
    file = memory(workspace, cap_bytes=200)
    before = file.path.read_bytes()
    with pytest.raises(MemoryFullError, match="over its 200-byte cap") as caught:
        file.append("Insights", "- " + "x" * 300, actor="me")
    assert "Consolidate" in str(caught.value)
    assert file.path.read_bytes() == before
    (refused,) = AuditLog(workspace).records()  # a reason to consolidate, for maintenance
    assert (refused.operation, refused.note, refused.new_sha256) == (
        "refused",
        "over cap: consolidate",
        None,
    )


def test_automatic_writer_cannot_empty_a_non_empty_section(workspace: Path) -> None:
    file = memory(workspace)
    file.append("Decisions", "- keep me", actor="me")
    with pytest.raises(MemoryError_, match="may not empty"):
        file.replace("Decisions", "  ", actor="extractor", automatic=True)
    assert "- keep me" in file.read("Decisions")
    file.replace("Decisions", "", actor="user")
    assert file.read("Decisions").strip() == ""


def test_secrets_never_reach_the_file(workspace: Path) -> None:
    file = memory(workspace)
    before = file.path.read_bytes()
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8" * 3
    with pytest.raises(SecretInMemoryError) as caught:
        file.append("Insights", f"- the OpenAI key is {key}", actor="agent:planner")
    assert key not in str(caught.value)
    assert file.path.read_bytes() == before


def test_text_that_would_break_the_structure_is_refused(workspace: Path) -> None:
    file = memory(workspace)
    with pytest.raises(MemoryError_, match="sections"):
        file.append("Decisions", "# New top heading", actor="me")


def test_reading_an_unknown_section_lists_the_real_ones(workspace: Path) -> None:
    with pytest.raises(MemoryError_, match="'Insights'"):
        memory(workspace).read("Insight")


def test_missing_memory_file_is_created_by_the_first_append(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    file = MemoryFile(ws, "writer")
    file.append("Insights", "- first", actor="me")
    assert file.path.read_text() == "# Insights\n- first\n"


def _append_many(workspace: str, worker: int, count: int) -> None:
    file = MemoryFile(Path(workspace), "planner")
    for i in range(count):
        file.append("Insights", f"- worker {worker} entry {i}", actor=f"worker-{worker}")


def test_processes_appending_at_once_lose_no_entry(workspace: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(str(workspace), w, 25)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    lines = memory(workspace).read("Insights").splitlines()
    expected = {f"- worker {w} entry {i}" for w in range(4) for i in range(25)}
    assert set(lines) - {""} == expected
    records = AuditLog(workspace).records()
    assert len(records) == 100
    chain = {r.old_sha256 for r in records} - {None}
    assert len(chain) == 100  # every write started from a different, newer version


WRITER = """
import sys
from pathlib import Path
from squad.memory.files import MemoryFile
file = MemoryFile(Path(sys.argv[1]), "planner")
big = ["- " + letter * 4000 for letter in "abcdefgh"]
print("ready", flush=True)
i = 0
while True:
    file.replace("Insights", "\\n".join(big[i % 2 :: 2]), actor="writer")
    i += 1
"""


def test_a_writer_killed_mid_write_never_leaves_a_torn_file(workspace: Path) -> None:
    versions = {memory_seed()}
    big = ["- " + letter * 4000 for letter in "abcdefgh"]
    for start in (0, 1):
        versions.add(memory_seed() + "\n".join(big[start::2]) + "\n")
    for round_ in range(8):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(workspace)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(0.05 + 0.037 * round_)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
        assert memory(workspace).path.read_text() in versions
        for line in AuditLog(workspace).path.read_text().splitlines():
            json.loads(line)  # the audit log never holds half a record


def test_daily_log_appends_dated_entries_read_on_demand(
    workspace: Path, clock: FrozenClock
) -> None:
    log = DailyLog(workspace, "planner", clock=clock)
    where = log.append("Long details about the auth decision.", actor="agent:planner")
    log.append("More details.", actor="agent:planner")
    assert where == "agents/planner/daily/2026-11-29.md"
    text = log.read(date(2026, 11, 29))
    assert text.startswith("# 2026-11-29\n")
    assert text.index("Long details") < text.index("More details")
    assert log.days() == [date(2026, 11, 29)]
    with pytest.raises(MemoryError_, match="no daily log for 2026-11-30"):
        log.read(date(2026, 11, 30))
