#pragma once
// The portable GEMM kernel: the slab pipeline's team pattern with each thread accumulating
// TM x TN register micro-tiles, as two kernels on one walk of the block (MicroTiledBlock): GPU
// threads reading the A slab in runs of K (GpuTiledGemm), host threads calling the host
// micro-kernel (HostTiledGemm). TiledGemm names the space's own.
#include <Kokkos_Core.hpp>
#include <climits>
#include <cstddef>
#include <type_traits>

#include "kgemm/packed.hpp"
#include "kgemm/slab_pipeline.hpp"
#include "kgemm/spaces/host_micro_kernel.hpp"

namespace kgemm {

// Whether the space's threads read the A slab kTiledKRun k at a time. The slab is K-contiguous
// on every space, as row-major A itself is, so slabs copy in contiguous runs (16 bytes at a time
// on GPUs, vectorised on CPUs) rather than transposing element by element. GPU threads read four
// k of one of their rows in one 16-byte load (the same number of scratch loads as k-major runs
// of four rows): their slabs are staged to a multiple of four and kb must be one
// (launch_impl.hpp checks). The host micro-kernel broadcasts one element per row and k.
template <class ExecSpace>
constexpr bool kTiledReadsKRuns = SpaceTraits<ExecSpace>::is_gpu;
constexpr int kTiledKRun = 4;

// Register micro-tiles: each thread accumulates TM x TN products, reading the B slab row by row.
// What the GPU and host kernels below share: the tiles laid over the block, the block's walk
// over K slabs and its tiles, and the partial block in scratch where threads walk several tiles
// (tiles_per_thread > 1). Kernel (CRTP) says how a tile multiplies a slab and stores its results.
// A thread's rows (columns) come in runs of RM (RN) adjacent ones, interleaved with its
// neighbours' runs.
template <class Kernel, class ExecSpace, class Scalar, class Acc, int TM, int TN, bool Runs, int SlabBuffers, int RunM>
struct MicroTiledBlock : SlabPipeline<ExecSpace, Scalar, Acc, Runs, SlabBuffers> {
  using Pipeline = SlabPipeline<ExecSpace, Scalar, Acc, Runs, SlabBuffers>;
  using typename Pipeline::Member;
  using Traits = SpaceTraits<ExecSpace>;
  static constexpr int RM = RunM;
  static constexpr int RN = Traits::micro_run(TN);

  int tiles_m, tiles_n, tiles_per_thread;

  MicroTiledBlock(const GemmArgs<Scalar>& a, const Config& c, int k_multiple)
      : Pipeline(a, c, k_multiple), tiles_m(c.mb / c.tm), tiles_n(c.nb / c.tn), tiles_per_thread(c.tiles_per_thread()) {}

  // When threads walk several micro-tiles, the block's partial sums wait in scratch between slabs.
  KOKKOS_INLINE_FUNCTION std::size_t partial_bytes() const {
    return tiles_per_thread > 1 ? std::size_t(this->mb) * this->nb * sizeof(Acc) : 0;
  }

  // Row (column) of the block that element ii (jj) of micro-tile row tile_m (column tile_n) maps to.
  KOKKOS_INLINE_FUNCTION int row_of(int tile_m, int ii) const { return ((ii / RM) * tiles_m + tile_m) * RM + ii % RM; }
  KOKKOS_INLINE_FUNCTION int col_of(int tile_n, int jj) const { return ((jj / RN) * tiles_n + tile_n) * RN + jj % RN; }

  // The team's block over its K slabs: a thread with one tile keeps its sums in acc
  // (Kernel::multiply_in_registers), one with several in the partial block
  // (Kernel::multiply_into_partial, `first` on the first slab); then each tile inside C is stored
  // (Kernel::store_tile).
  KOKKOS_INLINE_FUNCTION void multiply_block(const Member& whole_team) const {
    const Kernel& kernel = static_cast<const Kernel&>(*this);
    const auto team = this->product_team(whole_team);
    const BlockOrigin at = this->origin(whole_team.league_rank(), team.group);
    char* scratch = this->scratch(whole_team, partial_bytes(), team.group);
    Acc* partial = this->template extra<Acc>(scratch);
    const bool in_registers = tiles_per_thread == 1;
    const int tiles = tiles_m * tiles_n;

    Acc acc[TM][TN];
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) acc[ii][jj] = Acc(0);
    bool first = true;
    // One micro-tile per thread (GPUs): its position is worked out once, not on every slab.
    const int own_tile_m = team.team_rank() / tiles_n, own_tile_n = team.team_rank() % tiles_n;
    const bool has_tile = team.team_rank() < tiles && kernel.tile_in_c(at, own_tile_m, own_tile_n);
    this->for_each_slab(team, scratch, at, [&](const Acc* a_slab, int lda, const Acc* b_slab, int ldb, int kc) {
      if (in_registers) {
        if (has_tile) kernel.multiply_in_registers(acc, a_slab, lda, b_slab, ldb, own_tile_m, own_tile_n, kc);
        return;
      }
      for (int t = team.team_rank(); t < tiles; t += team.team_size()) {
        const int tile_m = t / tiles_n, tile_n = t % tiles_n;
        if (kernel.tile_in_c(at, tile_m, tile_n))
          kernel.multiply_into_partial(acc, partial, first, a_slab, lda, b_slab, ldb, tile_m, tile_n, kc);
      }
      first = false;
    });

