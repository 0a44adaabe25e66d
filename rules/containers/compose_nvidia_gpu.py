"""ROC863: NVIDIA GPU access in compose files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    Problem,
    Rewrite,
    Severity,
    TextRule,
    Valid,
)

from .._lines import line_bounds


@dataclass(slots=True)
class _ComposeHit:
    anchor: int  # start of the service-level key holding the construct
    start: int  # the lines to delete
    end: int
    what: str
    subset: bool


def _last_index(node: Any) -> int:
    """End offset of the last scalar inside a YAML node."""
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return int(node.end_mark.index)
    if isinstance(node, yaml.SequenceNode):
        if node.flow_style:
            return int(node.end_mark.index)
        return max([_last_index(item) for item in node.value] or [node.start_mark.index])
    if isinstance(node, yaml.MappingNode):
        if node.flow_style:
            return int(node.end_mark.index)
        return max([_last_index(value) for _, value in node.value] or [node.start_mark.index])
    return int(node.end_mark.index)


def _pair_span(text: str, key: Any, value: Any) -> tuple[int, int]:
    """Lines holding a block mapping pair (key line through the value's last line)."""
    start, _ = line_bounds(text, key.start_mark.index)
    _, end = line_bounds(text, max(_last_index(value) - 1, key.start_mark.index))
    return start, end


def _item_span(text: str, item: Any) -> tuple[int, int]:
    start, _ = line_bounds(text, item.start_mark.index)
    _, end = line_bounds(text, max(_last_index(item) - 1, item.start_mark.index))
    return start, end


def _mapping_get(node: Any, name: str) -> tuple[Any, Any] | None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == name:
            return key, value
    return None


class ComposeNvidiaGpu(TextRule):
    """
    ## What it does
    Flags NVIDIA GPU access in compose files: `runtime: nvidia`, `gpus:` and
    `deploy.resources.reservations.devices` entries with `driver: nvidia` or
    `capabilities: [gpu]`.

    ## Why it breaks on ROCm
    These reservations go through the NVIDIA Container Toolkit; on an AMD host the service
    fails to start ("could not select device driver \"nvidia\""). AMD GPUs are given to a
    service as device files (`/dev/kfd`, `/dev/dri`) with the `video` group.

    ## Example
    ```python
    # docker-compose.yml
    services:
      llm:
        image: app
        deploy:
          resources:
            reservations:
              devices:
                - driver: nvidia
                  count: 1
                  capabilities: [gpu]
    ```

    ## Fix
    ```python
    # docker-compose.yml
    services:
      llm:
        image: app
        devices:
          - /dev/kfd
          - /dev/dri
        group_add:
          - video
    ```

    ## Fix safety
    Unsafe: the service sees every AMD GPU of the host (`count` / `device_ids` are not kept:
    list specific `/dev/dri/renderD*` nodes or set `HIP_VISIBLE_DEVICES`). Emptied `deploy`,
    `resources` and `reservations` keys are removed. Services that already declare `devices`
    or `group_add` are reported without a fix.

    ## References
    - rocm-facts.md §9 (`docker run --gpus all` row); AMD docker guides [C1][C2]
    """

    code = "ROC863"
    fix = Fixing(
        replaces_vendor=True,
        title="Give the service /dev/kfd and /dev/dri with the video group",
        applicability=Applicability.UNSAFE,
    )
    name = "compose-nvidia-gpu"
    category = "container"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=0.25)
    message = "NVIDIA GPU reservation: needs the NVIDIA Container Toolkit; fails on AMD hosts"
    fact = "§9 docker run --gpus row; [C1][C2]"
    parsing = Parsing(triggers=("nvidia", "gpu"), file_kinds=frozenset({"compose"}))
    valid = [
        Valid(
            "services:\n  app:\n    image: x\n    devices:\n      - /dev/kfd:/dev/kfd\n"
            "      - /dev/dri:/dev/dri\n",
            path="docker-compose.yml",
        ),
        Valid(
            "services:\n  app:\n    image: x\n    # runtime: nvidia\n    environment:\n"
            "      - DRIVER=nvidia\n",
            path="docker-compose.yml",
        ),
    ]
    invalid = [
        Invalid(
            "services:\n  llm:\n    image: app\n    shm_size: 8gb\n    deploy:\n      resources:\n"
            "        reservations:\n          devices:\n            - driver: nvidia\n"
            "              count: 1\n              capabilities: [gpu]\n",
            path="docker-compose.yml",
            fixed="services:\n  llm:\n    image: app\n    shm_size: 8gb\n    devices:\n"
            "      - /dev/kfd\n      - /dev/dri\n    group_add:\n      - video\n",
            line=5,
            column=5,
        ),
        Invalid(
            "services:\n  exporter:\n    image: x\n    runtime: nvidia\n    ports:\n"
            "      - 9000:9000\n",
            path="docker-compose.yml",
            fixed="services:\n  exporter:\n    image: x\n    devices:\n      - /dev/kfd\n"
            "      - /dev/dri\n    group_add:\n      - video\n    ports:\n      - 9000:9000\n",
        ),
        Invalid(
            "services:\n  app:\n    image: x\n    deploy:\n      replicas: 2\n      resources:\n"
            "        limits:\n          memory: 8g\n        reservations:\n          devices:\n"
            "          - driver: nvidia\n            count: all\n"
            "            capabilities: [ gpu ]\n"
            "    restart: always\n",
            path="compose.yaml",
            fixed="services:\n  app:\n    image: x\n    devices:\n      - /dev/kfd\n"
            "      - /dev/dri\n    group_add:\n      - video\n    deploy:\n      replicas: 2\n"
            "      resources:\n        limits:\n          memory: 8g\n    restart: always\n",
        ),
        Invalid(
            "services:\n  app:\n    image: x\n    runtime: nvidia\n    devices:\n"
            "      - /dev/fuse\n",
            path="docker-compose.yml",
            fixed=None,
        ),
    ]

    def check(self) -> None:
        import yaml

        text = self.ctx.text
        try:
            root = yaml.compose(text)
        except yaml.YAMLError:
            return
        services = _mapping_get(root, "services")
        if services is None or not isinstance(services[1], yaml.MappingNode):
            return
        for _, service in services[1].value:
            if isinstance(service, yaml.MappingNode) and service.value:
                self._service(text, service)

    def _service(self, text: str, service: Any) -> None:
        hits: list[_ComposeHit] = []
        runtime = _mapping_get(service, "runtime")
        if runtime is not None and getattr(runtime[1], "value", None) == "nvidia":
            hits.append(
                _ComposeHit(
                    runtime[0].start_mark.index,
                    *_pair_span(text, *runtime),
                    "`runtime: nvidia`",
                    False,
                )
            )
        gpus = _mapping_get(service, "gpus")
        if gpus is not None:
            hits.append(
                _ComposeHit(
                    gpus[0].start_mark.index,
                    *_pair_span(text, *gpus),
                    "`gpus:`",
                    getattr(gpus[1], "value", None) != "all",
                )
            )
        self._reservations(text, service, hits)
        if not hits:
            return
        hits.sort(key=lambda hit: (hit.anchor, hit.start))
        clash = _mapping_get(service, "devices") or _mapping_get(service, "group_add")
        indent = " " * service.value[0][0].start_mark.column
        block = (
            f"devices:\n{indent}  - /dev/kfd\n{indent}  - /dev/dri\n"
            f"{indent}group_add:\n{indent}  - video\n"
        )
        note = (
            "; the GPU count/ids are not kept: list /dev/dri/renderD* nodes to restrict"
            if any(hit.subset for hit in hits)
            else ""
        )
        group = f"service@{service.start_mark.index}"  # one finding per compose service
        for index, hit in enumerate(hits):
            message = (
                f"{hit.what} needs the NVIDIA Container Toolkit and fails on AMD hosts; give the "
                f"service `devices: [/dev/kfd, /dev/dri]` and `group_add: [video]`{note}"
            )
            if clash is not None:
                key_end = re.compile(r"[^:\s]+").match(text, hit.anchor)
                self.report(
                    (hit.anchor, key_end.end() if key_end else hit.anchor + 1),
                    message=message + " (merge them into the existing `devices`/`group_add`)",
                    problem=Problem(group=group),
                )
                continue
            if index > 0:
                self.report(
                    (hit.start, hit.end),
                    message=message,
                    fix=Rewrite(""),
                    problem=Problem(group=group),
                )
                continue
            # The first finding of the service also adds the device block, where the
            # service-level key that held the construct starts.
            if hit.start <= hit.anchor:
                replacement = block
            else:
                replacement = block + indent + text[hit.anchor : hit.start]
            self.report(
                (hit.anchor, hit.end),
                message=message,
                fix=Rewrite(replacement),
                problem=Problem(group=group),
            )

    def _reservations(self, text: str, service: Any, hits: list[_ComposeHit]) -> None:
        import yaml

        pairs = []
        node = service
        for name in ("deploy", "resources", "reservations", "devices"):
            pair = _mapping_get(node, name)
            if pair is None:
                return
            pairs.append(pair)
            node = pair[1]
        devices = node
        if not isinstance(devices, yaml.SequenceNode):
            return
        anchor = pairs[0][0].start_mark.index
        nvidia = []
        for item in devices.value:
            driver = _mapping_get(item, "driver")
            capabilities = _mapping_get(item, "capabilities")
            is_nvidia = driver is not None and getattr(driver[1], "value", None) == "nvidia"
            is_gpu = (
                capabilities is not None
                and isinstance(capabilities[1], yaml.SequenceNode)
                and any(getattr(cap, "value", None) == "gpu" for cap in capabilities[1].value)
            )
            if is_nvidia or is_gpu:
                count = _mapping_get(item, "count")
                subset = _mapping_get(item, "device_ids") is not None or (
                    count is not None and getattr(count[1], "value", "all") != "all"
                )
                nvidia.append((item, subset))
        if not nvidia:
            return
        subset = any(flag for _, flag in nvidia)
        what = "an NVIDIA device reservation"
        if len(nvidia) == len(devices.value):
            # The devices list empties: remove the highest key that would be left empty.
            index = len(pairs) - 1
            while index > 0 and len(pairs[index - 1][1].value) == 1:
                index -= 1
            hits.append(_ComposeHit(anchor, *_pair_span(text, *pairs[index]), what, subset))
            return
        if devices.flow_style:
            return
        for item, flag in nvidia:
            start, end = _item_span(text, item)
            hits.append(_ComposeHit(anchor, start, end, what, flag))
