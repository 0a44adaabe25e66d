// Type-only stand-in used by `migrate kernels --compile`: the ROCm this check runs on has no
// rocThrust, and PyTorch's complex headers name thrust::complex on HIP. Enough declarations for
// code that includes torch headers to compile; never linked, never run.
#pragma once
namespace thrust {
template <typename T>
struct complex {
  T re_, im_;
  __host__ __device__ complex(const T& re = T(), const T& im = T()) : re_(re), im_(im) {}
  template <typename U>
  __host__ __device__ complex(const complex<U>& other) : re_(other.real()), im_(other.imag()) {}
  __host__ __device__ T real() const { return re_; }
  __host__ __device__ T imag() const { return im_; }
};
#define MIGRATE_THRUST_UNARY(name) \
  template <typename T> __host__ __device__ complex<T> name(const complex<T>& z) { return z; }
MIGRATE_THRUST_UNARY(exp) MIGRATE_THRUST_UNARY(log) MIGRATE_THRUST_UNARY(log10)
MIGRATE_THRUST_UNARY(log2) MIGRATE_THRUST_UNARY(sqrt) MIGRATE_THRUST_UNARY(sin)
MIGRATE_THRUST_UNARY(cos) MIGRATE_THRUST_UNARY(tan) MIGRATE_THRUST_UNARY(asin)
MIGRATE_THRUST_UNARY(acos) MIGRATE_THRUST_UNARY(atan) MIGRATE_THRUST_UNARY(sinh)
MIGRATE_THRUST_UNARY(cosh) MIGRATE_THRUST_UNARY(tanh) MIGRATE_THRUST_UNARY(asinh)
MIGRATE_THRUST_UNARY(acosh) MIGRATE_THRUST_UNARY(atanh) MIGRATE_THRUST_UNARY(log1p)
MIGRATE_THRUST_UNARY(expm1) MIGRATE_THRUST_UNARY(conj) MIGRATE_THRUST_UNARY(proj)
#undef MIGRATE_THRUST_UNARY
template <typename T> __host__ __device__ T abs(const complex<T>& z) { return z.real(); }
template <typename T> __host__ __device__ T arg(const complex<T>& z) { return z.imag(); }
template <typename T> __host__ __device__ T norm(const complex<T>& z) { return z.real(); }
template <typename T> __host__ __device__ complex<T> polar(const T& r, const T& t = T()) { return complex<T>(r, t); }
template <typename T, typename U> __host__ __device__ complex<T> pow(const complex<T>& a, const U&) { return a; }
}  // namespace thrust
