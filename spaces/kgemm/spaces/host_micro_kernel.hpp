#pragma once
// The host spaces' register-blocked micro-kernel: acc[TM][TN] += a_panel (x) b_panel over kc,
// a_panel TM rows of kc contiguous values (lda apart), b_panel kc rows of TN contiguous values
// (ldb apart). In fp32 and with TN a multiple of 4, the tile is held in TM x TN / width vector
// registers for the whole panel: per k, TN / width vector loads of B and TM broadcasts of A
// (one element of each row) feed TM x TN / width fused multiply-adds. The width is the compile
// target's (GCC/Clang vector extensions: 16 floats with AVX-512, 8 with AVX, 4 with SSE or
// NEON), or a half or a quarter of it where TN needs. Everything else (other element types,
// narrower tiles, device code, compilers without vector extensions) takes the plain loop,
// which the compiler vectorises as it can.
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "kgemm/spaces/host_vector_width.hpp"

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
// Registers of 4, 8 or 16 floats (as wide as the target's go); the unaligned, aliasing twin is
// what panels are read through (B's panels are aligned in practice, and unaligned loads of
// aligned data cost nothing extra).
template <int Lanes>
struct HostFloatVectors {};
#define KGEMM_HOST_FLOAT_VECTORS(LANES)                                                                    \
  template <>                                                                                            \
  struct HostFloatVectors<LANES> {                                                                       \
    typedef float Register __attribute__((vector_size(LANES * sizeof(float))));                          \
    typedef float InMemory __attribute__((vector_size(LANES * sizeof(float)), aligned(sizeof(float)), may_alias)); \
  };
#if defined(__AVX512F__)
KGEMM_HOST_FLOAT_VECTORS(16)
#endif
#if defined(__AVX__)
KGEMM_HOST_FLOAT_VECTORS(8)
#endif
KGEMM_HOST_FLOAT_VECTORS(4)
#undef KGEMM_HOST_FLOAT_VECTORS
#else
#define KGEMM_HOST_VECTORS 0
constexpr int kHostFloatLanes = 1;
#endif
// The micro-tiles were chosen for the build's registers: a kernel compiled for another target
// would hold them in registers of another width.
static_assert(kHostFloatLanes == 1 || 32 * kHostFloatLanes == kHostVectorBits,
              "kgemm's host kernels compiled for another SIMD width than the build's (KGEMM_HOST_VECTOR_BITS)");

// The widest register (the native width, halved down to 4 floats) whose lanes divide a tile
// row of `tn` floats: 8x8 tiles take 8-float registers on AVX-512 rather than the plain loop,
// which the compiler fills with shuffles (docs/gpu-notes.md, "Measurements behind the code"). 1: none.
constexpr int host_tile_lanes(int tn) {
  for (int lanes = kHostFloatLanes; lanes >= 4; lanes /= 2)
    if (tn % lanes == 0) return lanes;
  return 1;
}
// The tile's loops unrolled whole, so its vectors stay in registers (nvcc, which compiles host
// code for CUDA builds, does not know GCC's pragma).
#if defined(__CUDACC__)
#define KGEMM_HOST_UNROLL
#else
#define KGEMM_HOST_UNROLL _Pragma("GCC unroll 16")
#endif

template <class T, int TM, int TN>
struct HostMicroKernel {
  // Whether the tile runs in vector registers on this compile target, and their width.
  static constexpr int kLanes = host_tile_lanes(TN);
  static constexpr bool kVectors = KGEMM_HOST_VECTORS && kLanes > 1 && std::is_same<T, float>::value;

