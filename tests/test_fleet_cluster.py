"""``migrate fleet --address``: the same fleet on a two-node Ray cluster on this machine (a head
and a worker started with ``ray start``) gives the results of a serial run, byte for byte, and a
verification unit runs on the node that offers a GPU."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripts.bench_fleet import build_fleet

ROOT = Path(__file__).resolve().parent.parent
RAY = Path(sys.executable).parent / "ray"
#: ``ray start`` enables token authentication; a driver joining it sends the token only in
#: this mode (the token is the one ``ray start`` wrote to ~/.ray/auth_token).
ENV = {**os.environ, "RAY_AUTH_MODE": "token", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}


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


#: One worker runs the module, so its module-scoped fixtures are made once (`--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_fleet_cluster")


@pytest.fixture(scope="module")
def cluster():
    """A head (1 CPU, no GPU) and a worker node (1 CPU, 1 GPU resource) on this machine."""
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
