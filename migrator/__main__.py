"""``python -m migrator``: the ``migrate`` command, for environments without the console script."""

from __future__ import annotations

from migrator.cli import main

if __name__ == "__main__":
    main(prog_name="migrate")
