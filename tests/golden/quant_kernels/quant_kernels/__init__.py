"""Int8 dequantisation on the GPU, a lane-layout probe to pick tile shapes, a tensor-core tile."""

from quant_kernels import _dequant, _lane, _mma
from quant_kernels.quantizer import Int8Linear

__all__ = ["Int8Linear", "_dequant", "_lane", "_mma"]
