"""Build a synthetic fleet and time ``migrate fleet`` on local Ray against a serial run.

Usage::

    python scripts/bench_fleet.py --repos 200 [--cpus 2] [--keep DIR]

The fleet: copies of the bundled fixtures (``fixtures/``), generated variants of varied size
(1 to 40 Python files drawn from CUDA-first idioms, requirements, Dockerfiles, CUDA kernels
with inline PTX) and a few git repositories cloned over ``file://`` at a tag. Prints units per
second serial and on Ray, their ratio, the peak memory of each run (the sum of the resident
sets of the run's process tree, sampled every 0.2 s) and the per-unit costs the cost model in
``docs/fleet.md`` uses. Exit 1 when the Ray run is not faster than the serial one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

_SNIPPETS = [
    "import torch\n\nDEVICE = torch.device('cuda')\nx = torch.zeros(4).cuda()\n",
    "import torch\n\nif torch.version.cuda:\n    MAJOR = int(torch.version.cuda.split('.')[0])\n",
    "import torch\n\nwith torch.cuda.amp.autocast():\n    pass\n",
    "import pynvml\n\npynvml.nvmlInit()\n",
    "import subprocess\n\nsubprocess.run(['nvidia-smi'])\n",
    "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
    "import os\n\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n",
    "from flash_attn import flash_attn_func\n\n\ndef attend(q, k, v):\n    return flash_attn_func(q, k, v)\n",
    "import torch\n\nprint(torch.float8_e4m3fn)\n",
    "import math\n\n\ndef area(r):\n    return math.pi * r * r\n",
    "import apex\n\nnorm = apex.normalization.FusedLayerNorm(16)\n",
]
_REQUIREMENTS = ["torch==2.4.0+cu121", "flash-attn", "bitsandbytes", "cupy-cuda12x", "numpy"]
_KERNEL = (
    "__global__ void lane(int *out) {\n  int id;\n"
    '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));\n  out[threadIdx.x] = id;\n}\n'
)


def _variant(folder: Path, rng: random.Random) -> None:
    """A generated project of random size and content."""
    package = folder / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    for index in range(rng.choice([1, 2, 4, 8, 15, 25, 40])):
        body = "\n".join(rng.sample(_SNIPPETS, rng.randint(1, 4)))
        padding = "".join(
            f"\n\ndef helper_{index}_{n}(value):\n    return value * {n}\n"
            for n in range(rng.randint(0, 30))
        )
        (package / f"mod_{index}.py").write_text(body + padding, encoding="utf-8")
    if rng.random() < 0.7:
        picks = rng.sample(_REQUIREMENTS, rng.randint(1, 3))
        (folder / "requirements.txt").write_text("\n".join(picks) + "\n", encoding="utf-8")
    if rng.random() < 0.3:
        (folder / "Dockerfile").write_text(
            "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN pip install torch\n", encoding="utf-8"
        )
    if rng.random() < 0.15:
        (folder / "csrc").mkdir()
        (folder / "csrc" / "lane.cu").write_text(_KERNEL, encoding="utf-8")


def _git(folder: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=folder,
        env=env,
        check=True,
        capture_output=True,
    )


def build_fleet(dest: Path, count: int, git_repos: int = 4, seed: int = 7) -> Path:
    """Create ``count`` repositories under ``dest`` and a TOML manifest naming them; return
    the manifest. ``git_repos`` of them are git repositories cloned at tag ``v1``."""
    rng = random.Random(seed)
    dest.mkdir(parents=True, exist_ok=True)
    entries = []
    fixtures = sorted(path for path in FIXTURES.iterdir() if path.is_dir())
    for index in range(count):
        name = f"r{index:04d}"
        folder = dest / "repos" / name
        if index < git_repos:
            _variant(folder, rng)
            _git(folder, "init", "-q")
            _git(folder, "add", "-A")
            _git(folder, "commit", "-q", "-m", "initial")
            _git(folder, "tag", "v1")
            entries.append(f'[[repo]]\nname = "{name}"\nurl = "file://{folder}"\nref = "v1"\n')
            continue
        if index % 10 == git_repos % 10:
            shutil.copytree(fixtures[(index // 10) % len(fixtures)], folder)
        else:
            _variant(folder, rng)
        entries.append(f'[[repo]]\nname = "{name}"\npath = "repos/{name}"\n')
    manifest = dest / "fleet.toml"
    manifest.write_text("\n".join(entries), encoding="utf-8")
    return manifest


_TICK = os.sysconf("SC_CLK_TCK")


def _tree(pid: int, cpu: dict[int, float]) -> int:
    """Bytes resident in ``pid`` and all its descendants; records each one's CPU seconds (user
    and system, its own and its reaped children's) in ``cpu``."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        ticks[int(entry)] = sum(int(value) for value in fields[11:15])
    family, frontier = {pid}, [pid]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in family:
                family.add(child)
                frontier.append(child)
    for member in family:
        if member in ticks:
            cpu[member] = max(cpu.get(member, 0.0), ticks[member] / _TICK)
    return sum(rss.get(member, 0) for member in family)


