"""``process``: the process type as a string, or a mapping that also sets ``strict_plan``."""

from __future__ import annotations

from squad.spec.loader import squad_from_dict, squad_from_text
from squad.spec.models import ProcessSpec

AGENTS = "agents:\n  - {id: a, role: r}\n"


def test_the_process_type_alone_and_the_mapping_read_the_same() -> None:
    short = squad_from_text("name: x\nprocess: hierarchical\n" + AGENTS)
    mapping = squad_from_text("name: x\nprocess: {type: hierarchical}\n" + AGENTS)
    assert short.process == mapping.process == ProcessSpec(type="hierarchical")
    assert short.process.strict_plan is False


def test_a_squad_without_process_is_sequential_and_plans_leniently() -> None:
    spec = squad_from_text("name: x\n" + AGENTS + "tasks: [{id: t, description: d, agent: a}]\n")
    assert spec.process == ProcessSpec(type="sequential", strict_plan=False)


def test_a_definition_stores_the_plain_type_unless_strict_plan_is_set() -> None:
    plain = squad_from_text("name: x\nprocess: hierarchical\n" + AGENTS)
    strict = squad_from_text("name: x\nprocess: {type: hierarchical, strict_plan: true}\n" + AGENTS)
    assert plain.model_dump(mode="json")["process"] == "hierarchical"  # as manifests held it
    assert strict.model_dump(mode="json")["process"] == {
        "type": "hierarchical",
        "strict_plan": True,
    }
    for spec in (plain, strict):
        assert squad_from_dict(spec.model_dump(mode="json")) == spec
