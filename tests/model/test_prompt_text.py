"""Reading prompts as the offline model does, pure: sentences run on over a single line break
(a goal wrapped in YAML), labelled values wrapped over lines, and the plans made of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from squad.model import prompt_text as pt
from squad.model.offline import answer, plan_tasks
from squad.model.types import Message
from squad.runtime.plan import plan_request
from squad.spec.loader import squad_from_file, squad_from_text
from tests.conftest import EXAMPLES

# (id, text, sentences)
SENTENCES = [
    (
        "wrapped-mid-sentence",
        "Add input validation to the CLI's `export` command, with tests, and document the new\n"
        "error messages in the changelog.\n",
        [
            "Add input validation to the CLI's `export` command, with tests, and document the "
            "new error messages in the changelog."
        ],
    ),
    (
        "wrapped-over-three-lines",
        "Ship a guide that takes a new user\nfrom install to a first run\nin ten minutes. "
        "Then publish it.",
        [
            "Ship a guide that takes a new user from install to a first run in ten minutes.",
            "Then publish it.",
        ],
    ),
    (
        "a-blank-line-separates",
        "Research the market\n\nwrite the report",
        ["Research the market", "write the report"],
    ),
    (
        "list-items-separate-and-wrap",
        "Goals:\n- Research the market for\n  small tools\n* Write the report\n"
        "1. Review it\n2) Ship it",
        [
            "Goals:",
            "Research the market for small tools",
            "Write the report",
            "Review it",
            "Ship it",
        ],
    ),
    (
        "one-task-a-line-without-full-stops",
        "Research the market\nWrite the report\nPublish it",
        ["Research the market", "Write the report", "Publish it"],
    ),
    (
        "a-capitalised-verb-after-an-article-still-runs-on",
        "Write the guide with help from the\nReview team.",
        ["Write the guide with help from the Review team."],
    ),
    (
        "a-heading-is-a-sentence-of-its-own",
        "## Background\nWe need docs.\n\nWrite the guide.",
        ["Background", "We need docs.", "Write the guide."],
    ),
    (
        "korean-sentences-ending-in-da",
        "시장을 조사한다. 보고서를 작성한다.\n결과를 팀에\n공유한다.",
        ["시장을 조사한다.", "보고서를 작성한다.", "결과를 팀에 공유한다."],
    ),
    (
        "full-width-stops-need-no-space",
        "文書を書く。確認する！",
        ["文書を書く。", "確認する！"],
    ),
    (
        "abbreviations-end-no-sentence",
        "Use small models, e.g. SmolLM2 or Qwen. Ask Dr. Kim and J. Park to review it, "
        "i.e. the U.S. team. Done.",
        [
            "Use small models, e.g. SmolLM2 or Qwen.",
            "Ask Dr. Kim and J. Park to review it, i.e. the U.S. team.",
            "Done.",
        ],
    ),
    (
        "etc-ends-a-sentence-only-before-a-capital",
        "Fix bugs, typos etc. and ship v1.2. Fix docs etc. Then release.",
        ["Fix bugs, typos etc. and ship v1.2.", "Fix docs etc.", "Then release."],
    ),
    (
        "inline-numbers-and-semicolons",
        "1. Research the market. 2. Write it up; review it!",
        ["Research the market.", "Write it up", "review it!"],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [pytest.param(*case[1:], id=case[0]) for case in SENTENCES]
)
def test_sentences_run_on_over_line_breaks_and_end_at_stops_blank_lines_and_items(
    text: str, expected: list[str]
) -> None:
    assert pt.sentences(text) == expected


def test_korean_clauses_are_kept_as_tasks() -> None:
    assert pt.clauses("시장을 조사한다. 보고서를 작성한다.") == [
        "시장을 조사한다",
        "보고서를 작성한다",
    ]


def test_a_labelled_value_runs_on_while_its_sentence_is_unfinished() -> None:
    text = (
        "Task: Write the\nguide. Keep it\nshort.\nSaved as tasks/x.md\n\n"
        "Expected output: a page\n\nGoal: Do A.\nDo B.\n\nAnd C.\n\nAgents:\n- a: writes"
    )
    assert pt.sections(text) == {
        "task": "Write the\nguide. Keep it\nshort.",
        "expected": "a page",
        "goal": "Do A.",
        "agents": "- a: writes",
    }
    # With paragraphs, a value that a label ends runs to that label.
    assert pt.section(text, "goal", paragraphs=True) == "Do A.\nDo B.\n\nAnd C."
    assert pt.section("Goal: Do A.\nReturn JSON.", "goal", paragraphs=True) == "Do A."


def test_the_offline_planner_is_a_pure_function_of_goal_and_agents() -> None:
    agents = [("dev", "Implements changes"), ("reviewer", "Reviews changes"), ("docs", "")]
    tasks = plan_tasks("Implement the parser,\nthen document it; review the docs.", agents)
    assert [(t["id"], t["description"], t["agent"], t["depends_on"]) for t in tasks] == [
        ("implement-parser", "Implement the parser.", "dev", []),
        ("document", "Document it.", "docs", ["implement-parser"]),  # no stem shared: in turn
        ("review-docs", "Review the docs.", "reviewer", ["document"]),
    ]
    assert plan_tasks("", agents) == [] and plan_tasks("Write docs.", []) == []


def test_a_goal_wrapped_in_yaml_is_planned_whole() -> None:
    spec = squad_from_text(
        "name: x\nprocess: hierarchical\ngoal: |\n"
        "  Add input validation to the CLI's `export` command, with tests, and document the new\n"
        "  error messages in the changelog.\n\n"
        "  Then tell the team.\n"
        "agents:\n  - {id: lead, role: Plans, lead: true}\n  - {id: developer, role: Codes}\n"
    )
    reply = answer([Message.user(plan_request(spec, spec.goal))])
    descriptions = [t["description"] for t in json.loads(reply.content)["tasks"]]
    assert descriptions == [
        "Add input validation to the CLI's `export` command, with tests.",
        "Document the new error messages in the changelog.",
        "Tell the team.",
    ]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_word_of_an_example_squads_goal_reaches_its_offline_plan(path: Path) -> None:
    # The demo's code-review plan had a task "Document the new." (its goal wraps after "new").
    spec = squad_from_file(path)
    reply = answer([Message.user(plan_request(spec, spec.goal))])
    planned = " ".join(t["description"] for t in json.loads(reply.content)["tasks"])
    assert set(pt.terms(spec.goal, limit=100)) <= set(pt.words(planned))
