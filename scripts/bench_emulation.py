"""Measure what the rocm-sim emulation costs: a small GPT training loop, native against rocm-sim.

Each variant (eager, and ``torch.compile``) runs natively and under the emulation in alternating
pairs (order swapped every other pair, so drift falls on both sides), after one discarded warm-up
pair that fills the compile caches. Every run is a fresh process started exactly as ``migrate
verify`` starts it (same workspace, clean environment and probe; the emulation on for rocm-sim).
Per run it records the median step time (synchronised every 10 steps) after warm-up, the training loop's time and the
process's wall time; per variant it reports the rocm-sim/native ratio of each with a 95%
t-interval over the per-pair ratios. The goal is an upper bound of at most 1.05.

    python scripts/bench_emulation.py                      # eager and compiled, 5 pairs, 150 steps
    python scripts/bench_emulation.py --pairs 7 --steps 200 --json bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from migrator.verify.process import run_process
from migrator.verify.stats import paired_ratio_interval
from migrator.verify.targets import native_invocation, sim_invocation
from migrator.verify.workspace import Workspace

TRAIN = r"""
import os, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

steps = int(sys.argv[1])
compiled = sys.argv[2] == "compiled"
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
hip = torch.version.hip is not None
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
loop_start = time.perf_counter()
block_start = time.perf_counter()
for step in range(1, steps + 1):
    with torch.autocast(device_type=device, dtype=dtype):
        loss = step_fn(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 10 == 0:  # one sync per 10 steps: launches overlap the GPU, as in real training
        value = loss.item()
        now = time.perf_counter()
        print(f"step {step}/{steps} loss: {value:.4f} step_ms: {(now - block_start) * 1e2:.3f}")
        block_start = now
print(f"loop_s: {time.perf_counter() - loop_start:.4f}")
"""

_STEP = re.compile(r"step_ms: ([0-9.]+)")
_LOOP = re.compile(r"loop_s: ([0-9.]+)")
FIGURES = ("step_ms", "loop_s", "process_s")


PIN: list[str] = []
"""``taskset -c CPUS`` before every run when ``--pin`` is given: the same cores for both sides."""


def one_run(
    workspace: Workspace, target: str, variant: str, steps: int, index: int, skip: int
) -> dict[str, float]:
    """One fresh process of the training script; its three figures."""
    run_dir = workspace.run_dir("migrated", f"{target}-{variant}-{index}")
    smoke = " ".join([*PIN, f"python train.py {steps} {variant}"])
    env = dict(os.environ)
    if target == "rocm-sim":
        invocation = sim_invocation(workspace, run_dir, smoke, (), env, ())
    else:
        invocation = native_invocation(workspace, "migrated", run_dir, smoke, (), env)
    result = run_process(
        invocation.argv, cwd=invocation.cwd, env=invocation.env, timeout=900, log_dir=run_dir
    )
    if not result.ok:
        raise SystemExit(f"{target} {variant} run failed:\n{result.stderr[-3000:]}")
    step_times = [float(value) for value in _STEP.findall(result.stdout)]
    loop = _LOOP.findall(result.stdout)
    return {
        "step_ms": statistics.median(step_times[skip:] or step_times),
        "loop_s": float(loop[-1]),
        "process_s": result.wall_time_s,
    }


def bench(workspace: Workspace, variant: str, pairs: int, steps: int) -> dict[str, Any]:
    """Alternating native/rocm-sim pairs (ABBA order) after a discarded warm-up pair."""
    skip = 2  # the first blocks of 10 steps hold compilation and warm-up
    for target in ("native", "rocm-sim"):
        one_run(workspace, target, variant, steps, 0, skip)
    runs: dict[str, list[dict[str, float]]] = {"native": [], "rocm-sim": []}
    for pair in range(1, pairs + 1):
        order = ("native", "rocm-sim") if pair % 2 else ("rocm-sim", "native")
        for target in order:
            runs[target].append(one_run(workspace, target, variant, steps, pair, skip))
        print(
            f"  {variant} pair {pair}: "
            + ", ".join(
                f"{figure} native {runs['native'][-1][figure]:.4g} / sim "
                f"{runs['rocm-sim'][-1][figure]:.4g}"
                for figure in FIGURES
            ),
            file=sys.stderr,
            flush=True,
        )
    ratios: dict[str, Any] = {}
    for figure in FIGURES:
        native = [run[figure] for run in runs["native"]]
        sim = [run[figure] for run in runs["rocm-sim"]]
        measured = paired_ratio_interval(native, sim)
        ratios[figure] = {
            "native_median": statistics.median(native),
            "sim_median": statistics.median(sim),
            "ratio": measured.ratio if measured else None,
            "low": measured.low if measured else None,
            "high": measured.high if measured else None,
        }
    return {"variant": variant, "pairs": pairs, "steps": steps, "runs": runs, "ratios": ratios}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one table row per variant and figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5, help="native/rocm-sim pairs [5]")
    parser.add_argument("--steps", type=int, default=150, help="training steps per run [150]")
    parser.add_argument("--variants", default="eager,compiled", help="eager,compiled")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--goal", type=float, default=1.05, help="upper bound to meet [1.05]")
    parser.add_argument("--pin", metavar="CPUS", help="run both sides on these cores (taskset -c)")
    args = parser.parse_args(argv)
    if args.pin:
        PIN[:] = ["taskset", "-c", args.pin]
    if args.pairs < 2 or args.steps < 40:
        parser.error("--pairs must be at least 2 and --steps at least 40")
    project = Path(tempfile.mkdtemp(prefix="bench-emulation-"))
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    workspace = Workspace.create(project, sys.executable)
    results: list[dict[str, Any]] = []
    try:
        for variant in [part.strip() for part in args.variants.split(",") if part.strip()]:
            started = time.monotonic()
            results.append(bench(workspace, variant, args.pairs, args.steps))
            print(f"  {variant}: {time.monotonic() - started:.0f}s", file=sys.stderr)
    finally:
        workspace.remove()
    met = True
    print("variant   figure     native      rocm-sim    ratio   95% interval")
    for result in results:
        for figure, row in result["ratios"].items():
            high = row["high"]
            met = met and high is not None and high <= args.goal
            print(
                f"{result['variant']:<9} {figure:<10} {row['native_median']:<11.4g} "
                f"{row['sim_median']:<11.4g} ×{row['ratio']:.3f}  "
                f"[×{row['low']:.3f}, ×{high:.3f}]"
            )
    print(f"goal (upper bound ≤ ×{args.goal:.2f} for every figure): {'met' if met else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
