"""Multi-format checks for the nvml / nvidia-smi / env-var / onnxruntime / no-rocm-equivalent
families: shell, Dockerfile, compose, CI YAML and notebooks together, fix stability when all
these rules run at once, and the fixture sites they must report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migrator.engine.engine import analyze
from migrator.engine.registry import select_rules
from migrator.model import Applicability, Severity
from migrator.testing import kind_for

CATEGORIES = ["nvml", "nvidia-smi", "env-var", "onnxruntime", "no-rocm-equivalent"]
RULES = select_rules(CATEGORIES, None)
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def run(text: str, path: str, fix: bool = False):
    return analyze(text, path, kind_for(path), RULES, fix=Applicability.UNSAFE if fix else None)


def codes(text: str, path: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.rule) for finding in run(text, path).findings]


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        pytest.param("nvidia-smi | grep MiB\n", "run.sh", [(1, "ROC211")], id="pipeline-reported"),
        pytest.param("if which nvidia-smi; then echo ok; fi\n", "run.sh", [], id="probe-not-run"),
        pytest.param("type nvidia-smi\n", "run.sh", [], id="type-probe"),
        pytest.param("sudo nvidia-smi -pm 1\n", "run.sh", [(1, "ROC211")], id="sudo"),
        pytest.param(
            "jobs:\n  t:\n    steps:\n      - run: |\n          echo hi\n          nvidia-smi -L\n",
            ".github/workflows/t.yml",
            [(6, "ROC211")],
            id="ci-block-scalar",
        ),
        pytest.param(
            "FROM x\nENV A=1 CUDA_VISIBLE_DEVICES=0\n",
            "Dockerfile",
            [(2, "ROC710")],
            id="dockerfile-multi-pair",
        ),
        pytest.param(
            "services:\n  a:\n    environment:\n      CUDA_HOME: /usr/local/cuda\n"
            "      TORCH_CUDA_ARCH_LIST: '8.0'\n",
            "docker-compose.yml",
            [(4, "ROC712"), (5, "ROC713")],
            id="compose-map",
        ),
        pytest.param(
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport NCCL_DEBUG=INFO\n",
            "run.sh",
            [],
            id="portable-vars-not-flagged",
        ),
        pytest.param(
            "export LD_LIBRARY_PATH=$CUDA_HOME/lib64:$CUDA_HOME/extras/lib64\n",
            "run.sh",
            [(1, "ROC712")],
            id="one-finding-per-line",
        ),
    ],
)
def test_text_findings(text: str, path: str, expected: list[tuple[int, str]]) -> None:
    assert codes(text, path) == expected


@pytest.mark.parametrize(
    ("text", "path", "fixed"),
    [
        pytest.param(
            "FROM x\nENV A=1 CUDA_VISIBLE_DEVICES=0\n",
            "Dockerfile",
            "FROM x\nENV A=1 CUDA_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=0\n",
            id="dockerfile-inline",
        ),
        pytest.param(
            "#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0 CUDA_LAUNCH_BLOCKING=1\nnvidia-smi -L\n",
            "run.sh",
            "#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=0 "
            "CUDA_LAUNCH_BLOCKING=1 HIP_LAUNCH_BLOCKING=1\n"
            "if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L; else amd-smi list; fi\n",
            id="shell-all-rules",
        ),
    ],
)
def test_text_fixes_are_stable(text: str, path: str, fixed: str) -> None:
    first = run(text, path, fix=True)
    assert first.fix_error is None
    assert first.new_text == fixed
    assert run(fixed, path, fix=True).new_text is None


def test_compose_command_list_is_not_rewritten_as_shell() -> None:
    text = "services:\n  a:\n    command:\n      - nvidia-smi\n"
    analysis = run(text, "docker-compose.yml", fix=True)
    assert [finding.rule for finding in analysis.findings] == ["ROC211"]
    assert analysis.new_text is None


def _notebook(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "metadata": {}, "outputs": [], "source": cell}
                for cell in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_notebook_shell_lines_are_reported_without_a_fix() -> None:
    text = _notebook("!nvidia-smi -L\n!export CUDA_VISIBLE_DEVICES=0", "%%bash\nnvidia-smi\n")
    analysis = analyze(text, "nb.ipynb", "notebook", RULES)
    found = sorted((finding.cell, finding.line, finding.rule) for finding in analysis.findings)
    assert found == [(0, 1, "ROC211"), (0, 2, "ROC710"), (1, 2, "ROC211")]
    assert all(finding.fix is None for finding in analysis.findings)


def test_python_fixes_of_all_rules_together_are_stable() -> None:
    text = (
        "import os\nimport subprocess\nimport pynvml\n\n"
        'os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'
        'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
        'home = os.environ.get("CUDA_HOME")\n'
        'subprocess.run(["nvidia-smi"])\n'
        "n = pynvml.nvmlDeviceGetCount()\n"
    )
    first = run(text, "app.py", fix=True)
    assert first.fix_error is None and first.new_text is not None
    assert (
        'os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]' in first.new_text
    )
    assert (
        'os.environ["HIP_LAUNCH_BLOCKING"] = os.environ["CUDA_LAUNCH_BLOCKING"]' in first.new_text
    )
    assert 'or os.environ.get("ROCM_PATH")' in first.new_text
    assert 'else ["amd-smi"]' in first.new_text
    assert "torch.cuda.device_count()" in first.new_text
    assert run(first.new_text, "app.py", fix=True).new_text is None


def _fixture_codes(root: Path) -> set[tuple[str, int, str]]:
    found: set[tuple[str, int, str]] = set()
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        try:
            kind = kind_for(relative)
        except ValueError:
            continue
        analysis = analyze(path.read_text(encoding="utf-8"), relative, kind, RULES)
        found |= {(relative, finding.line, finding.rule) for finding in analysis.findings}
    return found


def test_llm_app_fixture_sites() -> None:
    found = _fixture_codes(FIXTURES / "llm_app")
    expected = {
        ("llm_app/gpu_utils.py", 9, "ROC200"),
        ("llm_app/gpu_utils.py", 38, "ROC700"),
        ("llm_app/gpu_utils.py", 42, "ROC702"),
        ("llm_app/gpu_utils.py", 57, "ROC201"),
        ("llm_app/gpu_utils.py", 60, "ROC202"),
        ("llm_app/gpu_utils.py", 61, "ROC202"),
        ("llm_app/gpu_utils.py", 62, "ROC202"),
        ("llm_app/server.py", 41, "ROC210"),
        ("scripts/launch.sh", 5, "ROC710"),
        ("scripts/launch.sh", 9, "ROC211"),
        ("scripts/launch.sh", 14, "ROC710"),
        ("scripts/serve_local.sh", 10, "ROC714"),  # CUDA and HIP lists disagree
        ("Dockerfile", 4, "ROC713"),
        ("Dockerfile", 5, "ROC712"),
        ("docker-compose.yml", 10, "ROC710"),
        ("docker-compose.yml", 11, "ROC713"),
        ("notebooks/explore.ipynb", 1, "ROC211"),
        ("notebooks/explore.ipynb", 2, "ROC200"),
        ("notebooks/explore.ipynb", 4, "ROC201"),
        ("notebooks/explore.ipynb", 6, "ROC202"),
    }
    assert expected <= found
    # launch.sh:6 sets CUDA_LAUNCH_BLOCKING=0 (off): nothing to pair
    assert ("scripts/launch.sh", 6, "ROC711") not in found
    assert found - expected == set()


def test_incomplete_fixture_hard_imports_are_blockers() -> None:
    path = FIXTURES / "llm_app_incomplete" / "smoke.py"
    analysis = analyze(path.read_text(encoding="utf-8"), "smoke.py", "python", RULES)
    hits = [(finding.line, finding.rule, finding.severity) for finding in analysis.findings]
    # the module itself is written on them (ROC902, one finding at the first); a scan keeps
    # that one and marks the import findings as part of it
    assert sorted(hits) == [
        (12, "ROC900", Severity.ERROR),
        (12, "ROC902", Severity.ERROR),
        (13, "ROC900", Severity.ERROR),
    ]
    assert select_rules(["ROC900"], None)[0].impact.blocker
