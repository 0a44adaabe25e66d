"""Build a synthetic fleet and time ``migrate fleet`` on local Ray against a serial run.

Usage::

    python scripts/bench_fleet.py --repos 200 [--cpus 2] [--rounds N] [--keep DIR]

The fleet: copies of the bundled fixtures (``fixtures/``), generated variants of varied size
(1 to 40 Python files drawn from CUDA-first idioms, requirements, Dockerfiles, CUDA kernels
with inline PTX) and a few git repositories cloned over ``file://`` at a tag. Runs it serially
and on local Ray (``--rounds`` pairs, default 3, alternating which goes first, on the same
fleet), then on Ray again with every result stored. For each run: the 1-minute load average
before it, its wall time broken into start-up (until the first unit started), the units and the
tail (after the last unit ended), the seconds its unit-running processes spent between units,
and its CPU seconds (user and system) by kind of process: the driver, the workers with the
processes they fork, each of Ray's daemons. Then the ratio of wall times, CPU seconds per unit
of each (Ray's with its daemons and driver: CPU efficiency is less sensitive to the load than
wall time), the peak memory (sums of the resident and proportional set sizes of the process
tree, sampled every 0.1 s), and the per-unit costs the cost model in ``docs/fleet.md`` uses.
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
from typing import Any

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

#: Ray's daemons, by what their command line contains (the first match names it).
_DAEMONS = (
    ("gcs_server", "gcs_server"),
    ("raylet", "raylet/raylet"),
    ("dashboard agent", "dashboard/agent.py"),
    ("runtime-env agent", "runtime_env/agent"),
    ("dashboard", "dashboard/dashboard.py"),
    ("log monitor", "log_monitor.py"),
    ("autoscaler monitor", "monitor.py"),
)


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _kind(pid: int, root: int, parent_kind: str) -> str:
    """Which part of a run a process is: the driver, a Ray worker (with the processes it
    forks: a scan's per-file workers, git), one of Ray's daemons by name, or other (git)."""
    if pid == root:
        return "driver"
    command = _command(pid)
    program = " ".join(command.split()[:3])  # the executable and its script, not its options
    if "default_worker.py" in program or command.startswith("ray::_task"):
        return "workers"
    for name, part in _DAEMONS:
        if part in program:
            return name
    if command.startswith("ray::"):  # the agents name themselves ray::DashboardAgent, ...
        return command.split()[0].removeprefix("ray::")
    if parent_kind in ("driver", "workers"):
        return parent_kind
    return "other"


@dataclass
class _Proc:
    """What the samples saw of one process: parent, kind, its own CPU seconds and those of
    the children it reaped (user and system), and the last sample it was seen in."""

    parent: int
    kind: str
    own: float = 0.0
    reaped: float = 0.0
    seen: int = 0


def _sample(root: int, procs: dict[int, _Proc], tick: int) -> tuple[int, int]:
    """Bytes resident in ``root`` and all its descendants (sums of RSS and PSS); records each
    one's CPU in ``procs``."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    times: dict[int, tuple[float, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        parents[pid] = int(fields[1])
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        own = (int(fields[11]) + int(fields[12])) / _TICK
        times[pid] = (own, (int(fields[13]) + int(fields[14])) / _TICK)
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    family, frontier = [root], [root]
    while frontier:
        current = frontier.pop()
        for child in children.get(current, []):
            family.append(child)
            frontier.append(child)
    for member in family:
        if member not in times:
            continue
        if member not in procs:
            parent = parents[member]
            parent_kind = procs[parent].kind if parent in procs else ""
            procs[member] = _Proc(parent, _kind(member, root, parent_kind))
        proc = procs[member]
        proc.own, proc.reaped = max(proc.own, times[member][0]), max(proc.reaped, times[member][1])
        proc.seen = tick
    return sum(rss.get(member, 0) for member in family), sum(_pss(member) for member in family)


def _cpu_by_kind(procs: dict[int, _Proc]) -> dict[str, float]:
    """CPU seconds by kind of process: each one's own, plus what it reaped of children the
    samples never saw (short-lived ones: a scan's per-file worker lives a fraction of a
    second), so that no CPU second counts twice."""
    seen_reaped: dict[int, float] = {}
    for proc in procs.values():
        seen_reaped[proc.parent] = seen_reaped.get(proc.parent, 0.0) + proc.own + proc.reaped
    by_kind: dict[str, float] = {}
    for pid, proc in procs.items():
        unseen = max(0.0, proc.reaped - seen_reaped.get(pid, 0.0))
        by_kind[proc.kind] = by_kind.get(proc.kind, 0.0) + proc.own + unseen
    return by_kind


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
    """One ``migrate fleet`` run: wall seconds (and when it started, in Unix time), peak tree
    RSS and PSS, CPU seconds (user and system) of the whole process tree and by kind of
    process, and the 1-minute load average before it started."""

    seconds: float
    peak: int
    peak_pss: int
    cpu_total: float
    cpu: dict[str, float]
    load: float = 0.0
    began: float = 0.0


def run(manifest: Path, results: Path, extra: list[str]) -> Run:
    """Wall seconds, peak tree RSS and CPU seconds (the process tree, sampled every 0.1 s) of
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
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.time()
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    peak = peak_pss = 0
    procs: dict[int, _Proc] = {}
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_pss
        tick = 0
        while not stop.is_set():
            tick += 1
            rss, pss = _sample(process.pid, procs, tick)
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stop.set()
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"migrate fleet failed ({process.returncode}):\n{err}")
    by_kind = _cpu_by_kind(procs)
    total = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    # Processes that were never reaped up the chain (Ray's, killed at shutdown) are missing
    # from the rusage of the run's process; the samples have them.
    return Run(elapsed, peak, peak_pss, max(total, sum(by_kind.values())), by_kind, load, began)


def _records(results: Path) -> list[dict[str, Any]]:
    return [
        json.loads(record.read_text(encoding="utf-8"))
        for record in results.glob("units/*/*/unit.json")
    ]


def unit_costs(results: Path) -> tuple[float, float, float, float]:
    """Mean and p95 wall seconds per unit, mean CPU seconds (user and system, with the
    processes it forked) per unit, and the largest unit RSS (MiB), from the stored records."""
    records = _records(results)
    seconds = sorted(meta["seconds"] for meta in records)
    return (
        statistics.mean(seconds),
        seconds[int(0.95 * (len(seconds) - 1))],
        statistics.mean(meta.get("cpu_seconds", 0.0) for meta in records),
        max(meta["peak_rss_mib"] for meta in records),
    )


@dataclass
class Phases:
    """Where a run's wall time went, from its units' records: until the first unit started
    (start-up: imports, planning, and for Ray its daemons and workers), from then until the
    last unit ended, and after (the report, Ray's shutdown); and the seconds the processes
    that ran units spent between two units, in all."""

    startup: float
    units: float
    tail: float
    between: float
    processes: int


def phases(results: Path, run: Run) -> Phases:
    """The phases of ``run``, whose results are in ``results``."""
    records = _records(results)
    by_process: dict[int, list[tuple[float, float]]] = {}
    for meta in records:
        begin = meta["started"]
        by_process.setdefault(meta["pid"], []).append((begin, begin + meta["seconds"]))
    first = min(begin for begin, _ in (span for spans in by_process.values() for span in spans))
    last = max(end for _, end in (span for spans in by_process.values() for span in spans))
    between = 0.0
    for spans in by_process.values():
        spans.sort()
        between += sum(
            later[0] - earlier[1] for earlier, later in zip(spans, spans[1:], strict=False)
        )
    startup = first - run.began
    return Phases(
        startup, last - first, run.seconds - startup - (last - first), between, len(by_process)
    )


def _reports(results: Path) -> dict[str, bytes]:
    return {
        path.relative_to(results).as_posix(): path.read_bytes()
        for path in results.glob("units/*/*/report.json")
    }


def _cpu(run: Run) -> str:
    parts = ", ".join(
        f"{kind} {seconds:.1f}" for kind, seconds in sorted(run.cpu.items(), key=lambda x: -x[1])
    )
    return f"{run.cpu_total:.1f} ({parts})"


def _phases(phase: Phases) -> str:
    return (
        f"start-up {phase.startup:.1f} s, units {phase.units:.1f} s, tail {phase.tail:.1f} s, "
        f"{phase.between:.1f} s between units over {phase.processes} process(es)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="Pairs of runs, serial and Ray alternating (Ray first in every other round).",
    )
    parser.add_argument("--keep", type=Path, default=None, help="Build the fleet here and keep it.")
    args = parser.parse_args()
    if args.repos < 1 or args.rounds < 1 or args.cpus < 1:
        parser.error("--repos, --rounds and --cpus must be at least 1")
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    n = args.repos
    try:
        manifest = base / "fleet" / "fleet.toml"
        if not manifest.is_file():
            manifest = build_fleet(base / "fleet", n)
        ratios: list[float] = []
        serial_runs: list[Run] = []
        ray_runs: list[Run] = []
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
            serial, on_ray = done["serial"], done["ray"]
            serial_runs.append(serial)
            ray_runs.append(on_ray)
            ratios.append(serial.seconds / on_ray.seconds)
            same = _reports(serial_dir) == _reports(ray_dir)
            print(
                f"round {round_ + 1} ({' then '.join(order)}): ratio {ratios[-1]:.2f}x; "
                f"results identical: {'yes' if same else 'NO'}",
                flush=True,
            )
            for name, measured, folder in (
                ("serial", serial, serial_dir),
                ("ray", on_ray, ray_dir),
            ):
                print(
                    f"  {name}: {measured.seconds:.1f} s at load {measured.load:.2f}; "
                    f"{_phases(phases(folder, measured))}; CPU s {_cpu(measured)}",
                    flush=True,
                )
            if not same:
                return 1
        again = run(manifest, base / f"ray-{args.rounds - 1}", ["--num-cpus", str(args.cpus)])
        serial, on_ray = serial_runs[-1], ray_runs[-1]
        s_mean, _, s_cpu, _ = unit_costs(base / f"serial-{args.rounds - 1}")
        mean, p95, r_cpu, unit_rss = unit_costs(base / f"ray-{args.rounds - 1}")
        s_total = statistics.median(one.cpu_total for one in serial_runs)
        r_total = statistics.median(one.cpu_total for one in ray_runs)
        print(f"repositories: {n}")
        print(
            f"serial: median {statistics.median(one.seconds for one in serial_runs):.1f} s, "
            f"peak RSS {max(one.peak for one in serial_runs) / 2**20:.0f} MiB, "
            f"PSS {max(one.peak_pss for one in serial_runs) / 2**20:.0f} MiB"
        )
        print(
            f"ray ({args.cpus} CPUs): median "
            f"{statistics.median(one.seconds for one in ray_runs):.1f} s, "
            f"peak RSS {max(one.peak for one in ray_runs) / 2**20:.0f} MiB, "
            f"PSS {max(one.peak_pss for one in ray_runs) / 2**20:.0f} MiB "
            "(driver, Ray daemons and workers)"
        )
        print(
            f"ratio ray/serial: {statistics.median(ratios):.2f}x median of {len(ratios)} "
            f"({', '.join(f'{ratio:.2f}' for ratio in ratios)}); "
            f"load before each run: {', '.join(f'{one.load:.2f}' for one in ray_runs)} (ray), "
            f"{', '.join(f'{one.load:.2f}' for one in serial_runs)} (serial) on "
            f"{os.cpu_count()} cores"
        )
        print(
            f"CPU seconds per unit (user+sys, whole process tree, median run): serial "
            f"{s_total / n:.3f}, ray {r_total / n:.3f} with its daemons and driver; "
            f"CPU efficiency serial/ray {s_total / r_total:.2f}, so at most "
            f"{args.cpus * s_total / r_total:.2f}x on {args.cpus} idle cores"
        )
        print(f"CPU seconds inside the units: serial {s_cpu:.3f}, ray {r_cpu:.3f} per unit")
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
