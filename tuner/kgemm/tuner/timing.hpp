#pragma once
// Timing of device work: warm-up runs first, then `reps` timed runs; the median is robust to
// the odd preempted run. The relative spread tells the caller when to re-measure.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <vector>

#include "kgemm/spaces/call_clock.hpp"
#include "kgemm/spaces/error.hpp"

namespace kgemm {

struct Timing {
  double median_s = 0;
  double spread = 0;  // (p75 - p25) / median
  int reps = 0;
};

namespace detail {
inline Timing summarize(std::vector<double> seconds) {
  if (seconds.empty()) throw InvalidArgument("timing needs at least one repetition");
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

// What a call costs the host, each call made on an idle space: launch = host time until call(i)
// returns, complete = from launch to completion (host clock). On host spaces the work runs
// inside the call, so the two match. Medians of `calls` calls; call(i) may rotate operand sets.
struct CallOverheads {
  double launch_s = 0;
  double complete_s = 0;
};

template <class ExecSpace, class Call>
CallOverheads time_call_overheads(const ExecSpace& space, int calls, const Call& call) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<double> launch(calls), complete(calls);
  for (int i = 0; i < calls; ++i) {
    space.fence();
    const auto start = Clock::now();
    call(i);
    launch[i] = since(start);
    space.fence();
    complete[i] = since(start);
  }
  return {detail::summarize(launch).median_s, detail::summarize(complete).median_s};
}

// True where views of this memory space live in host memory: nothing to transfer.
template <class MemorySpace>
constexpr bool in_host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;

// Moving a GEMM's operands: A and B host->device and C device->host once, from and to pageable
// host memory (as an application's own arrays), median of `reps`; 0 where they live in host memory.
template <class ExecSpace, class AV, class BV, class CV>
double transfer_seconds(const ExecSpace& space, const AV& A, const BV& B, const CV& C, int reps) {
  if constexpr (in_host_memory<typename CV::memory_space>) {
    return 0;
  } else {
    const auto host_A = Kokkos::create_mirror_view(A);
    const auto host_B = Kokkos::create_mirror_view(B);
    const auto host_C = Kokkos::create_mirror_view(C);
    const auto round_trip = [&] {
      Kokkos::deep_copy(A, host_A);
      Kokkos::deep_copy(B, host_B);
      Kokkos::deep_copy(host_C, C);
    };
    return time_median(space, round_trip, 0, reps).median_s;
  }
}

}  // namespace kgemm