  // c: the tile, rows ldc apart, added to where accumulate holds, else overwritten.
  KOKKOS_INLINE_FUNCTION static void multiply(T* c, int ldc, bool accumulate, const T* a, int lda, const T* b, int ldb,
                                              int kc) {
#if KGEMM_HOST_VECTORS
    if constexpr (kVectors) {
      typename Vectors::Register acc[TM][kVectorsPerRow];
      start_vectors(acc, c, ldc, accumulate);
      multiply_vectors(acc, a, lda, b, ldb, kc);
      KGEMM_HOST_UNROLL
      for (int ii = 0; ii < TM; ++ii)
        KGEMM_HOST_UNROLL
        for (int v = 0; v < kVectorsPerRow; ++v) store(c + ii * ldc + v * kLanes, acc[ii][v]);
      return;
    }
#endif
    T acc[TM][TN];
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) acc[ii][jj] = accumulate ? c[ii * ldc + jj] : T(0);
    multiply_plain(acc, a, lda, b, ldb, kc);
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) c[ii * ldc + jj] = acc[ii][jj];
  }

  // c = alpha * (a_panel x b_panel) + beta * c, rows ldc apart: a tile straight into C, scaled
  // in registers. c is not read where beta == 0 (BLAS convention: NaNs in an unset C never
  // reach the result).
  KOKKOS_INLINE_FUNCTION static void multiply_scaled(T* c, int ldc, float alpha, float beta, const T* a, int lda,
                                                     const T* b, int ldb, int kc) {
#if KGEMM_HOST_VECTORS
    if constexpr (kVectors) {
      typename Vectors::Register acc[TM][kVectorsPerRow];
      start_vectors(acc, c, ldc, false);
      multiply_vectors(acc, a, lda, b, ldb, kc);
      KGEMM_HOST_UNROLL
      for (int ii = 0; ii < TM; ++ii)
        KGEMM_HOST_UNROLL
        for (int v = 0; v < kVectorsPerRow; ++v) {
          float* out = c + ii * ldc + v * kLanes;
          store(out, beta == 0.0f ? alpha * acc[ii][v] : alpha * acc[ii][v] + beta * load(out));
        }
      return;
    }
#endif
    T acc[TM][TN] = {};
    multiply_plain(acc, a, lda, b, ldb, kc);
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) {
        T& out = c[ii * ldc + jj];
        out = T(beta == 0.0f ? alpha * float(acc[ii][jj]) : alpha * float(acc[ii][jj]) + beta * float(out));
      }
  }

 private:
  // acc += a_panel (x) b_panel, element by element (the compiler vectorises what it can).
  KOKKOS_INLINE_FUNCTION static void multiply_plain(T (&acc)[TM][TN], const T* a, int lda, const T* b, int ldb, int kc) {
    for (int k = 0; k < kc; ++k) {
      const T* b_k = b + k * ldb;
      T a_values[TM], b_values[TN];
      for (int ii = 0; ii < TM; ++ii) a_values[ii] = a[ii * lda + k];
      for (int jj = 0; jj < TN; ++jj) b_values[jj] = b_k[jj];
      for (int ii = 0; ii < TM; ++ii)
        for (int jj = 0; jj < TN; ++jj) acc[ii][jj] += a_values[ii] * b_values[jj];
    }
  }

#if KGEMM_HOST_VECTORS
  static constexpr int kVectorsPerRow = TN / kLanes;
  using Vectors = HostFloatVectors<kVectors ? kLanes : 4>;

  // A register's worth of floats at p, read or written unaligned (through InMemory: a type
  // deduced from it would drop its alignment and move aligned).
  KOKKOS_INLINE_FUNCTION static typename Vectors::Register load(const float* p) {
    return *reinterpret_cast<const typename Vectors::InMemory*>(p);
  }
  KOKKOS_INLINE_FUNCTION static void store(float* p, typename Vectors::Register value) {
    *reinterpret_cast<typename Vectors::InMemory*>(p) = value;
  }

  // The vector tile at the start of a panel: the tile c (rows ldc apart) where accumulate
  // holds, else zeros (c not read).
  KOKKOS_INLINE_FUNCTION static void start_vectors(typename Vectors::Register (&acc)[TM][kVectorsPerRow], const float* c,
                                                   int ldc, bool accumulate) {
    KGEMM_HOST_UNROLL
    for (int ii = 0; ii < TM; ++ii)
      KGEMM_HOST_UNROLL
      for (int v = 0; v < kVectorsPerRow; ++v)
        acc[ii][v] = accumulate ? load(c + ii * ldc + v * kLanes) : typename Vectors::Register{};
  }

  // acc += a_panel (x) b_panel with the tile in vector registers.
  KOKKOS_INLINE_FUNCTION static void multiply_vectors(typename Vectors::Register (&acc)[TM][kVectorsPerRow],
                                                      const float* a, int lda, const float* b, int ldb, int kc) {
    for (int k = 0; k < kc; ++k, ++a, b += ldb) {
      typename Vectors::Register b_k[kVectorsPerRow];
      KGEMM_HOST_UNROLL
      for (int v = 0; v < kVectorsPerRow; ++v) b_k[v] = load(b + v * kLanes);
      KGEMM_HOST_UNROLL
      for (int ii = 0; ii < TM; ++ii) {
        const float a_ik = a[ii * lda];
        KGEMM_HOST_UNROLL
        for (int v = 0; v < kVectorsPerRow; ++v) acc[ii][v] += a_ik * b_k[v];
      }
    }
  }
#endif
};

}  // namespace kgemm
