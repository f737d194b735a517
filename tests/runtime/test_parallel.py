"""Independent tasks run at once: a diamond squad (start -> b1..b4 -> finish) on the stub model
server, whose handler threads show what was in flight together.

Concurrency is proven by structure, not by timing: the four middle tasks' model calls meet at
a barrier in the stub server, which only opens when all four are in flight at once (run one by
one, it times out and the run fails). A kill in the middle of the parallel step, an approval
gate on one branch, the spend cap and memory writes under concurrency are each checked the
same way.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.model import ChatModel, LiteLLMModel, ModelEvent, RetryPolicy
from squad.model.factory import ModelFactory
from squad.model.stub_answers import answer, tool_call
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.runtime.runlog import read_events, run_log_path
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec, SquadSpec
from tests.support.child_env import child_env

FAST_RETRY = RetryPolicy(max_attempts=1, base_delay_s=0, jitter=0)
MIDDLE = ("b1", "b2", "b3", "b4")
TASK = re.compile(r"Task: Do step (\w+)\.")


def diamond(
    url: str,
    *,
    parallel: int = 4,
    gated: str | None = None,
    model: str | None = None,
    limits: str = "",
) -> str:
    model = (
        model or f"{{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {FREE_PRICES}}}"
    )
    tasks = ["  - {id: start, description: Do step start., agent: worker}"]
    for task in MIDDLE:
        approval = ", approval: true" if task == gated else ""
        tasks.append(
            f"  - {{id: {task}, description: Do step {task}., agent: worker,"
            f" depends_on: [start]{approval}}}"
        )
    tasks.append(
        "  - {id: finish, description: Do step finish., agent: worker,"
        " depends_on: [b1, b2, b3, b4]}"
    )
    return (
        "name: diamond\n"
        f"model: {model}\n"
        f"limits: {{max_parallel: {parallel}{limits}}}\n"
        "agents:\n"
        "  - {id: worker, role: Does one step}\n"
        "tasks:\n" + "\n".join(tasks) + "\n"
    )


def uneven(url: str) -> str:
    """start -> a1 -> a2 and start -> b1, then finish (after a2 and b1)."""
    model = f"{{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {FREE_PRICES}}}"
    steps = {"start": [], "a1": ["start"], "a2": ["a1"], "b1": ["start"], "finish": ["a2", "b1"]}
    tasks = [
        f"  - {{id: {t}, description: Do step {t}., agent: worker, depends_on: {deps}}}"
        for t, deps in steps.items()
    ]
    return (
        f"name: uneven\nmodel: {model}\nlimits: {{max_parallel: 4}}\n"
        "agents:\n  - {id: worker, role: Does one step}\ntasks:\n" + "\n".join(tasks) + "\n"
    )


def task_of(body: Any) -> str:
    users = [str(m["content"]) for m in body["messages"] if m.get("role") == "user"]
    found = TASK.search(users[-1])
    assert found, users[-1]
    return found.group(1)


class Stub:
    """A stub handler that counts what is in flight at once, by task."""

    def __init__(self, *, meet: int = 0, hold: float = 0.0) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0
        self.calls: Counter[str] = Counter()
        self.barrier = threading.Barrier(meet, timeout=30) if meet else None
        self.hold = hold

    def __call__(self, body: Any) -> Any:
        task = task_of(body)
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self.calls[task] += 1
        try:
            if task in MIDDLE and self.barrier is not None:
                self.barrier.wait()  # opens only with all four middle calls in flight
            if self.hold:
                time.sleep(self.hold)
        finally:
            with self.lock:
                self.in_flight -= 1
        return answer(f"Output of {task}.")


@pytest.fixture
def stub_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")


def models(api_base: str | None = None) -> ModelFactory:
    def make(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        if api_base is not None:
            spec = spec.model_copy(update={"api_base": api_base})
        return LiteLLMModel(spec, on_event=on_event, retry=FAST_RETRY, sleep=lambda _: None)

    return make


def create(app: App, text: str) -> tuple[SquadSpec, Path]:
    spec = squad_from_text(text, source="diamond.yaml")
    return spec, app.squads.create(spec).path


def test_the_four_middle_tasks_of_a_diamond_run_at_once(app: App, stub_key: None) -> None:
    handler = Stub(meet=4)
    with OpenAIStubServer(handler) as stub:
        spec, workspace = create(app, diamond(stub.url))
        result = app.runner(model_factory=models()).run(spec, workspace)
        finish_prompt = next(b for b in stub.bodies if task_of(b) == "finish")

    assert result.succeeded, result.error
    assert handler.most == 4 and handler.calls == Counter(
        dict.fromkeys(["start", *MIDDLE, "finish"], 1)
    )
    assert result.tasks == dict.fromkeys(["start", *MIDDLE, "finish"], "done")
    prompt = str(finish_prompt["messages"][-1]["content"])
    assert all(f"Output of {t}." in prompt for t in MIDDLE)  # it saw every branch's output
    log = read_events(run_log_path(workspace, result.run_id))
    calls = [e for e in log if e["event"] == "model_call"]
    assert sorted(e["task"] for e in calls) == sorted(["start", *MIDDLE, "finish"])
    for task in ("start", *MIDDLE, "finish"):
        assert (workspace / "tasks" / task / "output.md").read_text() == f"Output of {task}.\n"


def test_max_parallel_1_runs_one_task_at_a_time(app: App, stub_key: None) -> None:
    handler = Stub(hold=0.05)
    with OpenAIStubServer(handler) as stub:
        spec, workspace = create(app, diamond(stub.url, parallel=1))
        result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    assert handler.most == 1 and sum(handler.calls.values()) == 6


def test_an_approval_gate_pauses_its_branch_while_the_others_finish(
    app: App, stub_key: None
) -> None:
    handler = Stub()
    with OpenAIStubServer(handler) as stub:
        spec, workspace = create(app, diamond(stub.url, gated="b2"))
        runner = app.runner(model_factory=models())
        paused = runner.run(spec, workspace)

        assert paused.status == "awaiting_approval" and paused.awaiting == "b2"
        assert handler.calls == Counter(start=1, b1=1, b3=1, b4=1)
        assert {t: paused.tasks[t] for t in ("b1", "b3", "b4")} == dict.fromkeys(
            ("b1", "b3", "b4"), "done"
        )
        assert paused.tasks["finish"] == "pending"

        done = app.runner(model_factory=models()).approve(paused.run_id, "b2", approved=True)

    assert done.succeeded, done.error
    assert handler.calls == Counter(dict.fromkeys(["start", *MIDDLE, "finish"], 1))


def test_parallel_tasks_cannot_overspend_the_cap_together(app: App, stub_key: None) -> None:
    # Each call reserves 100 output tokens at $1 per 1,000 ($0.10) and costs that much: after
    # start's $0.10, a $0.25 cap has room for one more reservation, not four.
    with OpenAIStubServer(
        lambda body: answer("ok", prompt_tokens=10, completion_tokens=100)
    ) as stub:
        model = (
            f"{{name: openai/stub, api_base: '{stub.url}', api_key_env: STUB_KEY,"
            " max_tokens: 100, cost_per_1k_input: 0, cost_per_1k_output: 1.0}"
        )
        spec, workspace = create(app, diamond(stub.url, model=model, limits=", max_cost_usd: 0.25"))
        result = app.runner(model_factory=models()).run(spec, workspace)
        requests = len(stub.requests)

    assert result.status == "stopped"
    assert result.error is not None and "$0.25 cap" in result.error
    assert requests == 2
    assert result.cost_usd == pytest.approx(0.2) and result.cost_usd <= 0.25
    assert app.store.spend.of_squad("diamond").cost_usd <= 0.25


def test_memory_written_by_tasks_running_at_once_all_lands(app: App, stub_key: None) -> None:
    def handler(body: Any) -> Any:
        task = task_of(body)
        if body["messages"][-1].get("role") == "tool":
            return answer(f"Output of {task}.")
        return tool_call(
            "memory_append", {"section": "Insights", "text": f"- learnt in {task}"}, call_id=task
        )

    with OpenAIStubServer(handler) as stub:
        spec, workspace = create(app, diamond(stub.url))
        result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    memory = (workspace / "agents" / "worker" / "memory.md").read_text()
    for task in ("start", *MIDDLE, "finish"):
        assert memory.count(f"- learnt in {task}") == 1, memory
    stored = app.store.conversation.messages("diamond", "worker")
    assert sum(m.role.value == "assistant" for m in stored) == 6


CHILD = """\
import sys
from squad.app import App
from squad.settings import Settings

