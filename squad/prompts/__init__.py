"""Prompt templates shipped as package data (read with importlib.resources)."""

from __future__ import annotations

from importlib import resources

__all__ = ["load"]


def load(name: str) -> str:
    """The text of ``squad/prompts/<name>``."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
