"""Generate ``migrator/data/hipify_map.json`` from the installed torch's hipify mapping tables
(``torch.utils.hipify.cuda_to_hip_mappings.CUDA_TO_HIP_MAPPINGS``), with its provenance: the
torch version, the date, this script. ``--check`` regenerates it in memory and exits 1 when the
file differs from what the installed torch gives (the date aside), as CI runs it for the pinned
torch (``pyproject.toml``, extra ``verify``).

What goes in: every identifier hipify renames and what to (``identifiers``), the other patterns
its regex rewrites (headers such as ``cuda_runtime.h``, namespaces such as ``cub::``:
``fragments``), the names whose mapping the tables mark ``HIP_UNSUPPORTED`` (torch before 2.0
annotated each mapping with ``API_*``/``HIP_UNSUPPORTED`` markers; later tables hold plain
strings and list none), and the CUDA-named macros and constants torch's own headers define
(``CUDA_KERNEL_LOOP``, ``CUDA_NUM_THREADS``), which a ROCm torch's hipified headers keep.

    python scripts/gen_hipify_map.py [--check]
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "migrator" / "data" / "hipify_map.json"
sys.path.insert(0, str(ROOT))

#: torch's header folders that an extension includes, whose CUDA-named macros and constants a
#: ROCm build of torch provides under the same names.
_TORCH_HEADER_FOLDERS = ("ATen", "c10", "torch")
_DEFINE = re.compile(rb"^\s*#\s*define\s+(\w+)", re.M)
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]+$")


def _unsupported_marker() -> object | None:
    """``HIP_UNSUPPORTED`` of the installed hipify (its constants module warns that it is no
    longer used since torch 2.0; the tables may still carry it in older releases)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from torch.utils.hipify import constants
        except ImportError:
            return None
    return getattr(constants, "HIP_UNSUPPORTED", None)


def _tables() -> tuple[dict[str, str], dict[str, str], list[str]]:
    from torch.utils.hipify.cuda_to_hip_mappings import CUDA_TO_HIP_MAPPINGS

    marker = _unsupported_marker()
    identifiers: dict[str, str] = {}
    fragments: dict[str, str] = {}
    unsupported: set[str] = set()
    for table in CUDA_TO_HIP_MAPPINGS:
        for source, target in table.items():
            if isinstance(target, tuple):  # (hip name, CONV_*, API_*[, HIP_UNSUPPORTED])
                hip = str(target[0])
                if marker is not None and marker in target[1:]:
                    unsupported.add(source)
            else:
                hip = str(target)
            # hipify keeps the last mapping of a name (``PYTORCH_MAP[src] = dst`` in order)
            if re.fullmatch(r"\w+", source):
                identifiers[source] = hip
            else:
                fragments[source] = hip
    return identifiers, fragments, sorted(unsupported)


def _torch_names(identifiers: dict[str, str]) -> list[str]:
    """CUDA-named macros and upper-case constants torch's headers define that hipify does not
    rename (``CUDA_KERNEL_ASSERT``, ``CUDA_NUM_THREADS``)."""
    import torch

    from migrator.kernels.declared import declared_names
    from migrator.kernels.hipify_map import CUDA_NAME

    include = Path(torch.__file__).resolve().parent / "include"
    names: set[str] = set()
    for folder in _TORCH_HEADER_FOLDERS:
        base = include / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in {".h", ".hpp", ".cuh"} or not path.is_file():
                continue
            data = path.read_bytes()
            found = {match.group(1).decode() for match in _DEFINE.finditer(data)}
            if b"CUDA" in data or b"CU" in data:
                found |= {name for name in declared_names(data) if _CONSTANT.match(name)}
            names |= {name for name in found if CUDA_NAME.match(name)}
    return sorted(name for name in names if name not in identifiers)


def build(date: str) -> dict[str, Any]:
    import torch

    identifiers, fragments, unsupported = _tables()
    return {
        "provenance": {
            "source": "torch.utils.hipify.cuda_to_hip_mappings.CUDA_TO_HIP_MAPPINGS",
            "torch": torch.__version__.split("+", 1)[0],
            "generated": date,
            "script": "scripts/gen_hipify_map.py",
            "note": "identifiers: names hipify renames; fragments: other patterns its regex "
            "rewrites (headers, namespaces); unsupported: mappings the tables mark "
            "HIP_UNSUPPORTED; torch_names: CUDA-named macros and constants torch's headers "
            "define, kept by a ROCm torch",
        },
        "identifiers": dict(sorted(identifiers.items())),
        "fragments": dict(sorted(fragments.items())),
        "unsupported": unsupported,
        "torch_names": _torch_names(identifiers),
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=0, sort_keys=False, ensure_ascii=True) + "\n"


def _comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "provenance": {**data["provenance"], "generated": ""}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    options = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: pip install 'migrate-rocm[verify]'", file=sys.stderr)
        return 2
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    fresh = build(today)
    if options.check:
        try:
            current = json.loads(TARGET.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            print(f"stale: {TARGET.relative_to(ROOT)} unreadable ({error})")
            return 1
        if _comparable(current) != _comparable(fresh):
            print(
                f"stale: {TARGET.relative_to(ROOT)} (generated from torch "
                f"{current.get('provenance', {}).get('torch')}; torch "
                f"{fresh['provenance']['torch']} is installed)"
            )
            return 1
        return 0
    TARGET.write_text(render(fresh), encoding="utf-8")
    print(
        f"wrote {TARGET.relative_to(ROOT)}: {len(fresh['identifiers'])} identifiers, "
        f"{len(fresh['fragments'])} fragments, {len(fresh['unsupported'])} unsupported, "
        f"{len(fresh['torch_names'])} torch names (torch {fresh['provenance']['torch']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
