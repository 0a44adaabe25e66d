// Each thread records its lane id, read from the PTX special register: NVIDIA-only assembly.
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned lane_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  return id;
}

__global__ void record_lanes(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = lane_id();
}

void launch_record_lanes(unsigned* out, int n, cudaStream_t stream) {
  record_lanes<<<(n + 255) / 256, 256, 0, stream>>>(out, n);
}
