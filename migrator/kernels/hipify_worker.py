"""Runs PyTorch's own hipify (the module ``cpp_extension`` uses on ROCm builds) over a folder
that is already a private copy, and prints JSON: {source path: hipified path}. Run in a
subprocess by ``migrator.kernels.hipify`` with a timeout; never pointed at a user's tree."""

from __future__ import annotations

import contextlib
import io
import json
import sys


def torch_shim(destination: str) -> int:
    """Copy torch's ATen and c10 headers into ``destination`` and hipify them (the CPU wheel
    has no HIP build of them); print the include folders a HIP compile of an extension needs."""
    import os
    import shutil
    import sysconfig

    try:
        import torch
        from torch.utils.hipify import hipify_python
    except ImportError as error:
        print(json.dumps({"error": f"torch is not importable: {error}"}))
        return 3
    include = os.path.join(os.path.dirname(torch.__file__), "include")
    for part in ("ATen", "c10"):
        shutil.copytree(
            os.path.join(include, part), os.path.join(destination, part), dirs_exist_ok=True
        )
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        hipify_python.hipify(
            project_directory=destination,
            output_directory=destination,
            includes=[f"{destination}/ATen/cuda/*", f"{destination}/c10/cuda/*"],
            show_progress=False,
            is_pytorch_extension=False,
        )
    folders = [
        destination,
        include,
        os.path.join(include, "torch", "csrc", "api", "include"),
        sysconfig.get_paths()["include"],
    ]
    print(json.dumps({"include": folders, "torch": torch.__version__}))
    return 0


def torch_nvidia_shim(destination: str) -> int:
    """For a HIP-over-CUDA build: at each path hipify gives a torch CUDA header
    (``ATen/cuda/CUDAContext.h`` -> ``ATen/hip/HIPContext.h``), write a header that includes the
    CUDA original, so a hipified extension compiles against a CUDA build of torch (hipify keeps
    torch's ``at::cuda`` names in extensions; only the header paths change)."""
    import os

    try:
        import torch
        from torch.utils.hipify import hipify_python
    except ImportError as error:
        print(json.dumps({"error": f"torch is not importable: {error}"}))
        return 3
    include = os.path.join(os.path.dirname(torch.__file__), "include")
    written = 0
    for part in ("ATen", "c10", "torch"):
        for folder, _, names in os.walk(os.path.join(include, part)):
            for name in names:
                relative = os.path.relpath(os.path.join(folder, name), include)
                if "cuda" not in relative.lower():
                    continue
                hip = hipify_python.get_hip_file_path(relative, is_pytorch_extension=True)  # type: ignore[no-untyped-call]
                if hip == relative or os.path.exists(os.path.join(include, hip)):
                    continue
                target = os.path.join(destination, hip)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "w") as handle:
                    handle.write(f"#pragma once\n#include <{relative}>\n")
                written += 1
    print(json.dumps({"headers": written, "torch": torch.__version__}))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--torch-shim":
        return torch_shim(argv[2])
    if len(argv) == 3 and argv[1] == "--torch-nvidia-shim":
        return torch_nvidia_shim(argv[2])
    folder = argv[1]
    # the project's include folders (``include/``): hipify rewrites an include of a project
    # header it finds there (``"cuda_utils.h"`` becomes ``"hip_utils.h"``, the hipified copy)
    headers = [folder, *argv[2:]]
    try:
        from torch.utils.hipify import hipify_python
    except ImportError as error:
        print(json.dumps({"error": f"torch's hipify is not importable: {error}"}))
        return 3
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        result = hipify_python.hipify(
            project_directory=folder,
            output_directory=folder,
            includes=[f"{folder}/*"],
            header_include_dirs=headers,
            show_detailed=False,
            show_progress=False,
            is_pytorch_extension=True,
            hipify_extra_files_only=False,
        )
    mapping = {
        source: (entry.hipified_path or source)
        for source, entry in result.items()
        if getattr(entry, "hipified_path", None) is not None or True
    }
    print(json.dumps({"files": mapping}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
