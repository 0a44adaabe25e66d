"""Build a synthetic fleet and time ``migrate fleet`` on local Ray against a serial run.

Usage::

    python scripts/bench_fleet.py --repos 200 [--cpus 2] [--rounds N] [--keep DIR]

The fleet: copies of the bundled fixtures (``fixtures/``), generated variants of varied size
(1 to 40 Python files drawn from CUDA-first idioms, requirements, Dockerfiles, CUDA kernels
with inline PTX) and a few git repositories cloned over ``file://`` at a tag. Runs it serially
and on local Ray (``--rounds`` pairs, alternating which goes first, on the same fleet), then on
Ray again with every result stored. Prints units per second and their ratio, CPU seconds (user
and system) in all, by kind of process and per unit, the peak memory of each run (the sums of
the resident and proportional set sizes of its process tree, sampled every 0.2 s), the load
average around each run, and the per-unit costs the cost model in ``docs/fleet.md`` uses.
Exit 1 when a Ray run is not faster than its serial one or their results differ.

The machine's load matters more than it seems: with the kernel's autogroup scheduling (the
default on desktop and many server kernels), a busy machine shares its CPUs between sessions,
not processes, so a Ray run whose workers share the session of the command gets no more CPU
than a serial run while other sessions keep the cores busy. Measure on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
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


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _kind(pid: int, root: int) -> str:
    """Which part of a run a process is: the driver (or a process it forked), a Ray worker (or
    a process it forked), a Ray daemon, or other (git)."""
    command = _command(pid)
    if pid == root or command == _command(root):
        return "driver"
    if "default_worker.py" in command or command.startswith("ray::"):
        return "workers"
    if "ray" in command:
        return "ray daemons"
    return "other"


def _tree(pid: int, cpu: dict[int, float], kinds: dict[int, str]) -> tuple[int, int]:
    """Bytes resident in ``pid`` and all its descendants (RSS and PSS); records each one's CPU seconds (user
    and system, its own, not its reaped children's: those are sampled themselves) in ``cpu``
    and its kind in ``kinds``."""
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
        ticks[int(entry)] = int(fields[11]) + int(fields[12])
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
            if member not in kinds:
                kinds[member] = _kind(member, pid)
    return sum(rss.get(member, 0) for member in family), sum(_pss(member) for member in family)


def _pss(pid: int) -> int:
    """Bytes of proportional set size (shared pages divided among the processes that map
    them: the tree's sum is the memory it takes, where the sum of RSS counts Ray's shared
    libraries once per process)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


@dataclass
class Run:
    """One ``migrate fleet`` run: wall seconds, peak tree RSS, CPU seconds (user and system)
    of the whole process tree and, sampled, by kind of process."""

    seconds: float
    peak: int
    peak_pss: int
    cpu_total: float
    cpu: dict[str, float]


def run(manifest: Path, results: Path, extra: list[str]) -> Run:
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
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    peak = peak_pss = 0
    cpu: dict[int, float] = {}
    kinds: dict[int, str] = {}
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_pss
        while not stop.is_set():
            rss, pss = _tree(process.pid, cpu, kinds)
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stop.set()
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"migrate fleet failed ({process.returncode}):\n{err}")
    by_kind: dict[str, float] = {}
    for member, seconds in cpu.items():
        by_kind[kinds[member]] = by_kind.get(kinds[member], 0.0) + seconds
    total = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    # Processes that were never reaped up the chain (Ray's, killed at shutdown) are missing
    # from the rusage of the run's process; the samples have them.
    return Run(elapsed, peak, peak_pss, max(total, sum(by_kind.values())), by_kind)


def unit_costs(results: Path) -> tuple[float, float, float, float]:
    """Mean and p95 wall seconds per unit, mean CPU seconds (user and system) per unit, and the
    largest unit RSS (MiB), from the stored records."""
    seconds, cpu, rss = [], [], []
    for record in results.glob("units/*/*/unit.json"):
        meta = json.loads(record.read_text(encoding="utf-8"))
        seconds.append(meta["seconds"])
        cpu.append(meta.get("cpu_seconds", 0.0))
        rss.append(meta["peak_rss_mib"])
    seconds.sort()
    return (
        statistics.mean(seconds),
        seconds[int(0.95 * (len(seconds) - 1))],
        statistics.mean(cpu),
        max(rss),
    )


def _reports(results: Path) -> dict[str, bytes]:
    return {
        path.relative_to(results).as_posix(): path.read_bytes()
        for path in results.glob("units/*/*/report.json")
    }


