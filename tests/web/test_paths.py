"""Every route that takes a workspace path in its query, against the real server, given a
path no file can have: a NUL byte is a 400 saying so, never a 500 with a traceback."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute

from squad.web.app import create_app
from tests.web.conftest import Served

NUL_PATHS = ("\x00", "agents/\x00/memory.md", "README.md\x00.png")


def _flat(routes: list[Any]) -> Iterator[Any]:
    """The routes, those of included routers too (FastAPI keeps an included router whole,
    the routers here are included without a prefix)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        yield from _flat(included.routes) if included is not None else [route]


def routes_taking_a_path(served: Served) -> list[str]:
    """The URL of each GET route with a ``path`` query parameter, its path parameters filled
    with the example squads' names and a run of docs-site."""
    web = create_app(served.app, served.control, token="unused").app
    values = {"squad": "docs-site", "run_id": served.paused_run(), "agent": "reviewer"}
    found = []
    for route in _flat(web.routes):  # type: ignore[attr-defined]
        if not isinstance(route, APIRoute) or "GET" not in (route.methods or ()):
            continue
        if "path" not in {p.name for p in route.dependant.query_params}:
            continue
        found.append(re.sub(r"\{(\w+)\}", lambda m: values[m[1]], route.path))
    return found


def test_the_routes_taking_a_path_are_the_ones_this_file_knows(served: Served) -> None:
    """A new route with a path parameter comes under the test below by itself; this pins
    that the enumeration finds the known ones, so the test below cannot pass on none."""
    urls = {re.sub(r"/runs/[^/]+/", "/runs/RUN/", u) for u in routes_taking_a_path(served)}
    assert urls >= {
        "/api/v1/squads/docs-site/files",
        "/api/v1/squads/docs-site/file",
        "/api/v1/runs/RUN/diff",
        "/squads/docs-site/files",
        "/squads/docs-site/preview",
        "/runs/RUN/diff",
    }


def get(served: Served, url: str, path: str, **headers: str) -> httpx.Response:
    """The answer, or a 599 standing for a connection the server dropped."""
    try:
        return served.client.get(url, params={"path": path}, headers=headers)
    except httpx.TransportError as exc:
        return httpx.Response(599, text=f"no answer: {exc!r}")


@pytest.mark.parametrize("path", NUL_PATHS)
def test_a_nul_byte_in_a_path_is_400_naming_it_on_every_route(served: Served, path: str) -> None:
    answers = {}
    for url in routes_taking_a_path(served):
        api = get(served, url, path)
        page = get(served, url, path, Accept="text/html")
        answers[url] = (api.status_code, page.status_code, "NUL" in api.text, api.text[:300])
    wrong = {url: a for url, a in answers.items() if a[:3] != (400, 400, True)}
    assert not wrong, "\n".join(f"{url}: {a[:3]} {a[3][:120]!r}" for url, a in wrong.items())
    assert not any("Traceback" in a[3] for a in answers.values())
