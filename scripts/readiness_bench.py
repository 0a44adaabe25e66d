"""Time the readiness stage of ``migrate report`` (layout, opt-in facts, work items, score) apart
from the scan, on one or more projects.

Usage::

    python scripts/readiness_bench.py /work/corpus/diffusers [--repeat 2]

Scans each project once (the scan cache applies, as in ``migrate report``), then builds its
readiness ``--repeat`` times and prints the wall time of the scan and of each build, the number of
files and findings, and the score and verdict.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("paths", nargs="+", help="project folders")
    parser.add_argument("--repeat", type=int, default=2, help="readiness builds per project")
    args = parser.parse_args(argv)
    from migrator.engine.runner import scan
    from migrator.reporting.readiness import build_project

    for path in args.paths:
        root = Path(path)
        if not root.is_dir():
            print(f"{path}: not a folder")
            return 2
        started = time.perf_counter()
        result = scan(root).scan
        scanned = time.perf_counter() - started
        print(
            f"{root.name}: scan {scanned:.2f} s ({len(result.files)} files, "
            f"{len(result.findings)} findings)"
        )
        for run in range(1, max(1, args.repeat) + 1):
            started = time.perf_counter()
            project = build_project(result, name=root.name)
            built = time.perf_counter() - started
            print(
                f"  readiness build {run}: {built:.2f} s -> {project.score} "
                f"({project.verdict.label})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
