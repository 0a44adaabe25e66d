"""``migrate fleet`` on a real local Ray instance: a fleet of 50+ repositories (fixtures,
generated variants, git repositories made here and cloned over ``file://``) with progress, a
worker that dies mid-run and one killed from outside, faults retried then recorded, a stuck unit
killed by the driver, a run interrupted by Ctrl-C and resumed, reuse of stored results, the
manifest's errors and the reports' escaping."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from migrator.fleet import engine
from migrator.fleet.manifest import read_manifest
from migrator.fleet.store import Store
from migrator.fleet.unit import FAULT_VARIABLE
from scripts.bench_fleet import build_fleet
from tests.test_fleet_cluster import _descendants

ROOT = Path(__file__).resolve().parent.parent


#: One worker runs the module, so its module-scoped fixtures are made once (`--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_fleet")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module, as ``migrate fleet`` starts one (two CPUs, workers
    at normal priority, no dashboard), shut down at the end."""
    import ray  # imported by the worker that runs the module, not by every worker at collection

    ray.init(
        **engine.local_instance_options(2),
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
    )
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def fleet50(tmp_path_factory):
    return build_fleet(tmp_path_factory.mktemp("fleet50"), 52, git_repos=6)


def test_fleet_of_52_with_a_killed_worker_then_every_unit_reused(
    local_ray, fleet50, run_cli, tmp_path, monkeypatch
):
    results, markers = tmp_path / "results", tmp_path / "markers"
    markers.mkdir()
    monkeypatch.setenv("MIGRATE_FLEET_TEST_FAULT", f"kill:r0010@{markers}")
    report = tmp_path / "fleet.json"
    first = run_cli("fleet", fleet50, "--results", results, "--format", "json", "-o", report)
    assert first.exit_code == 0, first.output
    assert (markers / "killed-r0010").exists()  # the first attempt's worker died
    assert "fleet: 52/52 units, 52 done, 0 reused, 0 failed" in first.stderr
    data = json.loads(report.read_text())
    assert data["repositories"] == 52 and data["failed"] == 0
    by_name = {row["name"]: row for row in data["projects"]}
    assert by_name["r0010"]["status"] == "ok"  # retried after the kill, result stored
    assert {row["commit"][:8] for row in data["projects"] if row["name"] < "r0006"} != {"content:"}
    assert sum(data["verdicts"].values()) == 52 and len(data["verdicts"]) >= 2
    assert all((tmp_path / row["report"]).is_file() for row in data["projects"])
    assert not list(results.rglob("*.migrate"))  # no temporary file left behind
    monkeypatch.delenv("MIGRATE_FLEET_TEST_FAULT")
    second = run_cli("fleet", fleet50, "--results", results, "--format", "json", "-o", report)
    assert second.exit_code == 0, second.output
    assert "0 done, 52 reused" in second.stderr  # no unit run again
    assert json.loads(report.read_text())["projects"] == data["projects"]
    page = tmp_path / "fleet.html"
    assert run_cli("fleet", fleet50, "--results", results, "-o", page).exit_code == 0
    _loads_in_chromium(page, rows=52)


_MEASURE = """<!DOCTYPE html><html><body><script>
const t0 = performance.now();
const frame = document.createElement('iframe');
frame.onload = () => {
  const rows = frame.contentDocument.querySelectorAll('#repos tr').length - 1;
  const p = document.createElement('p');
  p.id = 'result';
  p.textContent = 'loaded ' + Math.round(performance.now() - t0) + ' ms, rows ' + rows;
  document.body.appendChild(p);
};
frame.src = 'fleet.html';
document.body.appendChild(frame);
</script></body></html>"""


def _loads_in_chromium(page: Path, rows: int) -> None:
    """The fleet page in a real headless Chromium: it loads and every repository row is there
    (its load time is a benchmark figure in docs/fleet.md, never a test's verdict)."""
    from tests.test_report_chromium import browse, chromium

    binary = chromium()
    (page.parent / "measure.html").write_text(_MEASURE)
    done = browse(
        binary,
        page.parent / "profile",
        "--allow-file-access-from-files",
        "--dump-dom",
        (page.parent / "measure.html").as_uri(),
    )
    found = re.search(r'<p id="result">loaded (\d+) ms, rows (\d+)', done.stdout)
    assert found, done.stderr[-2000:]
    assert int(found.group(2)) == rows


def test_a_changed_repository_is_the_only_unit_run_again(local_ray, run_cli, tmp_path):
    manifest = build_fleet(tmp_path / "f", 4, git_repos=1)
    results = tmp_path / "results"
    assert run_cli("fleet", manifest, "--results", results, "--format", "csv").exit_code == 0
    (tmp_path / "f" / "repos" / "r0002" / "extra.py").write_text(
        "import torch\ntorch.cuda.init()\n"
    )
    again = run_cli("fleet", manifest, "--results", results, "--format", "csv")
    assert again.exit_code == 0
    assert "1 done, 3 reused" in again.stderr
    rows = list(csv.DictReader(io.StringIO(again.stdout)))
    assert [row["status"] for row in rows] == ["ok"] * 4


