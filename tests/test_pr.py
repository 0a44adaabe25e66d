"""`migrate pr` end to end, with real git in temporary folders: a copy of fixtures/llm_app as the
repository, a local bare repository as the remote, and a stand-in ``gh`` that records its
arguments."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from migrator.pr import create, hosting, options
from migrator.pr import git as pr_git
from tests.conftest import FIXTURES, write

GH = """#!/bin/sh
printf '%s\\0' "$@" > "$GH_LOG"
echo https://github.com/example/llm_app/pull/1
"""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key, value in {
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Test Committer",
        "GIT_COMMITTER_EMAIL": "committer@example.com",
    }.items():
        monkeypatch.setenv(key, value)


#: Enough of fixtures/llm_app for several fix families (safe and unsafe) and manual findings.
SUBSET = (
    "requirements.txt",
    "Dockerfile",
    "llm_app/__init__.py",
    "llm_app/generate.py",
    "llm_app/gpu_utils.py",
)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "llm_app"
    for relative in SUBSET:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / "llm_app" / relative, root / relative)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial import")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main")
    return root


@pytest.fixture
def gh_log(tmp_path, monkeypatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "gh"
    script.write_text(GH, encoding="utf-8")
    script.chmod(0o755)
    log = tmp_path / "gh-args"
    monkeypatch.setenv("GH_LOG", str(log))
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    return log


def state(root: Path) -> tuple[str, str, str]:
    """(current branch, HEAD, porcelain status)."""
    return (
        git(root, "symbolic-ref", "--short", "HEAD"),
        git(root, "rev-parse", "HEAD"),
        git(root, "status", "--porcelain", "--untracked-files=normal"),
    )


def branches(root: Path) -> set[str]:
    return set(git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads").split())


def commits(root: Path, revisions: str) -> list[str]:
    out = git(root, "rev-list", "--reverse", revisions)
    return out.split() if out else []


def test_end_to_end_commits_per_family_push_and_open(repo, gh_log, run_cli):
    before = state(repo)
    result = run_cli("pr", str(repo), "--push", "origin", "--open")
    assert result.exit_code == 0, result.output
    assert state(repo) == before  # back on main, nothing left over

    new = commits(repo, "main..migrate/rocm")
    assert len(new) >= 2
    categories = []
    for sha in new:
        message = git(repo, "log", "-1", "--format=%B", sha)
        subject = message.splitlines()[0]
        assert subject.startswith("migrate: ") and subject.endswith(")")
        category = subject.split()[1]
        categories.append(category)
        assert "Rules:\n- ROC" in message
        listed = {
            line[2:].rsplit(" (", 1)[0]
            for line in message.split("Files:\n", 1)[1].splitlines()
            if line.startswith("- ")
        }
        touched = set(git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split())
        assert touched == listed
        fixed_rules = sorted(
            line[2:8]
            for line in message.split("Rules:\n", 1)[1].split("\n\nFiles:", 1)[0].splitlines()
        )
        assert f"Reproduce: migrate fix --select {','.join(fixed_rules)} ." in message
    assert len(set(categories)) == len(categories)

    assert git(repo, "ls-remote", "origin", "refs/heads/migrate/rocm").split()[0] == new[-1]

    body_path = repo / ".git" / "migrate" / "PR_BODY.md"
    assert str(body_path) in result.output
    body = body_path.read_text(encoding="utf-8")
    for heading in ("## Summary", "## Manual follow-ups", "## Verification", "## How to reproduce"):
        assert heading in body
    assert "Readiness score (static analysis, before → after this branch): **" in body
    assert "- [ ] [" in body and "#L" in body
    assert "not run (pass --verify)" in body
    assert new[0][:10] in body

    args = gh_log.read_bytes().decode().split("\0")[:-1]
    title = (repo / ".git" / "migrate" / "PR_TITLE.txt").read_text(encoding="utf-8").strip()
    assert args == [
        "pr",
        "create",
        "--title",
        title,
        "--body-file",
        str(body_path),
        "--base",
        "main",
        "--head",
        "migrate/rocm",
    ]
    assert "pull/1" in result.output


def test_second_run_updates_the_branch_without_duplicating(repo, run_cli):
    first = run_cli("pr", str(repo))
    assert first.exit_code == 0, first.output
    tip = git(repo, "rev-parse", "migrate/rocm")
    second = run_cli("pr", str(repo))
    assert second.exit_code == 0, second.output
    assert "updated branch migrate/rocm" in second.output
    assert "0 new commit(s)" in second.output
    assert git(repo, "rev-parse", "migrate/rocm") == tip
    body = (repo / ".git" / "migrate" / "PR_BODY.md").read_text(encoding="utf-8")
    assert tip[:10] in body  # the body still lists every commit on the branch


def test_second_run_with_more_fixes_builds_on_the_existing_branch(repo, run_cli):
    assert run_cli("pr", str(repo)).exit_code == 0
    tip = git(repo, "rev-parse", "migrate/rocm")
    result = run_cli("pr", str(repo), "--unsafe-fixes")
    assert result.exit_code == 0, result.output
    added = commits(repo, f"{tip}..migrate/rocm")
    assert added, "llm_app has unsafe fixes left after the safe pass"
    assert git(repo, "merge-base", tip, "migrate/rocm") == tip
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "main"


@pytest.mark.parametrize("dirt", ["modified", "untracked", "staged"])
def test_refuses_a_dirty_tree(repo, run_cli, dirt):
    if dirt == "modified":
        (repo / "llm_app" / "__init__.py").write_text("# changed\n", encoding="utf-8")
    elif dirt == "untracked":
        write(repo, "notes.txt", "todo\n")
    else:
        write(repo, "new.py", "x = 1\n")
        git(repo, "add", "new.py")
    before = state(repo)
    result = run_cli("pr", str(repo))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "uncommitted changes" in lines[0]
    assert state(repo) == before
    assert branches(repo) == {"main"}


def test_refuses_outside_a_git_repository(tmp_path, run_cli):
    plain = tmp_path / "plain"
    write(plain, "a.py", "import torch\n")
    result = run_cli("pr", str(plain))
    assert result.exit_code == 2
    assert result.output.strip() == f"migrate pr: not inside a git repository: {plain}"


def test_push_failure_rolls_everything_back(repo, run_cli):
    before = state(repo)
    result = run_cli("pr", str(repo), "--push", "no-such-remote")
    assert result.exit_code == 2
    assert "git push failed" in result.output
    assert state(repo) == before
    assert branches(repo) == {"main"}


def test_failure_on_an_existing_branch_restores_it(repo, run_cli):
    assert run_cli("pr", str(repo)).exit_code == 0
    tip = git(repo, "rev-parse", "migrate/rocm")
    before = state(repo)
    result = run_cli("pr", str(repo), "--unsafe-fixes", "--push", "no-such-remote")
    assert result.exit_code == 2
    assert git(repo, "rev-parse", "migrate/rocm") == tip
    assert state(repo) == before


def test_failure_in_the_middle_rolls_back(repo, run_cli, monkeypatch):
    calls = []
    real = create.apply_family

    def flaky(git_, scan_path, category, level, **options):
        calls.append(category)
        if len(calls) == 2:
            raise pr_git.PrError("simulated failure")
        return real(git_, scan_path, category, level, **options)

    monkeypatch.setattr(create, "apply_family", flaky)
    before = state(repo)
    result = run_cli("pr", str(repo))
    assert result.exit_code == 2
    assert "simulated failure" in result.output
    assert state(repo) == before
    assert branches(repo) == {"main"}


def test_open_without_gh_prints_the_command(repo, run_cli, monkeypatch):
    monkeypatch.setattr(hosting, "find_program", lambda name, avoid=(): None)
    result = run_cli("pr", str(repo), "--push", "origin", "--open")
    assert result.exit_code == 1
    assert "gh is not installed; open the pull request with:" in result.output
    assert "gh pr create --title" in result.output and "--head migrate/rocm" in result.output


def test_custom_branch_and_base(repo, run_cli):
    git(repo, "checkout", "-q", "-b", "develop")
    git(repo, "commit", "-q", "--allow-empty", "-m", "develop work")
    result = run_cli("pr", str(repo), "--branch", "rocm/port", "--base", "main")
    assert result.exit_code == 0, result.output
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "develop"
    assert git(repo, "merge-base", "main", "rocm/port") == git(repo, "rev-parse", "main")
    assert "git checkout main" in (repo / ".git" / "migrate" / "PR_BODY.md").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--base", "nope"), "base 'nope' is not a branch or commit"),
        (("--branch", "main"), "the branch and the base are both 'main'"),
        (("--branch", "bad..name"), "invalid branch name"),
    ],
)
def test_bad_branch_arguments(repo, run_cli, args, message):
    result = run_cli("pr", str(repo), *args)
    assert result.exit_code == 2
    assert message in result.output


def test_verify_without_a_smoke_command_says_unavailable(repo, run_cli):
    result = run_cli("pr", str(repo), "--verify")
    assert result.exit_code == 0, result.output
    body = (repo / ".git" / "migrate" / "PR_BODY.md").read_text(encoding="utf-8")
    assert "Verification: unavailable:" in body
    assert "smoke" in body


def test_verify_with_a_smoke_command_embeds_the_receipt(repo, run_cli):
    write(
        repo.parent,
        "smoke_ok.py",
        'import json\nprint(json.dumps({"tokens": [1, 2], "tokens_per_second": 7.5}))\n',
    )
    smoke = f"python {repo.parent / 'smoke_ok.py'}"
    result = run_cli("pr", str(repo), "--verify", "--smoke", smoke)
    assert result.exit_code == 0, result.output
    body = (repo / ".git" / "migrate" / "PR_BODY.md").read_text(encoding="utf-8")
    section = body.split("## Verification", 1)[1].split("## How to reproduce", 1)[0]
    assert "emulated ROCm" in section
    assert "no AMD GPU ran" in section
    assert "Tokens per second before: 7.5" in section
    assert (repo / ".git" / "migrate" / "verify-receipt.json").is_file()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/o/r.git", "https://github.com/o/r/blob/abc/"),
        ("git@github.com:o/r.git", "https://github.com/o/r/blob/abc/"),
        ("ssh://git@gitlab.com/g/sub/r.git", "https://gitlab.com/g/sub/r/-/blob/abc/"),
        ("/srv/git/r.git", ""),
        ("", ""),
    ],
)
def test_link_base(url, expected):
    assert pr_git.link_base(url, "abc") == expected


def test_gitlab_remotes_use_glab(repo):
    git(repo, "remote", "set-url", "origin", "git@gitlab.com:group/llm_app.git")
    result = options.PrResult(
        branch="migrate/rocm",
        base="main",
        created=True,
        commits=[],
        before=None,
        after=None,  # type: ignore[arg-type]
        title="T",
        body="B",
        body_path=repo / ".git" / "migrate" / "PR_BODY.md",
    )
    command = hosting.open_command(pr_git.Git(repo), result, None)
    assert command[:3] == ["glab", "mr", "create"]
    assert "--source-branch" in command and "--target-branch" in command


def test_a_project_in_a_subfolder_links_from_the_repository_root(tmp_path, run_cli):
    top = tmp_path / "mono"
    shutil.copytree(FIXTURES / "llm_app", top / "services" / "llm")
    write(top, "README.md", "monorepo\n")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "import")
    result = run_cli("pr", str(top / "services" / "llm"))
    assert result.exit_code == 0, result.output
    body = (top / ".git" / "migrate" / "PR_BODY.md").read_text(encoding="utf-8")
    assert "](services/llm/llm_app/" in body
    touched = git(top, "diff", "--name-only", "main", "migrate/rocm").split()
    assert touched and all(path.startswith("services/llm/") for path in touched)


def _receipt(*, device: str, build: str, emulated: bool, passed: bool) -> dict[str, object]:
    run = {
        "target": "gfx942",
        "tree": "migrated",
        "emulated": emulated,
        "real_device": device,
        "device_name": device,
        "torch_build": build,
        "ran_on_gpu": True,
        "passed": passed,
        "tokens_per_second": 10.0,
    }
    return {"project": "llm_app", "passed": passed, "runs": [run]}


AMD_SENTENCE = "running the migrated project on an AMD GPU"


@pytest.mark.parametrize(
    ("receipt", "claims_amd"),
    [
        (None, False),
        (_receipt(device="NVIDIA H200", build="2.7.0+cu126", emulated=True, passed=True), False),
        (_receipt(device="NVIDIA H200", build="2.7.0+cu126", emulated=False, passed=True), False),
        (
            _receipt(
                device="AMD Instinct MI300X", build="2.7.0+rocm6.3", emulated=False, passed=False
            ),
            False,
        ),
        (
            _receipt(
                device="AMD Instinct MI300X", build="2.7.0+rocm6.3", emulated=False, passed=True
            ),
            True,
        ),
    ],
    ids=["no-receipt", "emulated", "nvidia", "amd-failed", "amd-passed"],
)
def test_pr_body_claims_only_what_a_receipt_shows(receipt, claims_amd):
    from migrator.pr.body import render_body
    from migrator.reporting.cli import make_report
    from migrator.reporting.readiness import verification_from_dict

    project = make_report([str(FIXTURES / "llm_app")], use_cache=False).projects[0]
    verification = None if receipt is None else verification_from_dict(receipt, "r.json")
    title, body = render_body(
        options=options.PrOptions(path=FIXTURES / "llm_app"),
        project_name="llm_app",
        scan_prefix="",
        base="main",
        commits=[],
        before=project,
        after=project,
        verification=verification,
        verification_note="not run (pass --verify)",
        links="",
    )
    summary = body.split("## Manual follow-ups", 1)[0]
    assert (AMD_SENTENCE in body) is claims_amd
    assert "run on AMD GPUs" not in body and "AMD" not in title
    score = project.score
    assert f"**{score} → {score}** / 100" in summary and ": unchanged." in summary
    assert "Decided by:" in summary
    # The footer states the formula the score follows (the verdict's band), not an older one.
    assert "score = low + (high - low) x 0.5 ^ (penalty / 12), in the verdict's band" in body
    if verification is None:
        assert "not run (pass --verify); nothing was run" in summary
    else:
        assert f"**{verification.result_label}** — {verification.headline}" in summary
        if not verification.amd_hardware:
            assert "no AMD GPU ran" in summary


def test_nothing_to_apply_creates_no_branch(tmp_path, run_cli):
    root = tmp_path / "clean"
    root.mkdir()
    (root / "app.py").write_text("import pynvml\npynvml.nvmlInit()\n")  # manual work, no fix
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    before = state(root)
    result = run_cli("pr", str(root))
    assert result.exit_code == 0, result.output
    assert "nothing to apply" in result.output and "no branch was created" in result.output
    assert branches(root) == {"main"}
    assert state(root) == before


@pytest.mark.parametrize("name", ["@", "HEAD", "-x", "a@{1}", "bad..name"])
def test_branch_names_git_reads_as_something_else_are_refused(repo, run_cli, name):
    before = state(repo)
    result = run_cli("pr", str(repo), "--branch", name)
    assert result.exit_code == 2
    assert "invalid branch name" in result.output
    assert branches(repo) == {"main"} and state(repo) == before


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


@pytest.mark.parametrize(
    "name", ["refs/heads/main", "refs/heads/rocm", "v1.0", "tags/v1.0", "origin/main", "heads/main"]
)
def test_branch_names_that_make_an_ambiguous_ref_are_refused(repo, run_cli, name):
    """A full ref name, a tag's name, a remote-tracking branch's name or a name that reads as an
    existing ref: the branch would be a second ref git resolves the same name to."""
    git(repo, "tag", "v1.0")
    before, refs_before = state(repo), refs(repo)
    assert "refs/remotes/origin/main" in refs_before
    result = run_cli("pr", str(repo), "--branch", name)
    assert result.exit_code == 2, result.output
    assert "invalid branch name" in result.output and len(result.output.splitlines()) == 1
    assert refs(repo) == refs_before and state(repo) == before


def test_a_transient_index_lock_is_waited_for(repo, run_cli):
    """An editor's `git status` holds .git/index.lock for a moment: `pr` tries again."""
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    import threading

    release = threading.Timer(0.5, lock.unlink)
    release.start()
    try:
        result = run_cli("pr", str(repo))
    finally:
        release.join()
    assert result.exit_code == 0, result.output
    assert "migrate/rocm" in branches(repo)


