"""``migrate fleet --address``: the cluster recipe of docs/fleet.md, run line for line from a clean
home folder, gives a two-node run on this machine that finishes every unit when the worker node
is killed mid-run; the same fleet on a two-node cluster gives the results of a serial run, byte
for byte, and a verification unit runs on the node that offers a GPU; the usual mistakes (no
cluster at the address, a port that is not Ray's, a missing or wrong token, another Ray version
on the cluster) end in one line that says the fix, within 10 seconds, exit 2."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.bench_fleet import build_fleet

ROOT = Path(__file__).resolve().parent.parent
RAY = Path(sys.executable).parent / "ray"
#: Ray's and migrate's variables of the calling environment, left out of every command here:
#: each test starts from a clean install's environment.
_RAY_VARIABLES = re.compile(r"^(RAY_|MIGRATE_FLEET_)")


def _clean_environment(home: Path, ray_temp: Path) -> dict[str, str]:
    """A clean install's environment: an empty home folder (no Ray token yet), a Ray temporary
    folder of the test's own (its sessions and sockets apart from every other Ray on the
    machine), migrate's and Ray's programs on PATH, nothing of Ray's set."""
    env = {name: value for name, value in os.environ.items() if not _RAY_VARIABLES.match(name)}
    env.update(
        HOME=str(home),
        RAY_TMPDIR=str(ray_temp),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', os.defpath)}",
        PYTHONPATH=str(ROOT),
        NO_COLOR="1",
    )
    return env


@pytest.fixture(scope="module")
def clean_home() -> Iterator[dict[str, str]]:
    """The module's clean environment; the Ray temporary folder is short (Ray's socket paths
    must fit 107 bytes) and removed afterwards."""
    home = Path(tempfile.mkdtemp(prefix="mfh"))
    ray_temp = Path(tempfile.mkdtemp(prefix="mfr"))
    try:
        yield _clean_environment(home, ray_temp)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(ray_temp, ignore_errors=True)


#: The driver's environment on the module's cluster, filled in by the ``cluster`` fixture:
#: token mode, the token ``ray get-auth-token --generate`` wrote in the clean home folder.
ENV: dict[str, str] = {}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _python(code: str, address: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, address],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=ENV,
    )
    return done.stdout.strip()


_NODES = """
import sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
print(sum(1 for node in ray.nodes() if node["Alive"]), ray.cluster_resources().get("GPU", 0))
ray.shutdown()
"""


def _descendants(pid: int) -> set[int]:
    """``pid`` and every process below it (Ray's workers start sessions of their own)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    family, frontier = {pid}, [pid]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in family:
                family.add(child)
                frontier.append(child)
    return family


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a ``ray start --block`` we started and every process it started, by their ids."""
    family = _descendants(process.pid)
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    for pid in family:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=10)


# --- the recipe of docs/fleet.md, as written -------------------------------------------------

#: Names the processes each line of the recipe started (every process Ray starts inherits it).
_MARKER = "MIGRATE_TEST_RECIPE_LINE"


def _recipe() -> list[str]:
    """The command lines of the first ``sh`` block under "## A cluster" in docs/fleet.md,
    comments removed."""
    text = (ROOT / "docs" / "fleet.md").read_text(encoding="utf-8")
    section = text.split("\n## A cluster\n", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line]


def _marked(value: str) -> set[int]:
    """The processes whose environment holds ``_MARKER=value``."""
    wanted = f"{_MARKER}={value}".encode()
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if wanted in handle.read().split(b"\0"):
                    found.add(int(entry))
        except OSError:
            continue
    return found


def _kill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _stored(results: Path) -> list[dict[str, object]]:
    records = []
    for path in results.glob("units/*/*/unit.json"):
        try:
            records.append(json.loads(path.read_text()))
        except ValueError:  # written atomically: never half, but be safe while it runs
            continue
    return records