def _cpu(run: Run) -> str:
    parts = ", ".join(f"{kind} {seconds:.1f}" for kind, seconds in sorted(run.cpu.items()))
    return f"{run.cpu_total:.1f} (sampled: {parts})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="Pairs of runs, serial and Ray alternating (Ray first in every other round).",
    )
    parser.add_argument("--keep", type=Path, default=None, help="Build the fleet here and keep it.")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    n = args.repos
    try:
        manifest = base / "fleet" / "fleet.toml"
        if not manifest.is_file():
            manifest = build_fleet(base / "fleet", n)
        ratios, loads = [], [os.getloadavg()[0]]
        serial_runs, ray_runs = [], []
        for round_ in range(args.rounds):
            serial_dir, ray_dir = base / f"serial-{round_}", base / f"ray-{round_}"
            for folder in (serial_dir, ray_dir):
                shutil.rmtree(folder, ignore_errors=True)
            order = ["serial", "ray"] if round_ % 2 == 0 else ["ray", "serial"]
            done: dict[str, Run] = {}
            for which in order:
                if which == "serial":
                    done[which] = run(manifest, serial_dir, ["--serial"])
                else:
                    done[which] = run(manifest, ray_dir, ["--num-cpus", str(args.cpus)])
                loads.append(os.getloadavg()[0])
            serial, on_ray = done["serial"], done["ray"]
            serial_runs.append(serial)
            ray_runs.append(on_ray)
            ratios.append(serial.seconds / on_ray.seconds)
            same = _reports(serial_dir) == _reports(ray_dir)
            print(
                f"round {round_ + 1} ({' then '.join(order)}): serial {serial.seconds:.1f} s, "
                f"ray {on_ray.seconds:.1f} s, ratio {ratios[-1]:.2f}x; CPU s serial "
                f"{_cpu(serial)}, ray {_cpu(on_ray)}; results identical: "
                f"{'yes' if same else 'NO'}",
                flush=True,
            )
            if not same:
                return 1
        again = run(manifest, base / f"ray-{args.rounds - 1}", ["--num-cpus", str(args.cpus)])
        serial, on_ray = serial_runs[-1], ray_runs[-1]
        s_mean, _, s_cpu, _ = unit_costs(base / f"serial-{args.rounds - 1}")
        mean, p95, r_cpu, unit_rss = unit_costs(base / f"ray-{args.rounds - 1}")
        print(f"repositories: {n}")
        print(
            f"serial: {serial.seconds:.1f} s, {n / serial.seconds:.2f} units/s, "
            f"peak RSS {serial.peak / 2**20:.0f} MiB, PSS {serial.peak_pss / 2**20:.0f} MiB"
        )
        print(
            f"ray ({args.cpus} CPUs): {on_ray.seconds:.1f} s, {n / on_ray.seconds:.2f} units/s, "
            f"peak RSS {on_ray.peak / 2**20:.0f} MiB, PSS {on_ray.peak_pss / 2**20:.0f} MiB "
            "(driver, Ray daemons and workers)"
        )
        print(
            f"ratio ray/serial: {statistics.median(ratios):.2f}x median of {len(ratios)} "
            f"({', '.join(f'{ratio:.2f}' for ratio in ratios)})"
        )
        print(
            f"CPU seconds (user+sys): serial {serial.cpu_total:.1f} = "
            f"{serial.cpu_total / n:.3f} per unit, ray {on_ray.cpu_total:.1f} = "
            f"{on_ray.cpu_total / n:.3f} per unit (Ray's overhead "
            f"{100 * (on_ray.cpu_total / serial.cpu_total - 1):.0f}%)"
        )
        print(f"CPU seconds inside the units: serial {s_cpu:.3f}, ray {r_cpu:.3f} per unit")
        print(
            f"load average (1 min) before and after each run: "
            f"{', '.join(f'{load:.2f}' for load in loads)} on {os.cpu_count()} cores"
        )
        print(
            f"second run (every unit reused): {again.seconds:.1f} s = "
            f"{100 * again.seconds / on_ray.seconds:.1f}% of the first"
        )
        print(
            f"per unit on Ray: mean {mean:.2f} s (serial {s_mean:.2f} s), p95 {p95:.2f} s, "
            f"largest worker RSS {unit_rss:.0f} MiB"
        )
        return 0 if min(ratios) > 1 else 1
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
