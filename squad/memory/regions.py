"""The prompt's regions, each with a token budget sized from the model's context window. Pure.

A prompt is cut into regions, in the order a call holds them:

=============  ====================================================================  ==========
region         what it holds                                                        at 8,192
=============  ====================================================================  ==========
boot           the agent header and the boot files (SOUL, USER, AGENTS)                    768
memory         ``## Agent Memory``'s two layers, split 60/40 by ``Budget``               2,000
recall         the earlier conversation recalled for the message                         1,000
supplementary  other agents' shared experience (``[Supplementary Context]``)             1,000
working        the run's working memory (``## Working memory``)                            256
history        the earlier conversation sent as messages (chat)                          1,536
turn           the message itself, the tool definitions and the tool results               608
reserve        room kept for the answer and the model's reasoning                        1,024
=============  ====================================================================  ==========

**Sizes.** At the reference window of 8,192 tokens a region gets the figure above: memory and
recall exactly their budgets before regions existed, so a squad on the offline model (or an
unmapped model) gets the prompt it got before. A smaller window scales every figure down in
proportion; a larger one gives each region its figure plus a share of every token beyond
8,192, taken from the source design's example split of a 200K window (boot 7.5% with tools,
long-term memory 10%, history 40%, turn 20%, reasoning 17.5%): boot 5%, memory 5%, recall
and supplementary 2.5% each, working 0.5%, history 40%, reserve 17.5%, and the turn the rest
(27%). So memory grows with the window, but slower than in proportion: 7,990 at 128K and
11,590 at 200K, not 31,250 and 48,828.

**Rules, in order.** (1) The reserve is at least the model's ``max_tokens`` when it has one.
(2) A budget set in the squad's YAML (``memory.max_tokens``, ``memory.recall_max_tokens``,
``memory.supplementary_max_tokens``) is used as set. (3) No region the window sizes goes below
its floor, a size at which it still holds something useful (:data:`SHARES`). (4) The budgets
never add up to more than the window: when the reserve or the set budgets leave too little,
the sized regions give way, history first, then supplementary, recall, boot, working and
memory, each down to its floor; and a set budget or a reserve too large for the window (a
memory budget of 100,000 on an 8,192-token model) is cut to what the window can give, which
the report marks as ``capped``. The turn is what is left, never below its floor.

**Lending.** Budgets are ceilings: what the system prompt's regions leave unused is lent to
the history (:meth:`Regions.history_room`), so a chat with little memory keeps a long history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypedDict, get_args

__all__ = [
    "PROMPT_REGIONS",
    "REFERENCE_WINDOW",
    "REGIONS",
    "SHARES",
    "TURN_FLOOR",
    "Region",
    "RegionRowDict",
    "RegionUse",
    "Regions",
    "Share",
    "minimum_window",
    "plan_regions",
]

Region = Literal[
    "boot", "memory", "recall", "supplementary", "working", "history", "turn", "reserve"
]
REGIONS: tuple[Region, ...] = get_args(Region)
"""Every region, in the order a call holds them."""
PROMPT_REGIONS: tuple[Region, ...] = ("boot", "memory", "recall", "supplementary", "working")
"""The regions of the system prompt: what they leave unused is lent to the history."""
REFERENCE_WINDOW = 8192
"""The window at which each region gets exactly its ``at_reference`` figure."""


@dataclass(frozen=True)
class Share:
    """How one region is sized from the window."""

    at_reference: int
    """Tokens at :data:`REFERENCE_WINDOW`; a smaller window scales this in proportion."""
    beyond: float
    """Share of each token of a window past :data:`REFERENCE_WINDOW`."""
    floor: int
    """Fewest tokens the region is given when the window sizes it."""

    def size(self, window: int) -> int:
        if window <= REFERENCE_WINDOW:
            sized = self.at_reference * window // REFERENCE_WINDOW
        else:
            sized = self.at_reference + int(self.beyond * (window - REFERENCE_WINDOW))
        return max(sized, self.floor)


SHARES: Mapping[Region, Share] = {
    "boot": Share(768, 0.05, 128),
    "memory": Share(2000, 0.05, 128),  # >= minimum_total(): both layer headers and a notice
    "recall": Share(1000, 0.025, 64),
    "supplementary": Share(1000, 0.025, 64),
    "working": Share(256, 0.005, 64),
    "history": Share(1536, 0.40, 256),
    "reserve": Share(1024, 0.175, 256),
}
"""The sized regions; the turn is what they leave (at least :data:`TURN_FLOOR`)."""
TURN_FLOOR = 256
_GIVE_WAY: tuple[Region, ...] = ("history", "supplementary", "recall", "boot", "working", "memory")
"""The order in which sized regions shrink toward their floors when the window is short."""
SETTINGS: Mapping[Region, str] = {
    "memory": "memory.max_tokens",
    "recall": "memory.recall_max_tokens",
    "supplementary": "memory.supplementary_max_tokens",
}
"""The squad settings that set a region's budget (unset: sized from the window)."""


