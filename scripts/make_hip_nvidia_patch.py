"""Regenerate migrator/data/hip_nvidia/cuda13.patch: the edits that let Debian's HIP 5.2
``hip/nvidia_detail`` wrappers compile with CUDA 13's nvcc (APIs CUDA 12 and 13 removed or
changed), each under ``#if CUDART_VERSION`` so the same headers still serve older toolkits.
A maintainer's tool: run it where ``/usr/include/hip`` is Debian's libamdhip64-dev 5.2.3."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

HEADER = "nvidia_detail/nvidia_hip_runtime_api.h"
NEW = "CUDART_VERSION >= 13000"


def _guard_lines(text: str, needles: list[str], condition: str) -> str:
    """Wrap each line containing one of ``needles`` in ``#if condition``."""
    out = []
    for line in text.splitlines(keepends=True):
        if any(needle in line for needle in needles):
            out.append(f"#if {condition}\n{line}#endif\n")
        else:
            out.append(line)
    return "".join(out)


def _replace(text: str, old: str, new: str, count: int = 1) -> str:
    found = text.count(old)
    if found != count:
        raise SystemExit(f"expected {count} of {old[:60]!r}, found {found}: not HIP 5.2.3's header")
    return text.replace(old, new)


def _guard_block(text: str, start: str, end: str, condition: str) -> str:
    """Wrap the text from ``start`` up to and including ``end`` in ``#if condition``."""
    begin = text.index(start)
    stop = text.index(end, begin) + len(end)
    return text[:begin] + f"#if {condition}\n" + text[begin:stop] + "\n#endif" + text[stop:]


