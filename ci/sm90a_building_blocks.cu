// The tensor-core building blocks of spaces/ as plain CUDA device functions, for
// ci/sm90a_check.sh: each instruction wrapper instantiated in a kernel, so that the SASS of an
// sm_90a build must show every instruction (and builds for other targets must show no wgmma).
#include <cstdint>

#include "kgemm/spaces/mma_sync.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace wg = kgemm::wgmma;

// The layout arithmetic, checked at compile time on every host and device pass.
static_assert(wg::swizzled_offset(0, 0) == 0 && wg::swizzled_offset(0, 63) == 63, "row 0 is not permuted");
static_assert(wg::swizzled_offset(1, 0) == 64 + 8 && wg::swizzled_offset(1, 8) == 64, "row 1 swaps chunks 0 and 1");
static_assert(wg::swizzled_offset(7, 9) == 7 * 64 + 6 * 8 + 1, "row 7: chunk 1 -> 6");
static_assert(wg::swizzled_offset(8, 9) == wg::swizzled_offset(0, 9) + 8 * 64, "the pattern repeats every 8 rows");
static_assert(wg::descriptor_k_major_sw128(0x400) == ((std::uint64_t(1) << 62) | (std::uint64_t(64) << 32) |
                                                      (std::uint64_t(1) << 16) | 0x40),
              "descriptor: 128-byte swizzle, 1024-byte group stride, address / 16");
static_assert((wg::descriptor_k_major_sw128(0x3FFF0) & 0x3FFF) == 0x3FFF, "14 address bits");

__global__ void mma_sync_blocks(float* out) {
#if defined(KGEMM_MMA)
  __shared__ __align__(16) unsigned short tile[16 * 16];
  for (int i = threadIdx.x; i < 16 * 16; i += 32) tile[i] = static_cast<unsigned short>(i);
  __syncwarp();
  const unsigned lane_row = kgemm::detail::shared_address(tile + (threadIdx.x % 16) * 16 + threadIdx.x / 16 * 8);
  unsigned a[4], b4[4];
  kgemm::detail::load_matrices<false>(a, lane_row);
  kgemm::detail::load_matrices<true>(b4, lane_row);
  const unsigned b[2] = {b4[0], b4[1]};
  float d[4] = {0, 0, 0, 0};
  kgemm::detail::multiply_accumulate(d, a, b);
#if defined(KGEMM_MMA_TF32)
  unsigned big[4];
  for (int e = 0; e < 4; ++e) big[e] = kgemm::detail::to_tf32(d[e]);
  kgemm::detail::multiply_accumulate_tf32(d, big, b);
#endif
  out[threadIdx.x] = d[0] + d[1] + d[2] + d[3];
#endif
}

template <int N>
__global__ void wgmma_blocks(float* out) {
#if defined(KGEMM_WGMMA)
  extern __shared__ __align__(1024) unsigned char tiles[];
  const unsigned base = kgemm::detail::shared_address(tiles);
  wg::fence_shared_for_async();
  __syncthreads();
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  wg::pin_accumulators(d);
  wg::fence();
  wg::mma_async<N>(d, wg::descriptor_k_major_sw128(base), wg::descriptor_k_major_sw128(base + 64 * 128), false);
  wg::commit_group();
  wg::wait_group<0>();
  wg::pin_accumulators(d);
  float s = 0;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  out[threadIdx.x] = s;
#endif
}

template __global__ void wgmma_blocks<64>(float*);
template __global__ void wgmma_blocks<128>(float*);
template __global__ void wgmma_blocks<256>(float*);
