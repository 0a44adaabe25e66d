"""A process that runs many scans (a fleet worker, the serial fleet) freezes its long-lived
objects once (``settle_process``); later scans keep them frozen, and whether the process is
settled is answered without walking the frozen objects. Run in a fresh interpreter: freezing
the test process would change the state of every later test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PROGRAM = """
import gc, json, sys
from pathlib import Path
from migrator.engine import isolation
from migrator.engine.runner import scan

before = isolation.process_settled()
isolation.settle_process()
frozen = gc.get_freeze_count()
run = scan(Path(sys.argv[1]), use_cache=False, jobs=1)
isolation.settle_process()
print(json.dumps({
    "before": before,
    "after": isolation.process_settled(),
    "frozen": frozen,
    "frozen_after_scan": gc.get_freeze_count(),
    "files": len(run.scan.files),
}))
"""


def test_settling_freezes_once_and_a_scan_keeps_the_freeze(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, str(project)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state["before"] is False and state["after"] is True
    assert state["files"] == 1
    # the scan's runner neither thawed the frozen objects (a few of them are freed) nor froze
    # its own on top of them, and a second settle_process froze nothing more
    assert state["frozen"] > 0
    assert state["frozen"] / 2 < state["frozen_after_scan"] <= state["frozen"]
