"""Leaving out lines memory.md already says: pure, with the default (sighting-key) judgement."""

from __future__ import annotations

from squad.memory.dedupe import Known, fact_of, fresh_lines


def test_fact_of_drops_bullet_date_stamp_and_strike_through() -> None:
    assert fact_of("- Deploys on Fridays (2026-11-29; details: daily/x.md)") == "Deploys on Fridays"
    assert fact_of("* ~~Old port 8080~~ (2026-11-02; superseded 2026-11-29)") == "Old port 8080"
    assert fact_of("1. Numbered item") == "Numbered item"


def test_known_lines_go_and_headings_code_and_blank_lines_stay() -> None:
    text = (
        "## Deploys\n"
        "- deploys go out on FRIDAYS.\n"
        "\n"
        "```\n"
        "- Deploys go out on Fridays\n"
        "```\n"
        "- Releases are tagged\n"
        "- releases are tagged!\n"
    )
    kept, known = fresh_lines(text, ["- Deploys go out on Fridays (2026-11-29)", "## Deploys"])
    assert kept == ("## Deploys\n\n```\n- Deploys go out on Fridays\n```\n- Releases are tagged")
    assert known == (
        Known("- deploys go out on FRIDAYS.", "- Deploys go out on Fridays (2026-11-29)"),
        Known("- releases are tagged!", "- Releases are tagged"),
    )


def test_a_judge_that_knows_nothing_keeps_every_line() -> None:
    kept, known = fresh_lines("- a fact\n- a fact", [], lambda fact, facts: None)
    assert (kept, known) == ("- a fact\n- a fact", ())
