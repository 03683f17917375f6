#pragma once
// The random values kgemm's benchmarks, tools and tuner fill operands with, as a plain function
// (no Kokkos): standalone programs such as the cuBLAS peer generate the very same operands, so
// that both sides' errors are measured on the same inputs.
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KGEMM_HOST_DEVICE __host__ __device__
#else
#define KGEMM_HOST_DEVICE
#endif

namespace kgemm {

// Element i of the operand filled with `seed`: uniform in [-1, 1) with 24 random bits (exact in
// fp32), from splitmix64 of (seed, i).
KGEMM_HOST_DEVICE inline float uniform_from_hash(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return float(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

}  // namespace kgemm
