"""The blind sets of issue 32, written after a frozen detector by people who had seen neither
the rules nor the corpora: their measured figures, pinned so that they cannot slip.

Sets 1 (60 credentials, 60 look-alikes) and 2 (80 / 80) are training data for the learned
detector now that their figures were reported, so the figures pinned here are in-sample: set 2
measured unseen, before it was trained on, kept 67 of 80 out with 6 false alarms (the rules
alone 60 and 0). Set 3 (100 / 100, ``*_blind3``) is not training data: measured once against
the frozen detector it kept 89 out with 1 false alarm (the rules alone 81 and 0), the
figures docs/engineering.md reports; one rule fix made after reading its misses (a quoted
``--passphrase`` value was cut at its first space) raised that to 90 and 82, pinned here. A
change that lowers one is a regression to explain; one that raises set 3's must not come from
training on it (``training/credentials/train.py`` does not read it).
"""

from __future__ import annotations

from typing import Any

import pytest

from squad.text.secrets import redact
from tests.text.chat_corpus import load


def _figures(tag: str, *, learned: bool) -> tuple[int, int]:
    """(credential messages with every value gone, look-alikes with anything found)."""
    credentials = load(f"chat_credentials_{tag}.jsonl.gz")
    lookalikes = load(f"chat_credential_negatives_{tag}.jsonl.gz")

    def kept(row: dict[str, Any]) -> bool:
        shown = redact(row["text"], learned=learned)[0]
        return all(value not in shown for value in row["values"])

    return (
        sum(kept(row) for row in credentials),
        sum(bool(redact(row["text"], learned=learned)[1]) for row in lookalikes),
    )


@pytest.mark.parametrize(
    ("tag", "learned", "least_kept", "most_alarms"),
    [
        ("blind1", False, 51, 0),
        ("blind1", True, 59, 0),
        ("blind2", False, 61, 0),
        ("blind2", True, 78, 0),
        ("blind3", False, 82, 0),
        ("blind3", True, 90, 1),
    ],
)
def test_a_blind_set_keeps_its_measured_figures(
    tag: str, learned: bool, least_kept: int, most_alarms: int
) -> None:
    kept, alarms = _figures(tag, learned=learned)
    assert kept >= least_kept and alarms <= most_alarms, (kept, alarms)


def test_the_learned_detector_adds_to_the_rules_on_unseen_text() -> None:
    rules, _ = _figures("blind3", learned=False)
    both, _ = _figures("blind3", learned=True)
    assert both > rules
