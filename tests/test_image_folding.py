"""One problem per CUDA container image: in a Dockerfile stage on a CUDA base image, the lines
that exist for that image (``CUDA_HOME``, ``TORCH_CUDA_ARCH_LIST``, ``NVIDIA_VISIBLE_DEVICES``,
CUDA apt packages) are related sites of the base-image finding, each naming its rule, while
what installs CUDA software by another route (pip's CUDA wheel index, a CUDA-only package)
stays its own problem, and the same lines elsewhere (another stage, a shell script) stay
reported."""

from __future__ import annotations

import json
from pathlib import Path

from tests.attacks.conftest import migrate, write

CUDA_IMAGE = """\
FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04
ENV CUDA_HOME=/usr/local/cuda \\
    TORCH_CUDA_ARCH_LIST="8.0 9.0" \\
    NVIDIA_VISIBLE_DEVICES=all
RUN apt-get update && apt-get install -y cuda-nvcc-12-1 libcudnn8 git
RUN pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cu121
RUN pip install flash-attn==2.5.8 --no-build-isolation

FROM ubuntu:22.04 AS runtime
ENV CUDA_HOME=/opt/cuda
"""


def _scan(root: Path) -> list[dict[str, object]]:
    result = migrate("scan", ".", "--output-format", "json", "--no-cache", cwd=root)
    assert result.returncode == 1, result.stderr
    return list(json.loads(result.stdout)["findings"])


def test_a_cuda_images_own_lines_are_related_sites_of_its_base_image(tmp_path: Path) -> None:
    write(tmp_path, "Dockerfile", CUDA_IMAGE)
    write(tmp_path, "scripts/build.sh", "export CUDA_HOME=/usr/local/cuda\n")
    findings = _scan(tmp_path)
    base = next(f for f in findings if f["rule"] == "ROC860")
    related = {(site["line"], site.get("rule")) for site in base["related"]}  # type: ignore[union-attr]
    assert related == {(2, "ROC712"), (3, "ROC713"), (4, "ROC713"), (5, "ROC864")}
    assert "`CUDA_HOME`" in str(base["message"])
    assert "`TORCH_CUDA_ARCH_LIST`" in str(base["message"])
    own = {(f["path"], f["line"], f["rule"]) for f in findings}
    # CUDA torch from pip's CUDA index and a CUDA-only package are problems of their own
    assert ("Dockerfile", 6, "ROC865") in own
    assert any(path == "Dockerfile" and line == 7 for path, line, _ in own)
    # the same variable in a stage on another image, and in a shell script, stays reported
    assert ("Dockerfile", 10, "ROC712") in own
    assert ("scripts/build.sh", 1, "ROC712") in own
    # nothing of the CUDA stage's own lines is reported on its own
    assert not any(path == "Dockerfile" and line in (2, 3, 4, 5) for path, line, _ in own)


def test_without_a_cuda_base_image_the_lines_are_their_own_findings(tmp_path: Path) -> None:
    write(tmp_path, "Dockerfile", "FROM ubuntu:22.04\nENV CUDA_HOME=/usr/local/cuda\n")
    assert [(f["rule"], f["line"]) for f in _scan(tmp_path)] == [("ROC712", 2)]


def test_a_dockerfile_in_a_python_string_folds_the_same_way(tmp_path: Path) -> None:
    source = (
        'DOCKERFILE = """FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04\n'
        "ENV PATH=/opt/bin:$PATH \\\n"
        "    CUDA_HOME=/usr/local/cuda\n"
        'RUN make\n"""\n'
    )
    write(tmp_path, "deploy/templates.py", source)
    findings = _scan(tmp_path)
    assert [(f["rule"], f["line"], f["column"]) for f in findings] == [("ROC860", 1, 22)]
    sites = [(s["line"], s["column"], s.get("rule")) for s in findings[0]["related"]]  # type: ignore[union-attr]
    assert sites == [(3, 5, "ROC712")]


def test_the_report_counts_a_folded_line_in_its_container_files_work_item(tmp_path: Path) -> None:
    source = (
        'DOCKERFILE = """FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04\n'
        "ENV PATH=/opt/bin:$PATH \\\n"
        "    CUDA_HOME=/usr/local/cuda\n"
        'RUN make\n"""\n'
    )
    write(tmp_path, "deploy/templates.py", source)
    result = migrate("report", ".", "--format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    project = json.loads(result.stdout)["projects"][0]
    items = [*project["work_items"], *project["peripheral_work_items"]]
    assert [item["title"] for item in items] == ["container file `deploy/templates.py`"]
