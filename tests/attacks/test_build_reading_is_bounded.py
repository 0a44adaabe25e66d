"""Attack class: turn the build model's reading against the user. It now reads every
``setup.py``, every module that builds an extension, the project's own wrapper functions
across modules with their arguments, and every CMake file: a build that names sources outside
the root, wrappers that call each other forever, source lists whose evaluation explodes,
nesting deep enough to exhaust the stack, and names that carry terminal escapes. The reading
stays in the root, ends, and prints names as text."""

from __future__ import annotations

import json

from tests.attacks.conftest import migrate, write

PTX = '__device__ void f(unsigned* r) { asm volatile("mov.u32 %0, %%laneid;" : "=r"(r[0])); }\n'


def test_sources_named_outside_the_root_are_never_part_of_the_project(tmp_path):
    outside = write(tmp_path, "outside/secret.cu", PTX)
    project = tmp_path / "project"
    write(
        project,
        "setup.py",
        "import os\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "HERE = os.path.dirname(os.path.abspath(__file__))\n"
        "setup(ext_modules=[CUDAExtension('evil', [\n"
        "    '../outside/secret.cu', '/etc/passwd.cu',\n"
        "    os.path.join(HERE, '..', 'outside', 'secret.cu'),\n"
        "    os.path.join(HERE, '..', '..', '..', '..', 'etc', 'shadow.cu'),\n"
        "    'csrc/own.cu'])])\n",
    )
    write(
        project, "CMakeLists.txt", "add_library(evil ../outside/secret.cu /etc/x.cu csrc/own.cu)\n"
    )
    write(project, ".gitmodules", '[submodule "up"]\n\tpath = ../outside\n')
    write(project, "csrc/own.cu", "__global__ void k() {}\n")

    result = migrate(
        "kernels", "--no-hipify", "--format", "json", project, cwd=project, timeout=120
    )

    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    listed = json.dumps(report)
    assert "secret.cu" not in listed and "passwd" not in listed and "shadow" not in listed
    for extension in report["extensions"]:
        assert extension["sources"] == ["csrc/own.cu"]
    scan = migrate("scan", "--no-cache", "--format", "json", project, cwd=project, timeout=120)
    assert str(outside) not in scan.stdout and "secret.cu" not in scan.stdout


def test_wrappers_that_call_each_other_and_exploding_lists_end(tmp_path):
    chain = ["import os", "from torch.utils.cpp_extension import load", ""]
    for index in range(300):  # a wrapper that calls the next, 300 deep
        chain.append(
            f"def deep{index}(name, sources):\n    return deep{index + 1}(name, sources)\n"
        )
    chain.append("def deep300(name, sources):\n    return load(name=name, sources=sources)\n")
    for index in range(3):  # and a chain of the depth real projects have
        chain.append(
            f"def wrap{index}(name, sources):\n    return wrap{index + 1}(name, sources)\n"
        )
    chain.append("def wrap3(name, sources):\n    return load(name=name, sources=sources)\n")
    chain.append("def ping(name, sources):\n    return pong(name, sources)\n")
    chain.append(
        "def pong(name, sources):\n    ping(name, sources)\n    return load(name=name, sources=sources)\n"
    )
    letters = "[" + ", ".join(f"'{c}'" for c in "abcdefghijklmnop") + "]"
    chain.append(
        f"L = {letters}\n"
        "BOOM = [f'{a}{b}{c}{d}{e}.cu' for a in L for b in L for c in L for d in L for e in L]\n"
        "NESTED = " + "[" * 190 + "'x.cu'" + "]" * 190 + "\n"
        "ops = wrap0('ops', ['csrc/ops.cu'] + BOOM)\nother = ping('other', NESTED + ['csrc/ops.cu'])\n"
        "far = deep0('far', ['csrc/ops.cu'])\n"
    )
    write(tmp_path, "pkg/build.py", "\n".join(chain))
    write(
        tmp_path, "pkg/user.py", "from .build import wrap0\nx = wrap0('third', ['csrc/ops.cu'])\n"
    )
    write(tmp_path, "csrc/ops.cu", "__global__ void k() {}\n")
    cmake = (
        "".join(f"if(A{i})\n" for i in range(3000))
        + "add_library(deep csrc/ops.cu)\n"
        + "endif()\n" * 3000
    )
    write(tmp_path, "CMakeLists.txt", cmake)

    result = migrate(
        "kernels", "--no-hipify", "--format", "json", tmp_path, cwd=tmp_path, timeout=240
    )

    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    names = {extension["name"] for extension in json.loads(result.stdout)["extensions"]}
    assert {"ops", "third", "other", "deep"} <= names  # the 300-deep chain is cut, not followed
    scan = migrate("scan", "--no-cache", tmp_path, cwd=tmp_path, timeout=240)
    assert scan.returncode in (0, 1) and "Traceback" not in scan.stderr


def test_names_from_builds_are_printed_as_text(tmp_path):
    write(
        tmp_path,
        "setup.py",
        "from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"
        "exts = []\n"
        "if CUDA_HOME is not None or '\\x1b]0;owned\\x07':\n"
        "    exts.append(CUDAExtension('\\x1b[31mred\\x1b[0m [link](http://x)', ['k.cu'],\n"
        "                              libraries=['cudart']))\n",
    )
    write(tmp_path, "k.cu", "__global__ void k() {}\n")

    result = migrate("kernels", "--no-hipify", tmp_path, cwd=tmp_path, timeout=120)

    assert result.returncode in (0, 1), result.stderr
    assert "red" in result.stdout and "cudart" in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
