"""Checkpoint writes carry a cluster node's claim of the run and the database refuses them
once another node claimed it: checked in the checkpoint write's own transaction, against the
store's ``runs`` table beside the checkpoints (Postgres, which a cluster needs)."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest

from squad.checkpoints.base import Fence
from squad.checkpoints.postgres import PostgresCheckpoints
from squad.errors import RunFenced
from squad.store import Store
from tests.support.databases import MigratedSchema

pytestmark = pytest.mark.postgres


class State(TypedDict, total=False):
    done: list[str]


@pytest.fixture
def store_url(postgres_store: MigratedSchema) -> str:
    """Postgres only: checkpoint fencing is for clusters."""
    return postgres_store.empty()


def _graph(effects: list[str]) -> Any:
    from langgraph.graph import END, START, StateGraph

    def first(state: State) -> State:
        effects.append("first")
        return {"done": [*state.get("done", []), "first"]}

    def second(state: State) -> State:
        effects.append("second")
        return {"done": [*state.get("done", []), "second"]}

    graph = StateGraph(State)
    graph.add_node("first", first)
    graph.add_node("second", second)
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    graph.add_edge("second", END)
    return graph


def test_a_checkpoint_from_an_older_claim_of_the_run_is_refused(store_url: str) -> None:
    with Store.open(store_url) as store:
        store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256="0" * 64)
        run_id = store.create_run("docs", trigger="test", job="1").id
        old = store.run_state.claim(run_id, "frozen")
        config = {"configurable": {"thread_id": run_id}}
        checkpoints = PostgresCheckpoints(store_url)
        try:
            effects: list[str] = []
            with checkpoints.saver(Fence(run_id, old)) as saver:
                app = _graph(effects).compile(checkpointer=saver)
                app.invoke({"done": []}, config, durability="sync", interrupt_after=["first"])
                assert app.get_state(config).values == {"done": ["first"]}

                new = store.run_state.claim(run_id, "survivor")
                with pytest.raises(RunFenced) as refused:
                    app.invoke(None, config, durability="sync")
            assert refused.value.epoch == old
            assert effects == ["first", "second"]  # the step ran; its checkpoint did not land

            with checkpoints.saver(Fence(run_id, new)) as saver:
                app = _graph(effects).compile(checkpointer=saver)
                assert app.get_state(config).values == {"done": ["first"]}
                assert app.invoke(None, config, durability="sync") == {"done": ["first", "second"]}
        finally:
            checkpoints.close()
