"""A precompiled prelude for units that include PyTorch's C++ API: parsing torch's headers is
most of the time a device-only compile takes (about 6 of 7 CPU seconds a unit), so they are
parsed once per target into a precompiled header in the run's private folder and every such
unit is compiled on top of it. A unit that fails on the prelude is compiled again without it,
so a failure reported is always the unit's own; a prelude that cannot be built is not used."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from migrator.files.sources import read_project_bytes
from migrator.kernels.source import MAX_SOURCE_BYTES
from migrator.process.helper import HelperError, helper_environment
from migrator.process.helper import run as run_helper

#: The preludes, by the torch header a unit includes first: the extension API (with pybind11
#: and Python's headers) or ATen alone. Each holds what that header brings, after HIP's runtime.
PRELUDES = {
    "extension": ("hip/hip_runtime.h", "torch/extension.h"),
    "aten": ("hip/hip_runtime.h", "ATen/ATen.h"),
}
_EXTENSION = re.compile(rb"^\s*#\s*include\s*[<\"]torch/(?:extension|torch|all)\.h[>\"]", re.M)
_ATEN = re.compile(rb"^\s*#\s*include\s*[<\"](?:ATen|c10|torch)/", re.M)


def prelude_kind(path: Path) -> str:
    """Which prelude a unit (its hipified copy) can be compiled on: ``extension``, ``aten``,
    or "" when it includes none of torch's headers itself."""
    data = read_project_bytes(path, MAX_SOURCE_BYTES) or b""
    if _EXTENSION.search(data):
        return "extension"
    if _ATEN.search(data):
        return "aten"
    return ""


@dataclass(frozen=True, slots=True)
class Prelude:
    """A precompiled prelude for one kind and target, or why there is none."""

    kind: str
    target: str
    path: Path | None
    note: str = ""


def build_prelude(
    base_command: Sequence[str], kind: str, target: str, folder: Path, timeout: float
) -> Prelude:
    """Precompile the prelude ``kind`` for ``target`` with the front-end command the driver
    would run for ``base_command`` (a device-only compile of the prelude, without output):
    asked of the driver with ``-###``, its action changed to ``-emit-pch``."""
    folder.mkdir(parents=True, exist_ok=True)
    # one header per prelude: a precompiled header is void once the header it was made from
    # is written again
    stem = f"{kind}-{target.replace(':', '_')}"
    header = folder / f"{stem}.h"
    header.write_text("".join(f"#include <{name}>\n" for name in PRELUDES[kind]))
    output = folder / f"{stem}.pch"
    env = helper_environment({"HIP_PLATFORM": "amd"})
    try:
        shown = run_helper([*base_command, str(header), "-###"], timeout=60, cwd=folder, env=env)
    except HelperError as error:
        return Prelude(kind, target, None, f"the driver could not be asked: {error}")
    front = _front_end(shown.err + shown.out)
    if front is None:
        return Prelude(kind, target, None, "the driver named no device front end")
    front[front.index("-emit-obj")] = "-emit-pch"
    front.insert(1 + front.index("-emit-pch"), "-fpch-instantiate-templates")
    front[front.index("-o") + 1] = str(output)
    try:
        done = run_helper(front, timeout=timeout, cwd=folder, env=env)
    except HelperError as error:
        return Prelude(kind, target, None, f"the prelude could not be compiled: {error}")
    if done.timed_out or done.returncode != 0 or not output.is_file():
        return Prelude(kind, target, None, "the prelude did not compile (units are compiled whole)")
    return Prelude(kind, target, output)


def _front_end(listing: str) -> list[str] | None:
    """The device front end's command (``clang -cc1 ... -fcuda-is-device ... -emit-obj``) in
    the driver's ``-###`` listing."""
    for line in listing.splitlines():
        line = line.strip()
        if '"-cc1"' not in line or '"-fcuda-is-device"' not in line:
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            return None
        if "-emit-obj" in words and "-o" in words and os.path.isabs(words[0]):
            return words
    return None


def pch_flags(prelude: Prelude | None) -> list[str]:
    """The driver options that compile a unit on a prelude (none without one)."""
    if prelude is None or prelude.path is None:
        return []
    return ["-Xclang", "-include-pch", "-Xclang", str(prelude.path)]


__all__ = ["PRELUDES", "Prelude", "build_prelude", "pch_flags", "prelude_kind"]
