"""The dashboard's pictures as pure functions: the run timeline and its critical path, the
squad's task graph and its layers, the axis arithmetic they share; each SVG parsed back."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

from squad.web.svg import Words, clock_label, duration_text, nice_ticks, time_step
from squad.web.taskgraph import NODE_W, GraphNode, graph_svg, layer_order, layers
from squad.web.timeline import (
    MAX_TASK_LANES,
    Span,
    approval_waits,
    critical_path,
    plan_graph,
    timeline_svg,
)

SVG = "{http://www.w3.org/2000/svg}"
T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
ODD_ID = "a<b>&\"c'"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # fails on anything not well-formed (an unescaped id)


def classes(element: ET.Element) -> set[str]:
    return set((element.get("class") or "").split())


def bars(root: ET.Element) -> dict[str, ET.Element]:
    """The task bars by task id (the legend's swatches have none)."""
    return {
        r.get("data-task", ""): r
        for r in root.iter(f"{SVG}rect")
        if "bar" in classes(r) and r.get("data-task") is not None
    }


# -- shared axis arithmetic ----------------------------------------------------------------


def test_nice_ticks_start_at_zero_end_at_or_above_the_top_in_round_steps() -> None:
    assert nice_ticks(4) == ([0, 1, 2, 3, 4], 0)
    assert nice_ticks(1234) == ([0, 500, 1000, 1500], 0)
    assert nice_ticks(0.25) == ([0, 0.1, 0.2, 0.3], 1)
    assert nice_ticks(0.0034) == ([0, 0.001, 0.002, 0.003, 0.004], 3)
    assert nice_ticks(9) == ([0, 2.5, 5, 7.5, 10], 1)
    assert nice_ticks(0) == ([0, 1], 0) and nice_ticks(float("nan")) == ([0, 1], 0)


def test_time_axis_steps_are_round_and_labels_read_like_a_clock() -> None:
    assert [time_step(s) for s in (4, 50, 200, 1000, 5000, 40000)] == [1, 10, 60, 300, 900, 7200]
    assert [clock_label(s) for s in (0, 45, 750, 3900)] == ["0:00", "0:45", "12:30", "1:05:00"]
    words = Words()
    assert duration_text(4.25, words) == "4.2 s"
    assert duration_text(42, words) == "42 s"
    assert duration_text(185, words) == "3 min 5 s"
    assert duration_text(7800, words) == "2 h 10 min"


# -- the critical path -----------------------------------------------------------------------


def test_the_critical_path_is_the_chain_whose_tasks_took_longest() -> None:
    durations = {"plan": 2.0, "build": 5.0, "docs": 1.0, "ship": 1.0}
    deps = {"build": ["plan"], "docs": ["plan"], "ship": ["build", "docs"]}
    assert critical_path(durations, deps) == ["plan", "build", "ship"]
    # a long task on its own beats a chain of short ones
    assert critical_path({"a": 1, "b": 1, "solo": 5}, {"b": ["a"]}) == ["solo"]


def test_the_critical_path_ignores_unknown_tasks_survives_a_cycle_and_may_be_empty() -> None:
    assert critical_path({}, {}) == []
    assert critical_path({"a": 1, "b": 2}, {"b": ["a", "ghost"]}) == ["a", "b"]
    cycle = critical_path({"a": 1, "b": 1, "c": 1}, {"a": ["c"], "b": ["a"], "c": ["b"]})
    assert len(cycle) == 3 and set(cycle) == {"a", "b", "c"}
    # among equal times the chain of more tasks wins: zero-length tasks still chain
    assert critical_path({"x": 0, "y": 0}, {"y": ["x"]}) == ["x", "y"]


# -- what the run log says ---------------------------------------------------------------------


def test_an_approval_wait_runs_from_its_pause_to_the_tasks_next_state_or_until() -> None:
    events = [
        {"event": "task_status", "node": "publish", "status": "pending", "time": at(0).isoformat()},
        {
            "event": "task_status",
            "node": "publish",
            "status": "awaiting_approval",
            "time": at(10).isoformat(),
        },
        {"event": "run_resume", "time": at(70).isoformat()},
        {"event": "node_start", "node": "publish", "time": at(72).isoformat()},
        {
            "event": "task_status",
            "node": "deploy",
            "status": "awaiting_approval",
            "time": at(90).isoformat(),
        },
        {"event": "task_status", "node": "x", "status": "awaiting_approval", "time": "garbage"},
    ]
    waits = approval_waits(events, until=at(100))
    assert waits == {"publish": [(at(10), at(72))], "deploy": [(at(90), at(100))]}


def test_the_last_plan_in_a_log_gives_its_tasks_agents_and_dependencies() -> None:
    events = [
        {"event": "plan_written", "graph": [{"id": "old", "agent": "dev", "depends_on": []}]},
        {"event": "node_start", "node": "old"},
        {
            "event": "plan_written",
            "graph": [
                {"id": "a", "agent": "dev", "depends_on": []},
                {"id": "b", "agent": "dev", "depends_on": ["a"]},
                "not a task",
            ],
        },
    ]
    assert plan_graph(events) == [("a", "dev", ()), ("b", "dev", ("a",))]
    assert plan_graph([{"event": "plan_written", "tasks": ["a"]}]) == []  # an older log
    assert plan_graph([]) == []


# -- the timeline --------------------------------------------------------------------------------


def test_the_timeline_draws_a_lane_per_task_bars_waits_the_critical_path_and_now() -> None:
    spans = [
        Span("outline", "planner", "done", at(0), at(20)),
        Span("draft", "writer", "done", at(20), at(80), depends_on=("outline",)),
        Span(ODD_ID, "reviewer", "failed", at(20), at(30), depends_on=("outline",)),
        Span(
            "publish",
            "writer",
            "running",
            at(150),
            None,
            depends_on=("draft",),
            waits=((at(80), at(150)),),
        ),
        Span("later", "writer", "pending", None, None),
    ]
    svg = timeline_svg(
        spans,
        origin=at(0),
        now=at(180),
        critical=["outline", "draft", "publish"],
        words=Words(),
    )
    root = parse(svg)
    assert root.get("viewBox", "").startswith("0 0 ")
    drawn = bars(root)
    assert set(drawn) == {"outline", "draft", ODD_ID, "publish"}  # nothing for a task not begun
    assert {t for t, r in drawn.items() if "critical" in classes(r)} == {
        "outline",
        "draft",
        "publish",
    }
    assert classes(drawn["publish"]) >= {"running", "open"}
    assert classes(drawn[ODD_ID]) >= {"failed"}
    assert drawn["draft"].findtext(f"{SVG}title") == "draft (writer): 1 min, done · critical path"
    assert drawn[ODD_ID].findtext(f"{SVG}title") == f"{ODD_ID} (reviewer): 10 s, failed"
    assert (
        drawn["publish"]
        .findtext(f"{SVG}title", "")
        .startswith("publish (writer): running for 30 s")
    )
    # bars scale with time: draft (60 s) is three times outline (20 s), and starts where it ends
    width = {t: float(r.get("width", 0)) for t, r in drawn.items()}
    assert abs(width["draft"] - 3 * width["outline"]) < 0.2
    assert (
        abs(
            float(drawn["draft"].get("x", 0))
            - float(drawn["outline"].get("x", 0))
            - width["outline"]
        )
        < 0.2
    )
    (wait,) = [
        r for r in root.iter(f"{SVG}rect") if "wait" in classes(r) and r.get("height") != "10"
    ]
    assert wait.findtext(f"{SVG}title") == "publish waited for approval: 1 min 10 s"
    lanes = [
        t.findtext(f"{SVG}title") for t in root.iter(f"{SVG}text") if "lane-label" in classes(t)
    ]
    assert lanes == ["outline", "draft", ODD_ID, "publish", "later"]
    ticks = [t.text for t in root.iter(f"{SVG}text") if "tick-label" in classes(t)]
    assert ticks == ["0:00", "0:30", "1:00", "1:30", "2:00", "2:30", "3:00"]
    assert [line for line in root.iter(f"{SVG}line") if "now" in classes(line)]
    assert any(t.text == "time since the run started (min:s)" for t in root.iter(f"{SVG}text"))


def test_a_phones_timeline_is_drawn_narrow_with_short_labels_and_a_wrapped_legend() -> None:
    spans = [Span("a-rather-long-task-name", "dev", "done", at(0), at(30))]
    wide = parse(
        timeline_svg(
            spans, origin=at(0), now=at(30), critical=["a-rather-long-task-name"], words=Words()
        )
    )
    narrow = parse(
        timeline_svg(
            spans,
            origin=at(0),
            now=at(30),
            critical=["a-rather-long-task-name"],
            words=Words(),
            width=360,
        )
    )
    assert narrow.get("viewBox", "").startswith("0 0 360 ")
    assert wide.get("viewBox", "").startswith("0 0 760 ")
    label = next(t for t in narrow.iter(f"{SVG}text") if "lane-label" in classes(t))
    assert label.findtext(f"{SVG}title") == "a-rather-long-task-name"
    assert "".join(label.itertext()).endswith("a-rather-l…")

    def legend_rows(root: ET.Element) -> set[str]:
        legend = next(g for g in root.iter(f"{SVG}g") if "legend" in classes(g))
        return {r.get("y", "") for r in legend.iter(f"{SVG}rect")}

    assert len(legend_rows(wide)) == 1 and len(legend_rows(narrow)) == 2
    # every bar stays inside the narrow picture
    (bar,) = bars(narrow).values()
    assert float(bar.get("x", 0)) + float(bar.get("width", 0)) <= 360


def test_a_finished_timeline_has_no_now_line_and_many_tasks_share_agent_lanes() -> None:
    spans = [
        Span(f"t{i}", f"agent-{i % 3}", "done", at(i * 10), at(i * 10 + 8))
        for i in range(MAX_TASK_LANES + 1)
    ]
    root = parse(timeline_svg(spans, origin=at(0), now=at(500), critical=[], words=Words()))
    lanes = [
        t.findtext(f"{SVG}title") for t in root.iter(f"{SVG}text") if "lane-label" in classes(t)
    ]
    assert lanes == ["agent-0", "agent-1", "agent-2"]
    assert len(bars(root)) == MAX_TASK_LANES + 1
    assert not [line for line in root.iter(f"{SVG}line") if "now" in classes(line)]


def test_a_picture_says_only_what_its_pages_translation_gave_it() -> None:
    said = Words(text=lambda source: f"«{source}»")
    svg = timeline_svg(
        [Span("a", "dev", "done", at(0), at(5), waits=((at(0), at(1)),))],
        origin=at(0),
        now=at(10),
        critical=["a"],
        words=said,
    )
    root = parse(svg)
    texts = [t.text for t in root.iter(f"{SVG}text") if t.text and "tick-label" not in classes(t)]
    titles = [t.text for t in root.iter(f"{SVG}title") if t.text and t.text != "a"]
    assert texts and titles
    assert all(text.startswith("«") for text in texts + titles), texts + titles
    graph = parse(graph_svg([GraphNode("a", "dev")], words=said))
    assert all(t.text.startswith("«") for t in graph.iter(f"{SVG}title") if t.text)


# -- the task graph ------------------------------------------------------------------------------


def test_longest_path_layering_puts_a_task_under_its_deepest_dependency() -> None:
    deps = {"a": [], "b": ["a"], "c": ["a", "b"], "d": [], "e": ["d", "ghost"], "f": ["c", "e"]}
    assert layers(deps) == {"a": 0, "b": 1, "c": 2, "d": 0, "e": 1, "f": 3}
    assert layers({"x": ["y"], "y": ["x"], "z": ["z"]}) in (
        {"x": 1, "y": 0, "z": 0},
        {"x": 0, "y": 1, "z": 0},
    )
    assert layers({}) == {}


def test_a_layer_is_ordered_under_the_tasks_it_waits_for() -> None:
    deps = {"left": [], "right": [], "under-right": ["right"], "under-left": ["left"]}
    assert layer_order(deps, layers(deps)) == [["left", "right"], ["under-left", "under-right"]]


def test_the_task_graph_draws_a_node_per_task_an_arrow_per_dependency_all_escaped() -> None:
    nodes = [
        GraphNode("outline", "planner"),
        GraphNode("draft", "writer", ("outline",)),
        GraphNode(ODD_ID, "reviewer", ("draft",)),
        GraphNode("publish", "writer", (ODD_ID, "outline", "ghost"), approval=True),
    ]
    root = parse(graph_svg(nodes, words=Words()))
    groups = {g.get("data-task"): g for g in root.iter(f"{SVG}g") if "node" in classes(g)}
    assert list(groups) == ["outline", "draft", ODD_ID, "publish"]
    assert classes(groups["publish"]) == {"node", "approval"}
    assert (
        groups["publish"].findtext(f"{SVG}title") == "publish by writer · waits for approval first"
    )
    assert [t.text for t in groups[ODD_ID].iter(f"{SVG}text")] == [ODD_ID, "reviewer"]
    edges = [p.findtext(f"{SVG}title") for p in root.iter(f"{SVG}path") if "edge" in classes(p)]
    assert sorted(edges) == sorted(
        [
            "draft waits for outline",
            f"{ODD_ID} waits for draft",
            f"publish waits for {ODD_ID}",
            "publish waits for outline",
        ]
    )
    assert all(
        p.get("marker-end") == "url(#taskgraph-arrow)"
        for p in root.iter(f"{SVG}path")
        if "edge" in classes(p)
    )
    # top to bottom, one task per layer here; the arrow past two layers fits in the picture
    ys = [float(g.find(f"{SVG}rect").get("y", 0)) for g in groups.values()]
    assert ys == sorted(ys) and len(set(ys)) == 4
    width = float(root.get("width", 0))
    assert width > NODE_W + 24
    for path in root.iter(f"{SVG}path"):
        if "edge" in classes(path):
            numbers = [
                float(n)
                for n in path.get("d", "")
                .replace("M", " ")
                .replace("C", " ")
                .replace("L", " ")
                .replace(",", " ")
                .split()
            ]
            assert max(numbers[0::2]) < width
