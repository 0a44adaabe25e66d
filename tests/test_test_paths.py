"""The one decision of what a test or benchmark path is (migrator/files/paths.py), shared by rules,
the CUDA-only analysis and the readiness layout."""

from __future__ import annotations

import pytest

from migrator.files.paths import is_benchmark_path, is_test_path
from migrator.reporting.readiness.roles import path_role


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_model.py",
        "pkg/unit_tests/helpers.py",
        "src/Testing/fixtures.py",
        "pkg/model_test.py",
        "conftest.py",
        "pkg\\test\\util.py",
    ],
)
def test_test_paths(path: str) -> None:
    assert is_test_path(path)
    assert path_role(path) == "test"


@pytest.mark.parametrize(
    "path", ["pkg/testament.py", "pkg/attest/util.py", "pkg/contest_test.txt", "latest/model.py"]
)
def test_shipped_paths(path: str) -> None:
    assert not is_test_path(path)


def test_benchmark_paths() -> None:
    assert is_benchmark_path("benchmarks/run.py")
    assert is_benchmark_path("pkg/perf/kernels.py")
    assert is_benchmark_path("bench_attention.py")
    assert not is_benchmark_path("pkg/workbench.py")
    assert path_role("pkg/benchmark_moe.py") == "benchmark"
