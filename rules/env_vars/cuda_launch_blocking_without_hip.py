"""ROC701: ``CUDA_LAUNCH_BLOCKING`` set in Python without ``HIP_LAUNCH_BLOCKING``."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Valid

from ._paired import _PairedVariable
from ._pairs import _LaunchBlockingPair


class CudaLaunchBlockingWithoutHip(_LaunchBlockingPair, _PairedVariable):
    """
    ## What it does
    Flags Python code that sets `CUDA_LAUNCH_BLOCKING` without setting `HIP_LAUNCH_BLOCKING`
    (or `AMD_SERIALIZE_KERNEL`) next to it.

    ## Why it breaks on ROCm
    Whether HIP reads `CUDA_LAUNCH_BLOCKING` is undocumented; the HIP variable is
    `HIP_LAUNCH_BLOCKING=1` (same as `AMD_SERIALIZE_KERNEL`; `AMD_SERIALIZE_KERNEL=3` waits
    before and after each kernel). Without it, the synchronous launches the code asked for
    (to get accurate error locations) silently stay asynchronous.

    ## Example
    ```python
    import os

    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    ```

    ## Fix
    ```python
    import os

    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    os.environ["HIP_LAUNCH_BLOCKING"] = os.environ["CUDA_LAUNCH_BLOCKING"]
    ```

    ## Fix safety
    Safe for `os.environ[...] = ...` and `setdefault`: CUDA never reads the HIP variable.
    Unsafe for assignments into other mappings. A restore of a saved value
    (`saved = os.environ.get("CUDA_LAUNCH_BLOCKING", "")` … `os.environ[...] = saved`) gets a
    save of `HIP_LAUNCH_BLOCKING` beside the CUDA save and a restore from that copy, so a HIP
    value set before is kept; without a string default there is no fix. In a project whose only
    GPU library is NVML (no GPU compute framework declared) there is no fix either.

    ## References
    - ROCm/HIP `docs/reference/env_variables/debug_hip_env.rst`
    """

    code = "ROC701"
    impact = Impact(consequence="hygiene")
    name = "cuda-launch-blocking-without-hip"
    variables = frozenset({"CUDA_LAUNCH_BLOCKING"})
    valid = [
        Valid(
            'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
            'os.environ["AMD_SERIALIZE_KERNEL"] = "3"\n'
        ),
        Valid('import os\n\nblocking = os.environ.get("CUDA_LAUNCH_BLOCKING") == "1"\n'),
        Valid('# os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\nimport os\n'),
        Valid('settings = {}\nsettings.get("CUDA_LAUNCH_BLOCKING")\n'),
        Valid('import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "0"\n'),
    ]
    invalid = [
        Invalid(
            'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
            fixed='import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
            'os.environ["HIP_LAUNCH_BLOCKING"] = os.environ["CUDA_LAUNCH_BLOCKING"]\n',
            line=3,
        ),
        Invalid(
            'from os import environ as env\n\nif debug:\n    env["CUDA_LAUNCH_BLOCKING"] = "1"\n',
            fixed="from os import environ as env\n\nif debug:\n"
            '    env["CUDA_LAUNCH_BLOCKING"] = "1"\n'
            '    env["HIP_LAUNCH_BLOCKING"] = env["CUDA_LAUNCH_BLOCKING"]\n',
        ),
        Invalid('import os\n\nos.putenv("CUDA_LAUNCH_BLOCKING", "1")\n'),
        Invalid(  # a restore of a saved value: HIP gets its own save, never the CUDA value
            "import os\n\n"
            'saved_cuda = os.environ.get("CUDA_LAUNCH_BLOCKING", "")\n'
            "run()\n"
            'os.environ["CUDA_LAUNCH_BLOCKING"] = saved_cuda\n',
            fixed="import os\n\n"
            'saved_cuda = os.environ.get("CUDA_LAUNCH_BLOCKING", "")\n'
            'saved_hip = os.environ.get("HIP_LAUNCH_BLOCKING", "")\n'
            "run()\n"
            'os.environ["CUDA_LAUNCH_BLOCKING"] = saved_cuda\n'
            'os.environ["HIP_LAUNCH_BLOCKING"] = saved_hip\n',
            line=5,
        ),
        Invalid(  # saved without a default: restoring HIP from None would raise, no fix
            "import os\n\n"
            'saved = os.environ.get("CUDA_LAUNCH_BLOCKING")\n'
            'os.environ["CUDA_LAUNCH_BLOCKING"] = saved\n',
            fixed=None,
        ),
    ]
