"""The private copy hipify and the compile check read: a kernel source that is a link to
another file of the project (one file built under two names, a ``.cu`` linked to the ``.cpp``
of a CPU build) is copied with the bytes it links to; a link out of the project never is
(issue #48, fresh round 4: the unit failed with "no such file" for its own source)."""

from __future__ import annotations

from migrator.kernels.hipify import copy_sources
from tests.conftest import write


def test_a_link_to_a_project_file_is_copied_with_its_bytes(tmp_path):
    root = tmp_path / "project"
    write(root, "src/entry.cpp", "int run() { return 0; }\n")
    (root / "src/entry.cu").symlink_to("entry.cpp")
    out = tmp_path / "copy"
    problems = copy_sources(root, ["src/entry.cu", "src/entry.cpp"], out)
    assert problems == []
    assert (out / "src/entry.cu").read_text() == "int run() { return 0; }\n"
    assert not (out / "src/entry.cu").is_symlink()


def test_a_link_out_of_the_project_is_not_followed(tmp_path):
    root = tmp_path / "project"
    write(tmp_path, "secret.h", "int key = 1;\n")
    write(root, "src/entry.cpp", "int run() { return 0; }\n")
    (root / "src/outside.cuh").symlink_to(tmp_path / "secret.h")
    out = tmp_path / "copy"
    problems = copy_sources(root, ["src/outside.cuh"], out)
    assert problems and "not copied" in problems[0]
    assert not (out / "src/outside.cuh").exists()
