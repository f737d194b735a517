"""The workspace's files in the JSON API, ``/api/v1/squads/{squad}/...``: a folder, a file's
preview, full-text search and the workspace's health (the rest of the API is
:mod:`squad.web.api`, the actions :mod:`squad.web.actions`).

Every text sent is redacted first: a credential in a file is shown as ``[REDACTED:<kind>]``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from squad.views import Folder, Health, Preview, SearchResult
from squad.web.api import ERRORS, MAX_PATH_CHARS, MAX_TEXT_CHARS, FilePath, SquadName, _web

__all__ = ["PREVIEW_MAX_BYTES", "file_preview", "router", "workspace_search"]

router = APIRouter(prefix="/api/v1", tags=["api"], responses=ERRORS)


@router.get("/squads/{squad}/files", response_model=Folder)
def get_folder(request: Request, squad: SquadName, path: FilePath = "") -> Folder:
    """One folder of the workspace, one level (folders first)."""
    from squad.errors import WorkspaceError
    from squad.workspace.listing import list_folder

    found = _web(request).app.squads.locate(squad)
    try:
        return list_folder(found.path, path).view()
    except OSError as exc:  # a name past the system's limits (ENAMETOOLONG), say
        raise WorkspaceError(f"cannot open folder {path!r}: {exc.strerror}") from None


PREVIEW_MAX_BYTES = 128 * 1024
"""The most of a file a preview reads, redacts and sends (the dashboard's and the API's).
Redaction costs ~0.6-2 s of CPU a MB (``bench/redaction_scale.py``), so 128 KB bounds a
preview's click near 0.25 s however large the file; 128 KB is ~2,500 lines of a log, more
than a preview is read for. The whole file is for the machine's own tools (the notice says
which): nothing sends it unredacted over HTTP."""


@router.get("/squads/{squad}/file", response_model=Preview)
def get_file(
    request: Request,
    squad: SquadName,
    path: Annotated[str, Query(min_length=1, max_length=MAX_PATH_CHARS)],
    max_bytes: Annotated[int, Query(ge=1, le=PREVIEW_MAX_BYTES)] = PREVIEW_MAX_BYTES,
) -> Preview:
    """A text file's preview (JSON pretty-printed); of a file over ``max_bytes`` (at most
    128 KB) only its start, ``truncated``, with a ``notice`` saying where the whole file is;
    credentials in it are shown as ``[REDACTED:<kind>]`` and counted in ``redacted``."""
    return file_preview(request, squad, path, max_bytes=max_bytes)


def file_preview(
    request: Request, squad: str, path: str, *, max_bytes: int = PREVIEW_MAX_BYTES
) -> Preview:
    from squad.web.redaction import redacted_text
    from squad.web.render import human_size
    from squad.workspace.inspect import preview

    found = _web(request).app.squads.locate(squad)
    max_bytes = min(max_bytes, PREVIEW_MAX_BYTES)
    read = preview(found.path, path, max_bytes=max_bytes)
    text, hidden = redacted_text(read.text)
    notice = None
    if read.truncated:
        notice = (
            f"Showing the first {human_size(max_bytes)} of {human_size(read.size)}: a "
            "preview reads no further. Open the whole file on the machine that runs squad: "
            f"`squad ws show {found.squad} {read.path}`, or {read.path} in the "
            "squad's workspace folder."
        )
    return Preview.model_validate(
        {**read.to_dict(), "text": text, "redacted": hidden, "notice": notice}
    )


@router.get("/squads/{squad}/search", response_model=SearchResult)
def search_workspace(
    request: Request,
    squad: SquadName,
    q: Annotated[str, Query(min_length=1, max_length=MAX_TEXT_CHARS)],
    regex: bool = False,
    case_sensitive: bool = False,
    context: Annotated[int, Query(ge=0, le=20)] = 0,
    max_matches: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> SearchResult:
    """Full-text search of the workspace (the engine of ``squad ws search``); lines with a
    credential are shown redacted (``redacted`` counts them)."""
    return workspace_search(
        request,
        squad,
        q,
        regex=regex,
        case_sensitive=case_sensitive,
        context=context,
        max_matches=max_matches,
    )


def workspace_search(
    request: Request,
    squad: str,
    query: str,
    *,
    regex: bool,
    case_sensitive: bool,
    context: int,
    max_matches: int = 500,
) -> SearchResult:
    from squad.text.grep import compile_query
    from squad.web.redaction import redacted_hits
    from squad.workspace.search import FileMatchesDict, search

    app = _web(request).app
    found = app.squads.locate(squad)
    result = search(
        found.path,
        query,
        regex=regex,
        case_sensitive=case_sensitive,
        context=context,
        max_matches=max_matches,
        index_dir=app.settings.home / "index",
    ).to_dict()
    pattern = compile_query(query, regex=regex, case_sensitive=case_sensitive)
    hidden = 0
    files: list[FileMatchesDict] = []
    for file in result["files"]:
        matches, count = redacted_hits(file["matches"], pattern, where=file["path"])
        hidden += count
        if matches:
            files.append({**file, "matches": matches})
    result["files"] = files
    result["match_count"] = sum(len(f["matches"]) for f in files)
    return SearchResult.model_validate({"squad": found.squad, **result, "redacted": hidden})


@router.get("/squads/{squad}/health", response_model=Health)
def get_health(request: Request, squad: SquadName) -> Health:
    """Total size, file count, largest files, memory files against their cap."""
    from squad.workspace.inspect import health

    app = _web(request).app
    found = app.squads.locate(squad)
    report = health(found.path, memory_cap_bytes=app.settings.memory_file_cap_bytes)
    return report.view()
