"""A project that plants everything a project could use to get its code run or files outside it
read when ``migrate`` is pointed at it: modules named like the tools migrate starts (``black``,
``ruff``, ``torch``, ``migrator``, ``json``), interpreter start-up files (``sitecustomize``,
``usercustomize``, a ``.pth``), ``conftest.py``, a ``setup.py`` and a CMake file with side
effects, git hooks and git configuration that run programs, programs named like the tools on a
relative PATH entry, kernels that include files outside the project, and links to ``/`` and to a
folder and a file outside. Every planted piece of code writes a canary file named after itself;
every file outside holds a secret token that must never appear in any output."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import write

#: Appears only in files outside the project: any output quoting it read outside.
SECRET = "SECRET-TOKEN-4f1c9e"

#: Real CUDA-first code with safe and unsafe fixes, so fix, pr and the formatter all run.
APP = (
    "import pynvml\n"
    "import torch\n\n\n"
    "def step(model, batch):\n"
    "    if torch.version.cuda:\n"
    "        torch.backends.cuda.matmul.allow_tf32 = True\n"
    "    with torch.cuda.amp.autocast():\n"
    "        return model(batch)\n"
)
KERNEL = (
    "#include <cuda_runtime.h>\n"
    '#include "{outside}/secret.h"\n'
    '#include "../../outside/secret.h"\n'
    "__global__ void k(float* x) {{ x[threadIdx.x] = __shfl_sync(0xffffffff, x[0], 1); }}\n"
)
SETUP = (
    "open({canary!r}, 'w').write('setup.py')\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='hostile', ext_modules=[CUDAExtension('k', ['csrc/k.cu'])],\n"
    "      cmdclass={{'build_ext': BuildExtension}})\n"
)


@dataclass(frozen=True)
class Hostile:
    """The planted project, the folder outside it, and where canaries land."""

    root: Path
    outside: Path
    canaries: Path

    def canaries_written(self) -> list[str]:
        return sorted(path.name for path in self.canaries.iterdir())

    def outside_state(self) -> dict[str, bytes]:
        return {
            str(path.relative_to(self.outside)): path.read_bytes()
            for path in sorted(self.outside.rglob("*"))
            if path.is_file() and not path.is_symlink()
        }


def _code(canaries: Path, name: str) -> str:
    return f"open({str(canaries / name)!r}, 'w').write('ran')\n"


def _program(canaries: Path, name: str) -> str:
    return f"#!/bin/sh\necho ran > {canaries / ('program-' + name)}\n"


def plant(base: Path) -> Hostile:
    """Write the hostile project under ``base`` (``base/project``, ``base/outside``,
    ``base/canaries``) and make it a git repository with one commit."""
    root, outside, canaries = base / "project", base / "outside", base / "canaries"
    canaries.mkdir(parents=True)
    write(outside, "secret.h", f"#define LEAK {SECRET}\nint {SECRET.replace('-', '_')};\n")
    write(outside, "secret.py", f"import pynvml  # {SECRET}\n")
    write(outside, "deep/also.py", f"import pynvml  # {SECRET}\n")
    write(root, "app.py", APP)
    write(root, "pyproject.toml", "[tool.black]\nline-length = 88\n\n[tool.ruff.format]\n")
    write(
        root,
        ".pre-commit-config.yaml",
        "repos:\n- repo: https://github.com/psf/black\n  rev: 24.1.0\n  hooks:\n  - id: black\n",
    )
    write(root, "Makefile", "style:\n\tblack --check .\n\truff format --check .\n")
    write(root, "requirements.txt", "torch>=2.4\nflash-attn\n")
    write(root, "csrc/k.cu", KERNEL.format(outside=outside))
    write(root, "setup.py", SETUP.format(canary=str(canaries / "setup.py")))
    write(
        root,
        "CMakeLists.txt",
        f"execute_process(COMMAND touch {canaries / 'cmake'})\nproject(k LANGUAGES CUDA)\n",
    )
    for module in ("black", "ruff", "migrator", "torch", "json", "runpy", "pynvml"):
        write(root, f"{module}/__init__.py", _code(canaries, module))
        write(root, f"{module}/__main__.py", _code(canaries, f"{module}-main"))
    write(root, "migrator/kernels/__init__.py", _code(canaries, "migrator-kernels"))
    write(root, "migrator/kernels/hipify_worker.py", _code(canaries, "hipify_worker"))
    for name in ("sitecustomize", "usercustomize", "conftest", "setuptools", "site"):
        write(root, f"{name}.py", _code(canaries, name))
    write(root, "evil.pth", f"import os; {_code(canaries, 'pth')}")
    # programs named like the tools migrate runs, found only through a relative PATH entry
    for program in ("black", "ruff", "git", "hipcc", "python", "python3", "rocminfo", "gh"):
        write(root, f"bin/{program}", _program(canaries, program)).chmod(0o755)
        if not (root / program).exists():
            write(root, program, _program(canaries, f"cwd-{program}")).chmod(0o755)
    os.symlink("/", root / "root")
    os.symlink(outside, root / "outside_link")
    os.symlink(outside / "secret.py", root / "secret_link.py")
    _repository(root, canaries)
    return Hostile(root, outside, canaries)


def _repository(root: Path, canaries: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "hostile")
    hooks = root / ".git" / "hooks"
    for hook in ("pre-commit", "commit-msg", "post-commit", "post-checkout", "pre-push"):
        write(hooks, hook, _program(canaries, f"hook-{hook}")).chmod(0o755)
    # not a setting `pr` refuses: a work tree the user asked for; an alias and a pager git uses
    # only for a person at a terminal
    git("config", "alias.status", f"!touch {canaries / 'alias'}")
    git("config", "core.pager", f"touch {canaries / 'pager'}; cat")
