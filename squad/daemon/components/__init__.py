"""The daemon's components, each a duty that starts and stops with it
(:mod:`~squad.daemon.components.lifecycle`): ``home`` (the lock, the heartbeat, freed memory
given back), ``checkpoints``, ``runs`` (the run dispatcher, the runs due at start-up),
``scheduling`` (the scheduler, the squads catalog), ``watching`` (the folder watcher),
``background`` (cron jobs, the credential scan), ``attached`` (the web server). Which ones
and in what order: :mod:`squad.daemon.layout` on one machine, :mod:`squad.cluster.daemon`
in a cluster.
"""
