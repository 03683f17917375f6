#pragma once
// How a slab pipeline (slab_pipeline.hpp) lays its K slabs out in team scratch, and which
// operands it stages (a kernel loads the other into registers itself).
#include <Kokkos_Core.hpp>

#include "kgemm/spaces/space_traits.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace kgemm {

// Row-major slabs: element (i, k) of the A slab at i * ld_a + k, (k, j) of the B slab at
// k * ld_b + j. On GPUs rows are padded by one copy run (`pad`: bank-conflict-free reads, runs
// stay aligned), B's by BPadRuns runs where a kernel's reads of B need another bank pattern.
template <int BPadRuns = 1>
struct PaddedSlabs {
  static constexpr bool swizzled = false, kernel_copies = false;
  static constexpr bool stages_a = true, stages_b = true;
  static constexpr bool b_in_fragment_k_order = false;
  static constexpr int align = 64;  // regions start on a cache line
  // The team's threads that stage slabs (the first ones): all of them.
  KOKKOS_INLINE_FUNCTION static constexpr int staging_threads(int team) { return team; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_a(int kb, int pad) { return kb + pad; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_b(int nb, int pad) { return nb + BPadRuns * pad; }
  // Elements of a slab of `rows` rows of `cols`, rows `ld` apart.
  KOKKOS_INLINE_FUNCTION static constexpr int slab_elements(int rows, int, int ld) { return rows * ld; }
  KOKKOS_INLINE_FUNCTION static void copies_landed() {}
};

// B alone, in the layout `wgmma` reads (wgmma::SwizzledSlab): MN-major (its rows of k as they
// are) in tiles of 64 columns, each on the 128-byte swizzle's 1024-byte period; ld_b is the tiles'
// row length. A is not staged (the warpgroup kernel loads it into registers). Only whole 16-byte
// runs stage B (run_stager.hpp). Shared memory written by copies is made visible to the tensor
// cores (the async proxy) by each copying thread before the barrier that precedes their reads.
struct WarpgroupSlabs {
  static constexpr bool swizzled = true, kernel_copies = false;
  static constexpr bool stages_a = false, stages_b = true;
  static constexpr bool b_in_fragment_k_order = true;  // as A's fragments are loaded
  static constexpr int align = wgmma::kSwizzleAtomBytes;
  KOKKOS_INLINE_FUNCTION static constexpr int staging_threads(int team) { return team; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_a(int kb, int) { return kb; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_b(int, int) { return wgmma::kTileK; }
  KOKKOS_INLINE_FUNCTION static constexpr int slab_elements(int rows, int cols, int) { return rows * cols; }
  KOKKOS_INLINE_FUNCTION static void copies_landed() {
#if defined(KGEMM_WGMMA)
    wgmma::fence_shared_for_async();
#endif
  }
};

// A alone, in the layout TF32 `wgmma` reads (wgmma::SwizzledSlab): K-major as A is stored, one
// tile of the block's rows, each row a slab's kb = 16 or 32 floats (64 or 128 bytes, the matching
// swizzle), on the 1024-byte period. B is not staged (the 3xTF32 warpgroup kernel loads its
// fragments into registers). Only whole 16-byte runs stage A; copies are made visible to the
// tensor cores as WarpgroupSlabs' are.
struct Tf32WarpgroupSlabs {
  static constexpr bool swizzled = true, kernel_copies = false;
  static constexpr bool stages_a = true, stages_b = false;
  static constexpr bool b_in_fragment_k_order = false;
  static constexpr int align = wgmma::kSwizzleAtomBytes;
  KOKKOS_INLINE_FUNCTION static constexpr int staging_threads(int team) { return team; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_a(int kb, int) { return kb; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_b(int nb, int) { return nb; }
  KOKKOS_INLINE_FUNCTION static constexpr int slab_elements(int rows, int cols, int) { return rows * cols; }
  KOKKOS_INLINE_FUNCTION static void copies_landed() { WarpgroupSlabs::copies_landed(); }
};

// Both operands in the layouts fp16 `wgmma` reads from scratch (the warp-specialized kernel's):
// A K-major as it is stored (the block's rows of kb = 64 fp16, the 128-byte swizzle, one tile),
// B MN-major in tiles of 64 columns as WarpgroupSlabs' but with its rows in K's own order: the
// boxes bulk tensor copies write in the 128-byte swizzle (spaces/: tensor_copy.hpp). The kernel's
// producer copies them itself (the pipeline's slab walk does not: kernel_copies), and the copies
// land through the async proxy the tensor cores read, so no fence follows them.
// Its ring is not bounded by the space's copy groups: a 128 x 128 block's 32 KB buffers, five of
// them beside its staged results, keep three slabs copied ahead; 64 x 64 blocks' 16 KB ones, six.
constexpr int kKernelCopiedMaxSlabBuffers = 6;
// The most slab buffers a kernel's ring compiles on ExecSpace: the space's copy groups bound it
// (SpaceTraits::max_slab_buffers), except where the kernel copies its slabs itself
// (kernel_copies: the warp-specialized kernel, which only spaces with tensor cores compile).
// SlabPipeline asserts it of its layout, launches check a config against it.
template <class ExecSpace>
constexpr int max_slab_buffers(bool kernel_copies) {
  return kernel_copies && TensorCores<ExecSpace>::available ? kKernelCopiedMaxSlabBuffers
                                                            : SpaceTraits<ExecSpace>::max_slab_buffers;
}
struct StagedWarpgroupSlabs {
  static constexpr bool swizzled = true, kernel_copies = true;
  static constexpr bool stages_a = true, stages_b = true;
  static constexpr bool b_in_fragment_k_order = false;
  static constexpr int align = wgmma::kSwizzleAtomBytes;
  KOKKOS_INLINE_FUNCTION static constexpr int ld_a(int kb, int) { return kb; }
  KOKKOS_INLINE_FUNCTION static constexpr int ld_b(int, int) { return wgmma::kTileK; }
  KOKKOS_INLINE_FUNCTION static constexpr int slab_elements(int rows, int cols, int) { return rows * cols; }
};

}  // namespace kgemm
