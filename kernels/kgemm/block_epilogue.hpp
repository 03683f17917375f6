#pragma once
// How a team's results reach memory: into its block of C (C = alpha * AB + beta * C), or, with
// split K, into its split's partial block in global memory, which split K's sum (split_sum.hpp)
// adds up into C. Every GEMM kernel stores through it (slab_pipeline.hpp).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "kgemm/block_schedule.hpp"
#include "kgemm/packed.hpp"

namespace kgemm {

// Kernel (the class deriving from here) holds the fields, as for BlockSchedule: the call (args:
// C, alpha, beta), the block (mb, nb), the K split (splits) and split K's partial blocks
// (partials, one per work item).
template <class Kernel, class Scalar>
struct BlockEpilogue {
  KOKKOS_INLINE_FUNCTION const Kernel& kernel() const { return static_cast<const Kernel&>(*this); }

  // Whether every run of R adjacent elements of C's rows that starts at a multiple of R is
  // aligned for one access: rows contiguous, every row of every product starting aligned.
  template <int R>
  KOKKOS_INLINE_FUNCTION bool rows_take_runs() const {
    const auto& C = kernel().args.C;
    return C.col_stride == 1 && reinterpret_cast<std::uintptr_t>(C.data) % (R * sizeof(Scalar)) == 0 &&
           C.row_stride % R == 0 && C.batch_stride % R == 0;
  }

  // Results in runs (the tensor-core kernel's pairs): visit(store) calls store(r, c, values) for
  // runs of R adjacent columns of the block (r, c .. c + R - 1; c a multiple of R). Split K's
  // partial blocks, and a block inside C with beta = 0 and rows that take runs, store each run
  // as one unchecked access; other blocks element by element. Checks per run (edges, beta),
  // unrolled over a 64 x 64 warp tile, would overflow the instruction cache on interior blocks
  // (docs/gpu-notes.md, s7).
  template <int R, class Visit>
  KOKKOS_INLINE_FUNCTION void store_results(const BlockOrigin& at, Visit&& visit) const {
    static_assert(R * sizeof(float) <= 16, "kgemm: runs are stored 16 bytes at most at a time");
    const Kernel& k = kernel();
    if (!at.writes) return;
    if (k.splits > 1) {  // partial blocks are nb wide and 64-byte aligned
      float* partial = partial_block(at.block, at.split);
      visit([&](int r, int c, const float (&values)[R]) { store_packed(partial + r * k.nb + c, values, 1.0f); });
      return;
    }
    const auto& C = k.args.C;
    const bool runs = k.args.beta == 0.0f && at.m0 + k.mb <= C.rows && at.n0 + k.nb <= C.cols && rows_take_runs<R>();
    if (runs) {
      // From the block's corner, with C's unit column stride spelled out: each thread's runs are
      // stores at fixed offsets from a row pointer or two. Through C(b, i, j) each run would
      // work its 64-bit address out afresh (the column stride is a run-time value), ten
      // instructions a store, and short-K blocks spend much of their time storing (docs/gpu-notes.md, s17).
      Scalar* corner = &C(at.b, at.m0, at.n0);
      const std::ptrdiff_t ld = C.row_stride;
      visit([&](int r, int c, const float (&values)[R]) { store_packed(corner + r * ld + c, values, k.args.alpha); });
    } else
      visit([&](int r, int c, const float (&values)[R]) {
        for (int q = 0; q < R; ++q) store_c(at.b, at.m0 + r, at.n0 + c + q, values[q]);
      });
  }

  // One result, any case: element (r, c) of the block into C, or into the partial block (its
  // index spelled out: through partial_block() the 8x8 fp32 tile needs more registers; docs/gpu-notes.md, s7).
  KOKKOS_INLINE_FUNCTION void store(const BlockOrigin& at, int r, int c, float value) const {
    if (!at.writes) return;
    const Kernel& k = kernel();
    if (k.splits == 1)
      store_c(at.b, at.m0 + r, at.n0 + c, value);
    else
      k.partials[(std::size_t(at.block) * k.splits + at.split) * k.mb * k.nb + r * k.nb + c] = value;
  }

  // n adjacent results of block row r (columns c ... c + n - 1): one unit-stride loop, which
  // CPUs vectorise, where the row lies inside C with unit column stride and K is not split;
  // element by element otherwise.
  template <class T>
  KOKKOS_INLINE_FUNCTION void store_row(const BlockOrigin& at, int r, int c, const T* values, int n) const {
    const auto& C = kernel().args.C;
    const int i = at.m0 + r, j = at.n0 + c;
    if (at.writes && kernel().splits == 1 && C.col_stride == 1 && i < C.rows && j + n <= C.cols) {
      Scalar* out = &C(at.b, i, j);
      const float alpha = kernel().args.alpha, beta = kernel().args.beta;
      if (beta == 0.0f)  // C is not read (store_c)
        for (int q = 0; q < n; ++q) out[q] = Scalar(alpha * float(values[q]));
      else
        for (int q = 0; q < n; ++q) out[q] = Scalar(alpha * float(values[q]) + beta * float(out[q]));
      return;
    }
    for (int q = 0; q < n; ++q) store(at, r, c + q, float(values[q]));
  }

  template <class T, int R>
  KOKKOS_INLINE_FUNCTION static void store_packed(T* to, const float (&values)[R], float scale) {
    Packed<T, R> run;
    for (int q = 0; q < R; ++q) run.v[q] = T(scale * values[q]);
    *reinterpret_cast<Packed<T, R>*>(to) = run;
  }

  KOKKOS_INLINE_FUNCTION float* partial_block(int block, int split) const {
    const Kernel& k = kernel();
    return k.partials + (std::size_t(block) * k.splits + split) * k.mb * k.nb;
  }

  // C(b, i, j) = alpha * value + beta * C(b, i, j) inside C. C is not read when beta == 0
  // (BLAS convention), so NaNs in an uninitialised C never leak into the result.
  KOKKOS_INLINE_FUNCTION void store_c(int b, int i, int j, float value) const {
    const auto& C = kernel().args.C;
    if (i >= C.rows || j >= C.cols) return;
    value *= kernel().args.alpha;
    if (kernel().args.beta != 0.0f) value += kernel().args.beta * float(C(b, i, j));
    C(b, i, j) = Scalar(value);
  }
};

}  // namespace kgemm
