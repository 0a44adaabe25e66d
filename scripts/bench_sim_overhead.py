"""Benchmark: does the rocm-sim emulation change a program's speed? Prints a table of figures.

Runs one command natively and under each given emulation folder (``LABEL=DIR``, a copy of
``migrator/verify/sim``; ``new`` = this checkout's), interleaved for ``--rounds`` rounds, and
reads one metric from stdout (default ``time per iteration: X ms``). Each figure is the median
over the printed values after the first (compilation and warm-up). Usage::

    python scripts/bench_sim_overhead.py --cwd corpus/litgpt --sim old=/tmp/old-sim \
        --rounds 2 -- python train_smoke.py
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _figure(values: list[float]) -> float | None:
    kept = values[1:] if len(values) >= 3 else values
    return float(statistics.median(kept)) if kept else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", default=".")
    parser.add_argument("--sim", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--metric", default=r"time per iteration: ([0-9.]+) ms")
    parser.add_argument("--json", help="write all values here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    variants: list[tuple[str, dict[str, str]]] = [("native", {})]
    sims = args.sim or [f"new={HERE / 'migrator' / 'verify' / 'sim'}"]
    for item in sims:
        label, _, folder = item.partition("=")
        variants.append((label, {"PYTHONPATH": folder, "MIGRATE_SIM_PROFILE": "rocm-mi300x"}))
    pattern = re.compile(args.metric)
    results: dict[str, list[dict[str, object]]] = {label: [] for label, _ in variants}
    figures_of: dict[str, list[float]] = {label: [] for label, _ in variants}
    for round_index in range(args.rounds):
        for label, extra in variants:
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
            env.update(extra)
            start = time.monotonic()
            done = subprocess.run(
                command, cwd=args.cwd, env=env, capture_output=True, text=True, check=False
            )
            values = [float(value) for value in pattern.findall(done.stdout)]
            figure = _figure(values)
            if figure is not None:
                figures_of[label].append(figure)
            results[label].append(
                {
                    "round": round_index,
                    "exit": done.returncode,
                    "figure": figure,
                    "values": values,
                    "wall_s": round(time.monotonic() - start, 1),
                    "stderr_tail": done.stderr[-1500:] if done.returncode else "",
                }
            )
            print(
                f"round {round_index} {label}: exit {done.returncode}, figure {figure}, "
                f"wall {time.monotonic() - start:.1f}s",
                flush=True,
            )
            if done.returncode:
                print(done.stderr[-1500:], file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    native = figures_of["native"]
    base = statistics.median(native) if native else None
    print(f"\n{'variant':<10} {'figures per round':<40} {'median':>10} {'vs native':>10}")
    for label, _ in variants:
        figures = figures_of[label]
        median = statistics.median(figures) if figures else None
        ratio = f"×{median / base:.3f}" if median and base else "-"
        shown = ", ".join(f"{value:.3f}" for value in figures)
        print(f"{label:<10} {shown:<40} {median if median is not None else '-':>10} {ratio:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
