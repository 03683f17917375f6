#pragma once
// Global memory for split K (Config::ks > 1): every split's fp32 partial block, which the GEMM
// kernel writes and the split sum (split_sum.hpp) adds up into C. Allocating per call would
// cost more than the batch-1 GEMMs split K is for, so the buffer lives between calls, per
// memory space, and only grows.
//
// One buffer per memory space: split-K calls on concurrently running instances of a space (two
// CUDA streams) would share it; kgemm's calls are ordered on one instance.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <memory>
#include <mutex>

namespace kgemm {

template <class MemorySpace>
float* split_partials(std::size_t count) {
  using Buffer = Kokkos::View<float*, MemorySpace>;
  static std::mutex mutex;
  static std::unique_ptr<Buffer> buffer;
  std::lock_guard<std::mutex> lock(mutex);
  if (!buffer) {
    buffer = std::make_unique<Buffer>();
    // Views must be gone before Kokkos::finalize; a later initialize starts afresh.
    Kokkos::push_finalize_hook([] { buffer.reset(); });
  }
  if (buffer->extent(0) < count) {
    Kokkos::fence();  // kernels launched earlier may still be using the buffer this frees
    *buffer = Buffer("kgemm::split_partials", count);
  }
  return buffer->data();
}

}  // namespace kgemm
