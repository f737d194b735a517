"""How the timed benchmarks' stub handler paces each call: by the marker in the task's own
prompt, so the uneven diamond's slow branch is slow on squad and CrewAI alike."""

from __future__ import annotations

from bench.parallel_bench import UNEVEN, a2_wait_s, uneven_description
from bench.support import PacedAnswers, StubCall, most_in_flight, paced


def _body(*contents: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": content} for content in contents]}


def test_a_call_is_held_as_long_as_its_task_description_says() -> None:
    pace = PacedAnswers(0.2, "Done.")

    assert pace.latency_s(_body(f"Task: {paced('Do step b1.', 1.0)}")) == 1.0
    assert pace.latency_s(_body("Task: Do step start.")) == 0.2


def test_the_last_marked_message_decides_the_latency() -> None:
    pace = PacedAnswers(0.2, "Done.")
    earlier, own = paced("Do step a1.", 0.3), paced("Do step end.", 0.05)

    assert pace.latency_s(_body(earlier, f"Context: Done.\n{own}", "Done.")) == 0.05


def test_each_uneven_diamond_task_names_its_own_latency() -> None:
    pace = PacedAnswers(9.0, "Done.")

    for step, (latency_s, _) in UNEVEN.items():
        assert pace.latency_s(_body(f"Task: {uneven_description(step)}")) == latency_s


def _uneven_run(a2_came: float) -> list[StubCall]:
    """An uneven diamond's calls at the stub, a2's coming at ``a2_came``."""
    return [
        StubCall(0.0, 0.2, "start"),
        StubCall(0.2, 0.3, "a1"),
        StubCall(0.2, 1.0, "b1"),
        StubCall(a2_came, 0.3, "a2"),
        StubCall(max(a2_came + 0.3, 1.2), 0.2, "end"),
    ]


def test_calls_in_flight_count_overlapping_holds_only() -> None:
    # a1 then a2 in a row beside a slow b1: never more than two held at once
    assert most_in_flight(_uneven_run(a2_came=0.5)) == 2
    assert most_in_flight([]) == 0


def test_a2_waits_from_a1s_answer_to_its_own_call() -> None:
    assert abs(a2_wait_s(_uneven_run(a2_came=0.52)) - 0.02) < 1e-9
    assert abs(a2_wait_s(_uneven_run(a2_came=1.25)) - 0.75) < 1e-9


def test_a_handled_call_is_noted_with_its_hold_and_step() -> None:
    pace = PacedAnswers(0.2, "Done.")

    behaviour = pace(_body("Task: Do step a1.", f"Task: {paced('Do step b1.', 1.0)}"))

    assert [(call.held, call.step) for call in pace.take()] == [(1.0, "b1")]
    assert pace.take() == []
    assert behaviour.seconds == 1.0
