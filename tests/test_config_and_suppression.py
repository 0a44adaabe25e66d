"""[tool.migrate] settings, the command line winning over them, and suppression comments."""

from __future__ import annotations

from tests.conftest import write

AMP_TWICE = (
    "import torch\n"
    "a = torch.cuda.amp.GradScaler()\n"
    "b = torch.cuda.amp.GradScaler()  # migrate: ignore\n"
    "c = torch.cuda.amp.GradScaler()  # migrate: ignore[ROC520]\n"
    "d = torch.cuda.amp.GradScaler()  # migrate: ignore[ROC101]\n"
)


def _lines(report):
    return [(f["path"], f["line"]) for f in report["findings"]]


def test_suppression_comments(tmp_path, scan_json, run_cli):
    write(tmp_path, "a.py", AMP_TWICE)
    report = scan_json("--select", "ROC520", str(tmp_path))
    assert _lines(report) == [("a.py", 2), ("a.py", 5)]
    result = run_cli("scan", "--select", "ROC520", "--show-unused-suppressions", str(tmp_path))
    assert "a.py:5: unused suppression `# migrate: ignore[ROC101]`" in result.output


def test_config_ignore_and_cli_override(tmp_path, scan_json):
    write(tmp_path, "pyproject.toml", '[tool.migrate]\nignore = ["cuda-amp"]\n')
    write(tmp_path, "a.py", AMP_TWICE)
    assert scan_json(str(tmp_path))["findings"] == []
    assert _lines(scan_json("--ignore", "ROC1", "--select", "ROC520", str(tmp_path))) == [
        ("a.py", 2),
        ("a.py", 5),
    ]


def test_per_file_ignores_and_exclude(tmp_path, scan_json):
    write(
        tmp_path,
        "pyproject.toml",
        '[tool.migrate]\nselect = ["ROC520"]\nexclude = ["vendor"]\n'
        '[tool.migrate.per-file-ignores]\n"tests/*" = ["ROC520"]\n',
    )
    write(tmp_path, "a.py", AMP_TWICE)
    write(tmp_path, "tests/t.py", AMP_TWICE)
    write(tmp_path, "vendor/v.py", AMP_TWICE)
    assert {path for path, _ in _lines(scan_json(str(tmp_path)))} == {"a.py"}
    assert {path for path, _ in _lines(scan_json("--exclude", "a.py", str(tmp_path)))} == set()


def test_min_severity_threshold_sets_exit_code(tmp_path, run_cli):
    write(tmp_path, "a.py", AMP_TWICE)  # ROC520 is info: a hint, failing only with --fail-on info
    assert run_cli("scan", "--select", "ROC520", str(tmp_path)).exit_code == 0
    assert run_cli("scan", "--select", "ROC520", "--fail-on", "info", str(tmp_path)).exit_code == 1
    assert (
        run_cli("scan", "--select", "ROC520", "--min-severity", "warning", str(tmp_path)).exit_code
        == 0
    )


def test_gitignore_and_default_excluded_dirs(tmp_path, scan_json):
    write(tmp_path, ".gitignore", "generated/\n*.tmp.py\n")
    write(tmp_path, "generated/g.py", AMP_TWICE)
    write(tmp_path, "x.tmp.py", AMP_TWICE)
    write(tmp_path, ".venv/lib/site-packages/s.py", AMP_TWICE)
    write(tmp_path, "env2/pyvenv.cfg", "")
    write(tmp_path, "env2/lib/e.py", AMP_TWICE)
    write(tmp_path, "build/b.py", AMP_TWICE)
    write(tmp_path, "src/kept.py", AMP_TWICE)
    write(tmp_path, "src/.gitignore", "local_*.py\n")
    write(tmp_path, "src/local_x.py", AMP_TWICE)
    paths = {path for path, _ in _lines(scan_json("--select", "ROC520", str(tmp_path)))}
    assert paths == {"src/kept.py"}


GITIGNORE = """\
# comment
*.tmp.py
!keep.tmp.py
/top_only.py
out/
docs/**/gen_*.py
[ab]_[0-9].py
\\#hash.py
logs
!logs/keep.py
"""


def test_gitignore_negations_anchors_and_directories(tmp_path, scan_json):
    for name in (
        "x.tmp.py",
        "keep.tmp.py",
        "top_only.py",
        "pkg/top_only.py",
        "out/o.py",
        "pkg/out/o.py",
        "docs/a/b/gen_x.py",
        "docs/gen_y.py",
        "a_1.py",
        "c_1.py",
        "#hash.py",
        "logs/keep.py",
        "logs/drop.py",
        "pkg/plain.py",
    ):
        write(tmp_path, name, AMP_TWICE)
    write(tmp_path, ".gitignore", GITIGNORE)
    paths = {path for path, _ in _lines(scan_json("--select", "ROC520", str(tmp_path)))}
    assert paths == {"keep.tmp.py", "pkg/top_only.py", "c_1.py", "pkg/plain.py"}


def test_gitignore_answers_equal_the_specs_own(tmp_path):
    """The gitignore matcher (no backtracking expressions) answers every path as pathspec's
    GitIgnoreSpec does, negations, anchors and folder patterns included."""
    import itertools

    import pathspec

    from migrator.files.gitignore import GitIgnore

    spec = pathspec.GitIgnoreSpec.from_lines(GITIGNORE.splitlines())
    ignore = GitIgnore.from_lines(GITIGNORE.splitlines())
    parts = [
        "pkg",
        "out",
        "docs",
        "logs",
        "a",
        "x.tmp.py",
        "keep.tmp.py",
        "top_only.py",
        "gen_1.py",
        "a_1.py",
        "#hash.py",
        "keep.py",
        "plain.py",
    ]
    paths = [
        "/".join(combo) for size in (1, 2, 3) for combo in itertools.product(parts, repeat=size)
    ]
    paths += [path + "/" for path in paths]
    answers = [ignore.match_file(path) for path in paths]
    assert answers == [spec.match_file(path) for path in paths]
    assert any(answers) and not all(answers)


def test_globs_read_as_gitignore_and_ruff_read_them(tmp_path, scan_json):
    """``*`` never crosses ``/`` in ``--exclude`` and ``per-file-ignores`` (fnmatch's did:
    ``a/*.py`` also dropped ``a/b/x.py``); ``**`` does; a bare name matches at any depth."""
    for relative in ("a/x.py", "a/b/x.py", "c/d/e.py"):
        write(tmp_path, relative, AMP_TWICE)
    write(
        tmp_path,
        "pyproject.toml",
        '[tool.migrate]\nselect = ["ROC520"]\n[tool.migrate.per-file-ignores]\n"c/**/*.py" = ["ROC520"]\n',
    )
    kept = {path for path, _ in _lines(scan_json("--exclude", "a/*.py", str(tmp_path)))}
    assert kept == {"a/b/x.py"}
    kept = {path for path, _ in _lines(scan_json("--exclude", "b", str(tmp_path)))}
    assert kept == {"a/x.py"}


def test_select_all_includes_hygiene(tmp_path, scan_json):
    write(tmp_path, "a.py", AMP_TWICE)  # ROC520 is hygiene: off by default
    rules = {finding["rule"] for finding in scan_json("--select", "ALL", str(tmp_path))["findings"]}
    assert "ROC520" in rules
