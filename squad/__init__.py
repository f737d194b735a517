"""squad."""
