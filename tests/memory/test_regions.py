"""The prompt's regions: sized from the window, settings win, floors hold, the sum fits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from squad.memory.assembly import BootFile, minimum_total
from squad.memory.boot_fit import boot_section, fit_boot_files
from squad.memory.regions import (
    REGIONS,
    SHARES,
    TURN_FLOOR,
    minimum_window,
    plan_regions,
)
from squad.spec.window import MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW
from squad.text.tokens import counter_for_model

REAL = counter_for_model("offline")
SIZED = [r for r in SHARES if r != "reserve"]


def test_the_default_window_gives_the_budgets_squad_had_before_regions() -> None:
    regions = plan_regions(8192)
    assert regions.budgets == {
        "boot": 768,
        "memory": 2000,
        "recall": 1000,
        "supplementary": 1000,
        "working": 256,
        "history": 1536,
        "turn": 608,
        "reserve": 1024,
    }
    assert regions.set_by == {} and regions.capped == frozenset()


def test_windows_scale_below_the_reference_and_grow_slower_above_it() -> None:
    budgets = {w: plan_regions(w).budgets for w in (2048, 4096, 32_768, 128_000, 200_000)}
    assert budgets[4096]["memory"] == 1000 and budgets[4096]["recall"] == 500
    assert budgets[2048]["memory"] == 500 and budgets[2048]["turn"] == TURN_FLOOR
    assert budgets[128_000]["memory"] == 7990 and budgets[128_000]["history"] == 49_459
    assert budgets[200_000]["memory"] == 11_590 and budgets[200_000]["reserve"] == 34_590
    assert budgets[200_000]["history"] / 200_000 == pytest.approx(0.39, abs=0.01)
    for small, large in ((2048, 4096), (4096, 32_768), (32_768, 128_000), (128_000, 200_000)):
        assert all(budgets[small][r] <= budgets[large][r] for r in SIZED), (small, large)


def test_budgets_set_in_the_squad_win_over_the_window() -> None:
    regions = plan_regions(200_000, explicit={"memory": 1500, "recall": 0})
    assert (regions.budget("memory"), regions.budget("recall")) == (1500, 0)
    assert regions.budget("supplementary") == plan_regions(200_000).budget("supplementary")
    assert regions.set_by == {"memory": "memory.max_tokens", "recall": "memory.recall_max_tokens"}
    rows = {row.region: row for row in regions.report({"memory": 40})}
    assert (rows["memory"].budget, rows["memory"].used, rows["memory"].set_by) == (
        1500,
        40,
        "memory.max_tokens",
    )
    assert rows["history"].used is None and rows["history"].set_by is None


def test_a_setting_larger_than_the_window_is_capped_and_the_others_keep_their_floors() -> None:
    regions = plan_regions(8192, explicit={"memory": 100_000})
    assert regions.capped == frozenset({"memory"})
    assert sum(regions.budgets.values()) == 8192
    assert all(regions.budget(r) == SHARES[r].floor for r in SIZED if r != "memory")
    assert regions.budget("turn") == TURN_FLOOR
    assert regions.report({})[1].capped


def test_the_reserve_keeps_room_for_the_models_max_tokens() -> None:
    regions = plan_regions(8192, answer_reserve=4000)
    assert regions.budget("reserve") == 4000
    assert regions.set_by == {"reserve": "model.max_tokens"}
    assert regions.budget("history") < plan_regions(8192).budget("history")  # history gives way
    assert regions.budget("memory") == 2000
    smaller = plan_regions(200_000, answer_reserve=1000)
    assert smaller.budget("reserve") == 34_590 and "reserve" not in smaller.set_by
    huge = plan_regions(4096, answer_reserve=1_000_000)
    assert "reserve" in huge.capped and sum(huge.budgets.values()) == 4096


@given(
    window=st.integers(MIN_CONTEXT_WINDOW, MAX_CONTEXT_WINDOW),
    answer=st.none() | st.integers(1, 1_000_000),
    memory=st.none() | st.integers(0, 200_000),
    recall=st.none() | st.integers(0, 200_000),
    supplementary=st.none() | st.integers(0, 200_000),
)
def test_regions_add_up_to_the_window_and_sized_ones_keep_their_floors(
    window: int,
    answer: int | None,
    memory: int | None,
    recall: int | None,
    supplementary: int | None,
) -> None:
    given_budgets = {"memory": memory, "recall": recall, "supplementary": supplementary}
    explicit = {k: v for k, v in given_budgets.items() if v is not None}
    regions = plan_regions(window, answer_reserve=answer, explicit=explicit)  # type: ignore[arg-type]
    assert set(regions.budgets) == set(REGIONS)
    assert sum(regions.budgets.values()) == window
    assert regions.budget("turn") >= TURN_FLOOR
    assert regions.budget("reserve") >= SHARES["reserve"].floor
    for region in SIZED:
        if region not in explicit:
            assert regions.budget(region) >= SHARES[region].floor, region
    for region, value in explicit.items():
        assert regions.budget(region) == value or region in regions.capped  # type: ignore[arg-type]
    if answer is not None and "reserve" not in regions.capped:
        assert regions.budget("reserve") >= answer


def test_every_window_squad_accepts_can_be_planned_and_smaller_ones_cannot() -> None:
    assert minimum_window() <= MIN_CONTEXT_WINDOW
    assert SHARES["memory"].floor >= max(
        minimum_total(counter_for_model(m)) for m in ("offline", "openai/gpt-4o", "anthropic/x")
    )
    with pytest.raises(ValueError, match="too small to plan a prompt"):
        plan_regions(minimum_window() - 1)
    with pytest.raises(ValueError, match="no setting fixes the budget"):
        plan_regions(8192, explicit={"history": 10})  # type: ignore[dict-item]


def test_the_history_borrows_what_the_system_prompt_leaves_unused() -> None:
    regions = plan_regions(8192)
    assert regions.history_room({}) == 1536 + 768 + 2000 + 1000 + 1000 + 256
    full = {"boot": 768, "memory": 2000, "recall": 1000, "supplementary": 1000, "working": 256}
    assert regions.history_room(full) == 1536
    over = {**full, "boot": 768 + 5000}
    assert regions.history_room(over) == SHARES["history"].floor


def test_boot_files_share_their_region_fairly_and_a_cut_file_says_so() -> None:
    small = BootFile("Persona (SOUL.md)", "Be candid.")
    rules = BootFile(
        "Work rules (AGENTS.md)", "\n".join(f"- rule {n}: test first" for n in range(400))
    )
    whole = fit_boot_files([small, rules], 100_000, REAL)
    assert whole.files == (small, rules) and whole.dropped == {}
    fitted = fit_boot_files([small, rules], 300, REAL)
    assert fitted.files[0] == small  # the small file keeps all of it
    cut = fitted.files[1]
    assert fitted.tokens <= 300
    assert fitted.tokens == sum(REAL.count(boot_section(f)) for f in fitted.files)
    kept = cut.text.splitlines()
    dropped = fitted.dropped["Work rules (AGENTS.md)"]
    assert kept[0] == (
        f"[{dropped} lines left out to fit the prompt's boot budget; memory_read shows the "
        "whole file]"
    )
    assert kept[1:] == [f"- rule {n}: test first" for n in range(400 - dropped)]  # first lines
    assert 0 < dropped < 400
    nothing = fit_boot_files([small, rules], 10, REAL)
    assert nothing.files == () and nothing.dropped == {
        "Persona (SOUL.md)": 1,
        "Work rules (AGENTS.md)": 400,
    }
