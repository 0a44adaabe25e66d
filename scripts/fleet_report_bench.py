"""Time ``migrate report --format html`` over a fleet of projects.

Usage::

    cd /work/corpus
    python /work/main/scripts/fleet_report_bench.py torchtune litgpt alpaca-lora qlora llama-recipes

Runs the report twice in a fresh cache folder (cold: nothing cached; warm: every file cached),
pinned to ``--cores`` CPUs (default 2) when the platform allows it, and prints the wall time of
each run, the project scores and the size of the HTML file. Exit 1 when the cold run takes
longer than ``--budget`` seconds (default 60).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _migrate() -> list[str]:
    local = ROOT / ".venv" / "bin" / "migrate"
    return [str(local)] if local.exists() else [sys.executable, "-m", "migrator.cli"]


def _pin(cores: int) -> None:
    if hasattr(os, "sched_setaffinity"):
        available = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, available[: max(1, cores)])


def run_report(
    paths: list[str], output: Path, cache: Path, cores: int, fmt: str
) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, all processes) of one ``migrate report``."""
    env = {**os.environ, "MIGRATE_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    command = [*_migrate(), "report", *paths, "--format", fmt, "--output", str(output)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        command,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=lambda: _pin(cores),
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"migrate report failed with exit {done.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="project folders")
    parser.add_argument("--cores", type=int, default=2, help="CPUs to pin the run to (default 2)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds the cold run may take")
    parser.add_argument("--keep", type=Path, help="also copy the HTML report here")
    args = parser.parse_args(argv)
    for path in args.paths:
        if not Path(path).is_dir():
            parser.error(f"not a folder: {path}")
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as temporary:
        work = Path(temporary)
        html = work / "fleet.html"
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        cold, cold_cpu = run_report(args.paths, html, work / "cache", args.cores, "html")
        warm, warm_cpu = run_report(args.paths, html, work / "cache", args.cores, "html")
        summary = work / "fleet.json"
        run_report(args.paths, summary, work / "cache", args.cores, "json")
        fleet = json.loads(summary.read_text(encoding="utf-8"))["fleet"]
        size = html.stat().st_size
        if args.keep:
            args.keep.write_bytes(html.read_bytes())
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"projects: {len(args.paths)}; cores: {min(args.cores, cpus or args.cores)}")
    for row in fleet:
        print(
            f"  {row['name']:<20} score {row['score']:>3}  {row['verdict']:<18} "
            f"{row['findings']:>4} findings"
        )
    print(f"cold (empty cache): {cold:.2f} s wall, {cold_cpu:.2f} s CPU")
    print(f"warm (cached):      {warm:.2f} s wall, {warm_cpu:.2f} s CPU")
    print(
        f"load average before the cold run: {load:.2f} (other work on the machine slows wall time)"
    )
    print(f"html: {size / 1024:.0f} KiB")
    if cold > args.budget:
        print(f"over budget: {cold:.1f} s > {args.budget:.0f} s")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
