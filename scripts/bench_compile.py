"""Cost of the HIP compile check (issue #48, item 5) on a generated 20-unit extension whose units
include ``torch/extension.h``, for three AMD targets: "before" compiles every unit whole (torch's
headers parsed by every compile, prepared in a cold cache), "after" compiles them on a prelude
precompiled once per target (torch's headers from the warm cache). Prints wall and CPU seconds
(of the compilers, children of this process) and the load average beside each figure, since the
machine may be shared.

    python scripts/bench_compile.py [--units 20] [--jobs 2] [--targets gfx90a,gfx940,gfx1030]
        [--skip-before]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

UNIT = """\
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <vector>

template <typename scalar_t>
__global__ void op{index}_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y,
                                 int64_t n, scalar_t alpha) {{
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  __shared__ scalar_t tile[256];
  if (i < n) tile[threadIdx.x] = x[i];
  __syncthreads();
  if (i < n) y[i] = alpha * tile[threadIdx.x] + (scalar_t)sqrtf((float)(i % {mod}));
}}

torch::Tensor op{index}(torch::Tensor x, double alpha) {{
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = (int)((n + threads - 1) / threads);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "op{index}", ([&] {{
    op{index}_kernel<scalar_t><<<blocks, threads>>>(
        x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, (scalar_t)alpha);
  }}));
  return y;
}}
"""
SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="benchops",
    ext_modules=[CUDAExtension("benchops._C", [{sources}])],
    cmdclass={{"build_ext": BuildExtension}},
)
"""


def make_project(folder: Path, units: int) -> list[str]:
    """A CUDA extension of ``units`` translation units; returns their relative paths."""
    names = [f"csrc/op{index:02d}.cu" for index in range(units)]
    for index, name in enumerate(names):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(UNIT.format(index=index, mod=index + 3))
    (folder / "setup.py").write_text(SETUP.format(sources=", ".join(repr(n) for n in names)))
    return names


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _load() -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def measure(label: str, action: object) -> dict[str, object]:
    """Run ``action`` (a callable) and print its wall and CPU seconds with the load average."""
    load_before, cpu, started = _load(), _cpu(), time.perf_counter()
    outcome = action()  # type: ignore[operator]
    wall, used, load_after = time.perf_counter() - started, _cpu() - cpu, _load()
    print(
        f"{label}: {wall:.1f} s wall, {used:.1f} s CPU (load average {load_before} before, "
        f"{load_after} after)",
        flush=True,
    )
    return {"wall": wall, "cpu": used, "outcome": outcome}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--targets", default="gfx90a,gfx940,gfx1030")
    parser.add_argument("--skip-before", action="store_true")
    parser.add_argument(
        "--before-units",
        type=int,
        default=0,
        help="time 'before' on this many of the units only and scale it to all (a loaded machine)",
    )
    arguments = parser.parse_args()
    targets = arguments.targets.split(",")

    from migrator.kernels.compile import compile_units, find_compiler, translation_units
    from migrator.kernels.hipify import run_hipify

    compiler = find_compiler()
    if compiler is None:
        print("no hipcc: nothing to measure", file=sys.stderr)
        return 2
    print(
        f"{arguments.units} units including torch/extension.h, targets {', '.join(targets)}, "
        f"-j{arguments.jobs}, {compiler.path} (HIP {compiler.hip_version}); "
        f"{os.cpu_count()} CPUs visible",
        flush=True,
    )
    work = Path(tempfile.mkdtemp(prefix="bench-compile-"))
    cache = work / "cache"
    os.environ["MIGRATE_CACHE_DIR"] = str(cache)
    try:
        project = work / "project"
        names = make_project(project, arguments.units)
        run = run_hipify(project, [*names, "setup.py"], keep=work / "copy")
        units = translation_units(run)

        from migrator.kernels.torch_headers import torch_include_dirs

        prepared = measure("torch headers, cold cache (once per torch version)", torch_include_dirs)
        outcome = prepared["outcome"]
        assert isinstance(outcome, tuple)
        include: list[Path] = outcome[0]
        note: str = outcome[1]
        if not include:
            print(f"torch headers not prepared: {note}", file=sys.stderr)
            return 2
        warm = measure("torch headers, warm cache", torch_include_dirs)
        del warm

        def check(prelude: bool, subset: list[str] = units) -> object:
            results = compile_units(
                compiler,
                run,
                project,
                subset,
                targets,
                jobs=arguments.jobs,
                timeout=600,
                extra_includes=include,
                use_prelude=prelude,
            )
            statuses = sorted({r.status for r in results})
            return statuses

        if not arguments.skip_before:
            some = units[: arguments.before_units or len(units)]
            before = measure(
                f"before: {len(some)} units x {len(targets)} targets, each compiled whole",
                lambda: check(False, some),
            )
            print(f"  statuses: {before['outcome']}")
            if len(some) < len(units):
                scale = len(units) / len(some)
                print(
                    f"  scaled to {len(units)} units: {float(before['wall']) * scale:.1f} s wall, "  # type: ignore[arg-type]
                    f"{float(before['cpu']) * scale:.1f} s CPU"  # type: ignore[arg-type]
                )
        after = measure(
            f"after: {len(units)} units x {len(targets)} targets on a precompiled prelude",
            lambda: check(True),
        )
        print(f"  statuses: {after['outcome']}")
        total = float(after["wall"]) + float(prepared["wall"])  # type: ignore[arg-type]
        print(f"after, including a cold torch header cache: {total:.1f} s wall")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
