#pragma once
// Wall-clock timing of device work: warm-up runs first, then `reps` fenced runs; the median
// is robust to the odd preempted run. The relative spread tells the caller when to re-measure.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <vector>

namespace kgemm {

struct Timing {
  double median_s = 0;
  double spread = 0;  // (p75 - p25) / median
  int reps = 0;
};

template <class ExecSpace, class F>
Timing time_median(const ExecSpace& space, F&& run, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) run();
  space.fence();
  std::vector<double> seconds(reps);
  for (double& s : seconds) {
    const auto start = std::chrono::steady_clock::now();
    run();
    space.fence();
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::sort(seconds.begin(), seconds.end());
  Timing t;
  t.reps = reps;
  t.median_s = seconds[reps / 2];
  t.spread = (seconds[(3 * reps) / 4] - seconds[reps / 4]) / t.median_s;
  return t;
}

}  // namespace kgemm
