"""Squad runtime: runs squads on LangGraph, one agent turn at a time, into the workspace."""
