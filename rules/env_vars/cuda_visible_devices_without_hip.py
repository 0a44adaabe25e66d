"""ROC700: ``CUDA_VISIBLE_DEVICES`` set in Python without ``HIP_VISIBLE_DEVICES``."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Valid

from ._paired import _PairedVariable
from ._pairs import _VisibleDevicesPair


class CudaVisibleDevicesWithoutHip(_VisibleDevicesPair, _PairedVariable):
    """
    ## What it does
    Flags Python code that sets `CUDA_VISIBLE_DEVICES` (`os.environ[...] = ...`,
    `os.environ.setdefault`, `os.putenv`, `os.environ.update`, environment dicts passed as
    `env=`) without setting `HIP_VISIBLE_DEVICES` (or `ROCR_VISIBLE_DEVICES`) next to it, and
    code that removes it (`os.environ.pop`, `del`) without removing `HIP_VISIBLE_DEVICES`.
    A function that sets it for the CUDA driver API it calls itself (`libcuda.cuInit()`,
    `cuDeviceGetCount()`) is left alone: HIP never reads what that code reads, and the driver
    calls are the ROCm problem.

    ## Why it breaks on ROCm
    Today this works: HIP (ROCm ≤ 7.x docs) accepts `CUDA_VISIBLE_DEVICES` as a legacy alias
    of `HIP_VISIBLE_DEVICES`, and PyTorch's device parsing on ROCm reads it. Hence `info`:
    the ROCm 10 docs list only the HIP name, and a `HIP_VISIBLE_DEVICES` inherited from the
    launcher overrides the CUDA name, so setting both keeps the pinning explicit.

    ## Example
    ```python
    import os

    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, ids))
    ```

    ## Fix
    ```python
    import os

    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, ids))
    os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    ```

    ## Fix safety
    Safe for `os.environ[...] = ...`, `os.environ.setdefault(...)`, `os.environ.pop(...)` and
    `del os.environ[...]` (the removal gets `os.environ.pop("HIP_VISIBLE_DEVICES", None)`):
    the CUDA runtime and PyTorch's CUDA builds never read `HIP_VISIBLE_DEVICES`, so nothing
    changes on NVIDIA, and the copy re-reads the variable instead of evaluating the value
    twice. Unsafe for an
    assignment into another mapping (`env["CUDA_VISIBLE_DEVICES"] = ...`), which may not be
    an environment. Other forms are reported without a fix. A restore of a saved value gets its
    own saved HIP copy (see ROC701). In a project whose only GPU library is an NVML binding and
    that declares no GPU compute framework (a monitoring tool), there is no fix: NVML has no ROCm
    path; a write there that the same function hands to the project's own parser of the variable
    (`Device.from_cuda_visible_devices()`) is not reported, HIP never reads it.

    ## References
    - ROCm/HIP `docs/reference/env_variables/gpu_isolation_hip_env.rst`
    - rocm.docs.amd.com "GPU isolation techniques"
    """

    code = "ROC700"
    impact = Impact(consequence="hygiene")
    name = "cuda-visible-devices-without-hip"
    variables = frozenset({"CUDA_VISIBLE_DEVICES"})
    valid = [
        Valid(
            'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'
            'os.environ["HIP_VISIBLE_DEVICES"] = "0"\n'
        ),
        Valid('import os\n\nprint(os.environ.get("CUDA_VISIBLE_DEVICES"))\n'),
        Valid('"""Set os.environ["CUDA_VISIBLE_DEVICES"] = "0" first."""\n'),
        Valid('config = {}\nconfig.CUDA_VISIBLE_DEVICES = "0"\n'),
        Valid('env = {"CUDA_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "0"}\n'),
        Valid(
            'import os\n\nos.environ["ROCR_VISIBLE_DEVICES"] = "1"\n'
            'os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n'
        ),
        Valid(
            'import os\n\nos.environ.pop("CUDA_VISIBLE_DEVICES", None)\n'
            'os.environ.pop("HIP_VISIBLE_DEVICES", None)\n'
        ),
        Valid(  # read by the CUDA driver API in the same function, never by HIP
            "import os\n\ndef count(ids):\n"
            '    os.environ["CUDA_VISIBLE_DEVICES"] = ids\n'
            "    libcuda.cuInit(0)\n"
            "    return libcuda.cuDeviceGetCount()\n"
        ),
    ]
    invalid = [
        Invalid(  # one entry per line, trailing comma: the new entry gets its own line
            "import os, subprocess\n"
            'env = {\n    **os.environ,\n    "CUDA_VISIBLE_DEVICES": "1",\n}\n',
            fixed=(
                "import os, subprocess\n"
                'env = {\n    **os.environ,\n    "CUDA_VISIBLE_DEVICES": "1",\n'
                '    "HIP_VISIBLE_DEVICES": "1",\n}\n'
            ),
        ),
        Invalid(
            "import os\n\ndef pin(ids):\n"
            '    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(ids)  # first\n'
            "    return ids\n",
            fixed="import os\n\ndef pin(ids):\n"
            '    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(ids)  # first\n'
            '    os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]\n'
            "    return ids\n",
            line=4,
            column=5,
        ),
        Invalid(
            "from os import environ\n\nenviron['CUDA_VISIBLE_DEVICES'] = '0'\n",
            fixed="from os import environ\n\nenviron['CUDA_VISIBLE_DEVICES'] = '0'\n"
            "environ['HIP_VISIBLE_DEVICES'] = environ['CUDA_VISIBLE_DEVICES']\n",
        ),
        Invalid(
            'import os as o\n\no.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")\n',
            fixed='import os as o\n\no.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")\n'
            'o.environ.setdefault("HIP_VISIBLE_DEVICES", o.environ["CUDA_VISIBLE_DEVICES"])\n',
        ),
        Invalid(
            'import os\n\nenv = os.environ.copy()\nenv["CUDA_VISIBLE_DEVICES"] = str(rank)\n',
            fixed='import os\n\nenv = os.environ.copy()\nenv["CUDA_VISIBLE_DEVICES"] = str(rank)\n'
            'env["HIP_VISIBLE_DEVICES"] = env["CUDA_VISIBLE_DEVICES"]\n',
        ),
        Invalid(
            "import os, subprocess\n\n"
            'subprocess.run(cmd, env={**os.environ, "CUDA_VISIBLE_DEVICES": "1"})\n',
            fixed="import os, subprocess\n\n"
            'subprocess.run(cmd, env={**os.environ, "CUDA_VISIBLE_DEVICES": "1", '
            '"HIP_VISIBLE_DEVICES": "1"})\n',
        ),
        Invalid(
            'env = {"CUDA_VISIBLE_DEVICES": "0,1"}\n',
            fixed='env = {"CUDA_VISIBLE_DEVICES": "0,1", "HIP_VISIBLE_DEVICES": "0,1"}\n',
        ),
        Invalid('env = {"CUDA_VISIBLE_DEVICES": pick(), "PATH": path}\n'),
        Invalid('import os\n\nif x: os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'),
        Invalid(
            "import os\n\nos.environ.pop('CUDA_VISIBLE_DEVICES', None)\n",
            fixed="import os\n\nos.environ.pop('CUDA_VISIBLE_DEVICES', None)\n"
            "os.environ.pop('HIP_VISIBLE_DEVICES', None)\n",
        ),
        Invalid(
            'import os\n\ndel os.environ["CUDA_VISIBLE_DEVICES"]\n',
            fixed='import os\n\ndel os.environ["CUDA_VISIBLE_DEVICES"]\n'
            'os.environ.pop("HIP_VISIBLE_DEVICES", None)\n',
        ),
    ]
