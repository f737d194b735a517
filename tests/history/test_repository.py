"""A workspace's history: what each commit holds, who it names, and what a fault leaves."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pygit2
import pytest

from squad.clock import FrozenClock
from squad.history import lock
from squad.history.author import SQUAD
from squad.history.history import History
from squad.history.ignore import GITIGNORE
from squad.history.log import commits, run_entries
from squad.history.message import RunNote, TaskNote, parse_trailers
from squad.history.repository import INTENT

GIT = shutil.which("git")
MEMORY = "agents/writer/memory.md"
SEED = "# Project Context\n\n# Coding Rules\n\n# Decisions\n\n# Insights\n"


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "docs-site"
    write(root, ".squad-config.json", '{"squad": "docs-site"}\n')
    write(root, MEMORY, SEED)
    write(root, "tasks/draft/output.md", "first draft\n")
    write(root, "logs/run-1.jsonl", '{"event": "run_start"}\n')
    write(root, "agents/writer/.memory.md.lock", "")
    return root


class Events(list[tuple[str, dict[str, Any]]]):
    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        self.append((event, fields))


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
def history(workspace: Path, events: Events) -> History:
    return History(workspace, "docs-site", clock=FrozenClock(), report=events)


def repo_of(workspace: Path) -> pygit2.Repository:
    return pygit2.Repository(str(workspace))


def log(workspace: Path) -> list[tuple[str, str]]:
    """(author, subject) of every commit, newest first."""
    return [(c.author.name, c.message.split("\n", 1)[0]) for c in commits(repo_of(workspace))]


def tracked(workspace: Path) -> set[str]:
    return {entry.path for entry in repo_of(workspace).index}


def clean(workspace: Path) -> bool:
    return repo_of(workspace).status() == {}


def note(run_id: str = "r1", status: str = "succeeded") -> RunNote:
    return RunNote(
        run_id,
        "docs-site",
        status,
        "schedule",
        tasks=(TaskNote("draft", "writer", "done"),),
        tokens_in=120,
        tokens_out=30,
        cost_usd=0.0125,
    )


def append_as_extractor(history: History, line: str) -> None:
    path = history.workspace / MEMORY
    with history.writing("extractor") as wrote:
        before = path.read_bytes()
        after = before + line.encode()
        path.write_bytes(after)
        wrote(MEMORY, before, after)


def test_history_starts_with_the_workspace_as_it_is_and_keeps_logs_and_locks_out(
    history: History, workspace: Path
) -> None:
    head = history.start()
    assert head is not None
    assert log(workspace) == [("squad", "history starts: docs-site")]
    assert (workspace / ".gitignore").read_text() == GITIGNORE
    assert tracked(workspace) == {
        ".gitignore",
        ".squad-config.json",
        MEMORY,
        "tasks/draft/output.md",
    }
    assert clean(workspace)
    config = repo_of(workspace).config
    assert config["squad.workspace"] == "docs-site"
    assert history.start() == head, "starting again changes nothing"


def test_a_run_commit_holds_what_the_run_wrote_and_its_figures(
    history: History, workspace: Path
) -> None:
    history.start()
    history.begin_run("r1")
    write(workspace, "tasks/draft/output.md", "second draft\n")
    write(workspace, "tasks/draft/status.json", '{"status": "done"}\n')
    write(workspace, "logs/run-r1.jsonl", "{}\n")
    result = history.commit_run(note())
    assert result is not None
    assert log(workspace)[0] == ("run", "run r1 succeeded: docs-site (schedule)")
    assert clean(workspace)
    entry = run_entries(repo_of(workspace))[0]
    assert (entry.run_id, entry.status, entry.trigger) == ("r1", "succeeded", "schedule")
    assert (entry.tokens_in, entry.tokens_out, entry.cost_usd) == (120, 30, 0.0125)
    assert entry.tasks == (("draft", "writer", "done"),)
    assert entry.commit == result.sha
    assert "logs/run-r1.jsonl" not in tracked(workspace)


def test_a_memory_change_made_during_a_run_commits_its_own_line_and_the_run_the_rest(
    history: History, workspace: Path
) -> None:
    history.start()
    history.begin_run("r1")
    write(workspace, MEMORY, SEED + "- the agent's line\n")  # written inside the run
    append_as_extractor(history, "- the extractor's line\n")
    repo = repo_of(workspace)
    pass_commit = repo[repo.head.target]
    committed = repo[pass_commit.tree[MEMORY].id].data.decode()
    assert committed == SEED + "- the extractor's line\n"
    assert pass_commit.author.name == "extractor"
    history.commit_run(note())
    repo = repo_of(workspace)
    run_commit = repo[repo.head.target]
    diff = repo.diff(pass_commit, run_commit).patch
    assert "+- the agent's line" in diff
    assert (
        "extractor's line"
        not in diff.replace("- the extractor's line\n", "", 1).split("+- the agent")[1]
    )
    assert clean(workspace)


def test_hand_edits_are_committed_as_unattributed_before_the_next_run(
    history: History, workspace: Path
) -> None:
    history.start()
    write(workspace, MEMORY, SEED + "- typed by a person\n")
    history.begin_run("r1")
    assert log(workspace)[0] == ("unattributed", "changes made by hand: 1 file")
    write(workspace, "tasks/draft/output.md", "run output\n")
    history.commit_run(note())
    repo = repo_of(workspace)
    run_commit = repo[repo.head.target]
    changed = {p.delta.new_file.path for p in repo.diff(run_commit.parents[0], run_commit)}
    assert changed == {"tasks/draft/output.md"}, "the person's edit is not the run's"


def test_no_hand_edit_commit_while_a_run_is_live(history: History, workspace: Path) -> None:
    history.start()
    write(workspace, "tasks/draft/output.md", "a run's partial output\n")
    assert history.record_hand_edits(run_live=True) is None
    assert len(log(workspace)) == 1


def test_what_a_killed_run_left_becomes_its_partial_commit_before_the_next_run(
    history: History, workspace: Path
) -> None:
    history.start()
    history.begin_run("dead")
    write(workspace, "tasks/draft/output.md", "half of the dead run's work\n")
    # the process died here: no commit_run
    history.begin_run("next")
    author, subject = log(workspace)[0]
    assert author == "run"
    assert subject.startswith("run dead interrupted (partial")


def test_a_resumed_run_keeps_its_own_leftovers_for_its_commit(
    history: History, workspace: Path
) -> None:
    history.start()
    history.begin_run("r1")
    write(workspace, "tasks/draft/output.md", "before the crash\n")
    history.begin_run("r1")  # resumed after a crash
    assert len(log(workspace)) == 1
    history.commit_run(note())
    assert log(workspace)[0][1] == "run r1 succeeded: docs-site (schedule)"


def test_a_file_holding_a_credential_stays_out_of_the_commit_and_the_commit_says_so(
    history: History, workspace: Path
) -> None:
    history.start()
    history.begin_run("r1")
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    write(workspace, "tasks/draft/output.md", f"deploy with token {secret}\n")
    write(workspace, "tasks/draft/notes.md", "nothing secret here\n")
    result = history.commit_run(note())
    assert result is not None
    assert result.left_out and result.left_out[0].startswith("tasks/draft/output.md")
    repo = repo_of(workspace)
    head = repo[repo.head.target]
    assert repo[head.tree["tasks/draft/output.md"].id].data == b"first draft\n"
    assert "tasks/draft/notes.md" in {e.path for e in repo.index}
    assert "left out: tasks/draft/output.md" in head.message
    assert secret not in head.message
    for commit in commits(repo):
        for blob in _blobs(repo, commit.tree):
            assert secret.encode() not in blob


def _blobs(repo: pygit2.Repository, tree: Any) -> list[bytes]:
    out = []
    for entry in tree:
        obj = repo[entry.id]
        out += _blobs(repo, obj) if isinstance(obj, pygit2.Tree) else [obj.data]
    return out


def test_a_file_written_again_between_its_check_and_its_staging_commits_what_was_checked(
    workspace: Path,
) -> None:
    """The credential check reads a file, then the commit stages it: a writer in between
    (a person saving, a late tool write) must not put unchecked text into the history."""
    from squad.history.staging import StagingPolicy

    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    late = f"second draft\ndeploy with token {secret}\n"

    class WriterBetween(StagingPolicy):
        def refusal(self, path: str, before: bytes | None, after: bytes) -> str | None:
            why = super().refusal(path, before, after)
            if path == "tasks/draft/output.md" and secret.encode() not in after:
                write(workspace, path, late)  # after the check read it, before it is staged
            return why

    history = History(workspace, "docs-site", clock=FrozenClock(), staging=WriterBetween())
    history.start()
    history.begin_run("r1")
    write(workspace, "tasks/draft/output.md", "second draft\n")
    assert history.commit_run(note()) is not None
    repo = repo_of(workspace)
    head = repo[repo.head.target]
    assert repo[head.tree["tasks/draft/output.md"].id].data == b"second draft\n"
    assert (workspace / "tasks/draft/output.md").read_text() == late  # left as it is on disk
    assert repo.status().get("tasks/draft/output.md") == pygit2.enums.FileStatus.WT_MODIFIED

    history.begin_run("r2")  # the next commit checks what the file holds now, and refuses it
    second = history.commit_run(note("r2"))
    assert second is not None and second.left_out[0].startswith("tasks/draft/output.md")
    for commit in commits(repo_of(workspace)):
        for blob in _blobs(repo, commit.tree):
            assert secret.encode() not in blob


def test_a_workspace_with_its_own_line_ending_rules_commits_clean(
    history: History, workspace: Path
) -> None:
    """A person's .gitattributes still applies as git applies it: a CRLF file under
    ``text eol=lf`` is committed with LF endings and the tree is clean after (the check
    that a file was not written again compares the file, not its bytes with the blob)."""
    write(workspace, ".gitattributes", "*.md text eol=lf\n")
    history.start()
    history.begin_run("r1")
    (workspace / "tasks/draft/output.md").write_bytes(b"line one\r\nline two\r\n")
    assert history.commit_run(note()) is not None
    repo = repo_of(workspace)
    blob = repo[repo[repo.head.target].tree["tasks/draft/output.md"].id].data
    assert blob == b"line one\nline two\n"
    assert clean(workspace)


def test_a_credential_staged_outside_squad_stays_out_of_its_next_commit(
    history: History, workspace: Path
) -> None:
    """A person's `git add` (or anything else that put a blob in the index) is no way in:
    a file kept out of a commit adds nothing to it, whatever the index held for it."""
    history.start()
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    for path in ("tasks/draft/output.md", "tasks/draft/new.md"):  # tracked, and new
        write(workspace, path, f"deploy with token {secret}\n")
        index = repo_of(workspace).index
        index.add(path)
        index.write()
    assert history.record_hand_edits() is not None
    repo = repo_of(workspace)
    head = repo[repo.head.target]
    assert "left out: tasks/draft/new.md" in head.message
    assert repo[head.tree["tasks/draft/output.md"].id].data == b"first draft\n"
    assert "tasks/draft/new.md" not in head.tree["tasks/draft"]
    for commit in commits(repo):
        for blob in _blobs(repo, commit.tree):
            assert secret.encode() not in blob
    assert secret in (workspace / "tasks/draft/new.md").read_text()  # left as it is on disk


def test_a_memory_file_written_again_as_its_change_commits_leaves_the_index_on_the_commit(
    history: History, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory change commits exactly the bytes its writer checked; a write landing between
    the commit's look at the file and its staging shows as a change of the working tree (the
    next commit checks it), not as something already staged."""
    from squad.history.repository import Repository

    history.start()
    look = Repository._read

    def written_again_after_the_look(
        self: Repository, path: str
    ) -> tuple[bytes, tuple[int, ...]] | None:
        read = look(self, path)
        if path == MEMORY:
            write(workspace, MEMORY, SEED + "- written again by hand\n")
        return read

    monkeypatch.setattr(Repository, "_read", written_again_after_the_look)
    append_as_extractor(history, "- the extractor's line\n")
    monkeypatch.undo()
    repo = repo_of(workspace)
    committed = repo[repo.head.target].tree[MEMORY].id
    assert repo[committed].data == (SEED + "- the extractor's line\n").encode()
    assert repo.index[MEMORY].id == committed
    assert repo.status().get(MEMORY) == pygit2.enums.FileStatus.WT_MODIFIED


