"""ROC609 (kernel-runtime-compiler): C/C++ that compiles kernels at run time with the CUDA
toolkit: ``nvcc``/``ptxas``/``cuobjdump`` run as programs, or NVRTC (``nvrtcCompileProgram``)."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

_PROGRAM = re.compile(r"^(?:.*/)?(nvcc|ptxas|cuobjdump|nvdisasm|fatbinary|nvlink)(?:\s|$)")
_NVRTC_CALL = re.compile(r"^nvrtc(CompileProgram|CreateProgram)$")


class KernelRuntimeCompiler(KernelRule):
    """
    ## What it does
    Flags, in C/C++/CUDA sources, code that compiles kernels at run time with the CUDA
    toolkit: a string naming `nvcc`, `ptxas`, `cuobjdump`, `nvdisasm`, `fatbinary` or `nvlink`
    as a program (`cuda_home / "bin" / "nvcc"`, `"cuobjdump --dump-sass ..."`), and calls of
    NVRTC (`nvrtcCreateProgram`, `nvrtcCompileProgram`); one finding per file.

    ## Why it breaks on ROCm
    A ROCm machine has none of these programs: a JIT that shells out to them fails the first
    time it compiles a kernel. hipify renames the NVRTC calls to hiprtc, but the options the
    project passes (`--gpu-architecture=sm_90a`) and the CUDA source it generates are
    NVIDIA's, so the run-time compile still fails or builds nothing for AMD.

    ## Example
    ```cpp
    const auto nvcc = cuda_home / "bin" / "nvcc";
    std::system((nvcc.string() + " -cubin -arch=sm_90a kernel.cu").c_str());
    ```

    ## Manual migration
    Compile with hiprtc (`hiprtcCompileProgram`) or hipcc on ROCm, for the AMD targets
    (`--offload-arch=gfx942`), from HIP source; generate kernels that HIP compiles.

    ## References
    - HIP runtime compiler (RTC): <https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_rtc.html>
    """

    code = "ROC609"
    name = "kernel-runtime-compiler"
    category = "cuda-extension"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", blocker=True, aggregate="file", effort_hours=16.0)
    message = "compiles kernels at run time with the CUDA toolkit, which ROCm lacks"
    fact = "§7 run time compiled kernels row; [HR1]"
    parsing = Parsing(
        triggers=("nvcc", "ptxas", "cuobjdump", "nvdisasm", "fatbinary", "nvlink", "nvrtc")
    )
    valid = [
        Valid("// compile with nvcc -c k.cu\n__global__ void k() {}\n", path="k.cu"),
        Valid('const char* help = "built with the nvcc of CUDA 12";\n', path="info.cpp"),
    ]
    invalid = [
        Invalid(
            "#include <filesystem>\nauto compiler_path(std::filesystem::path home) {\n"
            '    return home / "bin" / "nvcc";\n}\n',
            path="csrc/jit/compiler.hpp",
            line=3,
        ),
        Invalid(
            "#include <nvrtc.h>\nvoid build(nvrtcProgram p, const char** o) {\n"
            "    nvrtcCompileProgram(p, 2, o);\n}\n",
            path="jit.cpp",
            line=3,
        ),
    ]

    def check(self) -> None:
        source = self.view.source
        for node in source.nodes("string_literal", "raw_string_literal"):
            text = source.text(node.start_byte, node.end_byte).strip('"').strip()
            if text.startswith(('R"(', 'u8"')):
                continue
            match = _PROGRAM.match(text)
            if match is None:
                continue
            self.report_bytes(
                (node.start_byte, node.end_byte),
                message=f"runs `{match.group(1)}` at run time, a CUDA toolkit program a ROCm "
                "machine lacks: compile with hiprtc or hipcc for the AMD targets "
                "(`--offload-arch=gfx942`) from HIP source",
            )
        for node in source.nodes("call_expression"):
            function = node.child_by_field_name("function")
            if function is None or function.type != "identifier":
                continue
            name = source.text(function.start_byte, function.end_byte)
            if _NVRTC_CALL.match(name):
                self.report_bytes(
                    (node.start_byte, node.end_byte),
                    message=f"compiles kernels at run time with NVRTC (`{name}`): hipify renames "
                    "it to hiprtc, but the options (`-arch=sm_XX`) and the source it compiles "
                    "must be HIP's for AMD targets",
                )