def test_the_documented_recipe_runs_on_two_nodes_and_survives_losing_the_worker(tmp_path):
    """docs/fleet.md's block, line by line, in a clean home folder (no token yet): the port is
    a free one instead of 6379 (another Ray may hold it), and its last line, ``ray stop``, is
    replaced by stopping the processes the recipe started, because ``ray stop`` stops every Ray
    process of the user on the machine, other tests' too. While the fleet runs, once both nodes
    have stored units, every process of the worker node is killed: every unit still finishes,
    the rest on the head. It runs first in the module, before the module's own cluster starts."""
    lines = _recipe()
    assert [line.split()[:2] for line in lines] == [
        ["export", "RAY_AUTH_MODE=token"],
        ["ray", "get-auth-token"],
        ["ray", "start"],
        ["ray", "start"],
        ["migrate", "fleet"],
        ["ray", "stop"],
    ]
    work = tmp_path / "work"
    manifest = build_fleet(work, 40, git_repos=0)
    assert manifest == work / "fleet.toml"
    port = str(_free_port())
    home, ray_temp = Path(tempfile.mkdtemp(prefix="mfh")), Path(tempfile.mkdtemp(prefix="mfr"))
    env = _clean_environment(home, ray_temp)
    tag = uuid.uuid4().hex
    fleet: subprocess.Popen[str] | None = None
    try:
        for index, line in enumerate(lines[:-1]):
            line = line.replace("6379", port)
            if line.startswith("export "):
                name, _, value = shlex.split(line)[1].partition("=")
                env[name] = value
                continue
            step_env = {**env, _MARKER: f"{tag}-{index}"}
            if line.startswith("migrate "):
                fleet = subprocess.Popen(
                    ["bash", "-c", line],
                    cwd=work,
                    env=step_env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                continue
            done = subprocess.run(
                ["bash", "-c", line],
                cwd=work,
                env=step_env,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        assert fleet is not None
        results = work / "migrate-fleet-results"
        worker_line = f"{tag}-3"
        deadline = time.monotonic() + 300
        while len({record["node"] for record in _stored(results)}) < 2:
            assert fleet.poll() is None, fleet.communicate()
            assert time.monotonic() < deadline, "the two nodes did not both run units"
            time.sleep(0.1)
        worker_processes = _marked(worker_line)
        assert any(_name(pid) == "raylet" for pid in worker_processes)
        _kill(worker_processes)
        before = _stored(results)
        assert fleet.poll() is None and len(before) < 40
        out, err = fleet.communicate(timeout=600)
        assert fleet.returncode == 0, err
        assert "fleet: Ray with 2 CPUs" in err
        after = _stored(results)
        assert len(after) == 40 and len(list(results.glob("units/*/*/report.json"))) == 40
        assert "wrote fleet.html: 40 repositories" in err
        assert (work / "fleet.html").stat().st_size > 0
        nodes_before = {record["node"] for record in before}
        nodes_after = {record["node"] for record in after if record not in before}
        assert len(nodes_before) == 2 and len(nodes_after) == 1, (nodes_before, nodes_after)
    finally:
        if fleet is not None and fleet.poll() is None:
            fleet.kill()
            fleet.communicate()
        for index in range(len(lines)):
            _kill(_marked(f"{tag}-{index}"))
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(ray_temp, ignore_errors=True)


def test_the_recipes_nodes_join_where_a_token_was_left_before(tmp_path):
    """The recipe's first four lines in a home folder that already holds a token (a local
    ``migrate fleet`` run writes one): the head then asks for the token, and the second node
    joins only because the recipe exports ``RAY_AUTH_MODE=token`` for it too (without it,
    ``InvalidAuthToken``, issue #51)."""
    lines = _recipe()[:4]
    home, ray_temp = Path(tempfile.mkdtemp(prefix="mfh")), Path(tempfile.mkdtemp(prefix="mfr"))
    env = _clean_environment(home, ray_temp)
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text(uuid.uuid4().hex + uuid.uuid4().hex)
    port = str(_free_port())
    tag = uuid.uuid4().hex
    try:
        for index, line in enumerate(lines):
            line = line.replace("6379", port)
            if line.startswith("export "):
                name, _, value = shlex.split(line)[1].partition("=")
                env[name] = value
                continue
            done = subprocess.run(
                ["bash", "-c", line],
                cwd=tmp_path,
                env={**env, _MARKER: f"{tag}-{index}"},
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        ENV.clear()
        ENV.update(env)
        assert _python(_NODES, f"127.0.0.1:{port}").split()[0] == "2"
        without = {name: value for name, value in env.items() if name != "RAY_AUTH_MODE"}
        ENV.clear()
        ENV.update(without)
        assert not _python(_NODES, f"127.0.0.1:{port}")  # the cluster does ask for the token
    finally:
        ENV.clear()
        for index in range(len(lines)):
            _kill(_marked(f"{tag}-{index}"))
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(ray_temp, ignore_errors=True)


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as handle:
            return handle.read().strip()
    except OSError:
        return ""


#: One worker runs the module, so its module-scoped fixtures are made once (`--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_fleet_cluster")


@pytest.fixture(scope="module")
def cluster(clean_home):
    """A head (1 CPU, no GPU) and a worker node (1 CPU, 1 GPU resource) on this machine, with
    token authentication (a token generated in the clean home folder, as docs/fleet.md says)."""
    ENV.clear()
    ENV.update(clean_home, RAY_AUTH_MODE="token")
    subprocess.run(
        [RAY, "get-auth-token", "--generate"],
        env=ENV,
        capture_output=True,
        check=True,
        timeout=120,
    )
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--num-cpus=1", "--block", "--disable-usage-stats"]
    started = []
    try:
        started.append(
            subprocess.Popen(
                [
                    RAY,
                    "start",
                    "--head",
                    f"--port={port}",
                    "--num-gpus=0",
                    "--include-dashboard=false",
                    *common,
                ],
                start_new_session=True,
                env=ENV,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        deadline = time.monotonic() + 120
        while not _python(_NODES, address).startswith("1 "):
            assert time.monotonic() < deadline, "the head did not start"
            time.sleep(1)
        started.append(
            subprocess.Popen(
                [RAY, "start", f"--address={address}", "--num-gpus=1", *common],
                start_new_session=True,
                env=ENV,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        while _python(_NODES, address) != "2 1.0":
            assert time.monotonic() < deadline, "the worker did not join"
            time.sleep(1)
        yield address
    finally:
        for process in reversed(started):
            _stop(process)


def _reports(results: Path) -> dict[str, str]:
    return {
        path.relative_to(results).as_posix(): path.read_text()
        for path in sorted(results.glob("units/*/*/report.json"))
    }


def test_a_two_node_cluster_gives_the_results_of_a_serial_run(cluster, tmp_path):
    manifest = build_fleet(tmp_path / "f", 12, git_repos=2)
    manifest.write_text(
        manifest.read_text()
        + '\n[[repo]]\nname = "gpu"\npath = "repos/r0005"\nverify = "python -c pass"\nverify-targets = "native"\n'
    )
    env = ENV
    base = [sys.executable, "-m", "migrator", "fleet", str(manifest), "--format", "json"]
    serial = subprocess.run(
        [*base, "--serial", "--results", str(tmp_path / "serial")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    on_cluster = subprocess.run(
        [*base, "--address", cluster, "--results", str(tmp_path / "cluster")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert on_cluster.returncode in (0, 1), on_cluster.stderr
    assert "fleet: Ray with 2 CPUs, 1 GPUs" in on_cluster.stderr
    local = _reports(tmp_path / "serial")
    assert len(local) == 13
    assert _reports(tmp_path / "cluster") == local
    rows = {row["name"]: row for row in json.loads(on_cluster.stdout)["projects"]}
    serial_rows = {row["name"]: row for row in json.loads(serial.stdout)["projects"]}
    assert {name: row["score"] for name, row in rows.items()} == {
        name: row["score"] for name, row in serial_rows.items()
    }
    nodes = {
        json.loads(path.read_text())["stage"]: json.loads(path.read_text())["node"]
        for path in (tmp_path / "cluster").glob("units/gpu/*/unit.json")
    }
    gpu_node = _python(
        "import sys, ray\nray.init(address=sys.argv[1], logging_level='ERROR')\n"
        "print([n['NodeID'] for n in ray.nodes() if n['Alive'] and n['Resources'].get('GPU')][0])",
        cluster,
    )
    assert nodes["verify"] == gpu_node
    assert rows["gpu"]["verify"] in ("passed", "failed")


# --- the usual mistakes, against the module's real cluster ----------------------------------


def _fleet_error(tmp_path: Path, address: str, env: dict[str, str]) -> tuple[str, float]:
    """``migrate fleet --address`` on a one-repository fleet: its stderr and seconds; it must
    end with exit 2, nothing on stdout and one line on stderr."""
    (tmp_path / "repos.txt").write_text(str(ROOT / "fixtures" / "llm_app") + "\n")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "migrator", "fleet", str(tmp_path / "repos.txt")]
        + ["--address", address, "--results", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    seconds = time.monotonic() - started
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("migrate: error: ")
    return done.stderr.strip(), seconds


def test_a_driver_without_token_mode_is_told_to_set_it(cluster, tmp_path):
    env = {name: value for name, value in ENV.items() if name != "RAY_AUTH_MODE"}
    line, seconds = _fleet_error(tmp_path, cluster, env)
    assert f"the Ray cluster at {cluster} requires its authentication token" in line
    assert "RAY_AUTH_MODE=token" in line and seconds < 10


def test_a_driver_with_no_token_is_told_where_to_put_it(cluster, tmp_path):
    (tmp_path / "home").mkdir()
    line, seconds = _fleet_error(tmp_path, cluster, {**ENV, "HOME": str(tmp_path / "home")})
    assert "RAY_AUTH_MODE=token but this machine has no Ray token" in line
    assert "~/.ray/auth_token" in line and seconds < 10


def test_a_driver_with_another_token_is_refused_in_one_line(cluster, tmp_path):
    line, seconds = _fleet_error(tmp_path, cluster, {**ENV, "RAY_AUTH_TOKEN": "0" * 32})
    assert f"the Ray cluster at {cluster} refused this machine's token" in line
    assert seconds < 10


def test_a_wrong_port_is_reported_within_ten_seconds(cluster, tmp_path):
    port = _free_port()
    line, seconds = _fleet_error(tmp_path, f"127.0.0.1:{port}", ENV)
    assert f"no Ray cluster at 127.0.0.1:{port}: connection refused" in line
    assert f"ray start --head --port={port}" in line and seconds < 10
    # a port that accepts connections and never answers, as another program's would
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        line, seconds = _fleet_error(tmp_path, address, ENV)
    assert f"no Ray cluster at {address}: the port is open but no Ray head answered" in line
    assert seconds < 10


_SET_VERSION = """
import json, sys
from ray._raylet import GcsClient
client = GcsClient(address=sys.argv[1])
metadata = json.loads(client.internal_kv_get(b"CLUSTER_METADATA", b"cluster"))
print(json.dumps(metadata))
metadata["ray_version"] = sys.argv[2]
client.internal_kv_put(b"CLUSTER_METADATA", json.dumps(metadata).encode(), True, b"cluster")
"""


def test_another_ray_version_on_the_cluster_is_named_with_the_fix(cluster, tmp_path):
    """The head records the Ray and Python versions it was started with (Ray's own
    ``CLUSTER_METADATA``, which ``ray.init`` compares): the cluster's record is rewritten to
    say 2.0.0, as a head of that version would record it, and restored afterwards."""
    import ray

    before = _python(_SET_VERSION.replace("sys.argv[2]", "'2.0.0'"), cluster)
    recorded = json.loads(before)
    assert recorded["ray_version"] == ray.__version__
    try:
        line, seconds = _fleet_error(tmp_path, cluster, ENV)
    finally:
        _python(_SET_VERSION.replace("sys.argv[2]", repr(ray.__version__)), cluster)
    assert (
        f"the Ray cluster at {cluster} runs Ray 2.0.0 on Python {recorded['python_version']}, "
        f"this driver Ray {ray.__version__}" in line
    )
    assert "pip install 'ray==2.0.0' here" in line and seconds < 10
