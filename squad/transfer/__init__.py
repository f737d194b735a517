"""Moving a squad between homes: ``squad export`` and ``squad import`` (with its history,
experience, decisions and boot files; never a credential, never an overwrite)."""
