"""The learned detector's limits, whatever its weights: what it never scores."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from squad.text.secrets import find_secrets
from squad.text.secrets._learned import LONGEST, load_model, scored_units


def _run_log(rng: random.Random, lines: int) -> str:
    """A run log as the runner writes it: compact JSON lines, random run ids and hashes, and
    review verdicts in prose with cue words ("key", "code")."""
    run_id = f"{rng.getrandbits(128):032x}"
    start = datetime(2026, 12, 6, tzinfo=UTC) + timedelta(seconds=rng.randrange(10**7))
    out = []
    for i in range(lines):
        event = rng.choice(["model_call", "review", "task_status", "run_end"])
        row: dict[str, object] = {
            "time": (start + timedelta(microseconds=rng.randrange(10**9))).isoformat(),
            "run_id": run_id,
            "event": event,
        }
        if event == "review":
            row["verdict"] = "APPROVED: the work covers every key point of the code review."
        if event == "run_end":
            row["commit"] = f"{rng.getrandbits(160):040x}"
            row["tasks"] = {f"task-{i}": "done"}
        out.append(json.dumps(row, separators=(",", ":")))
    return "\n".join(out)


def test_a_compact_json_run_log_with_random_ids_gives_the_learned_detector_nothing() -> None:
    # A glued JSON line is one unit of hundreds of characters whose score moved with its random
    # run id and commit hash: now and then over the threshold, which refused a squad's export.
    rng = random.Random(32)
    logs = [_run_log(rng, 20) for _ in range(200)]
    assert [find_secrets(log) for log in logs] == [[] for _ in logs]


def test_units_longer_than_the_limit_or_holding_json_glue_are_never_scored() -> None:
    model = load_model()
    assert model is not None
    long_word = "Zq8" * (LONGEST // 3 + 1)
    text = f'the password is {long_word} and the key is {{"a":"Xy9!kq2v"}}, the pin is Xy9!kq2v'
    scored = [unit.text for unit, _, _ in scored_units(text, model)]
    assert long_word not in scored
    assert not any('":"' in unit for unit in scored)
    assert "Xy9!kq2v" in scored  # the same value, written as a word, is scored
