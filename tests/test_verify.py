"""``migrate verify``: real subprocesses, real torch (CPU), the real emulation and fix engine.

The only stand-ins are a ``docker`` and an ``nvidia-smi`` executable put on PATH (neither exists
on CI) and, in one test, a fixer that changes the migrated copy so that outputs differ.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrator.errors import ConfigError
from migrator.files.config import load_config
from migrator.reporting.readiness.receipts import verification_from_dict
from migrator.verify import receipt_format
from migrator.verify.cli import verify_command
from migrator.verify.compare import compare_outputs
from migrator.verify.core import verify
from migrator.verify.evidence import read_emulation_log, read_probe
from migrator.verify.metrics import parse_metric
from migrator.verify.options import VerifyOptions, resolve_options
from migrator.verify.process import run_process
from migrator.verify.receipt import summary
from migrator.verify.series import extract, higher_is_better
from migrator.verify.smoke import read_smoke_output
from migrator.verify.targets import sim_invocation
from migrator.verify.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
PYTHON = sys.executable


def _write(path: Path, text: str, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _no_fixes(tree: Path, unsafe: bool) -> object:
    class Run:
        outcomes: list[object] = []

    return Run()


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (PID 1 in a container may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --- the emulation, run for real -------------------------------------------------------------

SIM_CHECK = """
    import importlib.util, json, os, shutil, subprocess, sys
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    result = {
        "hip": torch.version.hip,
        "cuda": torch.version.cuda,
        "available": torch.cuda.is_available(),
        "capability": list(torch.cuda.get_device_capability()),
        "name": torch.cuda.get_device_name(0),
        "arch": torch.cuda.get_device_properties(0).gcnArchName,
        "warp": torch.cuda.get_device_properties(0).warp_size,
        "cudnn": torch.backends.cudnn.version(),
        "which_nvidia_smi": shutil.which("nvidia-smi"),
        "env": {k: os.environ.get(k) for k in
                ("HIP_VISIBLE_DEVICES", "ROCM_PATH", "CUDA_HOME", "CUDA_PATH")},
        "find_spec_pynvml": importlib.util.find_spec("pynvml") is not None,
    }
    try:
        import pynvml  # noqa: F401
        result["pynvml"] = "imported"
    except ImportError as error:
        result["pynvml"] = f"{type(error).__name__}: {error}"
    import pycuda  # allowed with --allow-module: a local stand-in package
    result["pycuda"] = pycuda.__name__
    try:
        subprocess.run(["nvidia-smi", "-L"], check=False)
        result["nvidia_smi"] = "ran"
    except FileNotFoundError as error:
        result["nvidia_smi"] = f"FileNotFoundError: {error}"
    q = torch.randn(1, 2, 4, 8)
    try:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            result["sdpa_cudnn_flag"] = torch.backends.cuda.cudnn_sdp_enabled()
            F.scaled_dot_product_attention(q, q, q)
        result["sdpa_cudnn"] = "ran"
    except RuntimeError as error:
        result["sdpa_cudnn"] = str(error)
    with sdpa_kernel([SDPBackend.MATH]):
        result["sdpa_math"] = list(F.scaled_dot_product_attention(q, q, q).shape)
    result["sdpa_is_real"] = (
        F.scaled_dot_product_attention is torch._C._nn.scaled_dot_product_attention
    )
    print(json.dumps(result))
