"""One scan of a squad home: its workspaces' files, the home's own, the store and checkpoints.

Each place is first looked at without a lock; only what holds a credential is then, with
``fix``, rewritten under the locks its writers take (files) or in a transaction (rows,
checkpoints), the credential judged again as it is then. Each value redacted is one line in
the memory audit log (the workspace's for its files and rows, the home's for the rest):
place, where, kind, detector version and time, never the value. A workspace's tracked files
are committed as one memory change (:mod:`squad.scan.files`).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from squad.errors import MemoryError_, MemoryFileError, SquadError
from squad.memory.audit import AuditLog, AuditRecord, sha256_text
from squad.scan.files import (
    FilePlace,
    Rewritten,
    findings_of,
    fix_file,
    home_places,
    read_finds,
    workspace_places,
)
from squad.scan.report import Finding, ScanReport
from squad.text.scrub import Found

if TYPE_CHECKING:
    from squad.app import App
    from squad.manager import SquadWorkspace

__all__ = ["SCAN_ACTOR", "scan_home"]

SCAN_ACTOR = "scan"
"""Who the scan's commits and audit lines name."""

Stop = Callable[[], bool]


def _never() -> bool:
    return False


def scan_home(app: App, *, fix: bool, squad: str | None = None, stop: Stop = _never) -> ScanReport:
    """Scan every place of ``app``'s home (only ``squad``'s, when given: its workspace, rows
    and checkpoints) with the current detector; with ``fix`` redact what it finds.

    An unknown ``squad`` is a :class:`~squad.errors.NotFound`. ``stop`` is asked between
    files and groups of rows: True ends the scan early (:attr:`ScanReport.complete` False).
    """
    from squad.text.secrets import detector_version

    targets = [app.squads.locate(squad)] if squad is not None else app.squads.all_workspaces()
    scan = _Scan(app, fix=fix, stop=stop, version=detector_version())
    started = time.monotonic()
    scan.run(targets, home=squad is None, squad=squad)
    scan.write_audit()
    return ScanReport(
        detector=scan.version,
        fix=fix,
        squads=tuple(t.squad for t in targets),
        findings=tuple(scan.findings),
        scanned=dict(scan.scanned),
        notes=tuple(scan.notes),
        commits=tuple(scan.commits),
        deferred=tuple(scan.deferred),
        seconds=time.monotonic() - started,
        complete=scan.complete,
    )


