"""Prompt templates shipped as package data (read with importlib.resources)."""

from __future__ import annotations

import functools
from importlib import resources

__all__ = ["load"]


@functools.cache
def load(name: str) -> str:
    """The text of ``squad/prompts/<name>``, read once per process (it ships with the code)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
