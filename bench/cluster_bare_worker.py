"""The baseline of the cluster benchmark's latency: a bare procrastinate worker (no squad),
in a process of its own, whose no-op task appends ``job_id start_time`` to a file.

    python -m bench.cluster_bare_worker CONNINFO SCHEMA OUT_FILE POLL_S
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main() -> int:
    import procrastinate

    conninfo, schema, out, poll = sys.argv[1], sys.argv[2], Path(sys.argv[3]), float(sys.argv[4])
    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(
            conninfo=conninfo, kwargs={"options": f"-c search_path={schema}"}, min_size=1
        )
    )

    def noop(context: object) -> None:
        started = time.time()
        with out.open("a") as file:
            file.write(f"{context.job.id} {started}\n")  # type: ignore[attr-defined]

    app.task(name="bare.noop", pass_context=True)(noop)
    with app.open():
        app.run_worker(concurrency=1, fetch_job_polling_interval=poll)
    return 0


if __name__ == "__main__":
    sys.exit(main())
