"""``migrate fleet`` without ``--address`` runs a small fleet in its own process and a large one
on a local Ray instance, and says which it took and what the other would cost (issue #51: 16
repositories took 7 to 15 s in one process and 22 to 39 s on a local Ray instance)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from migrator.fleet.engine import choose_engine, measured_unit_seconds
from scripts.bench_fleet import build_fleet

ROOT = Path(__file__).resolve().parent.parent


def test_the_choice_weighs_rays_fixed_cost_against_the_units():
    assert choose_engine(16, 2, []).engine == "serial"  # the fleet
    assert choose_engine(200, 2, []).engine == "ray"
    assert choose_engine(16, 16, []).engine == "ray"
    assert choose_engine(10_000, 1, []).engine == "serial"  # one CPU never gains
    # measured units of 20 s: four of them are worth Ray's start on 2 CPUs
    assert choose_engine(4, 2, [20.0, 19.0, 21.0]).engine == "ray"
    assert choose_engine(4, 2, [0.3, 0.4]).engine == "serial"
    line = choose_engine(16, 2, []).line()
    assert line == (
        "fleet: 16 units in this process, about 16s (a local Ray instance: about 17s on 2 "
        "CPUs); --engine ray to use Ray anyway"
    )


def test_a_small_fleet_runs_in_the_commands_own_process(tmp_path):
    manifest = build_fleet(tmp_path / "f", 3, git_repos=0)
    results = tmp_path / "r"
    done = subprocess.run(
        [sys.executable, "-m", "migrator", "fleet", str(manifest), "--results", str(results)]
        + ["--format", "json", "--num-cpus", "2"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "fleet: 3 units in this process, about 3s (a local Ray instance: about" in done.stderr
    assert "--engine ray to use Ray anyway" in done.stderr
    assert "fleet: Ray with" not in done.stderr  # no Ray instance was started
    rows = json.loads(done.stdout)["projects"]
    assert [row["status"] for row in rows] == ["ok"] * 3
    records = [json.loads(path.read_text()) for path in results.glob("units/*/*/unit.json")]
    assert len(records) == 3 and not any("node" in record for record in records)  # not on Ray
    assert len(measured_unit_seconds(results)) == 3


def test_address_and_serial_do_not_go_together(tmp_path):
    manifest = build_fleet(tmp_path / "f", 1, git_repos=0)
    done = subprocess.run(
        [sys.executable, "-m", "migrator", "fleet", str(manifest), "--serial"]
        + ["--address", "127.0.0.1:6379"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "migrate: error: --address runs the fleet on Ray: leave out --serial/--engine serial\n"
    )
