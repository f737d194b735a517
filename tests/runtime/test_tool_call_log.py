"""What a run log keeps of a tool's answer: its start, never a credential's first half."""

from __future__ import annotations

import pytest

from squad.runtime.recorder import logged
from squad.text.secrets import redact

PASSWORD = "S3cretPassw0rd"


@pytest.mark.parametrize("pad", [270, 276, 280, 284])
def test_a_password_crossing_the_logs_cut_leaves_no_part_of_itself(pad: int) -> None:
    answer = "x" * pad + f" postgresql://admin:{PASSWORD}@db.internal:5432/prod" + " tail" * 100

    kept, _ = redact(logged(answer))

    assert not any(PASSWORD[:n] in kept for n in range(4, len(PASSWORD) + 1))
    assert kept.startswith("x" * pad) and "more characters cut" in kept


def test_a_short_answer_is_logged_whole() -> None:
    assert logged("ok: 3 files") == "ok: 3 files"
