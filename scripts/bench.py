"""Benchmark `migrate scan` cold and warm against peers on the same trees, in one run.

Usage: python scripts/bench.py TREE [TREE ...] [--peers torchfix,semgrep,ruff,baseline] [--repeat N]
                                [--jobs 1,2] [--whole-parse]

For every tree: migrate warm, then migrate cold (a fresh cache each run), migrate cold parsing
every file whole (``--whole-parse``), migrate cold at each ``--jobs`` count and the peers, in
``--repeat`` rounds where each of them runs once in turn; medians of the rounds, and ratios as
the median over rounds of the two runs of one round (a shared machine's speed drifts by tens of
percent over minutes: commands timed one after another meet different machines). Prints wall time and CPU time (user + system of the whole process tree: the
command and every process it waited for, from the ``RUSAGE_CHILDREN`` delta around it), peak
resident memory of the whole process tree, RSS and PSS (sampled from /proc every 10 ms in one
more run of each command, never in a timed one: sampling slows the sampled program), and the
ratios peer/migrate by both clocks (on a shared machine CPU time is
the fair comparison; wall time needs a quiet one). Ends with a Markdown summary table. Peers that
are not installed are reported as such, never estimated; they are looked up next to this Python,
then on PATH (``SEMGREP``/``TORCHFIX`` name another executable; ``BASELINE`` names another build of
``migrate``, measured cold like migrate: the peer ``baseline``, e.g. the code before a change).
Before timing, the checkout's bytecode is written, as an installed package has it (and the
``BASELINE`` build's, by the Python its script names).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
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


#: Where each timed scan writes its JSON: a regular file (the write policy refuses
#: ``/dev/null``, which is not one); every command pays the same write.
_SINK = os.path.join(tempfile.gettempdir(), f"migrate-bench-{os.getpid()}.json")


def _tree_memory_kib(pid: int) -> tuple[int, int]:
    """Resident (RSS) and proportional (PSS) memory of the process tree, in KiB. RSS counts a
    page shared by several processes (a forked worker's inherited modules) once per process;
    PSS divides it among them, so the PSS sum is the memory the tree really holds."""
    total = proportional = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            with open(f"/proc/{current}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        proportional += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            continue
    return total, proportional


@dataclass(frozen=True)
class Run:
    """One command's wall seconds, CPU seconds (user + system, whole tree), peak MiB and exit."""

    wall: float
    cpu: float
    memory: float
    code: int
    #: peak of the tree's summed PSS, MiB (0 where /proc gives none)
    pss: float = 0.0


def measure(command: list[str], env: dict[str, str] | None = None, memory: bool = False) -> Run:
    """Run ``command`` to completion and measure it (its output is discarded): its time, or with
    ``memory`` its peak memory (then its time is not one to compare: see ``_series``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    peak = peak_pss = 0
    done = threading.Event()
    if not memory:
        done.set()

    def sample() -> None:
        nonlocal peak, peak_pss
        while not done.is_set():
            rss, pss = _tree_memory_kib(process.pid)
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = process.wait()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(elapsed, cpu, peak / 1024, code, peak_pss / 1024)


@dataclass(frozen=True)
class Series:
    """Repeated runs of one command: medians of the timed runs, and the peak memory of a run
    of its own."""

    runs: tuple[Run, ...]
    sampled: Run

    @property
    def wall(self) -> float:
        return statistics.median(run.wall for run in self.runs)

    @property
    def cpu(self) -> float:
        return statistics.median(run.cpu for run in self.runs)

    @property
    def memory(self) -> float:
        return self.sampled.memory

    @property
    def pss(self) -> float:
        return self.sampled.pss

    def describe(self) -> str:
        walls = ", ".join(f"{run.wall:.2f}" for run in self.runs)
        cpus = ", ".join(f"{run.cpu:.2f}" for run in self.runs)
        return (
            f"wall {self.wall:7.2f} s  cpu {self.cpu:7.2f} s  peak {self.memory:7.1f} MiB  "
            f"(PSS {self.pss:7.1f} MiB)  "
            f"exit {self.runs[0].code}  (wall: {walls}; cpu: {cpus})"
        )


Runner = Callable[[bool], Run]


def _series(run: Runner, times: int) -> Series:
    """``times`` timed runs, then one more that samples memory. Sampling every 10 ms reads each
    process's memory map under its lock, which stalls the sampled program by an amount that
    depends on how it uses memory (a third of migrate's wall time on xtuner, a third of
    semgrep's on unsloth). So no timed run is sampled."""
    return Series(tuple(run(False) for _ in range(times)), run(True))


def interleaved(runners: list[Runner], times: int) -> list[Series]:
    """``times`` rounds in which every command runs once, in turn, then one memory-sampled run
    of each: a shared machine's speed drifts by tens of percent over minutes, and commands
    timed one after another would each meet a different machine (each round meets one)."""
    rounds = [[run(False) for run in runners] for _ in range(times)]
    return [
        Series(tuple(round_[index] for round_ in rounds), run(True))
        for index, run in enumerate(runners)
    ]


def paired_ratio(base: Series, other: Series, clock: str) -> float:
    """The median over rounds of ``base``'s time ÷ ``other``'s in the same round (runs taken
    in turn, so each pair met the same machine)."""
    return float(
        statistics.median(
            getattr(mine, clock) / getattr(theirs, clock)
            for mine, theirs in zip(base.runs, other.runs, strict=True)
        )
    )


def plain(command: list[str], env: dict[str, str] | None = None) -> Runner:
    return lambda memory: measure(command, env, memory)


def cold(command: list[str]) -> Runner:
    """A run of ``command`` with a fresh, empty cache directory."""

    def run(memory: bool) -> Run:
        with tempfile.TemporaryDirectory() as fresh:
            return measure(command, {**os.environ, "MIGRATE_CACHE_DIR": fresh}, memory)

    return run


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


def _tool(name: str, bindir: Path) -> str | None:
    """An installed peer: ``$NAME`` (upper case), next to this Python, else on PATH."""
    chosen = os.environ.get(name.upper())
    if chosen:
        return chosen if Path(chosen).exists() else None
    local = bindir / name
    if local.exists():
        return str(local)
    return shutil.which(name)


def _peer_commands(tree: Path, bindir: Path, rules: Path) -> dict[str, list[str] | None]:
    def command(name: str, *arguments: str) -> list[str] | None:
        executable = _tool(name, bindir)
        return [executable, *arguments] if executable else None

    return {
        "torchfix": command("torchfix", "--select", "ALL", str(tree)),
        "semgrep": command(
            "semgrep",
            "scan",
            "--config",
            str(rules),
            "--metrics=off",
            "--disable-version-check",
            "--quiet",
            "--jobs",
            str(os.cpu_count() or 1),
            str(tree),
        ),
        "ruff": command(
            "ruff", "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", str(tree)
        ),
        # another build of migrate (``BASELINE=/path/to/migrate``), e.g. before a change: cold
        "baseline": command("baseline", "scan", "--format", "json", "--output", _SINK, str(tree)),
    }


def bench_tree(
    tree: Path, peers: list[str], times: int, jobs: list[int], rules: Path, whole: bool
) -> list[tuple[str, Series]]:
    """Every measurement of one tree: warm scans first, then migrate cold, its variants and the
    peers in interleaved rounds (``interleaved``); printed when taken."""
    bindir = Path(sys.executable).parent
    migrate = [str(bindir / "migrate"), "scan", "--format", "json", "--output", _SINK]
    files, lines = count_lines(tree)
    print(f"\ntree: {tree} ({files} .py files, {lines} lines); cpus: {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "MIGRATE_CACHE_DIR": cache}
        measure([*migrate, str(tree)], env)  # fill the cache
        warm = _series(plain([*migrate, str(tree)], env), times)
    contenders: list[tuple[str, Runner]] = [("migrate cold", cold([*migrate, str(tree)]))]
    if whole:
        contenders.append(
            ("migrate cold, whole-file parse", cold([*migrate, "--whole-parse", str(tree)]))
        )
    for count in jobs:
        contenders.append(
            (f"migrate cold --jobs {count}", cold([*migrate, "--jobs", str(count), str(tree)]))
        )
    commands = _peer_commands(tree, bindir, rules)
    for name in peers:
        command = commands.get(name)
        if command is None:
            print(f"{name:<22} not installed")
            continue
        contenders.append((name, cold(command) if name == "baseline" else plain(command)))
    measured = interleaved([run for _, run in contenders], times)
    first = measured[0]
    out: list[tuple[str, Series]] = [("migrate cold", first), ("migrate warm", warm)]
    out.extend(
        (name, series) for (name, _), series in zip(contenders[1:], measured[1:], strict=True)
    )
    for name, series in out:
        ratio = (
            ""
            if series is first
            else f"  ratio migrate-cold/{name} (median of rounds): wall "
            f"{paired_ratio(first, series, 'wall'):.2f}, cpu {paired_ratio(first, series, 'cpu'):.2f}"
        )
        print(f"{name:<22} {series.describe()}{ratio}")
    return out


def summary(results: list[tuple[Path, list[tuple[str, Series]]]]) -> str:
    """A Markdown table: one row per tree and measurement, with ratios to migrate cold."""
    rows = [
        "| tree | measurement | wall (median) | CPU user+sys (median) | peak memory, all "
        "processes (RSS / PSS) | migrate cold ÷ this, median of rounds (wall / CPU) |",
        "|---|---|---|---|---|---|",
    ]
    for tree, measured in results:
        base = measured[0][1]
        for name, series in measured:
            ratio = (
                ""
                if name == "migrate cold"
                else f"{paired_ratio(base, series, 'wall'):.2f} / "
                f"{paired_ratio(base, series, 'cpu'):.2f}"
            )
            rows.append(
                f"| {tree.name} | {name} | {series.wall:.2f} s | {series.cpu:.2f} s | "
                f"{series.memory:.0f} / {series.pss:.0f} MiB | {ratio} |"
            )
    return "\n".join(rows)


def compile_sources() -> None:
    """Write the bytecode of this checkout's packages (``__pycache__``, ignored by git), as an
    installed package has it: a checkout run with ``PYTHONDONTWRITEBYTECODE`` set (or never run
    before) would compile every module from source on each start, a cost no installed copy pays
    (the peers' own Python packages are installed with their bytecode)."""
    import compileall

    root = Path(__file__).resolve().parent.parent
    for package in ("migrator", "rules"):
        compileall.compile_dir(root / package, quiet=2)
    baseline = _tool("baseline", Path(sys.executable).parent)
    if baseline:  # the other build's bytecode too, by its own Python (named in its script)
        with open(baseline, encoding="utf-8", errors="replace") as script:
            first = script.readline()
        if first.startswith("#!"):
            subprocess.run(
                [
                    first[2:].strip(),
                    "-c",
                    "import compileall, os, migrator, rules\n"
                    "for m in (migrator, rules):\n"
                    "    compileall.compile_dir(os.path.dirname(m.__file__), quiet=2)",
                ],
                check=False,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", type=Path, nargs="+")
    parser.add_argument("--peers", default="torchfix,semgrep,ruff")
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of")
    parser.add_argument(
        "--jobs", default="", help="comma-separated worker counts for cold scans (e.g. 1,2)"
    )
    parser.add_argument(
        "--whole-parse",
        action="store_true",
        help="also time cold scans that parse every file whole (the reference of partial parsing)",
    )
    args = parser.parse_args()
    compile_sources()
    peers = [peer.strip() for peer in args.peers.split(",") if peer.strip()]
    jobs = [int(count) for count in args.jobs.split(",") if count.strip()]
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        rules = Path(scratch) / "six.yaml"
        rules.write_text(SEMGREP_RULES)
        for tree in args.trees:
            results.append(
                (
                    tree.resolve(),
                    bench_tree(tree.resolve(), peers, args.repeat, jobs, rules, args.whole_parse),
                )
            )
    print()
    print(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
