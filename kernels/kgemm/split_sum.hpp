#pragma once
// Split K's second kernel: after the GEMM kernel has written every split's partial block, one
// thread per run of a block row adds the partials up, in split order, into C. Queued on the
// same execution space instance, it starts when the GEMM kernel is done: no counters, fences or
// cache bypasses between the teams of one kernel.
//
// A sum inside the GEMM kernel (by the last team of each block) would run on one team per block,
// and its code would sit in the kernel whether a call splits or not, raising the registers of
// every launch; a kernel of its own keeps the GEMM kernel's registers and sums with every thread
// of the device (docs/gpu-notes.md, s11).
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "kgemm/launch_policy.hpp"
#include "kgemm/packed.hpp"

namespace kgemm {

// Kernel: the GEMM kernel that wrote the partial blocks (SlabPipeline): where its blocks lie
// (place), their partial blocks (partial_block) and how a result goes into C (store_c).
template <class Kernel>
struct SplitSum {
  Kernel kernel;
  static constexpr int kSplitsInFlight = 8;  // each thread's reads of that many splits at once

  // Columns a thread sums: 4 (16-byte reads) where the blocks' rows allow it.
  KOKKOS_INLINE_FUNCTION int run() const { return kernel.nb % 4 == 0 ? 4 : 1; }
  int threads() const { return kernel.blocks() * kernel.mb * (kernel.nb / run()); }

  KOKKOS_INLINE_FUNCTION void operator()(int index) const {
    if (run() == 4)
      sum<4>(index);
    else
      sum<1>(index);
  }

  // Thread `index` sums one run of R columns of one row of one block.
  template <int R>
  KOKKOS_INLINE_FUNCTION void sum(int index) const {
    const int mb = kernel.mb, nb = kernel.nb, splits = kernel.splits;
    const int runs_per_block = mb * (nb / R);
    const auto at = kernel.place(index / runs_per_block);
    const int r = index % runs_per_block / (nb / R), c = index % (nb / R) * R;
    if (at.m0 + r >= kernel.args.C.rows || at.n0 + c >= kernel.args.C.cols) return;
    const float* run = kernel.partial_block(at.block, 0) + r * nb + c;
    const std::size_t split_elements = std::size_t(mb) * nb;
    float total[R] = {};
    for (int first = 0; first < splits; first += kSplitsInFlight) {
      Packed<float, R> values[kSplitsInFlight];
      for (int s = 0; s < kSplitsInFlight; ++s)
        if (first + s < splits) values[s] = *reinterpret_cast<const Packed<float, R>*>(run + (first + s) * split_elements);
      for (int s = 0; s < kSplitsInFlight; ++s)
        if (first + s < splits)
          for (int q = 0; q < R; ++q) total[q] += values[s].v[q];
    }
    for (int q = 0; q < R; ++q) kernel.store_c(at.b, at.m0 + r, at.n0 + c + q, total[q]);
  }
};

template <class ExecSpace, class Kernel>
void sum_splits(const ExecSpace& space, const Kernel& kernel) {
  if (kernel.splits == 1) return;
  const SplitSum<Kernel> summing{kernel};
  Kokkos::parallel_for("kgemm::split_sum", KernelRangePolicy<ExecSpace>(space, 0, summing.threads()), summing);
}

}  // namespace kgemm