def test_a_lock_that_stays_says_what_state_it_left_and_how_to_restore_it(
    repo, run_cli, monkeypatch
):
    monkeypatch.setattr(pr_git, "LOCK_WAITS", (0.01, 0.01))
    # the lock appears right after `pr` switched branches (another git process), and stays
    run = pr_git.Git.run

    def then_locked(self, *args, **kwargs):
        out = run(self, *args, **kwargs)
        if args[:3] == ("checkout", "-q", "-b"):
            (repo / ".git" / "index.lock").touch()
        return out

    monkeypatch.setattr(pr_git.Git, "run", then_locked)
    result = run_cli("pr", str(repo))
    assert result.exit_code == 2
    line = result.output.strip()
    assert len(line.splitlines()) == 1
    assert "index.lock" in line and "the repository could not be restored:" in line
    assert "branch migrate/rocm created" in line
    restore = line.split("To restore it: ", 1)[1].rstrip(".")
    (repo / ".git" / "index.lock").unlink()
    subprocess.run(restore, shell=True, cwd=repo, check=True, capture_output=True)
    assert state(repo)[0] == "main" and state(repo)[2] == ""
    assert branches(repo) == {"main"}


def test_a_sparse_checkout_is_refused_with_the_reason(repo, run_cli):
    git(repo, "sparse-checkout", "set", "--no-cone", "/llm_app/")
    assert not (repo / "requirements.txt").exists()
    result = run_cli("pr", str(repo))
    assert result.exit_code == 2
    assert "sparse checkout" in result.output and "git sparse-checkout disable" in result.output
    assert branches(repo) == {"main"}


