#pragma once
// How many operand sets a timing loop cycles through so that it never finds its inputs in cache:
// the benchmarks' rows, the host peers (in processes of their own: no Kokkos here) and the
// tuner's cold timing (autotune --operands cold) size their rings here.
#include <unistd.h>

#include <algorithm>
#include <cstddef>

namespace kgemm {

// The host's last-level cache as the OS reports it; 32 MiB when it reports none.
inline std::size_t host_cache_bytes() {
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? std::size_t(l3) : std::size_t(32) << 20;
}

// The cache a repeated call could find its operands in: on the host its last-level cache; on a
// GPU its L2, taken as an H100's 50 MB, the largest of the GPUs kgemm targets.
inline std::size_t operand_cache_bytes(bool gpu) { return gpu ? 50'000'000 : host_cache_bytes(); }

// Sets to cycle through: together over 4x the cache, so a set has been evicted by the time it comes
// round again. At most 16, to bound memory and fill time on hosts reporting a huge L3; one when a
// set alone exceeds 4x the cache.
inline int ring_size(std::size_t set_bytes, std::size_t cache) {
  const std::size_t wanted = (4 * cache + set_bytes - 1) / set_bytes;
  return int(std::clamp<std::size_t>(wanted, 1, 16));
}

}  // namespace kgemm
