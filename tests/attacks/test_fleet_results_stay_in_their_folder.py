"""Attack class: make ``migrate fleet`` write its results through a symlink planted where the
results folder (or a folder inside it) goes, beside a manifest the attacker ships."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.attacks.conftest import AMP, migrate, one_line_error, write


def _fleet(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A manifest of one repository, in a folder the attacker controls; an empty folder
    outside it that must stay empty."""
    shipped = tmp_path / "shipped"
    write(shipped, "repo/a.py", AMP)
    manifest = write(shipped, "fleet.txt", "repo\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    return shipped, manifest, outside


def _everything_under(folder: Path) -> list[str]:
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*"))


def test_a_results_folder_planted_as_a_symlink_is_refused_before_any_work(tmp_path):
    shipped, manifest, outside = _fleet(tmp_path)
    os.symlink(outside, shipped / "migrate-fleet-results")

    result = migrate("fleet", manifest, "--format", "json", timeout=300)

    assert result.returncode == 2, result.stderr
    assert one_line_error(result.stderr), result.stderr
    assert "migrate-fleet-results is a symlink; not written through it" in result.stderr
    assert "Ray with" not in result.stderr  # refused before Ray was started
    assert _everything_under(outside) == []
    assert (shipped / "migrate-fleet-results").is_symlink()  # left as it is


@pytest.mark.parametrize("planted", ["units", "units/repo", "failed"])
def test_a_folder_inside_the_results_planted_as_a_symlink_is_never_written_through(
    tmp_path, planted
):
    shipped, manifest, outside = _fleet(tmp_path)
    results = shipped / "migrate-fleet-results"
    (results / planted).parent.mkdir(parents=True)
    os.symlink(outside, results / planted)

    result = migrate("fleet", manifest, "--serial", "--format", "json", timeout=300)

    assert result.returncode == 2, result.stderr
    assert one_line_error(result.stderr), result.stderr
    assert f"results folder: {planted} is a symlink; not written through it" in result.stderr
    assert _everything_under(outside) == []
    assert (results / planted).is_symlink()


def test_a_result_file_planted_as_a_symlink_is_neither_read_nor_written_through(tmp_path):
    """A unit's key is predictable (source, commit, tool version, rules, options), so a file
    inside the results folder can be planted too: the store reads nothing through it and
    refuses to write through it."""
    from migrator.files.writer import WriteRefused
    from migrator.fleet.store import MARKER, Store

    secret = write(tmp_path, "outside/secret.json", '{"stolen": true}\n')
    store = Store(tmp_path / "results").open()
    folder = store.folder("repo", "k" * 64)
    folder.mkdir(parents=True)
    os.symlink(secret, folder / MARKER)
    os.symlink(secret, folder / "report.json")

    assert store.meta("repo", "k" * 64) is None and not store.done("repo", "k" * 64)
    assert store.read("repo", "k" * 64, "report.json") is None
    with pytest.raises(WriteRefused, match=r"report\.json is a symlink; not written through it"):
        store.write("repo", "k" * 64, {"report.json": "{}"}, {"unit": 1})
    assert secret.read_text() == '{"stolen": true}\n'
    assert (folder / "report.json").is_symlink()
