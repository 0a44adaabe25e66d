"""Shared test helpers: a CLI runner and a private cache directory for every test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrator.cli import cli

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    # `scan --whole-parse` sets it in this process: restored after every test
    monkeypatch.setenv("MIGRATE_PARSE", "")


@pytest.fixture
def run_cli(tmp_path):
    """Run ``migrate`` in this process from the test's temporary folder (where tests put the
    project they scan, as a user runs migrate inside their project: printed paths are relative
    to it), or from ``cwd``."""

    def invoke(*args: str, input: str | None = None, cwd: Path | str | None = None):
        runner = CliRunner()
        before = os.getcwd()
        os.chdir(tmp_path if cwd is None else cwd)
        try:
            return runner.invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)
        finally:
            os.chdir(before)

    return invoke


@pytest.fixture
def scan_json(run_cli):
    def scan(*args: str, cwd: Path | str | None = None):
        result = run_cli("scan", "--format", "json", *args, cwd=cwd)
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.stdout)

    return scan


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


os.environ.setdefault("NO_COLOR", "1")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Keep ``--dist loadgroup`` working: on each worker, pytest-xdist (3.8) names a test's
    ``xdist_group`` by appending ``@<group>`` to ``item._nodeid``, which pytest 9 no longer reads
    (a node's id is ``item._id``), so every group was split over the workers and its
    module-scoped fixtures made on each (two Ray instances, two parses of the project's
    sources). The suffix is set where this pytest keeps the id, after xdist's own hook."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(names))
        if not names or item.nodeid.endswith(suffix):
            continue
        if hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)
        else:
            item._nodeid = item.nodeid + suffix
        if not item.nodeid.endswith(suffix):
            # a pytest that keeps the id elsewhere again: fail, never split the groups silently
            raise pytest.UsageError(
                f"cannot name the xdist group of {item.nodeid} on this pytest: --dist loadgroup "
                "would split it over workers (update tests/conftest.py)"
            )


def pytest_collection_finish(session):
    """Freeze what collection loaded (the imported libraries, the rules, the collected items:
    some 400,000 objects) out of the cyclic collector's reach, as a long-lived ``migrate``
    process does (``migrator.engine.isolation.settle_process``). Every in-process scan collects
    garbage before it forks its workers; unfrozen, each of those collections traversed them all
    (a quarter of a second each, most of the CPU of a test that scans a two-file project).
    Through the product's own facility, so that its runner knows the heap is settled and
    neither freezes on top of it nor thaws it."""
    from migrator.engine.isolation import settle_process

    settle_process()


def pytest_runtest_teardown(item, nextitem):
    """Free the parsed sources that a group of tests shares once its last test is done."""
    from tests.project_sources import release_after

    release_after(item, nextitem)


def pytest_addoption(parser):
    parser.addoption(
        "--update-fixtures",
        action="store_true",
        help="Rewrite fixture snapshots (findings) and golden fixed trees; review the diff.",
    )


@pytest.fixture
def update_fixtures(request) -> bool:
    return bool(request.config.getoption("--update-fixtures"))
