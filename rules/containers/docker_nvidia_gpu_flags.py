"""ROC862: ``docker run --gpus`` and ``--runtime=nvidia``."""

from __future__ import annotations

from collections.abc import Iterator

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    Rewrite,
    Severity,
    TextRule,
    Valid,
)

from .._shell import Token, command_segments

_DEVICE_FLAGS = (
    "--device /dev/kfd --device /dev/dri --group-add video --security-opt seccomp=unconfined"
)


def _docker_segments(text: str, kind: str) -> Iterator[list[Token]]:
    """Argument tokens of ``docker run`` / ``docker create`` (and CI container ``options:``)."""
    for segment in command_segments(text):
        values = [token.value for token in segment]
        for index, value in enumerate(values):
            base = value.rsplit("/", 1)[-1]
            if base in {"docker", "podman", "nvidia-docker"}:
                rest = values[index + 1 :]
                if rest[:1] in (["run"], ["create"]):
                    yield segment[index + 2 :]
                    break
                if rest[:2] in (["container", "run"], ["container", "create"]):
                    yield segment[index + 3 :]
                    break
        else:
            if kind == "ci-yaml" and values and values[0] in {"options:", "-", "docker_args:"}:
                yield segment[1:]


class DockerGpuFlags(TextRule):
    """
    ## What it does
    Flags `docker run --gpus ...` and `--runtime=nvidia` in shell scripts, Makefiles, CI files
    (including GitHub Actions `container.options`) and notebook `!docker` lines.

    ## Why it breaks on ROCm
    `--gpus` and the `nvidia` runtime go through the NVIDIA Container Toolkit; on an AMD host
    Docker fails with "could not select device driver". AMD GPUs are handed to a container as
    device files: `--device /dev/kfd --device /dev/dri`, with `--group-add video` and (as AMD
    recommends) `--security-opt seccomp=unconfined`.

    ## Example
    ```python
    # launch.sh
    docker run --rm --gpus all -p 8000:8000 "$IMAGE"
    ```

    ## Fix
    ```python
    # launch.sh
    docker run --rm --device /dev/kfd --device /dev/dri --group-add video \
        --security-opt seccomp=unconfined -p 8000:8000 "$IMAGE"
    ```

    ## Fix safety
    Unsafe: the container sees every AMD GPU of the host; `--gpus device=0,1` or a count is
    reported without a fix (pass specific `/dev/dri/renderD*` nodes, or set
    `HIP_VISIBLE_DEVICES`). AMD's Container Toolkit (CDI) is an alternative to device flags.

    ## References
    - rocm-facts.md §9 (`docker run --gpus all` row); AMD docker guides [C1][C2]
    """

    code = "ROC862"
    fix = Fixing(
        replaces_vendor=True,
        title="Pass the AMD GPU device files instead",
        applicability=Applicability.UNSAFE,
    )
    name = "docker-nvidia-gpu-flags"
    category = "container"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=0.25)
    message = "`--gpus` / `--runtime=nvidia` need the NVIDIA Container Toolkit; Docker fails on AMD"
    fact = "§9 docker run --gpus row; [C1][C2][F1]"
    parsing = Parsing(
        triggers=("--gpus", "--runtime", "nvidia-docker"),
        file_kinds=frozenset({"shell", "ci-yaml", "dockerfile"}),
    )
    valid = [
        Valid("docker run --device /dev/kfd --device /dev/dri img\n", path="run.sh"),
        Valid("# docker run --gpus all img\necho done\n", path="run.sh"),
        Valid("python train.py --gpus 8\n", path="train.sh"),
        Valid("#SBATCH --gpus-per-node=8\nsrun python x.py\n", path="job.sh"),
    ]
    invalid = [
        Invalid(
            'IMAGE=x\ndocker run --rm --gpus all \\\n  -p 8000:8000 \\\n  "$IMAGE"\n',
            path="launch.sh",
            fixed="IMAGE=x\ndocker run --rm --device /dev/kfd --device /dev/dri --group-add video"
            ' --security-opt seccomp=unconfined \\\n  -p 8000:8000 \\\n  "$IMAGE"\n',
            line=2,
            column=17,
        ),
        Invalid(
            "run:\n\tdocker run -it --rm --runtime=nvidia --gpus=all --pid=host img\n",
            path="Makefile",
            fixed="run:\n\tdocker run -it --rm --device /dev/kfd --device /dev/dri --group-add"
            " video --security-opt seccomp=unconfined --pid=host img\n",
            count=1,
        ),
        Invalid(
            "jobs:\n  t:\n    container:\n      image: img\n"
            '      options: --shm-size "16gb" --ipc host --gpus all\n',
            path=".github/workflows/t.yml",
            fixed="jobs:\n  t:\n    container:\n      image: img\n"
            '      options: --shm-size "16gb" --ipc host --device /dev/kfd --device /dev/dri'
            " --group-add video --security-opt seccomp=unconfined\n",
        ),
        Invalid("docker run --gpus '\"device=0,1\"' img\n", path="run.sh", fixed=None),
        Invalid("nvidia-docker run img\n", path="run.sh", fixed=None),
    ]

    def check(self) -> None:
        text = self.ctx.text
        for segment in command_segments(text):
            values = [token.value for token in segment]
            if values and values[0].rsplit("/", 1)[-1] == "nvidia-docker":
                self.report(
                    (segment[0].start, segment[0].end),
                    message="`nvidia-docker` wraps the NVIDIA Container Toolkit; use `docker run "
                    "--device /dev/kfd --device /dev/dri --group-add video`",
                )
        for args in _docker_segments(text, self.ctx.kind):
            self._check_args(args)

    def _check_args(self, args: list[Token]) -> None:
        gpus: tuple[int, int, str] | None = None
        runtimes: list[tuple[int, int]] = []
        for index, token in enumerate(args):
            if token.value == "--":
                break
            value = None
            end = token.end
            if token.value.startswith("--gpus="):
                value = token.value.split("=", 1)[1]
            elif token.value == "--gpus" and index + 1 < len(args):
                value = args[index + 1].value
                end = args[index + 1].end
            if value is not None and gpus is None:
                gpus = (token.start, end, value)
            if token.value == "--runtime=nvidia":
                runtimes.append((token.start, token.end))
            elif token.value == "--runtime" and index + 1 < len(args):
                if args[index + 1].value == "nvidia":
                    runtimes.append((token.start, args[index + 1].end))
        text = self.ctx.text
        placed = False
        if gpus is not None:
            start, end, value = gpus
            if value == "all":
                self.report(
                    (start, end),
                    message="`--gpus all` needs the NVIDIA Container Toolkit; on AMD pass "
                    "`--device /dev/kfd --device /dev/dri --group-add video`",
                    fix=Rewrite(_DEVICE_FLAGS),
                )
                placed = True
            else:
                self.report(
                    (start, end),
                    message=f"`--gpus {value}` needs the NVIDIA Container Toolkit; on AMD pass "
                    "`--device /dev/kfd` plus the `/dev/dri/renderD*` nodes of those GPUs",
                )
                placed = True  # a subset: leave the runtime flag to the manual edit as well
                for start, end in runtimes:
                    self.report((start, end))
                return
        for start, end in runtimes:
            if not placed:
                self.report(
                    (start, end),
                    message="`--runtime=nvidia` needs the NVIDIA Container Toolkit; on AMD pass "
                    "`--device /dev/kfd --device /dev/dri --group-add video`",
                    fix=Rewrite(_DEVICE_FLAGS),
                )
                placed = True
                continue
            # Another flag already brings the devices: drop this one with its trailing blanks.
            stop = end
            while stop < len(text) and text[stop] in " \t":
                stop += 1
            self.report(
                (start, stop),
                message="`--runtime=nvidia` needs the NVIDIA Container Toolkit; drop it on AMD",
                fix=Rewrite(""),
            )
