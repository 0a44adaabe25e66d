// Dequantise int8 weights with a per-row scale: portable CUDA that hipify maps as it is.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>

__global__ void dequant_rows(const int8_t* q, const half* scale, half* out, int rows, int cols) {
  int row = blockIdx.x;
  for (int col = threadIdx.x; col < cols; col += blockDim.x) {
    float value = static_cast<float>(q[row * cols + col]) * __half2float(scale[row]);
    out[row * cols + col] = __float2half(value);
  }
}

void launch_dequant(const int8_t* q, const half* scale, half* out, int rows, int cols,
                    cudaStream_t stream) {
  dequant_rows<<<rows, 256, 0, stream>>>(q, scale, out, rows, cols);
}
