#pragma once
// Tensor cores behind the team pattern: a warp's WM x WN tile of C held as 16x16 fp32
// accumulator fragments and multiplied from fp16 scratch slabs with WMMA (CUDA, Volta and
// newer). Spaces without tensor cores say so (TensorCores<>::available) and never run it.
#include <Kokkos_Core.hpp>

#include "kgemm/spaces/compat.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_fp16.h>
#include <mma.h>
#endif

namespace kgemm {

template <class ExecSpace>
struct TensorCores {
  static constexpr bool available = false;
};

#if defined(KOKKOS_ENABLE_CUDA)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
#define KGEMM_WMMA 1
#endif

// The warp's tile of C at (row0, col0) of the block. A slab: row-major rows of the block
// (element (i, k) at i * ld_a + k); B slab: row-major K rows (element (k, j) at k * ld_b + j).
// Leading dimensions are multiples of 8 and fragment starts 32-byte aligned, as WMMA requires.
template <int WM, int WN>
struct WarpTile {
  static constexpr int FM = WM / 16, FN = WN / 16;
#if defined(KGEMM_WMMA)
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#endif

  KOKKOS_INLINE_FUNCTION void zero() {
#if defined(KGEMM_WMMA)
    #pragma unroll
    for (int i = 0; i < FM; ++i)
      #pragma unroll
      for (int j = 0; j < FN; ++j) nvcuda::wmma::fill_fragment(acc[i][j], 0.0f);
#else
    unsupported();
#endif
  }

  // acc += A[row0 : row0 + WM, 0 : depth] * B[0 : depth, col0 : col0 + WN]; depth % 16 == 0.
  KOKKOS_INLINE_FUNCTION void multiply(const half* a_slab, int ld_a, const half* b_slab, int ld_b, int row0,
                                       int col0, int depth) {
#if defined(KGEMM_WMMA)
    using namespace nvcuda;
    const __half* a = reinterpret_cast<const __half*>(a_slab);
    const __half* b = reinterpret_cast<const __half*>(b_slab);
    for (int k = 0; k < depth; k += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[FN];
      #pragma unroll
      for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(fa[i], a + (row0 + 16 * i) * ld_a + k, ld_a);
      #pragma unroll
      for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(fb[j], b + k * ld_b + col0 + 16 * j, ld_b);
      #pragma unroll
      for (int i = 0; i < FM; ++i)
        #pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
#else
    (void)a_slab, (void)ld_a, (void)b_slab, (void)ld_b, (void)row0, (void)col0, (void)depth;
    unsupported();
#endif
  }

  // Calls f(i, j, value) for every element of the tile, the warp's lanes sharing the work;
  // fragments pass through `staging` (256 floats private to the warp) to get their coordinates.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_element(float* staging, int lane, F&& f) const {
#if defined(KGEMM_WMMA)
    #pragma unroll
    for (int i = 0; i < FM; ++i)
      #pragma unroll
      for (int j = 0; j < FN; ++j) {
        nvcuda::wmma::store_matrix_sync(staging, acc[i][j], 16, nvcuda::wmma::mem_row_major);
        __syncwarp();
        for (int e = lane; e < 256; e += 32) f(16 * i + e / 16, 16 * j + e % 16, staging[e]);
        __syncwarp();
      }
#else
    (void)staging, (void)lane, (void)f;
    unsupported();
#endif
  }

  KOKKOS_INLINE_FUNCTION static void unsupported() {
    Kokkos::abort("kgemm: tensor-core configs (_tc) need a GPU of compute capability 7.0 or newer");
  }
};

template <>
struct TensorCores<Kokkos::Cuda> {
  static constexpr bool available = true;
  static constexpr int warp = 32;
  static constexpr int fragment = 16;  // m = n = k of one WMMA fragment
  template <int WM, int WN>
  using WarpTile = kgemm::WarpTile<WM, WN>;
};
#endif

}  // namespace kgemm
