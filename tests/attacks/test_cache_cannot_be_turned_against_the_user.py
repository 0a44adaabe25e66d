"""Attack class: plant or corrupt cache files. Nothing in a cache can run code, a cache that
does not validate is rebuilt, and ``--no-cache`` reads nothing from it."""

from __future__ import annotations

import hashlib
import json
import os
import pickle

from tests.attacks.conftest import AMP, migrate, write


class _Exploit:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _findings(result):
    return [(f["path"], f["rule"]) for f in json.loads(result.stdout)["findings"]]


def _project(tmp_path):
    """A one-file project with one finding (ROC520) and the cache directory its scans use."""
    project = tmp_path / "project"
    write(project, "a.py", AMP)
    return project, tmp_path / "cache"


def _scan(project, cache, *options):
    """``migrate scan`` of the project as JSON, every severity (failing on every one), with
    that cache directory."""
    return migrate(
        "scan",
        "--min-severity",
        "hygiene",
        "--fail-on",
        "info",
        *options,
        "--format",
        "json",
        project,
        cwd=project,
        MIGRATE_CACHE_DIR=str(cache),
    )


def test_a_planted_pickle_never_runs(tmp_path):
    project, cache = _project(tmp_path)
    cache.mkdir()
    marker = tmp_path / "pwned"
    name = hashlib.blake2b(str(project.resolve()).encode(), digest_size=12).hexdigest()
    payload = pickle.dumps({"fingerprint": _Exploit(str(marker)), "entries": {}})
    for suffix in (".pickle", ".json"):
        (cache / f"{name}{suffix}").write_bytes(payload)

    result = _scan(project, cache)

    assert not marker.exists()
    assert _findings(result) == [("a.py", "ROC520")]


def test_an_empty_or_forged_catalog_is_rebuilt_and_no_cache_reads_nothing(tmp_path):
    project, cache = _project(tmp_path)
    _scan(project, cache)  # creates the caches
    catalogs = list(cache.glob("catalog-*.json"))
    assert len(catalogs) == 1
    results = [path for path in cache.glob("*.json") if path not in catalogs]
    for forged in ([], [["ROC999", "nothing", "nothing"]]):
        catalogs[0].write_text(json.dumps(forged))
        for path in results:
            path.write_text('{"fingerprint": 1, "entries": [')  # corrupt
        scanned = _scan(project, cache)
        assert _findings(scanned) == [("a.py", "ROC520")], forged
        assert scanned.returncode == 1
        catalogs[0].write_text(json.dumps(forged))
        uncached = _scan(project, cache, "--no-cache")
        assert _findings(uncached) == [("a.py", "ROC520")], forged


def _claim_clean(path):
    """Rewrite a result cache so that every file looks clean (JSON now; pickle before); the
    per-catalog data files (rule catalog, rationales, dependency facts) are left as they are."""
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "entries" in data:
            for entry in data["entries"].values():
                entry[2]["findings"] = []
        path.write_text(json.dumps(data))
    else:
        from dataclasses import replace

        data = pickle.loads(path.read_bytes())
        data["entries"] = {
            name: (key, kind, replace(result, findings=()))
            for name, (key, kind, result) in data["entries"].items()
        }
        path.write_bytes(pickle.dumps(data))


def test_a_cache_writable_by_others_is_not_trusted(tmp_path):
    project, cache = _project(tmp_path)
    _scan(project, cache)
    for path in cache.iterdir():
        if not path.name.startswith("catalog-"):
            _claim_clean(path)
        os.chmod(path, 0o666)  # anyone could have written it
    assert _findings(_scan(project, cache)) == [("a.py", "ROC520")]
