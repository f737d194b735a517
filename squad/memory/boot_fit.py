"""Boot files fitted to the prompt's boot region. Pure.

The boot files (SOUL, USER, AGENTS, the workspace's AGENTS) are the user's own instructions,
each capped at its write cap (50 KB by default, some 12,000 tokens): more than a small model's
whole window. In a prompt they share the boot region (:mod:`squad.memory.regions`) fairly: a
file smaller than an equal share keeps all of it and leaves the rest to the others, so only
the largest files are cut. A cut file keeps its first lines (a file says what matters first)
with a notice under its title saying how many lines were left out and that ``memory_read``
shows the whole file; a file whose share cannot hold its title and notice is left out. No
partial lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from squad.memory.assembly import BootFile
from squad.text.tokens import TokenCounter

__all__ = ["FittedBoot", "boot_notice", "boot_section", "fit_boot_files"]


def boot_notice(dropped: int) -> str:
    lines = "line" if dropped == 1 else "lines"
    return (
        f"[{dropped} {lines} left out to fit the prompt's boot budget; memory_read shows the "
        "whole file]"
    )


def boot_section(boot: BootFile) -> str:
    """A boot file as the system prompt shows it."""
    return f"## {boot.title}\n{boot.text.strip()}"


@dataclass(frozen=True)
class FittedBoot:
    files: tuple[BootFile, ...]
    """The files as injected (cut ones with their notice); those left out are not here."""
    tokens: int
    """Tokens of their sections."""
    dropped: dict[str, int]
    """Lines left out, by file title (a file left out entirely counts all its lines)."""


def fit_boot_files(files: Sequence[BootFile], budget: int, counter: TokenCounter) -> FittedBoot:
    """``files`` (non-empty, in prompt order) within ``budget`` tokens of sections."""
    costs = [counter.count(boot_section(f)) for f in files]
    shares = _fair_shares(costs, budget)
    kept: list[BootFile] = []
    dropped: dict[str, int] = {}
    tokens = 0
    for boot, cost, share in zip(files, costs, shares, strict=True):
        if cost <= share:
            kept.append(boot)
            tokens += cost
            continue
        cut, lost = _cut(boot, share, counter)
        dropped[boot.title] = lost
        if cut is not None:
            kept.append(cut)
            tokens += counter.count(boot_section(cut))
    return FittedBoot(tuple(kept), tokens, dropped)


def _fair_shares(costs: Sequence[int], budget: int) -> list[int]:
    """Each cost's share of ``budget``: the smallest first take what they need, up to an equal
    share of what is left; the others split the rest."""
    shares = [0] * len(costs)
    left = max(budget, 0)
    order = sorted(range(len(costs)), key=lambda i: costs[i])
    for done, index in enumerate(order):
        share = min(costs[index], left // (len(order) - done))
        shares[index] = share
        left -= share
    return shares


def _cut(boot: BootFile, share: int, counter: TokenCounter) -> tuple[BootFile | None, int]:
    """The longest head of ``boot`` whose section, with its notice, fits ``share``; and the
    number of lines left out."""
    lines = boot.text.strip().splitlines()

    def head(n: int) -> BootFile:
        return BootFile(boot.title, "\n".join([boot_notice(len(lines) - n), *lines[:n]]))

    if counter.count(boot_section(head(0))) > share:
        return None, len(lines)
    low, high = 0, len(lines) - 1  # the whole file does not fit
    while low < high:  # the most lines that fit: head(low) fits, head(high + 1) does not
        middle = (low + high + 1) // 2
        if counter.count(boot_section(head(middle))) <= share:
            low = middle
        else:
            high = middle - 1
    return head(low), len(lines) - low
