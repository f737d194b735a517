"""A full memory.md folds its oldest Insights into the daily log instead of refusing writes."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

import squad.memory.file_io as file_io
from squad import fsutil
from squad.clock import FrozenClock
from squad.errors import MemoryFullError
from squad.memory.audit import AuditLog
from squad.memory.daily import DailyLog
from squad.memory.document import MemoryDocument
from squad.memory.files import MemoryFile
from squad.memory.fold import FOLD_TO, FoldPlan, apply_fold, plan_fold
from squad.workspace.layout import memory_seed
from tests.memory.test_concurrent_hand_edits import person_appending

CAP = 6000
TOPICS = ["the search indexer", "the deploy pipeline", "the billing service", "the docs build"]
T0 = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)


def _facts(count: int, start: int = 0) -> list[str]:
    """Varied dated fact lines: a few topics, numbers, some repeats and a superseded one."""
    lines = []
    for n in range(start, start + count):
        topic = TOPICS[n % len(TOPICS)]
        lines.append(
            f"- {topic} needs check number {n} before release (2026-{1 + n % 9:02d}-1{n % 10})"
        )
    if len(lines) > 5 and start == 0:
        lines[3] = "- ~~the docs build uses Sphinx~~ (2026-01-02; superseded 2026-02-01)"
        lines[5] = lines[1]  # told twice, written twice by hand
    return lines


def _filled(tmp_path: Path, size: int) -> tuple[MemoryFile, list[str]]:
    workspace = tmp_path / "ws"
    (workspace / "agents" / "planner").mkdir(parents=True)
    path = workspace / "agents" / "planner" / "memory.md"
    head = memory_seed().replace("# Project Context\n", "# Project Context\n- The API is Flask\n")
    lines: list[str] = []
    while len((head + "\n".join(lines) + "\n").encode()) < size:
        lines = _facts(len(lines) + 1)
    lines = lines[:-1]
    path.write_text(head + "\n".join(lines) + "\n")
    clock = FrozenClock(T0)
    return MemoryFile(workspace, "planner", cap_bytes=CAP, clock=clock), lines


def _everywhere(file: MemoryFile) -> str:
    """memory.md and every daily log of the agent, as one text."""
    logs = DailyLog(file.workspace, "planner")
    return file.path.read_text() + "".join(logs.read(day) for day in logs.days())


def test_a_write_at_the_cap_folds_the_oldest_insights_into_the_daily_log_and_succeeds(
    tmp_path: Path,
) -> None:
    file, lines = _filled(tmp_path, CAP - 5)
    new = "- the deploy pipeline now signs every artifact with the release key of the day"
    result = file.append("Insights", new, actor="agent:planner")

    assert result.written and result.folded is not None
    assert result.folded.daily == "agents/planner/daily/2026-12-06.md"
    size = file.path.stat().st_size
    assert size <= FOLD_TO * CAP + len(new) + 1 and size == result.size
    everything = _everywhere(file)
    for line in [*lines, "- The API is Flask", new]:  # nothing lost
        assert line in everything, line
    daily = DailyLog(file.workspace, "planner").read(date(2026, 12, 6))
    moved = [line for line in lines if line in daily]
    assert moved == lines[: len(moved)] and len(moved) == result.folded.moved  # oldest, whole
    insights = file.read("Insights").splitlines()
    summaries = [line for line in insights if "lines of 2026-" in line]
    assert len(summaries) == result.folded.summaries >= 1
    assert insights[: len(summaries)] == summaries  # in the place of the moved lines
    assert all(s.startswith("- ") and "(2026-12-06; " in s for s in summaries)
    assert not any("Sphinx" in s for s in summaries)  # superseded: moved, not summarised
    assert insights[-1] == new and file.read("Project Context").strip() == "- The API is Flask"
    operations = [r.operation for r in AuditLog(file.workspace).records()]
    assert operations == ["daily", "fold", "append"]
    again = file.append("Insights", "- the billing service moved to the new ledger", actor="x")
    assert again.folded is None  # room was made for a while, not for one line


def test_a_write_that_folding_cannot_make_room_for_is_refused_and_nothing_moves(
    tmp_path: Path,
) -> None:
    file, _ = _filled(tmp_path, CAP - 5)
    before = file.path.read_bytes()
    with pytest.raises(MemoryFullError, match="cap"):
        file.append("Decisions", "- " + "x" * CAP, actor="agent:planner")
    assert file.path.read_bytes() == before
    assert DailyLog(file.workspace, "planner").days() == []


def test_the_nightly_fold_brings_a_file_over_80_percent_back_under_it(tmp_path: Path) -> None:
    file, _ = _filled(tmp_path, int(0.78 * CAP))
    before = file.path.read_bytes()
    assert file.consolidate() is None and file.path.read_bytes() == before  # under 80%: kept

    file.path.write_text(file.path.read_text() + "\n".join(_facts(12, start=500)) + "\n")
    grown = file.path.read_text()
    assert len(grown.encode()) > 0.8 * CAP
    folded = file.consolidate()
    assert folded is not None and folded.moved > 0
    assert file.path.stat().st_size <= FOLD_TO * CAP
    everything = _everywhere(file)
    assert all(line in everything for line in grown.splitlines())
    (fold,) = [r for r in AuditLog(file.workspace).records() if r.operation == "fold"]
    assert fold.actor == "consolidation" and fold.details is not None
    assert fold.details["daily"] == "agents/planner/daily/2026-12-06.md"


def test_a_hand_edit_made_while_a_fold_writes_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person saves memory.md in place after the fold chose its lines (while their copy
    goes to the daily log): their new line stays, and the line they reworded stays too."""
    file, lines = _filled(tmp_path, CAP - 5)
    log = DailyLog(file.workspace, "planner")
    log.append("an earlier note of the day", actor="agent:planner", day=date(2026, 12, 6))
    reworded = lines[0].replace("needs check", "NEEDS A CHECK")
    assert reworded != lines[0]

    def person() -> None:
        text = file.path.read_text().replace(lines[0], reworded)
        text = text.replace("- The API is Flask\n", "- The API is Flask\n- by hand: port 5000\n")
        with file.path.open("r+") as f:
            f.truncate(0)
            f.write(text)

    appended = fsutil.append
    calls: list[Path] = []

    def append_then_person(path: Path, data: bytes, **kwargs: bool) -> None:
        appended(path, data, **kwargs)
        if not calls:
            person()  # the daily log's append done: after the plan, before memory.md's write
        calls.append(path)

    monkeypatch.setattr(file_io, "append", append_then_person)
    result = file.append(
        "Insights",
        "- the docs build moved to MkDocs with the Material theme, for good",
        actor="agent:planner",
    )
    assert result.folded is not None
    text = file.path.read_text()
    assert "- by hand: port 5000" in file.read("Project Context")
    assert reworded in text  # changed since the plan: not moved, kept as the person left it
    assert lines[0] in DailyLog(file.workspace, "planner").read(date(2026, 12, 6))
    everything = _everywhere(file)
    assert all(line in everything for line in [*lines, reworded, "- by hand: port 5000"])


