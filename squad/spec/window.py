"""Bounds of a model's context window in tokens: a module of its own, light enough for the
CLI's options to read at start (:mod:`squad.spec.models` loads pydantic)."""

from __future__ import annotations

__all__ = ["MAX_CONTEXT_WINDOW", "MIN_CONTEXT_WINDOW"]

MIN_CONTEXT_WINDOW = 2048
"""The smallest context window squad plans a prompt for: every region keeps a usable floor
(:func:`squad.memory.regions.minimum_window` is below it)."""
MAX_CONTEXT_WINDOW = 10_000_000
"""The largest window a model mapping may declare."""
