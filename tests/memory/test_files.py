"""Safe memory writes: locks, atomic replace, version checks, caps, audit, secrets, crashes."""

from __future__ import annotations

import multiprocessing
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import pytest

from squad.clock import FrozenClock
from squad.errors import (
    MemoryError_,
    MemoryFileError,
    MemoryFullError,
    SecretInMemoryError,
    StaleWriteError,
)
from squad.memory.audit import AuditLog, sha256_text
from squad.memory.daily import DailyLog
from squad.memory.files import MemoryFile
from squad.workspace.layout import memory_seed


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


def test_a_file_that_is_not_utf8_reads_with_replacements_but_is_never_rewritten(
    workspace: Path,
) -> None:
    file = memory(workspace)
    data = file.path.read_bytes() + b"- na\xefve\n"
    file.path.write_bytes(data)
    seen = file.snapshot()
    assert seen.version == sha256_text(data) and seen.size == len(data)
    assert seen.problem is not None and "byte offset" in seen.problem
    assert "- na\ufffdve" in file.read("Insights")
    with pytest.raises(MemoryFileError, match="not valid UTF-8") as caught:
        file.replace("Insights", "- naive", actor="me", expected_version=seen.version)
    assert caught.value.exit_code == 2
    assert file.path.read_bytes() == data


def test_a_file_made_read_only_is_refused_and_the_mode_of_others_kept(workspace: Path) -> None:
    file = memory(workspace)
    file.path.chmod(0o400)
    with pytest.raises(MemoryFileError, match=r"read-only \(mode 0400\)"):
        file.append("Insights", "- x", actor="me")
    file.path.chmod(0o640)
    file.append("Insights", "- x", actor="me")
    assert file.path.stat().st_mode & 0o777 == 0o640


def test_an_unclosed_fence_of_the_file_is_a_file_error_naming_its_line(workspace: Path) -> None:
    file = memory(workspace)
    file.path.write_text(memory_seed() + "```\n")
    with pytest.raises(MemoryFileError, match=r"^agents/planner/memory\.md: line 8 opens a ```"):
        file.append("Insights", "- x", actor="me")


def test_a_write_that_fails_on_disk_is_a_memory_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    file = memory(workspace)
    before = file.path.read_bytes()
    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(MemoryError_, match=r"cannot write agents/planner/memory\.md: No space"):
        file.append("Insights", "- x", actor="me")
    assert file.path.read_bytes() == before


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


@pytest.mark.slow
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
import time
from pathlib import Path
from squad.memory.files import MemoryFile
workspace, name = Path(sys.argv[1]), sys.argv[2]
file = MemoryFile(workspace, "planner", cap_bytes=10_000_000)
print("ready", flush=True)
for i in range(2_000):
    fact = f"- {name} fact {i}"
    file.append("Insights", fact, actor=name)
    # The pause leaves the lock free long enough for the other writer's poll to take it; it
    # comes before the acknowledgement, so a kill right after one lands in the next write.
    time.sleep(0.005)
    print(fact, flush=True)  # acknowledged: append() has returned
