"""Paths and configuration as pre-commit and code hosts see them: explicit file arguments from any
folder, [tool.migrate] exclude / per-file-ignores on them, repository-relative SARIF and GitHub
annotations, and the real pre-commit running this repository's hook."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

CUDA_CHECK = "import torch\nif torch.version.cuda:\n    pass\n"
LOCATION = re.compile(r"^\s*(\S+?):(\d+):(\d+) (ROC\d{3}) ", re.M)


def _project(tmp_path: Path) -> Path:
    """A git repository with a [tool.migrate] config, a flagged file in src/, a file whose rule
    is ignored per file, and an excluded folder."""
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "legacy").mkdir()
    (repo / "pyproject.toml").write_text(
        '[tool.migrate]\nexclude = ["legacy/*"]\n\n'
        '[tool.migrate.per-file-ignores]\n"src/pkg/quiet.py" = ["ROC101"]\n'
    )
    (repo / "src" / "pkg" / "loud.py").write_text(CUDA_CHECK)
    (repo / "src" / "pkg" / "quiet.py").write_text(CUDA_CHECK)
    (repo / "legacy" / "old.py").write_text(CUDA_CHECK)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "."], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=repo, check=True)
    return repo


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(tmp_path / "cache"))


def _migrate(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "migrator", *args], cwd=cwd, capture_output=True, text=True
    )


def _locations(output: str) -> set[tuple[str, int, int, str]]:
    return {(p, int(line), int(col), rule) for p, line, col, rule in LOCATION.findall(output)}


def test_file_arguments_from_a_subfolder_show_cwd_relative_paths_and_obey_config(tmp_path):
    repo = _project(tmp_path)
    from_root = _migrate(repo, "scan", "src/pkg/loud.py", "src/pkg/quiet.py", "legacy/old.py")
    assert from_root.returncode == 1, from_root.stderr
    assert _locations(from_root.stdout) == {("src/pkg/loud.py", 2, 4, "ROC101")}
    from_src = _migrate(repo / "src", "scan", "pkg/loud.py", "pkg/quiet.py", "../legacy/old.py")
    assert _locations(from_src.stdout) == {("pkg/loud.py", 2, 4, "ROC101")}
    only_ignored = _migrate(repo / "src" / "pkg", "scan", "quiet.py", "../../legacy/old.py")
    assert only_ignored.returncode == 0, only_ignored.stdout
    whole = _migrate(repo, "scan", ".")
    assert _locations(whole.stdout) == _locations(from_root.stdout)
    # A folder below the project root: the project's config still sees project-relative paths,
    # and the paths printed are relative to the current folder, as the shell and editors see them.
    folder = _migrate(repo, "scan", "src")
    assert _locations(folder.stdout) == {("src/pkg/loud.py", 2, 4, "ROC101")}
    assert _migrate(repo, "scan", "legacy").returncode == 0


def test_sarif_and_github_paths_are_repository_relative(tmp_path):
    repo = _project(tmp_path)
    sarif = json.loads(_migrate(repo, "scan", "src/", "--format", "sarif").stdout)
    run = sarif["runs"][0]
    uris = {
        location["physicalLocation"]["artifactLocation"]["uri"]
        for result in run["results"]
        for location in result["locations"]
    }
    assert uris and all(uri.startswith("src/pkg/") for uri in uris), uris
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    from_inside = _migrate(repo / "src", "scan", "pkg", "--format", "github").stdout
    assert "file=src/pkg/loud.py,line=2,col=4," in from_inside


def test_real_pre_commit_reports_what_scan_reports(tmp_path):
    repo = _project(tmp_path)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    # The hook repository: this checkout's package and hook file, committed to a fresh git
    # repository (works from a clone, an export or a working tree with uncommitted edits).
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("migrator", "rules"):
        shutil.copytree(ROOT / name, hooks / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, hooks / name)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "."], cwd=hooks, check=True)
    subprocess.run([*git, "add", "-A"], cwd=hooks, check=True)
    subprocess.run([*git, "commit", "-qm", "hooks"], cwd=hooks, check=True)
    hook = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "migrate", "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert hook.returncode == 1, hook.stdout + hook.stderr  # findings fail the hook
    assert "migrate (CUDA-only code that breaks on ROCm)" in hook.stdout
    scan = _migrate(repo, "scan", ".")
    assert (
        _locations(hook.stdout) == _locations(scan.stdout) == {("src/pkg/loud.py", 2, 4, "ROC101")}
    )


def _commit(repo: Path, message: str) -> None:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", message], cwd=repo, check=True)


def test_baseline_hides_known_findings_across_line_shifts_and_reports_the_new_one(tmp_path):
    repo = _project(tmp_path)
    written = _migrate(repo, "scan", ".", "--write-baseline", "baseline.json")
    assert written.returncode == 0, written.stderr
    assert len(json.loads((repo / "baseline.json").read_text())["findings"]) == 1
    loud = repo / "src" / "pkg" / "loud.py"
    # An unrelated edit shifts the known finding down three lines; a new finding is added.
    loud.write_text('"""Docs."""\n\nimport os\n' + CUDA_CHECK + "ok = torch.version.cuda is None\n")
    later = _migrate(repo, "scan", ".", "--baseline", "baseline.json")
    assert later.returncode == 1
    assert _locations(later.stdout) == {("src/pkg/loud.py", 7, 6, "ROC101")}
    assert _locations(_migrate(repo, "scan", ".").stdout) == {
        ("src/pkg/loud.py", 5, 4, "ROC101"),
        ("src/pkg/loud.py", 7, 6, "ROC101"),
    }
    broken = _migrate(repo, "scan", ".", "--baseline", "src/pkg/loud.py")
    assert broken.returncode == 2 and len(broken.stderr.strip().splitlines()) == 1


def test_new_since_exit_zero_and_fail_on(tmp_path):
    repo = _project(tmp_path)
    (repo / "src" / "pkg" / "loud.py").write_text(
        CUDA_CHECK + 'v = torch.version.cuda.split(".")\n'
    )
    (repo / "src" / "pkg" / "fresh.py").write_text(CUDA_CHECK)  # untracked: all lines are new
    new = _migrate(repo, "scan", ".", "--new-since", "HEAD")
    assert _locations(new.stdout) == {
        ("src/pkg/loud.py", 4, 5, "ROC102"),
        ("src/pkg/fresh.py", 2, 4, "ROC101"),
    }
    _commit(repo, "more")
    assert _migrate(repo, "scan", ".", "--new-since", "HEAD").returncode == 0
    assert _migrate(repo, "scan", ".", "--new-since", "no-such-ref").returncode == 2
    # a ref that is an option of git diff (`--output=FILE` writes a file) is refused
    written = tmp_path / "written"
    refused = _migrate(repo, "scan", ".", f"--new-since=--output={written}")
    assert refused.returncode == 2 and not written.exists()
    assert _migrate(repo, "scan", ".", "--exit-zero").returncode == 0
    (repo / "src" / "pkg" / "loud.py").write_text(
        "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"
    )
    (repo / "src" / "pkg" / "fresh.py").unlink()
    # an info finding is a hint: it never fails by default, only with --fail-on info
    hint_only = _migrate(repo, "scan", ".", "--select", "ROC520")
    assert hint_only.returncode == 0
    assert "Found 0 problems and 1 hint" in hint_only.stdout
    assert _migrate(repo, "scan", ".", "--select", "ROC520", "--fail-on", "info").returncode == 1


def test_sarif_rules_carry_help_and_results_carry_stable_fingerprints(tmp_path):
    repo = _project(tmp_path)

    def sarif() -> dict:
        return json.loads(_migrate(repo, "scan", ".", "--format", "sarif").stdout)["runs"][0]

    before = sarif()
    rule = next(r for r in before["tool"]["driver"]["rules"] if r["id"] == "ROC101")
    assert not rule["fullDescription"]["text"].startswith("#")
    assert rule["fullDescription"]["text"].startswith("Flags truth tests of `torch.version.cuda`")
    assert rule["helpUri"].endswith("/rules/ROC101.md")
    assert "## Why it breaks on ROCm" in rule["help"]["markdown"]
    loud = repo / "src" / "pkg" / "loud.py"
    loud.write_text("import os\n\n" + loud.read_text())
    after = sarif()
    [old], [new] = before["results"], after["results"]
    assert new["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    assert old["partialFingerprints"] == new["partialFingerprints"]


def _action_scan(repo: Path, tmp_path: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    """Run action.yml's scan step as GitHub runs it: its bash script with the inputs as env."""
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "scan")
    defaults = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    values = {**defaults, **inputs}
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(tmp_path / "github_output"),
        **{
            f"INPUT_{name.upper().replace('-', '_')}": values[name]
            for name in (
                "paths",
                "format",
                "sarif-file",
                "baseline",
                "new-since",
                "fail-on",
                "args",
            )
        },
    }
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True
    )


