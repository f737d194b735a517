"""The long-horizon memory benchmark's short form: three weeks instead of twelve.

It checks the report's shape and what must hold at any length (no line shown twice in a
block, memory.md under its cap), not the targets the full replay reports on
(``python -m bench.memory_weeks``).
"""

from __future__ import annotations

import pytest

from bench.memory_weeks import TARGETS, _block_lines, is_chatter, main, replay
from bench.memory_weeks_corpus import QUESTIONS, holds, normalised, weeks


def test_three_weeks_report_every_figure_and_show_no_line_twice() -> None:
    report = replay(3, notes_per_day=2)

    assert [row["week"] for row in report["per_week"]] == [1, 2, 3]
    for row in report["per_week"]:
        assert 0 < row["memory_md_bytes"] < row["cap_bytes"] == 50 * 1024
        for key in ("duplicate_lines", "chatter_filed", "junk_filed", "stale_live", "struck_lines"):
            assert row[key] >= 0, key
    week_one = [q for q in QUESTIONS if q.week == 1]
    assert len(report["probes"]) == 2 * len(week_one)  # asked at week 1, again at the end
    assert {(p["asked_week"], p["about_week"]) for p in report["probes"]} == {(1, 1), (3, 1)}
    for probe in report["probes"]:
        for budget in ("1000", "2000"):
            row = probe[budget]
            assert 0 < row["tokens"] <= int(budget)
            assert row["duplicates"] == 0, probe["q"]
    assert set(report["summary"]["evidence"]) == {"week1@week1", "week1@week3"}
    assert set(report["targets_met"]) == set(TARGETS)
    assert report["targets_met"]["duplicates_injected"] is True
    assert report["targets_met"]["under_cap"] is True
    assert report["turns"] > 0 and report["runs"] == 3 * 6


def test_the_corpus_is_the_same_every_time_and_asks_about_weeks_1_6_and_12() -> None:
    assert weeks(3, 2) == weeks.__wrapped__(3, 2)
    assert {q.week for q in QUESTIONS} == {1, 6, 12}
    said = " ".join(m for week in weeks() for chat in week.chats for m in chat.messages)
    for question in QUESTIONS:
        for phrase in question.evidence:
            assert holds(said, phrase), phrase
        for phrase in question.stale:
            assert holds(said, phrase), phrase


def test_matching_is_by_whole_normalised_words() -> None:
    assert normalised("Ji-ho owns the Billing service.") == " ji ho owns the billing service "
    assert holds("- We deploy on Fridays. (2027-01-04)", "deploy on fridays")
    assert not holds("We now deploy on Tuesdays, not Fridays.", "deploy on fridays")
    assert not holds("port 80800", "port 8080")
    assert is_chatter('You said: "We deploy on Fridays."')
    assert not is_chatter("We deploy on Fridays.")


def test_block_lines_leave_out_headings_frame_and_descriptions() -> None:
    block = "\n".join(
        [
            "## Agent Memory",
            "<untrusted-memory>",
            "### Project memory (Layer B)",
            "Facts about this project only.",
            "#### Insights",
            "- We deploy on Tuesdays. (2027-02-08)",
            "The release branch is named release-atlas.",
            "### Earlier conversation (recalled)",
            "Earlier messages related to this one.",
            "#### 4 January 2027 (Monday)",
            "- user: We deploy on Fridays.",
            "</untrusted-memory>",
        ]
    )

    facts, recalled = _block_lines(block)

    assert facts == [
        "- We deploy on Tuesdays. (2027-02-08)",
        "The release branch is named release-atlas.",
    ]
    assert recalled == ["- user: We deploy on Fridays."]


def test_bad_arguments_exit_2_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--weeks", "13"])
    assert exit_info.value.code == 2
    assert "--weeks must be 1 to 12, got 13" in capsys.readouterr().err
