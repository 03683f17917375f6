#pragma once
// Tensor cores behind the team pattern: a warp's WM x WN tile of C held in registers as
// 16 x 8 fp32 accumulator tiles, multiplied from fp16 scratch slabs with `ldmatrix` and
// `mma.sync` (CUDA, compute capability 7.5 and newer). Their register layout is documented
// (PTX ISA, "Matrix fragments for mma.m16n8k16"), unlike WMMA's, so results go from the
// registers straight to C two columns at a time. Spaces without tensor cores say so
// (TensorCores<>::available) and never run it.
#include <Kokkos_Core.hpp>

#include "kgemm/spaces/compat.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kgemm/spaces/mma_sync.hpp"
#endif

namespace kgemm {

template <class ExecSpace>
struct TensorCores {
  static constexpr bool available = false;
  static bool on_device() { return false; }
};

#if defined(KOKKOS_ENABLE_CUDA)
// The warp's tile of C at (row0, col0) of the block. A slab: row-major rows of the block
// (element (i, k) at i * ld_a + k); B slab: row-major K rows (element (k, j) at k * ld_b + j).
// Rows start 16-byte aligned (leading dimensions multiples of 8), as ldmatrix requires; with
// an odd number of 16-byte units per row, the eight rows one ldmatrix reads hit distinct banks.
template <int WM, int WN>
struct WarpTile {
  static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tiles are whole 16 x 16 fragments");
  static constexpr int FM = WM / 16, FN = WN / 8;  // 16 x 8 accumulator tiles
  float acc[FM][FN][4];
  int lane;

  KOKKOS_INLINE_FUNCTION explicit WarpTile(int lane_in_warp) : lane(lane_in_warp) {
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  }

  // acc += A[row0 : row0 + WM, 0 : depth] * B[0 : depth, col0 : col0 + WN]; depth % 16 == 0.
  KOKKOS_INLINE_FUNCTION void multiply(const half* a_slab, int ld_a, const half* b_slab, int ld_b, int row0,
                                       int col0, int depth) {
#if defined(KGEMM_MMA)
    // Lane l addresses row l % 16 of a 16 x 16 block: A's matrices are (rows 0-7 | 8-15) x
    // (k 0-7 | 8-15), the a0..a3 of mma's A fragment; B's are (k 0-7 | 8-15) x (columns 0-7 |
    // 8-15), transposed into the b0, b1 of two neighbouring 16 x 8 tiles.
    const unsigned a_lane = detail::shared_address(a_slab + (row0 + lane % 16) * ld_a + lane / 16 * 8);
    const unsigned b_lane = detail::shared_address(b_slab + (lane % 16) * ld_b + col0 + lane / 16 * 8);
    constexpr unsigned kBytes = sizeof(half);
    for (int k = 0; k < depth; k += 16) {
      unsigned a[FM][4], b[FN][2];
#pragma unroll
      for (int i = 0; i < FM; ++i) detail::load_matrices<false>(a[i], a_lane + kBytes * (16 * i * ld_a + k));
#pragma unroll
      for (int j = 0; j < FN; j += 2) {
        unsigned pair[4];
        detail::load_matrices<true>(pair, b_lane + kBytes * (k * ld_b + 8 * j));
        b[j][0] = pair[0], b[j][1] = pair[1], b[j + 1][0] = pair[2], b[j + 1][1] = pair[3];
      }
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) detail::multiply_accumulate(acc[i][j], a[i], b[j]);
    }
#else
    (void)a_slab, (void)ld_a, (void)b_slab, (void)ld_b, (void)row0, (void)col0, (void)depth;
    unsupported();
#endif
  }

  // Calls f(i, j, value_j, value_j+1) for the lane's elements of the tile, two adjacent columns
  // at a time: of a 16 x 8 tile, lane l holds row l / 4 and row l / 4 + 8, columns 2 (l % 4) + 0, 1.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_pair(F&& f) const {
    const int row = lane / 4, col = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        f(16 * i + row, 8 * j + col, acc[i][j][0], acc[i][j][1]);
        f(16 * i + row + 8, 8 * j + col, acc[i][j][2], acc[i][j][3]);
      }
  }

  KOKKOS_INLINE_FUNCTION static void unsupported() {
    Kokkos::abort("kgemm: tensor-core configs (_tc) need a GPU of compute capability 7.5 or newer");
  }
};

template <>
struct TensorCores<Kokkos::Cuda> {
  static constexpr bool available = true;
  static constexpr int warp = 32;
  static constexpr int fragment = 16;  // m = k of one mma; warp tiles are multiples of it
  static constexpr int kMinCapability = 75;
  template <int WM, int WN>
  using WarpTile = kgemm::WarpTile<WM, WN>;
  // Whether the device runs the fragments (ldmatrix, mma.sync m16n8: Turing and newer). Asked
  // once: Kokkos drives one device per process.
  static bool on_device() {
    static const bool capable = [] {
      int id = 0, major = 0, minor = 0;
      return cudaGetDevice(&id) == cudaSuccess &&
             cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, id) == cudaSuccess &&
             cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, id) == cudaSuccess &&
             major * 10 + minor >= kMinCapability;
    }();
    return capable;
  }
};
#endif

}  // namespace kgemm
