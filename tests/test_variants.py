"""ROCm siblings of NVIDIA container files: `fix --unsafe-fixes` writes `Dockerfile.rocm` beside
a Dockerfile whose base-image swap it withholds, leaves the original byte-identical, never
overwrites a file, and writes nothing when the variant would still need manual work or its ROCm
versions disagree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from migrator.engine.runner import fix_tree
from migrator.engine.variants import rocm_versions_disagree, sibling_name, torch_source_problem
from migrator.files.writer import WriteRefused, create_new
from migrator.knowledge.torch_builds import indexes_serving
from migrator.model import Applicability

ROOT = Path(__file__).resolve().parent.parent

DOCKERFILE = (
    "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\n"
    "RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121\n"
    "COPY . .\n"
)


def _fix(root: Path, write: bool = True):
    return fix_tree(root, level=Applicability.UNSAFE, write=write, jobs=1)


def test_dockerfile_gets_a_rocm_sibling_and_stays_byte_identical(tmp_path):
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    os.chmod(tmp_path / "Dockerfile", 0o640)
    run = _fix(tmp_path)
    assert (tmp_path / "Dockerfile").read_text() == DOCKERFILE
    assert (tmp_path / "Dockerfile.rocm").read_text() == (
        "FROM rocm/dev-ubuntu-22.04:6.2-complete\n"
        "RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/rocm6.2\n"
        "COPY . .\n"
    )
    assert os.stat(tmp_path / "Dockerfile.rocm").st_mode & 0o777 == 0o640
    (variant,) = run.variants
    assert (variant.original, variant.relative, variant.error) == (
        "Dockerfile",
        "Dockerfile.rocm",
        None,
    )
    # fixing again changes nothing
    again = _fix(tmp_path)
    assert all(v.text is None for v in again.variants)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Dockerfile", "Dockerfile.rocm"]


def test_preview_writes_nothing(tmp_path):
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    run = _fix(tmp_path, write=False)
    assert run.variants[0].text is not None
    assert not (tmp_path / "Dockerfile.rocm").exists()


def test_fixture_dockerfile_gets_no_variant_that_would_not_work(tmp_path):
    """The fixture installs a CUDA flash-attn wheel and NVIDIA apex: a ROCm base image alone
    would not build a working image, so no sibling is written and the reason is given."""
    project = tmp_path / "llm_app"
    shutil.copytree(ROOT / "fixtures" / "llm_app", project)
    run = _fix(project)
    (variant,) = [v for v in run.variants if v.original == "Dockerfile"]
    assert variant.text is None and "would still need manual work" in variant.reason
    assert not (project / "Dockerfile.rocm").exists()
    assert (project / "Dockerfile").read_bytes() == (
        ROOT / "fixtures" / "llm_app" / "Dockerfile"
    ).read_bytes()


def test_a_sibling_name_taken_by_a_dangling_link_is_named_not_a_crash(tmp_path):
    """``Dockerfile.rocm`` exists only as a link to nothing (no twin to read): the variant is
    not written, and the reason says the name is taken (the run used to end in a NameError)."""
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    (tmp_path / "Dockerfile.rocm").symlink_to(tmp_path / "nowhere")
    run = _fix(tmp_path, write=False)
    (variant,) = run.variants
    assert (variant.original, variant.text) == ("Dockerfile", None)
    assert variant.reason == "Dockerfile.rocm exists; left as it is"
    assert (tmp_path / "Dockerfile").read_text() == DOCKERFILE


def test_create_new_never_overwrites_and_never_follows_symlinks(tmp_path):
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    (tmp_path / "Dockerfile.rocm").write_text("mine\n")
    with pytest.raises(WriteRefused, match="exists; not overwritten"):
        create_new(tmp_path, "Dockerfile.rocm", "FROM rocm/pytorch:latest\n", "Dockerfile")
    assert (tmp_path / "Dockerfile.rocm").read_text() == "mine\n"
    (tmp_path / "Dockerfile.rocm").unlink()
    (tmp_path / "elsewhere").write_text("x\n")
    (tmp_path / "Dockerfile.rocm").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(WriteRefused):
        create_new(tmp_path, "Dockerfile.rocm", "FROM rocm/pytorch:latest\n", "Dockerfile")
    assert (tmp_path / "elsewhere").read_text() == "x\n"
    with pytest.raises(WriteRefused, match="beside its original"):
        create_new(tmp_path, "sub/Dockerfile.rocm", "x\n", "Dockerfile")


def test_sibling_names():
    assert sibling_name("Dockerfile") == "Dockerfile.rocm"
    assert sibling_name("docker/Dockerfile.cuda") == "docker/Dockerfile.rocm"
    assert sibling_name("docker/cu121.Dockerfile") == "docker/rocm.Dockerfile"
    assert sibling_name("Dockerfile.B200") == "Dockerfile.B200.rocm"


def test_rocm_versions_must_agree():
    base = "FROM rocm/dev-ubuntu-22.04:6.3.4-complete\n"
    index = "RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/rocm6.2\n"
    assert "disagree (6.2, 6.3)" in (rocm_versions_disagree(base + index, indexes_serving) or "")
    assert rocm_versions_disagree(base.replace("6.3.4", "6.2") + index, indexes_serving) is None
    wrong_torch = index.replace("2.5.1", "2.7.0")
    reason = rocm_versions_disagree(base.replace("6.3.4", "6.2") + wrong_torch, indexes_serving)
    assert reason == (
        "torch 2.7.0 is not on the ROCm 6.2 wheel index (ROCm indexes serving it: 6.3)"
    )
    # 2.2.0 was built for ROCm 5.6 only, 2.2.1 for 5.7 only: the patch release decides
    on_57 = "RUN pip install torch==2.2.0 --index-url https://download.pytorch.org/whl/rocm5.7\n"
    assert rocm_versions_disagree(on_57, indexes_serving) == (
        "torch 2.2.0 is not on the ROCm 5.7 wheel index (ROCm indexes serving it: 5.6)"
    )
    assert rocm_versions_disagree(on_57.replace("2.2.0", "2.2.1"), indexes_serving) is None
    # 2.6.0 is on rocm6.1 and rocm6.2.4: both agree
    on_624 = "RUN pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/rocm6.2.4\n"
    assert rocm_versions_disagree(on_624, indexes_serving) is None


def test_a_variant_that_would_pull_cuda_torch_from_pypi_is_not_written(tmp_path):
    """A ROCm base image with `pip install` of torch-dependent packages and no ROCm wheel index
    would install PyPI's CUDA torch: no sibling, and the reason names the missing index."""
    (tmp_path / "Dockerfile").write_text(
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nRUN pip install accelerate\n"
    )
    (variant,) = _fix(tmp_path).variants
    assert variant.text is None
    assert "torch would come from PyPI as a CUDA build" in variant.reason
    assert not (tmp_path / "Dockerfile.rocm").exists()
    assert torch_source_problem("FROM rocm/pytorch:latest\nRUN pip install accelerate\n") is None


