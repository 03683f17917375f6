#pragma once
// Split K's second kernel: after the GEMM kernel has written every split's partial block, one
// thread per run of a block row adds the partials up into C (SlabPipeline::sum_splits). Queued
// on the same execution space instance, it starts when the GEMM kernel is done: no counters,
// fences or cache bypasses between the teams of one kernel.
#include <Kokkos_Core.hpp>

#include "kgemm/launch_policy.hpp"

namespace kgemm {

template <class Kernel>
struct SplitSum {
  Kernel kernel;
  KOKKOS_INLINE_FUNCTION void operator()(int index) const { kernel.sum_splits(index); }
};

template <class ExecSpace, class Kernel>
void sum_splits(const ExecSpace& space, const Kernel& kernel) {
  if (kernel.splits == 1) return;
  Kokkos::parallel_for("kgemm::split_sum", KernelRangePolicy<ExecSpace>(space, 0, kernel.split_sums()),
                       SplitSum<Kernel>{kernel});
}

}  // namespace kgemm
