"""A small quantised-inference package with two CUDA extensions (a bundled fixture of
`migrate`): a portable dequantisation kernel and a lane-id kernel written in inline PTX."""

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
    ],
    cmdclass={"build_ext": BuildExtension},
)
