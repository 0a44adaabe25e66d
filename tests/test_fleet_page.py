"""The pages a manager reads, from `migrate report` over several projects and from the fleet's
results folder: effort as a distribution (median, largest, who dominates the sum), each
project's deciding items and the rule that applied, no internal keys, no raw Markdown backticks
in HTML or CSV tables, no absolute path of a scanned folder, and a project page that leads with
the item that decided its verdict (not a benchmark script's card)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from migrator.fleet.aggregate import collect
from migrator.fleet.manifest import RepoSpec
from migrator.fleet.render import render
from migrator.fleet.store import Store
from migrator.fleet.unit import Unit, run_unit
from tests.conftest import write

PTX = """#include <torch/extension.h>
__global__ void gemm_kernel(const unsigned* a, float* c) {
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\\n"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]),
        "f"(d0), "f"(d1), "f"(d2), "f"(d3));
  c[threadIdx.x] = d0 + d1 + d2 + d3;
}
torch::Tensor gemm(torch::Tensor a) {
  auto c = torch::empty({32}, a.options().dtype(torch::kFloat));
  gemm_kernel<<<1, 32>>>((const unsigned*)a.data_ptr(), c.data_ptr<float>());
  return c;
}
"""
BENCH = (
    "import torch\nfrom flash_attn import flash_attn_func\n\n"
    "q = torch.randn(1, 128, 8, 64, device='cuda', dtype=torch.float16)\n"
    "print(flash_attn_func(q, q, q))\n"
)


def kernel_project(root: Path) -> Path:
    """A package whose extension (imported at module level) is tensor-core PTX, with benchmark
    scripts that import flash-attn."""
    write(
        root,
        "setup.py",
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "setup(name='kpkg', packages=['kpkg'],\n"
        "      ext_modules=[CUDAExtension('kpkg._C', ['csrc/bind.cpp', 'csrc/mma.cu'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n",
    )
    write(
        root,
        "kpkg/__init__.py",
        "import torch\nfrom kpkg import _C\n\n\ndef gemm(a):\n    return _C.gemm(a)\n",
    )
    write(
        root,
        "csrc/bind.cpp",
        "#include <torch/extension.h>\ntorch::Tensor gemm(torch::Tensor a);\n"
        'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("gemm", &gemm); }\n',
    )
    write(root, "csrc/mma.cu", PTX)
    for number in range(3):
        write(root, f"benchmarks/bench_{number}.py", BENCH)
    write(root, "README.md", "# kpkg\n")
    return root


def monitor_project(root: Path) -> Path:
    """A training script with a CUDA base image: a small, ordinary piece of work."""
    write(root, "train.py", "import torch\n\nmodel = torch.nn.Linear(4, 4).cuda()\n")
    write(root, "Dockerfile", "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nCOPY . /app\n")
    write(
        root,
        "environment.yml",
        "name: trainer\nchannels:\n  - pytorch\ndependencies:\n  - pytorch\n  - cudatoolkit=11.8\n",
    )
    write(root, "README.md", "# trainer\n\nRun `python train.py` or build the `Dockerfile`.\n")
    return root


def _no_raw_backticks_in_tables(html: str) -> list[str]:
    return [cell for cell in re.findall(r"<td[^>]*>(.*?)</td>", html, re.S) if "`" in cell]


def test_report_over_several_projects_shows_the_effort_distribution_and_no_local_path(
    run_cli, tmp_path
):
    kernels = kernel_project(tmp_path / "kpkg")
    trainer = monitor_project(tmp_path / "trainer")
    outputs = {}
    for fmt in ("html", "md", "json", "text"):
        out = tmp_path / f"fleet.{fmt}"
        result = run_cli("report", "--format", fmt, "-o", str(out), str(kernels), str(trainer))
        assert result.exit_code == 0, result.output
        outputs[fmt] = out.read_text(encoding="utf-8")
    data = json.loads(outputs["json"])
    blocked = next(p for p in data["projects"] if p["name"] == "kpkg")
    assert blocked["verdict"] == "blocked"
    assert blocked["deciding"][0]["rules"] == ["ROC311"]
    for fmt in ("html", "md", "text"):
        page = outputs[fmt]
        assert "median" in page and "largest kpkg" in page, fmt  # a distribution, not a sum
        assert str(tmp_path) not in page, fmt  # no absolute local path of a scanned folder
        assert "problem:" not in page, fmt  # no internal key
        if fmt != "text":  # the terminal's fleet summary is one table of the projects
            assert "Rule applied" in page, fmt
            assert "Unknowns that could change it" in page, fmt
    assert not _no_raw_backticks_in_tables(outputs["html"])
    # the project page leads with the item that decided the verdict, not a benchmark's card
    section = outputs["html"].split("<h2>kpkg</h2>", 1)[1]
    first_card = re.search(r'<div class="group[^"]*">\s*<h4>.*?</span> (ROC\d+)', section, re.S)
    assert first_card and first_card.group(1) == "ROC311", first_card
    markdown = outputs["md"].split("## kpkg", 1)[1]
    assert re.search(r"^#### .*?(ROC\d+)", markdown, re.M).group(1) == "ROC311"


def test_the_fleet_page_shows_the_spread_the_deciding_items_and_no_local_path(tmp_path):
    projects = {
        "kpkg": kernel_project(tmp_path / "repos" / "kpkg"),
        "trainer": monitor_project(tmp_path / "repos" / "trainer"),
        "trainer2": monitor_project(tmp_path / "repos" / "trainer2"),
    }
    store = Store(tmp_path / "results").open()
    units = []
    for name, root in projects.items():
        unit = Unit(RepoSpec(name, str(root)), commit="local", key=f"k-{name}")
        result = run_unit(unit)
        store.write(name, unit.key, result["files"], result["meta"])
        units.append(unit)
        page = store.read(name, unit.key, "report.html") or ""
        assert str(root) not in page and str(tmp_path) not in page  # the project's own page
    fleet = collect(units, store, link_base=tmp_path / "results")
    pages = {fmt: render(fleet, fmt) for fmt in ("html", "md", "json", "csv")}
    data = json.loads(pages["json"])
    effort = data["effort"]
    hours = sorted(row["hours"] for row in data["projects"])
    assert effort["median_hours"] == hours[1]
    assert effort["largest"]["name"] == "kpkg"
    assert [entry["name"] for entry in effort["dominant"]] == ["kpkg"]
    kpkg = next(row for row in data["projects"] if row["name"] == "kpkg")
    assert kpkg["decided_by"] and "csrc/mma.cu" in kpkg["decided_by"][0]
    assert "(port)" in kpkg["decided_by"][0] and kpkg["rule"].startswith("blocked")
    assert "on ROCm" in kpkg["unknowns"] and "CUDA kernels" in kpkg["unknowns"]
    assert "unknowns: CUDA kernels, on ROCm" in pages["html"]
    for fmt in ("html", "md", "csv"):  # the pages and the table (JSON keeps its keys)
        assert "problem:" not in pages[fmt], fmt
    for fmt in ("html", "md"):  # the pages (the CSV and JSON name each repository's source)
        assert str(tmp_path / "repos") not in pages[fmt], fmt
    assert "median" in pages["html"] and "median" in pages["md"]
    assert not _no_raw_backticks_in_tables(pages["html"])
    rows = list(csv.DictReader(io.StringIO(pages["csv"])))
    assert all("`" not in row["deciding"] and "`" not in row["class"] for row in rows)


def test_no_format_holds_this_machines_path_or_a_urls_password(tmp_path):
    """Each repository's ``source`` is where the manifest says it is: a folder relative to the
    manifest, a URL without its password; the unit's own report (its JSON ``root`` too) the
    same. Nothing names the folder the manifest sits in."""
    from migrator.fleet.manifest import read_manifest

    kernel_project(tmp_path / "fleet" / "repos" / "kpkg")
    manifest = tmp_path / "fleet" / "fleet.toml"
    manifest.write_text(
        '[[repo]]\npath = "repos/kpkg"\n\n[[repo]]\nname = "remote"\n'
        'url = "https://bot:s3cret@git.example.com/ml/trainer.git"\nref = "v1"\n'
    )
    specs = read_manifest(manifest).repos
    assert [spec.shown for spec in specs] == [
        "repos/kpkg",
        "https://bot@git.example.com/ml/trainer.git",
    ]
    assert specs[0].source == str(tmp_path / "fleet" / "repos" / "kpkg")  # checked out from here
    store = Store(tmp_path / "results").open()
    unit = Unit(specs[0], commit="local", key="k-kpkg")
    result = run_unit(unit)
    store.write("kpkg", unit.key, result["files"], result["meta"])
    report = json.loads(store.read("kpkg", unit.key, "report.json") or "{}")
    assert [project["root"] for project in report["projects"]] == ["repos/kpkg"]
    remote = Unit(specs[1], commit="0" * 40, key="k-remote")  # listed, never run here
    fleet = collect([unit, remote], store, link_base=tmp_path / "results")
    for fmt in ("html", "md", "json", "csv"):
        page = render(fleet, fmt)
        assert str(tmp_path) not in page and "s3cret" not in page, fmt
    rows = {row["name"]: row for row in json.loads(render(fleet, "json"))["projects"]}
    assert rows["kpkg"]["source"] == "repos/kpkg"
    assert rows["remote"]["source"] == "https://bot@git.example.com/ml/trainer.git"
    table = {row["name"]: row for row in csv.DictReader(io.StringIO(render(fleet, "csv")))}
    assert table["kpkg"]["source"] == "repos/kpkg"