class _Scan:
    """The state of one scan while it runs."""

    def __init__(self, app: App, *, fix: bool, stop: Stop, version: str) -> None:
        self.app = app
        self.fix = fix
        self.stop = stop
        self.version = version
        self.findings: list[Finding] = []
        self.scanned: Counter[str] = Counter()
        self.notes: list[str] = []
        self.commits: list[str] = []
        self.deferred: list[str] = []
        self.complete = True
        self.audits: dict[Path, list[AuditRecord]] = defaultdict(list)
        self.workspaces: dict[str, Path] = {}

    def stopped(self) -> bool:
        if self.stop():
            self.complete = False
        return not self.complete

    def run(self, targets: Sequence[SquadWorkspace], *, home: bool, squad: str | None) -> None:
        self.workspaces = {t.squad: t.path for t in targets}
        if home:
            self.workspaces = {**self.app.squads.workspace_paths(), **self.workspaces}
        for target in targets:
            if self.stopped():
                return
            self.workspace(target)
        if home:
            self.files(home_places(self.app.settings.home), self.app.settings.home, None, None)
        if self.stopped():
            return
        if self.app.database_exists():
            self.rows(squad)
        if self.stopped():
            return
        self.checkpoints(squad)

    # -- files ----------------------------------------------------------------------------

    def workspace(self, target: SquadWorkspace) -> None:
        places = workspace_places(target.path)
        live = self.live_run(target.squad)
        pending = self.files([p for p in places if not p.tracked], target.path, target, live)
        tracked = [p for p in places if p.tracked]
        looked = self.look(tracked, target.squad)
        if not looked or not self.fix or self.stopped():
            self.report_unfixed(looked, target.squad)
            if pending or looked:
                self.drop_search_index(target.path)
            return
        history = self.app.history(target.path, target.squad)
        head = history.state().head
        with history.change(SCAN_ACTOR) as change:
            change.lines_hidden = True
            count = 0
            for place, found in looked:
                done = self.fix_one(place, found, target.path, target.squad, live)
                if done is not None:
                    change.wrote(place.relative, done.before, done.after)
                    count += len(done.found)
            change.subject = f"memory scan: redacted {count} credential{'s' if count != 1 else ''}"
            change.trailers += [
                ("Squad-Scan", f"{count} redacted"),
                ("Squad-Detector", self.version),
            ]
        after = history.state().head
        if after is not None and after != head:
            self.commits.append(f"{target.squad} {after[:10]}")
        self.drop_search_index(target.path)

    def look(
        self, places: Sequence[FilePlace], squad: str | None
    ) -> list[tuple[FilePlace, tuple[Found, ...]]]:
        """The places that hold a credential now, read without a lock."""
        found = []
        for place in places:
            if self.stopped():
                break
            self.scanned[place.place] += 1
            finds = read_finds(place)
            if finds:
                found.append((place, finds))
        return found

    def report_unfixed(
        self, looked: Sequence[tuple[FilePlace, tuple[Found, ...]]], squad: str | None
    ) -> None:
        for place, found in looked:
            self.findings += findings_of(place, found, prefix=_prefix(squad), squad=squad)

    def files(
        self,
        places: Sequence[FilePlace],
        root: Path,
        target: SquadWorkspace | None,
        live: str | None,
    ) -> bool:
        """Untracked files: looked at, then (``fix``) rewritten one by one; whether any
        held a credential."""
        squad = None if target is None else target.squad
        looked = self.look(places, squad)
        if not self.fix or self.stopped():
            self.report_unfixed(looked, squad)
            return bool(looked)
        for place, found in looked:
            self.fix_one(place, found, root, squad, live)
        return bool(looked)

    def fix_one(
        self,
        place: FilePlace,
        found: tuple[Found, ...],
        root: Path,
        squad: str | None,
        live: str | None,
    ) -> Rewritten | None:
        prefix = _prefix(squad)
        if place.run_id is not None and place.run_id == live:
            note = "its run is live; scan again once it ends"
            self.findings += findings_of(
                place, found, prefix=prefix, squad=squad, note=note, retry=True
            )
            return None
        try:
            done = fix_file(place)
        except MemoryFileError as exc:  # read-only, or not a file: a person must act
            self.findings += findings_of(place, found, prefix=prefix, squad=squad, note=str(exc))
            return None
        except (MemoryError_, OSError) as exc:  # a lock held too long: a later scan
            self.findings += findings_of(
                place, found, prefix=prefix, squad=squad, note=str(exc), retry=True
            )
            return None
        if done is None:
            return None  # changed since the look: nothing left to redact
        self.findings += findings_of(place, done.found, prefix=prefix, squad=squad, fixed=True)
        for one in done.found:
            self.audit(
                root,
                place.relative,
                place.place,
                one,
                old=sha256_text(done.before),
                new=sha256_text(done.after),
                size=len(done.after),
            )
        return done

    def live_run(self, squad: str) -> str | None:
        from squad.runtime.runlock import holder

        try:
            found = holder(self.app.settings.locks_dir, squad)
        except (OSError, SquadError):
            return None
        return None if found is None else found.run_id

    def drop_search_index(self, workspace: Path) -> None:
        """``squad ws search``'s cache holds copies of the workspace's files: dropped when it
        may hold a credential (with ``fix``), rebuilt by the next search."""
        from squad.errors import StoreError
        from squad.workspace.index_store import IndexStore, index_path

        index_dir = self.app.settings.home / "index"
        if not index_path(index_dir, workspace).exists():
            return
        if not self.fix:
            self.notes.append(
                f"the search index of {workspace.name} ({index_dir}) may hold copies; "
                "--fix drops it"
            )
            return
        try:
            IndexStore.open(index_dir, workspace).discard()
        except StoreError as exc:
            self.notes.append(f"the search index of {workspace.name} was not dropped: {exc}")
            return
        self.notes.append(f"dropped the search index of {workspace.name} (rebuilt on next search)")

    # -- rows and checkpoints ---------------------------------------------------------------

    def rows(self, squad: str | None) -> None:
        swept = self.app.store.redaction.sweep(fix=self.fix, squad=squad, stop=self.stop)
        self.stopped()
        self.scanned.update(swept.scanned)
        for row in swept.findings:
            for one in row.found:
                where = f"{_prefix(row.squad)}{row.ref} {one.where}"
                self.findings.append(
                    Finding(row.place, where, one.kind, fixed=row.fixed, squad=row.squad)
                )
                if row.fixed:
                    self.audit(self.root_of(row.squad), row.ref, row.place, one)
        if any(row.fixed for row in swept.findings):
            self.app.store.retention.give_back_space()  # old text leaves the file and its log

    def checkpoints(self, squad: str | None) -> None:
        checkpoints = self.app.checkpoints
        store = self.app.store.redaction if self.app.database_exists() else None
        threads = checkpoints.threads()
        owners = store.run_squads(threads) if store is not None and threads else {}
        wanted = {t for t in threads if squad is None or owners.get(t) == squad}
        live = {run for s in set(owners.values()) if (run := self.live_run(s)) is not None}
        if live & wanted and self.fix:
            self.deferred.append(
                f"checkpoints of live runs ({', '.join(sorted(live & wanted))}): a live run "
                "writes its state again; scan once it ends"
            )
        swept = checkpoints.scrub(
            fix=self.fix, threads=sorted(wanted - live if self.fix else wanted)
        )
        if not swept.supported:
            self.notes.append(
                f"run checkpoints in {checkpoints.backend} ({checkpoints.where}) are not scanned"
            )
            return
        self.scanned["checkpoint"] += swept.scanned
        for item in swept.findings:
            owner = owners.get(item.thread_id)
            for one in item.found:
                where = f"{_prefix(owner)}{item.ref} {one.where}"
                self.findings.append(
                    Finding(
                        "checkpoint",
                        where,
                        one.kind,
                        fixed=item.fixed,
                        squad=owner,
                        note=item.problem,
                    )
                )
                if item.fixed:
                    self.audit(self.root_of(owner), item.ref, "checkpoint", one)

    # -- audit ----------------------------------------------------------------------------

    def root_of(self, squad: str | None) -> Path:
        """Whose audit log records a change: the squad's workspace, else the home."""
        found = self.workspaces.get(squad) if squad is not None else None
        return found if found is not None and found.is_dir() else self.app.settings.home

    def audit(
        self,
        root: Path,
        file: str,
        place: str,
        found: Found,
        *,
        old: str | None = None,
        new: str | None = None,
        size: int | None = None,
    ) -> None:
        self.audits[root].append(
            AuditRecord(
                time=self.app.clock().isoformat(),
                actor=SCAN_ACTOR,
                operation="redact",
                file=file,
                old_sha256=old,
                new_sha256=new,
                bytes=size,
                note=f"{found.kind} redacted",
                details={
                    "place": place,
                    "kind": found.kind,
                    "where": found.where,
                    "detector": self.version,
                },
            )
        )

    def write_audit(self) -> None:
        for root, records in self.audits.items():
            log = AuditLog(root)
            for record in records:
                log.append(record)


def _prefix(squad: str | None) -> str:
    return f"{squad}: " if squad is not None else "home: "
