#pragma once
// How a slab pipeline (slab_pipeline.hpp) lays its K slabs out in team scratch.
#include <Kokkos_Core.hpp>

#include "kgemm/spaces/warpgroup_mma.hpp"

namespace kgemm {

// Row-major slabs: element (i, k) of the A slab at i * ld_a + k, (k, j) of the B slab at
// k * ld_b + j. On GPUs rows are padded by one copy run (`pad`: bank-conflict-free reads, runs
// stay aligned), B's by BPadRuns runs where a kernel's reads of B need another bank pattern.
template <int BPadRuns = 1>
struct PaddedSlabs {
  static constexpr bool swizzled = false;
  static constexpr int align = 64;  // regions start on a cache line
  KOKKOS_INLINE_FUNCTION static constexpr int ld_a(int kb, int pad) { return kb + pad; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_b(int nb, int pad) { return nb + BPadRuns * pad; }
  // Elements of a slab of `rows` rows of `cols`, rows `ld` apart.
  KOKKOS_INLINE_FUNCTION static constexpr int slab_elements(int rows, int, int ld) { return rows * ld; }
  // Slabs whose multiplication may still be in flight when the next slab's starts (none: a
  // multiply is done with its slab when it returns).
  KOKKOS_INLINE_FUNCTION static constexpr int multiplies_in_flight(int) { return 0; }
  KOKKOS_INLINE_FUNCTION static void copies_landed() {}
};

// The layouts `wgmma` reads (wgmma::SwizzledSlab): A K-major in tiles of 64 k (kb = 32: one tile
// of 32, 64-byte swizzle), B MN-major (its rows of k as they are) in tiles of 64 columns, every
// tile on the swizzle's 1024-byte period; ld_a and ld_b are the tiles' row lengths. Only whole
// 16-byte runs stage them (run_stager.hpp). Shared memory written by copies is made visible to
// the tensor cores (the async proxy) by each copying thread before the barrier that precedes
// their reads. With three slab buffers or more, a slab's multiplication (asynchronous) is left in
// flight while the next slab's is issued, and the copies run one buffer less ahead.
struct WarpgroupSlabs {
  static constexpr bool swizzled = true;
  static constexpr int align = wgmma::kSwizzleAtomBytes;
  KOKKOS_INLINE_FUNCTION static constexpr int ld_a(int kb, int) { return kb < wgmma::kTileK ? kb : wgmma::kTileK; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_b(int, int) { return wgmma::kTileK; }
  KOKKOS_INLINE_FUNCTION static constexpr int slab_elements(int rows, int cols, int) { return rows * cols; }
  KOKKOS_INLINE_FUNCTION static constexpr int multiplies_in_flight(int slab_buffers) { return slab_buffers >= 3 ? 1 : 0; }
  KOKKOS_INLINE_FUNCTION static void copies_landed() {
#if defined(KGEMM_WGMMA)
    wgmma::fence_shared_for_async();
#endif
  }
};

}  // namespace kgemm
