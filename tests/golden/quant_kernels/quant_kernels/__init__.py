"""Int8 weight dequantisation on the GPU, with a lane-layout probe used to pick tile shapes."""

from quant_kernels import _dequant, _lane
from quant_kernels.quantizer import Int8Linear

__all__ = ["Int8Linear", "_dequant", "_lane"]
