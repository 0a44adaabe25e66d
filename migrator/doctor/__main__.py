"""``python -m migrator.doctor``: the doctor command without the main CLI."""

from __future__ import annotations

from migrator.doctor.cli import doctor_command

if __name__ == "__main__":
    doctor_command(prog_name="migrate doctor")
