// The tensor-core building blocks of spaces/ as plain CUDA device functions, for
// ci/sm90a_check.sh: each instruction wrapper instantiated in a kernel, so that the SASS of an
// sm_90a build must show every instruction (and builds for other targets must show no wgmma).
#include <cstdint>

#include "kgemm/spaces/mbarrier.hpp"
#include "kgemm/spaces/mma_sync.hpp"
#include "kgemm/spaces/tensor_copy.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace wg = kgemm::wgmma;

// The layout arithmetic, checked at compile time on every host and device pass.
static_assert(wg::swizzled_offset(0, 0) == 0 && wg::swizzled_offset(0, 63) == 63, "row 0 is not permuted");
static_assert(wg::swizzled_offset(1, 0) == 64 + 8 && wg::swizzled_offset(1, 8) == 64, "row 1 swaps chunks 0 and 1");
static_assert(wg::swizzled_offset(7, 9) == 7 * 64 + 6 * 8 + 1, "row 7: chunk 1 -> 6");
static_assert(wg::swizzled_offset(8, 9) == wg::swizzled_offset(0, 9) + 8 * 64, "the pattern repeats every 8 rows");
static_assert(wg::descriptor_k_major(0x400, 128) == ((std::uint64_t(1) << 62) | (std::uint64_t(64) << 32) |
                                                      (std::uint64_t(1) << 16) | 0x40),
              "descriptor: 128-byte swizzle, 1024-byte group stride, address / 16");
static_assert((wg::descriptor_k_major(0x3FFF0, 128) & 0x3FFF) == 0x3FFF, "14 address bits");
static_assert(wg::SwizzledSlab{64, 32, 2}.offset(2, 0) == 2 * 32 + 8, "64-byte swizzle: rows 2 and 3 swap chunks 0 and 1");
static_assert(wg::SwizzledSlab{128, 16, 4}.offset(2, 0) == 2 * 16 + 4 && wg::SwizzledSlab{128, 32, 4}.offset(1, 0) == 32 + 4,
              "fp32 rows: 16 floats take the 64-byte swizzle, 32 the 128-byte one");
static_assert(wg::SwizzledSlab{16, 64, 2}.offset(3, 70) == 16 * 64 + 3 * 64 + 3 * 8 + 6, "second tile, row 3: chunk 0 -> 3");
static_assert(wg::descriptor_k_major(0x200, 64) == ((std::uint64_t(2) << 62) | (std::uint64_t(32) << 32) |
                                                   (std::uint64_t(1) << 16) | 0x20),
              "descriptor: 64-byte swizzle, 512-byte group stride");
static_assert(wg::descriptor_mn_major(0x800, 4096) == ((std::uint64_t(1) << 62) | (std::uint64_t(64) << 32) |
                                                      (std::uint64_t(256) << 16) | 0x80),
              "MN-major descriptor: tiles 4096 bytes apart (leading), 8-row groups 1024 apart (stride)");

// The fragment K order: a permutation of the slab's k, each thread's run contiguous.
static_assert(wg::FragmentKOrder{4}.source_k(0) == 0 && wg::FragmentKOrder{4}.source_k(2) == 16 &&
                  wg::FragmentKOrder{4}.source_k(8) == 2 && wg::FragmentKOrder{4}.source_k(16 + 8 + 6 + 1) == 48 + 6 + 1,
              "slab k 16 s + 8 h + 2 q + e holds the operand's k 16 q + 4 s + 2 h + e (four steps)");
static_assert(wg::FragmentKOrder{3}.source_k(47) == 47 && wg::FragmentKOrder{3}.source_k(8 + 3) == 12 + 2 + 1,
              "three steps: runs of 12");
static_assert(wg::FragmentKOrder{2}.source_k(2 + 8 * 3) == wg::FragmentKOrder{2}.source_k(2) + 2 * 3,
              "rows 8 j apart hold operand rows 2 j apart");

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

// One wgmma of each operand form: A and B K-major from shared memory, B MN-major, A from
// registers with B MN-major, or TF32 with A from registers and B K-major.
enum class Operands { KMajor, BMnMajor, ARegisters, Tf32ARegisters };

