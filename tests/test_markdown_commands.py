"""Install commands written in Markdown documentation (what users copy into a terminal) are read
by the shell rules, with findings at the real line and column of the Markdown file and no fix
inside it; blocks for Windows, Python snippets, prose and changelogs are not read as commands."""

from __future__ import annotations

import json
from pathlib import Path

from migrator.engine.embedded import DOC_STEP
from migrator.files.discovery import file_kind
from migrator.syntax.markdown import shell_blocks
from tests.attacks.conftest import migrate, write

README = """\
# Demo

## Install

```bash
pip install -r requirements.txt
conda install pytorch torchvision torchaudio pytorch-cuda=11.7 -c pytorch -c nvidia
```

Or from the nightly index:

```
$ pip install torch \\
    --index-url https://download.pytorch.org/whl/cu121
Successfully installed torch
```

On an AMD GPU:

```bash
pip install torch --index-url https://download.pytorch.org/whl/rocm6.2
```

```python
# pip install flash-attn
import torch
```

The wheel index is `pip install flash-attn`, as a sentence.

### Windows

```bash
pip install torch --index-url https://download.pytorch.org/whl/cu118
```

```powershell
pip install flash-attn
```

## Extensions

- Fused kernels:
  ```sh
  pip install flash-attn --no-build-isolation
  ```
"""

CHANGELOG = """\
# Changes

```bash
pip install flash-attn
```
"""


def _findings(root: Path) -> list[dict[str, object]]:
    result = migrate("scan", ".", "--output-format", "json", "--no-cache", cwd=root)
    assert result.returncode == 1, result.stderr
    return list(json.loads(result.stdout)["findings"])


def test_install_commands_in_a_readme_are_found_at_their_own_lines(tmp_path: Path) -> None:
    for name, text in (("README.md", README), ("CHANGELOG.md", CHANGELOG), ("main.py", "")):
        write(tmp_path, name, text)
    found = {(f["path"], f["line"], f["column"], f["rule"]): f for f in _findings(tmp_path)}
    assert sorted(found) == [
        ("README.md", 7, 75, "ROC817"),  # conda's nvidia channel
        ("README.md", 14, 17, "ROC865"),  # the cu121 index, on the continuation line
        ("README.md", 45, 15, "ROC867"),  # flash-attn, in a block indented in a list
    ]
    for finding in found.values():
        assert finding["fix"] is None
    assert DOC_STEP in str(found[("README.md", 14, 17, "ROC865")]["message"])


def test_fix_leaves_the_documentation_alone(tmp_path: Path) -> None:
    write(tmp_path, "README.md", README)
    migrate("fix", ".", "--unsafe-fixes", cwd=tmp_path)
    assert (tmp_path / "README.md").read_text() == README


def test_documentation_pages_are_a_file_kind_and_other_markdown_is_not() -> None:
    for name in ("README.md", "pkg/README.md", "INSTALL.md", "PRETRAIN.md", "docs/cn/setup.md"):
        assert file_kind(name) == "markdown", name
    for name in ("CHANGELOG.md", "CONTRIBUTING.md", "LICENSE.md", "pkg/notes.md"):
        assert file_kind(name) is None, name
    assert file_kind("third_party/cutlass/README.md") is None  # vendored


def test_shell_blocks_keep_the_offset_of_every_character() -> None:
    blocks = list(shell_blocks(README))
    assert [value.split()[2] for value, _ in blocks] == ["-r", "torch", "torch", "flash-attn"]
    for value, offsets in blocks:
        assert len(offsets) == len(value) + 1
        for index, char in enumerate(value):
            assert char == "\n" or README[offsets[index]] == char
    # the command's output in a prompted block is left out, its line kept empty
    assert blocks[1][0].splitlines()[2] == ""


def test_unlabelled_prose_and_other_languages_are_not_commands() -> None:
    text = "```\nSee the notes below.\npip install x\n```\n\n```yaml\nrun: pip install y\n```\n"
    assert list(shell_blocks(text)) == []
    assert [v for v, _ in shell_blocks("```\nCUDA_HOME=/x pip install z\n```\n")] == [
        "CUDA_HOME=/x pip install z\n"
    ]