def test_requirements_file_gets_a_rocm_sibling(tmp_path):
    """A requirements file pinning CUDA builds behind a CUDA index keeps its text; the ROCm
    variant beside it names the index that has the pinned release and the `+rocm` builds."""
    original = (
        "--extra-index-url https://download.pytorch.org/whl/cu121\n"
        "torch==2.3.1+cu121\n"
        "torchvision==0.18.1+cu121\n"
        "transformers>=4.40\n"
    )
    (tmp_path / "requirements.txt").write_text(original)
    _fix(tmp_path)
    assert (tmp_path / "requirements.txt").read_text() == original
    assert (tmp_path / "requirements-rocm.txt").read_text() == (
        "--extra-index-url https://download.pytorch.org/whl/rocm6.0\n"
        "torch==2.3.1+rocm6.0\n"
        "torchvision==0.18.1+rocm6.0\n"
        "transformers>=4.40\n"
    )
    assert all(v.text is None for v in _fix(tmp_path).variants)  # a second fix changes nothing


def test_no_requirements_sibling_when_pip_would_still_take_cuda_torch(tmp_path):
    """Behind `--extra-index-url` an unpinned torch resolves to PyPI's CUDA build: no variant."""
    original = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch\n"
    (tmp_path / "requirements.txt").write_text(original)
    run = _fix(tmp_path)
    assert all(v.text is None for v in run.variants)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requirements.txt"]


def test_requirements_sibling_names():
    assert sibling_name("requirements.txt") == "requirements-rocm.txt"
    assert sibling_name("requirements-cu118.txt") == "requirements-rocm.txt"
    assert sibling_name("requirements/gpu.in") == "requirements/gpu-rocm.in"


NGC_BUILDER = (
    "# Start with NGC container\n"
    "FROM nvcr.io/nvidia/pytorch:24.03-py3\n\n"
    "# Set noninteractive mode for apt-get\n"
    "ARG DEBIAN_FRONTEND=noninteractive\n"
    "RUN apt-get update && apt-get install -y wget\n"
)


