"""The pictures on the pages the example squads produce (served by a real server): the run
timeline, the squad's task graph, the spend charts' axes and the memory pages' sections."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from tests.web.conftest import Served
from tests.web.test_pictures import SVG, classes
from tests.web.test_pictures import bars as task_bars


def picture(html: str, css: str) -> ET.Element:
    """The page's ``<svg class="... css ...">``, parsed (so it must be well-formed)."""
    found = re.search(r'<svg [^>]*class="[^"]*\b' + css + r"\b.*?</svg>", html, re.DOTALL)
    assert found, f"no {css} picture on the page"
    return ET.fromstring(found.group(0))


def test_the_paused_runs_timeline_shows_its_tasks_its_wait_and_its_critical_path(
    served: Served,
) -> None:
    run_id = served.paused_run()
    page = served.client.get(f"/runs/{run_id}")
    assert page.status_code == 200
    root = picture(page.text, "timeline")
    bars = task_bars(root)
    assert set(bars) == {"outline", "draft", "review"}  # publish has not started: it waits
    assert all("done" in classes(b) for b in bars.values())
    critical = {task for task, bar in bars.items() if "critical" in classes(bar)}
    assert critical == {"outline", "draft", "review"}  # the definition's chain
    waits = [
        r
        for r in root.iter(f"{SVG}rect")
        if "wait" in classes(r) and r.find(f"{SVG}title") is not None
    ]
    assert [w.findtext(f"{SVG}title", "").split(" waited")[0] for w in waits] == ["publish"]
    lanes = [
        t.findtext(f"{SVG}title") for t in root.iter(f"{SVG}text") if "lane-label" in classes(t)
    ]
    assert lanes == ["outline", "draft", "review", "publish"]
    # the table keeps the exact figures, below the picture
    assert page.text.index('id="run-picture"') < page.text.index('id="tasks"')
    # the fragment htmx refreshes carries the picture too
    fragment = served.client.get(f"/runs/{run_id}", headers={"HX-Request": "true"})
    assert 'class="picture timeline"' in fragment.text and "<html" not in fragment.text


def test_a_planned_runs_timeline_follows_the_plans_dependencies(served: Served) -> None:
    run = served.app.store.list_runs("code-review")[0]
    page = served.client.get(f"/runs/{run.id}")
    root = picture(page.text, "timeline")
    bars = task_bars(root)
    planned = [t.task_id for t in served.app.store.run_state.tasks(run.id)]
    assert set(bars) == set(planned) and planned
    critical = [task for task in planned if "critical" in classes(bars[task])]
    assert critical, "some chain of the plan is the critical path"


def test_the_squad_page_draws_the_definitions_task_graph(served: Served) -> None:
    page = served.client.get("/squads/docs-site")
    root = picture(page.text, "taskgraph")
    nodes = {g.get("data-task"): g for g in root.iter(f"{SVG}g") if "node" in classes(g)}
    assert list(nodes) == ["outline", "draft", "review", "publish"]
    assert [t.text for t in nodes["draft"].iter(f"{SVG}text")] == ["draft", "writer"]
    assert "approval" in classes(nodes["publish"])
    edges = sorted(
        p.findtext(f"{SVG}title", "") for p in root.iter(f"{SVG}path") if "edge" in classes(p)
    )
    assert edges == [
        "draft waits for outline",
        "publish waits for review",
        "review waits for draft",
    ]
    assert "from the definition" in page.text


def test_a_hierarchical_squads_page_draws_its_last_plan(served: Served) -> None:
    page = served.client.get("/squads/code-review")
    root = picture(page.text, "taskgraph")
    nodes = [g.get("data-task") for g in root.iter(f"{SVG}g") if "node" in classes(g)]
    run = served.app.store.list_runs("code-review")[0]
    assert nodes == [t.task_id for t in served.app.store.run_state.tasks(run.id)]
    assert "from the lead's last plan" in page.text


def test_the_spend_charts_have_a_title_a_value_axis_and_labels_under_the_bars(
    served: Served,
) -> None:
    page = served.client.get("/spend")
    assert page.status_code == 200
    charts = re.findall(r'<svg [^>]*class="chart picture".*?</svg>', page.text, re.DOTALL)
    assert charts
    for svg in charts:
        root = ET.fromstring(svg)
        titles = [t.text for t in root.iter(f"{SVG}text") if "chart-title" in classes(t)]
        assert titles and titles[0] in ("Spend per day (US dollars)", "Tokens per run (in and out)")
        ticks = [t.text for t in root.iter(f"{SVG}text") if "tick-label" in classes(t)]
        assert ticks[0] in ("0", "$0"), ticks
        assert len(ticks) >= 3


def test_the_memory_pages_fold_their_sections_with_counts_and_offer_a_filter(
    served: Served,
) -> None:
    page = served.client.get("/memory")
    folds = re.findall(r'<details class="fold" id="([a-z-]+)"( open)?>', page.text)
    assert folds == [
        ("agents-fold", " open"),
        ("namespaces-fold", " open"),
        ("decisions-fold", ""),
        ("boot-fold", ""),
        ("passes-fold", ""),
    ]
    assert '<span class="count">3 files</span>' in page.text  # SOUL, USER, AGENTS
    assert 'data-filter="main details.fold"' in page.text

    agent = served.client.get("/squads/docs-site/agents/writer")
    sections = re.findall(
        r'<details class="mem-section fold"( open)?><summary><h3>(.*?)</h3>'
        r'<span class="count">(\d+) lines?</span>',
        agent.text,
    )
    assert len(sections) >= 3
    assert [opened for opened, _, _ in sections][:3] == [" open", " open", ""]
    assert 'id="memory-filter"' in agent.text
