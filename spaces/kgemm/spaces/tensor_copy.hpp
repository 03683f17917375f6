#pragma once
// Hopper's bulk tensor copies (TMA, `cp.async.bulk.tensor`, PTX ISA 8.0) as plain CUDA device
// functions (no Kokkos): one thread copies a whole box of a tensor of up to three dimensions from
// global to shared memory, in the swizzle its tensor map names (kgemm's: the 128-byte one
// `wgmma` reads, warpgroup_mma.hpp), and the copy completes on a shared-memory barrier by the
// bytes it wrote (mbarrier.hpp: arrive_expecting). Elements of the box outside the tensor arrive
// as zeros. The copy engine reads the tensor's address, extents and strides from a tensor map
// (CUtensorMap, 128 bytes) in global, constant or parameter memory, which the host encodes
// (tensor_maps.hpp). Stores go the other way, from shared memory to the tensor, clipped at its
// edges.
//
// Compiled where device code has `wgmma` (KGEMM_WGMMA, sm_90a): the one kernel that uses them
// is the warp-specialized one, which exists only there.
#include <cstdint>

#include "kgemm/spaces/mma_sync.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace kgemm {
namespace tensor_copy {

// A tensor map as the copy engine reads it (CUtensorMap's size and alignment).
struct alignas(64) Map {
  unsigned char bytes[128];
};

#if defined(KGEMM_WGMMA)
// Fetches the map into the copy engine's cache ahead of the first copy.
__device__ inline void prefetch(const Map* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// Copies the box whose first element is (x, y, z) of the tensor `map` describes to `to` (shared
// memory on the swizzle's 1024-byte period), the bytes counted on `barrier` as they land.
__device__ inline void load_box(void* to, const Map* map, std::uint64_t* barrier, int x, int y, int z) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          kgemm::detail::shared_address(to)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(kgemm::detail::shared_address(barrier)), "r"(x), "r"(y), "r"(z)
      : "memory");
}

// The other way: the box at `from` (shared memory laid out as load_box lands it) to the tensor
// `map` describes, first element (x, y, z); elements outside the tensor are not written. The
// thread's stores issued since its last commit_stores() form one group, which it can wait for.
__device__ inline void store_box(const Map* map, const void* from, int x, int y, int z) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(kgemm::detail::shared_address(from)), "r"(x), "r"(y), "r"(z)
               : "memory");
}
__device__ inline void commit_stores() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Returns once at most InFlight of the thread's store groups may still read their shared memory.
template <int InFlight>
__device__ inline void wait_stores_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(InFlight) : "memory");
}
// Returns once every store group of the thread has written its tensor.
__device__ inline void wait_stores_done() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
#endif

}  // namespace tensor_copy
}  // namespace kgemm
