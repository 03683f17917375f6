#pragma once
// The fp32 warpgroup GEMM kernel (fp32 data, configs ending in "_wg": 3xTF32 on Hopper's TF32
// `wgmma`, fp32-level accuracy): the slab pipeline's team pattern with only A staged, as 16-byte
// runs into the swizzled K-major rows TF32 `wgmma` reads (Tf32WarpgroupSlabs); each warpgroup of
// four warps owns one 128 x 64 tile of the block and multiplies it as Cᵀ = Bᵀ Aᵀ
// (spaces/: Tf32x3WarpgroupTile). B's fragments come from global memory into registers, each
// thread loading its own a slab ahead of the one multiplied; A's small part (what the tensor
// cores' TF32 reading drops) is written by each thread for the runs it copied, once they land,
// into the kernel's own scratch regions. 128 x 64 blocks on 16-deep slabs take 33 KB of team
// scratch with two slab buffers.
// Results go from the registers to C one element per store: a thread's adjacent results are
// adjacent rows of C.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "kgemm/packed.hpp"
#include "kgemm/slab_pipeline.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

// KB: the slab depth (Config::kb, 16 or 32), fixed at compile time with the tile's steps.
template <class ExecSpace, int SlabBuffers, int KB>
struct WarpgroupTf32x3Gemm : SlabPipeline<ExecSpace, float, float, true, SlabBuffers, Tf32WarpgroupSlabs> {
  using Cores = TensorCores<ExecSpace>;
  static constexpr int kSteps = KB / wgmma::kTf32InstructionK;
  using Tile = typename Cores::template Tf32x3GroupTile<kSteps>;
  using Pipeline = SlabPipeline<ExecSpace, float, float, true, SlabBuffers, Tf32WarpgroupSlabs>;
  using typename Pipeline::Member;
  using Fragments = typename Tile::Fragments;

  int groups_n;  // warpgroup tiles across the block

  // Slabs are staged kb deep, zeros past K, and B's fragments read as zeros there: every slab
  // multiplies kb k.
  WarpgroupTf32x3Gemm(const GemmArgs<float>& a, const Config& c) : Pipeline(a, c, c.kb), groups_n(c.nb / Tile::cols) {}

  // Whether the call's A stages as runs into the swizzled rows (the only way it can); B is read
  // element by element, in any layout.
  static bool applies(const GemmArgs<float>& a, const Config& c) { return Pipeline::runs_apply(a, c); }

  // The slab buffers, then two regions for A's small parts (write_small_parts).
  KOKKOS_INLINE_FUNCTION std::size_t small_part_bytes() const { return 2 * std::size_t(this->mb) * KB * sizeof(float); }
  std::size_t scratch_bytes() const { return Pipeline::scratch_bytes(small_part_bytes()); }

