"""Credentials kept out of squad's storage, per way in, on a labelled set of chat messages.

    python -m bench.credential_paths [--credentials FILE] [--lookalikes FILE] [--limit N]
                                     [--paths remember,extract,chat] [--followups N]
                                     [--subprocess] [--json]

Each message goes, alone, into a fresh copy of one home (SQLite store, workspaces with their
git history, configs) through each path, by the real command line:

- ``remember``: ``squad memory remember --layer project`` (memory.md and its history commit;
  a refusal is a way of keeping it out);
- ``extract``: ``squad memory extract`` over a two-line transcript (the message, then the
  assistant's "Got it."), written to the agent's memory with the offline extractor;
- ``chat``: ``squad chat --message`` to an agent whose model, an OpenAI-compatible server on
  127.0.0.1 (:class:`squad.model.testing.OpenAIStubServer`, reached through litellm), repeats
  every message it is sent: the assistant echoes the credential, and the rolling summary
  repeats what it is given to summarise. The agent extracts after every turn
  (``trigger_interval: 1``), so the turn reaches the conversation archive too; its
  extraction calls find no fact. ``--followups N`` sends N more messages after it in a
  2,048-token window: from 10 on, the measured turn is folded into the chat's rolling
  summary (``agents/<agent>/chat-summary.json``). A chat writes no checkpoints (runs do);
  any SQLite file would be searched all the same;
- ``chat-quiet`` (on request): the same with a model that answers "Noted." (no echo).

Then everything under the home is searched for each value (:mod:`bench.credential_search`:
every file's bytes, every git object decompressed, every SQLite cell), less what the untouched
home already held. A credential message is kept out when none of its values is found. A
look-alike (no values) is a false alarm when squad refused it, the extractor dropped a fact of
it as a secret, or a ``[REDACTED:`` marker was stored.

Input: JSON Lines, gzipped or not; a credential line is ``{"text", "lang", "values", "form"}``,
a look-alike line the same without ``values``. Defaults: the third corpora of
``tests/text/data``. The report names messages by line number, language and form, never by
their text or values.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.credential_lab import DEFAULT_PATHS, PATHS, Outcome, measure
from bench.credential_samples import load
from squad.errors import UsageError

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "text" / "data"
DEFAULT_CREDENTIALS = DATA / "chat_credentials_third.jsonl.gz"
DEFAULT_LOOKALIKES = DATA / "chat_credential_negatives_third.jsonl.gz"


def summary(outcomes: Sequence[Outcome], paths: Sequence[str]) -> dict[str, Any]:
    """Per path: kept out, stored raw, noticed, false alarms, errors, and the misses."""
    report: dict[str, Any] = {}
    for path in paths:
        mine = [o for o in outcomes if o.path == path]
        creds = [o for o in mine if o.credential]
        looks = [o for o in mine if not o.credential]
        report[path] = {
            "credentials": len(creds),
            "kept_out": sum(o.kept_out for o in creds),
            "stored_raw": sum(not o.kept_out for o in creds),
            "noticed": sum(o.flagged for o in creds),
            "statuses": dict(Counter(o.status for o in creds)),
            "lookalikes": len(looks),
            "false_alarms": sum(o.flagged for o in looks),
            "errors": sum(o.status == "error" for o in mine),
            "misses": [o.row() for o in creds if not o.kept_out],
            "alarms": [o.row() for o in looks if o.flagged],
            "failed": [o.row() | {"credential": o.credential} for o in mine if o.status == "error"],
        }
    return report


def render(report: Mapping[str, Any], header: str) -> str:
    lines = [
        header,
        "",
        f"{'path':12} {'kept out':>14} {'stored raw':>11} {'noticed':>8} {'false alarms':>14}"
        f" {'errors':>7}",
    ]
    for path, row in report.items():
        lines.append(
            f"{path:12} {row['kept_out']:>6} of {row['credentials']:<5} {row['stored_raw']:>11}"
            f" {row['noticed']:>8} {row['false_alarms']:>5} of {row['lookalikes']:<6}"
            f" {row['errors']:>7}"
        )
    lines += [
        "",
        "noticed: refused, dropped as a secret, or a [REDACTED: marker stored. Misses and false",
        "alarms name the line of the input file, never its text or values.",
    ]
    for path, row in report.items():
        if row["misses"]:
            lines += ["", f"{path}: stored raw ({len(row['misses'])})"]
            lines += [
                f"  #{m['index']:<4} {m['lang']}  {m['form']}  [{m['status']}]"
                f"  -> {', '.join(m['places'])}"
                for m in row["misses"]
            ]
        by_form = Counter(m["form"] for m in row["misses"])
        if len(by_form) < len(row["misses"]):
            lines.append("  by form: " + ", ".join(f"{f} {n}" for f, n in by_form.most_common()))
        if row["alarms"]:
            lines += ["", f"{path}: false alarms ({len(row['alarms'])})"]
            lines += [
                f"  #{a['index']:<4} {a['lang']}  {a['form']}  [{a['status']}"
                f"{', redacted' if a['redacted'] else ''}]"
                for a in row["alarms"]
            ]
        if row["failed"]:
            lines += ["", f"{path}: errors ({len(row['failed'])})"]
            lines += [
                f"  #{f['index']:<4} {'credential' if f['credential'] else 'look-alike'}"
                f"  {f['lang']}  {f['form']}"
                for f in row["failed"]
            ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--credentials", type=Path, default=DEFAULT_CREDENTIALS)
    parser.add_argument("--lookalikes", type=Path, default=DEFAULT_LOOKALIKES)
    parser.add_argument("--limit", type=int, help="only the first N lines of each file")
    parser.add_argument(
        "--paths",
        default=",".join(DEFAULT_PATHS),
        help=f"comma-separated, of {', '.join(PATHS)} (default: %(default)s)",
    )
    parser.add_argument(
        "--followups", type=int, default=0, help="chat messages sent after the one measured"
    )
    parser.add_argument(
        "--subprocess", action="store_true", help="run the installed console script instead"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    try:
        paths = _paths(args.paths)
        if args.limit is not None and args.limit < 1:
            raise UsageError(f"--limit must be 1 or more, got {args.limit!r}")
        if not 0 <= args.followups <= 50:
            raise UsageError(f"--followups must be 0 to 50, got {args.followups!r}")
        credentials = load(args.credentials, credentials=True, limit=args.limit)
        lookalikes = load(args.lookalikes, credentials=False, limit=args.limit)
    except UsageError as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    os.nice(10)  # the machine is shared; a report can wait
    started = time.perf_counter()
    outcomes = measure(
        credentials,
        lookalikes,
        paths,
        followups=args.followups,
        use_subprocess=args.subprocess,
        progress=None if args.json else _say,
    )
    seconds = time.perf_counter() - started
    report = summary(outcomes, paths)
    if args.json:
        sets = {"credentials": str(args.credentials), "lookalikes": str(args.lookalikes)}
        print(
            json.dumps(
                {
                    "sets": sets,
                    "followups": args.followups,
                    "seconds": round(seconds, 1),
                    "paths": report,
                }
            )
        )
        return 0
    header = (
        f"{len(credentials)} credential messages ({args.credentials.name}), {len(lookalikes)}"
        f" look-alikes ({args.lookalikes.name}); {args.followups} chat follow-ups;"
        f" {seconds:.0f} s"
    )
    print(render(report, header))
    return 0


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")


def _paths(text: str) -> tuple[str, ...]:
    chosen = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in chosen if p not in PATHS]
    if unknown or not chosen:
        raise UsageError(f"--paths {text!r}: choose from {', '.join(PATHS)}")
    return tuple(dict.fromkeys(chosen))


if __name__ == "__main__":
    sys.exit(main())
