#pragma once
// Times one call's work on an execution-space instance. On a GPU: CUDA events recorded on the
// instance's stream before and after the call, so the time is the device's, from the call's
// first kernel starting to its last one ending; queue the timed call behind other work and a
// hold of the stream (time_queued_call) and the host's launch is no part of it, as CUDA-event
// timings of cuBLAS leave it out. On host spaces the work runs inside the call: the host clock
// from a fence before it to a fence after it.
#include <Kokkos_Core.hpp>
#include <chrono>
#include <string>

#include "kgemm/spaces/error.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>

#include "kgemm/spaces/stream_hold.hpp"
#endif

namespace kgemm {

template <class ExecSpace>
class CallClock {
 public:
  static constexpr bool queues = false;  // calls on the host finish before they return
  explicit CallClock(const ExecSpace& space) : space_(space) {}
  void start() {
    space_.fence();
    start_ = std::chrono::steady_clock::now();
  }
  void stop() {
    space_.fence();
    stop_ = std::chrono::steady_clock::now();
  }
  double seconds() const { return std::chrono::duration<double>(stop_ - start_).count(); }

 private:
  ExecSpace space_;
  std::chrono::steady_clock::time_point start_, stop_;
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
class CallClock<Kokkos::Cuda> {
 public:
  static constexpr bool queues = true;
  explicit CallClock(const Kokkos::Cuda& space) : stream_(space.cuda_stream()) {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~CallClock() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  CallClock(const CallClock&) = delete;
  CallClock& operator=(const CallClock&) = delete;
  // Keeps the stream busy while the host launches what comes next (stream_hold.hpp).
  void hold() { check(hold_stream(stream_), "the stream hold kernel's launch"); }
  void start() { check(cudaEventRecord(start_, stream_), "cudaEventRecord"); }
  void stop() { check(cudaEventRecord(stop_, stream_), "cudaEventRecord"); }
  // Waits for the call to finish.
  double seconds() const {
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return 1e-3 * ms;
  }

 private:
  static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
      throw RuntimeError(std::string(what) + " failed: " + cudaGetErrorString(status));
  }
  cudaStream_t stream_;
  cudaEvent_t start_, stop_;
};
#endif

// Seconds of call(). Where calls queue (GPUs), lead() runs first, untimed (the caches as a call
// after another finds them), then the clock's hold, so the device is still busy when call() is
// launched: the events then time call()'s kernels and not an idle device waiting for them.
template <class ExecSpace, class Lead, class Call>
double time_queued_call(CallClock<ExecSpace>& clock, const Lead& lead, const Call& call) {
  if constexpr (CallClock<ExecSpace>::queues) {
    lead();
    clock.hold();
  }
  clock.start();
  call();
  clock.stop();
  return clock.seconds();
}

}  // namespace kgemm
