"""Layered agent memory: project memory files, boot files, experiential facts, assembly."""