  // Where this thread reads its fragments of B: its two columns (fragment_col), from the row of
  // its first k (fragment_k(0)) of slab 0; the other k of a slab lie 4, 8, ... rows further.
  struct BColumns {
    const float* at[2];
    bool inside[2];  // the column is inside B
    int k_first;     // the k of the first row, from a slab's start
  };
  KOKKOS_INLINE_FUNCTION BColumns b_columns(const Tile& tile, const BlockOrigin& at, int col0) const {
    const auto& B = this->args.B;
    BColumns columns;
    columns.k_first = tile.fragment_k(0);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = at.n0 + col0 + tile.fragment_col(h);
      columns.inside[h] = col < B.cols;
      columns.at[h] = B.data + at.b * B.batch_stride + columns.k_first * B.row_stride + (columns.inside[h] ? col : 0) * B.col_stride;
    }
    return columns;
  }

  // This thread's fragments of B for slab `slab`, zeros past K and past N. Fragment element e of
  // step s lies 8 s + 4 (e / 2) rows below the slab's first in column e % 2. A slab inside B
  // reads without a test per element; the addresses are fixed offsets (the same every slab) from
  // two pointers: through B(b, k, j) each load would work out its address afresh, which made
  // those addresses half the kernel's instructions (docs/gpu-notes.md, s19).
  KOKKOS_INLINE_FUNCTION void load_fragments(Fragments& b, const BColumns& columns, int slab) const {
    const auto& B = this->args.B;
    const std::ptrdiff_t ld = B.row_stride, slab_offset = std::ptrdiff_t(slab) * KB * ld;
    const int k_left = B.rows - slab * KB;  // rows of B from the slab's first
    const float* from[2] = {columns.at[0] + slab_offset, columns.at[1] + slab_offset};
    if (k_left >= KB && columns.inside[0] && columns.inside[1]) {
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int e = 0; e < 4; ++e) b[s][e] = from[e % 2][(8 * s + 4 * (e / 2)) * ld];
    } else {
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int k = columns.k_first + 8 * s + 4 * (e / 2);
          b[s][e] = k < k_left && columns.inside[e % 2] ? from[e % 2][(8 * s + 4 * (e / 2)) * ld] : 0.0f;
        }
    }
  }

  // Slab `slab`'s region of A's small parts (two, by slab parity: write_small_parts).
  KOKKOS_INLINE_FUNCTION float* small_part_of(float* small_parts, int slab) const {
    return small_parts + (slab % 2) * this->mb * KB;
  }
  // The small parts of the runs of A's slab `slab` at `a_slab` that this thread copied itself
  // (its copies have landed), into the slab's small-part region, laid out as the slab. Two
  // regions, by slab parity: a thread writes slab t's before the barrier that publishes slab t,
  // while others may still multiply slab t - 1 from the other region; slab t - 2's was done with
  // before the previous barrier. A pass of the whole team over the slab after that barrier would
  // need a second barrier per slab and addresses of its own.
  template <class Copies>
  KOKKOS_INLINE_FUNCTION void write_small_parts(const Copies& a_copies, const float* a_slab, float* small_parts,
                                                int slab) const {
    float* small = small_part_of(small_parts, slab);
    a_copies.for_each_run(a_slab, [&](const float* run) {
      Packed<float, 4> x = *reinterpret_cast<const Packed<float, 4>*>(run);
#if defined(KGEMM_WGMMA)
#pragma unroll
      for (int q = 0; q < 4; ++q) x.v[q] = wgmma::tf32_truncated_rest(x.v[q]);
#endif
      *reinterpret_cast<Packed<float, 4>*>(small + (run - a_slab)) = x;
    });
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& whole_team) const {
    const auto team = this->product_team(whole_team);
    const BlockOrigin at = this->origin(whole_team.league_rank(), team.group);
    char* scratch = this->scratch(whole_team, small_part_bytes(), team.group);
    float* small_parts = this->template extra<float>(scratch);
    const int group = team.team_rank() / Cores::warpgroup;
    const int row0 = group / groups_n * Tile::rows, col0 = group % groups_n * Tile::cols;

    Tile tile(team.team_rank() % Cores::warpgroup);
    const auto range = this->slab_range(at);
    int slab = range.first;
    const int end = range.end;
    const BColumns columns = b_columns(tile, at, col0);
    Fragments next;
    if (slab < end) load_fragments(next, columns, slab);
    this->for_each_slab(team, scratch, at, [&](const float* a_slab, int, const float*, int, int) {
      Fragments now;
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int e = 0; e < 4; ++e) now[s][e] = next[s][e];
      if (slab + 1 < end) load_fragments(next, columns, slab + 1);
      tile.multiply(now, a_slab, small_part_of(small_parts, slab), row0);
      ++slab;
    }, [&](const auto& a_copies, const float* a_slab, int landed_slab) {
      write_small_parts(a_copies, a_slab, small_parts, landed_slab);
    });
    this->template store_results<1>(at, [&](auto&& store) {
      tile.for_each([&](int i, int j, float value) {
        const float run[1] = {value};
        store(row0 + i, col0 + j, run);
      });
    });
  }
};

}  // namespace kgemm
