"""Measure what the rocm-sim emulation costs: a small GPT training loop, native against rocm-sim.

Every run is a fresh process started exactly as ``migrate verify`` starts it (same workspace,
clean environment and probe; the emulation on for rocm-sim), with the same seed and settings.
Per variant (eager, and ``torch.compile``) each side first runs once alone, discarded (it fills
the compile caches; ``--diagnose`` inspects it). Then come ``--pairs`` pairs: a native and a
rocm-sim process start together, both warm up (``--warmup`` untimed steps), and then they take
turns of 10 steps each, so that only one works at a time and a change in the machine's speed
falls on both within a fraction of a second; the side that takes the first turn alternates
from pair to pair (ABBA). Each turn runs between two ``torch.cuda.synchronize()`` calls, timed
by CUDA events (``step_ms``: the median turn, per step) and by the wall clock (``loop_ms``: the
mean, per step). Per variant it prints each pair's rocm-sim/native ratio and the geometric mean
of the per-pair ratios with a 95 % t-interval (n - 1 degrees of freedom). The goal
(``--goal``, 1.05) is an upper bound of at most that for both figures.

Fairness is checked, not assumed: each run prints the settings that change the math (dtype,
TF32, matmul precision, SDPA and cuDNN flags, the first loss), and a difference between the
sides fails the benchmark. ``--diagnose`` adds, from the discarded runs, the CUDA kernels of three
steps (compared between the sides), the emulation's Python functions called per step and their
most frequent callers (cProfile), and Dynamo's graph-break and recompile counts.

    python scripts/bench_emulation.py --pairs 5 --steps 100 --pin 2-9      # eager and compiled
    python scripts/bench_emulation.py --variants compiled --diagnose --pairs 2
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from migrator.verify.process import run_process
from migrator.verify.stats import paired_ratio_interval
from migrator.verify.targets import native_invocation, sim_invocation
from migrator.verify.workspace import Workspace

TRAIN = r"""
import json, os, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

steps, variant, warmup = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
diagnose = "diagnose" in sys.argv[4:]
compiled = variant == "compiled"
torch.manual_seed(0)
cuda = torch.cuda.is_available()
device = "cuda" if cuda else "cpu"
# What user code typically asks (the emulation answers these): the device and its capability.
if cuda:
    major, _ = torch.cuda.get_device_capability()
    name = torch.cuda.get_device_name()
    dtype = torch.bfloat16 if major >= 8 else torch.float16
else:
    dtype = torch.bfloat16
layers, width, heads, block, batch, vocab = (6, 384, 6, 256, 32, 2048) if cuda else (2, 64, 2, 32, 4, 256)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
        self.blocks = nn.ModuleList(Block() for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for layer in self.blocks:
            x = layer(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, vocab), targets.reshape(-1))


model = GPT().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=cuda)
step_fn = torch.compile(model) if compiled else model
data = torch.randint(0, vocab, (batch, block + 1), device=device)
x, y = data[:, :-1], data[:, 1:]


def sync():
    if cuda:
        torch.cuda.synchronize()


