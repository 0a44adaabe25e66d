"""Container recipes held in Python strings and written out by the project's code (a Dockerfile
template, a conda environment) are read by the container and dependency rules, with findings on
the string's own lines and columns in the Python file, no fix inside the string, and the Python
file's suppression comments honoured. Strings that are not recipes (Python code, SQL, messages)
are not read as such."""

from __future__ import annotations

import json
from pathlib import Path

from migrator.engine.embedded import MANUAL_STEP, recipes
from tests.attacks.conftest import migrate, write

#: A deploy template in the shape such projects use: backslash-newline inside a non-raw string
#: (Python joins those lines), CUDA settings, a CUDA torch index.
TEMPLATES = '''\
"""Templates the deploy command fills and writes out."""

model_download = """import os
from huggingface_hub import snapshot_download
FROM = os.environ["FROM"]
"""

dockerfile = \\
        """FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04

ENV APP_ROOT=/var/app \\
    LANG=C.UTF-8

RUN pip install torch torchvision --index-url https://download.pytorch.org/whl/cu113 && \\
    pip install -r requirements.txt

WORKDIR /var/app
"""

RUNTIME = ("FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\\n"
           "RUN make\\n")

QUERY = """
SELECT tag
FROM images
"""

ENVIRONMENT = """name: serve
channels:
  - nvidia
dependencies:
  - pytorch-cuda=12.1
"""
'''


def _findings(root: Path) -> list[dict[str, object]]:
    result = migrate("scan", ".", "--output-format", "json", "--no-cache", cwd=root)
    assert result.returncode == 1, result.stderr
    return [f for f in json.loads(result.stdout)["findings"] if f["path"] == "deploy/templates.py"]


def test_a_dockerfile_template_is_read_at_its_own_lines_without_fixes(tmp_path: Path) -> None:
    write(tmp_path, "deploy/templates.py", TEMPLATES)
    found = {(f["rule"], f["line"], f["column"]) for f in _findings(tmp_path)}
    # the image at its place on line 9 (after the triple quote), the index on line 14: Python
    # joins the ENV lines (backslash-newline), the positions still map to the file's lines
    assert ("ROC860", 9, 17) in found
    assert ("ROC865", 14, 47) in found
    # adjacent literals with ``\n`` escapes: the image on its own line, a Dockerfile of its own
    assert ("ROC860", 20, 18) in found
    # the conda environment string (its CUDA channel)
    assert ("ROC814", 30, 5) in found
    # Python code and SQL in strings are no Dockerfile
    assert not any(line in (3, 4, 5, 23, 24, 25, 26) for _, line, _ in found)
    for finding in _findings(tmp_path):
        assert finding.get("fix") in (None, {}), finding
    assert any(MANUAL_STEP in str(f["message"]) for f in _findings(tmp_path))
    fixed = migrate("fix", ".", "--unsafe-fixes", cwd=tmp_path)
    assert fixed.returncode in (0, 1), fixed.stderr
    assert (tmp_path / "deploy/templates.py").read_text(encoding="utf-8") == TEMPLATES


def test_the_python_files_suppression_comments_hold_for_its_recipes(tmp_path: Path) -> None:
    source = 'RUNTIME = "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\\nRUN make\\n"'
    write(tmp_path, "deploy/templates.py", source + "\n")
    assert [f["rule"] for f in _findings(tmp_path)] == ["ROC860"]
    write(tmp_path, "deploy/templates.py", source + "  # migrate: ignore[ROC860]\n")
    result = migrate("scan", ".", "--output-format", "json", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "unused" not in result.stderr


def test_recipes_are_only_dockerfiles_and_conda_environments() -> None:
    kinds = [recipe.kind for recipe in recipes(TEMPLATES)]
    assert kinds == ["dockerfile", "dockerfile", "conda"]
    assert recipes('LOG = "FROM nvidia/cuda:12.1.1 is too old"\n') == []
    assert recipes("x = 1\n") == []
