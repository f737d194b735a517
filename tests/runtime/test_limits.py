"""The spend cap as a ceiling: reserve the most a call may cost, settle what it cost."""

from __future__ import annotations

import pytest

from squad.errors import LimitReached
from squad.model import LiteLLMModel, Message, OfflineModel
from squad.model.types import FREE, Price
from squad.runtime.limits import RunBudget
from squad.spec.models import ModelSpec


def test_a_reservation_that_could_pass_the_cap_is_refused_before_the_call() -> None:
    budget = RunBudget(max_turns=10, max_cost_usd=1.0, spent_before_usd=0.7)
    budget.reserve(0.2)
    with pytest.raises(LimitReached, match=r"may cost up to \$0.2000.*\$0.9000 of its \$1 cap"):
        budget.reserve(0.2)
    assert budget.reserved_usd == pytest.approx(0.2)


def test_settling_replaces_the_reservation_with_the_real_cost() -> None:
    budget = RunBudget(max_turns=10, max_cost_usd=1.0)
    budget.reserve(0.5)
    budget.settle(0.5, 100, 20, 0.1)
    assert budget.reserved_usd == 0.0
    assert budget.spent_usd == pytest.approx(0.1)
    assert (budget.prompt_tokens, budget.completion_tokens) == (100, 20)
    budget.reserve(0.9)  # 0.1 spent + 0.9 reserved reaches the cap, not past it


def test_a_free_call_needs_no_reservation_even_under_a_zero_cap() -> None:
    budget = RunBudget(max_turns=10, max_cost_usd=0.0)
    budget.reserve(0.0)
    budget.settle(0.0, 10, 10, 0.0)
    budget.before_turn()


def test_the_spec_prices_a_model_litellm_does_not_know_and_its_reservation_counts_max_tokens() -> (
    None
):
    spec = ModelSpec(
        name="openai/squad-private-xyz",
        cost_per_1k_input=1.0,
        cost_per_1k_output=2.0,
        max_tokens=500,
    )
    model = LiteLLMModel(spec)
    assert model.price() == Price(1.0, 2.0)
    estimate = model.reserve_usd([Message.user("hello there")], ())
    # at least 500 output tokens at $2 per 1,000, plus a few prompt tokens at $1 per 1,000
    assert 1.0 < estimate < 1.05


def test_a_free_model_reserves_nothing() -> None:
    spec = ModelSpec(name="openai/local", cost_per_1k_input=0, cost_per_1k_output=0)
    assert LiteLLMModel(spec).price() == FREE
    assert LiteLLMModel(spec).reserve_usd([Message.user("x" * 10_000)], ()) == 0.0


def test_the_offline_model_is_free_and_reserves_nothing() -> None:
    assert OfflineModel().price() == FREE
    assert OfflineModel().reserve_usd([Message.user("x" * 10_000)], ()) == 0.0


def test_a_model_litellm_has_no_price_for_is_unpriced() -> None:
    assert LiteLLMModel(ModelSpec(name="openai/squad-private-xyz")).price() is None
    assert LiteLLMModel(ModelSpec(name="openai/gpt-4o-mini")).price() == Price(0.00015, 0.0006)


@pytest.mark.parametrize("given", ["cost_per_1k_input", "cost_per_1k_output"])
def test_a_price_given_alone_is_refused(given: str) -> None:
    with pytest.raises(ValueError, match="give both cost_per_1k_input and cost_per_1k_output"):
        ModelSpec.model_validate({"name": "openai/x", given: 1.0})
