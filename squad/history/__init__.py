"""Each workspace's history: a git repository inside it, committed by squad.

A commit per finished run, per memory change made outside a run, and per batch of edits a
person made by hand; authors say who. :class:`History` is the policy squad's writers use,
:mod:`squad.history.log` the read side (runs, diffs, memory history), and
:mod:`squad.history.engine` the one module importing pygit2.
"""
