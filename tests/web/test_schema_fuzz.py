"""Property-based tests of the whole JSON API with schemathesis, against the real server:
no request the schema allows, nor one it forbids, makes the server fail, and every answer
matches what the schema says of it (status documented, content type, body shape).

One test per operation, listed from the routers themselves so a new route is fuzzed without
anyone remembering to add it. The live run log (a stream that stays open on a paused run) and
"run now" (it starts runs) are left out; the other actions may change only this module's own
example home (a random id names nothing, a stale version writes nothing).

schemathesis' own pytest plugin (``from_fixture`` + ``parametrize``) does not work with
pytest 9 yet, so each test drives the operation's strategy with Hypothesis directly.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance
from schemathesis.specs.openapi.schemas import OpenApiSchema

from squad.web import actions, api, files_api, handoff, stream
from tests.web.conftest import Served

MAX_EXAMPLES = int(os.environ.get("SQUAD_FUZZ_EXAMPLES", "25"))
"""Per operation and kind of data (valid, invalid); SQUAD_FUZZ_EXAMPLES=500 hunts longer,
SQUAD_FUZZ_RANDOM=1 draws new examples instead of the same ones every run."""
SKIPPED = frozenset(
    {("GET", "/api/v1/runs/{run_id}/events"), ("POST", "/api/v1/squads/{squad}/runs")}
)


def _operations() -> list[tuple[str, str, bool]]:
    """Each (method, path, whether it takes any input) of the JSON API's routers."""
    found = set()
    for router in (api.router, files_api.router, actions.router, handoff.router, stream.router):
        for route in router.routes:
            dependant = getattr(route, "dependant", None)
            takes = dependant is not None and bool(
                dependant.path_params or dependant.query_params or dependant.body_params
            )
            for method in getattr(route, "methods", ()):
                if method != "HEAD" and (method, route.path) not in SKIPPED:
                    found.add((method, route.path, takes))
    return sorted(found, key=lambda op: (op[1], op[0]))


OPERATIONS = _operations()
CASES = [
    (method, path, mode)
    for method, path, takes in OPERATIONS
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if takes or mode is GenerationMode.POSITIVE  # nothing to get wrong in a request without input
]
REGEX_SEARCHES = frozenset({"/api/v1/squads/{squad}/search", "/api/v1/memory/search"})
"""``regex=true`` with a pattern that does not compile is a 422 the schema cannot express."""


@pytest.fixture(scope="module")
def api_schema(served: Served) -> OpenApiSchema:
    return schemathesis.openapi.from_url(
        f"{served.url}api/v1/openapi.json",
        headers={"Authorization": f"Bearer {served.token}"},
        timeout=30,
    )


def test_every_operation_of_the_schema_is_fuzzed_or_deliberately_skipped(
    api_schema: OpenApiSchema,
) -> None:
    in_schema = set()
    for result in api_schema.get_all_operations():
        operation = result.ok()
        in_schema.add((operation.method.upper(), operation.path))
    assert in_schema == {(method, path) for method, path, _ in OPERATIONS} | SKIPPED


@pytest.mark.parametrize(
    ("method", "path", "mode"), CASES, ids=[f"{m} {p} {mode.value}" for m, p, mode in CASES]
)
def test_operation_never_fails_and_answers_as_its_schema_says(
    api_schema: OpenApiSchema, served: Served, method: str, path: str, mode: GenerationMode
) -> None:
    operation = api_schema[path][method]
    headers = {"Authorization": f"Bearer {served.token}"}
    excluded = [positive_data_acceptance] if path in REGEX_SEARCHES else []

    @given(case=operation.as_strategy(mode))
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=os.environ.get("SQUAD_FUZZ_RANDOM") != "1",
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=headers, excluded_checks=excluded, timeout=30)

    check()
