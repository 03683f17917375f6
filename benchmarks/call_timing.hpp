#pragma once
// What one call costs, measured apart so the overheads show (RESULTS_SCHEMA.md's counters):
// the call's work as Google Benchmark's manual time (kgemm::CallClock: CUDA events on a GPU,
// the host clock between fences on the host); launching it; one call from an idle space to
// completion; and on a GPU moving its operands between host and device.
#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <algorithm>

#include "kgemm/spaces/call_clock.hpp"
#include "kgemm/tuner/timing.hpp"

namespace kgemm_bench {

// Each iteration times call(i) on the next of `sets` operand sets with the space's CallClock. On
// a GPU the timed call is queued behind an untimed call on the previous set and the clock's hold,
// so its events time the kernels and not the launch (call_us below has that); the cuBLAS peer
// times its calls the same way. One untimed call first: page faults, the config store's first
// lookup and the GPU's clocks are no part of a call's cost.
template <class ExecSpace, class Call>
void time_calls(benchmark::State& state, const ExecSpace& space, int sets, const Call& call) {
  kgemm::CallClock<ExecSpace> clock(space);
  call(sets - 1);
  space.fence();
  int next = 0;
  for (auto _ : state) {
    const int previous = (next + sets - 1) % sets;
    state.SetIterationTime(kgemm::time_queued_call(clock, [&] { call(previous); }, [&] { call(next); }));
    next = (next + 1) % sets;
  }
}

// launch_us and call_us (kgemm::time_call_overheads): medians of up to 10 calls, each on an idle
// space; no more than the timed loop ran (at least 3), so slow calls, where launching is
// negligible anyway, don't spend most of the run here.
template <class ExecSpace, class Call>
void report_call_overheads(benchmark::State& state, const ExecSpace& space, int sets, const Call& call) {
  const int calls = int(std::clamp<benchmark::IterationCount>(state.iterations(), 3, 10));
  const kgemm::CallOverheads overheads = kgemm::time_call_overheads(space, calls, [&](int i) { call(i % sets); });
  state.counters["launch_us"] = 1e6 * overheads.launch_s;
  state.counters["call_us"] = 1e6 * overheads.complete_s;
}

// transfer_us, only where the operands live off the host (kgemm::transfer_seconds, median of 5).
template <class ExecSpace, class AV, class BV, class CV>
void report_transfer(benchmark::State& state, const ExecSpace& space, const AV& A, const BV& B, const CV& C) {
  if constexpr (!kgemm::in_host_memory<typename CV::memory_space>)
    state.counters["transfer_us"] = 1e6 * kgemm::transfer_seconds(space, A, B, C, 5);
}

}  // namespace kgemm_bench
