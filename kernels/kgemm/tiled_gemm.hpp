#pragma once
// The one GEMM pattern: a Kokkos team per MB x NB block of C, K walked in KB-deep slabs staged
// in team scratch, each thread accumulating TM x TN register micro-tiles. Compiled unchanged
// for every execution space; SpaceTraits decides how micro-tiles are laid over the block.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "kgemm/config.hpp"
#include "kgemm/matrix_ref.hpp"
#include "kgemm/spaces/space_traits.hpp"

namespace kgemm {

// Launch geometry derived from a Config and the problem's extents.
struct TileGrid {
  int mb, nb, kb, team;
  int tiles_m, tiles_n, tiles_per_thread;
  int blocks_m, blocks_n;
  int ld_a, ld_b;  // scratch row lengths (padded on GPUs)

  TileGrid(const Config& c, int M, int N, int pad)
      : mb(c.mb), nb(c.nb), kb(c.kb), team(c.team),
        tiles_m(c.mb / c.tm), tiles_n(c.nb / c.tn), tiles_per_thread(c.tiles_per_thread()),
        blocks_m((M + c.mb - 1) / c.mb), blocks_n((N + c.nb - 1) / c.nb),
        ld_a(c.mb + pad), ld_b(c.nb + pad) {}
};

template <class ExecSpace, class Scalar, class Acc, int TM, int TN>
struct TiledGemm {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using Traits = SpaceTraits<ExecSpace>;
  static constexpr int RM = Traits::micro_run(TM);
  static constexpr int RN = Traits::micro_run(TN);
  static constexpr int kAlign = 64;  // scratch regions start on a cache line

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

  GemmArgs<Scalar> args;
  TileGrid grid;

  TiledGemm(const GemmArgs<Scalar>& a, const Config& c)
      : args(a), grid(c, a.M(), a.N(), Traits::scratch_pad) {}

  // Scratch per team: the A slab (KB x MB, k-major), the B slab (KB x NB) and, when threads
  // walk several micro-tiles, the block's partial sums between slabs.
  // The regions are carved out of one allocation: offsets from a single scratch pointer let
  // the CUDA compiler see every access is to shared memory (LDS/STS rather than generic loads).
  KOKKOS_INLINE_FUNCTION static std::size_t region_elements(std::size_t elements) {
    constexpr std::size_t per_line = kAlign / sizeof(Acc);
    return (elements + per_line - 1) / per_line * per_line;
  }
  KOKKOS_INLINE_FUNCTION std::size_t a_elements() const { return region_elements(std::size_t(grid.kb) * grid.ld_a); }
  KOKKOS_INLINE_FUNCTION std::size_t b_elements() const { return region_elements(std::size_t(grid.kb) * grid.ld_b); }
  KOKKOS_INLINE_FUNCTION std::size_t scratch_elements() const {
    return a_elements() + b_elements() + (grid.tiles_per_thread > 1 ? std::size_t(grid.mb) * grid.nb : 0);
  }
  std::size_t scratch_bytes() const { return scratch_elements() * sizeof(Acc) + kAlign; }  // + alignment slack
  int league_size() const { return grid.blocks_m * grid.blocks_n * args.batch; }

  // Row (column) of the block that element ii (jj) of micro-tile row tile_m (column tile_n) maps to.
  KOKKOS_INLINE_FUNCTION int row_of(int tile_m, int ii) const {
    return ((ii / RM) * grid.tiles_m + tile_m) * RM + ii % RM;
  }
  KOKKOS_INLINE_FUNCTION int col_of(int tile_n, int jj) const {
    return ((jj / RN) * grid.tiles_n + tile_n) * RN + jj % RN;
  }

  // Visits (o, i) for o < outer, i < inner with the flat index o * inner + i dealt round-robin
  // to the team's threads, so neighbouring threads touch neighbouring i (coalesced on GPUs).
  // The walk is incremental: no integer division per element, which would cost more than the
  // multiply itself. One-thread teams (CPUs) get plain nested loops the compiler vectorises.
  template <class F>
  KOKKOS_INLINE_FUNCTION static void team_for_2d(const Member& team, int outer, int inner, F&& f) {
    const int step = team.team_size();
    if (step == 1) {
      for (int o = 0; o < outer; ++o)
        for (int i = 0; i < inner; ++i) f(o, i);
      return;
    }
    const int step_o = step / inner, step_i = step % inner;
    int o = team.team_rank() / inner, i = team.team_rank() % inner;
    while (o < outer) {
      f(o, i);
      o += step_o;
      i += step_i;
      if (i >= inner) i -= inner, ++o;
    }
  }

