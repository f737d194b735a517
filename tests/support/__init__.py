"""Helpers shared by tests of several packages (not fixtures: plain functions to call)."""
