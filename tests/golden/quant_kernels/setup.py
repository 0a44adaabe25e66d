"""A quantised-inference package with three CUDA extensions (a bundled fixture of `migrate`):
portable dequantisation, a lane id read in PTX, a tensor-core tile with no AMD code."""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="quant-kernels",
    version="0.1.0",
    packages=["quant_kernels"],
    ext_modules=[
        CUDAExtension(
            "quant_kernels._dequant",
            sources=["csrc/dequant_binding.cpp", "csrc/dequant.cu"],
        ),
        CUDAExtension(
            "quant_kernels._lane",
            sources=["csrc/lane_binding.cpp", "csrc/lane_ptx.cu"],
        ),
        CUDAExtension(
            "quant_kernels._mma",
            sources=["csrc/mma_binding.cpp", "csrc/mma_gemm.cu"],
        ),
    ],
    cmdclass={"build_ext": BuildExtension},
)
