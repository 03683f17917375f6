#pragma once
// Per-execution-space facts the kernels and the tuner build on: the micro-tile layout that suits
// the hardware, the default config, and the legal value lists the tuner searches.
#include <Kokkos_Core.hpp>
#include <vector>

#include "kgemm/config.hpp"

namespace kgemm {

// Value lists of the runtime parameters a space accepts; (tm, tn) come from the compiled variants.
struct ParamRanges {
  std::vector<int> mb, nb, kb, team;
};

template <class ExecSpace>
struct SpaceTraits {
  // CPU threads: a thread's micro-tile is one contiguous TM x TN patch, so the compiler can
  // vectorise its inner loop. Teams are one thread each; partial sums between K slabs stay
  // in the (cache-resident) team scratch.
  static constexpr bool is_gpu = false;
  static constexpr int micro_run(int extent) { return extent; }
  static constexpr int scratch_pad = 0;
  // Level 1: host team scratch is plain memory; level 0 caps it at 32 KiB.
  static constexpr int scratch_level = 1;
  static Config default_config() { return {64, 64, 256, 8, 8, 1}; }
  static ParamRanges ranges() { return {{16, 32, 64, 128}, {16, 32, 64, 128, 256}, {32, 64, 128, 256}, {1, 2}}; }
  // Two threads per team only pay when each has several micro-tiles of its own.
  static bool worth_trying(const Config& c) { return c.team == 1 || c.micro_tiles() >= 4 * c.team; }
  // Team scratch is ordinary memory here.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T* in_scratch(T* p) {
    return p;
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct SpaceTraits<Kokkos::Cuda> {
  // GPU threads: each thread's micro-tile is cut into runs of 4 rows/columns interleaved with
  // its neighbours', so a warp reads consecutive scratch words (no bank conflicts) and each run
  // is one 16-byte access. One micro-tile per thread keeps accumulators in registers.
  static constexpr bool is_gpu = true;
  static constexpr int micro_run(int extent) { return extent % 4 == 0 ? 4 : extent; }
  static constexpr int scratch_pad = 4;
  static constexpr int scratch_level = 0;  // shared memory
  static Config default_config() { return {128, 64, 16, 8, 4, 256}; }
  static ParamRanges ranges() {
    // 16-row and 16-column blocks give batch-1 layers (M = 49 ... 784) enough blocks to fill the SMs.
    return {{16, 32, 64, 128, 256}, {16, 32, 64, 128, 256}, {8, 16, 32}, {32, 64, 128, 256, 512}};
  }
  // One micro-tile per thread: partial sums between K slabs then stay in registers.
  static bool worth_trying(const Config& c) { return c.team == c.micro_tiles(); }
  // Team scratch is shared memory, but Kokkos hands it out as a generic pointer, and nvcc then
  // emits generic loads and stores (LD/ST, slower) for the slabs. Rebased on an extern
  // __shared__ array (all of them start at the dynamic shared-memory base, where level-0
  // scratch lives) the same address is known to be shared: LDS/STS.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T* in_scratch(T* p) {
#if defined(__CUDA_ARCH__)
    extern __shared__ char kgemm_dynamic_shared[];
    return reinterpret_cast<T*>(kgemm_dynamic_shared + (reinterpret_cast<char*>(p) - kgemm_dynamic_shared));
#else
    return p;
#endif
  }
};
#endif

}  // namespace kgemm
