#pragma once
// What a GPU's tensor cores run, by compute capability (major x 10 + minor), without Kokkos or
// CUDA: TensorCores<Kokkos::Cuda> asks the device it runs on, and a store's or a measurement
// cache's header names a GPU's capability as its arch ("sm_90"), so any build can tell what
// that GPU's tuner was given (kgemm-compare-strategies replays a GPU's searches on the host).
#include <string>

namespace kgemm {

// kgemm's fp16 fragments (ldmatrix, mma.sync m16n8k16) from Turing on; its TF32 ones (3xTF32 for
// fp32) from Ampere on.
inline constexpr int kMinTensorCoreCapability = 75, kMinTf32Capability = 80;

struct GpuTensorCores {
  bool fp16 = false;  // runs the fp16 fragments
  bool tf32 = false;  // runs the TF32 ones
};

inline GpuTensorCores tensor_cores_of(int capability) {
  return {capability >= kMinTensorCoreCapability, capability >= kMinTf32Capability};
}

// The capability an arch names: "sm_90" and "sm_90a" 90, "sm_120" 120; 0 where it names none
// (a host's arch, "sm_", "sm_9x").
inline int capability_of_arch(const std::string& arch) {
  if (arch.compare(0, 3, "sm_") != 0) return 0;
  std::size_t end = 3;
  while (end < arch.size() && arch[end] >= '0' && arch[end] <= '9') ++end;
  if (end == 3 || end - 3 > 4 || (end < arch.size() && !(end + 1 == arch.size() && arch[end] == 'a'))) return 0;
  return std::stoi(arch.substr(3, end - 3));
}

}  // namespace kgemm
