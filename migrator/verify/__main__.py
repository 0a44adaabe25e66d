"""``python -m migrator.verify PATH --smoke CMD``: the verify command without the main CLI."""

from __future__ import annotations

from migrator.verify.cli import verify_command

if __name__ == "__main__":
    verify_command(prog_name="migrate verify")