def train_step():
    with torch.autocast(device_type=device, dtype=dtype):
        loss = step_fn(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


turn = next((arg[5:] for arg in sys.argv[4:] if arg.startswith("turn=")), None)
if turn:  # lockstep with the other side: wait for our turn, run 10 steps, hand the turn over
    folder, role = turn.rsplit(":", 1)
    mine, theirs, ready = (
        os.open(os.path.join(folder, name), os.O_RDWR)
        for name in (role, "b" if role == "a" else "a", "ready")
    )
first = train_step().item()
for _ in range(warmup - 1):
    train_step()
sync()
if turn:
    os.write(ready, b"r")
losses, gpu_ms, wall_ms = [], [], []
for _ in range(steps // 10):
    if turn:
        os.read(mine, 1)
    started = time.perf_counter()
    if cuda:
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
    for _ in range(10):
        losses.append(train_step())
    if cuda:
        end.record()
    sync()
    wall_ms.append((time.perf_counter() - started) * 1e3 / 10)
    gpu_ms.append(begin.elapsed_time(end) / 10 if cuda else wall_ms[-1])
    if turn:
        os.write(theirs, b"t")
if turn and role == "a":
    # the side that started waits for the other's last turn to end: its own teardown (printing,
    # freeing the CUDA context) must not fall into the other side's timed steps
    os.read(mine, 1)
for value in gpu_ms:
    print(f"block_ms: {value:.4f}")
for step in range(10, steps + 1, 10):
    print(f"step {step}/{steps} loss: {losses[step - 1].item():.4f}")
print(f"loop_ms: {sum(wall_ms) / len(wall_ms):.4f}")
sdp = torch.backends.cuda
fingerprint = {
    "dtype": str(dtype),
    "compiled": compiled,
    "tf32_matmul": sdp.matmul.allow_tf32,
    "tf32_cudnn": torch.backends.cudnn.allow_tf32,
    "matmul_precision": torch.get_float32_matmul_precision(),
    "bf16_reduced_reduction": sdp.matmul.allow_bf16_reduced_precision_reduction,
    "cudnn": [torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark],
    "deterministic": torch.are_deterministic_algorithms_enabled(),
    "sdp_flash_efficient_math_cudnn": [
        sdp.flash_sdp_enabled(), sdp.mem_efficient_sdp_enabled(), sdp.math_sdp_enabled(),
        sdp.cudnn_sdp_enabled(),
    ],
    "first_loss": round(first, 3),
}
print("fingerprint: " + json.dumps(fingerprint, sort_keys=True))
if diagnose:
    import cProfile, collections, pstats
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        for _ in range(3):
            train_step()
        sync()
    kernels = collections.Counter()
    gpu_us = 0.0
    for event in prof.events():
        if cuda and str(event.device_type).endswith("CUDA"):
            kernels[event.name] += 1
            gpu_us += event.device_time_total if hasattr(event, "device_time_total") else 0
    print("kernels: " + json.dumps(sorted(kernels.items())))
    print(f"gpu_kernel_ms_per_step: {gpu_us / 3e3:.4f}")
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(10):
        train_step()
    sync()
    profiler.disable()
    rows, total = [], 0.0
    for (file, line, func), (_, calls, own, _, callers) in pstats.Stats(profiler).stats.items():
        total += own
        if "_migrate_" in file:
            # who calls the emulation in the step loop: the three most frequent callers
            by = sorted(callers.items(), key=lambda item: -item[1][1])[:3]
            asked = [f"{where[0]}:{where[1]}:{where[2]} x{counts[1] / 10:g}" for where, counts in by]
            rows.append([f"{os.path.basename(file)}:{func}", calls / 10, own * 1e5, asked])
    rows.sort(key=lambda row: -row[2])
    print("hooks: " + json.dumps(rows))
    print(f"python_ms_per_step_profiled: {total * 1e2:.4f}")
    if compiled:
        from torch._dynamo.utils import counters

        print("dynamo: " + json.dumps({
            "graph_breaks": sum(counters["graph_break"].values()),
            "unique_graphs": counters["stats"]["unique_graphs"],
            "frames_ok": counters["frames"]["ok"],
            "recompiles": sum(counters["recompiles"].values()) if "recompiles" in counters else None,
        }))
"""

_BLOCK = re.compile(r"^block_ms: ([0-9.]+)$", re.M)
_LOOP = re.compile(r"^loop_ms: ([0-9.]+)$", re.M)
_JSON_LINE = re.compile(r"^(fingerprint|kernels|hooks|dynamo): (.*)$", re.M)
_FLOAT_LINE = re.compile(r"^(gpu_kernel_ms_per_step|python_ms_per_step_profiled): ([0-9.]+)$", re.M)
TARGETS = ("native", "rocm-sim")
FIGURES = ("step_ms", "loop_ms")
"""The training loop's figures: median GPU time per step of the 10-step blocks, and mean wall
time per step over the timed blocks; the goal applies to both."""
READY_TIMEOUT_S = 900.0

PIN: list[str] = []
"""``taskset -c CPUS`` before every run when ``--pin`` is given: the same cores for both sides."""


def one_run(
    workspace: Workspace,
    target: str,
    variant: str,
    args: argparse.Namespace,
    label: str,
    turn: str | None = None,
) -> dict[str, Any]:
    """One fresh process of the training script, started as ``migrate verify`` starts
    ``target``: its figures, fingerprint and diagnostics."""
    run_dir = workspace.run_dir("migrated", f"{target}-{variant}-{label}")
    diagnose = args.diagnose and label == "warmup"
    options = ["diagnose"] if diagnose else []
    if turn:
        options.append(f"turn={turn}")
    smoke = " ".join([*PIN, f"python train.py {args.steps} {variant} {args.warmup}", *options])
    env = dict(os.environ)
    if target == "native":
        run = native_invocation(workspace, "migrated", run_dir, smoke, (), env)
    else:
        run = sim_invocation(workspace, run_dir, smoke, (), env, ())
    if diagnose and variant == "compiled":
        run.env["TORCH_LOGS"] = "graph_breaks,recompiles"
    result = run_process(run.argv, cwd=run.cwd, env=run.env, timeout=900, log_dir=run_dir)
    if not result.ok:
        raise RuntimeError(f"{target} {variant} run failed:\n{result.stderr[-3000:]}")
    record: dict[str, Any] = {
        "blocks_ms": [float(value) for value in _BLOCK.findall(result.stdout)],
        "loop_ms": float(_LOOP.findall(result.stdout)[-1]),
        "process_s": result.wall_time_s,
    }
    record["step_ms"] = statistics.median(record["blocks_ms"])
    for key, value in _JSON_LINE.findall(result.stdout):
        record[key] = json.loads(value)
    for key, value in _FLOAT_LINE.findall(result.stdout):
        record[key] = float(value)
    if diagnose:
        logged = result.stderr.lower()
        record["stderr_graph_break_lines"] = logged.count("graph break")
        record["stderr_recompile_lines"] = logged.count("recompil")
    return record


def lockstep_pair(
    workspace: Workspace, order: tuple[str, str], variant: str, args: argparse.Namespace, label: str
) -> dict[str, dict[str, Any]]:
    """Both sides at once, taking turns of 10 steps (the first of ``order`` starts): drift in
    the machine's speed falls on both within a fraction of a second, and only one side ever
    works at a time. Each waits for the other's warm-up before its first turn."""
    folder = workspace.root / f"turns-{variant}-{label}"
    folder.mkdir()
    for name in ("a", "b", "ready"):
        os.mkfifo(folder / name)
    handles = {name: os.open(folder / name, os.O_RDWR) for name in ("a", "b", "ready")}
    records: dict[str, dict[str, Any]] = {}
    errors: list[BaseException] = []

    def side(role: str, target: str) -> None:
        try:
            records[target] = one_run(workspace, target, variant, args, label, f"{folder}:{role}")
        except BaseException as error:  # reported by the caller
            errors.append(error)

    threads = [
        threading.Thread(target=side, args=(role, target), daemon=True)
        for role, target in zip("ab", order, strict=True)
    ]
    for thread in threads:
        thread.start()
    try:
        ready = 0
        deadline = time.monotonic() + READY_TIMEOUT_S
        while ready < 2 and not errors and time.monotonic() < deadline:
            if select.select([handles["ready"]], [], [], 1.0)[0]:
                ready += len(os.read(handles["ready"], 2))
        if ready == 2:
            os.write(handles["a"], b"t")  # the first side's first turn
        for thread in threads:
            thread.join()
    finally:
        for handle in handles.values():
            os.close(handle)
    if errors or len(records) != 2:
        raise SystemExit(f"{variant} pair {label} failed: {errors[0] if errors else 'no start'}")
    return records


def check_same_math(records: dict[str, dict[str, Any]]) -> list[str]:
    """Differences between native's and rocm-sim's settings (and CUDA kernels, if diagnosed)."""
    native, sim = records["native"], records["rocm-sim"]
    problems = []
    if sim["fingerprint"] != native["fingerprint"]:
        problems.append(
            f"settings: rocm-sim {sim['fingerprint']} vs native {native['fingerprint']}"
        )
    if "kernels" in native and "kernels" in sim:
        differ = sorted(set(map(tuple, native["kernels"])) ^ set(map(tuple, sim["kernels"])))
        if differ:
            problems.append(f"CUDA kernels differ (name, count): {differ[:6]}")
    return problems


def bench(workspace: Workspace, variant: str, args: argparse.Namespace) -> dict[str, Any]:
    """A discarded (optionally diagnosed) warm-up of each side, then lockstep pairs whose
    starting side alternates (ABBA)."""
    warmup = {target: one_run(workspace, target, variant, args, "warmup") for target in TARGETS}
    problems = check_same_math(warmup)
    for target, record in warmup.items():
        shown = {
            key: value
            for key, value in record.items()
            if key not in ("kernels", "fingerprint", "blocks_ms")
        }
        print(f"  {variant} warm-up {target}: {json.dumps(shown)}", file=sys.stderr, flush=True)
    runs: dict[str, list[dict[str, Any]]] = {target: [] for target in TARGETS}
    for pair in range(1, args.pairs + 1):
        order = TARGETS if pair % 2 else TARGETS[::-1]
        records = lockstep_pair(workspace, order, variant, args, str(pair))
        problems.extend(check_same_math(records))
        for target in TARGETS:
            runs[target].append(records[target])
        print(
            f"  {variant} pair {pair} ({order[0]} first): "
            + "; ".join(
                f"{figure} native {records['native'][figure]:.4g} rocm-sim "
                f"{records['rocm-sim'][figure]:.4g} (×{records['rocm-sim'][figure] / records['native'][figure]:.3f})"
                for figure in FIGURES
            ),
            file=sys.stderr,
            flush=True,
        )
    ratios: dict[str, dict[str, Any]] = {}
    for figure in FIGURES:
        native = [run[figure] for run in runs["native"]]
        sim = [run[figure] for run in runs["rocm-sim"]]
        measured = paired_ratio_interval(native, sim)
        ratios[figure] = {
            "native_median": statistics.median(native),
            "sim_median": statistics.median(sim),
            "pair_ratios": [m / n for n, m in zip(native, sim, strict=True)],
            "ratio": measured.ratio if measured else None,
            "low": measured.low if measured else None,
            "high": measured.high if measured else None,
        }
    return {
        "variant": variant,
        "pairs": args.pairs,
        "steps": args.steps,
        "warmup_steps": args.warmup,
        "pin": args.pin,
        "warmup_runs": warmup,
        "runs": runs,
        "ratios": ratios,
        "problems": problems,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one row per variant and figure; 0 when the goal is met with
    the same math on both sides."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5, help="native/rocm-sim pairs [5]")
    parser.add_argument("--steps", type=int, default=100, help="timed training steps [100]")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first [20]")
    parser.add_argument("--variants", default="eager,compiled", help="eager,compiled")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--goal", type=float, default=1.05, help="upper bound to meet [1.05]")
    parser.add_argument("--pin", metavar="CPUS", help="run every side on these cores (taskset -c)")
    parser.add_argument(
        "--diagnose", action="store_true", help="kernels, hooks and Dynamo counts (warm-up runs)"
    )
    args = parser.parse_args(argv)
    if args.pin:
        PIN[:] = ["taskset", "-c", args.pin]
    if args.pairs < 2 or args.steps < 20 or args.steps % 10 or args.warmup < 1:
        parser.error("--pairs ≥ 2, --steps ≥ 20 and a multiple of 10, --warmup ≥ 1")
    project = Path(tempfile.mkdtemp(prefix="bench-emulation-"))
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    workspace = Workspace.create(project, sys.executable)
    results: list[dict[str, Any]] = []
    try:
        for variant in [part.strip() for part in args.variants.split(",") if part.strip()]:
            started = time.monotonic()
            results.append(bench(workspace, variant, args))
            print(f"  {variant}: {time.monotonic() - started:.0f}s", file=sys.stderr)
            if args.json:  # after each variant: a later failure keeps what was measured
                args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    finally:
        workspace.remove()
    met = True
    print("variant   figure    native    rocm-sim  ratio   95% interval        per pair")
    for result in results:
        for figure, row in result["ratios"].items():
            high = row["high"]
            met = met and high is not None and high <= args.goal
            pairs = " ".join(f"{ratio:.3f}" for ratio in row["pair_ratios"])
            print(
                f"{result['variant']:<9} {figure:<9} {row['native_median']:<9.4g} "
                f"{row['sim_median']:<9.4g} ×{row['ratio']:.3f}  "
                f"[×{row['low']:.3f}, ×{high:.3f}]  {pairs}"
            )
        for problem in result["problems"]:
            met = False
            print(f"{result['variant']}: NOT THE SAME MATH: {problem}")
    print(
        f"goal (rocm-sim/native upper bound ≤ ×{args.goal:.2f} for {' and '.join(FIGURES)}, "
        f"same math): {'met' if met else 'NOT met'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
