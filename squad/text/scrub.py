"""Credentials taken out of text already stored, in the shape it is stored in. Pure.

New text is redacted (or refused) on its way in; text stored before the detector learned a
shape is not. These functions redact it where it lies: plain text (a memory file, a message),
JSON values (a JSON column, a checkpoint's state), JSON documents and JSON Lines (a chat
summary, a run log), each value replaced by :func:`squad.text.secrets.redaction_marker`, the
one marker format. Each answer says what was found and where (a line, a key path), never the
value, so a caller can report and audit it.

JSON is redacted twice over: its text first, where a key names the value
(``"password": "hunter2x"``), kept only when it is still JSON of the same shape; then each
string inside it, where an escaped newline or a ``\\uXXXX`` hides a cue from the text. Both
are idempotent, as :func:`~squad.text.secrets.redact` is: a second pass finds nothing.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from squad.text.secrets import (
    CUE_MESSAGES,
    SecretMatch,
    find_secrets,
    redact,
    redact_conversation,
)

__all__ = [
    "Found",
    "ObjectScrubber",
    "Scrubbed",
    "scrub_conversation",
    "scrub_json_lines",
    "scrub_json_text",
    "scrub_text",
    "scrub_value",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Found:
    """One credential: its kind and where it was (``line 3``, ``line 2 .feedback.draft``)."""

    kind: str
    where: str


@dataclass(frozen=True)
class Scrubbed(Generic[T]):
    """A stored value with its credentials redacted, and what was found in it."""

    value: T
    found: tuple[Found, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.found)


ObjectScrubber = Callable[[Any, str, Callable[[Any, str], Any]], Any]
"""How to look inside an object that is no JSON value nor dataclass (a LangGraph ``Send``):
``(obj, its path, scrub(part, path))`` to the object rebuilt from its scrubbed parts, or
``obj`` itself when nothing in it changed."""


def _line_of(text: str, match: SecretMatch) -> int:
    return text.count("\n", 0, match.start) + 1


def _at(prefix: str, text: str, matches: Sequence[SecretMatch]) -> tuple[Found, ...]:
    """Where each match is: ``prefix``, and the line when ``text`` has more than one."""
    several = "\n" in text
    return tuple(
        Found(m.kind, _joined(prefix, f"line {_line_of(text, m)}" if several or not prefix else ""))
        for m in matches
    )


def _joined(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def scrub_text(text: str, *, previous: Sequence[str] = (), where: str = "") -> Scrubbed[str]:
    """``text`` redacted (``previous``: the messages before it, for a bare value's cue)."""
    new, matches = redact(text, previous=previous)
    return Scrubbed(new, _at(where, text, matches))


def scrub_conversation(
    messages: Sequence[str], *, previous: Sequence[str] = ()
) -> list[Scrubbed[str]]:
    """Each message of one conversation (oldest first) redacted after the ones before it,
    as :func:`~squad.text.secrets.redact_conversation` does: "what's the db password?" /
    "hunter2x" loses the value."""
    redacted = redact_conversation(messages, previous=previous)
    context = list(previous[-CUE_MESSAGES:])
    out: list[Scrubbed[str]] = []
    for message, new in zip(messages, redacted, strict=True):
        if new == message:
            out.append(Scrubbed(message))
        else:
            out.append(Scrubbed(new, _at("", message, find_secrets(message, previous=context))))
        context = [*context, message][-CUE_MESSAGES:]
    return out


def scrub_value(
    value: Any, *, where: str = "", objects: ObjectScrubber | None = None
) -> Scrubbed[Any]:
    """A JSON-like value (dicts, lists, tuples, strings, dataclasses) with every string in it
    redacted; dict keys are names, not values, and stay. Other objects pass through
    ``objects`` when given, else unchanged."""
    found: list[Found] = []

    def walk(item: Any, path: str) -> Any:
        if isinstance(item, str):
            scrubbed = scrub_text(item, where=path)
            found.extend(scrubbed.found)
            return scrubbed.value
        if isinstance(item, dict):
            out = {k: walk(v, f"{path}.{k}") for k, v in item.items()}
            return out if any(out[k] is not item[k] for k in item) else item
        if isinstance(item, list | tuple):
            parts = [walk(v, f"{path}[{i}]") for i, v in enumerate(item)]
            if all(a is b for a, b in zip(parts, item, strict=True)):
                return item
            if isinstance(item, list):
                return parts
            # a named tuple (LangGraph's snapshot of a channel) takes its fields one by one
            return type(item)(*parts) if hasattr(item, "_fields") else type(item)(parts)
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            changes = {}
            for field in dataclasses.fields(item):
                if not field.init:
                    continue
                old = getattr(item, field.name)
                new = walk(old, f"{path}.{field.name}")
                if new is not old:
                    changes[field.name] = new
            return dataclasses.replace(item, **changes) if changes else item
        if objects is not None:
            return objects(item, path, walk)
        return item

    new = walk(value, where)
    return Scrubbed(new, tuple(found))


def _shape(value: Any) -> Any:
    """``value`` with its strings blanked: what a text-level redaction must leave as it was."""
    if isinstance(value, str):
        return ""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return value


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def scrub_json_text(
    text: str, *, where: str = "", dump: Callable[[Any], str] = _compact
) -> Scrubbed[str]:
    """A JSON document kept as text redacted: its text where that leaves JSON of the same
    shape, then every string inside; re-serialised with ``dump`` only when a string inside
    changed. Text that is not JSON is redacted as plain text."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return scrub_text(text, where=where)
    found: list[Found] = []
    textual, matches = redact(text)
    if matches:
        try:
            redone = json.loads(textual)
        except (ValueError, RecursionError):
            redone = None
        if redone is not None and _shape(redone) == _shape(value):
            text, value = textual, redone
            found += _at(where, text, matches)
    inner = scrub_value(value)
    if inner.changed:
        text = dump(inner.value)
        found += [Found(f.kind, _joined(where, f.where)) for f in inner.found]
    return Scrubbed(text, tuple(found))


def scrub_json_lines(text: str, *, dump: Callable[[Any], str] = _compact) -> Scrubbed[str]:
    """JSON Lines (an event log) redacted line by line: a line that changes is written again
    with ``dump``, the others stay byte for byte; line ends are ``\\n`` only, as the logs'."""
    lines = text.split("\n")
    found: list[Found] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        scrubbed = scrub_json_text(line, where=f"line {number}", dump=dump)
        if scrubbed.changed:
            lines[number - 1] = scrubbed.value
            found += scrubbed.found
    return Scrubbed("\n".join(lines), tuple(found))
