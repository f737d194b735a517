"""``python -m squad.text.secrets``: write the finders' trigger table again (after a pattern
changed, so that no process reads that pattern's trigger afresh on its first redaction)."""

from __future__ import annotations

from squad.text.secrets._scan import declared
from squad.text.secrets._triggers import table, table_text

if __name__ == "__main__":
    table().write_text(table_text(declared()), encoding="utf-8")
    print(f"wrote {table()}")
