"""Cluster tests run real nodes against the test Postgres (mandatory in CI, like the other
Postgres tests: ``postgres_admin`` fails there instead of skipping)."""