def test_ngc_sibling_pins_the_rocm_image_of_the_same_torch_and_drops_the_ngc_comment(tmp_path):
    (tmp_path / "Dockerfile.cuda").write_text(NGC_BUILDER)
    _fix(tmp_path)
    assert (tmp_path / "Dockerfile.cuda").read_text() == NGC_BUILDER
    assert (tmp_path / "Dockerfile.rocm").read_text() == (
        "FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0\n\n"
        "# Set noninteractive mode for apt-get\n"
        "ARG DEBIAN_FRONTEND=noninteractive\n"
        "RUN apt-get update && apt-get install -y wget\n"
    )


def test_ngc_release_without_a_documented_rocm_tag_names_the_torch_to_pin(tmp_path):
    (tmp_path / "Dockerfile.cuda").write_text(NGC_BUILDER.replace("24.03", "24.05"))
    run = _fix(tmp_path, write=False)
    (finding,) = [f for f in run.scan.findings if f.rule == "ROC861"]
    assert "pin a `rocmX.Y_ubuntuYY.MM_pyZ_pytorch_release_A.B.C` tag with PyTorch 2.4" in (
        finding.message
    )


NGC = "FROM nvcr.io/nvidia/pytorch:24.03-py3\nCOPY . /app\n"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("ENV LD_LIBRARY_PATH=/opt/hpcx/ucx/lib:$LD_LIBRARY_PATH\n", "line 2: HPC-X (`/opt/hpcx`)"),
        ('ENV TORCH_CUDA_ARCH_LIST="8.0 9.0"\n', "line 2: it sets the NVIDIA GPU architectures"),
        ("RUN trtexec --onnx=model.onnx\n", "line 2: TensorRT has no ROCm build"),
    ],
)
def test_no_variant_where_a_piece_of_the_nvidia_image_has_no_rocm_counterpart(tmp_path, line, why):
    (tmp_path / "Dockerfile").write_text(NGC.replace("COPY", line + "COPY"))
    (variant,) = _fix(tmp_path).variants
    assert variant.text is None and variant.reason.startswith(why), variant.reason
    assert not (tmp_path / "Dockerfile.rocm").exists()
    # a comment naming the piece is no piece
    (tmp_path / "Dockerfile").write_text(NGC.replace("COPY", "# " + line + "COPY"))
    (variant,) = _fix(tmp_path, write=False).variants
    assert variant.text is not None


def test_no_variant_that_installs_an_included_file_with_cuda_builds(tmp_path):
    (tmp_path / "Dockerfile").write_text(NGC + "RUN pip install -r requirements.txt\n")
    (tmp_path / "requirements.txt").write_text("-r requirements-gpu.txt\ntransformers\n")
    (tmp_path / "requirements-gpu.txt").write_text(
        "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\n"
    )
    variants = {v.original: v for v in _fix(tmp_path, write=False).variants}
    assert variants["Dockerfile"].text is None
    assert variants["Dockerfile"].reason.startswith(
        "it installs requirements.txt, which includes requirements-gpu.txt, which has line 1 "
        "ROC802 (PyTorch cu121 wheel index"
    )
    assert variants["requirements-gpu.txt"].text is not None