def test_the_github_action_scan_step(tmp_path):
    repo = _project(tmp_path)
    annotations = _action_scan(repo, tmp_path)
    assert annotations.returncode == 1
    assert annotations.stdout.startswith("::error file=src/pkg/loud.py,line=2,col=4,")
    sarif = _action_scan(repo, tmp_path, format="sarif", **{"fail-on": "never"})
    assert sarif.returncode == 0, sarif.stderr
    log = json.loads((repo / "migrate.sarif").read_text())
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["ROC101"]
    assert "sarif-file=migrate.sarif" in (tmp_path / "github_output").read_text()
    selected = _action_scan(repo, tmp_path, paths="src legacy", args="--select ROC520")
    assert selected.returncode == 0 and selected.stdout == ""


def test_concise_quiet_statistics_and_output_format_alias(tmp_path):
    repo = _project(tmp_path)
    concise = _migrate(repo, "scan", ".", "--output-format", "concise")
    assert concise.stdout.splitlines() == [
        "src/pkg/loud.py:2:4: ROC101 [*] `torch.version.cuda` is None on ROCm builds: "
        "this GPU check is false on AMD GPUs",
        "Found 1 problem (1 fixable).",
    ]
    quiet = _migrate(repo, "scan", ".", "--format", "concise", "--quiet")
    assert quiet.stdout == concise.stdout.splitlines()[0] + "\n" and quiet.stderr == ""
    assert "Findings by category" not in _migrate(repo, "scan", ".", "-q").stdout
    (repo / "src" / "pkg" / "more.py").write_text(CUDA_CHECK * 2)
    stats = _migrate(repo, "scan", ".", "--statistics").stdout.splitlines()
    assert [line.split("\t")[:2] for line in stats] == [["     3", "ROC101"]]


