#pragma once
// Keeps a CUDA stream busy for a fixed time: queued just before the start event of a timed call,
// it runs while the host launches that call, so the events time the call's kernels and never an
// idle GPU waiting for the host. One untimed call ahead hides the launch only where that call
// runs longer than the host takes to launch the next: kgemm's launch (dispatch checks, Kokkos'
// team policy) takes about as long as the 5 - 10 us kernels of the smallest ResNet shapes, and
// where the host was slower for a while, consecutive configs read up to a quarter slow
// (docs/gpu-notes.md). No Kokkos: kgemm's CallClock and the CUDA library peers share it.
#include <cuda_runtime.h>

#if !defined(__CUDACC__)
#error "kgemm/spaces/stream_hold.hpp launches a kernel: compile with a CUDA compiler (nvcc, nvcc_wrapper)"
#endif

namespace kgemm {

// Long enough to cover a launch and the host's odd slow stretch; short beside the 5 or more
// timed calls of each reading.
inline constexpr double kStreamHoldSeconds = 50e-6;

namespace {  // a kernel per translation unit: nothing for the linker to merge or clash on

__global__ void stream_hold_kernel(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

// Queues the hold on `stream`; the launch's error, if any.
cudaError_t hold_stream(cudaStream_t stream, double seconds = kStreamHoldSeconds) {
  stream_hold_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(seconds * 1e9));
  return cudaGetLastError();
}

}  // namespace
}  // namespace kgemm
