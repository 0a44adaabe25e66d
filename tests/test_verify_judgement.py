"""``migrate verify`` says when it cannot tell: timing judged against the slowdown the user cares
about (or "not judged" with the runs that would do), tolerances from the baseline's own noise that
one outlier run cannot widen, and the emulation's own cost measured in the run.

Every test runs small real smoke scripts through the real ``migrate verify`` command line. The
scripts' "noise" is seeded from the run's own folder name (``original-native-3``), so every
outcome is the same on every machine; the migrated copy knows itself by its folder name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema

from migrator.verify import receipt_format
from tests.attacks.conftest import migrate, write

#: A steady workload's timings: each process is slower or faster by a seeded factor (SPREAD, the
#: standard deviation of its log), each step by ±0.5 %; the migrated copy's steps take
#: MIGRATED_TIME times as long.
TIMING = """
import os, random, zlib
run = os.path.basename(os.environ["MIGRATE_RUN_DIR"])
rng = random.Random(zlib.crc32(run.encode()))
migrated = os.path.basename(os.getcwd()) == "migrated"
factor = float(os.environ.get("MIGRATED_TIME", "1")) if migrated else 1.0
process = rng.lognormvariate(0, float(os.environ.get("SPREAD", "0.03")))
for step in range(1, 6):
    print(f"{step}/5 loss: {1 / step:.4f}")
    ms = 20 * factor * process * (1 + rng.uniform(-0.005, 0.005))
    print(f"time per step: {ms:.4f} ms")
"""

#: A training loss with seeded run-to-run jitter of ±0.05 % (as compiled bf16 kernels give it);
#: the original's third run is an outlier (×1.01); the migrated copy multiplies by SHIFT.
LOSS = """
import os, random, zlib
run = os.path.basename(os.environ["MIGRATE_RUN_DIR"])
rng = random.Random(zlib.crc32(run.encode()))
migrated = os.path.basename(os.getcwd()) == "migrated"
shift = float(os.environ.get("SHIFT", "1")) if migrated else 1.0
outlier = 1.01 if run == "original-native-3" else 1.0
for step in range(1, 9):
    loss = 11.0 / step ** 0.5 * (1 + rng.uniform(-5e-4, 5e-4)) * shift * outlier
    print(f"step {step}/8 | loss: {loss:.6f}")