def test_stdin_filename_scans_stdin_under_the_named_files_config(tmp_path):
    repo = _project(tmp_path)

    def scan_stdin(cwd: Path, name: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "migrator", "scan", "-", "--stdin-filename", name, "-q"]
            + ["--format", "concise"],
            cwd=cwd,
            input=CUDA_CHECK,
            capture_output=True,
            text=True,
        ).stdout

    assert scan_stdin(repo / "src", "pkg/new.py").startswith("pkg/new.py:2:4: ROC101")
    assert scan_stdin(repo / "src", "pkg/quiet.py") == ""  # per-file-ignores of that name
    assert scan_stdin(repo, "legacy/any.py") == ""  # excluded
    assert (repo / "src" / "pkg" / "new.py").exists() is False  # nothing written


@pytest.mark.parametrize("mode", ["notifications", "polling"])
def test_watch_scans_again_after_a_change(tmp_path, mode):
    import select
    import signal
    import time

    repo = _project(tmp_path)
    log = tmp_path / "watch.err"
    # A command started in the background by a shell without job control (as CI runners and
    # `cmd &` in scripts do) inherits SIGINT ignored, and Python then installs no Ctrl-C handler:
    # the watch would rightly keep running. Start it as a terminal would, with SIGINT default.
    process = subprocess.Popen(
        [sys.executable, "-m", "migrator", "scan", "src", "--watch", "--format", "concise", "-q"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env={**os.environ, "MIGRATE_WATCH_POLL": "1" if mode == "polling" else "0"},
    )

    def next_line(deadline: float) -> str:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.time()))
        assert ready, "no output in time"
        return process.stdout.readline()

    try:
        assert next_line(time.time() + 60).startswith("src/pkg/loud.py:2:4: ROC101")
        time.sleep(1)
        (repo / "src" / "pkg" / "loud.py").write_text("import os\n" + CUDA_CHECK)
        assert next_line(time.time() + 60).startswith("src/pkg/loud.py:3:4: ROC101")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    assert process.returncode == 0
    assert f"watching for changes ({mode};" in log.read_text()


AMP = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"


