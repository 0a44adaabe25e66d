// A tile of an fp16 GEMM on tensor cores, in PTX. Under hipcc `__CUDA_ARCH__` is never
// defined, so the kernel body is the `#else` branch: a message, no code.
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void mma_tile(const unsigned* a, const unsigned* b, float* c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a[2 * threadIdx.x]), "r"(a[2 * threadIdx.x + 1]), "r"(b[threadIdx.x]));
  float* out = c + 4 * threadIdx.x;
  out[0] = d0;
  out[1] = d1;
  out[2] = d2;
  out[3] = d3;
#else
#pragma message("mma_tile needs tensor cores (sm_75 or newer)")
#endif
}

void launch_mma_tile(const unsigned* a, const unsigned* b, float* c, cudaStream_t stream) {
  mma_tile<<<1, 32, 0, stream>>>(a, b, c);
}
