"""What the documented install yields (issue 47, the classes of the fresh rounds and the labelled
sets): an exact torch pin from the default package index is the CUDA build on Linux, and vLLM
from the package index is a CUDA build, in a dependency file or in the README's install block.
Small projects shaped like the real ones (a diffusion model whose README's only step installs
``requirements.txt``; a TTS model whose README installs ``vllm==0.2.7``; a library with a
``vllm`` extra), scanned through the command line."""

from __future__ import annotations

from tests.conftest import write

README = """\
# A model

## Setup

```bash
git clone https://example.org/a-model.git
cd a-model
pip install -r requirements.txt
```

Optional, faster inference:

```bash
pip install --upgrade vllm==0.2.7 torch==2.1.2
```
"""


def _by_rule(report: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        out.setdefault(finding["rule"], []).append(finding)
    return out


def test_an_exact_torch_pin_names_the_rocm_index_of_that_release(tmp_path, scan_json):
    write(tmp_path, "README.md", README)
    write(tmp_path, "requirements.txt", "torch==2.3.1\ntorchvision==0.18.1\ndiffusers==0.11.1\n")
    found = _by_rule(scan_json(str(tmp_path)))
    (pin,) = found["ROC820"]
    assert (pin["path"], pin["line"], pin["severity"]) == ("requirements.txt", 1, "warning")
    assert "https://download.pytorch.org/whl/rocm6.0" in pin["message"]


def test_a_pyproject_extra_pin_and_its_release_index(tmp_path, scan_json):
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\ndependencies = ["einops"]\n'
        '[project.optional-dependencies]\ntorch = ["torch == 2.6.0", "torchvision"]\n',
    )
    (pin,) = _by_rule(scan_json(str(tmp_path)))["ROC820"]
    assert pin["line"] == 5 and "whl/rocm6.2.4" in pin["message"]


def test_a_file_that_chooses_its_wheel_index_or_a_range_is_left_alone(tmp_path, scan_json):
    write(
        tmp_path,
        "requirements.txt",
        "--extra-index-url https://download.pytorch.org/whl/rocm6.0\ntorch==2.3.1\n",
    )
    write(tmp_path, "sub/requirements.txt", "torch>=2.1\n")
    assert "ROC820" not in _by_rule(scan_json(str(tmp_path)))


def test_vllm_from_the_package_index_in_the_readme_and_as_an_extra(tmp_path, scan_json):
    write(tmp_path, "README.md", README)
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\n[project.optional-dependencies]\nvllm = ["vllm>=0.18"]\n',
    )
    found = _by_rule(scan_json(str(tmp_path)))
    (declared,) = found["ROC819"]
    assert (declared["path"], declared["line"]) == ("pyproject.toml", 4)
    readme = [f for f in found["ROC867"] if f["path"] == "README.md"]
    assert [f["line"] for f in readme] == [14]
    assert "vLLM's CUDA build" in readme[0]["message"] and "rocm/vllm" in readme[0]["message"]


def test_vllm_built_on_a_rocm_image_is_left_alone(tmp_path, scan_json):
    write(
        tmp_path,
        "Dockerfile",
        "FROM rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.4.0\n"
        "RUN pip install vllm==0.6.3\n",
    )
    assert "ROC867" not in _by_rule(scan_json(str(tmp_path)))