"""


def test_rocm_sim_emulates_a_rocm_mi300x_stack(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "check.py", SIM_CHECK)
    _write(project / "pycuda" / "__init__.py", "")
    fake_bin = tmp_path / "fake-nvidia-bin"
    _write(fake_bin / "nvidia-smi", "#!/bin/sh\necho GPU 0: NVIDIA H200\n", 0o755)
    _write(fake_bin / "other-tool", "#!/bin/sh\necho other\n", 0o755)
    caller_env = {
        "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", "/root"),
        "CUDA_VISIBLE_DEVICES": "0",
        "CUDA_HOME": "/usr/local/cuda",
    }
    workspace = Workspace.create(project, PYTHON)
    try:
        run_dir = workspace.run_dir("migrated", "rocm-sim")
        invocation = sim_invocation(
            workspace,
            run_dir,
            "python check.py",
            [("CUDA_HOME", "/usr/local/cuda")],
            caller_env,
            ["pycuda"],
        )
        assert "CUDA_HOME" not in invocation.env
        result = run_process(
            invocation.argv, cwd=invocation.cwd, env=invocation.env, timeout=120, log_dir=run_dir
        )
        assert result.ok, result.stderr
        seen = json.loads(result.stdout.strip().splitlines()[-1])
        log = read_emulation_log(invocation.sim_log, invocation.cwd)
        probe = read_probe(invocation.probe_dir)
    finally:
        workspace.remove()

    assert seen["hip"] == "6.3.42131" and seen["cuda"] is None
    assert seen["available"] is False  # the software stack is emulated, not a GPU
    assert seen["capability"] == [9, 4]
    assert seen["name"] == "AMD Instinct MI300X"
    assert seen["arch"] == "gfx942:sramecc+:xnack-" and seen["warp"] == 64
    assert seen["cudnn"] == 3003000
    assert seen["which_nvidia_smi"] is None
    assert seen["nvidia_smi"].startswith("FileNotFoundError") and "nvidia-smi" in seen["nvidia_smi"]
    assert seen["env"] == {
        "HIP_VISIBLE_DEVICES": "0",
        "ROCM_PATH": "/opt/rocm",
        "CUDA_HOME": None,
        "CUDA_PATH": None,
    }
    assert seen["pynvml"] == "ModuleNotFoundError: No module named 'pynvml'"
    assert seen["find_spec_pynvml"] is False
    assert seen["pycuda"] == "pycuda"  # --allow-module
    # torch itself refuses, as on ROCm: the emulation turned the real cuDNN flag off underneath
    # (CPU builds word it "No viable backend", CUDA builds "No available kernel").
    assert seen["sdpa_cudnn"].startswith(("No available kernel", "No viable backend"))
    assert seen["sdpa_cudnn_flag"] is True  # as the code set it; torch saw it off underneath
    assert seen["sdpa_is_real"] is True
    assert seen["sdpa_math"] == [1, 2, 4, 8]

    apis = {(query["api"], query["caller"]) for query in log["device_queries"]}
    lines = textwrap.dedent(SIM_CHECK).splitlines()

    def at(text: str) -> str:
        return f"check.py:{next(n for n, line in enumerate(lines, 1) if text in line)}"

    assert ("torch.cuda.get_device_capability", at("get_device_capability")) in apis
    assert ("torch.cuda.get_device_name", at("get_device_name")) in apis
    assert ("torch.backends.cudnn.version", at("cudnn.version")) in apis
    user_blocked = [
        entry for entry in log["blocked_imports"] if entry["caller"].startswith("check")
    ]
    assert {entry["module"] for entry in user_blocked} == {"pynvml"}
    assert {entry["kind"] for entry in user_blocked} == {"import", "find_spec"}
    assert log["blocked_executables"][0]["executable"] == "nvidia-smi"
    assert log["sdpa_no_kernel"] and log["sdpa_no_kernel"][0]["caller"].startswith("check.py:")
    # The probe reads the real build underneath, before the emulation patches torch.
    assert probe["torch_build"]["hip"] is None and probe["torch_build"]["kind"] == "cpu"
    assert probe["device_name"] == "cpu" and probe["ran_on_gpu"] is False


def test_probe_records_cuda_only_imports_on_native_runs(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(
        project / "smoke.py",
        """
        import json, os
        import torch
        try:
            import pynvml
        except ImportError:
            pass
        json.dump({"tokens": [1, 2, 3], "logits": [0.5, 0.25]},
                  open(os.environ["MIGRATE_SMOKE_OUTPUT"], "w"))
        print("tokens_per_second=12.5")
    """,
    )
    options = VerifyOptions(
        root=project,
        smoke="python smoke.py",
        targets=("native",),
        timeout=120,
        baseline_runs=2,  # deterministic outputs; keep the torch runs to four
        timing_runs=2,
    )
    receipt = verify(options, fixer=_no_fixes)
    base, migrated = receipt.runs
    assert receipt.exit_code == 0
    assert base.tree == "original" and base.baseline and migrated.tree == "migrated"
    assert migrated.torch_build is not None and migrated.torch_build["kind"] == "cpu"
    assert migrated.torch_build["torch"].startswith("2.")
    assert migrated.real_device == "cpu" and migrated.emulated is False
    assert migrated.emulation is None
    assert migrated.tokens_per_second == 12.5
    assert [entry["module"] for entry in migrated.cuda_only_imports] == ["pynvml"]
    assert migrated.cuda_only_imports[0]["imported"] is False
    assert migrated.comparison is not None and migrated.comparison.status == "equal"


# --- the fixtures ------------------------------------------------------------------------------


@pytest.mark.skipif(not (FIXTURES / "llm_app" / "smoke.py").exists(), reason="fixture missing")
def test_llm_app_passes_native_and_rocm_sim(tmp_path: Path) -> None:
    project = FIXTURES / "llm_app"
    before = _tree_digest(project)
    receipt_path = tmp_path / "receipt.json"
    result = CliRunner().invoke(
        verify_command,
        [
            str(project),
            "--smoke",
            "python smoke.py",
            "--targets",
            "native,rocm-sim",
            "--unsafe-fixes",
            "--receipt",
            str(receipt_path),
            "--timeout",
            "300",
            "--timing-runs",  # timings are covered elsewhere; keep the torch runs to four
            "1",
            "--baseline-runs",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert _tree_digest(project) == before  # the user's tree is never touched
    assert "rocm-sim (emulated ROCm over cpu): PASS" in result.output
    assert "no AMD GPU was used" in result.output
    receipt = json.loads(receipt_path.read_text())
    assert receipt["passed"] is True and receipt["amd_gpu_used"] is False
    assert receipt["fixes"]["engine_available"] is True
    assert receipt["fixes"]["total"] == sum(receipt["fixes"]["applied"].values())
    assert receipt["fixes"]["total"] >= 1 and receipt["fixes"]["files_changed"]
    # the smoke test's JSON was compared, key by key (tokens exactly)
    sim_comparison = receipt["runs"][2]["comparison"]
    assert sim_comparison["values_compared"] > 0 and receipt["verdict"] == "pass"
    runs = {(run["tree"], run["target"]): run for run in receipt["runs"]}
    assert set(runs) == {("original", "native"), ("migrated", "native"), ("migrated", "rocm-sim")}
    sim = runs[("migrated", "rocm-sim")]
    assert sim["emulated"] is True
    assert sim["emulation"] == "ROCm 6.3 on AMD Instinct MI300X (gfx942), emulated"
    assert sim["real_device"] == "cpu"
    assert sim["torch_build"]["kind"] == "cpu" and sim["torch_build"]["hip"] is None
    assert sim["comparison"]["status"] in ("equal", "within-tolerance")
    refused = {entry["module"] for entry in sim["emulation_log"]["blocked_imports"]}
    assert "pynvml" in refused
    native = runs[("migrated", "native")]
    assert native["emulated"] is False and native["emulation"] is None
    assert native["tokens_per_second"] and native["tokens_per_second"] > 0
    assert native["outputs"]["tokens"] == runs[("original", "native")]["outputs"]["tokens"]


@pytest.mark.skipif(
    not (FIXTURES / "llm_app_incomplete" / "smoke.py").exists(), reason="fixture missing"
)
def test_llm_app_incomplete_fails_rocm_sim_naming_the_module(tmp_path: Path) -> None:
    receipt_path = tmp_path / "receipt.json"
    result = CliRunner().invoke(
        verify_command,
        [
            str(FIXTURES / "llm_app_incomplete"),
            "--smoke",
            "python smoke.py",
            "--targets",
            "rocm-sim",
            "--receipt",
            str(receipt_path),
            "--timeout",
            "120",
        ],
    )
    assert result.exit_code == 1, result.output
    assert "rocm-sim (emulated ROCm over cpu): FAIL" in result.output
    receipt = json.loads(receipt_path.read_text())
    sim = next(run for run in receipt["runs"] if run["target"] == "rocm-sim")
    assert sim["passed"] is False and sim["exit_code"] != 0
    refused = [
        entry["module"]
        for entry in sim["emulation_log"]["blocked_imports"]
        if not entry["internal"]
    ]
    assert refused and refused[0] in ("pycuda", "tensorrt")
    assert refused[0] in sim["missing_modules"]
    assert refused[0] in result.output


# --- timeouts, comparison, configuration ------------------------------------------------------


def test_hanging_smoke_is_killed_with_its_process_group(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(
        project / "hang.py",
        """
        import os, subprocess, sys, time
        child = subprocess.Popen(["sleep", "300"])
        with open(sys.argv[1], "a") as handle:
            handle.write(f"{child.pid}\\n")
        time.sleep(300)
    """,
    )
    pids = tmp_path / "pids.txt"
    options = VerifyOptions(
        root=project, smoke=f"python hang.py {pids}", targets=("native",), timeout=1.5
    )
    receipt = verify(options, fixer=_no_fixes)
    assert receipt.exit_code == 1
    for run in receipt.runs:
        assert run.timed_out and run.exit_code is None
        assert run.failure and "timed out" in run.failure
        assert run.wall_time_s < 30
    for pid in pids.read_text().split():
        assert not _alive(int(pid))  # the grandchild died with the group
    text = summary(receipt)
    assert "killed at the timeout" in text and "result: FAIL" in text


SMOKE_WRITER = (
    'python -c "import json, os; from values import TOKENS, LOGITS; '
    "json.dump({'tokens': TOKENS, 'logits': LOGITS, 'device': 'cpu'}, "
    "open(os.environ['MIGRATE_SMOKE_OUTPUT'], 'w'))\""
)


def test_outputs_that_differ_fail_with_the_place(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "values.py", "TOKENS = [5, 6, 7, 8]\nLOGITS = [0.1, 0.2, 0.3]\n")

    def changing_fixer(tree: Path, unsafe: bool) -> object:
        (tree / "values.py").write_text("TOKENS = [5, 6, 9, 8]\nLOGITS = [0.1, 0.2, 0.3]\n")
        return _no_fixes(tree, unsafe)

    options = VerifyOptions(root=project, smoke=SMOKE_WRITER, targets=("native",), timeout=60)
    receipt = verify(options, fixer=changing_fixer)
    migrated = receipt.runs[1]
    assert receipt.exit_code == 1 and migrated.exited_ok and not migrated.passed
    assert migrated.comparison is not None
    first = migrated.comparison.first_difference
    assert first is not None and (first.key, first.first_difference) == ("tokens", 2)
    assert (first.baseline, first.migrated) == (7, 9)
    assert "outputs different: tokens[2]" in summary(receipt)


def test_float_outputs_within_tolerance_pass_and_report_the_max_diff(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "values.py", "TOKENS = [1]\nLOGITS = [1.0, 2.0, 3.0]\n")

    def nudging_fixer(tree: Path, unsafe: bool) -> object:
        (tree / "values.py").write_text("TOKENS = [1]\nLOGITS = [1.0, 2.00005, 3.0]\n")
        return _no_fixes(tree, unsafe)

    options = VerifyOptions(root=project, smoke=SMOKE_WRITER, targets=("native",), timeout=60)
    receipt = verify(options, fixer=nudging_fixer)
    comparison = receipt.runs[1].comparison
    assert receipt.exit_code == 0 and comparison is not None
    assert comparison.status == "within-tolerance"
    assert comparison.max_abs_diff == pytest.approx(5e-5, rel=1e-3)


def test_compare_outputs_rules() -> None:
    same = compare_outputs(
        {"tokens": [[1, 2], [3]], "text": "hi"}, {"tokens": [[1, 2], [3]], "text": "hi"}, 1e-4, 1e-4
    )
    assert same.status == "equal"
    far = compare_outputs({"logits": [1.0, 2.0]}, {"logits": [1.0, 2.1]}, 1e-4, 1e-4)
    key = far.keys[0]
    assert far.status == "different" and key.first_difference == 1
    assert key.max_abs_diff == pytest.approx(0.1)
    loose = compare_outputs({"logits": [1.0, 2.0]}, {"logits": [1.0, 2.1]}, 0.1, 0.0)
    assert loose.status == "within-tolerance"
    missing = compare_outputs({"tokens": [1], "extra": 1}, {"tokens": [1]}, 1e-4, 1e-4)
    assert missing.status == "different" and missing.first_difference is not None
    assert missing.first_difference.key == "extra"
    ignored = compare_outputs(
        {"tokens": [1], "tokens_per_second": 3.0},
        {"tokens": [1], "tokens_per_second": 9.0},
        1e-4,
        1e-4,
    )
    assert ignored.status == "equal" and ignored.ignored == ("tokens_per_second",)
    nothing = compare_outputs(None, None, 0, 0)
    assert nothing.status == "not-compared" and not nothing.matches
    assert same.matches and (same.keys_compared, same.values_compared) == (2, 4)
    assert compare_outputs({"tokens": [1]}, None, 0, 0).status == "different"
    shape = compare_outputs({"tokens": [1, 2]}, {"tokens": [1, 2, 3]}, 0, 0)
    assert shape.status == "different" and shape.keys[0].note == "shape differs"


def test_smoke_output_from_stdout_and_tokens_per_second_line(tmp_path: Path) -> None:
    stdout = (
        'loading\n{"partial": 1}\nnoise {"tokens": [4, 5], "logits": [0.5]}\n'
        "tokens_per_second=42.5\n"
    )
    parsed = read_smoke_output(tmp_path / "absent.json", stdout)
    assert parsed.source == "stdout-json"
    assert parsed.values == {"tokens": [4, 5], "logits": [0.5]}
    assert parsed.tokens_per_second == 42.5
    (tmp_path / "out.json").write_text('{"tokens": [1], "tokens_per_second": 7}')
    from_file = read_smoke_output(tmp_path / "out.json", stdout)
    assert from_file.source == "file" and from_file.tokens_per_second == 7.0
    (tmp_path / "bad.json").write_text("{not json")
    bad = read_smoke_output(tmp_path / "bad.json", "")
    assert bad.values is None and bad.error is not None


def test_pyproject_settings_and_usage_errors(tmp_path: Path) -> None:
    project = tmp_path / "project"
    smoke = SMOKE_WRITER.replace('"', '\\"')
    _write(
        project / "pyproject.toml",
        f"""
        [tool.migrate.verify]
        smoke = "{smoke}"
        targets = ["native"]
        timeout = 60
        rtol = 0.5
        atol = 0.0
    """,
    )
    _write(project / "values.py", "TOKENS = [1]\nLOGITS = [1.0]\n")
    receipt_path = tmp_path / "r.json"
    runner = CliRunner()
    result = runner.invoke(verify_command, [str(project), "--receipt", str(receipt_path)])
    assert result.exit_code == 0, result.output
    settings = json.loads(receipt_path.read_text())["settings"]
    assert settings["targets"] == ["native"] and settings["rtol"] == 0.5
    assert settings["timeout_s"] == 60.0

    bad_target = runner.invoke(verify_command, [str(project), "--targets", "native,cuda"])
    assert bad_target.exit_code == 2 and "unknown verify target" in bad_target.output
    empty = tmp_path / "empty"
    empty.mkdir()
    no_smoke = runner.invoke(verify_command, [str(empty)])
    assert no_smoke.exit_code == 2 and "no smoke command" in no_smoke.output
    missing = runner.invoke(verify_command, [str(tmp_path / "nope"), "--smoke", "true"])
    assert missing.exit_code == 2


# --- docker target, with a stand-in docker executable -----------------------------------------

FAKE_DOCKER = """\
#!{python}
import json, os, sys, time
with open({log!r}, "a") as handle:
    handle.write(json.dumps(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
if args and args[0] == "run":
    env = dict(item.split("=", 1) for flag, item in zip(args, args[1:]) if flag == "-e")
    if os.path.exists({log!r} + ".hang"):
        time.sleep(300)
    with open(env["MIGRATE_SMOKE_OUTPUT"], "w") as out:
        json.dump({{"tokens": [1, 2]}}, out)
    print("tokens_per_second=99")
"""


def test_docker_target_runs_rocm_pytorch_with_amd_device_flags(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(
        project / "smoke.py",
        """
        import json, os
        json.dump({"tokens": [1, 2]}, open(os.environ["MIGRATE_SMOKE_OUTPUT"], "w"))
    """,
    )
    bin_dir, log = tmp_path / "bin", tmp_path / "docker-argv.jsonl"
    _write(bin_dir / "docker", FAKE_DOCKER.format(python=PYTHON, log=str(log)), 0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    options = VerifyOptions(
        root=project,
        smoke="python smoke.py",
        targets=("docker",),
        timeout=60,
        docker_image="rocm/pytorch:test",
    )
    receipt = verify(options, fixer=_no_fixes, caller_env=env)
    assert receipt.exit_code == 0, summary(receipt)
    argv = json.loads(log.read_text().splitlines()[0])
    assert argv[:2] == ["run", "--rm"]
    joined = " ".join(argv)
    for flag in (
        "--device /dev/kfd",
        "--device /dev/dri",
        "--group-add video",
        "--security-opt seccomp=unconfined",
        "--ipc=host",
    ):
        assert flag in joined
    mount = argv[argv.index("-v") + 1]
    host, _, inside = mount.partition(":")
    assert host == inside and argv[argv.index("-w") + 1] == f"{host}/migrated"
    assert argv[-4:] == ["rocm/pytorch:test", "sh", "-c", "python smoke.py"]
    assert any(item.startswith("PYTHONPATH=") for item in argv)
    docker_run = receipt.runs[1]
    assert docker_run.target == "docker" and docker_run.emulated is False
    assert docker_run.real_device.startswith("unknown")
    assert docker_run.tokens_per_second == 99.0
    assert "docker (container; device unknown" in summary(receipt)


def test_docker_target_timeout_kills_the_container(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "smoke.py", "print('{\"tokens\": [1]}')\n")
    bin_dir, log = tmp_path / "bin", tmp_path / "docker-argv.jsonl"
    _write(bin_dir / "docker", FAKE_DOCKER.format(python=PYTHON, log=str(log)), 0o755)
    Path(f"{log}.hang").write_text("")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    options = VerifyOptions(root=project, smoke="python smoke.py", targets=("docker",), timeout=1.5)
    receipt = verify(options, fixer=_no_fixes, caller_env=env)
    docker_run = receipt.runs[1]
    assert docker_run.timed_out and receipt.exit_code == 1
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[-1] == ["kill", docker_run.container]


def test_docker_missing_is_reported_not_raised(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "smoke.py", "print('{\"tokens\": [1]}')\n")
    env = {"PATH": str(Path(PYTHON).parent) + os.pathsep + "/nonexistent"}
    options = VerifyOptions(root=project, smoke="python smoke.py", targets=("docker",), timeout=30)
    receipt = verify(options, fixer=_no_fixes, caller_env=env)
    docker_run = receipt.runs[1]
    assert docker_run.error and "docker" in docker_run.error
    assert receipt.exit_code == 1


def test_real_fix_engine_changes_only_the_copy(tmp_path: Path) -> None:
    project = tmp_path / "project"
    source = "import torch\n\nif torch.version.cuda:\n    pass\n"
    _write(project / "train.py", source)
    options = VerifyOptions(
        root=project,
        smoke="true",
        targets=("native",),
        timeout=60,
        unsafe_fixes=True,
        keep_workspace=True,
    )
    receipt = verify(options)
    try:
        assert receipt.fixes["engine_available"] is True and receipt.fixes["level"] == "unsafe"
        assert receipt.fixes["files_changed"] == ["train.py"]
        assert receipt.fixes["applied"] and receipt.fixes["total"] >= 1
        assert receipt.workspace is not None
        migrated = (Path(receipt.workspace) / "migrated" / "train.py").read_text()
        assert migrated != source and "torch.version.hip" in migrated
        assert (project / "train.py").read_text() == source
        # no outputs on either side: not compared, which is not a pass without the flag
        assert receipt.exit_code == 1 and receipt.verdict == "not-compared"
        assert receipt.runs[1].comparison is not None
        assert receipt.runs[1].comparison.status == "not-compared"
    finally:
        if receipt.workspace:
            Workspace(Path(receipt.workspace)).remove()


# --- numbers printed on stdout, honest verdicts, metrics ----------------------------------------

LOSS_SCRIPT = """
    import sys
    import torch

    # Only a ROCm build (here: the emulation) takes this branch, from step SPLIT on.
    split = int(sys.argv[1])
    drift = float(sys.argv[2]) if torch.version.hip else 0.0
    for step in range(1, 6):
        loss = 10.0 / step + (drift if step >= split else 0.0)
        print(f"{step}/5 loss: {loss:.6f}")
        print(f"time per iteration: {20 + step} ms")
    print("done")
"""


def test_printed_losses_are_compared_and_a_rocm_only_difference_names_key_and_step(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    _write(project / "train.py", LOSS_SCRIPT)
    failing = VerifyOptions(
        root=project,
        smoke="python train.py 3 0.5",
        targets=("native", "rocm-sim"),
        timeout=300,
        timing_runs=1,
    )
    receipt = verify(failing, fixer=_no_fixes)
    native, sim = receipt.runs[1], receipt.runs[2]
    assert native.passed and native.comparison is not None
    assert (native.comparison.keys_compared, native.comparison.values_compared) == (1, 5)
    assert native.comparison.source == "stdout-series"
    assert not sim.passed and sim.verdict == "fail" and receipt.exit_code == 1
    assert sim.comparison is not None
    first = sim.comparison.first_difference
    assert first is not None and (first.key, first.step) == ("loss", "step 3/5")
    assert (first.baseline, first.migrated) == (pytest.approx(10 / 3), pytest.approx(10 / 3 + 0.5))
    text = summary(receipt)
    assert "outputs different: loss at step 3/5" in text
    # timing-like lines are metrics, never compared
    assert "time per iteration" not in {key.key for key in sim.comparison.keys}
    ratio = next(r for r in sim.metric_ratios if r.name == "time per iteration")
    assert ratio.ratio == pytest.approx(1.0) and not ratio.regression

    within = VerifyOptions(
        root=project,
        smoke="python train.py 2 1e-6",
        targets=("rocm-sim",),
        timeout=300,
        timing_runs=1,
    )
    passed = verify(within, fixer=_no_fixes)
    assert passed.exit_code == 0, summary(passed)
    assert passed.runs[1].comparison is not None
    assert passed.runs[1].comparison.status == "within-tolerance"
    assert "1/1 migrated runs match the baseline on 1 key, 5 values" in summary(passed)


def test_nothing_compared_is_its_own_outcome_and_passes_only_when_allowed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "hello.py", "print('hello, world')\n")
    options = VerifyOptions(root=project, smoke="python hello.py", targets=("native",), timeout=60)
    receipt = verify(options, fixer=_no_fixes)
    run = receipt.runs[1]
    assert run.exited_ok and run.verdict == "not-compared" and not run.passed
    assert receipt.exit_code == 1 and receipt.verdict == "not-compared"
    text = summary(receipt)
    assert "match" not in text.lower()
    assert "NOT COMPARED" in text and "--allow-uncompared" in text
    data = receipt.as_dict()
    assert data["outputs_compared"] is False and data["runs"][1]["compared"] is False

    allowed = verify(
        VerifyOptions(
            root=project,
            smoke="python hello.py",
            targets=("native",),
            timeout=60,
            allow_uncompared=True,
        ),
        fixer=_no_fixes,
    )
    assert allowed.exit_code == 0 and allowed.verdict == "not-compared"
    text = summary(allowed)
    assert "match" not in text.lower()
    assert "result: PASS, NOT COMPARED" in text


def test_compare_patterns_and_config_keys(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(
        project / "pyproject.toml",
        """
        [tool.migrate.verify]
        smoke = "python run.py"
        targets = ["native"]
        compare = ['iter \\d+: loss (?P<loss>[0-9.]+)']
        metrics = ['step_ms=time (?P<value>[0-9.]+)ms:lower']
        regression-threshold = 0.1
    """,
    )
    _write(
        project / "run.py",
        """
        import os
        slow = os.path.exists("SLOW")
        for i in range(4):
            print(f"iter {i}: loss {4 - i * 0.5:.4f}, time {30 if slow else 10}ms")
    """,
    )

    def slowing_fixer(tree: Path, unsafe: bool) -> object:
        (tree / "SLOW").write_text("")
        return _no_fixes(tree, unsafe)

    options = resolve_options(project, load_config(project).verify, {})
    assert options.regression_threshold == 0.1 and options.metrics[0].name == "step_ms"
    receipt = verify(options, fixer=slowing_fixer)
    run = receipt.runs[1]
    assert run.passed and run.comparison is not None
    assert run.comparison.source == "stdout-compare"
    assert (run.comparison.keys_compared, run.comparison.values_compared) == (1, 4)
    step = next(r for r in run.metric_ratios if r.name == "step_ms")
    assert (step.baseline, step.migrated) == (10.0, 30.0)
    assert step.ratio == pytest.approx(3.0) and step.interval == pytest.approx((3.0, 3.0))
    assert step.regression and step.change == "slower" and receipt.regressions
    text = summary(receipt)
    assert "step_ms 10 → 30 (×3.000 [×3.000–×3.000], slower; 5+5 runs) REGRESSION" in text
    assert "1 performance regression(s) beyond run-to-run noise: step_ms on native" in text


def test_series_extraction_rules() -> None:
    stdout = textwrap.dedent(
        """\
        torch version: 2.11.0+cu130
        1/20 loss: 10.8244 lr=3e-4
        step 2/20 | loss=9.9, tokens/s: 1234.5, mfu: 34.5%
        {'loss': 2.3, 'grad_norm': 1.25, 'epoch': 0.5}
        {'train_runtime': 12.3, 'train_samples_per_second': 4.5}
        time per iteration: 12.3 ms
        max memory allocated: 1.25 GB
        """
    )
    series = extract(stdout)
    assert series.as_outputs() == {
        "loss": [10.8244, 9.9, 2.3],
        "lr": [3e-4],
        "grad_norm": [1.25],
        "epoch": [0.5],
    }
    assert series.steps()["loss"] == ["1/20", "2/20", None]
    assert set(series.metrics) == {
        "tokens/s",
        "mfu",
        "train_runtime",
        "train_samples_per_second",
        "time per iteration",
        "max memory allocated",
    }
    assert higher_is_better("tokens/s") and not higher_is_better("time per iteration", "ms")
    spec = parse_metric("tps=(\\d+) tok/s:higher")
    assert spec.higher_is_better and spec.pattern.pattern == "(\\d+) tok/s"
    with pytest.raises(ConfigError):
        parse_metric("no-equals-sign")


# --- the project's own tests --------------------------------------------------------------------


def test_pytest_names_a_test_that_passes_on_the_original_and_fails_migrated(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    _write(project / "calc.py", "def add(a, b):\n    return a + b\n")
    _write(
        project / "tests" / "test_calc.py",
        """
        import pytest
        from calc import add

        def test_add():
            assert add(2, 3) == 5

        def test_add_negative():
            assert add(-2, -3) == -5

        @pytest.mark.skip(reason="needs a GPU")
        def test_on_gpu():
            pass
    """,
    )

    def breaking_fixer(tree: Path, unsafe: bool) -> object:
        (tree / "calc.py").write_text("def add(a, b):\n    return abs(a) + abs(b)\n")
        return _no_fixes(tree, unsafe)

    result = CliRunner().invoke(
        verify_command,
        [str(project), "--pytest", "tests -k 'add or gpu'", "--targets", "native"],
    )
    assert result.exit_code == 0, result.output  # the real (empty) fix engine changes nothing
    assert "2 tests that passed on the original" in result.output

    options = resolve_options(
        project, {}, {"pytest": "tests", "targets": "native", "timeout": 120.0}
    )
    receipt = verify(options, fixer=breaking_fixer)
    run = receipt.runs[1]
    assert receipt.exit_code == 1 and run.verdict == "fail"
    assert run.test_outcomes == {
        "tests/test_calc.py::test_add": "passed",
        "tests/test_calc.py::test_add_negative": "failed",
        "tests/test_calc.py::test_on_gpu": "skipped",
    }
    text = summary(receipt)
    assert (
        "test tests/test_calc.py::test_add_negative passed on the original, failed on the "
        "migrated tree" in text
    )


# --- when the baseline cannot run ---------------------------------------------------------------


def test_missing_module_names_the_way_forward_and_setup_runs_once_per_copy(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    _write(project / "app.py", "import leftpad_xyz\nprint(f'width: {leftpad_xyz.WIDTH}')\n")
    _write(project / "requirements.txt", "leftpad_xyz\n")
    options = VerifyOptions(root=project, smoke="python app.py", targets=("native",), timeout=60)
    receipt = verify(options, fixer=_no_fixes)
    base = receipt.runs[0]
    assert not base.exited_ok and base.missing_modules == ["leftpad_xyz"]
    text = summary(receipt)
    assert "No module named 'leftpad_xyz'" in text
    assert "--python /path/to/its/bin/python" in text
    assert '--setup "python -m pip install -r requirements.txt"' in text

    log = tmp_path / "setup-log.txt"
    setup = f"echo WIDTH = 7 > leftpad_xyz.py && pwd >> {log}"
    with_setup = VerifyOptions(
        root=project,
        smoke="python app.py",
        targets=("native",),
        timeout=60,
        setup=setup,
        setup_timeout=30,
    )
    receipt = verify(with_setup, fixer=_no_fixes)
    assert receipt.exit_code == 0, summary(receipt)
    assert [record.tree for record in receipt.setup] == ["original", "migrated"]
    assert all(record.ok for record in receipt.setup)
    assert [Path(line).name for line in log.read_text().split()] == ["original", "migrated"]
    assert "setup in original/: ok" in summary(receipt)


# --- the emulation under torch.compile ---------------------------------------------------------

DYNAMO_CHECK = """
    import json, torch, torch.nn as nn, torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, dim=32, heads=4):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.norm(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            if torch.version.hip:  # a ROCm branch, as real projects have
                y = y * 1.0
            return x + self.proj(y.transpose(1, 2).reshape(b, t, c))

    torch.manual_seed(0)
    model = nn.Sequential(Block(), Block())
    explanation = torch._dynamo.explain(model)(torch.randn(2, 16, 32))
    print(json.dumps({
        "graphs": explanation.graph_count,
        "breaks": explanation.graph_break_count,
        "reasons": [str(reason.reason)[:300] for reason in explanation.break_reasons],
        "hip": torch.version.hip,
    }))
"""


def test_emulation_adds_no_graph_breaks_under_torch_compile(tmp_path: Path) -> None:
    script = _write(tmp_path / "dynamo_check.py", DYNAMO_CHECK)
    base_env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root")}
    sim_dir = str(REPO / "migrator" / "verify" / "sim")
    seen = {}
    for name, extra in (
        ("native", {}),
        ("rocm-sim", {"PYTHONPATH": sim_dir, "MIGRATE_SIM_PROFILE": "rocm-mi300x"}),
    ):
        result = run_process(
            [PYTHON, str(script)],
            cwd=tmp_path,
            env={**base_env, **extra},
            timeout=300,
            log_dir=tmp_path / name,
        )
        assert result.ok, result.stderr[-3000:]
        seen[name] = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["native"]["hip"] is None and seen["rocm-sim"]["hip"] == "6.3.42131"
    assert seen["native"]["breaks"] == 0, seen["native"]["reasons"]
    assert (seen["rocm-sim"]["graphs"], seen["rocm-sim"]["breaks"]) == (
        seen["native"]["graphs"],
        seen["native"]["breaks"],
    ), seen["rocm-sim"]["reasons"]


def test_receipt_schema_and_the_one_reader(tmp_path: Path) -> None:
    import jsonschema

    project = tmp_path / "project"
    _write(project / "run.py", "for i in range(3):\n    print(f'{i + 1}/3 loss: {1 / (i + 1)}')\n")
    options = VerifyOptions(root=project, smoke="python run.py", targets=("native",), timeout=60)
    receipt_path = tmp_path / "receipt.json"
    verify(options, fixer=_no_fixes).write(receipt_path)
    data = receipt_format.load(receipt_path)
    jsonschema.validate(data, receipt_format.json_schema())
    assert receipt_format.verdict(data) == "pass" and receipt_format.outputs_compared(data)
    view = verification_from_dict(data)
    assert view.result_label == "PASS"

    # A receipt of schema /1 said "passed" for runs whose outputs were never compared.
    legacy = {
        "schema": "migrate-verify-receipt/1",
        "passed": True,
        "runs": [
            {"target": "native", "tree": "original", "baseline": True, "passed": True},
            {
                "target": "rocm-sim",
                "tree": "migrated",
                "baseline": False,
                "emulated": True,
                "passed": True,
                "comparison": {"status": "not-compared", "keys": []},
            },
        ],
    }
    assert receipt_format.verdict(legacy) == "not-compared"
    assert receipt_format.outputs_compared(legacy) is False
    view = verification_from_dict(legacy)
    assert view.result_label == "PASS, NOT COMPARED"
    assert [run.passed for run in view.runs] == [True, None]
    with pytest.raises(receipt_format.ReceiptFormatError):
        receipt_format.load(tmp_path / "absent.json")


def test_a_json_line_does_not_hide_the_printed_losses(tmp_path: Path) -> None:
    stdout = '{"lr": 0.001, "layers": 2}\n1/2 loss: 4.5\n2/2 loss: 4.25\n'
    parsed = read_smoke_output(tmp_path / "absent.json", stdout)
    assert parsed.source == "stdout-series"
    assert parsed.values == {"loss": [4.5, 4.25], "lr": 0.001, "layers": 2}
    changed = read_smoke_output(tmp_path / "absent.json", stdout.replace("4.25", "4.75"))
    comparison = compare_outputs(
        parsed.values, changed.values, 1e-4, 1e-4, source=parsed.source, steps=parsed.steps
    )
    first = comparison.first_difference
    assert first is not None and (first.key, first.step) == ("loss", "step 2/2")
    assert (comparison.keys_compared, comparison.values_compared) == (3, 4)


def test_compiler_side_queries_see_the_real_device() -> None:
    sim_dir = str(REPO / "migrator" / "verify" / "sim")
    sys.path.insert(0, sim_dir)
    try:
        import _migrate_rocm as sim
    finally:
        sys.path.remove(sim_dir)
    # Dynamo tracing the user's code asks for the user; Inductor's device queries do not.
    assert not sim._is_internal("torch._dynamo.variables.functions")
    assert sim._is_internal("torch._dynamo.device_interface")
    assert sim._is_internal("torch._inductor.codecache")
    assert not sim._is_internal("transformers.utils")
    worker = {
        "__name__": "__main__",
        "__spec__": None,
        "__file__": "/opt/venv/lib/python3.12/site-packages/torch/_inductor/compile_worker/"
        "__main__.py",
    }
    assert sim._is_internal(sim.module_name(worker))
    assert sim.module_name({"__name__": "__main__", "__file__": "/work/train.py"}) == "__main__"


def test_a_run_that_writes_into_the_original_tree_fails_and_names_the_file(tmp_path):
    """The smoke command runs in a copy; one that writes into the user's own tree through an
    absolute path is caught by fingerprinting the tree before and after (issue #33)."""
    import subprocess
    import sys

    project = tmp_path / "project"
    project.mkdir()
    (project / "smoke.py").write_text('print("loss: 1.0")\n')
    planted = project / "planted.txt"
    command = f"python smoke.py && python -c \"open({str(planted)!r}, 'w').write('x')\""
    receipt_path = tmp_path / "receipt.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "migrator",
            "verify",
            str(project),
            "--smoke",
            command,
            "--targets",
            "native",
            "--receipt",
            str(receipt_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "the runs changed the original tree (not the copy): planted.txt"
        in done.stdout + done.stderr
    )
    receipt = json.loads(receipt_path.read_text())
    assert receipt["verdict"] == "fail" and receipt["original_changed"] == ["planted.txt"]


JITTER_SCRIPT = """
import os, random, zlib
# Run-to-run noise as torch.compile with bf16 gives it: every process differs by ~0.1 %
# (seeded from the run's folder name: the same outcome on every machine).
rng = random.Random(zlib.crc32(os.path.basename(os.environ["MIGRATE_RUN_DIR"]).encode()))
shift = 1.02 if os.path.exists("SHIFT") else 1.0
for step in range(1, 9):
    loss = 10.0 / step * (1 + rng.uniform(-1e-3, 1e-3)) * shift
    print(f"{step}/8 loss: {loss:.6f}")
"""


def _marking_fixer(name: str):  # type: ignore[no-untyped-def]
    def fixer(tree: Path, unsafe: bool) -> object:
        (tree / name).write_text("")
        return _no_fixes(tree, unsafe)

    return fixer


def test_run_to_run_noise_passes_by_default_and_a_real_shift_fails_naming_the_key(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    _write(project / "train.py", JITTER_SCRIPT)
    options = VerifyOptions(root=project, smoke="python train.py", targets=("native",), timeout=60)
    assert options.baseline_runs == 5  # the default measures the baseline's own noise
    passed = verify(options, fixer=_no_fixes)
    assert passed.exit_code == 0, summary(passed)
    comparison = passed.runs[1].comparison
    assert comparison is not None and comparison.noise is not None
    key = comparison.keys[0]
    assert key.key == "loss" and key.tolerance is not None
    assert key.tolerance["applied"] == "baseline-noise" and key.tolerance["baseline_runs"] == 5
    assert "tolerance from the baseline's own noise over 5 runs: loss ±" in summary(passed)
    assert len(passed.runs[0].repeats) == 4 and not passed.runs[1].repeats  # no timing printed

    shifted = verify(options, fixer=_marking_fixer("SHIFT"))
    assert shifted.exit_code == 1
    first = shifted.runs[1].comparison.first_difference  # type: ignore[union-attr]
    assert first is not None and first.key == "loss"
    text = summary(shifted)
    assert "outputs different: loss at step 1/8" in text
    assert "the unchanged baseline varies by at most" in text

    # One baseline run cannot tell noise from a change: the same unchanged code fails.
    once = verify(
        VerifyOptions(
            root=project, smoke="python train.py", targets=("native",), timeout=60, baseline_runs=1
        ),
        fixer=_no_fixes,
    )
    assert once.exit_code == 1
    assert "the baseline ran once, so its own variation is unknown" in summary(once)


TIMING_SCRIPT = """
import os, random
rng = random.Random(os.getpid())
speed = 3.0 if os.path.exists("FAST") else (1 / 3 if os.path.exists("SLOW") else 1.0)
for step in range(1, 5):
    noise = 1 + rng.uniform(-0.02, 0.02)
    print(f"{step}/4 loss: {1 / step:.4f}")
    print(f"time per step: {30 / speed * noise:.3f} ms, throughput: {900 * speed / noise:.1f} tok/s")
"""


def test_timing_is_measured_faster_reads_faster_and_each_regression_is_named_once(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    _write(project / "train.py", TIMING_SCRIPT)
    options = VerifyOptions(
        root=project,
        smoke="python train.py",
        targets=("native",),
        timeout=60,
        metrics=(parse_metric(r"step_time=time per step: (?P<value>[0-9.]+)"),),
    )
    faster = verify(options, fixer=_marking_fixer("FAST"))
    run = faster.runs[1]
    assert faster.exit_code == 0 and len(run.repeats) == 4  # timing printed: alternating repeats
    by_name = {ratio.name: ratio for ratio in run.metric_ratios}
    assert set(by_name) == {"step_time", "throughput"}  # the duplicate label counted once
    assert by_name["step_time"].better == "lower" and by_name["throughput"].better == "higher"
    for ratio in by_name.values():
        assert ratio.interval is not None and ratio.change == "faster" and not ratio.regression
    assert by_name["throughput"].interval[0] > 2.5  # type: ignore[index]
    assert not faster.regressions and "faster" in summary(faster)

    slower = verify(options, fixer=_marking_fixer("SLOW"))
    ratios = {ratio.name: ratio for ratio in slower.runs[1].metric_ratios}
    assert all(ratio.change == "slower" and ratio.regression for ratio in ratios.values())
    line = summary(slower).splitlines()[-2]
    assert "2 performance regression(s) beyond run-to-run noise" in line
    assert line.count("step_time") == 1 and line.count("throughput") == 1
    assert "time per step" not in line


def test_ratio_intervals_and_metric_directions() -> None:
    from migrator.verify.series import direction
    from migrator.verify.stats import paired_ratio_interval, ratio_interval, t_quantile

    assert t_quantile(1) == pytest.approx(12.706) and t_quantile(200) == pytest.approx(1.9725)
    same = ratio_interval([10.0, 10.2, 9.9], [10.1, 9.8, 10.0])
    assert same is not None and same.low is not None and same.high is not None
    assert same.low < 1.0 < same.high
    doubled = ratio_interval([10.0, 10.0], [20.0, 20.0])
    assert doubled is not None and doubled.low == pytest.approx(2.0, rel=1e-6)
    noisy = ratio_interval([10.0, 10.2], [20.0, 20.4])
    assert noisy is not None and noisy.low is not None and 1.8 < noisy.low < 2.0
    assert ratio_interval([10.0], [12.0]) == ratio_interval([10.0], [12.0])
    single = ratio_interval([10.0], [12.0])
    assert single is not None and single.low is None and single.ratio == pytest.approx(1.2)
    paired = paired_ratio_interval([10.0, 11.0, 12.0], [10.5, 11.5, 12.6])
    assert paired is not None and paired.low is not None and 1.0 < paired.low < 1.05
    assert direction("tok_per_sec") == "higher" and direction("tokens/s") == "higher"
    assert direction("step_ms") == "lower" and direction("time per iteration", "ms") == "lower"
    assert direction("grad scale") is None
    spec = parse_metric("scale=scale (?P<value>[0-9.]+)")
    assert spec.better is None and spec.describe() == "scale=scale (?P<value>[0-9.]+)"


def test_progress_goes_to_stderr_with_the_last_line_and_json_stdout_stays_clean(
    tmp_path: Path,
) -> None:
    import subprocess

    project = tmp_path / "project"
    _write(
        project / "slow.py",
        """
        import time
        print("1/2 loss: 0.5", flush=True)
        time.sleep(1.2)
        print("2/2 loss: 0.25 -- almost there", flush=True)
        """,
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, "-m", "migrator", "verify", str(project), "--smoke", "python slow.py"]
        + ["--targets", "native", "--progress", "--receipt", "-"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "pass"  # stdout is the receipt alone
    assert "verify: [0:0" in done.stderr and "baseline run 1: original tree, native" in done.stderr
    assert "last line: 2/2 loss: 0.25 -- almost there" in done.stderr
    quiet = subprocess.run(
        [sys.executable, "-m", "migrator", "verify", str(project), "--smoke", "python slow.py"]
        + ["--targets", "native", "--baseline-runs", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert quiet.returncode == 0 and "verify:" not in quiet.stderr  # not a terminal, not asked


def test_torch_version_answers_each_module_once_and_still_by_caller() -> None:
    """torch.version is read ~200 times per compiled step by Inductor's launchers: whether a
    module is torch's own is decided once per module name, and the answers stay per caller."""
    import types

    sim_dir = str(REPO / "migrator" / "verify" / "sim")
    sys.path.insert(0, sim_dir)
    try:
        import _migrate_rocm as sim
    finally:
        sys.path.remove(sim_dir)
    version = types.ModuleType("fake_torch_version")
    version.hip, version.cuda = None, "13.0"  # type: ignore[attr-defined]
    sim._patch_version(version)
    read = "def read(v):\n    return v.hip, v.cuda\n"
    callers = {
        "torch._inductor.runtime.triton_heuristics": (None, "13.0"),
        "my_project.train": (sim.hip_version(), None),
        "torch._dynamo.variables.functions": (sim.hip_version(), None),  # tracing user code
    }
    for _ in range(3):  # the second and third reads come from the per-module cache
        for name, expected in callers.items():
            namespace: dict[str, object] = {"__name__": name}
            exec(read, namespace)
            assert namespace["read"](version) == expected, name  # type: ignore[operator]
    assert sim._internal_by_name["torch._inductor.runtime.triton_heuristics"] is True
    version.cuda = "13.1"  # type: ignore[attr-defined]  # a test's monkeypatch reaches torch
    inductor: dict[str, object] = {"__name__": "torch._inductor.runtime.triton_heuristics"}
    exec(read, inductor)
    assert inductor["read"](version) == (None, "13.1")  # type: ignore[operator]
    assert sim._internal_by_name["my_project.train"] is False
    worker: dict[str, object] = {
        "__name__": "__main__",
        "__file__": "/venv/lib/python3.12/site-packages/torch/_inductor/compile_worker/__main__.py",
    }
    script: dict[str, object] = {"__name__": "__main__", "__file__": "/work/train.py"}
    assert sim.namespace_is_internal(worker) and not sim.namespace_is_internal(script)
    assert "__main__" not in sim._internal_by_name  # scripts differ: never cached by name


def test_the_clean_environment_keeps_inductor_and_triton_settings(tmp_path: Path) -> None:
    """A compiled smoke test reads its Inductor/Triton cache folders and compile-worker count
    from the environment: both targets get the caller's values; anything else is dropped."""
    from migrator.verify.targets import native_invocation

    project = tmp_path / "project"
    _write(project / "train.py", "print('ok')\n")
    caller_env = {
        "PATH": os.environ["PATH"],
        "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
        "TORCHINDUCTOR_COMPILE_THREADS": "1",
        "TRITON_CACHE_DIR": str(tmp_path / "triton"),
        "AWS_SECRET_ACCESS_KEY": "never passed",
    }
    workspace = Workspace.create(project, PYTHON)
    try:
        native = native_invocation(
            workspace, "migrated", workspace.run_dir("migrated", "native"), "x", (), caller_env
        )
        sim = sim_invocation(
            workspace, workspace.run_dir("migrated", "rocm-sim"), "x", (), caller_env, ()
        )
        for run in (native, sim):
            kept = {name: run.env.get(name) for name in caller_env if name != "PATH"}
            assert kept == {
                "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
                "TORCHINDUCTOR_COMPILE_THREADS": "1",
                "TRITON_CACHE_DIR": str(tmp_path / "triton"),
                "AWS_SECRET_ACCESS_KEY": None,
            }
    finally:
        workspace.remove()