def test_a_file_over_the_size_cap_stays_out(workspace: Path) -> None:
    from squad.history.staging import StagingPolicy

    history = History(workspace, "docs-site", staging=StagingPolicy(max_file_bytes=1000))
    history.start()
    history.begin_run("r1")
    write(workspace, "tasks/draft/big.csv", "x" * 5000)
    result = history.commit_run(note())
    assert result is not None and result.left_out[0].startswith("tasks/draft/big.csv")
    assert "tasks/draft/big.csv" not in tracked(workspace)
    message = repo_of(workspace)[repo_of(workspace).head.target].message
    assert "left out: tasks/draft/big.csv (5,000 bytes, over the history's 1,000-byte" in message
    assert "credential" not in message  # it is kept out for its size, and says so


def test_a_git_folder_squad_did_not_make_pauses_history_and_is_never_written(
    tmp_path: Path, workspace: Path, events: Events
) -> None:
    theirs = pygit2.init_repository(str(workspace), initial_head="main")
    sig = pygit2.Signature("someone", "someone@example.com")
    theirs.index.add(".squad-config.json")
    theirs.index.write()
    before = theirs.create_commit("HEAD", sig, sig, "their commit", theirs.index.write_tree(), [])
    history = History(workspace, "docs-site", report=events)
    assert history.state().state == "foreign"
    assert history.start() is None
    history.begin_run("r1")
    write(workspace, "tasks/draft/output.md", "the run goes on\n")
    assert history.commit_run(note()) is None
    assert repo_of(workspace).head.target == before
    assert not (workspace / ".gitignore").exists()
    paused = [fields for event, fields in events if event == "history_paused"]
    assert paused and "not made by squad" in paused[0]["reason"]


