"""Third-party packages a project's GPU code imports (issue #47 item 3), on real wheels: each is
built here from a small C file with gcc, linked against a stub ``libcudart.so.12`` or
``libamdhip64.so.6`` (or carrying a ``.nv_fatbin`` section, as a static cudart leaves it),
installed by pip into a virtual environment, and read by the real ``migrate scan --python`` and
``migrate report --python`` without running that environment's interpreter."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.attacks.conftest import migrate
from tests.conftest import write

TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
SOABI = f"cpython-{sys.version_info.major}{sys.version_info.minor}-x86_64-linux-gnu"

PROJECT = {
    "app/__init__.py": "",
    "app/model.py": (
        "import os\n"
        "import numpy as np\n"
        "import torch\n"
        "import cukern\n"
        "import hipkern\n"
        "import purepkg\n"
        "from . import util\n"
        "try:\n"
        "    import optional_ext\n"
        "except ImportError:\n"
        "    optional_ext = None\n"
        "if util.is_fancy_available():\n"
        "    import fancy_backend\n"
        "\n"
        "def fused(x):\n"
        "    import fatpkg\n"
        "    return fatpkg.run(x)\n"
    ),
    "app/util.py": "import torch\nimport cukern\n",
    "app/cli.py": "import argparse\nimport requests_toolbelt\n",  # no GPU code: not counted
}


def _gcc(*args: str) -> None:
    subprocess.run(["gcc", *args], check=True, capture_output=True, timeout=120)


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _wheel(out: Path, name: str, files: dict[str, bytes], requires: tuple[str, ...] = ()) -> Path:
    """A wheel (zip with ``.dist-info``: METADATA, WHEEL, top_level.txt, RECORD), as a build
    backend writes one."""
    version = "1.0"
    tag = f"{TAG}-{TAG}-linux_x86_64" if any(p.endswith(".so") for p in files) else "py3-none-any"
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {requirement}\n" for requirement in requires
    )
    contents = {
        **files,
        f"{info}/METADATA": metadata.encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(),
        f"{info}/top_level.txt": f"{name}\n".encode(),
    }
    record = [_record_line(path, data) for path, data in contents.items()] + [f"{info}/RECORD,,"]
    path = out / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in contents.items():
            archive.writestr(member, data)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment holding four real wheels installed by pip: a CUDA extension
    (needs libcudart.so.12, requires nvidia-cuda-runtime-cu12), one with only an embedded CUDA
    fat binary, a ROCm extension (needs libamdhip64.so.6) and a pure-Python package."""
    work = tmp_path_factory.mktemp("wheels")
    stubs = work / "stubs"
    stubs.mkdir()
    write(work, "cudart.c", "int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n")
    write(work, "hip.c", "int hipGetDeviceCount(int *n) { *n = 0; return 0; }\n")
    _gcc(
        "-shared",
        "-fPIC",
        "-Wl,-soname,libcudart.so.12",
        "-o",
        str(stubs / "libcudart.so.12"),
        str(work / "cudart.c"),
    )
    (stubs / "libcudart.so").symlink_to("libcudart.so.12")
    _gcc(
        "-shared",
        "-fPIC",
        "-Wl,-soname,libamdhip64.so.6",
        "-o",
        str(stubs / "libamdhip64.so.6"),
        str(work / "hip.c"),
    )
    (stubs / "libamdhip64.so").symlink_to("libamdhip64.so.6")
    write(
        work,
        "cukern.c",
        "int cudaGetDeviceCount(int *n);\nint count(void) { int n; cudaGetDeviceCount(&n); return n; }\n",
    )
    write(
        work,
        "hipkern.c",
        "int hipGetDeviceCount(int *n);\nint count(void) { int n; hipGetDeviceCount(&n); return n; }\n",
    )
    write(
        work,
        "fat.c",
        '__attribute__((section(".nv_fatbin"), used)) static const unsigned char fatbin[16] = {0x50, 0xed, 0x55, 0xba};\n'
        "int run(void) { return 0; }\n",
    )
    _gcc(
        "-shared",
        "-fPIC",
        "-o",
        str(work / "cukern.so"),
        str(work / "cukern.c"),
        f"-L{stubs}",
        "-lcudart",
    )
    _gcc(
        "-shared",
        "-fPIC",
        "-o",
        str(work / "hipkern.so"),
        str(work / "hipkern.c"),
        f"-L{stubs}",
        "-lamdhip64",
    )
    _gcc("-shared", "-fPIC", "-o", str(work / "fat.so"), str(work / "fat.c"))
    wheels = work / "dist"
    wheels.mkdir()
    built = [
        _wheel(
            wheels,
            "cukern",
            {
                "cukern/__init__.py": b"from ._C import *\n",
                f"cukern/_C.{SOABI}.so": (work / "cukern.so").read_bytes(),
            },
            requires=("nvidia-cuda-runtime-cu12", "numpy; extra == 'test'"),
        ),
        _wheel(
            wheels,
            "fatpkg",
            {"fatpkg/__init__.py": b"", f"fatpkg/_ops.{SOABI}.so": (work / "fat.so").read_bytes()},
        ),
        _wheel(
            wheels,
            "hipkern",
            {
                "hipkern/__init__.py": b"",
                f"hipkern/_C.{SOABI}.so": (work / "hipkern.so").read_bytes(),
            },
        ),
        _wheel(wheels, "purepkg", {"purepkg/__init__.py": b'DEVICE = "cuda"\n'}),
        # precompiled kernels loaded through the driver by ctypes: no shared object of its own
        _wheel(
            wheels,
            "ctkern",
            {
                "ctkern/__init__.py": b'import ctypes\ncudart = ctypes.CDLL("libcudart.so.12")\n',
                "ctkern/kernels/gemm.fatbin": b"\x50\xed\x55\xba" + bytes(60),
            },
        ),
        # its shared object is replaced below by a link out of the environment
        _wheel(wheels, "linkpkg", {"linkpkg/__init__.py": b"", f"linkpkg/_C.{SOABI}.so": b"\0"}),
    ]
    env = work / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    site = next((env / "lib").glob("python3.*/site-packages"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "--target",
            str(site),
            *map(str, built),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert (site / "cukern" / f"_C.{SOABI}.so").is_file()
    linked = site / "linkpkg" / f"_C.{SOABI}.so"
    linked.unlink()
    linked.symlink_to(work / "cukern.so")  # outside the environment: never read
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for relative, text in PROJECT.items():
        write(tmp_path / "proj", relative, text)
    return tmp_path / "proj"


def _packages(stdout: str) -> dict[str, dict[str, object]]:
    return {package["name"]: package for package in json.loads(stdout)["packages"]}


def test_scan_reads_the_environment_files(environment: Path, project: Path) -> None:
    result = migrate(
        "scan", project, "--python", environment / "bin" / "python", "--format", "json"
    )
    packages = _packages(result.stdout)
    assert set(packages) == {"cukern", "fatpkg", "hipkern", "purepkg"}, packages
    cuda = packages["cukern"]
    assert cuda["status"] == "cuda-only"
    assert any("needs libcudart.so.12" in line for line in cuda["evidence"]), cuda
    assert "requires nvidia-cuda-runtime-cu12" in cuda["evidence"]
    assert not any("numpy" in line for line in cuda["evidence"])  # an extra's requirement
    assert [Path(site["path"]).relative_to(project).as_posix() for site in cuda["sites"]] == [
        "app/model.py",
        "app/util.py",
    ]
    fat = packages["fatpkg"]
    assert fat["status"] == "cuda-only"
    assert any(".nv_fatbin" in line for line in fat["evidence"]), fat
    assert packages["hipkern"]["status"] == "rocm"
    assert any("libamdhip64.so.6" in line for line in packages["hipkern"]["evidence"])
    assert packages["purepkg"]["status"] == "pure-python"
    assert json.loads(result.stdout)["environment"].endswith("site-packages")
    assert result.returncode == 1  # a CUDA-only build imported by the GPU code is a problem


def test_scan_text_names_each_package_once(environment: Path, project: Path) -> None:
    result = migrate("scan", project, "--python", environment)
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stdout.splitlines() if "`cukern`" in line]
    assert len(lines) == 1, result.stdout
    assert "CUDA-only native dependency" in lines[0]
    assert "Native dependencies: 2 CUDA-only native dependencies (cukern, fatpkg)." in result.stdout
    assert "hipkern" not in result.stdout.split("Native dependencies")[1].split("\n")[0]


def test_without_an_environment_each_package_is_unknown_in_every_output(project: Path) -> None:
    scan = migrate("scan", project, "--format", "json")
    packages = _packages(scan.stdout)
    assert {name: p["status"] for name, p in packages.items()} == {
        name: "unknown" for name in ("cukern", "fatpkg", "hipkern", "purepkg")
    }
    assert "--python PATH" in packages["cukern"]["check"]
    text = migrate("scan", project).stdout
    assert (
        "Native dependencies: 4 unknown native dependencies (cukern, fatpkg, hipkern, purepkg"
        in text
    )
    sarif = json.loads(migrate("scan", project, "--format", "sarif").stdout)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [note["properties"]["package"] for note in notes] == [
        "cukern",
        "fatpkg",
        "hipkern",
        "purepkg",
    ]
    assert {note["level"] for note in notes} == {"note"}
    github = migrate("scan", project, "--format", "github").stdout
    assert github.count("title=unknown native dependency::") == 4, github
    report = json.loads(migrate("report", project, "--format", "json").stdout)
    only = report["projects"][0]
    assert only["verdict"] == "needs-work"
    # fatpkg is imported inside a function only: listed, but (as for ROC900) not deciding
    assert only["native_unknowns"] == ["cukern", "hipkern", "purepkg"]
    assert only["verdict_rule_id"] == "unknown-native"
    natives = [u["detail"] for u in only["unknowns"] if u["what"] == "native dependency"]
    assert [d.split("`")[1] for d in natives] == ["cukern", "hipkern", "purepkg"]
    assert [p["eager"] for p in only["packages"]] == [True, False, True, True]
    assert "unknown native dependency" in only["verdict_reason"]
    markdown = migrate("report", project, "--format", "md").stdout
    assert "Unknowns that could change it:" in markdown
    assert markdown.count("- **native dependency**: `cukern`, unknown native dependency") == 1
    html = migrate("report", project, "--format", "html").stdout
    assert "<code>cukern</code>, unknown native dependency" in html


def test_a_rocm_build_and_pure_python_keep_a_project_ready(
    environment: Path, tmp_path: Path
) -> None:
    write(tmp_path / "proj", "app/__init__.py", "")
    write(tmp_path / "proj", "app/model.py", "import torch\nimport hipkern\nimport purepkg\n")
    unknown = json.loads(migrate("report", tmp_path / "proj", "--format", "json").stdout)
    assert unknown["projects"][0]["verdict"] == "needs-work"
    read = json.loads(
        migrate("report", tmp_path / "proj", "--format", "json", "--python", environment).stdout
    )
    project = read["projects"][0]
    assert project["verdict"] == "ready", project["verdict_reason"]
    assert {p["name"]: p["status"] for p in project["packages"]} == {
        "hipkern": "rocm",
        "purepkg": "pure-python",
    }


def test_a_cuda_only_build_keeps_a_project_from_ready(environment: Path, tmp_path: Path) -> None:
    write(tmp_path / "proj", "app/__init__.py", "")
    write(tmp_path / "proj", "app/model.py", "import torch\nimport cukern\n")
    write(tmp_path / "proj", "tests/test_model.py", "import torch\nimport fatpkg\n")
    result = migrate("report", tmp_path / "proj", "--format", "json", "--python", environment)
    project = json.loads(result.stdout)["projects"][0]
    assert project["verdict"] == "needs-work"
    assert project["native_unknowns"] == ["cukern"]  # fatpkg is imported by a test only
    assert project["verdict_rule_id"] == "unknown-native"
    assert (
        "CUDA-only" in project["verdict_reason"] and "libcudart.so.12" in project["verdict_reason"]
    )


def test_a_python_path_with_no_environment_is_a_usage_error(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "import torch\n")
    result = migrate("scan", tmp_path, "--python", tmp_path)
    assert result.returncode == 2
    assert "no site-packages folder found" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_ctypes_loader_counts_and_a_link_out_of_the_environment_is_not_followed(
    environment: Path, tmp_path: Path
) -> None:
    write(tmp_path / "proj", "model.py", "import torch\nimport ctkern\nimport linkpkg\n")
    result = migrate("scan", tmp_path / "proj", "--format", "json", "--python", environment)
    packages = _packages(result.stdout)
    assert packages["ctkern"]["status"] == "cuda-only"
    assert any("libcudart.so.12" in line for line in packages["ctkern"]["evidence"])
    assert any("gemm.fatbin" in line for line in packages["ctkern"]["evidence"])
    linked = packages["linkpkg"]
    assert linked["status"] == "unknown", linked  # not read, so not shown pure Python
    assert any("links out of the environment" in line for line in linked["evidence"])


def test_a_verdict_decided_by_an_earlier_rule_lists_each_unknown_package_once(
    tmp_path: Path,
) -> None:
    write(tmp_path / "proj", "app/__init__.py", "")
    write(
        tmp_path / "proj",
        "app/model.py",
        "import torch\nimport cukern\nimport pynvml\npynvml.nvmlInit()\n",
    )
    report = json.loads(migrate("report", tmp_path / "proj", "--format", "json").stdout)
    project = report["projects"][0]
    assert (project["verdict"], project["verdict_rule_id"]) == ("needs-work", "breaks")
    assert project["native_unknowns"] == ["cukern"]
    natives = [u for u in project["unknowns"] if u["what"] == "native dependency"]
    assert len(natives) == 1 and natives[0]["detail"].startswith("`cukern`, unknown native")
    for output in ("md", "html", "text"):
        shown = migrate("report", tmp_path / "proj", "--format", output).stdout
        assert shown.count("cukern") == 1, (output, shown)