    for (int t = team.team_rank(); t < tiles; t += team.team_size()) {
      const int tile_m = t / tiles_n, tile_n = t % tiles_n;
      if (kernel.tile_in_c(at, tile_m, tile_n)) kernel.store_tile(at, acc, partial, in_registers, first, tile_m, tile_n);
    }
  }
};

// GPUs: a thread reads four k of one of its rows in one 16-byte load. Its rows are single
// (RM = 1): the rows a warp reads together are then adjacent, and with slab rows of kb + 4 words
// (4 x odd) they fall in different bank quads.
template <class ExecSpace, class Scalar, class Acc, int TM, int TN, bool Runs, int SlabBuffers>
struct GpuTiledGemm : MicroTiledBlock<GpuTiledGemm<ExecSpace, Scalar, Acc, TM, TN, Runs, SlabBuffers>, ExecSpace, Scalar,
                                      Acc, TM, TN, Runs, SlabBuffers, 1> {
  using Block = MicroTiledBlock<GpuTiledGemm, ExecSpace, Scalar, Acc, TM, TN, Runs, SlabBuffers, 1>;
  using typename Block::Member;
  using Block::RN;
  using Block::row_of;
  using Block::col_of;

  GpuTiledGemm(const GemmArgs<Scalar>& a, const Config& c) : Block(a, c, kTiledKRun) {}

  std::size_t scratch_bytes() const { return Block::scratch_bytes(this->partial_bytes()); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& whole_team) const { this->multiply_block(whole_team); }

  // R consecutive scratch values read as one aligned 16-byte access. Runs start at multiples of
  // their length in rows whose length is a multiple of it, from 64-byte aligned regions, so the
  // alignment holds.
  template <int R>
  KOKKOS_INLINE_FUNCTION static void load_run(const Acc* from, Acc* to) {
    const Packed<Acc, R> run = *reinterpret_cast<const Packed<Acc, R>*>(from);
    for (int q = 0; q < R; ++q) to[q] = run.v[q];
  }

  // GPU threads work their tiles in step whatever they hold.
  KOKKOS_INLINE_FUNCTION static constexpr bool tile_in_c(const BlockOrigin&, int, int) { return true; }

  // acc += a_slab[rows, k] (x) b_slab[k, cols] over the slab, for one micro-tile; slab rows lda
  // (ldb) apart. Four k per pass: one 16-byte load per row of A, then per k one 16-byte load per
  // run of B.
  KOKKOS_INLINE_FUNCTION void multiply_in_registers(Acc (&acc)[TM][TN], const Acc* a_slab, int lda, const Acc* b_slab,
                                                    int ldb, int tile_m, int tile_n, int kc) const {
    for (int k = 0; k < kc; k += kTiledKRun) {
      Acc a[TM][kTiledKRun];
      for (int ii = 0; ii < TM; ++ii) load_run<kTiledKRun>(a_slab + row_of(tile_m, ii) * lda + k, a[ii]);
      for (int u = 0; u < kTiledKRun; ++u) {
        const Acc* b_k = b_slab + (k + u) * ldb;
        Acc bv[TN];
        for (int jj = 0; jj < TN; jj += RN) load_run<RN>(b_k + col_of(tile_n, jj), bv + jj);
        for (int ii = 0; ii < TM; ++ii)
          for (int jj = 0; jj < TN; ++jj) acc[ii][jj] += a[ii][u] * bv[jj];
      }
    }
  }

  // The tile's partial sums through acc: loaded, multiplied, stored back.
  KOKKOS_INLINE_FUNCTION void multiply_into_partial(Acc (&acc)[TM][TN], Acc* partial, bool first, const Acc* a_slab,
                                                    int lda, const Acc* b_slab, int ldb, int tile_m, int tile_n,
                                                    int kc) const {
    load_partial(acc, partial, tile_m, tile_n, first);
    multiply_in_registers(acc, a_slab, lda, b_slab, ldb, tile_m, tile_n, kc);
    store_partial(acc, partial, tile_m, tile_n);
  }

  // Element by element: storing runs (store_results) costs the 8x8 tile more registers than the
  // fewer stores gain (docs/gpu-notes.md, s7).
  KOKKOS_INLINE_FUNCTION void store_tile(const BlockOrigin& at, Acc (&acc)[TM][TN], const Acc* partial, bool in_registers,
                                         bool first, int tile_m, int tile_n) const {
    if (!in_registers) load_partial(acc, partial, tile_m, tile_n, first);
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) this->store(at, row_of(tile_m, ii), col_of(tile_n, jj), float(acc[ii][jj]));
  }

  KOKKOS_INLINE_FUNCTION void load_partial(Acc (&acc)[TM][TN], const Acc* partial, int tile_m, int tile_n,
                                           bool first) const {
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj)
        acc[ii][jj] = first ? Acc(0) : partial[row_of(tile_m, ii) * this->nb + col_of(tile_n, jj)];
  }
  KOKKOS_INLINE_FUNCTION void store_partial(const Acc (&acc)[TM][TN], Acc* partial, int tile_m, int tile_n) const {
    for (int ii = 0; ii < TM; ++ii)
      for (int jj = 0; jj < TN; ++jj) partial[row_of(tile_m, ii) * this->nb + col_of(tile_n, jj)] = acc[ii][jj];
  }
};

