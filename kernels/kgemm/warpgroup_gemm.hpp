#pragma once
// The warpgroup GEMM kernel (configs ending in "_wg": fp16 data, fp32 accumulation, Hopper's
// `wgmma`): the slab pipeline's team pattern with only B staged, as 16-byte runs into the
// swizzled tiles `wgmma` reads (WarpgroupSlabs); each warpgroup of four warps owns one 64 x WN
// tile of the block (tm x tn = 64 x WN) in registers and multiplies it 16 k at a time by single
// instructions (spaces/: WarpgroupTile), A from registers: each thread loads its own fragments
// of A straight from global memory as 16-byte runs (the slab's k in wgmma::FragmentKOrder, B's
// rows staged in the same order), a slab ahead of the one multiplied, so that team
// scratch (47 KB under Kokkos 4.6) holds B's slabs alone: 128 x 128 blocks on 64-deep slabs,
// two buffers, take 33 KB. Results go from the registers to C two adjacent columns per store,
// as the warp-tile kernel's do.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kgemm/packed.hpp"
#include "kgemm/slab_pipeline.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

template <class ExecSpace, int WN, int SlabBuffers>
struct WarpgroupGemm : SlabPipeline<ExecSpace, half, half, true, SlabBuffers, WarpgroupSlabs> {
  using Cores = TensorCores<ExecSpace>;
  using Tile = typename Cores::template GroupTile<WN>;
  using Pipeline = SlabPipeline<ExecSpace, half, half, true, SlabBuffers, WarpgroupSlabs>;
  using typename Pipeline::Member;
  // 64 x 128 tiles hold 64 accumulators a thread; uncapped, they take more than 128 registers
  // (docs/gpu-notes.md, 11-25 (wgmma)), which leaves one 256-thread team per multiprocessor;
  // capped at 128, two fit. Teams of up to 512.
  using LaunchPolicy = std::conditional_t<WN == 128, BoundedTeamPolicy<ExecSpace, 512, 1>, KernelTeamPolicy<ExecSpace>>;
  using Fragments = unsigned[Tile::max_steps][4];

  int groups_n;  // warpgroup tiles across the block

  WarpgroupGemm(const GemmArgs<half>& a, const Config& c) : Pipeline(a, c, wgmma::kInstructionK), groups_n(c.nb / WN) {}

  // Whether the call's B stages as runs into the swizzled tiles (the only way it can) and A's
  // rows hold the threads' runs of k as aligned 16-byte (8-byte) loads.
  static bool applies(const GemmArgs<half>& a, const Config& c) {
    const auto& A = a.A;
    constexpr int kRun = 16 / int(sizeof(half));
    const bool runs = A.col_stride == 1 && reinterpret_cast<std::uintptr_t>(A.data) % 16 == 0 &&
                      A.row_stride % kRun == 0 && A.batch_stride % kRun == 0;
    return runs && Pipeline::runs_apply(a, c);
  }

  std::size_t scratch_bytes() const { return Pipeline::scratch_bytes(0); }

  // This thread's fragments of A for slab `slab`. In the slab's fragment K order each of its two
  // rows gives one run of 4 steps elements: read as 16-byte loads, two steps each, where steps is
  // even, as 8-byte ones otherwise (a run of 12 starts only 8-byte aligned). A row's run that lies
  // inside A is read without a test per load; zeros past A's rows and past K, and only a run that
  // crosses K is read element by element.
  KOKKOS_INLINE_FUNCTION void load_fragments(Fragments& a, const Tile& tile, const BlockOrigin& at, int row0,
                                             int slab) const {
    const auto& A = this->args.A;
    const int steps = this->kb / wgmma::kInstructionK;
    const int k = slab * this->kb + tile.fragment_run_k(steps);
#pragma unroll
    for (int e = 0; e < 2; ++e) {  // the low pairs of register e, the high ones of e + 2: one row
      const int row = at.m0 + row0 + tile.fragment_row(e);
      const int inside = row < A.rows ? A.cols - k : 0;  // elements of the run inside A
      const half* from = A.data + at.b * A.batch_stride + row * A.row_stride + k;
      if (inside >= 4 * steps)
        load_row(a, e, steps, [&](auto& w, int s) { read_run(w, from + 4 * s); });
      else
        load_row(a, e, steps, [&](auto& w, int s) { read_run_zero_filled(w, from + 4 * s, inside - 4 * s); });
    }
  }

  // read(w, s) fills w with the fp16 pairs of steps s (and s + 1, for 4 words) of one row; they go
  // to registers e (low pairs) and e + 2 (high pairs) of those steps.
  template <class Read>
  KOKKOS_INLINE_FUNCTION static void load_row(Fragments& a, int e, int steps, Read&& read) {
    if (steps % 2 == 0) {
#pragma unroll
      for (int s = 0; s < Tile::max_steps; s += 2)
        if (s < steps) {
          unsigned w[4];
          read(w, s);
          a[s][e] = w[0], a[s][e + 2] = w[1], a[s + 1][e] = w[2], a[s + 1][e + 2] = w[3];
        }
    } else {
#pragma unroll
      for (int s = 0; s < Tile::max_steps; ++s)
        if (s < steps) {
          unsigned w[2];
          read(w, s);
          a[s][e] = w[0], a[s][e + 2] = w[1];
        }
    }
  }

  // Words fp16 pairs from `from` (aligned to the run).
  template <int Words>
  KOKKOS_INLINE_FUNCTION static void read_run(unsigned (&w)[Words], const half* from) {
    const Packed<unsigned, Words> run = *reinterpret_cast<const Packed<unsigned, Words>*>(from);
#pragma unroll
    for (int q = 0; q < Words; ++q) w[q] = run.v[q];
  }
  // The same, the elements from `inside` on zeros.
  template <int Words>
  KOKKOS_INLINE_FUNCTION static void read_run_zero_filled(unsigned (&w)[Words], const half* from, int inside) {
    if (inside >= 2 * Words) return read_run(w, from);
    const unsigned short* bits = reinterpret_cast<const unsigned short*>(from);
#pragma unroll
    for (int q = 0; q < Words; ++q)
      w[q] = (2 * q < inside ? unsigned(bits[2 * q]) : 0u) | (2 * q + 1 < inside ? unsigned(bits[2 * q + 1]) << 16 : 0u);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& whole_team) const {
    const auto team = this->product_team(whole_team);
    const BlockOrigin at = this->origin(whole_team.league_rank(), team.group);
    char* scratch = this->scratch(whole_team, 0, team.group);
    const int group = team.team_rank() / Cores::warpgroup;
    const int row0 = group / groups_n * wgmma::kInstructionM, col0 = group % groups_n * WN;

    Tile tile(team.team_rank() % Cores::warpgroup);
    const auto range = this->slab_range(at);
    int slab = range.first;
    const int end = range.end;
    Fragments next;
    if (slab < end) load_fragments(next, tile, at, row0, slab);
    this->for_each_slab(team, scratch, at, [&](const half*, int, const half* b_slab, int, int) {
      Fragments now;
#pragma unroll
      for (int s = 0; s < Tile::max_steps; ++s)
#pragma unroll
        for (int e = 0; e < 4; ++e) now[s][e] = next[s][e];
      if (slab + 1 < end) load_fragments(next, tile, at, row0, slab + 1);
      tile.multiply(now, b_slab, this->kb, col0);
      ++slab;
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
