"""Sentences the pages build from data, in the reader's language (pure): a squad's schedule
from its fields, and why the daemon is down.

The CLI and the JSON API keep their English one-liners
(:func:`squad.daemon.triggers.describe_schedule`, :func:`squad.daemon.status.daemon_status`);
the pages word the same facts through a :class:`~squad.web.svg.Words`, so a Korean page
reads ``2시간마다, 시작 시 실행`` where the CLI says ``every 2h, on start``. A cron
expression stays as written: it is the one exact statement of when a squad runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from squad.web.svg import Words, duration_text, interval_text

__all__ = ["daemon_reason", "schedule_text"]


def schedule_text(schedule: Mapping[str, Any], words: Words) -> str:
    """``schedule``'s fields (``cron``, ``interval``, ``timezone``, ``run_on_start``, as
    :class:`squad.spec.models.Schedule` dumps them) as one line: ``every 2 h, on start``,
    ``cron '0 9 * * 1-5' (UTC)``, ``on demand``."""
    from squad.spec.schedule import parse_interval

    parts = []
    cron, interval = schedule.get("cron"), schedule.get("interval")
    if cron:
        timezone = schedule.get("timezone") or "UTC"
        parts.append(
            words("cron {expression} ({timezone})", expression=repr(cron), timezone=timezone)
        )
    elif interval:
        try:
            every = interval_text(int(parse_interval(interval).total_seconds()), words)
        except ValueError:
            every = str(interval)
        parts.append(words("every {interval}", interval=every))
    if schedule.get("run_on_start"):
        parts.append(words("on start"))
    return ", ".join(parts) if parts else words("on demand")


_REASONS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], Words], str]], ...] = (
    (re.compile(r"not running"), lambda m, words: words("not running")),
    (
        re.compile(r"not running \(pid (\d+) in the pid file is gone\)"),
        lambda m, words: words("not running (pid {pid} in the pid file is gone)", pid=m[1]),
    ),
    (re.compile(r"pid (\d+) is gone"), lambda m, words: words("pid {pid} is gone", pid=m[1])),
    (
        re.compile(r"starting \(no heartbeat yet\)"),
        lambda m, words: words("starting (no heartbeat yet)"),
    ),
    (re.compile(r"stopping"), lambda m, words: words("stopping")),
    (
        re.compile(r"heartbeat (\d+)s old: the daemon is stuck or its database unreachable"),
        lambda m, words: words(
            "heartbeat {age} old: the daemon is stuck or its database unreachable",
            age=duration_text(float(m[1]), words),
        ),
    ),
)
"""Each reason :func:`squad.daemon.status.daemon_status` gives, and its wording on a page."""


def daemon_reason(reason: str | None, words: Words) -> str:
    """Why the daemon is down, in the reader's language; a reason this module does not know
    (a newer daemon's) is shown as it came."""
    if not reason:
        return ""
    for pattern, say in _REASONS:
        found = pattern.fullmatch(reason)
        if found is not None:
            return say(found, words)
    return reason
