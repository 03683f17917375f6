#pragma once
// Operands for a timing loop that must not find its inputs in cache: a ring of independent
// operand sets with random inputs (never all zeros, which some hardware multiplies faster),
// each iteration taking the next set.
#include <Kokkos_Core.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kgemm/fill.hpp"
#include "kgemm/spaces/space_traits.hpp"

namespace kgemm_bench {

// The cache a repeated call could find its operands in: on the host the last-level cache the OS
// reports (32 MiB when it reports none); on a GPU its L2, taken as an H100's 50 MB, the largest
// of the GPUs kgemm targets.
template <class ExecSpace>
std::size_t cache_bytes() {
  if (kgemm::SpaceTraits<ExecSpace>::is_gpu) return 50'000'000;
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? std::size_t(l3) : std::size_t(32) << 20;
}

// Sets to cycle through: together over 4x the cache, so a set has been evicted by the time it comes
// round again. At most 16, to bound memory and fill time on hosts reporting a huge L3; one when a
// set alone exceeds 4x the cache.
inline int ring_size(std::size_t set_bytes, std::size_t cache) {
  const std::size_t wanted = (4 * cache + set_bytes - 1) / set_bytes;
  return int(std::clamp<std::size_t>(wanted, 1, 16));
}

// A, B and C views allocated in their execution space; A and B hold uniform values in [-1, 1).
template <class AV, class BV, class CV>
struct OperandRing {
  std::vector<AV> A;
  std::vector<BV> B;
  std::vector<CV> C;

  OperandRing(const typename AV::array_layout& a, const typename BV::array_layout& b,
              const typename CV::array_layout& c) {
    add_set(a, b, c);
    const std::size_t set_bytes = (A[0].span() + B[0].span() + C[0].span()) * sizeof(typename CV::value_type);
    const int sets = ring_size(set_bytes, cache_bytes<typename CV::execution_space>());
    while (size() < sets) add_set(a, b, c);
    Kokkos::fence();
  }

  int size() const { return int(C.size()); }

 private:
  void add_set(const typename AV::array_layout& a, const typename BV::array_layout& b,
               const typename CV::array_layout& c) {
    const std::uint64_t seed = 2 * A.size();
    A.emplace_back("A", a);
    B.emplace_back("B", b);
    C.emplace_back("C", c);
    kgemm::fill_uniform(A.back(), seed + 1);
    kgemm::fill_uniform(B.back(), seed + 2);
  }
};

}  // namespace kgemm_bench
