"""The places a project states its torch floor (CI files, tox, nox, setup.py, package
``__init__``) are read as data, inside the project, once: a YAML alias bomb, a link out of the
project and a named pipe cost nothing, and no code of the project runs."""

from __future__ import annotations

import os

from migrator.knowledge.stated_versions import stated_floors
from migrator.knowledge.versions import Version
from tests.attacks.conftest import CUDA_CHECK, migrate, write

CI = "jobs:\n  t:\n    strategy:\n      matrix:\n        torch: ['1.13']\n"


def test_an_alias_bomb_in_a_ci_file_is_read_once(tmp_path):
    lines = ["a: &a [torch, torch, torch, torch, torch, torch, torch, torch, torch]"]
    for index in range(1, 12):
        previous, name = chr(ord("a") + index - 1), chr(ord("a") + index)
        lines.append(f"{name}: &{name} [*{previous}, *{previous}, *{previous}, *{previous}]")
    lines.append("jobs:\n  t:\n    strategy:\n      matrix:\n        torch: ['2.0', *l]")
    write(tmp_path, ".github/workflows/bomb.yml", "\n".join(lines) + "\n")
    found = stated_floors(tmp_path)["torch"]
    assert [floor.version for floor in found] == [Version("2.0")]


def test_a_ci_file_or_tox_ini_linked_from_outside_is_not_read(tmp_path):
    outside_ci = write(tmp_path, "outside/ci.yml", CI)
    outside_tox = write(tmp_path, "outside/tox.ini", "[testenv]\ndeps = torch==1.8.0\n")
    project = tmp_path / "p"
    (project / ".github" / "workflows").mkdir(parents=True)
    (project / ".github" / "workflows" / "ci.yml").symlink_to(outside_ci)
    (project / "tox.ini").symlink_to(outside_tox)
    (project / "pkg").symlink_to(tmp_path / "outside", target_is_directory=True)
    write(tmp_path, "outside/__init__.py", 'import torch\nassert torch.__version__ >= "1.5"\n')
    assert stated_floors(project) == {}


def test_named_pipes_where_the_floors_are_read_do_not_block(tmp_path):
    project = tmp_path / "p"
    (project / ".github" / "workflows").mkdir(parents=True)
    for relative in (".github/workflows/ci.yml", "tox.ini", "noxfile.py", "setup.py"):
        os.mkfifo(project / relative)
    write(project, "a.py", CUDA_CHECK)
    done = migrate("fix", "--diff", project, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert "torch.version.hip" in done.stdout


def test_a_setup_py_that_would_write_a_canary_is_only_read(tmp_path):
    canary = tmp_path / "canary"
    project = tmp_path / "p"
    write(
        project,
        "setup.py",
        f"open({str(canary)!r}, 'w').write('ran')\n"
        "import torch\nassert torch.__version__ >= '1.8'\n",
    )
    write(project, "a.py", CUDA_CHECK)
    assert stated_floors(project)["torch"][0].where == "setup.py:3 assert torch>=1.8"
    done = migrate("fix", "--diff", project, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert not canary.exists()
