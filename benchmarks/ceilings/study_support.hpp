#pragma once
// What the standalone CUDA studies share: a failed runtime call names itself and stops; a
// kernel's mean time over repeated launches; and the device pieces of their hand-written
// pipelines (shared-memory addresses, 16-byte cp.async copies, dynamic shared memory aligned to
// the 128-byte swizzle's period).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "kgemm/spaces/warpgroup_mma.hpp"

#define CHECK_CUDA(call)                                                                             \
  do {                                                                                               \
    cudaError_t err_ = (call);                                                                       \
    if (err_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

// Milliseconds per launch: `runs` launches back to back between two CUDA events, their mean.
template <class Launch>
float mean_launch_ms(Launch&& launch, int runs) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start));
  for (int r = 0; r < runs; ++r) launch();
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return ms / runs;
}

__device__ inline unsigned shared_address(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// The first byte of dynamic shared memory `raw` on the swizzle's 1024-byte period (a launch
// asks for wgmma::kSwizzleAtomBytes more than its tiles take).
__device__ inline unsigned char* swizzle_aligned(unsigned char* raw) {
  constexpr unsigned kAtom = kgemm::wgmma::kSwizzleAtomBytes;
  return raw + (kAtom - shared_address(raw) % kAtom) % kAtom;
}

#if defined(KGEMM_WGMMA)
// cp.async: 16 bytes from global memory to shared address `to`, committed in groups; waiting
// leaves the newest `Pending` groups in flight.
__device__ inline void copy_run(unsigned to, const void* from) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(from));
}
__device__ inline void copies_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int Pending>
__device__ inline void copies_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}
#endif