def minimum_window() -> int:
    """The smallest window whose every region gets its floor."""
    return sum(share.floor for share in SHARES.values()) + TURN_FLOOR


class RegionRowDict(TypedDict):
    """:meth:`RegionUse.to_dict`: a row of ``squad memory context --json``'s regions."""

    region: Region
    budget: int
    used: int | None
    set_by: str | None
    capped: bool


@dataclass(frozen=True)
class RegionUse:
    """One row of :meth:`Regions.report`."""

    region: Region
    budget: int
    used: int | None
    """Tokens the prompt holds in it; None when not measured (the history outside a chat,
    the reserve, which is kept free)."""
    set_by: str | None
    """The setting that fixed the budget (``memory.max_tokens``, ``model.max_tokens``); None
    when the window sized it."""
    capped: bool
    """The setting asked for more than the window can give; the budget is what it gives."""

    def to_dict(self) -> RegionRowDict:
        return {
            "region": self.region,
            "budget": self.budget,
            "used": self.used,
            "set_by": self.set_by,
            "capped": self.capped,
        }


@dataclass(frozen=True)
class Regions:
    """Every region's budget for one window; they add up to ``window`` exactly."""

    window: int
    budgets: Mapping[Region, int]
    set_by: Mapping[Region, str]
    """Regions a setting fixed, with the setting's name."""
    capped: frozenset[Region] = frozenset()

    def budget(self, region: Region) -> int:
        return self.budgets[region]

    def history_room(self, used: Mapping[Region, int]) -> int:
        """Tokens the history may take: its budget plus what the system prompt's regions
        leave of theirs (less what one ran over), never below the history's floor."""
        spare = sum(self.budgets[r] - used.get(r, 0) for r in PROMPT_REGIONS)
        return max(self.budgets["history"] + spare, SHARES["history"].floor)

    def report(self, used: Mapping[Region, int]) -> list[RegionUse]:
        """One row per region, in prompt order: its budget and the tokens ``used`` of it
        (None for a region ``used`` does not name)."""
        return [
            RegionUse(r, self.budgets[r], used.get(r), self.set_by.get(r), r in self.capped)
            for r in REGIONS
        ]


def plan_regions(
    window: int,
    *,
    answer_reserve: int | None = None,
    explicit: Mapping[Region, int] | None = None,
) -> Regions:
    """The regions of a prompt for a model with a ``window``-token context.

    ``answer_reserve``: the model's ``max_tokens``, the least the reserve keeps. ``explicit``:
    budgets set in the squad's YAML (``memory``, ``recall``, ``supplementary``), used as set
    unless the window cannot give them. Raises ValueError below :func:`minimum_window`.
    """
    floors = {region: share.floor for region, share in SHARES.items()}
    if window < minimum_window():
        raise ValueError(
            f"a context window of {window:,} tokens is too small to plan a prompt; "
            f"squad needs at least {minimum_window():,}"
        )
    explicit = dict(explicit or {})
    unknown = set(explicit) - set(SETTINGS)
    if unknown:
        raise ValueError(f"no setting fixes the budget of {sorted(unknown)}")
    budgets: dict[Region, int] = {}
    set_by: dict[Region, str] = {}
    capped: set[Region] = set()

    # (1) the reserve: at least the answer, as much as the other regions' floors leave
    room = window - TURN_FLOOR - sum(f for r, f in floors.items() if r != "reserve")
    reserve = SHARES["reserve"].size(window)
    if answer_reserve is not None and answer_reserve > reserve:
        reserve = answer_reserve
        set_by["reserve"] = "model.max_tokens"
    if reserve > room:
        reserve = room
        capped.add("reserve")
    budgets["reserve"] = reserve

    # (2) budgets the squad set, each within what the window has left after the floors
    sized = [r for r in SHARES if r != "reserve" and r not in explicit]
    left = window - reserve - TURN_FLOOR - sum(floors[r] for r in sized)
    for region in REGIONS:
        if region not in explicit:
            continue
        value = explicit[region]
        if value < 0:
            raise ValueError(f"{SETTINGS[region]} must be 0 or more, got {value}")
        if value > left:
            value = left
            capped.add(region)
        budgets[region] = value
        set_by[region] = SETTINGS[region]
        left -= value

    # (3) the sized regions, giving way toward their floors when they do not all fit
    left += sum(floors[r] for r in sized)
    wanted: dict[Region, int] = {r: SHARES[r].size(window) for r in sized}
    over = sum(wanted.values()) - left
    for region in _GIVE_WAY:
        if over <= 0:
            break
        if region in wanted:
            give = min(over, wanted[region] - floors[region])
            wanted[region] -= give
            over -= give
    budgets.update(wanted)

    # (4) the turn: what is left
    budgets["turn"] = window - sum(budgets.values())
    return Regions(
        window,
        {r: budgets[r] for r in REGIONS},
        set_by,
        frozenset(capped),
    )