def test_config_found_from_a_subfolder_with_its_globs_rebased(tmp_path, run_cli):
    """`cd pkg && migrate scan .` reads the parent's [tool.migrate]; its exclude and
    per-file-ignores, written from the parent, cover the same files."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.migrate]\nexclude = ["pkg/skip/*"]\nmin-severity = "hygiene"\n'
        '[tool.migrate.per-file-ignores]\n"pkg/a.py" = ["ROC520"]\n'
    )
    for relative in ("pkg/a.py", "pkg/c.py", "pkg/skip/b.py"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(AMP)

    def located(*args: str, cwd: Path = tmp_path) -> set[str]:
        result = run_cli(
            "scan", "--no-cache", "--select", "ROC520", "--format", "json", *args, cwd=cwd
        )
        assert result.exit_code in (0, 1), result.output
        return {finding["path"] for finding in json.loads(result.output)["findings"]}

    assert located(str(tmp_path)) == {"pkg/c.py"}
    assert located(".", cwd=tmp_path / "pkg") == {"c.py"}
    assert located("skip", cwd=tmp_path / "pkg") == set()


@pytest.mark.parametrize(
    ("pattern", "prefix", "rebased"),
    [
        ("pkg/skip/*", "pkg", "/skip/*"),
        ("pkg/a.py", "pkg", "/a.py"),
        ("/pkg/a.py", "pkg", "/a.py"),
        ("*.ipynb", "pkg", "*.ipynb"),
        ("build/", "pkg", "build/"),
        ("**/gen/*.py", "pkg", "**/gen/*.py"),
        ("other/a.py", "pkg", None),
        ("*/skip/*", "pkg", "/skip/*"),
        ("/pkg/", "pkg/sub", "/**"),
        ("pkg/", "pkg/sub", "pkg/"),
        ("!pkg/keep.py", "pkg", "!/keep.py"),
        ("pkg/a.py", "", "pkg/a.py"),
    ],
)
def test_config_globs_rebase_onto_a_subfolder(pattern, prefix, rebased):
    from migrator.files.paths import rebase_glob

    assert rebase_glob(pattern, prefix) == rebased


def test_extend_select_and_extend_ignore_add_to_the_configuration(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\nselect = ["ROC101"]\n')
    (tmp_path / "a.py").write_text(AMP + CUDA_CHECK)

    def codes(*args: str) -> set[str]:
        result = run_cli("scan", "--no-cache", "--format", "json", str(tmp_path), *args)
        assert result.exit_code in (0, 1), result.output
        return {finding["rule"] for finding in json.loads(result.output)["findings"]}

    assert codes() == {"ROC101"}
    assert codes("--select", "ROC520") == {"ROC520"}  # --select replaces the configuration's
    assert codes("--extend-select", "ROC520") == {"ROC101", "ROC520"}  # a named hint shows
    assert codes("--extend-select", "ROC520", "--extend-ignore", "ROC101") == {"ROC520"}
    fixed = run_cli("fix", "--diff", "--extend-select", "ROC520", str(tmp_path))
    assert "torch.amp.autocast" in fixed.output


def test_the_github_action_uploads_its_sarif_log_even_when_findings_fail_the_step():
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    upload = next(s for s in action["runs"]["steps"] if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert "always()" in upload["if"] and "inputs.format == 'sarif'" in upload["if"]
    assert action["inputs"]["upload-sarif"]["default"] == "true"


def test_a_baseline_keeps_every_site_of_a_folded_problem(tmp_path, run_cli):
    """Fixing the site a folded finding shows leaves its other, known sites known; a new site
    of the problem makes it new."""
    source = tmp_path / "train.py"
    calls = [
        "    amp.initialize(m, o)\n",
        "    amp.scale_loss(l, o)\n",
        "    amp.master_params(o)\n",
    ]
    source.write_text("from apex import amp\n\n\ndef train():\n" + "".join(calls))

    def scan(*args: str) -> list[dict]:
        result = run_cli("scan", "--no-cache", "--select", "ROC502", "--format", "json", *args)
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.output)["findings"]

    [finding] = scan(str(tmp_path))
    assert len(finding["related"]) == 2
    baseline = tmp_path.parent / "baseline.json"
    # the same selection as the scans (with every rule, the calls join their import's finding)
    written = run_cli(
        "scan", str(tmp_path), "--select", "ROC502", "--write-baseline", str(baseline)
    )
    assert written.exit_code == 0
    entries = json.loads(baseline.read_text())["findings"]
    assert [entry["line"] for entry in entries if entry["rule"] == "ROC502"] == [5, 6, 7]
    source.write_text("from apex import amp\n\n\ndef train():\n" + "".join(calls[1:]))
    assert scan(str(tmp_path), "--baseline", str(baseline)) == []
    source.write_text(
        "from apex import amp\n\n\ndef train():\n" + "".join(calls[1:]) + "    amp.state_dict()\n"
    )
    assert len(scan(str(tmp_path), "--baseline", str(baseline))) == 1


def test_a_baseline_of_the_older_format_says_to_write_it_again(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(CUDA_CHECK)
    old = tmp_path.parent / "old.json"
    old.write_text('{"format": 1, "fingerprint": "migrate/v1", "findings": []}\n')
    result = run_cli("scan", str(tmp_path), "--baseline", str(old))
    assert result.exit_code == 2
    assert "write it again with --write-baseline" in result.output