"""
FACT = re.compile(r"- (writer-\d+-\d+) fact (\d+)\n")
ACK_TIMEOUT_S = 60.0


class Writer:
    """A child process appending facts to ``memory.md``; it prints each fact after its append
    returned, so a printed fact is one the writer was told is saved."""

    def __init__(self, workspace: Path, name: str, errors: Path) -> None:
        self.name = name
        self.errors = errors
        with errors.open("wb") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-c", WRITER, str(workspace), name],
                stdout=subprocess.PIPE,
                stderr=sink,
                text=True,
            )
        self.acknowledged: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ready = False

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _take(self, line: str) -> None:
        if line == "ready":
            self._ready = True
        else:
            self.acknowledged.append(line)

    def wait_for(self, acks: int) -> None:
        """Block until the writer is about to write and has acknowledged ``acks`` facts."""
        deadline = time.monotonic() + ACK_TIMEOUT_S
        while not self._ready or len(self.acknowledged) < acks:
            try:
                line = self._lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                pytest.fail(f"{self.name} acknowledged {len(self.acknowledged)} of {acks} facts")
            if line is None:
                pytest.fail(f"{self.name} exited early:\n{self.errors.read_text()}")
            self._take(line)

    def kill(self, after_s: float = 0.0) -> None:
        """SIGKILL the writer ``after_s`` from now, then collect every fact it acknowledged."""
        time.sleep(after_s)
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self._reader.join()
        assert self.process.stdout is not None
        self.process.stdout.close()
        while (line := self._lines.get_nowait()) is not None:
            self._take(line)


@pytest.fixture
def start_writer(tmp_path: Path) -> Iterator[Callable[[Path, str], Writer]]:
    started: list[Writer] = []

    def start(workspace: Path, name: str) -> Writer:
        started.append(Writer(workspace, name, tmp_path / f"{name}.stderr"))
        return started[-1]

    yield start
    for writer in started:
        if writer.process.returncode is None:
            writer.kill()


def assert_whole_and_complete(workspace: Path, head: str, writers: list[Writer]) -> None:
    """``memory.md`` is absent (only if nothing was acknowledged) or one whole version: ``head``
    then whole fact lines, each writer's in order without gaps, every acknowledged fact among
    them; and each writer's audit records count its writes (the one renamed but not yet
    audited when the kill landed aside)."""
    path = memory(workspace).path
    audited = Counter(record.actor for record in AuditLog(workspace).records())
    if not path.exists():
        assert [w.acknowledged for w in writers if w.acknowledged] == []
        assert audited == Counter()
        return
    text = path.read_text()
    assert text.startswith(head)
    present: dict[str, list[str]] = {}
    for line in text[len(head) :].splitlines(keepends=True):
        match = FACT.fullmatch(line)
        assert match is not None, f"torn or foreign line {line!r}"
        assert int(match[2]) == len(present.setdefault(match[1], []))
        present[match[1]].append(line.rstrip("\n"))
    for writer in writers:
        saved = present.get(writer.name, [])
        assert saved[: len(writer.acknowledged)] == writer.acknowledged
        assert audited[writer.name] <= len(saved) <= audited[writer.name] + 1


@pytest.mark.slow
def test_writers_killed_before_their_first_write_leave_no_file_or_a_whole_one(
    tmp_path: Path, start_writer: Callable[[Path, str], Writer]
) -> None:
    for round_ in range(3):
        workspace = tmp_path / f"ws-{round_}"  # no memory.md: the first append creates it
        writers = [start_writer(workspace, f"writer-{round_}-{w}") for w in range(2)]
        for writer in writers:
            writer.wait_for(acks=0)
        for writer in writers:
            writer.kill()
        assert_whole_and_complete(workspace, "# Insights\n", writers)


@pytest.mark.slow
def test_writers_killed_mid_write_keep_every_acknowledged_fact_and_a_whole_file(
    workspace: Path, start_writer: Callable[[Path, str], Writer]
) -> None:
    # A large file, so a write takes long enough (some ms) for a kill to land inside one.
    context = "".join(f"- context {i:02} {'x' * 1000}\n" for i in range(24))
    memory(workspace).replace("Project Context", context, actor="setup")
    head = memory(workspace).path.read_text()
    killed: list[Writer] = []
    for round_ in range(12):
        # Kill after a chosen acknowledgement, then a little later each round: the kills
        # sweep a write, from before the temporary file to after the rename.
        acks, delay_s = 1 + round_ % 4, 0.0004 * round_
        first, second = (start_writer(workspace, f"writer-{round_}-{w}") for w in range(2))
        first.wait_for(acks)
        second.wait_for(acks)
        first.kill(after_s=delay_s)  # in its next append, maybe waiting for the other's lock
        second.wait_for(len(second.acknowledged) + 2)  # a dead writer's lock blocks no one
        second.kill(after_s=delay_s)  # alone now, so in its next append or just after it
        killed += [first, second]
        assert_whole_and_complete(workspace, head, killed)


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
