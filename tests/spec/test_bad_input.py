"""Every class of bad squad definition gets a located, actionable problem and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from squad.errors import ConfigError, Problem
from squad.spec.loader import squad_from_file, squad_from_text

GOOD_AGENTS = "agents:\n  - {id: a, role: r}\n"
HIER = "process: hierarchical\n"


def problems_of(text: str) -> list[Problem]:
    with pytest.raises(ConfigError) as caught:
        squad_from_text(text, source="squad.yaml")
    return list(caught.value.problems)


def only_problem(text: str) -> Problem:
    problems = problems_of(text)
    assert len(problems) == 1, [p.render() for p in problems]
    return problems[0]


# (id, yaml, line, column, path, words that must appear in message+hint)
CASES = [
    ("yaml-syntax", "name: x\nagents: [\n", 3, 1, "", ["YAML syntax error"]),
    ("tab-indent", "name: x\nagents:\n\t- id: a\n", 3, 1, "", ["tabs"]),
    (
        "duplicate-key",
        "name: x\nname: y\n" + GOOD_AGENTS + HIER,
        2,
        1,
        "name",
        ["duplicate key 'name'", "line 1"],
    ),
    (
        "duplicate-nested-key",
        "name: x\n" + HIER + "agents:\n  - id: a\n    role: r\n    role: s\n",
        6,
        5,
        "agents[0].role",
        ["duplicate key 'role'", "line 5"],
    ),
    (
        "unknown-key-typo",
        "name: x\n" + HIER + GOOD_AGENTS + "shedule: {interval: 5m}\n",
        5,
        1,
        "shedule",
        ["unknown key 'shedule'", "did you mean 'schedule'"],
    ),
    (
        "unknown-nested-key",
        "name: x\n" + HIER + "agents:\n  - {id: a, role: r, rol: s}\n",
        4,
        22,
        "agents[0].rol",
        ["unknown key 'rol'", "did you mean 'role'"],
    ),
    (
        "wrong-type-list",
        "name: x\n" + HIER + "agents: planner\n",
        3,
        9,
        "agents",
        ["expected a list", "'planner'"],
    ),
    (
        "wrong-type-int",
        "name: x\n" + HIER + GOOD_AGENTS + "limits: {max_turns: many}\n",
        5,
        21,
        "limits.max_turns",
        ["expected a whole number", "'many'"],
    ),
    (
        "quoted-number",
        "name: x\n" + HIER + GOOD_AGENTS + "limits: {max_turns: '5'}\n",
        5,
        21,
        "limits.max_turns",
        ["remove the quotes"],
    ),
    (
        "yes-is-not-bool",
        "name: x\n" + HIER + "agents:\n  - {id: a, role: r, lead: yes}\n",
        4,
        28,
        "agents[0].lead",
        ["true or false"],
    ),
    (
        "number-for-text",
        "name: 42\n" + HIER + GOOD_AGENTS,
        1,
        7,
        "name",
        ["expected text", "quote it"],
    ),
    (
        "out-of-range-low",
        "name: x\n" + HIER + GOOD_AGENTS + "limits: {max_rounds: 0}\n",
        5,
        22,
        "limits.max_rounds",
        ["out of range", ">= 1"],
    ),
    (
        "out-of-range-high",
        "name: x\n" + HIER + GOOD_AGENTS + "memory: {trigger_interval: 5000}\n",
        5,
        28,
        "memory.trigger_interval",
        ["out of range", "<= 1000"],
    ),
    (
        "negative-cost",
        "name: x\n" + HIER + GOOD_AGENTS + "limits: {max_cost_usd: -1}\n",
        5,
        24,
        "limits.max_cost_usd",
        ["out of range"],
    ),
    (
        "bad-squad-slug",
        "name: Docs Site\n" + HIER + GOOD_AGENTS,
        1,
        7,
        "name",
        ["not a valid id", "'docs-site'"],
    ),
    (
        "bad-agent-slug",
        "name: x\n" + HIER + "agents:\n  - {id: Planner_1, role: r}\n",
        4,
        10,
        "agents[0].id",
        ["not a valid id", "'planner-1'"],
    ),
    (
        "slug-too-long",
        "name: " + "a" * 64 + "\n" + HIER + GOOD_AGENTS,
        1,
        7,
        "name",
        ["not a valid id"],
    ),
    (
        "duplicate-agent-id",
        "name: x\n" + HIER + "agents:\n  - {id: a, role: r}\n  - {id: a, role: s}\n",
        5,
        10,
        "agents[1].id",
        ["duplicate agent id 'a'"],
    ),
    (
        "duplicate-task-id",
        "name: x\n" + GOOD_AGENTS + "tasks:\n  - {id: t, description: d, agent: a}\n"
        "  - {id: t, description: e, agent: a}\n",
        6,
        10,
        "tasks[1].id",
        ["duplicate task id 't'"],
    ),
    (
        "unknown-agent",
        "name: x\nagents:\n  - {id: writer, role: r}\n"
        "tasks:\n  - {id: t, description: d, agent: writter}\n",
        5,
        36,
        "tasks[0].agent",
        ["unknown agent 'writter'", "did you mean 'writer'"],
    ),
    (
        "unknown-task",
        "name: x\n" + GOOD_AGENTS + "tasks:\n  - {id: outline, description: d, agent: a}\n"
        "  - {id: t, description: d, agent: a, depends_on: [outlin]}\n",
        6,
        52,
        "tasks[1].depends_on[0]",
        ["unknown task 'outlin'", "did you mean 'outline'"],
    ),
    (
        "self-cycle",
        "name: x\n"
        + GOOD_AGENTS
        + "tasks:\n  - {id: t, description: d, agent: a, depends_on: [t]}\n",
        5,
        52,
        "tasks[0].depends_on[0]",
        ["depends on itself"],
    ),
    (
        "cycle",
        "name: x\n" + GOOD_AGENTS + "tasks:\n"
        "  - {id: a1, description: d, agent: a, depends_on: [c1]}\n"
        "  - {id: b1, description: d, agent: a, depends_on: [a1]}\n"
        "  - {id: c1, description: d, agent: a, depends_on: [b1]}\n",
        6,
        53,
        "tasks[1].depends_on[0]",
        ["dependency cycle: a1 -> c1 -> b1 -> a1"],
    ),
    (
        "bad-cron",
        "name: x\n" + HIER + GOOD_AGENTS + "schedule: {cron: '0 24 * * *'}\n",
        5,
        18,
        "schedule.cron",
        ["invalid cron", "hour: 24 is out of range 0-23"],
    ),
    (
        "cron-never-fires",
        "name: x\n" + HIER + GOOD_AGENTS + "schedule: {cron: '0 9 31 4 *'}\n",
        5,
        18,
        "schedule.cron",
        ["invalid cron", "it can never fire: April has no day 31"],
    ),
    (
        "cron-field-count",
        "name: x\n" + HIER + GOOD_AGENTS + "schedule: {cron: '0 9 * *'}\n",
        5,
        18,
        "schedule.cron",
        ["5 fields"],
    ),
    (
        "bad-interval",
        "name: x\n" + HIER + GOOD_AGENTS + "schedule: {interval: 30 minutes}\n",
        5,
        22,
        "schedule.interval",
        ["not an interval", "'30m'"],
    ),
    (
        "zero-interval",
        "name: x\n" + HIER + GOOD_AGENTS + "schedule: {interval: 0s}\n",
        5,
        22,
        "schedule.interval",
        ["longer than zero"],
    ),
    (
        "cron-and-interval",
        "name: x\n" + HIER + GOOD_AGENTS + "schedule: {cron: '@daily', interval: 1h}\n",
        5,
        38,
        "schedule.interval",
        ["not both"],
    ),
    (
        "bad-timezone",
        "name: x\n" + HIER + GOOD_AGENTS + "schedule: {cron: '@daily', timezone: Europe/Pariss}\n",
        5,
        38,
        "schedule.timezone",
        ["unknown time zone", "'Europe/Paris'"],
    ),
    (
        "bad-process",
        "name: x\nprocess: parallel\n" + GOOD_AGENTS,
        2,
        10,
        "process",
        ["'parallel' is not one of"],
    ),
    (
        "bad-process-type-in-a-mapping",
        "name: x\nprocess: {type: hierachical}\n" + GOOD_AGENTS,
        2,
        17,
        "process.type",
        ["'hierachical' is not one of", "did you mean 'hierarchical'?"],
    ),
    (
        "strict-plan-not-a-boolean",
        "name: x\nprocess: {type: hierarchical, strict_plan: yes}\n" + GOOD_AGENTS,
        2,
        44,
        "process.strict_plan",
        ["expected true or false", "YAML 1.2"],
    ),
    (
        "process-key-typo",
        "name: x\nprocess: {type: hierarchical, strict_plans: true}\n" + GOOD_AGENTS,
        2,
        31,
        "process.strict_plans",
        ["unknown key 'strict_plans'", "did you mean 'strict_plan'?"],
    ),
    ("no-agents", "name: x\n" + HIER + "agents: []\n", 3, 9, "agents", ["must not be empty"]),
    ("missing-name", HIER + GOOD_AGENTS, 1, 1, "name", ["required key 'name'"]),
    (
        "missing-role",
        "name: x\n" + HIER + "agents:\n  - id: a\n",
        4,
        5,
        "agents[0].role",
        ["required key 'role'"],
    ),
    (
        "sequential-without-tasks",
        "name: x\n" + GOOD_AGENTS,
        1,
        1,
        "process",
        ["sequential squad needs at least one task"],
    ),
    (
        "workspace-escape-dotdot",
        "name: x\nworkspace: ../outside\n" + HIER + GOOD_AGENTS,
        2,
        12,
        "workspace",
        ["not a folder name under the workspace root"],
    ),
    (
        "workspace-escape-absolute",
        "name: x\nworkspace: /etc\n" + HIER + GOOD_AGENTS,
        2,
        12,
        "workspace",
        ["not a folder name"],
    ),
    (
        "workspace-escape-nested",
        "name: x\nworkspace: a/../../b\n" + HIER + GOOD_AGENTS,
        2,
        12,
        "workspace",
        ["not a folder name"],
    ),
    (
        "agent-id-escape",
        "name: x\n" + HIER + "agents:\n  - {id: ../../etc, role: r}\n",
        4,
        10,
        "agents[0].id",
        ["not a valid id"],
    ),
    (
        "task-id-escape",
        "name: x\n" + GOOD_AGENTS + "tasks:\n  - {id: ../t, description: d, agent: a}\n",
        5,
        10,
        "tasks[0].id",
        ["not a valid id"],
    ),
    (
        "model-wrong-type",
        "name: x\nmodel: 5\n" + HIER + GOOD_AGENTS,
        2,
        8,
        "model",
        ["model string", "the number 5"],
    ),
    (
        "model-bad-api-base",
        "name: x\nmodel: {name: m, api_base: 'localhost:8000'}\n" + HIER + GOOD_AGENTS,
        2,
        28,
        "model.api_base",
        ["not an http(s) URL"],
    ),
    (
        "api-key-in-env-field",
        "name: x\nmodel: {name: m, api_key_env: 'sk-abc-123'}\n" + HIER + GOOD_AGENTS,
        2,
        31,
        "model.api_key_env",
        ["environment variable name"],
    ),
    (
        "context-window-too-small",
        "name: x\nmodel: {name: m, context_window: 512}\n" + HIER + GOOD_AGENTS,
        2,
        34,
        "model.context_window",
        ["context_window 512 is out of range", "from 2,048 to 10,000,000", "leave it out"],
    ),
    (
        "two-leads",
        "name: x\n" + HIER + "agents:\n  - {id: a, role: r, lead: true}\n"
        "  - {id: b, role: r, lead: true}\n",
        5,
        28,
        "agents[1].lead",
        ["more than one lead"],
    ),
    (
        "merge-of-scalar",
        "name: x\n" + HIER + GOOD_AGENTS + "limits: {<<: 5}\n",
        5,
        14,
        "limits",
        ["merge key"],
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "column", "path", "words"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_bad_definition_is_reported_at_its_line_and_key(
    text: str, line: int, column: int, path: str, words: list[str]
) -> None:
    problem = only_problem(text)
    assert (problem.line, problem.column, problem.dotted_path) == (line, column, path)
    assert problem.source == "squad.yaml"
    rendered = problem.render()
    for word in words:
        assert word in rendered
    assert rendered.startswith(f"squad.yaml:{line}:{column}: ")


def test_every_problem_in_a_file_is_reported_in_line_order() -> None:
    text = "name: Bad Name\nagents:\n  - {id: a, role: r, lead: maybe}\nlimits: {max_turns: 0}\n"
    problems = problems_of(text + "tasks:\n  - {id: t, description: d, agent: a}\n")
    assert [p.dotted_path for p in problems] == ["name", "agents[0].lead", "limits.max_turns"]
    assert [p.line for p in problems] == [1, 3, 4]


def test_empty_file_says_what_to_start_with() -> None:
    problem = only_problem("# only a comment\n\n")
    assert "file is empty" in problem.message
    assert "name:" in (problem.hint or "") and "agents:" in (problem.hint or "")


@pytest.mark.parametrize("text", ["- a\n- b\n", "just text\n", "42\n"])
def test_root_that_is_not_a_mapping_is_refused(text: str) -> None:
    assert "top level must be a mapping" in only_problem(text).message


def test_alias_bomb_is_refused_without_expanding() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i, name in enumerate("bcdefghi"):
        previous = "abcdefghi"[i]
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    problem = only_problem("\n".join(lines) + "\n")
    assert "alias" in problem.message


def test_small_anchors_and_merge_keys_still_work() -> None:
    spec = squad_from_text(
        "name: x\nprocess: hierarchical\n"
        "agents:\n  - &base {id: a, role: helper}\n  - {<<: *base, id: b}\n"
    )
    assert [(a.id, a.role) for a in spec.agents] == [("a", "helper"), ("b", "helper")]


def test_multiple_documents_are_refused() -> None:
    assert "single document" in only_problem("name: x\n---\nname: y\n").message


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def file_problem(path: Path) -> Problem:
    with pytest.raises(ConfigError) as caught:
        squad_from_file(path)
    (problem,) = caught.value.problems
    assert problem.source == str(path)
    return problem


def test_non_utf8_bytes_are_located(tmp_path: Path) -> None:
    path = write(tmp_path, "latin1.yaml", b"name: x\ndescription: caf\xe9\n")
    problem = file_problem(path)
    assert "not valid UTF-8" in problem.message and "0xe9" in problem.message
    assert (problem.line, problem.column) == (2, 17)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bom.yaml",
        b"\xef\xbb\xbfname: x\nprocess: hierarchical\nagents: [{id: a, role: r}]\n",
    )
    assert squad_from_file(path).name == "x"


def test_file_over_one_mib_is_refused_before_parsing(tmp_path: Path) -> None:
    path = write(tmp_path, "big.yaml", b"name: x\n" + b"# padding\n" * 110_000)
    problem = file_problem(path)
    assert "over the 1,048,576-byte limit" in problem.message


def test_missing_file_and_folder_are_reported(tmp_path: Path) -> None:
    assert "does not exist" in file_problem(tmp_path / "nope.yaml").message
    assert "is a directory" in file_problem(tmp_path).message