def test_one_rocm_release_across_the_variants_of_a_project(tmp_path):
    # the NGC image maps to ROCm 6.2's torch 2.3 image; the pinned torch 2.3.1 wheels are on
    # the ROCm 6.0 index: each file agrees with itself, the project would run two ROCm releases
    (tmp_path / "Dockerfile").write_text(NGC + "RUN pip install -r requirements.txt\n")
    (tmp_path / "requirements.txt").write_text(
        "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\n"
    )
    variants = _fix(tmp_path).variants
    assert [v.text for v in variants] == [None, None]
    assert {v.reason for v in variants} == {
        "the project's ROCm variants would use different ROCm releases (Dockerfile.rocm: ROCm "
        "6.2; requirements-rocm.txt: ROCm 6.0); one project needs one ROCm release"
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Dockerfile", "requirements.txt"]


def test_an_include_with_a_planned_sibling_is_pointed_at_it(tmp_path):
    from migrator.engine.variants import Variant, include_problem

    (tmp_path / "req").mkdir()
    (tmp_path / "req/base.txt").write_text("torch==2.5.1+cu121\n")
    variant = Variant("req/all.txt", "req/all-rocm.txt", text="-r base.txt\n-c=base.txt\nx\n")
    siblings = {"req/base.txt": "req/base-rocm.txt"}
    assert include_problem(tmp_path, variant, lambda relative: "has CUDA", siblings) is None
    assert variant.text == "-r base-rocm.txt\n-c=base-rocm.txt\nx\n"
    variant = Variant("req/all.txt", "req/all-rocm.txt", text="-r base.txt\n")
    assert include_problem(tmp_path, variant, lambda relative: "has CUDA", {}) == (
        "it installs req/base.txt, which has CUDA; make its ROCm variant first"
    )


UV_IMAGE = (
    "ARG CUDA_VERSION=12\n"
    "FROM nvidia/cuda:12.8.1-devel-ubuntu22.04 AS cuda12\n"
    "FROM cuda${CUDA_VERSION}\n"
    "COPY --from=ghcr.io/astral-sh/uv:0.8.6 /uv /bin/\n"
    "RUN --mount=type=bind,source=uv.lock,target=uv.lock \\\n"
    "    uv run --frozen --no-default-groups --group cuda${CUDA_VERSION} \\\n"
    "        python -m nltk.downloader punkt\n"
)


@pytest.mark.parametrize(
    ("install", "why"),
    [
        ("", "line 5: `uv run --frozen --no-default-groups --group cuda${CUDA_VERSION}"),
        ("uv sync --frozen", "line 5: `uv sync --frozen` installs the project's locked"),
        (
            "poetry install --extras cu121",
            "line 5: `poetry install --extras cu121` installs the project's `cu121`",
        ),
    ],
)
def test_no_variant_that_installs_a_lock_holding_cuda_builds(tmp_path, install, why):
    """A lock install (`uv run --group cuda12`, `uv sync`, `poetry install`) brings the builds
    the lock resolved, whatever the base image: a ROCm variant of that Dockerfile would run CUDA
    wheels (found on allenai/open-instruct)."""
    text = UV_IMAGE
    if install:
        text = UV_IMAGE.replace(
            "uv run --frozen --no-default-groups --group cuda${CUDA_VERSION} \\\n"
            "        python -m nltk.downloader punkt",
            install,
        )
    (tmp_path / "Dockerfile").write_text(text)
    (variant,) = _fix(tmp_path, write=False).variants
    assert variant.text is None and variant.reason.startswith(why), variant.reason
    # a lock of a ROCm group is what the variant may install
    (tmp_path / "Dockerfile").write_text(
        "FROM nvidia/cuda:12.8.1-devel-ubuntu22.04\nRUN uv sync --frozen --group rocm "
        "--index-url https://download.pytorch.org/whl/rocm6.3\n"
    )
    (variant,) = _fix(tmp_path, write=False).variants
    assert variant.text is not None, variant.reason


def _trt_project(root: Path, also_portable: bool = False) -> None:
    """A project that is TensorRT through and through: each script builds or runs an engine."""
    (root / "Dockerfile").write_text(
        "FROM nvcr.io/nvidia/pytorch:24.03-py3\nCOPY . /app\nCMD python /app/infer.py\n"
    )
    for name in ("build_engine.py", "infer.py"):
        (root / name).write_text(
            "import tensorrt as trt\n\n\ndef main():\n    trt.Logger()\n\n\n"
            'if __name__ == "__main__":\n    main()\n'
        )
    if also_portable:
        (root / "train.py").write_text(
            'import torch\n\nif __name__ == "__main__":\n    torch.zeros(1).cuda()\n'
        )


def test_no_variant_for_a_project_whose_every_entry_point_needs_tensorrt(tmp_path):
    _trt_project(tmp_path)
    run = _fix(tmp_path, write=False)
    (variant,) = run.variants
    assert variant.text is None
    assert variant.reason == (
        "every entry point of the project (build_engine.py, infer.py) needs TensorRT, which "
        "has no ROCm build: a ROCm image would run none of them"
    ), variant.reason


def test_a_project_with_one_portable_entry_point_still_gets_its_variant(tmp_path):
    _trt_project(tmp_path, also_portable=True)
    (variant,) = _fix(tmp_path, write=False).variants
    assert variant.text is not None, variant.reason
    assert variant.text.startswith(
        "FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0\n"
    )


@pytest.mark.parametrize(
    "tag", ["24.01-py3", "24.05-py3", "23.10-py3", "24.03-py3@sha256:" + "a" * 64]
)
def test_a_pinned_ngc_release_never_becomes_latest(tmp_path, tag):
    """A variant keeps the pin of what it replaces: a pinned NGC release maps to the pinned
    `rocm/pytorch` tag with the same PyTorch, or there is no variant (never `latest`)."""
    image = f"nvcr.io/nvidia/pytorch:{tag}".replace("-py3@", "-py3@")
    (tmp_path / "Dockerfile").write_text(f"FROM {image}\nCOPY . /app\n")
    run = _fix(tmp_path, write=False)
    texts = [v.text for v in run.variants if v.text is not None]
    assert all("latest" not in text for text in texts), texts
    if tag.startswith("24.03"):
        assert texts and "pytorch_release_2.3.0" in texts[0]
    else:
        assert not texts
        (finding,) = [f for f in run.scan.findings if f.rule == "ROC861"]
        assert "no automatic fix: this NGC release is pinned" in finding.message
