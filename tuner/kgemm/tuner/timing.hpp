#pragma once
// Timing of device work: warm-up runs first, then `reps` timed runs; the median is robust to
// the odd preempted run. The relative spread tells the caller when to re-measure.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "kgemm/spaces/call_clock.hpp"

namespace kgemm {

struct Timing {
  double median_s = 0;
  double spread = 0;  // (p75 - p25) / median
  int reps = 0;
};

namespace detail {
inline Timing summarize(std::vector<double> seconds) {
  if (seconds.empty()) throw std::invalid_argument("kgemm: timing needs at least one repetition");
  std::sort(seconds.begin(), seconds.end());
  Timing t;
  t.reps = int(seconds.size());
  t.median_s = seconds[seconds.size() / 2];
  t.spread = (seconds[(3 * seconds.size()) / 4] - seconds[seconds.size() / 4]) / t.median_s;
  return t;
}
}  // namespace detail

// Wall clock from a fence to a fence: everything run() costs the host, launches and transfers
// included.
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
  return detail::summarize(seconds);
}

// The work of each call, as the benchmarks and the cuBLAS peer time it (CallClock: on GPUs CUDA
// events around a call queued behind an untimed one; on host spaces the same as time_median).
// Configs of one problem differ in their kernels, not in their launch, so this ranks them on
// what differs, without the host's launch and fence jitter.
template <class ExecSpace, class F>
Timing time_calls(const ExecSpace& space, F&& run, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) run();
  space.fence();
  CallClock<ExecSpace> clock(space);
  std::vector<double> seconds(reps);
  for (double& s : seconds) s = time_queued_call(clock, run, run);
  return detail::summarize(seconds);
}

}  // namespace kgemm
