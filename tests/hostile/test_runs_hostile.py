"""Runs under abuse: two at once, a kill -9, an error or a hang-up mid-run. Whatever happens,
a run is never left `running` after its process is gone, and `squad status` says what is true.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.pool import NullPool

from squad import flock
from squad.app import App
from squad.errors import SquadBusy, StoreError
from squad.model import ChatModel, OfflineModel
from squad.model.stub_answers import answer, slow
from squad.model.testing import FREE_PRICES, FunctionModel, OpenAIStubServer
from squad.model.types import Message, ModelReply, Price, ToolSpec
from squad.runtime.runlock import lock_path, settle_dead_runs
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec
from squad.store import RunStatus
from tests.cli.test_cli import SQUAD, Cli
from tests.conftest import BASIC_YAML
from tests.support.cli import run_in_process

WAIT = 60.0


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


def slow_squad(cli: Cli, stub: OpenAIStubServer) -> Path:
    folder = cli.tmp / "configs" / "squads"  # where `squad status` finds its squads
    folder.mkdir(parents=True, exist_ok=True)
    definition = folder / "slow.yaml"
    definition.write_text(
        "name: slow\n"
        f"model: {{name: openai/stub-model, api_base: '{stub.url}', api_key_env: STUB_KEY,"
        f" {FREE_PRICES}}}\n"
        "agents: [{id: writer, role: Writes}]\n"
        "tasks:\n"
        "  - {id: outline, description: Outline it., agent: writer}\n"
        "  - {id: draft, description: Draft it., agent: writer, depends_on: [outline]}\n"
    )
    cli.env["STUB_KEY"] = "test-key"
    return definition


def start_run(cli: Cli, definition: Path, stub: OpenAIStubServer) -> subprocess.Popen[str]:
    """A `squad run` in the background, returned once its first model call is in flight."""
    process = subprocess.Popen(
        [str(SQUAD), "run", str(definition), "--json"],
        env=cli.env,
        cwd=cli.tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + WAIT
    while not stub.requests:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr
        time.sleep(0.05)
    return process


def last_run(cli: Cli, squad: str) -> dict[str, Any]:
    status = cli.json("status")
    assert isinstance(status, dict)
    [entry] = [s for s in status["squads"] if s["name"] == squad]
    assert entry["last_run"] is not None, status
    return dict(entry["last_run"])


# -- two runs of one squad ---------------------------------------------------------------------


@pytest.mark.slow
def test_a_second_squad_run_of_a_running_squad_is_refused_with_the_run_it_collides_with(
    cli: Cli, stub: OpenAIStubServer
) -> None:
    stub.script(slow(3.0, answer("The outline.")), answer("The draft."))
    definition = slow_squad(cli, stub)
    first = start_run(cli, definition, stub)
    try:
        # In process: a second `squad` process could take longer to start than the first's
        # three-second model call on a loaded machine, and find the squad free again.
        second = run_in_process(["run", str(definition)], env=cli.env, cwd=cli.tmp)
    finally:
        out, err = first.communicate(timeout=WAIT)
    assert first.returncode == 0, err
    run_id = json.loads(out)["run_id"]
    assert second.returncode == 2, second.stderr
    assert f"squad 'slow' is already running (run {run_id}" in second.stderr
    assert "Traceback" not in second.stderr
    assert len(stub.requests) == 2  # the refused run asked the model nothing
    from squad.store import Store

    with Store.open(f"sqlite:///{cli.home / 'squad.db'}") as store:
        assert [r.id for r in store.list_runs("slow")] == [run_id]  # the refused one left none


def test_a_run_is_refused_while_another_process_holds_the_squad(
    settings: Settings, app: App
) -> None:
    spec = squad_from_text(BASIC_YAML, source="demo.yaml")
    manager = app.squads
    workspace = manager.create(spec).path
    note = json.dumps({"run_id": "elsewhere-123", "pid": 4242, "since": "2026-12-01T10:00"})
    held = flock.acquire(lock_path(settings.locks_dir, "demo"), note)
    try:
        with pytest.raises(SquadBusy) as caught:
            app.runner().run(spec, workspace)
    finally:
        held.release()
    assert caught.value.run_id == "elsewhere-123"
    assert "run elsewhere-123, pid 4242" in str(caught.value)
    assert manager.store.list_runs("demo") == []  # nothing half-made
    assert app.runner().run(spec, workspace).succeeded  # free again once released


# -- a run whose process died ------------------------------------------------------------------


@pytest.mark.slow
def test_a_run_killed_with_sigkill_shows_as_interrupted_and_resumable(
    cli: Cli, stub: OpenAIStubServer
) -> None:
    stub.script(slow(30.0, answer("too late")))
    definition = slow_squad(cli, stub)
    process = start_run(cli, definition, stub)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=WAIT)

    run = last_run(cli, "slow")

    assert run["status"] == "interrupted"
    assert "its process ended before the run finished" in run["error"]
    assert f"squad resume {run['id']}" in run["error"]
    stub.script(answer("The outline."), answer("The draft."))
    resumed = cli("resume", run["id"], "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["tasks"] == {"outline": "done", "draft": "done"}


def test_a_live_run_is_not_settled_and_a_dead_one_of_the_same_squad_is(
    settings: Settings, app: App
) -> None:
    spec = squad_from_text(BASIC_YAML, source="demo.yaml")
    manager = app.squads
    manager.create(spec)
    store = manager.store
    dead = store.create_run("demo")
    store.update_run(dead.id, status=RunStatus.RUNNING)
    live = store.create_run("demo")
    store.update_run(live.id, status=RunStatus.RUNNING)
    note = json.dumps({"run_id": live.id, "pid": 1, "since": "x"})
    with flock.acquire(lock_path(settings.locks_dir, "demo"), note):
        settled = settle_dead_runs(store, settings.locks_dir)
        assert [r.id for r in settled] == [dead.id]
        assert store.get_run(live.id).status is RunStatus.RUNNING  # type: ignore[union-attr]
    assert [r.id for r in settle_dead_runs(store, settings.locks_dir)] == [live.id]


def test_settling_never_overwrites_a_run_that_ended_meanwhile(settings: Settings, app: App) -> None:
    spec = squad_from_text(BASIC_YAML, source="demo.yaml")
    manager = app.squads
    manager.create(spec)
    store = manager.store
    run = store.create_run("demo")
    store.update_run(run.id, status=RunStatus.SUCCEEDED)
    kept = store.update_run(
        run.id, status=RunStatus.INTERRUPTED, error="x", only_if=RunStatus.RUNNING
    )
    assert kept.status is RunStatus.SUCCEEDED and kept.error is None


def explode(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelReply:
    """A model call raising what no handler expects (a bug, a half-imported library)."""
    raise AttributeError("partially initialized module 'litellm' has no attribute 'x'")


def test_an_unexpected_error_mid_run_leaves_it_interrupted_not_running(
    settings: Settings, app: App
) -> None:
    spec = squad_from_text(BASIC_YAML, source="demo.yaml")

    def explodes(_spec: ModelSpec, _on_event: Any) -> ChatModel:
        return FunctionModel(explode)

    manager = app.squads
    workspace = manager.create(spec).path
    with pytest.raises(AttributeError):
        app.runner(model_factory=explodes).run(spec, workspace)
    [run] = manager.store.list_runs("demo")
    assert run.status is RunStatus.INTERRUPTED
    assert run.error is not None and "partially initialized module" in run.error
    assert f"squad resume {run.id}" in run.error


# -- hang-ups ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_sighup_to_a_squad_run_stops_it_gracefully_at_its_checkpoint(
    cli: Cli, stub: OpenAIStubServer
) -> None:
    stub.script(slow(2.0, answer("The outline.")), answer("The draft."))
    definition = slow_squad(cli, stub)
    process = start_run(cli, definition, stub)
    process.send_signal(signal.SIGHUP)
    out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 1, err
    assert json.loads(out)["status"] == "interrupted"
    assert last_run(cli, "slow")["status"] == "interrupted"


@pytest.mark.slow
def test_sighup_makes_the_daemon_reload_and_it_keeps_running(cli: Cli) -> None:
    configs = cli.tmp / "configs" / "squads"
    configs.mkdir(parents=True)
    (configs / "a.yaml").write_text(BASIC_YAML.replace("name: demo", "name: alpha"))
    process = subprocess.Popen(
        [str(SQUAD), "daemon"],
        env=cli.env,
        cwd=cli.tmp,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = cli.home / "daemon.jsonl"

    def logged(kind: str) -> list[dict[str, Any]]:
        if not log.exists():
            return []
        lines = log.read_text().splitlines()
        return [e for e in map(json.loads, filter(None, lines)) if e["event"] == kind]

    try:
        deadline = time.monotonic() + WAIT
        while not logged("ready"):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        (configs / "b.yaml").write_text(BASIC_YAML.replace("name: demo", "name: beta"))
        process.send_signal(signal.SIGHUP)
        while not logged("reload"):
            assert time.monotonic() < deadline and process.poll() is None, "daemon died"
            time.sleep(0.05)
        assert process.poll() is None
        assert logged("reload")[0]["reason"] == "SIGHUP"
        while "beta" not in {e.get("squad") for e in logged("schedule")}:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=WAIT)
    assert process.returncode == 0, err
    assert logged("stop")[0]["reason"] == "SIGTERM"


# -- the database goes away ------------------------------------------------------------------


def _on_postgres(url: str, tmp_path: Path) -> Settings:
    return Settings.load(
        {
            "SQUAD_HOME": str(tmp_path / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "workspaces"),
            "SQUAD_CONFIGS": str(tmp_path / "configs"),
            "SQUAD_DATABASE_URL": url,
        },
        cwd=tmp_path,
    )


class DropsTheDatabase:
    """The offline model, except that on its ``on``-th call every other connection to the
    database is terminated first (as a restarted or failed-over server does); with
    ``refuse`` the database also stops accepting connections until :meth:`allow`."""

    def __init__(self, admin: Engine, on: int, *, refuse: bool = False) -> None:
        self._admin = admin
        self._on = on
        self._refuse = refuse
        self.calls = 0
        self._inner = OfflineModel()

    def _allow_connections(self, allowed: bool) -> None:
        database = self._admin.url.database
        other = self._admin.url.set(database="postgres")
        engine = create_engine(other, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as connection:
                connection.execute(
                    text(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS {str(allowed).lower()}')
                )
        finally:
            engine.dispose()

    def allow(self) -> None:
        if self._refuse:
            self._allow_connections(True)

    def price(self) -> Price:
        return self._inner.price()

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        return self._inner.reserve_usd(messages, tools)

    def complete(self, messages: Sequence[Any], **kwargs: Any) -> ModelReply:
        self.calls += 1
        if self.calls == self._on:
            if self._refuse:
                self._allow_connections(False)
            other = self._admin.url.set(database="postgres")
            engine = create_engine(other, poolclass=NullPool)
            try:
                with engine.connect() as connection:
                    connection.execute(
                        text(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = :name AND pid <> pg_backend_pid()"
                        ),
                        {"name": self._admin.url.database},
                    )
            finally:
                engine.dispose()
        return self._inner.complete(messages, **kwargs)


@pytest.mark.postgres
def test_database_connections_dropped_mid_run_are_replaced_and_the_run_goes_on(
    postgres_admin: Engine, fresh_schema: str, tmp_path: Path
) -> None:
    settings = _on_postgres(fresh_schema, tmp_path)
    spec = squad_from_text(BASIC_YAML, source="demo.yaml")
    dropper = DropsTheDatabase(postgres_admin, on=2)
    with App.open(settings) as app:
        workspace = app.squads.create(spec).path
        result = app.runner(model_factory=lambda _spec, _on: dropper).run(spec, workspace)
        assert result.succeeded
        assert dropper.calls == 2  # the restart cost no task a second model call


@pytest.mark.postgres
def test_a_database_lost_mid_run_stops_it_resumably_without_a_traceback(
    postgres_admin: Engine, fresh_schema: str, tmp_path: Path
) -> None:
    settings = _on_postgres(fresh_schema, tmp_path)
    spec = squad_from_text(BASIC_YAML, source="demo.yaml")
    dropper = DropsTheDatabase(postgres_admin, on=2, refuse=True)
    with App.open(settings) as app:
        workspace = app.squads.create(spec).path
        try:
            with pytest.raises(StoreError) as caught:
                app.runner(model_factory=lambda _spec, _on: dropper).run(spec, workspace)
        finally:
            dropper.allow()
    assert "squad resume" in str(caught.value) or "state database" in str(caught.value)
    with App.open(settings) as app:
        run_id = app.store.list_runs("demo", limit=1)[0].id
        settle_dead_runs(app.store, settings.locks_dir)
        run = app.store.get_run(run_id)
        assert run is not None and run.status is RunStatus.INTERRUPTED
        result = app.runner().resume(run_id)
        assert result.succeeded
        outline = app.store.conversation.messages("demo", "planner")
        assert [m.role.value for m in outline] == ["user", "assistant"]  # not redone


@pytest.mark.slow
def test_a_run_that_exits_2_mid_run_is_left_interrupted_not_running(cli: Cli) -> None:
    folder = cli.tmp / "configs" / "squads"
    folder.mkdir(parents=True)
    definition = folder / "demo.yaml"
    definition.write_text(BASIC_YAML)
    assert cli("create", definition).returncode == 0
    memory = cli.workspaces / "demo" / "agents" / "writer" / "memory.md"
    memory.unlink()
    memory.mkdir()  # the writer's prompt cannot be built: its memory.md is a folder

    result = cli("run", "demo")

    assert result.returncode == 2, result.stderr
    assert "memory.md" in result.stderr and "Traceback" not in result.stderr
    run = last_run(cli, "demo")
    assert run["status"] == "interrupted"
    assert f"squad resume {run['id']}" in run["error"]
    again = cli("run", "demo")  # a later run says it is resumable, and runs
    assert f"note: run {run['id']} was interrupted" in again.stderr
