#pragma once
// Global memory for split K (Config::ks > 1): every split's fp32 partial block, and one arrival
// counter per block of C that tells the last team of a block it is the one to add them up.
// Allocating per call would cost more than the batch-1 GEMMs split K is for, so the buffers
// live between calls, per memory space, and only grow. Counters are zero whenever no kernel
// runs: they start zeroed and the last team of each block resets its own.
//
// One set of buffers per memory space: split-K calls on concurrently running instances of a
// space (two CUDA streams) would share them; kgemm's calls are ordered on one instance.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <memory>
#include <mutex>

namespace kgemm {

struct SplitBuffers {
  float* partials = nullptr;
  int* arrivals = nullptr;
};

template <class MemorySpace>
SplitBuffers split_buffers(std::size_t partial_count, std::size_t arrival_count) {
  struct Buffers {
    Kokkos::View<float*, MemorySpace> partials;
    Kokkos::View<int*, MemorySpace> arrivals;  // zero-initialised by Kokkos
  };
  static std::mutex mutex;
  static std::unique_ptr<Buffers> buffers;
  std::lock_guard<std::mutex> lock(mutex);
  if (!buffers) {
    buffers = std::make_unique<Buffers>();
    // Views must be gone before Kokkos::finalize; a later initialize starts afresh.
    Kokkos::push_finalize_hook([] { buffers.reset(); });
  }
  const bool grow_partials = buffers->partials.extent(0) < partial_count;
  const bool grow_arrivals = buffers->arrivals.extent(0) < arrival_count;
  // Kernels launched earlier may still be using the buffers a reallocation frees.
  if (grow_partials || grow_arrivals) Kokkos::fence();
  if (grow_partials) buffers->partials = Kokkos::View<float*, MemorySpace>("kgemm::split_partials", partial_count);
  if (grow_arrivals) buffers->arrivals = Kokkos::View<int*, MemorySpace>("kgemm::split_arrivals", arrival_count);
  return {buffers->partials.data(), buffers->arrivals.data()};
}

}  // namespace kgemm
