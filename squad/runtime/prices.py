"""Refuse to start what a spend cap cannot bound: a model whose price nobody knows.

litellm's local price map covers the big providers; a self-hosted model behind an
OpenAI-compatible endpoint, a new release or a gateway alias is not in it, and its calls
would count as $0 against ``limits.max_cost_usd``. Rather than let such a model spend without
a ceiling, a run or chat on it does not start until the definition says what it costs.
"""

from __future__ import annotations

from collections.abc import Iterator

from squad.errors import ConfigError, Problem
from squad.model.factory import ModelFactory
from squad.model.offline import is_offline
from squad.model.types import ModelEvent
from squad.spec.models import ModelSpec, SquadSpec

__all__ = ["require_prices"]


def require_prices(
    spec: SquadSpec,
    factory: ModelFactory,
    *,
    override: str | None = None,
    agents: tuple[str, ...] | None = None,
) -> None:
    """Raise :class:`ConfigError` naming every model of ``spec`` (or of ``agents``) that has no
    price while the squad has a spend cap. ``override`` is a ``--model`` given for the run."""
    problems = []
    seen: set[str] = set()
    for path, model_spec in _models(spec, override, agents):
        if is_offline(model_spec.name) or model_spec.model_dump_json() in seen:
            continue
        seen.add(model_spec.model_dump_json())
        if factory(model_spec, _ignore).price() is not None:
            continue
        hint = (
            "give its prices in the model's mapping: cost_per_1k_input and cost_per_1k_output "
            "(US dollars per 1,000 tokens; 0 for a free, self-hosted model)"
        )
        if path == ("--model",):
            hint = "name it with its prices in the definition's model mapping, not with --model"
        problems.append(
            Problem(
                f"model {model_spec.name!r} has no price in litellm's price map, so the spend "
                f"cap (limits.max_cost_usd: {spec.limits.max_cost_usd:g}) cannot be kept",
                source=f"squad {spec.name!r}",
                path=path,
                hint=hint,
            )
        )
    if problems:
        raise ConfigError(problems)


def _models(
    spec: SquadSpec, override: str | None, agents: tuple[str, ...] | None
) -> Iterator[tuple[tuple[str | int, ...], ModelSpec]]:
    if override:
        yield ("--model",), ModelSpec(name=override)
        return
    for index, agent in enumerate(spec.agents):
        if agents is not None and agent.id not in agents:
            continue
        if agent.model is not None:
            yield ("agents", index, "model"), agent.model
        else:
            yield ("model",), spec.model


def _ignore(event: ModelEvent) -> None:
    pass
