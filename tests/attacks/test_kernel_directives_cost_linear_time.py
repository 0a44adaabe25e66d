"""Attack class: a kernel source shaped to make the preprocessor reading or hipify's table
matching run away (an ``#if`` condition continued over a million lines, an ``#include`` of a
CUDA-looking header megabytes long) is read in time linear in its size: the file is scanned
and its findings reported, never given up on the per-file budget, and nothing from the
header's text reaches the output as a control sequence."""

from __future__ import annotations

import json

from tests.attacks.conftest import migrate, write

_PTX = '__device__ void f() { asm volatile("mov.u32 %0, %%laneid;" : "=r"(x)); }\n'


def _scan(root):
    # the per-file budget raised: on a loaded machine a linear read of 1.5M lines can still
    # take a minute; what is guaranteed is that it finishes, not a wall-clock figure
    (root / "pyproject.toml").write_text("[tool.migrate]\nfile-timeout = 360\n")
    result = migrate("scan", "--no-cache", "--format", "json", root, cwd=root, timeout=400)
    data = json.loads(result.stdout)
    return result, data


def test_a_condition_continued_over_a_million_lines_is_read_once(tmp_path):
    # ``and`` sends the condition to the alternative-token reader, which joins continuations
    write(
        tmp_path,
        "k.cu",
        "#if defined(X) and \\\n" + "\\\n" * 1_500_000 + "\n" + _PTX + "#endif\n",
    )
    result, data = _scan(tmp_path)
    assert data["files"]["failed"] == []
    assert [(f["path"], f["rule"]) for f in data["findings"]] == [("k.cu", "ROC310")]
    assert result.returncode == 1


def test_a_megabyte_include_name_is_not_matched_against_hipify_tables(tmp_path):
    header = "cuda/" + "/a" * 1_000_000 + "\x1b[31m\u202e"
    write(tmp_path, "k.cu", f"#include <{header}>\n{_PTX}")
    result, data = _scan(tmp_path)
    assert data["files"]["failed"] == []
    assert [(f["path"], f["rule"]) for f in data["findings"]] == [("k.cu", "ROC310")]
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
