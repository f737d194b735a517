"""Per-workspace git history: pygit2 (libgit2) against dulwich and the ``git`` command.

``python -m bench.history_engines [--json] [--quick] [--dulwich-deltify]`` runs one small
implementation per engine of each operation squad needs, in the same run, on deterministic
content (a weekly-report ``output.md`` changing a few lines a run, ``status.json``, plans, a
2-20 KB append-only ``memory.md``), and prints median / p95 wall times (``perf_counter``) of:
cold import (fresh interpreter minus a bare one; git: one ``git --version``); init + first
commit of a 30-file workspace; run commit (4 output.md + 4 status.json rewritten, staged
through the on-disk index and its stat cache, tree, commit on main, index = HEAD; N = 50 and
2,000 tracked files, 200 commits); status (N = 2,000, one changed and one new file); exact
commit (given bytes for agents/writer/memory.md put in HEAD's tree without reading the
working tree; ref and index entry updated); log of a 10,000-commit history (every message;
only commits touching memory.md, ~1 in 5); diff (patch + per-file line counts between
commits 9,000 apart, whole tree and one path; ``git diff A B`` alone as baseline); pack
(.git size loose, time to pack all reachable objects and drop the loose copies, size after,
``git fsck`` + ``git rev-list`` on it, log/diff again); pygit2's commits with fsync on.

The history is built once by pygit2 (the fastest writer) and copied for the other engines:
the on-disk format is shared. No global git config: HOME is an empty temporary folder, the
identity is explicit. Every engine's results are checked against the git CLI's.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pygit2
from dulwich import porcelain
from dulwich.diffstat import parse_patch
from dulwich.index import IndexEntry
from dulwich.object_store import commit_tree_changes
from dulwich.objects import Blob, Commit, ShaFile
from dulwich.pack import deltify_pack_objects
from dulwich.patch import write_object_diff
from dulwich.repo import Repo
from pygit2.enums import FileMode, SortMode

NAME, EMAIL = "Squad", "squad@localhost"
IDENT = f"{NAME} <{EMAIL}>".encode()
EPOCH = 1_735_689_600  # 2025-01-01T00:00:00Z: commit times are EPOCH + an hourly counter
MAIN = "refs/heads/main"
TASKS = [f"t{i}" for i in range(1, 9)]
AGENTS = ["planner", "researcher", "writer", "reviewer"]
MEMORY = "agents/writer/memory.md"
_WORD_LINES = (
    "agent plan task report memory workspace release deploy cluster queue cache retry latency",
    "error metric customer revenue churn survey draft review source claim increase decrease",
    "stable risk owner deadline migration schema index query outline summary week figure budget",
    "the a of and to in for on with that by from is was are",
)
WORDS = " ".join(_WORD_LINES).split()
Numstat = list[tuple[str, int, int]]
FSCK = ("git", "fsck", "--no-progress", "--strict")
PACK_COLUMNS = ("time s", "disk MB", "apparent", "packs", "deltas", "loose", "fsck", "rev-list")


class Content:
    """Deterministic workspace content; each engine gets its own instance with the same seed."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.report = {t: [self._sentence() for _ in range(30)] for t in TASKS}
        self.memory = {a: [f"- {self._sentence()}" for _ in range(30)] for a in AGENTS}
        self.runs = self.plans = self.clock = 0

    def _sentence(self) -> str:
        words = [self.rng.choice(WORDS) for _ in range(self.rng.randint(6, 14))]
        return " ".join(words).capitalize() + "."

    def tick(self) -> int:
        self.clock += 1
        return EPOCH + 3600 * self.clock

    def output(self, task: str) -> bytes:
        lines = self.report[task]  # the standing findings: one revised every ~3 runs
        if self.rng.random() < 0.3:
            lines[self.rng.randrange(len(lines))] = self._sentence()
        day = time.strftime("%Y-%m-%d", time.gmtime(EPOCH + 86400 * 7 * self.runs))
        week = "".join(f"- {self._sentence()}\n" for _ in range(4))  # new every run
        nums = "".join(f"| {k} | {self.rng.randint(10, 999)} |\n" for k in ("runs", "errors"))
        body = "".join(f"- {line}\n" for line in lines)
        head = f"# Weekly report: {task}\n\nWeek of {day} (run {self.runs})\n\n## This week\n\n"
        return f"{head}{week}\n## Findings\n\n{body}\n## Numbers\n\n|||\n|---|---|\n{nums}".encode()

    def status(self, task: str) -> bytes:
        start = EPOCH + self.runs * 60
        doc = {"task": task, "state": "done", "run": self.runs, "started": start}
        doc |= {"finished": start + self.rng.randint(5, 50), "tokens": self.rng.randint(900, 9000)}
        doc |= {"agent": "writer", "model": "instant", "cost_usd": self.rng.randint(1, 999) / 1e4}
        return json.dumps(doc, indent=2).encode()

    def plan(self) -> tuple[str, bytes]:
        self.plans += 1
        steps = "".join(f"{i}. {self._sentence()}\n" for i in range(1, 8))
        return f"plans/plan-{self.plans:04d}.md", f"# Plan {self.plans}\n\n{steps}".encode()

    def remember(self, agent: str) -> bytes:
        lines = self.memory[agent]
        lines.append(f"- {self._sentence()}")
        if sum(len(x) + 1 for x in lines) > 20_000:  # compaction keeps the file at 2-20 KB
            del lines[: len(lines) // 2]
        return ("# Memory\n\n" + "\n".join(lines) + "\n").encode()

    def workspace(self, files: int) -> dict[str, bytes]:
        ws = {"squad.yaml": b"name: bench\n", "README.md": b"# Bench workspace\n"}
        for a in AGENTS:
            ws[f"agents/{a}/agent.yaml"] = f"name: {a}\nmodel: instant\n".encode()
            ws[f"agents/{a}/memory.md"] = self.remember(a)
        for t in TASKS:
            ws[f"tasks/{t}/output.md"] = self.output(t)
            ws[f"tasks/{t}/status.json"] = self.status(t)
        while len(ws) < files:
            path, data = self.plan()
            ws[path] = data
        return ws

    def run(self) -> dict[str, bytes]:
        """The files one finished run rewrites: 4 tasks, and a new plan one run in 25."""
        self.runs += 1
        changed: dict[str, bytes] = {}
        for t in TASKS[self.runs % 2 :: 2]:
            changed[f"tasks/{t}/output.md"] = self.output(t)
            changed[f"tasks/{t}/status.json"] = self.status(t)
        if self.runs % 25 == 0:
            path, data = self.plan()
            changed[path] = data
        return changed

    def message(self, changed: dict[str, bytes]) -> str:
        return f"run {self.runs}: weekly report\n\nChanged: {', '.join(sorted(changed))}\n"


def write_files(root: Path, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)


class Engine(Protocol):
    name: str

    def init_commit(self, ws: Path, when: int) -> None: ...
    def run_commit(self, ws: Path, msg: str, when: int) -> None: ...
    def status(self, ws: Path) -> list[str]: ...
    def exact_commit(self, ws: Path, path: str, data: bytes, msg: str, when: int) -> None: ...
    def log_all(self, repo: Path) -> int: ...
    def log_path(self, repo: Path, path: str) -> int: ...
    def diff(self, repo: Path, a: str, b: str, path: str | None) -> tuple[str, Numstat]: ...
    def pack(self, repo: Path) -> None: ...


class Pygit2Engine:
    name = "pygit2"

    def init_commit(self, ws: Path, when: int) -> None:
        pygit2.init_repository(str(ws), initial_head="main")
        self._commit_index(pygit2.Repository(str(ws)), "init\n", when, [])

    def run_commit(self, ws: Path, msg: str, when: int) -> None:
        repo = pygit2.Repository(str(ws))
        self._commit_index(repo, msg, when, [repo.references[MAIN].target])

    def _commit_index(self, repo: Any, msg: str, when: int, parents: list[Any]) -> None:
        index = repo.index  # the on-disk index; add_all diffs it against the workdir (stat cache)
        index.add_all()  # adds new and changed files (not deletions: that is update_all)
        tree = index.write_tree()  # before write(): it refreshes the cache-tree write() saves
        index.write()
        sig = pygit2.Signature(NAME, EMAIL, when, 0)
        repo.create_commit(MAIN, sig, sig, msg, tree, parents)

    def status(self, ws: Path) -> list[str]:
        return sorted(pygit2.Repository(str(ws)).status(untracked_files="all"))

    def _put(self, repo: pygit2.Repository, tree: Any, parts: list[str], blob: pygit2.Oid) -> Any:
        builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
        if len(parts) == 1:
            builder.insert(parts[0], blob, FileMode.BLOB)
        else:
            sub = tree[parts[0]] if tree is not None and parts[0] in tree else None
            builder.insert(parts[0], self._put(repo, sub, parts[1:], blob), FileMode.TREE)
        return builder.write()

    def exact_commit(self, ws: Path, path: str, data: bytes, msg: str, when: int) -> None:
        repo = pygit2.Repository(str(ws))
        parent = repo[repo.references[MAIN].target].peel(pygit2.Commit)
        blob = repo.create_blob(data)
        tree = self._put(repo, parent.tree, path.split("/"), blob)
        sig = pygit2.Signature(NAME, EMAIL, when, 0)
        # with a ref name, libgit2 refuses if the ref no longer points at parents[0]
        repo.create_commit(MAIN, sig, sig, msg, tree, [parent.id])
        index = repo.index
        index.add(pygit2.IndexEntry(path, blob, FileMode.BLOB))  # no stat: re-hashed once later
        index.write()

    def log_all(self, repo: Path) -> int:
        r = pygit2.Repository(str(repo))
        n = 0
        for c in r.walk(r.references[MAIN].target, SortMode.TOPOLOGICAL):
            subject, _, body = c.message.partition("\n")
            n += len(subject) > 0 <= len(body)
        return n

    def log_path(self, repo: Path, path: str) -> int:
        r = pygit2.Repository(str(repo))

        def blob_id(tree: pygit2.Tree) -> pygit2.Oid | None:
            return tree[path].id if path in tree else None

        hits = 0
        for c in r.walk(r.references[MAIN].target, SortMode.TOPOLOGICAL):
            hits += blob_id(c.tree) != (blob_id(c.parents[0].tree) if c.parents else None)
        return hits

    def diff(self, repo: Path, a: str, b: str, path: str | None) -> tuple[str, Numstat]:
        r = pygit2.Repository(str(repo))
        ta, tb = r[a].peel(pygit2.Tree), r[b].peel(pygit2.Tree)
        if path is not None:  # tree diffs take no pathspec in pygit2: diff the two blobs
            old, new = (t[path].peel(pygit2.Blob) if path in t else None for t in (ta, tb))
            patch = pygit2.Patch.create_from(old, new, old_as_path=path, new_as_path=path)
            return patch.text or "", [(path, patch.line_stats[1], patch.line_stats[2])]
        d = ta.diff_to_tree(tb)
        stat = [(p.delta.new_file.path, p.line_stats[1], p.line_stats[2]) for p in d if p]
        return d.patch or "", stat

    def pack(self, repo: Path) -> None:
        r = pygit2.Repository(str(repo))
        builder = pygit2.PackBuilder(r)
        builder.set_threads(0)  # 0: one thread per CPU
        for c in r.walk(r.references[MAIN].target):
            builder.add_recur(c.id)  # commit + tree, recursively, with entry names for deltas
        builder.write()  # .pack + .idx into objects/pack; libgit2 has no gc nor prune-packed
        objects = Path(r.path) / "objects"
        packed = pygit2.OdbBackendPack(str(objects))
        for f in objects.glob("??/*"):  # prune-packed by hand (the empty folders stay)
            if packed.exists(pygit2.Oid(hex=f.parent.name + f.name)):
                f.unlink()


class DulwichEngine:
    name = "dulwich"

    def init_commit(self, ws: Path, when: int) -> None:
        with Repo.init(str(ws), default_branch=b"main") as r:
            self._add_and_commit(r, "init\n", when)

    def _add_and_commit(self, r: Repo, msg: str, when: int) -> None:
        porcelain.add(r)  # untracked walk + stat-cache check of every index entry
        times: dict[str, Any] = {"author_timestamp": when, "commit_timestamp": when}
        times |= {"author_timezone": 0, "commit_timezone": 0}
        porcelain.commit(r, msg.encode(), IDENT, committer=IDENT, no_verify=True, **times)

    def run_commit(self, ws: Path, msg: str, when: int) -> None:
        with Repo(str(ws)) as r:
            self._add_and_commit(r, msg, when)

    def status(self, ws: Path) -> list[str]:
        st = porcelain.status(str(ws), untracked_files="all")
        paths = [p for ps in st.staged.values() for p in ps] + st.unstaged + st.untracked
        return sorted({p.decode() if isinstance(p, bytes) else p for p in paths})

    def exact_commit(self, ws: Path, path: str, data: bytes, msg: str, when: int) -> None:
        with Repo(str(ws)) as r:
            old: Any = r.refs[MAIN.encode()]  # type: ignore[index]
            blob = Blob.from_string(data)
            r.object_store.add_object(blob)
            c = Commit()
            changes = [(path.encode(), 0o100644, blob.id)]
            parent: Any = r[old]
            c.tree = commit_tree_changes(r.object_store, parent.tree, changes)
            c.parents, c.author, c.committer, c.message = [old], IDENT, IDENT, msg.encode()
            c.author_time = c.commit_time = when
            c.author_timezone = c.commit_timezone = 0
            r.object_store.add_object(c)
            if not r.refs.set_if_equals(MAIN.encode(), old, c.id):  # type: ignore[arg-type]
                raise RuntimeError("refs/heads/main moved")
            index = r.open_index()
            zero = (0, 0)  # no stat: re-hashed once by the next status
            index[path.encode()] = IndexEntry(zero, zero, 0, 0, 0o100644, 0, 0, len(data), blob.id)
            index.write()

    def log_all(self, repo: Path) -> int:
        with Repo(str(repo)) as r:
            n = 0
            for entry in r.get_walker(include=[r.refs[MAIN.encode()]]):  # type: ignore[index]
                subject, _, body = entry.commit.message.partition(b"\n")
                n += len(subject) > 0 <= len(body)
            return n

    def log_path(self, repo: Path, path: str) -> int:
        with Repo(str(repo)) as r:
            head = r.refs[MAIN.encode()]  # type: ignore[index]
            return sum(1 for _ in r.get_walker(include=[head], paths=[path.encode()]))

    def diff(self, repo: Path, a: str, b: str, path: str | None) -> tuple[str, Numstat]:
        with Repo(str(repo)) as r:
            ta, tb = (r[x.encode()].tree for x in (a, b))  # type: ignore[attr-defined]
            out = io.BytesIO()
            paths = None if path is None else [path.encode()]
            for (op, np), (om, nm), (os_, ns) in r.object_store.tree_changes(ta, tb, paths=paths):
                write_object_diff(out, r.object_store, (op, om, os_), (np, nm, ns))
            names, _, counts = parse_patch(out.getvalue().splitlines())
            stat = [(n.decode(), add, rem) for n, (add, rem) in zip(names, counts, strict=True)]
            return out.getvalue().decode(), stat

    def pack(self, repo: Path) -> None:
        porcelain.gc(str(repo), prune=True, grace_period=0)  # one pack, but without deltas

    def pack_deltified(self, repo: Path) -> None:
        """dulwich's own delta search (Rust create_delta) fed every reachable object with its
        path, as one pack through the object store; the loose copies are then deleted."""
        with Repo(str(repo)) as r:
            store, seen = r.object_store, set()
            objs: list[tuple[ShaFile, bytes | None]] = []

            def tree(tid: Any, prefix: bytes) -> None:
                if tid not in seen:
                    seen.add(tid)
                    objs.append((store[tid], prefix))
                    for name, mode, sha in store[tid].iteritems():  # type: ignore[attr-defined]
                        p = prefix + b"/" + name if prefix else name
                        if mode & 0o170000 == 0o040000:
                            tree(sha, p)
                        elif sha not in seen:
                            seen.add(sha)
                            objs.append((store[sha], p))

            for entry in r.get_walker(include=[r.refs[MAIN.encode()]]):  # type: ignore[index]
                objs.append((entry.commit, None))
                tree(entry.commit.tree, b"")
            store.add_pack_data(len(objs), deltify_pack_objects(iter(objs)))
            for obj, _ in objs:
                store.delete_loose_object(obj.id)


class GitCliEngine:
    name = "git CLI"

    def __init__(self, home: Path) -> None:
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self.env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
        self.env |= {"LC_ALL": "C", "GIT_AUTHOR_NAME": NAME, "GIT_AUTHOR_EMAIL": EMAIL}
        self.env |= {"GIT_COMMITTER_NAME": NAME, "GIT_COMMITTER_EMAIL": EMAIL}
        # no auto gc inside the timed commits: packing is measured on its own
        self.env |= {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "gc.auto"}
        self.env["GIT_CONFIG_VALUE_0"] = "0"

    def git(self, cwd: Path, *args: str, data: bytes = b"", when: int = 0, index: str = "") -> str:
        env = dict(self.env)
        if when:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
        if index:
            env["GIT_INDEX_FILE"] = index
        done = subprocess.run(["git", *args], cwd=cwd, env=env, input=data, capture_output=True)
        if done.returncode:
            raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode()}")
        return done.stdout.decode()

    def init_commit(self, ws: Path, when: int) -> None:
        self.git(ws, "init", "-q", "-b", "main")
        self.run_commit(ws, "init\n", when)

    def run_commit(self, ws: Path, msg: str, when: int) -> None:
        self.git(ws, "add", "-A")
        self.git(ws, "commit", "-q", "--no-verify", "--cleanup=verbatim", "-m", msg, when=when)

    def status(self, ws: Path) -> list[str]:
        out = self.git(ws, "status", "--porcelain", "-z", "-uall")
        return sorted(e[3:] for e in out.split("\0") if e)

    def exact_commit(self, ws: Path, path: str, data: bytes, msg: str, when: int) -> None:
        # 8 spawns; a throw-away index so that only this path changes against HEAD
        blob = self.git(ws, "hash-object", "-w", "--stdin", data=data).strip()
        parent = self.git(ws, "rev-parse", MAIN).strip()
        tmp = str(ws / ".git" / "squad-exact.index")
        self.git(ws, "read-tree", parent, index=tmp)
        self.git(ws, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", index=tmp)
        tree = self.git(ws, "write-tree", index=tmp).strip()
        commit = self.git(ws, "commit-tree", tree, "-p", parent, data=msg.encode(), when=when)
        self.git(ws, "update-ref", MAIN, commit.strip(), parent)
        self.git(ws, "update-index", "--cacheinfo", f"100644,{blob},{path}")

    def log_all(self, repo: Path) -> int:
        out = self.git(repo, "log", "--format=%H%x1f%B%x1e", MAIN)
        return sum(1 for rec in out.split("\x1e") if rec.strip())

    def log_path(self, repo: Path, path: str) -> int:
        return len(self.git(repo, "log", "--format=%H", MAIN, "--", path).split())

    def diff(self, repo: Path, a: str, b: str, path: str | None) -> tuple[str, Numstat]:
        out = self.git(repo, "diff", "-p", "--numstat", a, b, *(["--", path] if path else []))
        head, _, patch = out.partition("\n\n")  # numstat lines, a blank line, the patch
        rows = (line.split("\t") for line in head.splitlines())
        return patch, [(p, int(x), int(y)) for x, y, p in rows]

    def pack(self, repo: Path) -> None:
        self.git(repo, "gc", "-q", "--prune=now")


def stats(samples: list[float], minus: float = 0.0) -> dict[str, float]:
    ordered = sorted(s - minus for s in samples)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    return {"median_ms": statistics.median(ordered) * 1e3, "p95_ms": p95 * 1e3, "n": len(ordered)}


def timed(fn: Callable[..., object], *args: Any, **kwargs: Any) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def disk_usage(path: Path) -> tuple[int, int, int]:
    """(bytes on disk, apparent bytes, files) under path."""
    sizes = [(f.lstat().st_blocks * 512, f.lstat().st_size) for f in path.rglob("*") if f.is_file()]
    return sum(s[0] for s in sizes), sum(s[1] for s in sizes), len(sizes)


def import_cost(modules: list[str]) -> dict[str, dict[str, float]]:
    def spawn(*args: str) -> float:
        return timed(subprocess.run, args, check=True, capture_output=True)

    for m in modules * 2:  # warm the page cache first
        spawn(sys.executable, "-c", f"import {m}")
    bare = statistics.median(spawn(sys.executable, "-c", "pass") for _ in range(10))
    runs = {m: [spawn(sys.executable, "-c", f"import {m}") for _ in range(10)] for m in modules}
    out = {m: stats(samples, bare) for m, samples in runs.items()}
    out["git --version"] = stats([spawn("git", "--version") for _ in range(10)])
    return out


def write_side(engine: Engine, git: GitCliEngine, tmp: Path, reps: int, label: str = "") -> Any:
    """init, run commit and exact commit (N = 50 and 2,000), status (N = 2,000)."""
    name, res, init = engine.name + label, dict[str, Any](), []
    for i in range(max(10, reps // 10)):
        c, ws = Content(), tmp / f"{name}-init-{i}"
        write_files(ws, c.workspace(30))
        init.append(timed(engine.init_commit, ws, c.tick()))
    res["init"] = stats(init)
    for files in (50, 2000):
        c, ws = Content(), tmp / f"{name}-ws{files}"
        write_files(ws, c.workspace(files))
        engine.init_commit(ws, c.tick())
        runs, exact = [], []
        for _ in range(reps):
            changed = c.run()
            write_files(ws, changed)
            runs.append(timed(engine.run_commit, ws, c.message(changed), c.tick()))
        assert git.status(ws) == [], f"{name}: index does not match HEAD after run commits"
        for _ in range(reps):
            data = c.remember("writer")
            (ws / MEMORY).write_bytes(data)  # squad writes the file; the commit does not read it
            msg = f"memory(writer): {c.memory['writer'][-1][2:40]}\n"
            exact.append(timed(engine.exact_commit, ws, MEMORY, data, msg, c.tick()))
        assert git.status(ws) == [], f"{name}: index does not match HEAD after exact commits"
        res[f"run commit N={files}"], res[f"exact commit N={files}"] = stats(runs), stats(exact)
        res[f"_head N={files}"] = git.git(ws, "rev-parse", f"{MAIN}^{{tree}}", MAIN).split()
        if files == 2000:
            (ws / "tasks/t1/status.json").write_bytes(b'{"state": "failed"}\n')
            (ws / "plans/new-plan.md").write_bytes(b"# New\n")
            assert engine.status(ws) == ["plans/new-plan.md", "tasks/t1/status.json"], name
            samples = [timed(engine.status, ws) for _ in range(max(20, reps // 4))]
            res["status N=2000"] = stats(samples)
    return res


def build_history(path: Path, commits: int) -> list[str]:
    """A bare repository of `commits` commits on main: runs and memory appends (writer ~1 in
    5), written by pygit2 from an in-memory index. Returns the commit ids, oldest first."""
    c = Content(seed=11)
    repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
    index = pygit2.Index()

    def put(files: dict[str, bytes]) -> pygit2.Oid:
        for p, data in files.items():
            index.add(pygit2.IndexEntry(p, repo.create_blob(data), FileMode.BLOB))
        return index.write_tree(repo)

    ids: list[str] = []
    tree, msg = put(c.workspace(30)), "init\n"
    for i in range(commits):
        if i and c.rng.random() < 0.4:
            agent = "writer" if c.rng.random() < 0.5 else c.rng.choice(AGENTS[:2] + AGENTS[3:])
            tree = put({f"agents/{agent}/memory.md": c.remember(agent)})
            msg = f"memory({agent}): {c.memory[agent][-1][2:40]}\n\nsource: run {c.runs}\n"
        elif i:
            changed = c.run()
            tree, msg = put(changed), c.message(changed)
        sig = pygit2.Signature(NAME, EMAIL, c.tick(), 0)
        ids.append(str(repo.create_commit(MAIN, sig, sig, msg, tree, ids[-1:])))
    return ids


def read_side(
    engines: list[Engine], git: GitCliEngine, repo: Path, ids: tuple[str, str], label: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    a, b = ids
    one = "tasks/t1/output.md"
    expect = (git.log_all(repo), git.log_path(repo, MEMORY), sorted(git.diff(repo, a, b, None)[1]))
    for e in engines:
        r = repo if label == "loose" else repo.parent / f"{repo.name}-{e.name}"
        got = (e.log_all(r), e.log_path(r, MEMORY), sorted(e.diff(r, a, b, None)[1]))
        assert got == expect, f"{e.name} ({label}) reads differently from git"
        assert e.diff(r, a, b, one)[1] == git.diff(repo, a, b, one)[1], e.name
        out[e.name] = {
            f"log all ({label})": stats([timed(e.log_all, r) for _ in range(5)]),
            f"log path ({label})": stats([timed(e.log_path, r, MEMORY) for _ in range(5)]),
            f"diff ({label})": stats([timed(e.diff, r, a, b, None) for _ in range(20)]),
            f"diff path ({label})": stats([timed(e.diff, r, a, b, one) for _ in range(20)]),
        }
        if e is git:
            samples = [timed(git.git, r, "diff", a, b) for _ in range(20)]
            out[e.name][f"`git diff A B` ({label})"] = stats(samples)
    out["_expect"] = {"commits": expect[0], "path commits": expect[1], "diff files": len(expect[2])}
    return out


def pack_side(engines: list[Engine], git: GitCliEngine, repo: Path, deltify: bool) -> Any:
    used, apparent, files = disk_usage(repo)
    out: dict[str, Any] = {"_loose": {"disk_MB": used / 1e6, "apparent_MB": apparent / 1e6}}
    out["_loose"] |= {"files": files, "commits": git.log_all(repo)}
    jobs: list[tuple[str, Callable[[Path], None]]] = [(e.name, e.pack) for e in engines]
    if deltify:  # slow: 432 s for a 2,000-commit history here
        jobs.append(("dulwich deltify", DulwichEngine().pack_deltified))
    for name, pack in jobs:
        copy = repo.parent / f"{repo.name}-{name}"
        shutil.copytree(repo, copy)
        took = timed(pack, copy)
        used, apparent, _ = disk_usage(copy)
        fsck = subprocess.run([*FSCK], cwd=copy, env=git.env, capture_output=True, text=True)
        packs = list((copy / "objects" / "pack").glob("*.pack"))
        loose = sum(1 for d in (copy / "objects").glob("??") for _ in d.iterdir())
        verify = git.git(copy, "verify-pack", "-v", str(packs[0])) if len(packs) == 1 else ""
        deltas = sum(1 for line in verify.splitlines() if len(line.split()) == 7)
        fsck_ok = fsck.returncode == 0 and not fsck.stdout.strip()
        count = int(git.git(copy, "rev-list", "--count", MAIN))
        row = (took, used / 1e6, apparent / 1e6, len(packs), deltas, loose, fsck_ok, count)
        out[name] = dict(zip(PACK_COLUMNS, row, strict=True))
        out[name]["fsck_out"] = (fsck.stdout + fsck.stderr)[:300]
    return out


def fsync_side(tmp: Path, git: GitCliEngine, reps: int) -> dict[str, Any]:
    pygit2.settings.enable_fsync_gitdir(True)  # = pygit2.option(Option.ENABLE_FSYNC_GITDIR, 1)
    try:
        res = write_side(Pygit2Engine(), git, tmp, reps, label=" fsync")
    finally:
        pygit2.settings.enable_fsync_gitdir(False)
    return {k: v for k, v in res.items() if k.startswith(("run commit", "exact commit"))}


def table(results: dict[str, Any]) -> str:
    names, sections = ["pygit2", "dulwich", "git CLI"], ("import", "write", "loose", "packed")
    merged = {n: {k: v for s in sections for k, v in results[s].get(n, {}).items()} for n in names}
    every = (op for s in sections for n in names for op in results[s].get(n, {}))
    ops = list(dict.fromkeys(op for op in every if not op.startswith("_")))

    def cell(v: Any) -> str:
        return "-" if v is None else f"{v['median_ms']:.2f} / {v['p95_ms']:.2f}"

    rows = ["median / p95 ms".ljust(34) + "".join(n.rjust(20) for n in names)]
    rows += [op.ljust(34) + "".join(cell(merged[n].get(op)).rjust(20) for n in names) for op in ops]
    fsync = results["fsync"].items()
    rows += [f"pygit2 + fsync: {op}".ljust(34) + cell(v).rjust(20) for op, v in fsync]
    loose = results["pack"]["_loose"]
    rows += [
        "",
        f"{loose['commits']}-commit history built by pygit2 in {results['build_s']:.1f} s"
        f" and copied for the others: {loose['files']} files, {loose['disk_MB']:.1f} MB on "
        f"disk ({loose['apparent_MB']:.1f} MB apparent), all objects loose; read checks "
        f"{results['loose']['_expect']}; diffs between commits {results['diff_between']}",
    ]
    rows.append("pack".ljust(16) + "".join(c.rjust(10) for c in PACK_COLUMNS))
    for name, p in results["pack"].items():
        if not name.startswith("_"):
            cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in p.values()][:-1]
            rows.append(name.ljust(16) + "".join(c.rjust(10) for c in cells))
    heads = {n: [x[:10] for x in results["write"][n]["_head N=2000"]] for n in names}
    rows.append(f"write side, N=2000: HEAD (tree, commit) per engine: {heads}")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--quick", action="store_true", help="30 reps, 2,000-commit history")
    parser.add_argument("--dulwich-deltify", action="store_true", help="+ a deltified pack")
    args = parser.parse_args()
    reps, history = (30, 2000) if args.quick else (200, 10_000)
    with tempfile.TemporaryDirectory(prefix="squad-history-bench-") as t:
        tmp = Path(t)
        home = tmp / "home"
        home.mkdir()
        os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home), GIT_CONFIG_NOSYSTEM="1")
        git = GitCliEngine(home)
        engines: list[Engine] = [Pygit2Engine(), DulwichEngine(), git]
        cost = import_cost(["pygit2", "dulwich.repo", "dulwich.porcelain"])
        imports = {"pygit2": {"cold import": cost["pygit2"]}}
        imports["dulwich"] = {"cold import": cost["dulwich.repo"]}
        imports["dulwich"]["cold import porcelain"] = cost["dulwich.porcelain"]
        imports["git CLI"] = {"cold import": cost["git --version"]}
        results: dict[str, Any] = {"write": {}, "import": imports}
        for e in engines:
            print(f"write side: {e.name}", file=sys.stderr)
            results["write"][e.name] = write_side(e, git, tmp, reps)
        results["fsync"] = fsync_side(tmp, git, reps)
        print("building the history", file=sys.stderr)
        start = time.perf_counter()
        ids = build_history(tmp / "history.git", history)
        results["build_s"] = time.perf_counter() - start
        pair = (ids[history // 10 - 1], ids[-1])
        results["diff_between"] = f"{history // 10} and {history} ({pair[0][:10]}..{pair[1][:10]})"
        results["loose"] = read_side(engines, git, tmp / "history.git", pair, "loose")
        print("pack side", file=sys.stderr)
        results["pack"] = pack_side(engines, git, tmp / "history.git", args.dulwich_deltify)
        results["packed"] = read_side(engines, git, tmp / "history.git", pair, "packed")
    print(json.dumps(results) if args.json else table(results))


if __name__ == "__main__":
    main()
