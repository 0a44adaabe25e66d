"""Dev containers (``.devcontainer/``) that get no GPU: their CUDA base image is an editing
environment, not a ROCm problem (issue #47, fresh round 3: a VS Code dev container built
``FROM nvidia/cuda`` for linting and tests was reported as an error). One that asks for a GPU
stays reported."""

from __future__ import annotations

from migrator.reach.dev_containers import DEV_CONTAINER, gpu_less_dev_containers
from tests.conftest import write

DOCKERFILE = "FROM nvidia/cuda:11.6.2-cudnn8-devel-ubuntu20.04\nRUN pip install pytest\n"
NO_GPU = """{
    // the dev environment of the project (comments and trailing commas: JSON with comments)
    "name": "Python 3",
    "build": {"dockerfile": "Dockerfile", "args": {"USERNAME": "user"},},
    "postCreateCommand": "pip install -e .[dev]",
}
"""
WITH_GPU = """{
    "name": "GPU",
    "build": {"dockerfile": "Dockerfile"},
    "runArgs": ["--gpus", "all"],
}
"""


def _rules(report: dict, path: str) -> list[tuple[str, str]]:
    return [(f["rule"], f.get("guard", "")) for f in report["findings"] if f["path"] == path]


def test_a_gpu_less_dev_container_is_guarded(tmp_path, scan_json):
    write(tmp_path, ".devcontainer/Dockerfile", DOCKERFILE)
    write(tmp_path, ".devcontainer/devcontainer.json", NO_GPU)
    assert gpu_less_dev_containers(tmp_path, [".devcontainer/Dockerfile"]) == {
        ".devcontainer/Dockerfile": DEV_CONTAINER
    }
    assert _rules(scan_json(str(tmp_path)), ".devcontainer/Dockerfile") == []
    shown = _rules(scan_json(str(tmp_path), "--show-guarded"), ".devcontainer/Dockerfile")
    assert shown and all(guard == DEV_CONTAINER for _, guard in shown)


def test_a_dev_container_that_asks_for_a_gpu_is_reported(tmp_path, scan_json):
    write(tmp_path, ".devcontainer/Dockerfile", DOCKERFILE)
    write(tmp_path, ".devcontainer/devcontainer.json", WITH_GPU)
    assert gpu_less_dev_containers(tmp_path, [".devcontainer/Dockerfile"]) == {}
    assert ("ROC860", "") in _rules(scan_json(str(tmp_path)), ".devcontainer/Dockerfile")


def test_a_gpu_feature_or_host_requirement_asks_for_a_gpu(tmp_path):
    write(tmp_path, ".devcontainer/Dockerfile", DOCKERFILE)
    for config in (
        '{"build": {"dockerfile": "Dockerfile"}, "hostRequirements": {"gpu": "optional"}}',
        '{"dockerFile": "Dockerfile", '
        '"features": {"ghcr.io/devcontainers/features/nvidia-cuda:1": {}}}',
    ):
        write(tmp_path, ".devcontainer/devcontainer.json", config)
        assert gpu_less_dev_containers(tmp_path, [".devcontainer/Dockerfile"]) == {}