def test_faults_are_retried_a_bounded_number_of_times_then_recorded(
    local_ray, run_cli, tmp_path, monkeypatch
):
    manifest = build_fleet(tmp_path / "f", 4, git_repos=0)
    text = (
        manifest.read_text()
        + '\n[[repo]]\nname = "gone"\nurl = "file:///nonexistent/x.git"\nref = "v1"\n'
    )
    text += '\n[[repo]]\nname = "gpu"\npath = "repos/r0000"\nverify = "python -c pass"\n'
    manifest.write_text(text)
    monkeypatch.setenv("MIGRATE_FLEET_TEST_FAULT", "raise:r0001;hang:r0002")
    result = run_cli(
        "fleet",
        manifest,
        "--results",
        tmp_path / "r",
        "--format",
        "json",
        "-o",
        tmp_path / "fleet.json",
        "--retries",
        "1",
        "--timeout",
        "10",  # room for a real scan of the healthy units on a loaded machine
    )
    assert result.exit_code == 1, result.output
    data = json.loads((tmp_path / "fleet.json").read_text())
    status = {row["name"]: (row["status"], row["reason"]) for row in data["projects"]}
    assert status["r0000"] == ("ok", "")
    assert status["r0003"] == ("ok", "")
    assert status["r0001"] == ("failed", "RuntimeError: injected scan crash")
    assert status["r0002"][0] == "failed" and "time budget of 10 s" in status["r0002"][1]
    assert status["gone"][0] == "failed" and "cannot fetch" in status["gone"][1]
    gpu = next(row for row in data["projects"] if row["name"] == "gpu")
    assert gpu["status"] == "ok" and gpu["verify"].startswith("not run: no GPU node")
    records = [json.loads(p.read_text()) for p in (tmp_path / "r" / "failed").rglob("*.json")]
    assert {record["attempts"] for record in records if record["name"] != "gpu"} == {2}


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _gone(pids: set[int], seconds: float = 30) -> set[int]:
    """The processes of ``pids`` still running (not zombies) after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        alive = set()
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                alive.add(pid)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


class _KillingWorker(engine.Progress):
    """Progress that, as soon as the slow unit runs, kills its Ray worker from outside."""

    def __init__(self, total: int, markers: Path) -> None:
        super().__init__(total, 0)
        self.markers = markers
        self.killed = 0

    def show(self, force: bool = False) -> None:
        marker = self.markers / "running-r0003"
        if not self.killed and marker.exists() and marker.read_text():
            pid = int(marker.read_text())
            # a worker process of this test's local Ray instance, running the unit
            assert pid in _descendants(os.getpid()) and _command(pid).startswith("ray::_task")
            os.kill(pid, signal.SIGKILL)
            self.killed = pid
        super().show(force)


def test_a_ray_worker_killed_from_outside_mid_unit_loses_no_result(
    local_ray, tmp_path, monkeypatch
):
    manifest = build_fleet(tmp_path / "f", 10, git_repos=1)
    markers = tmp_path / "markers"
    markers.mkdir()
    monkeypatch.setenv(FAULT_VARIABLE, f"slow:r0003@{markers}")
    store = Store(tmp_path / "results")
    planned = engine.plan(read_manifest(manifest).repos, store)
    progress = _KillingWorker(len(planned.todo), markers)
    assert engine.run_ray(planned.todo, store, progress) == []
    assert progress.killed and not _gone({progress.killed})
    records = [json.loads(path.read_text()) for path in store.root.glob("units/*/*/unit.json")]
    by_name = {record["name"]: record for record in records}
    assert len(by_name) == 10 and progress.done == 10
    assert by_name["r0003"]["attempts"] == 2 and by_name["r0003"]["pid"] != progress.killed
    assert {record["attempts"] for name, record in by_name.items() if name != "r0003"} == {1}


def _three_units_with_stuck(run_cli, tmp_path, monkeypatch, *stuck, budget=10):
    """A fleet of three units in which the ``stuck`` ones hang, run with a ``budget`` seconds
    time budget and one retry; the fleet's JSON report path and the folder of the stuck units'
    worker pids."""
    manifest = build_fleet(tmp_path / "f", 3, git_repos=0)
    markers = tmp_path / "markers"
    markers.mkdir()
    monkeypatch.setenv(FAULT_VARIABLE, ";".join(f"stuck:{name}@{markers}" for name in stuck))
    out = tmp_path / "fleet.json"
    args = ["--results", tmp_path / "r", "--format", "json", "-o", out]
    result = run_cli("fleet", manifest, *args, "--retries", "1", "--timeout", str(budget))
    assert result.exit_code == 1, result.output
    return out, markers


def test_a_stuck_unit_is_killed_by_the_driver_retried_then_recorded(
    local_ray, run_cli, tmp_path, monkeypatch
):
    out, markers = _three_units_with_stuck(run_cli, tmp_path, monkeypatch, "r0001")
    status = {
        row["name"]: (row["status"], row["reason"])
        for row in json.loads(out.read_text())["projects"]
    }
    assert status["r0000"] == status["r0002"] == ("ok", "")
    assert status["r0001"] == (
        "failed",
        "took longer than its time budget of 10 s and did not stop: its worker was killed after 15 s",
    )
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "r" / "failed").rglob("*.json")]
    assert record["attempts"] == 2
    pids = {int(line) for line in (markers / "stuck-r0001").read_text().split()}
    assert len(pids) == 2 and not _gone(pids)  # both attempts' workers were killed


def test_a_unit_queued_behind_stuck_units_is_not_counted_as_stuck(
    local_ray, run_cli, tmp_path, monkeypatch
):
    """Two units in flight per CPU: with both CPUs held by stuck units, the third waits in
    Ray's queue; its time there is not running time, so the driver does not kill it with them.
    The budget (10 s) leaves a real scan room on a loaded machine; the queue wait (two attempts
    of each stuck unit) is longer than the budget."""
    out, _ = _three_units_with_stuck(run_cli, tmp_path, monkeypatch, "r0000", "r0001")
    status = {row["name"]: row["status"] for row in json.loads(out.read_text())["projects"]}
    assert status == {"r0000": "failed", "r0001": "failed", "r0002": "ok"}
    (queued,) = [json.loads(p.read_text()) for p in (tmp_path / "r").glob("units/*/*/unit.json")]
    assert queued["name"] == "r0002" and queued["attempts"] == 1


def test_ctrl_c_then_a_second_run_resumes_where_the_first_stopped(tmp_path):
    """24 units on 2 CPUs, nothing measured yet: large enough that ``--engine auto`` (the
    default) starts a local Ray instance, which Ctrl-C stops."""
    manifest = build_fleet(tmp_path / "f", 24, git_repos=0)
    results = tmp_path / "results"
    command = [sys.executable, "-m", "migrator", "fleet", str(manifest), "--results", str(results)]
    command += ["--format", "json", "-o", str(tmp_path / "fleet.json"), "--num-cpus", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    first = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while len(list(results.glob("units/*/*/unit.json"))) < 3:
        assert first.poll() is None and time.monotonic() < deadline, first.stderr.read()
        time.sleep(0.05)
    family = _descendants(first.pid) - {first.pid}
    assert any(_command(pid).startswith("ray::") for pid in family)  # Ray's workers are running
    os.killpg(first.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    _, err = first.communicate(timeout=120)
    assert first.returncode == 130 and "migrate: interrupted" in err, err
    assert "fleet: 24 units on a local Ray instance, about " in err
    stored = len(list(results.glob("units/*/*/unit.json")))
    assert 3 <= stored < 24
    assert not list(results.rglob("*.migrate"))  # no half-written file
    assert not _gone(family)  # Ray's daemons and workers stopped with it
    second = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert second.returncode == 0, second.stderr
    assert f"fleet: 24/24 units, {24 - stored} done, {stored} reused, 0 failed" in second.stderr
    data = json.loads((tmp_path / "fleet.json").read_text())
    assert [row["status"] for row in data["projects"]] == ["ok"] * 24


def test_the_repos_file_of_report_is_a_manifest_and_names_are_escaped(local_ray, run_cli, tmp_path):
    evil = tmp_path / "<img src=x onerror=alert(1)>"
    evil.mkdir()
    (evil / "a.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    lines = tmp_path / "repos.txt"
    lines.write_text(f"# a fleet\n{evil}\n{ROOT / 'fixtures' / 'quant_kernels'}\n")
    out = tmp_path / "fleet.html"
    result = run_cli("fleet", lines, "--results", tmp_path / "r", "-o", out)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "blocked by inline-ptx (ROC310)" in page and "<img" not in page
    md = run_cli("fleet", lines, "--results", tmp_path / "r", "--format", "md")
    assert "<img" not in md.stdout and "0 done, 2 reused" in md.stderr
    manifest = tmp_path / "m.toml"
    manifest.write_text(f'[[repo]]\nname = "<script>alert(1)</script>"\npath = "{evil}"\n')
    named = run_cli("fleet", manifest, "--results", tmp_path / "r", "-o", out)
    assert named.exit_code == 0, named.output
    page = out.read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[repo]]\nurl = "file:///x.git"\n', "a url needs a pinned ref"),
        ('[[repo]]\npath = "."\ncolour = "red"\n', "unknown key 'colour'"),
        ('[[repo]]\npath = "nowhere"\n', "path is not a folder"),
        ("[[repo]\n", "not valid TOML"),
    ],
)
def test_manifest_errors_are_one_line_and_exit_2(run_cli, tmp_path, text, message):
    manifest = tmp_path / "m.toml"
    manifest.write_text(text)
    result = run_cli("fleet", manifest)
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_without_ray_it_says_how_to_install_it(tmp_path):
    (tmp_path / "repos.txt").write_text(str(ROOT / "fixtures" / "quant_kernels") + "\n")
    code = "import sys; sys.modules['ray'] = None; from migrator.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "fleet", str(tmp_path / "repos.txt")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == "migrate: error: migrate fleet needs Ray: pip install 'migrate-rocm[fleet]'\n"
    )
