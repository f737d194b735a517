"""``python -m squad``: the console script, for an interpreter whose ``squad`` is not on PATH."""

from squad.cli import main

if __name__ == "__main__":
    main()
