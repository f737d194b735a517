"""The ``.gitignore`` squad owns in every workspace: what never enters its history.

Run logs stay out (retention prunes them; the run's commit carries its figures), and so do
lock files, temporary files of atomic writes, caches (a chat's summary), a run's working
memory (transient: the daily log keeps its summary when the run ends), and files whose
names say they hold credentials. squad writes this file when the history starts and puts it
back when it differs; a person adds patterns of their own to ``.git/info/exclude``.
"""

from __future__ import annotations

__all__ = ["GITIGNORE", "GITIGNORE_NAME"]

GITIGNORE_NAME = ".gitignore"

GITIGNORE = """\
# Written by squad: what stays out of this workspace's history. squad puts this file back
# when it differs; add patterns of your own to .git/info/exclude.

# run logs, the memory audit log and MCP answer journals (retention prunes them)
/logs/
# locks and the temporary files of atomic writes
.*.lock
*.lock.tmp
.*.tmp
/.squad-locks/
# caches squad rebuilds, and a run's working memory (its daily log keeps its summary)
/agents/*/chat-summary.json
/agents/*/working-memory/
__pycache__/
# files whose names say they hold credentials
.env
.env.*
*.pem
*.key
*.p12
*.pfx
*.jks
*.keystore
*.kdbx
id_rsa*
id_dsa*
id_ecdsa*
id_ed25519*
.netrc
_netrc
.pgpass
.npmrc
.pypirc
.git-credentials
.aws/
.ssh/
.docker/config.json
credentials.json
service-account*.json
"""
