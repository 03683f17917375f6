#pragma once
// The thread count of kgemm's OpenMP space, for the host programs that run without Kokkos (the
// OpenBLAS peer, the FMA peak) so that they use as many threads as kgemm's rows they compare with.
#include <sched.h>

#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "kgemm/spaces/error.hpp"
#include "kgemm/text_number.hpp"

namespace kgemm_bench {

// The threads Kokkos' OpenMP space starts with: OpenMP's own count, from OMP_NUM_THREADS (its
// first level) when set, else the CPUs of this process's affinity mask.
inline int host_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    const std::string text = env;
    const std::optional<int> threads = kgemm::integer_in(std::string_view(text).substr(0, text.find(',')), 1, INT_MAX);
    if (!threads) throw kgemm::InvalidArgument("OMP_NUM_THREADS='" + text + "' is not a positive thread count");
    return *threads;
  }
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) throw kgemm::RuntimeError("sched_getaffinity failed");
  return CPU_COUNT(&cpus);
}

}  // namespace kgemm_bench
