"""A daemon left running with many squads on short intervals, history on: does every run end
up committed exactly once, does the daemon's memory stay flat, does the history stay whole?

``python -m bench.history_soak [--squads 20] [--interval 15s] [--minutes 8] [--json]`` starts
``squad daemon`` on throw-away folders (offline model), a person editing a memory file by
hand now and then, samples the daemon's RSS every 10 s, stops it, then checks each
workspace: the runs the store recorded against the run commits of its history (each run
once, by its ref), a clean working tree, ``git fsck``, and the size of each ``.git``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent

SQUAD = """\
name: {name}
goal: Keep the {name} notes current.
agents:
  - {{id: writer, role: Writes notes}}
  - {{id: reviewer, role: Reviews notes}}
tasks:
  - {{id: draft, description: Draft the {name} notes., agent: writer}}
  - {{id: check, description: Check the {name} notes., agent: reviewer, depends_on: [draft]}}
schedule: {{interval: {interval}}}
"""


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def soak(squads: int, interval: str, minutes: float, *, history: bool = True) -> dict[str, Any]:
    import pygit2

    from squad.history.log import commits, run_entries
    from squad.settings import Settings
    from squad.store import Store

    root = Path(tempfile.mkdtemp(prefix="squad-soak-"))
    configs = root / "configs"
    (configs / "squads").mkdir(parents=True)
    (configs / "settings.yaml").write_text("daemon: {http: {enabled: false}}\n")
    for n in range(squads):
        name = f"soak{n:02d}"
        (configs / "squads" / f"{name}.yaml").write_text(SQUAD.format(name=name, interval=interval))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
        "SQUAD_HOME": str(root / "home"),
        "SQUAD_WORKSPACES": str(root / "workspaces"),
        "SQUAD_CONFIGS": str(configs),
        "HOME": str(root),
        **({} if history else {"SQUAD_HISTORY": "off"}),
    }
    daemon = subprocess.Popen(
        [str(BIN / "squad"), "daemon"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    samples: list[tuple[float, int]] = []
    edits = 0
    started = time.monotonic()
    try:
        while time.monotonic() - started < minutes * 60:
            time.sleep(10)
            samples.append((time.monotonic() - started, _rss_kb(daemon.pid)))
            target = root / "workspaces" / f"soak{edits % squads:02d}" / "agents" / "writer"
            closing = time.monotonic() - started > minutes * 60 - 40  # leave time for a run
            if not closing and (target / "memory.md").is_file():  # a person's edit
                with (target / "memory.md").open("a") as handle:
                    handle.write(f"- edited by hand, {edits}\n")
                edits += 1
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=120)
    settings = Settings.load(env)
    out: dict[str, Any] = {
        "squads": squads,
        "minutes": minutes,
        "hand_edits": edits,
        "history": history,
    }
    with Store.open(settings.database_url) as store:
        runs = store.list_runs(limit=100_000)
        out["runs"] = len(runs)
        out["statuses"] = sorted({str(r.status) for r in runs})
        problems = []
        sizes = []
        unattributed = 0
        git = shutil.which("git")
        for n in range(squads if history else 0):
            name = f"soak{n:02d}"
            workspace = settings.workspaces / name
            repo = pygit2.Repository(str(workspace))
            ended = {r.id for r in runs if r.squad == name and r.ended_at is not None}
            committed = [e.run_id for e in run_entries(repo)]
            if ended - set(committed):
                problems.append(f"{name}: runs without a commit: {ended - set(committed)}")
            if len(committed) != len(set(committed)):
                problems.append(f"{name}: a run listed twice")
            missing = [r for r in ended if f"refs/runs/{r}" not in repo.references]
            if missing:
                problems.append(f"{name}: {len(missing)} runs without a ref")
            if repo.status():
                problems.append(f"{name}: working tree not clean: {sorted(repo.status())[:3]}")
            unattributed += sum(1 for c in commits(repo) if c.author.name == "unattributed")
            if git is not None:
                fsck = subprocess.run(
                    [git, "fsck", "--no-dangling"], cwd=workspace, capture_output=True, env=env
                )
                if fsck.returncode:
                    problems.append(f"{name}: git fsck failed")
            sizes.append(
                sum(p.stat().st_size for p in (workspace / ".git").rglob("*") if p.is_file())
            )
    out["problems"] = problems
    out["unattributed_commits"] = unattributed
    out["git_bytes_mean"] = sum(sizes) / len(sizes) if sizes else 0
    out["rss_kb"] = samples
    shutil.rmtree(root, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--squads", type=int, default=20)
    parser.add_argument("--interval", default="15s")
    parser.add_argument("--minutes", type=float, default=8.0)
    parser.add_argument("--history", choices=("on", "off"), default="on")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = soak(args.squads, args.interval, args.minutes, history=args.history == "on")
    if args.json:
        print(json.dumps(result))
        return 0
    rss = result["rss_kb"]
    third = max(1, len(rss) // 3)
    early = sum(kb for _, kb in rss[:third]) / third
    late = sum(kb for _, kb in rss[-third:]) / third
    print(
        f"{result['runs']} runs of {result['squads']} squads in {result['minutes']:g} min "
        f"({', '.join(result['statuses'])}); {result['hand_edits']} hand edits, "
        f"{result['unattributed_commits']} unattributed commits; .git "
        f"{result['git_bytes_mean'] / 1024:.0f} KB a squad; daemon RSS {early / 1024:.0f} MB in "
        f"the first third, {late / 1024:.0f} MB in the last (history {args.history})"
    )
    for problem in result["problems"]:
        print("PROBLEM:", problem)
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
