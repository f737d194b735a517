"""The squad page's picture: its task graph, server-drawn SVG (pure).

Tasks are placed in layers by the longest chain of dependencies before them (a task sits one
layer below the deepest task it waits for), drawn top to bottom so a phone shows them without
shrinking; each node says its task id and agent, each arrow goes from a task to one that
waits for it. Within a layer, tasks are ordered by where the tasks they wait for sit, which
keeps most arrows from crossing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from squad.web.svg import Words, esc, short

__all__ = ["GraphNode", "graph_svg", "layer_order", "layers"]

NODE_W = 168
NODE_H = 44
GAP_X = 22
GAP_Y = 40
PAD = 12


@dataclass(frozen=True)
class GraphNode:
    """A task in the graph: its id, its agent, the tasks it waits for, whether a person
    approves it first."""

    id: str
    agent: str
    depends_on: tuple[str, ...] = ()
    approval: bool = False


def layers(deps: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Longest-path layering: 0 for a task that waits for nothing, else one more than the
    deepest task it waits for. Unknown dependencies are ignored; a cycle is cut where it
    closes, so every task gets a layer."""
    placed: dict[str, int] = {}

    def depth(task: str, visiting: frozenset[str]) -> int:
        if task in placed:
            return placed[task]
        below = [
            depth(dep, visiting | {task})
            for dep in deps.get(task, ())
            if dep in deps and dep not in visiting and dep != task
        ]
        placed[task] = 1 + max(below) if below else 0
        return placed[task]

    for task in deps:
        depth(task, frozenset())
    return placed


def layer_order(deps: Mapping[str, Sequence[str]], layer_of: Mapping[str, int]) -> list[list[str]]:
    """The tasks of each layer, left to right: the first layer as written, each next one by
    the mean position of the tasks it waits for (ties as written)."""
    written = {task: index for index, task in enumerate(deps)}
    count = max(layer_of.values(), default=-1) + 1
    rows: list[list[str]] = [[] for _ in range(count)]
    for task in deps:
        rows[layer_of[task]].append(task)
    position: dict[str, float] = {}
    for row in rows:

        def key(task: str) -> tuple[float, int]:
            seen = [position[d] for d in deps.get(task, ()) if d in position]
            return (sum(seen) / len(seen) if seen else -1.0, written[task])

        row.sort(key=key)
        for index, task in enumerate(row):
            position[task] = index - (len(row) - 1) / 2
    return rows


def graph_svg(nodes: Sequence[GraphNode], *, words: Words) -> str:
    """The task graph: every id and agent escaped, sized by its ``viewBox``."""
    deps = {node.id: tuple(node.depends_on) for node in nodes}
    rows = layer_order(deps, layers(deps))
    widest = max((len(row) for row in rows), default=1)
    depth_of = {task: depth for depth, row in enumerate(rows) for task in row}
    skipping = sum(
        1
        for node in nodes
        for dep in dict.fromkeys(node.depends_on)
        if dep in depth_of and depth_of[node.id] - depth_of[dep] > 1
    )
    body = PAD * 2 + widest * NODE_W + (widest - 1) * GAP_X
    width = body + (10 + 6 * skipping if skipping else 0)  # room for arrows round the side
    height = PAD * 2 + len(rows) * NODE_H + max(0, len(rows) - 1) * GAP_Y
    where: dict[str, tuple[float, float]] = {}
    for depth, row in enumerate(rows):
        row_w = len(row) * NODE_W + (len(row) - 1) * GAP_X
        left = (body - row_w) / 2
        for index, task in enumerate(row):
            where[task] = (left + index * (NODE_W + GAP_X), PAD + depth * (NODE_H + GAP_Y))
    title = words("Task graph: each arrow goes from a task to one that waits for it")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="picture taskgraph" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        f'role="img" aria-labelledby="taskgraph-title"><title id="taskgraph-title">'
        f"{esc(title)}</title>"
        '<defs><marker id="taskgraph-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z"></path></marker></defs>'
    ]
    lane = 0
    for node in nodes:
        tx, ty = where[node.id]
        for dep in dict.fromkeys(node.depends_on):
            if dep not in where or dep == node.id:
                continue
            fx, fy = where[dep]
            x1, y1 = fx + NODE_W / 2, fy + NODE_H
            x2, y2 = tx + NODE_W / 2, ty
            if y2 <= y1:  # a cycle drawn anyway: up the side
                continue
            if y2 - y1 > GAP_Y + 1:  # past a layer: round the nodes between, on the right
                lane += 1
                side = body - PAD + 4 + 6 * lane  # right of every node
                a, b = y1 + GAP_Y / 2, y2 - GAP_Y / 2
                # out of the node, along the gap to the side, down the side, in from above
                d = (
                    f"M{x1:.1f},{y1:.1f} C{x1:.1f},{a:.1f} {side:.1f},{y1:.1f} {side:.1f},{a:.1f} "
                    f"L{side:.1f},{b:.1f} C{side:.1f},{y2:.1f} {x2:.1f},{b:.1f} {x2:.1f},{y2:.1f}"
                )
            else:
                mid = (y1 + y2) / 2
                d = f"M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}"
            said = words("{task} waits for {dependency}", task=node.id, dependency=dep)
            out.append(
                f'<path class="edge" d="{d}" marker-end="url(#taskgraph-arrow)">'
                f"<title>{esc(said)}</title></path>"
            )
    for node in nodes:
        nx, ny = where[node.id]
        said = words("{task} by {agent}", task=node.id, agent=node.agent or "?")
        if node.approval:
            said = " · ".join((said, words("waits for approval first")))
        css = "node approval" if node.approval else "node"
        out.append(
            f'<g class="{css}" data-task="{esc(node.id)}"><title>{esc(said)}</title>'
            f'<rect x="{nx:.1f}" y="{ny:.1f}" width="{NODE_W}" height="{NODE_H}" rx="6"></rect>'
            f'<text class="task-id" x="{nx + NODE_W / 2:.1f}" y="{ny + 18:.1f}" '
            f'text-anchor="middle">{esc(short(node.id, 22))}</text>'
            f'<text class="agent" x="{nx + NODE_W / 2:.1f}" y="{ny + 34:.1f}" '
            f'text-anchor="middle">{esc(short(node.agent, 24))}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)