with App.open(Settings.load()) as app:
    spec, workspace = app.squads.definition(sys.argv[1])
    app.runner().run(spec, workspace)
"""


def kill_when(
    settings: Settings,
    cwd: Path,
    squad: str,
    stub: OpenAIStubServer,
    release: threading.Event,
    ready: Callable[[Counter[str]], bool],
) -> Counter[str]:
    """Run ``squad`` in a child process on ``stub``, SIGKILL it once ``ready`` holds for the
    calls asked so far (and a moment after, for what has ended to be recorded), then let the
    held calls go; the calls the child asked."""
    env = child_env(settings)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, squad],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 90
        while child.poll() is None and not ready(Counter(task_of(b) for b in stub.bodies)):
            assert time.monotonic() < deadline, "the child never got where the kill comes"
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        child.kill()
        _, stderr = child.communicate(timeout=30)
        release.set()
    assert child.returncode == -signal.SIGKILL, stderr.decode()
    return Counter(task_of(b) for b in stub.bodies)


@pytest.mark.slow
def test_a_kill_mid_step_resumes_only_the_unfinished_tasks(
    app: App, settings: Settings, stub_key: None, tmp_path: Path
) -> None:
    release = threading.Event()

    def first_handler(body: Any) -> Any:
        task = task_of(body)
        if task in ("b3", "b4"):
            release.wait(60)  # still in flight when the kill comes
        return answer(f"Output of {task}.")

    with OpenAIStubServer(first_handler) as first:
        _, workspace = create(app, diamond(first.url))

        def in_flight(asked: Counter[str]) -> bool:  # b1 and b2 done, b3 and b4 held
            done = all((workspace / "tasks" / t / "output.md").exists() for t in ("b1", "b2"))
            return done and bool(asked["b3"] and asked["b4"])

        first_asked = kill_when(settings, tmp_path, "diamond", first, release, in_flight)

    assert first_asked == Counter(start=1, b1=1, b2=1, b3=1, b4=1)
    kept = {t: (workspace / "tasks" / t / "output.md").stat().st_mtime_ns for t in ("b1", "b2")}
    [run] = app.store.interrupted_runs("diamond")

    handler = Stub()
    with OpenAIStubServer(handler) as fresh:
        result = app.runner(model_factory=models(api_base=fresh.url)).resume(run.id)

    assert result.succeeded, result.error
    assert handler.calls == Counter(b3=1, b4=1, finish=1)  # no finished task redone
    assert {t: (workspace / "tasks" / t / "output.md").stat().st_mtime_ns for t in kept} == kept
    assert result.tasks == dict.fromkeys(["start", *MIDDLE, "finish"], "done")


def test_the_process_wide_task_slots_bound_tasks_across_runs(
    tmp_path: Path, stub_key: None
) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "settings.yaml").write_text("daemon: {max_parallel_tasks: 2}\n")
    settings = Settings.load(
        {
            "SQUAD_HOME": str(tmp_path / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "workspaces"),
            "SQUAD_CONFIGS": str(tmp_path / "configs"),
        },
        cwd=tmp_path,
    )
    handler = Stub(hold=0.1)
    with OpenAIStubServer(handler) as stub, App.open(settings) as app:
        runs = []
        for name in ("left", "right"):
            text = diamond(stub.url).replace("name: diamond", f"name: {name}")
            spec, workspace = create(app, text)
            runs.append((spec, workspace))
        results: list[Any] = []
        threads = [
            threading.Thread(
                target=lambda s=s, w=w: results.append(app.runner(model_factory=models()).run(s, w))
            )
            for s, w in runs
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)

    assert [r.succeeded for r in results] == [True, True]
    assert handler.most == 2  # two runs of four parallel tasks each, two slots
    assert sum(handler.calls.values()) == 12


def test_a_hierarchical_plans_independent_tasks_run_at_once(app: App, stub_key: None) -> None:
    import json

    plan = json.dumps(
        {
            "tasks": [
                {"id": f"part-{i}", "description": f"Do step p{i}.", "agent": "worker",
                 "depends_on": []}
                for i in range(3)
            ]
        }
    )  # fmt: skip
    together = threading.Barrier(3, timeout=30)
    reviewed: list[str] = []

    def handler(body: Any) -> Any:
        if "response_format" in body:
            return answer(plan)
        prompt = str(body["messages"][-1]["content"])
        if prompt.startswith("Review the work"):
            reviewed.append(prompt)
            return answer("APPROVED: fine")
        together.wait()  # the three planned tasks meet here, or the run fails
        return answer("Part done.")

    with OpenAIStubServer(handler) as stub:
        text = (
            "name: planned\n"
            "process: hierarchical\n"
            "goal: Three independent parts.\n"
            f"model: {{name: openai/stub, api_base: '{stub.url}', api_key_env: STUB_KEY,"
            f" {FREE_PRICES}}}\n"
            "agents:\n"
            "  - {id: lead, role: Plans, lead: true}\n"
            "  - {id: worker, role: Does one step}\n"
            "  - {id: reviewer, role: Reviews the work}\n"
        )
        spec, workspace = create(app, text)
        result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    assert result.tasks == dict.fromkeys(["part-0", "part-1", "part-2"], "done")
    assert len(reviewed) == 3


def test_parallel_tasks_cannot_take_more_turns_than_max_turns_together(
    app: App, stub_key: None
) -> None:
    handler = Stub()
    with OpenAIStubServer(handler) as stub:
        spec, workspace = create(app, diamond(stub.url, limits=", max_turns: 3"))
        result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.status == "stopped"
    assert result.error is not None and "3 agent turns" in result.error
    assert sum(handler.calls.values()) == 3  # start and two of the four middle tasks
    assert result.turns == 3


def test_a_task_starts_when_its_dependencies_finish_while_a_slow_branch_works(
    app: App, stub_key: None
) -> None:
    """start -> a1 -> a2 and start -> b1, then finish: b1's call is held until a2's call
    arrives, which it only does if a2 starts the moment a1 ends, not when b1's step does."""
    a2_asked = threading.Event()
    held: list[bool] = []

    def handler(body: Any) -> Any:
        task = task_of(body)
        if task == "a2":
            a2_asked.set()
        if task == "b1":
            held.append(a2_asked.wait(20))
        return answer(f"Output of {task}.")

    with OpenAIStubServer(handler) as stub:
        text = uneven(stub.url)
        spec, workspace = create(app, text)
        result = app.runner(model_factory=models()).run(spec, workspace)

    assert result.succeeded, result.error
    assert held == [True]
    assert result.tasks == dict.fromkeys(["start", "a1", "a2", "b1", "finish"], "done")
    log = read_events(run_log_path(workspace, result.run_id))
    ended = [e["node"] for e in log if e["event"] == "node_end"]
    assert max(ended.index("a2"), ended.index("b1")) < ended.index("finish")


