#pragma once
// The width in bits of the host vector registers this build compiles kgemm for: 512 (AVX-512:
// 32 registers), 256 (AVX, AVX2: 16 registers) or 128 (SSE, NEON, or no vectors). The host
// micro-tiles are chosen for it (kernels/kgemm/variants.hpp), and a CPU's device key names the
// SIMD the build uses on it (device_info.hpp). CMake sets KGEMM_HOST_VECTOR_BITS for kgemm and
// for every program using its package, from this header compiled with the build's flags, so
// that an application compiled for another target agrees with the library it links; without
// it, the compile target's width.
namespace kgemm {

#if defined(KGEMM_HOST_VECTOR_BITS)
constexpr int kHostVectorBits = KGEMM_HOST_VECTOR_BITS;
#elif defined(__AVX512F__)
constexpr int kHostVectorBits = 512;
#elif defined(__AVX__)
constexpr int kHostVectorBits = 256;
#else
constexpr int kHostVectorBits = 128;
#endif
static_assert(kHostVectorBits == 512 || kHostVectorBits == 256 || kHostVectorBits == 128,
              "KGEMM_HOST_VECTOR_BITS is 512, 256 or 128");

}  // namespace kgemm