def _tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


@pytest.mark.parametrize("options", [[], ["--unsafe-fixes"], ["--select", "ALL"]])
def test_pr_changes_the_same_files_with_the_same_text_as_fix(tmp_path, run_cli, options):
    """`pr` is `fix` on a branch: on the whole fixture, with the same options, the branch's
    tree is the tree `fix` leaves (hygiene rewrites included only where `fix` makes them)."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "llm_app", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial import")
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURES / "llm_app", copy)
    fixed = run_cli("fix", *options, str(copy))
    assert fixed.exit_code in (0, 1), fixed.output
    result = run_cli("pr", *options, str(repo))
    assert result.exit_code == 0, result.output
    git(repo, "checkout", "-q", "migrate/rocm")
    branch, expected = _tree(repo), _tree(copy)
    changed = {name for name in expected if expected[name] != _tree(FIXTURES / "llm_app")[name]}
    assert changed, "fix changes nothing on the fixture"
    assert set(branch) == set(expected)
    assert [name for name in expected if branch[name] != expected[name]] == []


def test_pr_body_names_the_package_the_project_and_the_effort(repo, run_cli):
    (repo / "pyproject.toml").write_text('[project]\nname = "llm-service"\n', encoding="utf-8")
    git(repo, "add", "pyproject.toml")
    git(repo, "commit", "-q", "-m", "metadata")
    result = run_cli("pr", str(repo))
    assert result.exit_code == 0, result.output
    title = (repo / ".git" / "migrate" / "PR_TITLE.txt").read_text(encoding="utf-8")
    body = (repo / ".git" / "migrate" / "PR_BODY.md").read_text(encoding="utf-8")
    assert title.startswith("ROCm fixes for llm-service:")
    assert "**llm-service**" in body
    assert "pip install migrate-rocm==" in body and "pip install migrate==" not in body
    assert "about 0 h" not in body and "0.0 h" not in body
    assert "withheld (`migrate fix` leaves them as written)" in body


def test_effort_is_never_zero_hours_beside_work():
    from migrator.pr.body import effort_phrase
    from migrator.reporting.cli import make_report
    from migrator.reporting.readiness.assembly import Effort, effort_of

    project = make_report([str(FIXTURES / "llm_app")], use_cache=False).projects[0]
    assert project.reachable_work and effort_phrase(project).startswith("about ")
    for item in project.reachable_work:  # every item covered by an AMD path: no hours counted
        item.covered_by = "the project's ROCm image"
    project.effort = effort_of(project.work)
    assert project.effort.total_hours == 0 and isinstance(project.effort, Effort)
    assert effort_phrase(project) == (
        "no hours estimated: each is covered by the project's own AMD path or is hygiene"
    )
