#pragma once
// The portable GEMM kernel: the slab pipeline's team pattern with each thread accumulating
// TM x TN register micro-tiles. Compiled unchanged for every execution space; SpaceTraits
// decides how micro-tiles are laid over the block.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "kgemm/slab_pipeline.hpp"

namespace kgemm {

// Register micro-tiles: each thread accumulates TM x TN products in registers, reading the
// A slab k-major (a column of the block per k) and the B slab row by row.
template <class ExecSpace, class Scalar, class Acc, int TM, int TN>
struct TiledGemm : SlabPipeline<ExecSpace, Scalar, Acc, SlabLayout::ColMajor> {
  using Pipeline = SlabPipeline<ExecSpace, Scalar, Acc, SlabLayout::ColMajor>;
  using typename Pipeline::Member;
  using Traits = SpaceTraits<ExecSpace>;
  static constexpr int RM = Traits::micro_run(TM);
  static constexpr int RN = Traits::micro_run(TN);

  // On GPUs, RM (RN) consecutive scratch values read as one aligned 16-byte access (a quarter of
  // the shared-memory load instructions). Runs start at multiples of their length in rows whose
  // length is a multiple of it, from 64-byte aligned regions, so the alignment holds.
  template <int R>
  struct alignas(sizeof(Acc) * R) Run {
    Acc v[R];
  };
  template <int R>
  KOKKOS_INLINE_FUNCTION static void load_run(const Acc* from, Acc* to) {
    const Run<R> run = *reinterpret_cast<const Run<R>*>(from);
    for (int q = 0; q < R; ++q) to[q] = run.v[q];
  }

  int tiles_m, tiles_n, tiles_per_thread;

  TiledGemm(const GemmArgs<Scalar>& a, const Config& c)
      : Pipeline(a, c, 1), tiles_m(c.mb / c.tm), tiles_n(c.nb / c.tn), tiles_per_thread(c.tiles_per_thread()) {}

  // When threads walk several micro-tiles, the block's partial sums wait in scratch between slabs.
  KOKKOS_INLINE_FUNCTION std::size_t partial_bytes() const {
    return tiles_per_thread > 1 ? std::size_t(this->mb) * this->nb * sizeof(Acc) : 0;
  }
  std::size_t scratch_bytes() const { return Pipeline::scratch_bytes(partial_bytes()); }

  // Row (column) of the block that element ii (jj) of micro-tile row tile_m (column tile_n) maps to.
  KOKKOS_INLINE_FUNCTION int row_of(int tile_m, int ii) const { return ((ii / RM) * tiles_m + tile_m) * RM + ii % RM; }
  KOKKOS_INLINE_FUNCTION int col_of(int tile_n, int jj) const { return ((jj / RN) * tiles_n + tile_n) * RN + jj % RN; }

  // acc += a_slab[k, rows] (x) b_slab[k, cols] for one micro-tile and one k.
  KOKKOS_INLINE_FUNCTION void multiply_step(Acc (&acc)[TM][TN], const Acc* a_slab, const Acc* b_slab, int tile_m,
                                            int tile_n, int k) const {
    const Acc* a_k = a_slab + k * this->ld_a;
    const Acc* b_k = b_slab + k * this->ld_b;
    Acc a[TM], bv[TN];
    if constexpr (Traits::is_gpu) {
      for (int ii = 0; ii < TM; ii += RM) load_run<RM>(a_k + row_of(tile_m, ii), a + ii);
      for (int jj = 0; jj < TN; jj += RN) load_run<RN>(b_k + col_of(tile_n, jj), bv + jj);
    } else {
      // Plain element loads: the host compiler vectorises these (and loses them through load_run,
      // 50 -> 10 GFLOP/s measured on this repository's 2-core AVX-512 machine).
      for (int ii = 0; ii < TM; ++ii) a[ii] = a_k[row_of(tile_m, ii)];
      for (int jj = 0; jj < TN; ++jj) bv[jj] = b_k[col_of(tile_n, jj)];
    }
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) acc[ii][jj] += a[ii] * bv[jj];
  }

  // The whole slab, four k at a time: a fixed-length inner loop the compiler unrolls, so the
  // scratch loads of the next k are issued before the multiplies of this one.
  KOKKOS_INLINE_FUNCTION void multiply(Acc (&acc)[TM][TN], const Acc* a_slab, const Acc* b_slab,
                                       int tile_m, int tile_n, int kc) const {
    constexpr int kUnroll = Traits::is_gpu ? 4 : 1;
    int k = 0;
    for (; k + kUnroll <= kc; k += kUnroll)
      for (int u = 0; u < kUnroll; ++u) multiply_step(acc, a_slab, b_slab, tile_m, tile_n, k + u);
    for (; k < kc; ++k) multiply_step(acc, a_slab, b_slab, tile_m, tile_n, k);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const BlockOrigin at = this->origin(team);
    char* scratch = this->scratch(team, partial_bytes());
    Acc* partial = this->template extra<Acc>(scratch);
    const bool in_registers = tiles_per_thread == 1;
    const int tiles = tiles_m * tiles_n;

    Acc acc[TM][TN];
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) acc[ii][jj] = Acc(0);
    bool first = true;
    this->for_each_slab(team, scratch, at, [&](const Acc* a_slab, const Acc* b_slab, int kc) {
      for (int t = team.team_rank(); t < tiles; t += team.team_size()) {
        const int tile_m = t / tiles_n, tile_n = t % tiles_n;
        if (!in_registers) load_partial(acc, partial, tile_m, tile_n, first);
        multiply(acc, a_slab, b_slab, tile_m, tile_n, kc);
        if (!in_registers) store_partial(acc, partial, tile_m, tile_n);
      }
      first = false;
    });

    for (int t = team.team_rank(); t < tiles; t += team.team_size()) {
      const int tile_m = t / tiles_n, tile_n = t % tiles_n;
      if (!in_registers) load_partial(acc, partial, tile_m, tile_n, first);
      for (int ii = 0; ii < TM; ++ii)
        for (int jj = 0; jj < TN; ++jj) this->store(at, row_of(tile_m, ii), col_of(tile_n, jj), float(acc[ii][jj]));
    }
    this->finish_block(team, at);
  }

  KOKKOS_INLINE_FUNCTION void load_partial(Acc (&acc)[TM][TN], const Acc* partial, int tile_m,
                                           int tile_n, bool first) const {
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj)
        acc[ii][jj] = first ? Acc(0) : partial[row_of(tile_m, ii) * this->nb + col_of(tile_n, jj)];
  }
  KOKKOS_INLINE_FUNCTION void store_partial(const Acc (&acc)[TM][TN], Acc* partial, int tile_m,
                                            int tile_n) const {
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj)
        partial[row_of(tile_m, ii) * this->nb + col_of(tile_n, jj)] = acc[ii][jj];
  }
};

}  // namespace kgemm
