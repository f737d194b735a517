"""Prompt templates shipped as package data (read with importlib.resources)."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

__all__ = ["OFFLINE_PHRASES", "load", "offline_phrases"]

OFFLINE_PHRASES = "offline.yaml"
"""The built-in offline model's phrasing: every fixed sentence it ever says."""


@functools.cache
def load(name: str) -> str:
    """The text of ``squad/prompts/<name>``, read once per process (it ships with the code)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


@functools.cache
def offline_phrases() -> dict[str, Any]:
    """The offline model's templates (``offline.yaml``), parsed once per process.

    One source for the model that says them (:mod:`squad.model.offline`) and for the code
    that must recognise them as its chatter, never as facts (:mod:`squad.text.chatter`).
    """
    from ruamel.yaml import YAML

    loaded = YAML(typ="safe").load(load(OFFLINE_PHRASES))
    if not isinstance(loaded, dict):
        raise RuntimeError(f"squad/prompts/{OFFLINE_PHRASES} must hold a mapping")
    return loaded
