"""A parameter's value comes out of squad's command as out of typer's own, adapter or not:
the same value for every kind of parameter and input, the same words for a bad one, and
typer's pydantic adapter built only for a value that needs it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import typer
from typer.main import get_command

from squad.cli.help import command, walk

CASES = [
    [],
    ["--count", "12"],
    ["--count", "-3", "--ratio", "0.5"],
    ["--count", "1_000"],
    ["--count", "twelve"],
    ["--count", "2.5"],
    ["--ratio", "1e3", "--label", "  spaced  "],
    ["--ratio", "nan"],
    ["--ratio", "x"],
    ["--label", "12", "--where", "some/dir"],
    ["--kind", "b", "--tag", "x", "--tag", "y", "--at", "2026-12-07"],
    ["--kind", "c"],
    ["--at", "yesterday"],
    ["--bounded", "9"],
    ["--bounded", "0"],
    ["--loud", "--bounded", "5"],
    ["NAME", "--count", "4"],
]


def _app(seen: list[dict[str, Any]]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def probe(
        name: Annotated[str, typer.Argument()] = "anon",
        count: int = 3,
        ratio: float | None = None,
        label: str | None = None,
        where: Path | None = None,
        kind: Literal["a", "b"] = "a",
        tag: Annotated[list[str] | None, typer.Option()] = None,
        at: datetime | None = None,
        bounded: Annotated[int, typer.Option(min=1, max=5)] = 1,
        loud: bool = False,
    ) -> None:
        seen.append(dict(locals()))

    return app


def _outcome(cmd: Any, args: list[str], seen: list[dict[str, Any]]) -> Any:
    seen.clear()
    try:
        cmd.main(args, prog_name="probe", standalone_mode=False)
    except typer.TyperException as error:  # a usage error: the words a person reads
        return type(error).__name__, error.format_message()
    return {key: (type(value).__name__, repr(value)) for key, value in seen[0].items()}


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_every_value_and_every_refusal_is_the_same_as_typers_own(args: list[str]) -> None:
    seen: list[dict[str, Any]] = []
    assert _outcome(command(_app(seen)), args, seen) == _outcome(
        get_command(_app(seen)), args, seen
    )


def test_plain_values_left_at_their_defaults_or_given_as_their_type_build_no_adapter() -> None:
    seen: list[dict[str, Any]] = []
    cmd = command(_app(seen), name="probe")
    cmd.main(["--label", "x"], prog_name="probe", standalone_mode=False)
    assert seen[0]["label"] == "x" and seen[0]["count"] == 3
    built = [p.name for _, c in walk(cmd) for p in c.params if hasattr(p, "_typer_runtime_param")]
    assert sorted(built) == ["bounded", "kind"]  # a choice's and a bound's default: typer's

    cmd.main(["--count", "7", "--where", "d"], prog_name="probe", standalone_mode=False)
    assert seen[-1]["count"] == 7 and seen[-1]["where"] == Path("d")
    built = [p.name for p in cmd.params if hasattr(p, "_typer_runtime_param")]
    assert sorted(built) == ["bounded", "count", "kind", "where"]  # text to coerce: typer's