def run(manifest: Path, results: Path, extra: list[str]) -> tuple[float, int, float]:
    """Wall seconds, peak tree RSS and CPU seconds (the process tree, sampled every 0.2 s) of
    one ``migrate fleet`` run."""
    command = [
        sys.executable,
        "-m",
        "migrator",
        "fleet",
        str(manifest),
        "--results",
        str(results),
        "--format",
        "json",
        "-o",
        str(results) + ".json",
        *extra,
    ]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    peak = 0
    cpu: dict[int, float] = {}
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree(process.pid, cpu))
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    elapsed = time.perf_counter() - start
    stop.set()
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"migrate fleet failed ({process.returncode}):\n{err}")
    return elapsed, peak, sum(cpu.values())


def unit_costs(results: Path) -> tuple[float, float, float]:
    """Mean and p95 seconds per unit, and the largest unit RSS (MiB), from the stored records."""
    seconds, rss = [], []
    for record in results.glob("units/*/*/unit.json"):
        meta = json.loads(record.read_text(encoding="utf-8"))
        seconds.append(meta["seconds"])
        rss.append(meta["peak_rss_mib"])
    seconds.sort()
    return statistics.mean(seconds), seconds[int(0.95 * (len(seconds) - 1))], max(rss)


def _reports(results: Path) -> dict[str, bytes]:
    return {
        path.relative_to(results).as_posix(): path.read_bytes()
        for path in results.glob("units/*/*/report.json")
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="Build the fleet here and keep it.")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    try:
        manifest = build_fleet(base / "fleet", args.repos)
        serial_s, serial_rss, serial_cpu = run(manifest, base / "serial", ["--serial"])
        ray_s, ray_rss, ray_cpu = run(manifest, base / "ray", ["--num-cpus", str(args.cpus)])
        again_s, _, _ = run(manifest, base / "ray", ["--num-cpus", str(args.cpus)])
        mean, p95, unit_rss = unit_costs(base / "ray")
        same = _reports(base / "serial") == _reports(base / "ray")
        n = args.repos
        print(f"repositories: {n}")
        print(
            f"serial: {serial_s:.1f} s, {n / serial_s:.2f} units/s, peak RSS {serial_rss / 2**20:.0f} MiB"
        )
        print(
            f"ray ({args.cpus} CPUs): {ray_s:.1f} s, {n / ray_s:.2f} units/s, peak RSS {ray_rss / 2**20:.0f} MiB (driver, Ray daemons and workers)"
        )
        print(f"ratio ray/serial: {serial_s / ray_s:.2f}x")
        print(
            f"CPU seconds: serial {serial_cpu:.1f}, ray {ray_cpu:.1f} (Ray's overhead {100 * (ray_cpu / serial_cpu - 1):.0f}%)"
        )
        print(f"load average during the runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(
            f"second run (every unit reused): {again_s:.1f} s = {100 * again_s / ray_s:.1f}% of the first"
        )
        print(
            f"per unit on Ray: mean {mean:.2f} s, p95 {p95:.2f} s, largest worker RSS {unit_rss:.0f} MiB"
        )
        print(f"serial and Ray results identical (every report.json): {'yes' if same else 'NO'}")
        return 0 if ray_s < serial_s and same else 1
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
