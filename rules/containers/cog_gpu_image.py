"""ROC869: Cog's `cog.yaml` with `build.gpu: true`, which builds an NVIDIA CUDA image (category
``container``). Its `python_packages` and `run` installs are read by ROC867 and ROC815-ROC817."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid

_FACT = "§9 Cog row; [C3]"


class CogGpuImage(TextRule):
    """
    ## What it does
    Flags `gpu: true` in the `build` section of Cog's `cog.yaml` (with the `cuda:` version
    it pins, when there is one).

    ## Why it breaks on ROCm
    With `gpu: true` Cog builds the model image on an NVIDIA CUDA base image, picks the CUDA
    and cuDNN versions itself (or the `cuda:` you pin), and runs it with `--gpus=all`. Cog has
    no ROCm mode: the image carries CUDA builds of the frameworks and cannot use an AMD GPU.

    ## Example
    ```python
    # cog.yaml
    build:
      gpu: true
      cuda: "12.1"
      python_packages:
        - torch==2.4.1
    predict: "predict.py:Predictor"
    ```

    ## Manual migration
    For AMD, build the image from a Dockerfile on a ROCm PyTorch base image (`rocm/pytorch`)
    with the ROCm wheels of the packages `python_packages` lists, and run it with
    `--device /dev/kfd --device /dev/dri`; keep `cog.yaml` for NVIDIA deployments.

    ## References
    - replicate/cog `docs/yaml.md` (`build.gpu`, `build.cuda`)
    """

    code = "ROC869"
    name = "cog-gpu-image"
    category = "container"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=4.0)
    message = (
        "Cog builds GPU images on NVIDIA CUDA base images (`gpu: true`) and has no ROCm mode: "
        "this image cannot use an AMD GPU; build a ROCm image from a Dockerfile for AMD"
    )
    fact = _FACT
    parsing = Parsing(triggers=("gpu",), file_kinds=frozenset({"cog"}))
    valid = [
        Valid('build:\n  gpu: false\n  python_version: "3.11"\n', path="cog.yaml"),
        Valid('build:\n  python_version: "3.11"\npredict: "predict.py:P"\n', path="cog.yaml"),
        Valid("build:\n  # gpu: true\n  python_version: '3.11'\n", path="cog.yaml"),
    ]
    invalid = [
        Invalid(
            'build:\n  gpu: true\n  cuda: "12.1"\n  python_version: "3.11"\n',
            path="cog.yaml",
            line=2,
            column=3,
        ),
        Invalid("build:\n  python_version: '3.10'\n  gpu: True\n", path="cog.yml", line=3),
    ]

    def check(self) -> None:
        import yaml

        try:
            root = yaml.compose(self.ctx.text)
        except yaml.YAMLError:
            return
        if not isinstance(root, yaml.MappingNode):
            return
        for key, value in root.value:
            if not (isinstance(key, yaml.ScalarNode) and key.value == "build"):
                continue
            if not isinstance(value, yaml.MappingNode):
                return
            for sub_key, sub_value in value.value:
                if (
                    isinstance(sub_key, yaml.ScalarNode)
                    and sub_key.value == "gpu"
                    and isinstance(sub_value, yaml.ScalarNode)
                    and sub_value.value.lower() in {"true", "yes", "on"}
                ):
                    start = sub_key.start_mark.index
                    self.report((start, sub_value.end_mark.index))
                    return
