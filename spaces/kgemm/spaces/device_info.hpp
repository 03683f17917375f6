#pragma once
// Which hardware an execution space runs on: the fingerprint a tuned-config store carries and
// the name of its file. Host spaces count their threads too, since the best tiles change with them.
#include <Kokkos_Core.hpp>
#include <sys/utsname.h>

#include <cctype>
#include <fstream>
#include <string>
#include <utility>

#include "kgemm/spaces/host_vector_width.hpp"
#include "kgemm/spaces/lowercase.hpp"

namespace kgemm {

struct DeviceInfo {
  std::string space;   // "serial" | "openmp" | "cuda"
  std::string device;  // CPU model name from /proc/cpuinfo, or cudaDeviceProp.name
  std::string arch;    // "sm_90" (compute capability) on GPUs; on CPUs the machine and the widest SIMD both
                       // the CPU and the build have (kHostVectorBits): "x86_64-avx512", "x86_64-avx2"
  int threads = 0;     // ExecSpace().concurrency() on host spaces, SM count on GPUs
  // Peak memory bandwidth in GB/s (10^9 bytes/s): on GPUs the memory clock x bus width x 2 (double
  // data rate) the driver reports; 0 where no API reports it (host spaces). A fact about the
  // device, not part of its identity: stores written before it was recorded belong to it too.
  double memory_gbps = 0;
  // On CPUs, whether the CPU has wider SIMD than the build uses (an AVX2 build on an AVX-512 CPU):
  // its store is then named for arch too (device_slug), apart from the wider build's on the same
  // CPU. Told by arch in a store's header.
  bool narrower_build = false;

  bool is_host() const { return space != "cuda"; }

  friend bool operator==(const DeviceInfo& a, const DeviceInfo& b) {
    return a.space == b.space && a.device == b.device && a.arch == b.arch && a.threads == b.threads &&
           a.memory_gbps == b.memory_gbps && a.narrower_build == b.narrower_build;
  }
};

namespace detail {

// The value of the first "key : value" line of /proc/cpuinfo named `key`; empty if none.
inline std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || line.compare(0, key.size(), key) != 0 ||
        line.find_first_not_of(" \t", key.size()) != colon)
      continue;
    const auto value = line.find_first_not_of(" \t", colon + 1);
    return value == std::string::npos ? "" : line.substr(value);
  }
  return "";
}

// The SIMD extensions a CPU's arch may name, widest first: the flag /proc/cpuinfo lists (x86
// "flags", Arm "Features"), the name in arch, and the width of the registers kgemm's kernels use
// of it.
struct SimdExtension {
  const char* flag;
  const char* name;
  int bits;
};
inline constexpr SimdExtension kSimdWidestFirst[] = {{"avx512f", "avx512", 512}, {"avx2", "avx2", 256},
                                                     {"avx", "avx", 256},         {"sse4_2", "sse4.2", 128},
                                                     {"sve", "sve", 128},         {"asimd", "neon", 128}};

// The machine and the SIMD kgemm uses on this CPU: "x86_64-avx512" is the machine, then the
// widest extension the CPU reports whose registers are no wider than the build's
// (kHostVectorBits); the machine alone when none is known. `narrower`: whether the CPU reports
// a wider extension than that.
inline std::string host_arch(bool& narrower) {
  utsname names{};
  const std::string machine = uname(&names) == 0 ? names.machine : "unknown";
  const std::string flags = " " + cpuinfo_field("flags") + " " + cpuinfo_field("Features") + " ";
  narrower = false;
  for (const SimdExtension& extension : kSimdWidestFirst) {
    if (flags.find(std::string(" ") + extension.flag + " ") == std::string::npos) continue;
    if (extension.bits <= kHostVectorBits) return machine + "-" + extension.name;
    narrower = true;
  }
  return machine;
}

}  // namespace detail

// Kokkos must be initialised (the thread count and the CUDA device are Kokkos' choice).
template <class ExecSpace>
DeviceInfo device_info() {
  const std::string model = detail::cpuinfo_field("model name");
  DeviceInfo info{lowercase(ExecSpace::name()), model.empty() ? "unknown CPU" : model, "",
                  ExecSpace().concurrency()};
  info.arch = detail::host_arch(info.narrower_build);
  return info;
}

#if defined(KOKKOS_ENABLE_CUDA)
template <>
inline DeviceInfo device_info<Kokkos::Cuda>() {
  int id = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&id) != cudaSuccess || cudaGetDeviceProperties(&prop, id) != cudaSuccess)
    return {"cuda", "unknown GPU", "unknown", 0};
  // Attributes, not cudaDeviceProp fields: CUDA 13 dropped the memory clock from the struct.
  int memory_khz = 0, bus_bits = 0;
  const bool bandwidth_known = cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, id) == cudaSuccess &&
                               cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, id) == cudaSuccess;
  return {"cuda", prop.name, "sm_" + std::to_string(prop.major) + std::to_string(prop.minor),
          prop.multiProcessorCount, bandwidth_known ? 2.0 * memory_khz * 1e3 * bus_bits / 8 / 1e9 : 0.0};
}
#endif

// File-name form: lowercase, every run of other characters one '-', e.g.
// "openmp-amd-epyc-7b13-2t" (host spaces end in the thread count, after the SIMD where the build's
// is narrower than the CPU's: "openmp-amd-epyc-7b13-avx2-2t") or "cuda-nvidia-h100-80gb-hbm3".
inline std::string device_slug(const DeviceInfo& d) {
  const std::string simd = d.narrower_build ? " " + d.arch.substr(d.arch.rfind('-') + 1) : "";
  const std::string text = d.space + " " + d.device + (d.is_host() ? simd + " " + std::to_string(d.threads) + "t" : "");
  std::string slug;
  for (char ch : lowercase(text)) {
    if (std::isalnum(static_cast<unsigned char>(ch)))
      slug += ch;
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  if (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug;
}

// The width of the vector registers kgemm uses of a CPU arch's SIMD ("x86_64-avx2": 256); 0 for
// an arch that names none (GPUs, a CPU without a known extension).
inline int arch_vector_bits(const std::string& arch) {
  const std::string simd = arch.substr(arch.rfind('-') + 1);
  for (const detail::SimdExtension& extension : detail::kSimdWidestFirst)
    if (simd == extension.name) return extension.bits;
  return 0;
}

// Whether configs tuned on `a` suit `b`: same space, device and arch, and on host spaces the
// same thread count (on GPUs the SM count follows from the device).
inline bool same_device(const DeviceInfo& a, const DeviceInfo& b) {
  return a.space == b.space && a.device == b.device && a.arch == b.arch && (!a.is_host() || a.threads == b.threads);
}

// For messages: "openmp on AMD EPYC 7B13 (x86_64-avx512, 2 threads)", "cuda on NVIDIA H100 80GB
// HBM3 (sm_90, 132 SMs, 3352 GB/s)".
inline std::string to_string(const DeviceInfo& d) {
  return d.space + " on " + d.device + " (" + d.arch + ", " + std::to_string(d.threads) +
         (d.is_host() ? " threads" : " SMs") +
         (d.memory_gbps > 0 ? ", " + std::to_string(static_cast<long>(d.memory_gbps + 0.5)) + " GB/s)" : ")");
}

}  // namespace kgemm
