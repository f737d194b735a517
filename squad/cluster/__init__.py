"""Many daemons and workers on one PostgreSQL, through procrastinate.

With ``cluster: {enabled: true}`` in settings.yaml every node (``squad daemon`` schedules and
works, ``squad worker`` only works) shares the store's Postgres database:

* runs, extraction passes and memory maintenance are procrastinate jobs
  (:mod:`squad.jobqueue.queue`, the one module that knows procrastinate's API);
* a scheduled fire becomes one job however many daemons schedule it (procrastinate's
  periodic deduplication on squad and fire time);
* a run job holds the lock ``squad:<name>``, so one squad runs once at a time across the
  cluster, and ``extract:<squad>/<agent>`` keeps extraction passes one per agent;
* every node beats (:mod:`squad.cluster.node`); a job whose node stopped beating for
  ``cluster.stall_timeout_s`` goes back to the queue and resumes on another node from its
  last LangGraph checkpoint (Postgres, beside the store);
* every attempt that drives a run claims it first (``runs.epoch`` + 1, ``runs.owner``), and
  the run's state writes (status, end, task rows, checkpoints) carry that epoch and are
  refused by the database once a newer claim exists, so a node frozen past the stall
  timeout cannot write over the node that took its run (:mod:`squad.cluster.work`);
* waiting for a squad's run lock held by another process costs a job no attempt, and a run
  whose job ended before it did is resumed by the next sweep.
"""

from __future__ import annotations

__all__: list[str] = []
