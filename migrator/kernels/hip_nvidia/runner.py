"""The child program of a hip-on-nvidia run, started by ``migrator.process.helper`` inside the
private copy (it builds and runs the project's extension code, so only ever on an explicit
``--run``): builds each extension twice with torch's ``cpp_extension`` (the CUDA original, and
the hipified translation with ``__HIP_PLATFORM_NVIDIA__`` over the patched HIP headers), loads
both under distinct module names, calls each declared op on the same generated inputs and
writes the comparison as JSON to the job's result file."""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from migrator.kernels.hip_nvidia.compare import Difference, compare_values, describe

_DTYPES = (
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
)


def make_argument(spec: Any, generator: Any, device: str) -> Any:
    """A value from its declaration: ``{randn|rand|randint|zeros|ones = [shape], dtype, low,
    high}`` makes a tensor; anything else is passed as it is."""
    import torch

    if not isinstance(spec, dict):
        return spec
    kinds = [
        kind for kind in ("randn", "rand", "randint", "zeros", "ones", "arange") if kind in spec
    ]
    if len(kinds) != 1:
        raise ValueError(f"an argument needs one of randn, rand, randint, zeros, ones: {spec}")
    kind = kinds[0]
    shape = [int(size) for size in spec[kind]]
    dtype_name = str(spec.get("dtype", "int64" if kind == "randint" else "float32"))
    if dtype_name not in _DTYPES:
        raise ValueError(f"unknown dtype {dtype_name!r}")
    dtype = getattr(torch, dtype_name)
    where = str(spec.get("device", device))
    if kind == "randint":
        made = torch.randint(
            int(spec.get("low", 0)),
            int(spec["high"]),
            shape,
            generator=generator,
            device="cpu",
            dtype=torch.int64,
        )
        return made.to(dtype).to(where)
    if kind == "zeros":
        return torch.zeros(shape, dtype=dtype, device=where)
    if kind == "ones":
        return torch.ones(shape, dtype=dtype, device=where)
    if kind == "arange":
        return torch.arange(int(torch.tensor(shape).prod()), dtype=dtype, device=where).reshape(
            shape
        )
    if kind == "randn":
        made = torch.randn(shape, generator=generator, dtype=torch.float64)
    else:
        low, high = float(spec.get("low", 0.0)), float(spec.get("high", 1.0))
        made = torch.rand(shape, generator=generator, dtype=torch.float64) * (high - low) + low
    return made.to(dtype).to(where)


def _clone(values: list[Any]) -> list[Any]:
    import torch

    return [value.clone() if isinstance(value, torch.Tensor) else value for value in values]


def _build(
    name: str, side: dict[str, Any], build_dir: Path, extra: list[str]
) -> tuple[Any, dict[str, Any]]:
    from torch.utils import cpp_extension

    folder = build_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    record: dict[str, Any] = {"module": name, "ok": False}
    try:
        module = cpp_extension.load(
            name=name,
            sources=side["sources"],
            extra_cflags=["-O2", *extra],
            extra_cuda_cflags=["-O2", *extra],
            extra_include_paths=side["include"],
            build_directory=str(folder),
            verbose=False,
        )
    except Exception as error:  # the compiler's own message is the finding
        record["error"] = str(error)[-6000:]
        record["seconds"] = round(time.monotonic() - started, 1)
        return None, record
    record["ok"] = True
    record["seconds"] = round(time.monotonic() - started, 1)
    return module, record


def _ops(module: Any) -> list[str]:
    return sorted(
        name
        for name in dir(module)
        if not name.startswith("_")
        and callable(getattr(module, name))
        and type(getattr(module, name)).__name__ == "builtin_function_or_method"
    )


def _call(function: Any, arguments: list[Any]) -> tuple[Any, list[Any]]:
    import torch

    result = function(*arguments)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, arguments


