#pragma once
// The warpgroup GEMM kernel (configs ending in "_wg": fp16 data, fp32 accumulation, Hopper's
// `wgmma`): the slab pipeline's team pattern with slabs staged as 16-byte runs into the
// swizzled tiles `wgmma` reads (WarpgroupSlabs), each warpgroup of four warps owning one 64 x WN
// tile of the block (tm x tn = 64 x WN) in registers, multiplied 16 k at a time by single
// instructions from shared memory (spaces/: WarpgroupTile); with three slab buffers or more one
// slab's multiplication runs on while the next is issued. Results go from the registers to C
// two adjacent columns per store, as the warp-tile kernel's do.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "kgemm/slab_pipeline.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

template <class ExecSpace, int WN, int SlabBuffers>
struct WarpgroupGemm : SlabPipeline<ExecSpace, half, half, true, SlabBuffers, WarpgroupSlabs> {
  using Cores = TensorCores<ExecSpace>;
  using Tile = typename Cores::template GroupTile<WN>;
  using Pipeline = SlabPipeline<ExecSpace, half, half, true, SlabBuffers, WarpgroupSlabs>;
  using typename Pipeline::Member;
  // 64 x 128 tiles hold 64 accumulators a thread and took 130 - 162 registers, which leaves one
  // 256-thread team per multiprocessor (H100); capped at 128, two fit. Teams of up to 512.
  using LaunchPolicy = std::conditional_t<WN == 128, BoundedTeamPolicy<ExecSpace, 512, 1>, KernelTeamPolicy<ExecSpace>>;

  int groups_n;  // warpgroup tiles across the block

  WarpgroupGemm(const GemmArgs<half>& a, const Config& c) : Pipeline(a, c, wgmma::kInstructionK), groups_n(c.nb / WN) {}

  // Whether the call's operands stage as runs into the swizzled tiles (the only way they can).
  static bool applies(const GemmArgs<half>& a, const Config& c) { return Pipeline::runs_apply(a, c); }

  std::size_t scratch_bytes() const { return Pipeline::scratch_bytes(0); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& whole_team) const {
    const auto team = this->product_team(whole_team);
    const BlockOrigin at = this->origin(whole_team, team.group);
    char* scratch = this->scratch(whole_team, 0, team.group);
    const int group = team.team_rank() / Cores::warpgroup;
    const int row0 = group / groups_n * wgmma::kInstructionM, col0 = group % groups_n * WN;

    Tile tile(team.team_rank() % Cores::warpgroup);
    constexpr int in_flight = WarpgroupSlabs::multiplies_in_flight(SlabBuffers);
    this->for_each_slab(team, scratch, at, [&](const half* a_slab, int lda, const half* b_slab, int, int depth) {
      tile.template multiply<in_flight>(a_slab, this->mb, lda, b_slab, this->kb, row0, col0, depth);
    });
    tile.finish();
    this->template store_results<2>(at, [&](auto&& store) {
      tile.for_each_pair([&](int i, int j, float first, float second) {
        const float run[2] = {first, second};
        store(row0 + i, col0 + j, run);
      });
    });
  }
};

}  // namespace kgemm
