"""Which torch releases each PyTorch ROCm wheel index serves (rules/data/torch_rocm_indexes.toml,
from pytorch.org's "previous versions" page), and the index rewrites that depend on it: a pin must
be one the index has, and an `--extra-index-url` next to an unbounded torch is not rewritten."""

from __future__ import annotations

from pathlib import Path

from migrator.engine.runner import fix_tree
from migrator.knowledge.torch_builds import indexes_serving, rocm_for_torch_version, rocm_index_for
from migrator.model import Applicability, Severity


def test_patch_releases_decide_the_index():
    assert indexes_serving("2.2.0") == ("5.6",)
    assert indexes_serving("2.2.1") == ("5.7",)
    assert indexes_serving("2.0.1") == ("5.4.2",)
    assert indexes_serving("2.5.1") == ("6.2", "6.1")
    assert indexes_serving("2.6.0") == ("6.2.4", "6.1")
    assert indexes_serving("2.3") == ("6.0",)  # 2.3 is 2.3.0
    assert indexes_serving("2.3.2") == ()  # no such release
    assert indexes_serving("1.13.1") is None  # before the table
    assert rocm_for_torch_version("2.2.0") == "5.6"
    assert rocm_for_torch_version("2.9.1") == "6.4"


def test_extra_index_needs_a_torch_bounded_to_what_the_index_has():
    assert rocm_index_for(["==2.3.1"], extra=True) == ("6.0", "")
    assert rocm_index_for(["==2.3.1+cu121"], extra=True) == ("6.0", "")
    assert rocm_index_for([">=2.1,<2.2"], extra=True) == ("5.6", "")
    assert rocm_index_for(["==2.2.0"], extra=True) == ("5.6", "")
    for unbounded in ([""], [">=2.1"], []):
        rocm, why = rocm_index_for(unbounded, extra=True)
        assert rocm is None
        assert "pin torch (`torch==X.Y.Z`) or install it with `--index-url`" in why
    # --index-url replaces PyPI: the newest admitted release chooses the index
    assert rocm_index_for([">=2.1,<2.3"], extra=False) == ("5.7", "")
    assert rocm_index_for(["==2.3.2"], extra=False)[0] is None


def _fix(root: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    run = fix_tree(
        root, level=Applicability.UNSAFE, write=False, jobs=1, min_severity=Severity.HYGIENE
    )
    variants = {v.relative: v.text or v.reason for v in run.variants}
    left: dict[str, list[str]] = {}
    for finding in run.scan.findings:
        left.setdefault(finding.path, []).append(f"{finding.rule} {finding.message}")
    return variants, left


def test_dockerfile_variant_uses_the_index_that_has_the_pinned_release(tmp_path):
    (tmp_path / "Dockerfile").write_text(
        "FROM nvidia/cuda:11.8.0-runtime-ubuntu22.04\n"
        "RUN pip install torch==2.2.0 --index-url https://download.pytorch.org/whl/cu118\n"
    )
    variants, _ = _fix(tmp_path)
    assert variants == {
        "Dockerfile.rocm": "FROM rocm/dev-ubuntu-22.04:5.6-complete\n"
        "RUN pip install torch==2.2.0 --index-url https://download.pytorch.org/whl/rocm5.6\n"
    }


def test_unpinned_torch_behind_extra_index_is_a_manual_step(tmp_path):
    (tmp_path / "requirements.txt").write_text(
        "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch\n"
    )
    _, left = _fix(tmp_path)
    (message,) = [m for m in left["requirements.txt"] if m.startswith("ROC802")]
    assert message.endswith(
        "next to `--extra-index-url` pip installs the newest torch from PyPI, a CUDA build, "
        "unless torch is pinned to a release the ROCm index has; pin torch (`torch==X.Y.Z`) "
        "or install it with `--index-url`"
    )


def test_companion_pins_follow_the_paired_torch_release():
    from migrator.knowledge.torch_builds import rocm_for_companion

    assert rocm_for_companion("torchvision", "0.17.2") == "5.7"  # torch 2.2.2
    assert rocm_for_companion("torchvision", "0.17.0") == "5.6"  # torch 2.2.0
    assert rocm_for_companion("torchvision", "0.15.2") == "5.4.2"  # pairs with torch 2.0.1
    assert rocm_for_companion("torchaudio", "2.5.1") == "6.2"
    assert rocm_for_companion("torch", "2.3.2") is None  # no such torch release