@pytest.mark.slow
def test_a_kill_while_tasks_started_in_different_steps_work_redoes_only_those(
    app: App, settings: Settings, stub_key: None, tmp_path: Path
) -> None:
    """a1 ends (its step checkpointed) and a2 starts while b1, started a step earlier, still
    works; a kill then resumes a2 and b1 only."""
    release = threading.Event()

    def first_handler(body: Any) -> Any:
        task = task_of(body)
        if task in ("a2", "b1"):
            release.wait(60)  # still in flight when the kill comes
        return answer(f"Output of {task}.")

    with OpenAIStubServer(first_handler) as first:
        _, workspace = create(app, uneven(first.url))
        first_asked = kill_when(
            settings, tmp_path, "uneven", first, release, lambda a: bool(a["a2"] and a["b1"])
        )

    assert first_asked == Counter(start=1, a1=1, a2=1, b1=1)
    kept = (workspace / "tasks" / "a1" / "output.md").stat().st_mtime_ns
    [run] = app.store.interrupted_runs("uneven")

    handler = Stub()
    with OpenAIStubServer(handler) as fresh:
        result = app.runner(model_factory=models(api_base=fresh.url)).resume(run.id)

    assert result.succeeded, result.error
    assert handler.calls == Counter(a2=1, b1=1, finish=1)  # no finished task redone
    assert (workspace / "tasks" / "a1" / "output.md").stat().st_mtime_ns == kept
    assert result.tasks == dict.fromkeys(["start", "a1", "a2", "b1", "finish"], "done")