template <int N, Operands Form>
__global__ void wgmma_blocks(float* out) {
#if defined(KGEMM_WGMMA)
  extern __shared__ __align__(1024) unsigned char tiles[];
  const unsigned base = kgemm::detail::shared_address(tiles);
  wg::fence_shared_for_async();
  __syncthreads();
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  unsigned a[1][4] = {{threadIdx.x, threadIdx.x + 1, threadIdx.x + 2, threadIdx.x + 3}};
  wg::pin_accumulators(d);
  wg::pin_fragments(a);
  wg::fence();
  const std::uint64_t desc_a = wg::descriptor_k_major(base, 128);
  if constexpr (Form == Operands::KMajor)
    wg::mma_async<N>(d, desc_a, wg::descriptor_k_major(base + 64 * 128, 128), false);
  else if constexpr (Form == Operands::BMnMajor)
    wg::mma_async<N, true>(d, desc_a, wg::descriptor_mn_major(base + 64 * 128, 16 * 128), false);
  else if constexpr (Form == Operands::ARegisters)
    wg::mma_async_a_in_registers<N>(d, a[0], wg::descriptor_mn_major(base, 16 * 128), false);
  else
    wg::mma_async_tf32_a_in_registers(d, a[0], wg::descriptor_k_major(base, 64), false);
  wg::commit_group();
  wg::wait_group<0>();
  wg::pin_accumulators(d);
  wg::pin_fragments(a);
  float s = 0;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  out[threadIdx.x] = s;
#endif
}

template __global__ void wgmma_blocks<64, Operands::KMajor>(float*);
template __global__ void wgmma_blocks<128, Operands::KMajor>(float*);
template __global__ void wgmma_blocks<256, Operands::KMajor>(float*);
template __global__ void wgmma_blocks<128, Operands::BMnMajor>(float*);
template __global__ void wgmma_blocks<64, Operands::ARegisters>(float*);
template __global__ void wgmma_blocks<128, Operands::ARegisters>(float*);
template __global__ void wgmma_blocks<128, Operands::Tf32ARegisters>(float*);

// The shared-memory barriers and bulk tensor copies the warp-specialized kernel hands slab
// buffers over with: one thread initialises, one copies a box that completes on `full` by its
// bytes, the warp waits for the phase and hands the buffer back.
__global__ void mbarrier_blocks(const kgemm::tensor_copy::Map* map, float* out) {
#if defined(KGEMM_WGMMA)
  __shared__ __align__(1024) float slab[32 * 32];
  __shared__ std::uint64_t full, empty;
  if (threadIdx.x == 0) {
    kgemm::mbarrier::init(&full, 1), kgemm::mbarrier::init(&empty, 32);
    kgemm::mbarrier::init_visible_to_copies();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    kgemm::tensor_copy::prefetch(map);
    kgemm::mbarrier::arrive_expecting(&full, sizeof(slab));
    kgemm::tensor_copy::load_box(slab, map, &full, 0, 0, 0);
  }
  kgemm::mbarrier::wait(&full, 0);
  kgemm::mbarrier::arrive(&empty);
  kgemm::mbarrier::wait(&empty, 0);
  out[threadIdx.x] = slab[(4 * threadIdx.x + 4) % (32 * 4)];
#endif
}

// The register hand-over of a warp-specialized team (setmaxnreg): under launch bounds of 384
// threads, one team a multiprocessor, ptxas must start each thread with registers_at_entry (the
// pool the tiles' grow_registers waits on), and the SASS must hold the hand-over instructions.
constexpr int kHandoverTeam = 384;
__global__ void __launch_bounds__(kHandoverTeam, 1) register_handover_blocks(float* out) {
#if defined(KGEMM_WGMMA)
  if (threadIdx.x / wg::kWarpgroupThreads == kHandoverTeam / wg::kWarpgroupThreads - 1) {
    wg::shrink_registers<wg::kProducerRegisters>();
    return;
  }
  wg::grow_registers<wg::tile_registers(kHandoverTeam, 1)>();
  out[threadIdx.x] = float(threadIdx.x);
#endif
}
