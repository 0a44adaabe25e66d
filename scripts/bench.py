"""Benchmark `migrate scan` cold and warm against peers on the same tree, in one run.

Usage: python scripts/bench.py TREE [--peers torchfix,semgrep,ruff] [--repeat N]

Prints wall times, peak memory of the whole process tree (sampled from /proc), and ratios
peer/migrate. Peers that are not installed are reported as such, never estimated.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SEMGREP_RULES = """rules:
  - id: pynvml
    languages: [python]
    severity: ERROR
    message: pynvml
    pattern-either:
      - pattern: pynvml.$F(...)
      - pattern: import pynvml
  - id: nvidia-smi
    languages: [python]
    severity: ERROR
    message: nvidia-smi
    pattern: subprocess.$F(["nvidia-smi", ...], ...)
  - id: flash-attn
    languages: [python]
    severity: ERROR
    message: flash-attn
    pattern: flash_attn.flash_attn_func(...)
  - id: version-cuda
    languages: [python]
    severity: ERROR
    message: torch.version.cuda
    pattern: torch.version.cuda
  - id: cuda-amp
    languages: [python]
    severity: WARNING
    message: torch.cuda.amp
    pattern: torch.cuda.amp.autocast(...)
  - id: capability
    languages: [python]
    severity: WARNING
    message: capability gate
    pattern: torch.cuda.get_device_capability(...) >= $X
"""


def _tree_rss_kib(pid: int) -> int:
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            continue
    return total


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak MiB of the process tree, exit code)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kib(process.pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = process.wait()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    return elapsed, peak / 1024, code


def count_lines(tree: Path) -> tuple[int, int]:
    files = lines = 0
    for path in tree.rglob("*.py"):
        if ".git" in path.parts:
            continue
        files += 1
        try:
            lines += path.read_bytes().count(b"\n")
        except OSError:
            pass
    return files, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--peers", default="torchfix,semgrep,ruff")
    parser.add_argument(
        "--repeat", type=int, default=3, help="cold and warm runs to take the median of"
    )
    args = parser.parse_args()
    tree = args.tree.resolve()
    bindir = Path(sys.executable).parent
    migrate = [
        str(bindir / "migrate"),
        "scan",
        "--format",
        "json",
        "--output",
        os.devnull,
        str(tree),
    ]
    files, lines = count_lines(tree)
    print(f"tree: {tree} ({files} .py files, {lines} lines); cpus: {os.cpu_count()}")
    results: dict[str, float] = {}
    cold_runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as fresh:
            cold_runs.append(measure(migrate, {**os.environ, "MIGRATE_CACHE_DIR": fresh}))
    cold = statistics.median(run[0] for run in cold_runs)
    cold_mem = max(run[1] for run in cold_runs)
    code = cold_runs[0][2]
    print(
        f"migrate cold      {cold:8.2f} s   (median of {args.repeat}: "
        f"{', '.join(f'{run[0]:.2f}' for run in cold_runs)})   peak {cold_mem:7.1f} MiB (all processes)   exit {code}"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "MIGRATE_CACHE_DIR": cache}
        measure(migrate, env)  # fill the cache
        warm_runs = [measure(migrate, env) for _ in range(args.repeat)]
        warm = statistics.median(run[0] for run in warm_runs)
        print(
            f"migrate warm      {warm:8.3f} s   (median of {args.repeat})   peak {max(r[1] for r in warm_runs):7.1f} MiB"
        )
        results["migrate-cold"] = cold
    peers = {
        "torchfix": [str(bindir / "torchfix"), "--select", "ALL", str(tree)],
        "ruff": [
            str(bindir / "ruff"),
            "check",
            "--select",
            "ALL",
            "--no-cache",
            "--exit-zero",
            "-q",
            str(tree),
        ],
    }
    with tempfile.TemporaryDirectory() as scratch:
        rules = Path(scratch) / "six.yaml"
        rules.write_text(SEMGREP_RULES)
        peers["semgrep"] = [
            str(bindir / "semgrep"),
            "scan",
            "--config",
            str(rules),
            "--metrics=off",
            "--disable-version-check",
            "--quiet",
            "--jobs",
            str(os.cpu_count() or 1),
            str(tree),
        ]
        for name in [peer.strip() for peer in args.peers.split(",") if peer.strip()]:
            command = peers.get(name)
            if command is None or not (Path(command[0]).exists() or shutil.which(command[0])):
                print(f"{name:<17} not installed")
                continue
            elapsed, memory, code = measure(command)
            results[name] = elapsed
            print(
                f"{name:<17} {elapsed:8.2f} s   peak {memory:7.1f} MiB   exit {code}   ratio {elapsed / cold:6.1f}x migrate cold"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
