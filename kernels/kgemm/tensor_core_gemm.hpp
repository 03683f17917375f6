#pragma once
// The tensor-core GEMM kernel (configs ending in "_tc"): the slab pipeline's team pattern with
// fp16 slabs, each warp of the team owning one tm x tn tile of the block as tensor-core
// fragments accumulating in fp32 (spaces/ provides the fragments: TensorCores, WarpTile).
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "kgemm/slab_pipeline.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

template <class ExecSpace, int WM, int WN>
struct TensorCoreGemm : SlabPipeline<ExecSpace, half, half, SlabLayout::RowMajor> {
  using Pipeline = SlabPipeline<ExecSpace, half, half, SlabLayout::RowMajor>;
  using typename Pipeline::Member;
  using Cores = TensorCores<ExecSpace>;
  static constexpr int kStaging = Cores::fragment * Cores::fragment;  // floats per warp for the epilogue

  int warps_n;  // warp tiles across the block

  TensorCoreGemm(const GemmArgs<half>& a, const Config& c)
      : Pipeline(a, c, Cores::fragment), warps_n(c.nb / WN) {}

  // The epilogue's staging reuses the slab buffers (the K loop is over by then); only what
  // does not fit there is extra scratch.
  KOKKOS_INLINE_FUNCTION std::size_t extra_bytes() const {
    const std::size_t staging = std::size_t(this->mb / WM) * warps_n * kStaging * sizeof(float);
    return staging > this->slab_bytes() ? staging - this->slab_bytes() : 0;
  }
  std::size_t scratch_bytes() const { return Pipeline::scratch_bytes(extra_bytes()); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& whole_team) const {
    const auto team = this->product_team(whole_team);
    const BlockOrigin at = this->origin(whole_team, team.group);
    char* scratch = this->scratch(whole_team, extra_bytes(), team.group);
    const int warp = team.team_rank() / Cores::warp, lane = team.team_rank() % Cores::warp;
    const int row0 = (warp / warps_n) * WM, col0 = (warp % warps_n) * WN;

    typename Cores::template WarpTile<WM, WN> tile;
    tile.zero();
    this->for_each_slab(team, scratch, at, [&](const half* a_slab, const half* b_slab, int depth) {
      tile.multiply(a_slab, this->ld_a, b_slab, this->ld_b, row0, col0, depth);
    });
    team.team_barrier();  // every warp is done with the slabs its staging now overwrites
    float* staging = reinterpret_cast<float*>(scratch) + warp * kStaging;
    tile.for_each_element(staging, lane, [&](int i, int j, float value) { this->store(at, row0 + i, col0 + j, value); });
    this->finish_block(whole_team, at);
  }
};

}  // namespace kgemm
