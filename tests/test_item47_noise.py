"""One finding per problem, in the words of the real problem (issue 47, item 5), through the
command line on small projects shaped like real ones: the uses of an unguarded import of a
dependency ROCm lacks are sites of the import; a diagnostic ``nvidia-smi`` that a script
survives is a hint; NVIDIA-only release tooling is not a migration problem; a conda
environment that yields a CUDA or CPU torch says so and names the ROCm install."""

from __future__ import annotations

from tests.conftest import write

ATTN = """\
import torch
import xformers.ops as xops
from flash_attn import flash_attn_func, flash_attn_varlen_func


def a(q, k, v):
    return xops.memory_efficient_attention(q, k, v)


def b(q, k, v):
    return xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())


def c(q, k, v):
    return flash_attn_func(q, k, v, causal=True)


def d(q, k, v, cu, m):
    return flash_attn_varlen_func(q, k, v, cu, cu, m, m)
"""


def _by_rule(report: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        out.setdefault(finding["rule"], []).append(finding)
    return out


def test_uses_of_an_unguarded_import_are_sites_of_the_import(tmp_path, scan_json):
    write(tmp_path, "attn.py", ATTN)
    found = _by_rule(scan_json(str(tmp_path)))
    # xformers: the import and its two calls (no rewrite: 3-D inputs possible) are one finding
    assert "ROC410" not in found
    (xformers,) = found["ROC411"]
    assert xformers["line"] == 2
    assert sorted(site["line"] for site in xformers["related"]) == [7, 11]
    # flash-attn: the varlen call (no SDPA equivalent) joins the import like the plain call
    assert "ROC401" not in found and "ROC400" not in found
    (flash,) = found["ROC402"]
    assert flash["line"] == 3
    assert sorted(site["line"] for site in flash["related"]) == [15, 19]


def test_a_use_with_a_fix_stays_its_own_finding(tmp_path, scan_json):
    # the project states its torch floor: with none, a fix needing a recent torch is withheld
    write(tmp_path, "requirements.txt", "torch>=2.4\n")
    write(
        tmp_path,
        "norm.py",
        "import torch\nfrom apex.normalization import FusedLayerNorm\n\n\n"
        "def build(d):\n    return FusedLayerNorm(d)\n",
    )
    found = _by_rule(scan_json(str(tmp_path)))
    assert [f["line"] for f in found["ROC504"]] == [2]
    assert [f["line"] for f in found["ROC500"]] == [6]


SCRIPT = """\
#!/bin/bash
echo "GPUs:"
nvidia-smi topo -m
python train.py "$@"
"""


def test_a_diagnostic_nvidia_smi_the_script_survives_is_a_hint(tmp_path, scan_json):
    write(tmp_path, "run.sh", SCRIPT)
    (finding,) = _by_rule(scan_json("--min-severity", "info", str(tmp_path)))["ROC211"]
    assert finding["severity"] == "info"
    assert "the script carries on" in finding["message"]


def test_nvidia_smi_in_a_script_that_stops_on_errors_stays_an_error(tmp_path, scan_json):
    write(tmp_path, "run.sh", SCRIPT.replace("#!/bin/bash\n", "#!/bin/bash\nset -euo pipefail\n"))
    write(tmp_path, "last.sh", "#!/bin/bash\npython train.py\nnvidia-smi -L\n")
    found = _by_rule(scan_json(str(tmp_path)))["ROC211"]
    assert sorted((f["path"].rsplit("/", 1)[-1], f["severity"]) for f in found) == [
        ("last.sh", "error"),
        ("run.sh", "error"),
    ]


RELEASE = """\
name: publish
on:
  release:
    types: [published]
jobs:
  wheels:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        cuda: ["11.8", "12.1"]
    steps:
      - uses: Jimver/cuda-toolkit@v0.2.14
        with:
          cuda: ${{ matrix.cuda }}
      - run: pip install torch --index-url https://download.pytorch.org/whl/cu121
      - run: TORCH_CUDA_ARCH_LIST="8.0 9.0" python setup.py bdist_wheel
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


def test_nvidia_only_release_tooling_is_not_a_migration_problem(tmp_path, scan_json):
    write(tmp_path, ".github/workflows/publish.yml", RELEASE)
    assert scan_json(str(tmp_path))["findings"] == []
    shown = scan_json("--show-guarded", str(tmp_path))["findings"]
    assert shown and all("release tooling" in f["guard"] for f in shown)
    # a workflow that builds the ROCm wheels too is the project's release for both vendors
    write(
        tmp_path,
        ".github/workflows/publish.yml",
        RELEASE.replace('["11.8", "12.1"]', '["11.8", "12.1", "rocm6.2"]'),
    )
    assert scan_json(str(tmp_path))["findings"]


def test_a_conda_environment_names_the_torch_it_yields(tmp_path, scan_json):
    write(
        tmp_path,
        "environment.yml",
        "name: x\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.10\n"
        "  - pytorch=2.1\n  - pytorch-cuda=12.1\n  - cudatoolkit=11.8\n",
    )
    (finding,) = _by_rule(scan_json(str(tmp_path)))["ROC814"]
    assert finding["message"].startswith("this environment installs a CUDA build of torch")
    assert "download.pytorch.org/whl/rocm" in finding["message"]
    assert "not needed on ROCm" not in finding["message"]
    write(tmp_path, "setup.sh", "conda install -y pytorch pytorch-cuda=12.1 -c pytorch -c nvidia\n")
    (command,) = _by_rule(scan_json(str(tmp_path)))["ROC817"]
    assert "installs a CUDA build of torch" in command["message"]
