"""A workspace as the front ends show it: one folder, a file's preview, a full-text search
and the folder's health."""

from __future__ import annotations

from typing import Literal

from squad.views._base import View

__all__ = [
    "FileMatches",
    "Folder",
    "FolderEntry",
    "FolderStats",
    "Health",
    "LargeFile",
    "LineMatch",
    "MemoryFileHealth",
    "Preview",
    "SearchResult",
    "SkippedFile",
]


class FolderEntry(View):
    name: str
    path: str
    kind: Literal["dir", "file", "link", "other"]
    size: int | None
    mtime: str


class Folder(View):
    path: str
    entries: list[FolderEntry]


class Preview(View):
    path: str
    kind: Literal["markdown", "json", "jsonl", "yaml", "text"]
    text: str
    size: int
    truncated: bool
    language: str
    redacted: int
    notice: str | None = None
    """Set when ``truncated``: how much is shown and where the whole file is."""


class ContextLine(View):
    line_number: int
    line: str


class LineMatch(View):
    line_number: int
    line: str
    spans: list[list[int]]
    before: list[ContextLine]
    after: list[ContextLine]


class FileMatches(View):
    path: str
    matches: list[LineMatch]


class SkippedFile(View):
    path: str
    reason: str


class SearchResult(View):
    squad: str
    query: str
    files: list[FileMatches]
    match_count: int
    files_scanned: int
    files_skipped: dict[str, int]
    skipped: list[SkippedFile]
    max_file_bytes: int
    truncated: bool
    redacted: int


class FolderStats(View):
    files: int
    bytes: int


class LargeFile(View):
    path: str
    size: int


class MemoryFileHealth(View):
    """How full one agent's ``memory.md`` is against the squad's cap."""

    agent: str
    path: str
    size: int
    cap: int
    percent: float
    over_cap: bool


class Health(View):
    path: str
    total_bytes: int
    file_count: int
    folder_count: int
    links: int
    folders: dict[str, FolderStats]
    largest_files: list[LargeFile]
    memory_files: list[MemoryFileHealth]
    last_activity: str | None
    last_activity_age_s: float | None
