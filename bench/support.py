"""What the benchmarks share: an instant model, throw-away settings, a benchmark in its own
process."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.model.types import Message, ModelReply, TokenCallback, ToolSpec, Usage

if TYPE_CHECKING:
    from squad.settings import Settings

REPO = Path(__file__).resolve().parent.parent


class InstantModel:
    """A zero-latency ChatModel: the cost of the model is taken out of the measurement.

    Calls that want JSON (``response_format``, the fact extractor's) get ``json_answer``.
    """

    def __init__(
        self, answer: str = "Done: the task is complete.", json_answer: str = '{"facts": []}'
    ) -> None:
        self.answer = answer
        self.json_answer = json_answer

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        text = self.json_answer if response_format else self.answer
        return ModelReply(text, usage=Usage(10, 5, 0.0), model="instant")


@contextmanager
def temp_settings() -> Iterator[Settings]:
    """Settings whose home, workspaces and configs live in a folder deleted afterwards."""
    from squad.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        yield Settings.load(
            {
                "SQUAD_HOME": str(root / "home"),
                "SQUAD_WORKSPACES": str(root / "ws"),
                "SQUAD_CONFIGS": str(root / "configs"),
            },
            cwd=root,
        )


def run_json(module: str) -> dict[str, Any]:
    """Run ``python -m module --json`` in a fresh process (its heap is not the caller's) and
    return the JSON object it prints last."""
    done = subprocess.run(
        [sys.executable, "-m", module, "--json"],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