def patched(text: str) -> str:
    """The header with CUDA 13's removals and signature changes handled."""
    # hipChooseDevice and hipGetDeviceProperties: members CUDA 13 removed from cudaDeviceProp.
    chooser = text.index("inline static hipError_t hipChooseDevice(")
    chooser_end = text.index("\n}\n", chooser)
    body = _guard_lines(
        text[chooser:chooser_end],
        ["cdprop.clockRate", "cdprop.computeMode", "cdprop.memoryClockRate"],
        "CUDART_VERSION < 13000",
    )
    text = text[:chooser] + body + text[chooser_end:]
    removed = {
        "p_prop->clockRate = cdprop.clockRate;": "cudaDevAttrClockRate, device",
        "p_prop->memoryClockRate = cdprop.memoryClockRate;": "cudaDevAttrMemoryClockRate, device",
        "p_prop->computeMode = cdprop.computeMode;": "cudaDevAttrComputeMode, device",
        "p_prop->clockInstructionRate = cdprop.clockRate; // Same as clock-rate:": (
            "cudaDevAttrClockRate, device"
        ),
        "p_prop->kernelExecTimeoutEnabled = cdprop.kernelExecTimeoutEnabled;": (
            "cudaDevAttrKernelExecTimeout, device"
        ),
    }
    for line, attribute in removed.items():
        field = line.split("=")[0].strip()
        text = _replace(
            text,
            line,
            f"#if CUDART_VERSION < 13000\n    {line}\n#else\n"
            f"    cudaDeviceGetAttribute(&{field}, {attribute});\n#endif",
        )
    text = _replace(
        text,
        "p_prop->cooperativeMultiDeviceLaunch = cdprop.cooperativeMultiDeviceLaunch;",
        "#if CUDART_VERSION < 13000\n    p_prop->cooperativeMultiDeviceLaunch = "
        "cdprop.cooperativeMultiDeviceLaunch;\n#else\n    p_prop->cooperativeMultiDeviceLaunch = 0;\n#endif",
    )
    text = _replace(
        text,
        "        case hipDeviceAttributeCooperativeMultiDeviceLaunch:\n"
        "            cdattr = cudaDevAttrCooperativeMultiDeviceLaunch;\n            break;\n",
        "#if CUDART_VERSION < 13000\n"
        "        case hipDeviceAttributeCooperativeMultiDeviceLaunch:\n"
        "            cdattr = cudaDevAttrCooperativeMultiDeviceLaunch;\n            break;\n#endif\n",
    )
    # Managed memory hints take a cudaMemLocation since CUDA 13.
    text = _replace(
        text,
        "    return hipCUDAErrorTohipError(cudaMemAdvise(dev_ptr, count,\n"
        "        hipMemoryAdviseTocudaMemoryAdvise(advice), device));",
        "#if CUDART_VERSION >= 13000\n"
        "    cudaMemLocation location = {device == cudaCpuDeviceId ? cudaMemLocationTypeHost\n"
        "                                : cudaMemLocationTypeDevice, device};\n"
        "    return hipCUDAErrorTohipError(cudaMemAdvise(dev_ptr, count,\n"
        "        hipMemoryAdviseTocudaMemoryAdvise(advice), location));\n#else\n"
        "    return hipCUDAErrorTohipError(cudaMemAdvise(dev_ptr, count,\n"
        "        hipMemoryAdviseTocudaMemoryAdvise(advice), device));\n#endif",
    )
    text = _replace(
        text,
        "    return hipCUDAErrorTohipError(cudaMemPrefetchAsync(dev_ptr, count, device, stream));",
        "#if CUDART_VERSION >= 13000\n"
        "    cudaMemLocation location = {device == cudaCpuDeviceId ? cudaMemLocationTypeHost\n"
        "                                : cudaMemLocationTypeDevice, device};\n"
        "    return hipCUDAErrorTohipError(cudaMemPrefetchAsync(dev_ptr, count, location, 0, stream));\n"
        "#else\n"
        "    return hipCUDAErrorTohipError(cudaMemPrefetchAsync(dev_ptr, count, device, stream));\n#endif",
    )
    # cuCtxCreate takes creation parameters since CUDA 13.
    text = _replace(
        text,
        "    return hipCUResultTohipError(cuCtxCreate(ctx, flags, device));",
        "#if CUDART_VERSION >= 13000\n"
        "    return hipCUResultTohipError(cuCtxCreate(ctx, NULL, flags, device));\n#else\n"
        "    return hipCUResultTohipError(cuCtxCreate(ctx, flags, device));\n#endif",
    )
    # Texture references: removed in CUDA 12.
    text = _guard_block(
        text,
        "__HIP_DEPRECATED inline static hipError_t hipBindTexture(size_t* offset,",
        "width, height, pitch));\n}",
        "CUDART_VERSION < 12000",
    )
    text = _guard_block(
        text,
        "__HIP_DEPRECATED inline static hipError_t hipGetTextureAlignmentOffset(",
        "cudaGetTextureAlignmentOffset(offset,texref));\n}",
        "CUDART_VERSION < 12000",
    )
    text = _guard_block(
        text,
        "template <class T, int dim, enum cudaTextureReadMode readMode>\n"
        "inline static hipError_t hipBindTexture(size_t* offset, const struct texture",
        "return hipCUDAErrorTohipError(cudaBindTextureToArray(tex, array));\n}",
        "CUDART_VERSION < 12000",
    )
    # Multi-device cooperative launch: removed in CUDA 13.
    text = _guard_block(
        text,
        "inline static hipError_t hipLaunchCooperativeKernelMultiDevice(",
        "launchParamsList, numDevices, flags));\n}",
        "CUDART_VERSION < 13000",
    )
    # Graph edges carry edge data since CUDA 13 (NULL: plain edges).
    for old, new in (
        (
            "cudaGraphAddDependencies(graph, from, to, numDependencies)",
            "cudaGraphAddDependencies(graph, from, to, NULL, numDependencies)",
        ),
        (
            "cudaGraphRemoveDependencies(graph, from, to, numDependencies)",
            "cudaGraphRemoveDependencies(graph, from, to, NULL, numDependencies)",
        ),
        (
            "cudaGraphGetEdges(graph, from, to, numEdges)",
            "cudaGraphGetEdges(graph, from, to, NULL, numEdges)",
        ),
        (
            "cudaGraphNodeGetDependencies(node, pDependencies, pNumDependencies)",
            "cudaGraphNodeGetDependencies(node, pDependencies, NULL, pNumDependencies)",
        ),
        (
            "cudaGraphNodeGetDependentNodes(node, pDependentNodes, pNumDependentNodes)",
            "cudaGraphNodeGetDependentNodes(node, pDependentNodes, NULL, pNumDependentNodes)",
        ),
        (
            "cudaStreamUpdateCaptureDependencies(stream, dependencies,\n"
            "                                                                      numDependencies, flags)",
            "cudaStreamUpdateCaptureDependencies(stream, dependencies, NULL,\n"
            "                                                                      numDependencies, flags)",
        ),
        (
            "cudaStreamGetCaptureInfo_v2(\n"
            "        stream, captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out)",
            "cudaStreamGetCaptureInfo(\n"
            "        stream, captureStatus_out, id_out, graph_out, dependencies_out, NULL, numDependencies_out)",
        ),
    ):
        text = _replace(
            text, old, f"\n#if {NEW}\n        {new}\n#else\n        {old}\n#endif\n        "
        )
    return text


def main() -> int:
    source = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/include/hip")
    original = (source / HEADER).read_text()
    lines = difflib.unified_diff(
        original.splitlines(keepends=True),
        patched(original).splitlines(keepends=True),
        fromfile=f"a/{HEADER}",
        tofile=f"b/{HEADER}",
    )
    target = Path(__file__).resolve().parents[1] / "migrator/data/hip_nvidia/cuda13.patch"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines))
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
