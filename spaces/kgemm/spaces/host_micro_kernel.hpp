#pragma once
// The host spaces' register-blocked micro-kernel: acc[TM][TN] += a_panel (x) b_panel over kc,
// a_panel k-major (TM values per k, a_step apart from one k to the next), b_panel row-major
// (TN values per k, b_step apart). In fp32 and with TN a multiple of the native SIMD width, the
// tile is held in TM x TN / width vector registers for the whole panel: per k, TN / width
// vector loads of B and TM broadcasts of A feed TM x TN / width fused multiply-adds. The width
// is the compile target's (GCC/Clang vector extensions): 16 floats with AVX-512, 8 with AVX, 4
// with SSE or NEON. Everything else (other element types, narrower tiles, device code, compilers
// without vector extensions) takes the plain loop, which the compiler vectorises as it can.
#include <Kokkos_Core.hpp>
#include <type_traits>

namespace kgemm {

#if !defined(__CUDA_ARCH__) && (defined(__GNUC__) || defined(__clang__))
#define KGEMM_HOST_VECTORS 1
#if defined(__AVX512F__)
constexpr int kHostFloatLanes = 16;
#elif defined(__AVX__)
constexpr int kHostFloatLanes = 8;
#elif defined(__SSE2__) || defined(__ARM_NEON)
constexpr int kHostFloatLanes = 4;
#else
constexpr int kHostFloatLanes = 1;
#endif
// One register of floats; the unaligned, aliasing twin is what panels are read through (B's
// panels are aligned in practice, and unaligned loads of aligned data cost nothing extra).
typedef float HostFloats __attribute__((vector_size(kHostFloatLanes * sizeof(float))));
typedef float HostFloatsInMemory __attribute__((vector_size(kHostFloatLanes * sizeof(float)), aligned(sizeof(float)), may_alias));
#else
#define KGEMM_HOST_VECTORS 0
constexpr int kHostFloatLanes = 1;
#endif

template <class T, int TM, int TN>
struct HostMicroKernel {
  // Whether the tile runs in vector registers on this compile target.
  static constexpr bool kVectors = KGEMM_HOST_VECTORS && kHostFloatLanes > 1 && TN % kHostFloatLanes == 0 &&
                                   std::is_same<T, float>::value;

  KOKKOS_INLINE_FUNCTION static void multiply(T (&acc)[TM][TN], const T* a, int a_step, const T* b, int b_step,
                                              int kc) {
#if KGEMM_HOST_VECTORS
    if constexpr (kVectors) {
      multiply_vectors(acc, a, a_step, b, b_step, kc);
      return;
    }
#endif
    for (int k = 0; k < kc; ++k) {
      const T* a_k = a + k * a_step;
      const T* b_k = b + k * b_step;
      T a_values[TM], b_values[TN];
      for (int ii = 0; ii < TM; ++ii) a_values[ii] = a_k[ii];
      for (int jj = 0; jj < TN; ++jj) b_values[jj] = b_k[jj];
      for (int ii = 0; ii < TM; ++ii)
        for (int jj = 0; jj < TN; ++jj) acc[ii][jj] += a_values[ii] * b_values[jj];
    }
  }

#if KGEMM_HOST_VECTORS
 private:
  static constexpr int kVectorsPerRow = TN / kHostFloatLanes;

  KOKKOS_INLINE_FUNCTION static void multiply_vectors(float (&acc)[TM][TN], const float* a, int a_step, const float* b, int b_step, int kc) {
    HostFloats c[TM][kVectorsPerRow];
#pragma GCC unroll 16
    for (int ii = 0; ii < TM; ++ii)
#pragma GCC unroll 16
      for (int v = 0; v < kVectorsPerRow; ++v)
        c[ii][v] = *reinterpret_cast<const HostFloatsInMemory*>(&acc[ii][v * kHostFloatLanes]);
    for (int k = 0; k < kc; ++k, a += a_step, b += b_step) {
      HostFloats b_k[kVectorsPerRow];
#pragma GCC unroll 16
      for (int v = 0; v < kVectorsPerRow; ++v) b_k[v] = *reinterpret_cast<const HostFloatsInMemory*>(b + v * kHostFloatLanes);
#pragma GCC unroll 16
      for (int ii = 0; ii < TM; ++ii) {
        const float a_ik = a[ii];
#pragma GCC unroll 16
        for (int v = 0; v < kVectorsPerRow; ++v) c[ii][v] += a_ik * b_k[v];
      }
    }
#pragma GCC unroll 16
    for (int ii = 0; ii < TM; ++ii)
#pragma GCC unroll 16
      for (int v = 0; v < kVectorsPerRow; ++v)
        *reinterpret_cast<HostFloatsInMemory*>(&acc[ii][v * kHostFloatLanes]) = c[ii][v];
  }
#endif
};

}  // namespace kgemm