def test_one_command_in_several_pages_is_one_problem(tmp_path: Path) -> None:
    block = "```bash\npip install flash-attn --no-build-isolation\n```\n"
    write(tmp_path, "README.md", f"# Demo\n\n{block}")
    write(tmp_path, "docs/cn/README.md", f"# 演示\n\n安装:\n\n{block}")
    (finding,) = _findings(tmp_path)
    assert (finding["path"], finding["line"], finding["rule"]) == ("README.md", 4, "ROC867")
    related = finding["related"]
    assert isinstance(related, list)
    assert [(site["path"], site["line"]) for site in related] == [("docs/cn/README.md", 6)]


def test_a_documents_nvidia_section_beside_its_rocm_section_is_the_other_platforms() -> None:
    text = (
        "## Install\n\n### NVIDIA CUDA Support\n\n```sh\npip install flash-attn\n```\n\n"
        "### AMD ROCm Support\n\n```sh\npip install -r requirements-rocm.txt\n```\n"
    )
    assert [value for value, _ in shell_blocks(text)] == ["pip install -r requirements-rocm.txt\n"]
    # without a ROCm section, a CUDA heading is the only instructions there are
    alone = text.split("### AMD", 1)[0]
    assert [value for value, _ in shell_blocks(alone)] == ["pip install flash-attn\n"]


def test_the_same_flag_on_different_command_lines_is_one_problem(tmp_path: Path) -> None:
    flag = "--enable_xformers_memory_efficient_attention"
    write(
        tmp_path,
        "README.md",
        f"# Train\n\n```bash\naccelerate launch train.py {flag}\n```\n\n"
        f"```bash\naccelerate launch train_sdxl.py --resolution=1024 {flag}\n```\n",
    )
    (finding,) = [f for f in _findings(tmp_path) if f["rule"] == "ROC413"]
    related = finding["related"]
    assert finding["line"] == 4 and isinstance(related, list)
    assert [site["line"] for site in related] == [8]


def test_a_block_introduced_for_cuda_users_in_a_document_that_speaks_of_rocm_is_skipped() -> None:
    text = (
        "### Build Docker\n\nFor CUDA users:\n\n```bash\ndocker run --gpus=all img\n```\n\n"
        "For AMD ROCm users:\n\n```bash\ndocker run --device /dev/kfd img-rocm\n```\n"
    )
    assert [value for value, _ in shell_blocks(text)] == ["docker run --device /dev/kfd img-rocm\n"]


def test_a_variable_read_and_set_in_the_install_steps_is_one_problem(tmp_path: Path) -> None:
    write(
        tmp_path,
        "README.md",
        "# Install\n\n```bash\necho $CUDA_HOME\n```\n\n```bash\nexport CUDA_HOME=/usr/local/cuda\n"
        "CUDA_VISIBLE_DEVICES=0 python demo.py\nCUDA_VISIBLE_DEVICES=1 python demo.py\n```\n",
    )
    counts = [
        (f["rule"], f["line"], len(f["related"]))  # type: ignore[arg-type]
        for f in _findings(tmp_path)
    ]
    assert sorted(counts) == [("ROC710", 9, 1), ("ROC712", 4, 1)], counts


def test_a_document_with_a_rocm_section_is_followed_there_by_rocm_users() -> None:
    text = (
        "# Lib\n\n## Installation\n\n```sh\npip install flash-attn\n```\n\n"
        "### AMD ROCm Support\n\n```sh\npip install torch --index-url https://x/whl/cu121\n```\n"
    )
    assert [value.split()[-1] for value, _ in shell_blocks(text)] == ["https://x/whl/cu121"]


def test_a_command_whose_comment_names_the_rocm_choice_leaves_the_pick_to_the_reader() -> None:
    text = (
        "```bash\npip install torch --index-url https://download.pytorch.org/whl/cu126"
        " # options: cpu/cu126/rocm6.4\npip install torchtune\n```\n"
    )
    ((value, offsets),) = shell_blocks(text)
    assert value == "\npip install torchtune\n" and len(offsets) == len(value) + 1
