"""``migrate doctor``: a pre-flight check to run on the AMD machine before the migrated code.

See docs/doctor.md. The command object is :data:`doctor_command`.
"""

from __future__ import annotations

from migrator.doctor.cli import doctor_command, run_checks
from migrator.doctor.system import Host

__all__ = ["Host", "doctor_command", "run_checks"]
