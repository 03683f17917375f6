#pragma once
// Shared-memory barriers (`mbarrier`, PTX ISA 7.0; the parity wait of sm_90) as plain CUDA device
// functions (no Kokkos): a barrier object of 8 bytes in shared memory completes a phase once
// `count` threads arrived, and a thread waits for a phase by its parity. The warp-specialized
// kernel hands each slab buffer from the thread that copies it to the warps that multiply it, and
// back, through two of them per buffer, where a team barrier would stop every warp of the team
// once per slab. Arrival releases and waiting acquires what the threads wrote to shared memory
// (.release / .acquire at CTA scope, the instructions' defaults).
//
// Compiled where device code has them: the sm_90a pass that also has `wgmma` (KGEMM_WGMMA); the
// kernel that uses them exists only there.
#include <cstdint>

#include "kgemm/spaces/mma_sync.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace kgemm {
namespace mbarrier {

#if defined(KGEMM_WGMMA)
// Called by one thread; the team's threads may use the barrier after a team barrier.
__device__ inline void init(std::uint64_t* barrier, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(detail::shared_address(barrier)), "r"(count) : "memory");
}

__device__ inline void arrive(std::uint64_t* barrier) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(detail::shared_address(barrier))
               : "memory");
}

// Arrives on the barrier (one of the phase's arrivals) and adds `bytes` to what the phase waits
// for: it completes once bulk copies completing on the barrier (tensor_copy.hpp) wrote that many.
__device__ inline void arrive_expecting(std::uint64_t* barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(detail::shared_address(barrier)), "r"(bytes)
               : "memory");
}

// After init, by the initialising thread: the barriers are visible to the copy engine (the async
// proxy) as well as to the team past its next barrier.
__device__ inline void init_visible_to_copies() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// Returns once the phase of parity `parity` (0 for the first, 1 for the second, ...) completed.
__device__ inline void wait(std::uint64_t* barrier, int parity) {
  asm volatile(
      "{\n.reg .pred done;\nwaiting:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n@!done bra waiting;\n}\n" ::"r"(
          detail::shared_address(barrier)),
      "r"(parity)
      : "memory");
}
#endif

}  // namespace mbarrier
}  // namespace kgemm