"""


def _verify(project: Path, *args: str, **env: str) -> tuple[int, str, dict]:  # type: ignore[type-arg]
    """``migrate verify PROJECT --smoke "python smoke.py" ARGS``, ``env`` given to the runs."""
    receipt = project.parent / "receipt.json"
    settings = [item for name, value in env.items() for item in ("--env", f"{name}={value}")]
    done = migrate(
        "verify",
        project,
        "--smoke",
        "python smoke.py",
        "--receipt",
        receipt,
        "--timeout",
        "120",
        *args,
        *settings,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(receipt.read_text())
    jsonschema.validate(data, receipt_format.json_schema())
    return done.returncode, done.stdout, data


def _run(receipt: dict, target: str) -> dict:  # type: ignore[type-arg]
    return next(r for r in receipt["runs"] if r["target"] == target and not r["baseline"])


def test_two_timing_runs_cannot_judge_a_30_percent_slowdown_and_say_so(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project, "smoke.py", TIMING)
    args = ("--targets", "native", "--timing-runs", "2", "--baseline-runs", "2")
    env = {"MIGRATED_TIME": "1.3", "SPREAD": "0.15"}
    code, out, receipt = _verify(project, *args, **env)
    timing = _run(receipt, "native")["timing"]
    assert timing["status"] == "not-judged", out
    low, high = timing["interval"]
    assert low < 1.1 < high
    line = next(line for line in out.splitlines() if line.strip().startswith("timing:"))
    assert line.strip().startswith(
        f"timing: not judged (too few runs: interval ×{low:.2f}–×{high:.2f} on time per step"
    )
    assert f"rerun with --timing-runs {timing['rerun_with']}" in line
    assert timing["rerun_with"] > 2
    # Not judged is not a failure by default, and the result line does not read as a clean PASS.
    assert code == 0 and receipt["verdict"] == "pass"
    result = out.splitlines()[-2]
    assert "timing not judged on native (rerun with --timing-runs" in result

    code, out, receipt = _verify(project, *args, "--require-timing", **env)
    assert code == 1 and receipt["verdict"] == "fail"
    assert "--require-timing fails native (not judged)" in out.splitlines()[-2]


def test_the_default_runs_judge_a_20_percent_slowdown_and_name_a_faster_run(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    write(project, "smoke.py", TIMING)
    code, out, receipt = _verify(project, "--targets", "native", MIGRATED_TIME="1.2")
    timing = _run(receipt, "native")["timing"]
    assert receipt["settings"]["timing_runs"] == 5 and timing["runs"] == [5, 5]
    assert timing["status"] == "regression" and timing["interval"][0] > 1.1, out
    assert "timing: REGRESSION ×1.2" in out and "beyond 10%" in out
    assert code == 0  # a regression is reported; --require-timing would fail it
    code, out, receipt = _verify(
        project, "--targets", "native", "--require-timing", MIGRATED_TIME="1.2"
    )
    assert code == 1

    code, out, receipt = _verify(project, "--targets", "native", MIGRATED_TIME="0.8")
    timing = _run(receipt, "native")["timing"]
    assert timing["status"] == "faster" and timing["interval"][1] < 1.0
    low, high = timing["interval"]
    assert f"timing: faster ×{timing['ratio']:.2f} [×{low:.2f}–×{high:.2f}] on time per step" in out
    assert code == 0


def test_tolerance_from_five_noisy_runs_catches_half_a_percent_despite_an_outlier(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    write(project, "smoke.py", LOSS)
    # A 0.5 % change fails, though baseline run 3 is 1 % off (max-spread widened it to ±4 %).
    code, out, receipt = _verify(
        project, "--targets", "native", "--baseline-runs", "5", SHIFT="1.005"
    )
    assert code == 1 and _run(receipt, "native")["verdict"] == "fail", out
    assert "outputs different: loss at step 1/8" in out
    assert "tolerance ±" in out and "outlier run 3 (up to 0.11" in out

    # Identical code passes at the default settings, whose tolerance the outlier did not widen.
    code, out, receipt = _verify(project, "--targets", "native")
    run = _run(receipt, "native")
    key = run["comparison"]["keys"][0]
    assert code == 0 and run["verdict"] == "pass", out
    tolerance = key["tolerance"]
    assert tolerance["applied"] == "baseline-noise" and tolerance["baseline_runs"] == 5
    assert tolerance["outlier_runs"] == [3]  # the ×1.01 run, set aside by the median
    assert tolerance["relative_allowance"] < 0.005
    assert tolerance["effective_allowance"] < 0.005 * 11  # never past a 0.5 % change
    assert "tolerance from the baseline's own noise over 5 runs: loss ±" in out
    assert "baseline outliers set aside by the median: run 3 on loss" in out

    # Two runs cannot outvote an outlier: a key that varies over them is not judged.
    code, out, receipt = _verify(project, "--targets", "native", "--baseline-runs", "2")
    comparison = _run(receipt, "native")["comparison"]
    assert comparison["not_judged"] == ["loss"] and comparison["keys"][0]["status"] == "not-judged"
    assert "outputs NOT JUDGED" in out and "rerun with --baseline-runs 3 or more" in out
    assert code == 1  # nothing judged is not a match


def test_rocm_sim_measures_its_own_overhead_in_interleaved_pairs(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project, "smoke.py", TIMING)
    receipt_path = tmp_path / "receipt.json"
    done = migrate(
        "verify",
        project,
        "--smoke",
        "python smoke.py",
        "--targets",
        "native,rocm-sim",
        "--timing-runs",
        "3",
        "--baseline-runs",
        "3",
        "--progress",
        "--receipt",
        receipt_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    overhead = _run(json.loads(receipt_path.read_text()), "rocm-sim")["emulation_overhead"]
    assert overhead["status"] == "measured" and overhead["pairs"] == 3
    assert len(overhead["per_pair"]) == 3
    low, high = overhead["interval"]
    assert (
        f"emulation overhead: ×{overhead['cost_ratio']:.3f} [×{low:.3f}–×{high:.3f}] on time per "
        "step (rocm-sim vs native, migrated tree, 3 interleaved pairs)"
    ) in done.stdout
    # Interleaved, in alternating order: round 2 runs rocm-sim before native, round 3 after.
    phases = [
        line.removeprefix("verify: ").split(" — done in")[0]
        for line in done.stderr.splitlines()
        if " — done in" in line and ("run 2" in line or "run 3" in line)
    ]
    assert phases == [
        "timing run 2/3: migrated tree, rocm-sim",
        "timing run 2/3: migrated tree, native",
        "baseline run 2: original tree, native",
        "baseline run 3: original tree, native",
        "timing run 3/3: migrated tree, native",
        "timing run 3/3: migrated tree, rocm-sim",
    ], phases

    code, out, receipt = _verify(project, "--targets", "rocm-sim", "--timing-runs", "2")
    overhead = _run(receipt, "rocm-sim")["emulation_overhead"]
    assert overhead["status"] == "not-measured"
    assert "emulation overhead: could not be measured (the migrated tree did not also run " in out


#: torch's compiler asks for optional packages (Dynamo's skip list: ``find_spec("tensorrt")``);
#: the project's own check for pynvml is the project's.
COMPILED = """
import importlib.util
import torch

print("pynvml available:", int(importlib.util.find_spec("pynvml") is not None))
step = torch.compile(lambda x: x * 2 + 1, backend="eager")
print("value:", float(step(torch.ones(3)).sum()))
"""


def test_rocm_sim_reports_only_the_projects_own_availability_checks(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project, "smoke.py", COMPILED)
    code, out, receipt = _verify(
        project, "--targets", "rocm-sim", "--baseline-runs", "1", "--timing-runs", "1"
    )
    assert code == 0, out
    checks = next(line for line in out.splitlines() if "availability checks answered" in line)
    assert checks.strip() == "availability checks answered 'not installed': pynvml"
    blocked = _run(receipt, "rocm-sim")["emulation_log"]["blocked_imports"]
    tensorrt = [entry for entry in blocked if entry["module"] == "tensorrt"]
    assert tensorrt and all(not entry["from_project"] for entry in tensorrt)  # still refused
    assert all(entry["caller"].startswith("torch/_dynamo/") for entry in tensorrt)
    ours = [entry for entry in blocked if entry["from_project"]]
    assert [(entry["module"], entry["kind"]) for entry in ours] == [("pynvml", "find_spec")]
    assert os.path.basename(ours[0]["caller"]).startswith("smoke.py:")
