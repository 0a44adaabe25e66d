"""Development containers that get no GPU: a VS Code / Dev Containers definition
(``.devcontainer/devcontainer.json``) whose image or Dockerfile is an editing and linting
environment, with no GPU passed in (no ``--gpus``/``--device`` run argument, no
``hostRequirements.gpu``, no GPU feature). Nothing in it runs on a GPU of either vendor, so its
CUDA base image is no ROCm problem (the engine marks the Dockerfile's findings guarded)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from migrator.files.sources import FailFile, SkipFile, read_regular

#: The guard text of such a Dockerfile's findings.
DEV_CONTAINER = (
    "development container with no GPU passed in (its devcontainer.json asks for none): an "
    "editing environment, not a GPU build"
)
#: Run arguments that hand a GPU to the container (NVIDIA or AMD).
_GPU_RUN_ARG = re.compile(r"^--gpus\b|^--device\b|^--runtime(=|$)|/dev/kfd|/dev/dri|nvidia", re.I)
#: Dev Container features that install a GPU stack (``ghcr.io/devcontainers/features/nvidia-cuda``).
_GPU_FEATURE = re.compile(r"cuda|nvidia|rocm|gpu", re.I)
_MAX_CHARS = 200_000


def _strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (the devcontainer.json dialect) as plain JSON."""
    out: list[str] = []
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < size and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[index : end + 1])
            index = end + 1
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = size if newline < 0 else newline
        elif text.startswith("/*", index):
            close = text.find("*/", index + 2)
            index = size if close < 0 else close + 2
        else:
            out.append(char)
            index += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _asks_for_gpu(config: dict[str, Any]) -> bool:
    run_args = config.get("runArgs") or []
    if isinstance(run_args, list) and any(
        isinstance(argument, str) and _GPU_RUN_ARG.search(argument) for argument in run_args
    ):
        return True
    host = config.get("hostRequirements")
    if isinstance(host, dict) and host.get("gpu") not in (None, False):
        return True
    features = config.get("features")
    return isinstance(features, dict) and any(_GPU_FEATURE.search(name) for name in features)


def _dockerfile(config: dict[str, Any]) -> str | None:
    build = config.get("build")
    if isinstance(build, dict) and isinstance(build.get("dockerfile"), str):
        return str(build["dockerfile"])
    legacy = config.get("dockerFile")
    return legacy if isinstance(legacy, str) else None


def gpu_less_dev_containers(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """Dockerfiles of the scanned ``paths`` that only a GPU-less dev container builds, each with
    the guard reason. A definition that cannot be read, or asks for a GPU, guards nothing."""
    scanned = set(paths)
    out: dict[str, str] = {}
    for config_path in sorted(root.glob(".devcontainer/**/devcontainer.json")) + sorted(
        root.glob(".devcontainer.json")
    ):
        try:
            data = read_regular(str(config_path), limit=4 * _MAX_CHARS)
            text = data.decode("utf-8", "replace")[:_MAX_CHARS]
            config = json.loads(_strip_jsonc(text))
        except (SkipFile, FailFile, ValueError):
            continue
        if not isinstance(config, dict) or _asks_for_gpu(config):
            continue
        dockerfile = _dockerfile(config)
        if dockerfile is None:
            continue
        target = (config_path.parent / dockerfile).resolve()
        try:
            relative = target.relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
        if relative in scanned:
            out[relative] = DEV_CONTAINER
    return out
