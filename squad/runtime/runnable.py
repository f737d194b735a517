"""What ``squad run`` would refuse or fail at once, found by ``squad validate`` without a call.

Two things stop a valid squad on a real model, after seconds of start-up: a model that has no
price while the squad has a spend cap (``run`` refuses it: :mod:`squad.runtime.prices`), and a
model whose key variable is not set (its first call fails). Both are read from the definition,
litellm's shipped cost map and the environment, never from the network and without importing
litellm (:mod:`squad.model.providers`). The key check depends on the machine it runs on, so a
CI job that validates without keys turns it off (``squad validate --no-env``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from squad.errors import Problem
from squad.model.offline import is_offline
from squad.model.providers import key_need, listed_price
from squad.spec.models import ModelSpec, SquadSpec

__all__ = ["run_problems"]

PRICE_HINT = (
    "give its prices in the model's mapping: cost_per_1k_input and cost_per_1k_output "
    "(US dollars per 1,000 tokens; 0 for a free, self-hosted model)"
)


def run_problems(
    spec: SquadSpec, environ: Mapping[str, str] | None, *, source: str | None = None
) -> list[Problem]:
    """Each model of ``spec`` that ``squad run`` would refuse (no price) or whose calls would
    fail (no key in ``environ``; None skips the key check), at the key naming the model."""
    problems: list[Problem] = []
    for path, model in _models(spec):
        if is_offline(model.name):
            continue
        if _unpriced(model):
            problems.append(
                Problem(
                    f"model {model.name!r} has no price in litellm's price map, so the spend "
                    f"cap (limits.max_cost_usd: {spec.limits.max_cost_usd:g}) cannot be kept "
                    "and `squad run` refuses it",
                    source=source,
                    path=path,
                    hint=PRICE_HINT,
                )
            )
        if environ is None:
            continue
        need = key_need(model.name, api_base=model.api_base, api_key_env=model.api_key_env)
        if need is not None and not any(environ.get(v) for v in need.variables):
            problems.append(_missing_key(model, need.variables, need.named_by, path, source))
    return problems


def _unpriced(model: ModelSpec) -> bool:
    """The rule :func:`~squad.runtime.prices.require_prices` applies, by the shipped map."""
    given = model.cost_per_1k_input is not None and model.cost_per_1k_output is not None
    return not given and listed_price(model.name) is None


def _missing_key(
    model: ModelSpec,
    variables: tuple[str, ...],
    named_by: str,
    path: tuple[str | int, ...],
    source: str | None,
) -> Problem:
    which = " or ".join(variables)
    if named_by == "api_key_env":
        message = f"model {model.name!r} needs an API key in {which} (named by api_key_env), "
    else:
        message = f"model {model.name!r} needs an API key for provider {named_by!r}, "
    message += "which is not set, so its first call would fail"
    return Problem(
        message,
        source=source,
        path=path,
        hint=f"set {which} (export {variables[0]}=...); to validate without keys, as in CI, "
        "pass --no-env",
    )


def _models(spec: SquadSpec) -> Iterator[tuple[tuple[str | int, ...], ModelSpec]]:
    """Each model an agent calls, once, at the key that names it: an agent's own, else the
    squad's (as :func:`~squad.runtime.prices.require_prices` walks them)."""
    seen: set[tuple[str | int, ...]] = set()
    for index, agent in enumerate(spec.agents):
        path: tuple[str | int, ...] = ("agents", index, "model") if agent.model else ("model",)
        if path not in seen:
            seen.add(path)
            yield path, agent.model or spec.model
