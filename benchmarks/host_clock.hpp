#pragma once
// The host clock the benchmarks time with, and the median they summarise with (no Kokkos: the
// peers in processes of their own use it too).
#include <algorithm>
#include <chrono>
#include <vector>

namespace kgemm_bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace kgemm_bench