  // Copies op(A)[m0:m0+MB, k0:k0+kc] into a_slab[k][i], zero-filling rows past M, walking A's
  // unit-stride dimension fastest.
  KOKKOS_INLINE_FUNCTION void stage_a(const Member& team, Acc* a_slab, int b, int m0, int k0,
                                      int kc) const {
    const auto& A = args.A;
    auto copy = [&](int i, int k) {
      a_slab[k * grid.ld_a + i] = m0 + i < A.rows ? Acc(A(b, m0 + i, k0 + k)) : Acc(0);
    };
    if (A.col_stride == 1)
      team_for_2d(team, grid.mb, kc, copy);
    else
      team_for_2d(team, kc, grid.mb, [&](int k, int i) { copy(i, k); });
  }
  KOKKOS_INLINE_FUNCTION void stage_b(const Member& team, Acc* b_slab, int b, int n0, int k0,
                                      int kc) const {
    const auto& B = args.B;
    auto copy = [&](int k, int j) {
      b_slab[k * grid.ld_b + j] = n0 + j < B.cols ? Acc(B(b, k0 + k, n0 + j)) : Acc(0);
    };
    if (B.col_stride == 1)
      team_for_2d(team, kc, grid.nb, copy);
    else
      team_for_2d(team, grid.nb, kc, [&](int j, int k) { copy(k, j); });
  }

  // acc += a_slab[k, rows] (x) b_slab[k, cols] for one micro-tile and one k.
  KOKKOS_INLINE_FUNCTION void multiply_step(Acc (&acc)[TM][TN], const Acc* a_slab, const Acc* b_slab, int tile_m,
                                            int tile_n, int k) const {
    const Acc* a_k = a_slab + k * grid.ld_a;
    const Acc* b_k = b_slab + k * grid.ld_b;
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
    const int blocks = grid.blocks_m * grid.blocks_n;
    const int b = team.league_rank() / blocks;
    const int block = team.league_rank() % blocks;
    // Consecutive teams walk down M, so they share one B panel while it is hot in cache.
    const int m0 = (block % grid.blocks_m) * grid.mb;
    const int n0 = (block / grid.blocks_m) * grid.nb;
    const int K = args.K();

    const int level = Traits::scratch_level;  // a copy: device code cannot bind the static member
    auto& scratch = team.team_scratch(level);
    Acc* a_slab = Traits::in_scratch(static_cast<Acc*>(scratch.get_shmem_aligned(scratch_elements() * sizeof(Acc), kAlign)));
    Acc* b_slab = a_slab + a_elements();
    const bool in_registers = grid.tiles_per_thread == 1;
    Acc* partial = b_slab + b_elements();

    const int tiles = grid.tiles_m * grid.tiles_n;
    Acc acc[TM][TN];
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) acc[ii][jj] = Acc(0);

    for (int k0 = 0; k0 < K; k0 += grid.kb) {
      const int kc = K - k0 < grid.kb ? K - k0 : grid.kb;
      stage_a(team, a_slab, b, m0, k0, kc);
      stage_b(team, b_slab, b, n0, k0, kc);
      team.team_barrier();
      for (int t = team.team_rank(); t < tiles; t += team.team_size()) {
        const int tile_m = t / grid.tiles_n, tile_n = t % grid.tiles_n;
        if (!in_registers) load_partial(acc, partial, tile_m, tile_n, k0 == 0);
        multiply(acc, a_slab, b_slab, tile_m, tile_n, kc);
        if (!in_registers) store_partial(acc, partial, tile_m, tile_n);
      }
      team.team_barrier();
    }

    for (int t = team.team_rank(); t < tiles; t += team.team_size()) {
      const int tile_m = t / grid.tiles_n, tile_n = t % grid.tiles_n;
      if (!in_registers) load_partial(acc, partial, tile_m, tile_n, K == 0);
      write_c(acc, b, m0, n0, tile_m, tile_n);
    }
  }

  KOKKOS_INLINE_FUNCTION void load_partial(Acc (&acc)[TM][TN], const Acc* partial, int tile_m,
                                           int tile_n, bool first) const {
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj)
        acc[ii][jj] = first ? Acc(0) : partial[row_of(tile_m, ii) * grid.nb + col_of(tile_n, jj)];
  }
  KOKKOS_INLINE_FUNCTION void store_partial(const Acc (&acc)[TM][TN], Acc* partial, int tile_m,
                                            int tile_n) const {
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj)
        partial[row_of(tile_m, ii) * grid.nb + col_of(tile_n, jj)] = acc[ii][jj];
  }

  // C = alpha * acc + beta * C on the part of the micro-tile inside C. C is not read when
  // beta == 0 (BLAS convention), so NaNs in an uninitialised C never leak into the result.
  KOKKOS_INLINE_FUNCTION void write_c(const Acc (&acc)[TM][TN], int b, int m0, int n0, int tile_m,
                                      int tile_n) const {
    const auto& C = args.C;
    for (int ii = 0; ii < TM; ++ii) {
      const int i = m0 + row_of(tile_m, ii);
      if (i >= C.rows) continue;
      for (int jj = 0; jj < TN; ++jj) {
        const int j = n0 + col_of(tile_n, jj);
        if (j >= C.cols) continue;
        float value = args.alpha * float(acc[ii][jj]);
        if (args.beta != 0.0f) value += args.beta * float(C(b, i, j));
        C(b, i, j) = Scalar(value);
      }
    }
  }
};

}  // namespace kgemm
