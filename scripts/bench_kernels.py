"""Cold-scan cost of reading C/C++/CUDA sources (issue #32): `migrate scan --no-cache` on a tree
with kernel sources, against the same scan with every C/C++/CUDA file excluded, in interleaved
rounds (each round runs both, so machine drift hits both alike). Prints the medians of wall and
CPU time (the process and its workers) and the ratio kernels-on / kernels-off, median over
rounds of same-round pairs.

    python scripts/bench_kernels.py TREE [TREE ...] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".hxx", ".inl")


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process tree) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "MIGRATE_CACHE_DIR": cache}
        subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False
        )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    base = [sys.executable, "-m", "migrator", "scan", "--no-cache", "--format", "json"]
    off_flags = [flag for suffix in SUFFIXES for flag in ("--exclude", f"*{suffix}")]
    print(
        "| tree | kernel files | on: wall s | off: wall s | on: CPU s | off: CPU s | ratio wall | ratio CPU |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for tree in options.trees:
        files = sum(1 for p in tree.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
        on_runs: list[tuple[float, float]] = []
        off_runs: list[tuple[float, float]] = []
        for _ in range(options.repeat):
            on_runs.append(timed([*base, str(tree)]))
            off_runs.append(timed([*base, *off_flags, str(tree)]))
        wall_ratio = statistics.median(
            on[0] / off[0] for on, off in zip(on_runs, off_runs, strict=True)
        )
        cpu_ratio = statistics.median(
            on[1] / off[1] for on, off in zip(on_runs, off_runs, strict=True)
        )
        med = statistics.median
        print(
            f"| {tree.name} | {files} | {med(r[0] for r in on_runs):.2f} | {med(r[0] for r in off_runs):.2f} "
            f"| {med(r[1] for r in on_runs):.2f} | {med(r[1] for r in off_runs):.2f} | {wall_ratio:.2f} | {cpu_ratio:.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