// Host spaces: a micro-tile is a contiguous patch (micro_run: one run each of TM rows and TN
// columns) multiplied by the host micro-kernel, which reads and writes the partial block itself.
template <class ExecSpace, class Scalar, class Acc, int TM, int TN, bool Runs, int SlabBuffers>
struct HostTiledGemm
    : MicroTiledBlock<HostTiledGemm<ExecSpace, Scalar, Acc, TM, TN, Runs, SlabBuffers>, ExecSpace, Scalar, Acc, TM, TN,
                      Runs, SlabBuffers, SpaceTraits<ExecSpace>::micro_run(TM)> {
  using Block = MicroTiledBlock<HostTiledGemm, ExecSpace, Scalar, Acc, TM, TN, Runs, SlabBuffers,
                                SpaceTraits<ExecSpace>::micro_run(TM)>;
  using typename Block::Member;
  using typename Block::Traits;
  using Block::row_of;
  using Block::col_of;
  static constexpr bool kFloat = std::is_same<Scalar, float>::value && std::is_same<Acc, float>::value;

  bool whole_tiles_in_place;  // multiplies_in_place(): every team takes multiply_in_place()

  HostTiledGemm(const GemmArgs<Scalar>& a, const Config& c) : Block(a, c, 1), whole_tiles_in_place(multiplies_in_place(a, c)) {}

  // fp32: where K is one slab (kb >= K) that A and B hold as the micro-kernel reads it
  // (unit-stride rows, B's rows closer than SpaceTraits::in_place_k_row_bytes: the stagers'
  // in-place rule), C's rows are unit-stride and every micro-tile lies wholly inside C or wholly
  // past it (M and N multiples of the tile), a team multiplies each of its tiles straight from A
  // and B into C, scaled in registers (multiply_in_place): nothing to stage, no partial block in
  // scratch, no barrier, no per-team plan. On batches of small products those steps, not the
  // multiply, are most of the time (profile: docs/results.md, "small products multiplied in place").
  static bool multiplies_in_place(const GemmArgs<Scalar>& a, const Config& c) {
    if constexpr (!kFloat) {
      return false;
    } else {
      const auto unit_rows = [](const auto& x) { return x.col_stride == 1 && x.row_stride <= INT_MAX; };
      return split_slabs(c, a.K()).slabs <= 1 && unit_rows(a.A) && unit_rows(a.B) && unit_rows(a.C) &&
             a.B.row_stride * std::ptrdiff_t(sizeof(Scalar)) < Traits::in_place_k_row_bytes && a.M() % TM == 0 &&
             a.N() % TN == 0;
    }
  }

  std::size_t scratch_bytes() const { return whole_tiles_in_place ? 0 : Block::scratch_bytes(this->partial_bytes()); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& whole_team) const {
    if constexpr (kFloat)
      if (whole_tiles_in_place) return multiply_in_place(whole_team);
    this->multiply_block(whole_team);
  }

  // Micro-tiles that lie wholly past C's edges (an edge block's rows past M) are skipped: their
  // products would be thrown away.
  KOKKOS_INLINE_FUNCTION bool tile_in_c(const BlockOrigin& at, int tile_m, int tile_n) const {
    return at.m0 + row_of(tile_m, 0) < this->args.M() && at.n0 + col_of(tile_n, 0) < this->args.N();
  }

  KOKKOS_INLINE_FUNCTION void multiply_in_registers(Acc (&acc)[TM][TN], const Acc* a_slab, int lda, const Acc* b_slab,
                                                    int ldb, int tile_m, int tile_n, int kc) const {
    multiply_on_host(&acc[0][0], TN, true, a_slab, lda, b_slab, ldb, tile_m, tile_n, kc);
  }
  KOKKOS_INLINE_FUNCTION void multiply_into_partial(Acc (&)[TM][TN], Acc* partial, bool first, const Acc* a_slab, int lda,
                                                    const Acc* b_slab, int ldb, int tile_m, int tile_n, int kc) const {
    multiply_on_host(partial + row_of(tile_m, 0) * this->nb + col_of(tile_n, 0), this->nb, !first, a_slab, lda, b_slab,
                     ldb, tile_m, tile_n, kc);
  }

  // The host's micro-kernel (register-blocked SIMD where the tile allows it) on the tile at c,
  // rows ldc apart.
  KOKKOS_INLINE_FUNCTION void multiply_on_host(Acc* c, int ldc, bool accumulate, const Acc* a_slab, int lda,
                                               const Acc* b_slab, int ldb, int tile_m, int tile_n, int kc) const {
    HostMicroKernel<Acc, TM, TN>::multiply(c, ldc, accumulate, a_slab + row_of(tile_m, 0) * lda, lda,
                                           b_slab + col_of(tile_n, 0), ldb, kc);
  }

  // Rows of TN adjacent results: vectorised stores where the row lies inside C. Where no slab ran
  // (K = 0) the partial sums in scratch were never written: the sums are acc's zeros.
  KOKKOS_INLINE_FUNCTION void store_tile(const BlockOrigin& at, Acc (&acc)[TM][TN], const Acc* partial, bool in_registers,
                                         bool first, int tile_m, int tile_n) const {
    const bool from_registers = in_registers || first;
    for (int ii = 0; ii < TM; ++ii) {
      const int row = row_of(tile_m, ii), col = col_of(tile_n, 0);
      this->store_row(at, row, col, from_registers ? acc[ii] : partial + row * this->nb + col, TN);
    }
  }

  // place(), without its divisions where every product is one block: on batches of tiny
  // products the integer divisions are a large share of a team's work (docs/results.md, "small
  // products multiplied in place").
  KOKKOS_INLINE_FUNCTION BlockOrigin place_block(int block) const {
    return this->blocks_m == 1 && this->blocks_n == 1 ? BlockOrigin{block, 0, 0, block, 0, true} : this->place(block);
  }

  // The team's block, tile by tile (its threads taking turns) over the whole K, from A and B
  // into C (multiplies_in_place()); tiles past C's edges are skipped.
  KOKKOS_INLINE_FUNCTION void multiply_in_place(const Member& whole_team) const {
    const auto team = this->product_team(whole_team);
    // origin() without its division: K is not split here.
    const int index = whole_team.league_rank() * this->products_per_team + team.group;
    if (index >= this->blocks()) return;
    const BlockOrigin at = place_block(index);
    const auto &A = this->args.A, &B = this->args.B;
    const auto& C = this->args.C;
    const int lda = int(A.row_stride), ldb = int(B.row_stride), ldc = int(C.row_stride);
    const float* a = A.data + at.b * A.batch_stride + std::ptrdiff_t(at.m0) * lda;
    const float* b = B.data + at.b * B.batch_stride + at.n0;
    float* c = C.data + at.b * C.batch_stride + std::ptrdiff_t(at.m0) * ldc + at.n0;
    const int rows = C.rows - at.m0 < this->mb ? C.rows - at.m0 : this->mb;
    const int cols = C.cols - at.n0 < this->nb ? C.cols - at.n0 : this->nb;
    const int tile_cols = cols / TN, tiles = rows / TM * tile_cols;
    for (int t = team.team_rank(); t < tiles; t += team.team_size()) {
      const int row = t / tile_cols * TM, col = t % tile_cols * TN;
      HostMicroKernel<float, TM, TN>::multiply_scaled(c + std::ptrdiff_t(row) * ldc + col, ldc, this->args.alpha,
                                                      this->args.beta, a + std::ptrdiff_t(row) * lda, lda, b + col,
                                                      ldb, this->args.K());
    }
  }
};

// The portable kernel of a space: GPU threads reading K in runs, or the host micro-kernel.
template <class ExecSpace, class Scalar, class Acc, int TM, int TN, bool Runs, int SlabBuffers>
using TiledGemm = std::conditional_t<kTiledReadsKRuns<ExecSpace>, GpuTiledGemm<ExecSpace, Scalar, Acc, TM, TN, Runs, SlabBuffers>,
                                     HostTiledGemm<ExecSpace, Scalar, Acc, TM, TN, Runs, SlabBuffers>>;

}  // namespace kgemm