def test_a_corrupt_git_folder_pauses_history_loudly_and_the_work_goes_on(
    history: History, workspace: Path, events: Events
) -> None:
    history.start()
    head = str(repo_of(workspace).head.target)
    obj = workspace / ".git" / "objects" / head[:2] / head[2:]
    obj.chmod(0o644)
    obj.write_bytes(b"not a git object")
    assert history.state().state == "broken"
    history.begin_run("r1")
    assert history.commit_run(note()) is None
    reasons = [fields["reason"] for event, fields in events if event == "history_paused"]
    assert reasons and all("damaged" in r or "cannot" in r for r in reasons)


def test_an_interrupted_commit_whose_ref_moved_gets_its_index_back(
    history: History, workspace: Path
) -> None:
    history.start()
    repo = repo_of(workspace)
    parent = repo.head.target
    write(workspace, "tasks/draft/output.md", "made by the killed commit\n")
    staged = pygit2.Index()
    staged.read_tree(repo[parent].tree)
    staged.add(
        pygit2.IndexEntry(
            "tasks/draft/output.md",
            repo.create_blob(b"made by the killed commit\n"),
            pygit2.enums.FileMode.BLOB,
        )
    )
    tree = staged.write_tree(repo)
    sig = pygit2.Signature("run", "run@squad", 1, 0)
    made = repo.create_commit("refs/heads/main", sig, sig, "run r9 succeeded\n", tree, [parent])
    (workspace / ".git" / "index.lock").write_bytes(b"")  # killed while writing the index
    (workspace / ".git" / INTENT).write_text(
        json.dumps({"mode": "all", "author": "run", "message": "x", "parent": str(parent)})
    )
    assert not clean(workspace)
    with lock.exclusive(workspace):
        history.repository.ensure()
    repo = repo_of(workspace)
    assert repo.head.target == made, "the commit stands; nothing is made twice"
    assert not (workspace / ".git" / "index.lock").exists()
    assert not (workspace / ".git" / INTENT).exists()
    assert clean(workspace)