@pytest.mark.slow
def test_lines_a_person_appends_while_squad_folds_are_all_kept(tmp_path: Path) -> None:
    """A real process appends a line every 20 ms (a person typing fast, or a script) while
    squad keeps writing a full file: every one of their lines is in memory.md or, folded,
    in the daily log."""
    file, lines = _filled(tmp_path, CAP - 5)
    writer, stop, started = person_appending(file.path, tmp_path, lines_first=3, pause_s=0.02)
    folds = []
    try:
        while not started.exists():
            assert writer.poll() is None, "the person's writer died"
        for n in range(12):
            try:
                result = file.append(
                    "Insights", f"- squad fact {n} about the billing service", actor="agent:a"
                )
            except MemoryFullError:
                continue  # the day's log is full too: refused, nothing lost
            if result.folded is not None:
                folds.append(result.folded)
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=60)
    written = int(out)
    assert folds, "no fold happened while the person wrote"
    everything = _everywhere(file) + "\n"
    missing = [n for n in range(written) if f"- hand line {n}\n" not in everything]
    assert not missing, f"{len(missing)} of {written} hand lines lost: {missing[:10]}"
    assert all(line in everything for line in lines)


def test_a_fold_takes_out_only_lines_still_there_and_summarises_per_topic() -> None:
    long = ", with a long explanation of why it matters" * 3
    document = MemoryDocument.parse(
        "# Insights\n"
        "Some prose stays.\n"
        f"- the search indexer runs nightly{long} (2026-01-01)\n"
        "  continued detail line\n"
        f"- The search indexer runs nightly{long}. (2026-01-05)\n"
        f"- the billing service retries payments{long} (2026-01-03)\n"
        "```\n- fenced bullet stays\n```\n"
        "- newest line stays (2026-02-01)\n"
    )
    plan = plan_fold(
        document, need=10_000, room=10_000, day=date(2026, 12, 6), pointer="daily/x.md"
    )
    assert isinstance(plan, FoldPlan)
    assert plan.lines == [
        f"- the search indexer runs nightly{long} (2026-01-01)",
        "  continued detail line",
        f"- The search indexer runs nightly{long}. (2026-01-05)",
        f"- the billing service retries payments{long} (2026-01-03)",
        "- newest line stays (2026-02-01)",
    ]
    (indexer,) = [s for s in plan.summaries if "indexer" in s]
    assert "; 2 lines of 2026-01-01..2026-01-05 in daily/x.md)" in indexer  # one fact, twice
    assert indexer.count("runs nightly") == 1
    some = FoldPlan(plan.items[:2], plan.summaries)
    person_edited = document.replace(
        "Insights", document.read("Insights").replace("  cont", " cont")
    )
    folded = apply_fold(person_edited, some).read("Insights").splitlines()
    assert folded[:3] == [
        "Some prose stays.",
        f"- the search indexer runs nightly{long} (2026-01-01)",  # changed since: stays
        " continued detail line",
    ]
    assert folded[3 : 3 + len(plan.summaries)] == list(plan.summaries)  # where item 2 was
    rest = folded[3 + len(plan.summaries) :]
    assert rest[0] == f"- the billing service retries payments{long} (2026-01-03)"
    assert "- fenced bullet stays" in rest and rest[-1] == "- newest line stays (2026-02-01)"
    assert f"- The search indexer runs nightly{long}. (2026-01-05)" not in rest


def test_nothing_is_planned_when_the_daily_log_has_no_room() -> None:
    document = MemoryDocument.parse("# Insights\n- a fact worth keeping (2026-01-01)\n")
    assert plan_fold(document, need=10, room=5, day=date(2026, 12, 6), pointer="p") is None


def test_a_line_holding_a_credential_a_person_wrote_is_never_moved() -> None:
    secret = "- deploy with password=Sup3rS3cret!x (2026-01-01)"
    why = ", because the auditors ask for them every quarter and the archive is slow" * 3
    others = [
        f"- the billing service keeps {n} days of invoices{why} (2026-01-0{n})" for n in (2, 3)
    ]
    document = MemoryDocument.parse("# Insights\n" + "\n".join([secret, *others]) + "\n")
    plan = plan_fold(document, need=60, room=10_000, day=date(2026, 12, 6), pointer="p")
    assert plan is not None and secret not in plan.lines and plan.lines[0] == others[0]
    assert secret in apply_fold(document, plan).read("Insights")