def run_call(call: dict[str, Any], original: Any, translated: Any) -> dict[str, Any]:
    """Call one op of both builds (and the original twice, to see whether it repeats itself)
    on the same inputs; compare what each returned and wrote into its tensor arguments."""
    import torch

    op = str(call["op"])
    record: dict[str, Any] = {"op": op, "extension": call["extension"], "status": "match"}
    generator = torch.Generator().manual_seed(int(call.get("seed", 0)))
    try:
        inputs = [
            make_argument(spec, generator, str(call.get("device", "cuda")))
            for spec in call.get("args", [])
        ]
    except (ValueError, KeyError, TypeError) as error:
        record.update(status="error", error=f"bad input declaration: {error}")
        return record
    rtol, atol = call.get("rtol"), call.get("atol")
    try:
        first, first_args = _call(getattr(original, op), _clone(inputs))
        again, again_args = _call(getattr(original, op), _clone(inputs))
    except Exception as error:
        record.update(status="error", error=f"the CUDA original failed: {error}"[:600])
        return record
    try:
        result, result_args = _call(getattr(translated, op), _clone(inputs))
    except Exception as error:
        record.update(status="mismatch", error=f"the translation failed: {error}"[:600])
        return record

    def outputs(value: Any, arguments: list[Any]) -> list[tuple[str, Any]]:
        named = [("return", value)]
        named += [
            (f"arg {i}", arg) for i, arg in enumerate(arguments) if isinstance(arg, torch.Tensor)
        ]
        return named

    repeat: list[Difference] = []
    for (name, left), (_, right) in zip(
        outputs(first, first_args), outputs(again, again_args), strict=True
    ):
        repeat += compare_values(name, left, right, rtol, atol)
    if any(not item.equal for item in repeat):
        record["status"] = "not judged"
        record["error"] = (
            "the CUDA original gives different outputs on the same inputs: "
            + "; ".join(describe(op, item) for item in repeat if not item.equal)
        )
        return record
    differences: list[Difference] = []
    for (name, left), (_, right) in zip(
        outputs(first, first_args), outputs(result, result_args), strict=True
    ):
        differences += compare_values(name, left, right, rtol, atol)
    record["outputs"] = [item.as_dict() for item in differences]
    failed = [describe(op, item) for item in differences if not item.equal]
    if failed:
        record["status"] = "mismatch"
        record["differences"] = failed
    return record


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    result: dict[str, Any] = {"builds": [], "calls": [], "uncalled": []}
    out = Path(job["result"])
    try:
        import torch
    except ImportError as error:
        result["error"] = f"torch is not importable: {error}"
        out.write_text(json.dumps(result))
        return 3
    result["torch"] = torch.__version__
    result["torch_cuda"] = torch.version.cuda
    if not torch.cuda.is_available() or torch.version.cuda is None:
        result["error"] = (
            "no CUDA GPU visible to torch (a CUDA build of torch and an NVIDIA GPU are needed)"
        )
        out.write_text(json.dumps(result))
        return 3
    properties = torch.cuda.get_device_properties(0)
    result["device"] = properties.name
    result["warp_size"] = getattr(properties, "warp_size", None)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{properties.major}.{properties.minor}")
    os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 2))
    build_dir = Path(job["build_dir"])
    from concurrent.futures import ThreadPoolExecutor

    sides: list[tuple[dict[str, Any], str, str, list[str], str]] = [
        (extension, "original", f"{extension['module']}__cuda", [], "CUDA original")
        for extension in job["extensions"]
    ] + [
        (
            extension,
            "translated",
            f"{extension['module']}__hip",
            ["-D__HIP_PLATFORM_NVIDIA__"],
            "hipified translation",
        )
        for extension in job["extensions"]
    ]
    # Every build at once: each is mostly one compiler process a source file.
    with ThreadPoolExecutor(max_workers=max(1, len(sides))) as pool:
        built_all = list(pool.map(lambda s: _build(s[2], s[0][s[1]], build_dir, s[3]), sides))
    modules: dict[tuple[str, str], Any] = {}
    for (extension, key, _, _, label), (module, record) in zip(sides, built_all, strict=True):
        record.update(extension=extension["name"], side=label)
        result["builds"].append(record)
        modules[(extension["name"], key)] = module
    for extension in job["extensions"]:
        original = modules[(extension["name"], "original")]
        translated = modules[(extension["name"], "translated")]
        if original is None or translated is None:
            continue
        calls = [call for call in job["calls"] if call["extension"] == extension["name"]]
        called = {str(call["op"]) for call in calls}
        for op in _ops(original):
            if op not in called:
                result["uncalled"].append({"extension": extension["name"], "op": op})
        for call in calls:
            if not hasattr(original, str(call["op"])):
                result["calls"].append(
                    {
                        "extension": extension["name"],
                        "op": call["op"],
                        "status": "error",
                        "error": "no such op in the extension",
                    }
                )
                continue
            try:
                result["calls"].append(run_call(call, original, translated))
            except Exception:
                result["calls"].append(
                    {
                        "extension": extension["name"],
                        "op": call["op"],
                        "status": "error",
                        "error": traceback.format_exc(limit=2)[-600:],
                    }
                )
    out.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
