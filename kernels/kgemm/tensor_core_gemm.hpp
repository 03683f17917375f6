#pragma once
// The tensor-core GEMM kernel (configs ending in "_tc"): the slab pipeline's team pattern, each
// warp of the team owning one tm x tn tile of the block as tensor-core fragments accumulating in
// fp32 (spaces/ provides the fragments: TensorCores, WarpTile). fp16 data is multiplied as it is;
// fp32 data as three TF32 products (3xTF32: fp32-level accuracy), from fp32 slabs whose B rows
// are padded for the tile's reads. Results go from the fragments' registers to C, two adjacent
// columns per store.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "kgemm/slab_pipeline.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

template <class ExecSpace, class Scalar, int WM, int WN, bool Runs, int SlabBuffers>
struct TensorCoreGemm
    : SlabPipeline<ExecSpace, Scalar, Scalar, Runs, SlabBuffers,
                   PaddedSlabs<TensorCores<ExecSpace>::template WarpTile<Scalar, WM, WN>::b_pad_runs>> {
  using Cores = TensorCores<ExecSpace>;
  using Tile = typename Cores::template WarpTile<Scalar, WM, WN>;
  using Pipeline = SlabPipeline<ExecSpace, Scalar, Scalar, Runs, SlabBuffers, PaddedSlabs<Tile::b_pad_runs>>;
  using typename Pipeline::Member;

  int warps_n;  // warp tiles across the block

  TensorCoreGemm(const GemmArgs<Scalar>& a, const Config& c) : Pipeline(a, c, Cores::fragment), warps_n(c.nb / WN) {}

  // The slab buffers are all the scratch: results go from the fragments straight to C.
  std::size_t scratch_bytes() const { return Pipeline::scratch_bytes(0); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& whole_team) const {
    const auto team = this->product_team(whole_team);
    const BlockOrigin at = this->origin(whole_team.league_rank(), team.group);
    char* scratch = this->scratch(whole_team, 0, team.group);
    const int warp = team.team_rank() / Cores::warp;
    const int row0 = (warp / warps_n) * WM, col0 = (warp % warps_n) * WN;

    Tile tile(team.team_rank() % Cores::warp);
    this->for_each_slab(team, scratch, at, [&](const Scalar* a_slab, int lda, const Scalar* b_slab, int ldb, int depth) {
      tile.multiply(a_slab, lda, b_slab, ldb, row0, col0, depth);
    });
    this->template store_results<2>(at, [&](auto&& store) {
      tile.for_each_pair([&](int i, int j, float first, float second) {
        const float run[2] = {first, second};
        store(row0 + i, col0 + j, run);
      });
    });
  }
};

}  // namespace kgemm
