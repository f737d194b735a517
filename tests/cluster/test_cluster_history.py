"""Two workers and a person at the CLI write one workspace's history at once: every run is
committed once, by the node that ran it, every memory change is its own commit, and the
repository is whole."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pygit2
import pytest
from sqlalchemy.engine import Engine

from squad.history.log import commits, run_entries
from tests.support.cluster import cluster_on

pytestmark = pytest.mark.postgres


def test_two_nodes_and_a_memory_writer_commit_one_workspaces_history_whole(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=0.05) as cluster:
        cluster.add_squad("hist", tasks=2)
        cluster.register("hist")
        workers = [cluster.start("worker", f"w{n}") for n in range(2)]
        cluster.wait_for(lambda: all(w.events("node_start") for w in workers), "the workers")
        for n in range(8):
            cluster.defer("hist", f"h{n}")
        ctx = cluster.app.agent("hist", "worker")
        remembered: list[str] = []

        def remember() -> None:  # a person at the CLI, while the runs go on
            for n in range(12):
                text = f"Fact number {n} learnt by hand"
                cluster.app.memory.remember(ctx, text, layer="project", actor="cli")
                remembered.append(text)

        writer = threading.Thread(target=remember)
        writer.start()
        cluster.wait_for(
            lambda: len([r for r in cluster.runs() if r.ended_at is not None]) == 8,
            "8 runs to end",
        )
        writer.join(timeout=60)
        assert len(remembered) == 12

        workspace = cluster.workspaces / "hist"
        repo = pygit2.Repository(str(workspace))
        runs = {r.id for r in cluster.runs()}
        entries = run_entries(repo)
        assert {e.run_id for e in entries} == runs
        assert {e.status for e in entries} == {"succeeded"}
        for run_id in runs:
            assert f"refs/runs/{run_id}" in repo.references
        run_commits = [c for c in commits(repo) if "Squad-Kind: run" in c.message]
        assert len(run_commits) == 8, "each run committed once"
        committers = {c.committer.name for c in run_commits}
        assert committers <= {"squad on w0", "squad on w1"}, committers
        memory = [c for c in commits(repo) if c.author.name == "cli"]
        assert len(memory) == 12, "each memory change its own commit"
        for commit in memory:
            parent = commit.parents[0]
            changed = {p.delta.new_file.path for p in repo.diff(parent, commit)}
            assert changed == {"agents/worker/memory.md"}
        text = (workspace / "agents" / "worker" / "memory.md").read_text()
        assert all(line in text for line in remembered)
        assert repo.status() == {}
        git = shutil.which("git")
        if git is not None:
            fsck = subprocess.run(
                [git, "fsck", "--strict", "--no-dangling"],
                cwd=workspace,
                capture_output=True,
                text=True,
                env={**os.environ, "HOME": str(tmp_path)},
            )
            assert fsck.returncode == 0, fsck.stderr