def test_an_interrupted_commit_with_no_objects_is_made_again_from_the_working_tree(
    history: History, workspace: Path
) -> None:
    history.start()
    write(workspace, "tasks/draft/output.md", "written before the kill\n")
    message = "run r9 succeeded: docs-site (manual)\n\nSquad-Kind: run\nSquad-Run: r9\n"
    head = str(repo_of(workspace).head.target)
    (workspace / ".git" / INTENT).write_text(
        json.dumps(
            {"mode": "all", "author": "run", "message": message, "paths": None, "parent": head}
        )
    )
    with lock.exclusive(workspace):
        history.repository.ensure()
    author, subject = log(workspace)[0]
    assert (author, subject) == (
        "run",
        "run r9 succeeded: docs-site (manual) (completed after an interruption)",
    )
    assert (
        parse_trailers(repo_of(workspace)[repo_of(workspace).head.target].message).get("Squad-Run")
        == "r9"
    )
    assert clean(workspace)


KILLER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from squad.history.history import History
    from squad.history.message import RunNote
    ws = Path(sys.argv[1])
    h = History(ws, "docs-site")
    n = 0
    while True:
        n += 1
        h.begin_run(f"r{n}")
        out = ws / "tasks" / "draft" / "output.md"
        out.write_text(f"draft {n}\\n" * 50)
        h.commit_run(RunNote(f"r{n}", "docs-site", "succeeded", "manual"))
        path = ws / "agents" / "writer" / "memory.md"
        with h.writing("extractor") as wrote:
            before = path.read_bytes()
            after = before + f"- fact {n}\\n".encode()
            path.write_bytes(after)
            wrote("agents/writer/memory.md", before, after)
    """
)


@pytest.mark.slow
def test_kills_at_any_moment_leave_a_repository_git_reads_and_the_next_writer_completes(
    history: History, workspace: Path, tmp_path: Path
) -> None:
    history.start()
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    kills = 25
    for attempt in range(kills):
        proc = subprocess.Popen([sys.executable, str(script), str(workspace)])
        time.sleep(0.3 + (attempt % 7) * 0.037)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        history.record_hand_edits()  # the next holder: completes, then commits leftovers
        repo = repo_of(workspace)
        assert not repo.head_is_unborn
        assert clean(workspace), repo.status()
        for commit in commits(repo):
            commit.tree  # noqa: B018 - every commit and tree readable
    if GIT is not None:
        fsck = subprocess.run(
            [GIT, "fsck", "--no-dangling"],
            cwd=workspace,
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": str(tmp_path)},
        )
        assert fsck.returncode == 0, fsck.stderr
    assert len(log(workspace)) > kills


@pytest.mark.slow
@pytest.mark.skipif(GIT is None, reason="no git command on this machine")
def test_plain_git_reads_the_history(history: History, workspace: Path, tmp_path: Path) -> None:
    history.start()
    history.begin_run("r1")
    write(workspace, "tasks/draft/output.md", "second\n")
    history.commit_run(note())
    env = {**os.environ, "HOME": str(tmp_path)}
    shown = subprocess.run(
        [GIT, "log", "--format=%an|%s|%(trailers:key=Squad-Run,valueonly)"],
        cwd=workspace,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.split("\n")
    assert shown[0] == "run|run r1 succeeded: docs-site (schedule)|r1"
    status = subprocess.run(
        [GIT, "status", "--porcelain"],
        cwd=workspace,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert status.stdout == ""


def test_the_squad_author_is_named(history: History, workspace: Path) -> None:
    history.start()
    assert repo_of(workspace)[repo_of(workspace).head.target].author.name == SQUAD.name


def _loose(workspace: Path) -> int:
    objects = workspace / ".git" / "objects"
    return sum(1 for d in objects.glob("[0-9a-f][0-9a-f]") for _ in d.iterdir())


@pytest.mark.slow
def test_packing_keeps_every_commit_and_run_ref_and_drops_the_loose_objects(
    history: History, workspace: Path, tmp_path: Path
) -> None:
    history.start()
    for n in range(30):
        history.begin_run(f"r{n}")
        write(workspace, "tasks/draft/output.md", f"draft {n}\n" + "same line\n" * 40)
        history.commit_run(note(f"r{n}"))
    subjects_before = log(workspace)
    assert _loose(workspace) > 30
    report = history.pack(full=True)
    assert report is not None and report.full and report.bytes_after < report.bytes_before
    assert _loose(workspace) == 0
    assert log(workspace) == subjects_before
    repo = repo_of(workspace)
    assert len([r for r in repo.references if r.startswith("refs/runs/")]) == 30
    assert repo.status() == {}
    if GIT is not None:
        fsck = subprocess.run(
            [GIT, "fsck", "--strict", "--no-dangling"],
            cwd=workspace,
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": str(tmp_path)},
        )
        assert fsck.returncode == 0, fsck.stderr


def test_a_run_start_packs_a_history_grown_past_the_auto_pack_size(
    history: History, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import squad.history.history as module
    import squad.history.pack as pack_module

    history.start()
    for n in range(40):
        write(workspace, f"tasks/t{n}/output.md", f"output {n}\n")
    history.record_hand_edits()
    monkeypatch.setattr(module, "AUTO_PACK_OBJECTS", 0)
    monkeypatch.setattr(module, "loose_estimate", lambda objects: _loose(workspace))
    assert pack_module.AUTO_PACK_OBJECTS == 6700
    history.begin_run("r1")
    assert _loose(workspace) == 0
    assert list((workspace / ".git" / "objects" / "pack").glob("*.pack"))


@pytest.mark.slow
def test_a_process_reading_many_packed_histories_keeps_few_pack_files_open(
    tmp_path: Path,
) -> None:
    """A daemon reads a hundred histories for weeks: libgit2 must not keep every pack open."""
    from squad.history.engine import PACK_FILES

    probe = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from squad.history.history import History
        kept = []
        for n in range({PACK_FILES} + 12):
            root = Path({str(tmp_path)!r}) / f"ws{{n}}"
            (root / "tasks").mkdir(parents=True)
            (root / "tasks" / "out.md").write_text(f"output {{n}}\\n")
            history = History(root, "ws{{n}}")
            history.start()
            history.pack(full=True)
            repo = history.open()
            repo.get(repo.head.target).tree  # reads through the pack
            kept.append(repo)
        packs = [
            os.readlink(f"/proc/self/fd/{{fd}}") for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{{fd}}")
        ]
        print(sum(p.endswith(".pack") for p in packs))
        """
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) <= PACK_FILES
