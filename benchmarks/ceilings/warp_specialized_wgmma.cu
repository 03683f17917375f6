// warp_specialized_wgmma: would a producer warpgroup beat the warpgroup kernel's team barrier,
// and what does staging A in shared memory too buy? A study outside Kokkos of the designs
// docs/gpu-notes.md weighs (s17, s18 rows). A producer warpgroup stages each slab into S swizzled
// buffers with cp.async, makes it visible to the tensor cores and hands it over through an
// mbarrier (arrival counts of 128); each consumer warpgroup owns a 64 x 128 tile of C (one, or
// two sharing B: 128 x 128) and hands each buffer back through another. No team barrier, no
// whole-team drain. Two consumer forms:
//   A in registers: each thread loads A's fragments as 16-byte runs a slab ahead in
//     wgmma::FragmentKOrder (as kgemm's WarpgroupGemm does); only B is staged; each slab is one
//     synchronous wgmma group.
//   A in shared memory: A's slab staged too (K-major, 128-byte swizzle), both operands read
//     through descriptors, one wgmma group left in flight; a stage goes back once the group
//     after it is issued, so the producer hands each slab over as soon as it lands.
// Measured within the 48 KB of team scratch Kokkos 4.6 gives a team and past it (the opt-in a
// newer Kokkos could ask for); two blocks per SM at 128 registers (__launch_bounds__(256, 2)), or
// one with the producer's registers moved to the consumers (setmaxnreg 40 / 232).
// Checked on sampled elements against an fp64 host reference on random inputs (C poisoned with
// NaN first); timed with CUDA events, mean of 20 runs after one.
// Standalone; needs CUDA >= 12 and sm_90a (docs/gpu.md):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I spaces -o warp_specialized_wgmma \
//        benchmarks/ceilings/warp_specialized_wgmma.cu && ./warp_specialized_wgmma
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "study_support.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace wg = kgemm::wgmma;

constexpr int kTileN = 128, kWarpgroup = 128;

// A stage: B's slab (KB x 128), then, with A in shared memory, A's (64 Consumers x KB).
template <int KB, int Consumers, bool AShared>
__host__ __device__ constexpr int stage_elements() {
  return KB * kTileN + (AShared ? 64 * Consumers * KB : 0);
}
template <int KB, int Stages, int Consumers, bool AShared>
constexpr int shared_bytes() {
  return Stages * stage_elements<KB, Consumers, AShared>() * int(sizeof(__half)) + 2 * Stages * 8 + wg::kSwizzleAtomBytes;
}

#if defined(KGEMM_WGMMA)
__device__ inline void barrier_init(std::uint64_t* b, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(b)), "r"(count));
}
__device__ inline void barrier_arrive(std::uint64_t* b) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(shared_address(b)) : "memory");
}
__device__ inline void barrier_wait(std::uint64_t* b, int parity) {
  asm volatile(
      "{\n.reg .pred done;\nwaiting:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n@!done bra waiting;\n}\n" ::"r"(
          shared_address(b)),
      "r"(parity)
      : "memory");
}
#endif

// C (M x N) = A (M x K) B (K x N), all row-major fp16; M % (64 Consumers) == 0, N % 128 == 0,
// K % KB == 0. Consumers warpgroups own 64 x 128 tiles stacked along M and share B's slabs.
// AShared (KB = 64 or 32): the producer stages A's slab too (K-major, 128- or 64-byte swizzle), the consumers
// multiply from two descriptors and leave one group in flight, handing a stage back once the
// group after it is issued.
template <int KB, int Stages, int BlocksPerSM, int Consumers, bool AShared = false>
__global__ void __launch_bounds__(kWarpgroup * (Consumers + 1), BlocksPerSM)
    warp_specialized_gemm(const __half* A, const __half* B, __half* C, int M, int N, int K) {
#if defined(KGEMM_WGMMA)
  static_assert(!AShared || KB == 64 || KB == 32, "A's slab is one swizzled tile deep: rows of 128 or 64 bytes");
  static_assert(Stages >= 2, "a slab is staged while another is multiplied");
  constexpr int kSteps = KB / wg::kInstructionK, kStageElements = stage_elements<KB, Consumers, AShared>();
  extern __shared__ unsigned char raw[];
  __half* slabs = reinterpret_cast<__half*>(swizzle_aligned(raw));
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(slabs + Stages * kStageElements);
  std::uint64_t* empty = full + Stages;
  if (threadIdx.x == 0)
    for (int s = 0; s < Stages; ++s) barrier_init(&full[s], kWarpgroup), barrier_init(&empty[s], kWarpgroup * Consumers);
  __syncthreads();
  const int blocks_n = N / kTileN, m0 = blockIdx.x / blocks_n * 64 * Consumers, n0 = blockIdx.x % blocks_n * kTileN;
  const int slabs_k = K / KB;
  const wg::FragmentKOrder order{kSteps};
  if (threadIdx.x >= kWarpgroup * Consumers) {  // the producer: B's slab rows in the fragment K order, 8 apart
    if constexpr (BlocksPerSM == 1) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    const int p = threadIdx.x - kWarpgroup * Consumers, row0 = p / 16, col = p % 16 * 8;
    // Slab rows 8 apart: source rows 2 apart in the fragment K order, 8 apart in K's own.
    const int src_row0 = AShared ? row0 : order.source_k(row0), src_step = AShared ? 8 : 2;
    const __half* from = B + std::size_t(src_row0) * N + n0 + col;
    // A: KB / 8 runs a row, so the producer's 128 threads copy 1024 / KB rows a pass.
    constexpr int kRunsPerRow = KB / 8, kRowsPerPass = kWarpgroup / kRunsPerRow;
    const __half* a_from = A + std::size_t(m0 + p / kRunsPerRow) * K + p % kRunsPerRow * 8;
    const unsigned a_to0 =
        shared_address(slabs + KB * kTileN) + 2 * wg::SwizzledSlab{64 * Consumers, KB, 2}.offset(p / kRunsPerRow, p % kRunsPerRow * 8);
    const unsigned to0 = shared_address(slabs) + 2 * wg::SwizzledSlab{KB, wg::kTileK, 2}.offset(row0, col);
    for (int t = 0; t < slabs_k; ++t) {
      const int s = t % Stages;
      // Slab t - (Stages - 1) is handed over before waiting for a stage to come back: a consumer
      // with a group in flight gives a stage back only once the next slab's group is issued.
      if (t >= Stages - 1) {  // its group and Stages - 2 younger ones were committed
        copies_wait<Stages - 2>();
        wg::fence_shared_for_async();
        barrier_arrive(&full[(t - (Stages - 1)) % Stages]);
      }
      if (t >= Stages) barrier_wait(&empty[s], (t / Stages - 1) & 1);
      const __half* src = from + std::size_t(t) * KB * N;
#pragma unroll
      for (int i = 0; i < KB / 8; ++i)
        copy_run(to0 + 2 * (s * kStageElements + i * 8 * wg::kTileK), src + std::size_t(src_step * i) * N);
      if constexpr (AShared) {
#pragma unroll
        for (int i = 0; i < 64 * Consumers / kRowsPerPass; ++i)
          copy_run(a_to0 + 2 * (s * kStageElements + i * kRowsPerPass * KB), a_from + std::size_t(kRowsPerPass * i) * K + t * KB);
      }
      copies_commit();  // one group per slab
    }
    for (int t = slabs_k > Stages - 1 ? slabs_k - (Stages - 1) : 0; t < slabs_k; ++t) {
      copies_wait<0>();  // the last slabs: all of them landed at the first turn
      wg::fence_shared_for_async();
      barrier_arrive(&full[t % Stages]);
    }
    return;
  }
  if constexpr (BlocksPerSM == 1) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row = m0 + 16 * warp + lane / 4;  // warps of all consumers
  float d[kTileN / 2];
  for (float& x : d) x = 0.0f;
  if constexpr (AShared) {
    const int consumer = threadIdx.x / kWarpgroup;
    wg::pin_accumulators(d);
    for (int t = 0; t < slabs_k; ++t) {
      const int s = t % Stages;
      barrier_wait(&full[s], (t / Stages) & 1);
      const unsigned b = shared_address(slabs + s * kStageElements);
      const unsigned a = shared_address(slabs + s * kStageElements + KB * kTileN + consumer * 64 * KB);
      wg::fence();
#pragma unroll
      for (int q = 0; q < kSteps; ++q)
        wg::mma_async<kTileN, true>(d, wg::descriptor_k_major(a + 2 * q * wg::kInstructionK, 2 * KB),
                                    wg::descriptor_mn_major(b + 2 * q * wg::kInstructionK * wg::kTileK, 2 * KB * wg::kTileK),
                                    true);
      wg::commit_group();
      if (t > 0) {  // the previous slab's group is done: its stage goes back
        wg::wait_group<1>();
        barrier_arrive(&empty[(t - 1) % Stages]);
      }
    }
    wg::wait_group<0>();
    wg::pin_accumulators(d);
  } else {
  const __half* a_rows[2] = {A + std::size_t(row) * K + order.first_k(lane % 4),
                             A + std::size_t(row + 8) * K + order.first_k(lane % 4)};
  unsigned next[2][2 * kSteps], now[kSteps][4];
  const auto load_runs = [&](int t) {
#pragma unroll
    for (int e = 0; e < 2; ++e)
#pragma unroll
      for (int s = 0; s < kSteps; s += 2) {
        const uint4 run = *reinterpret_cast<const uint4*>(a_rows[e] + std::size_t(t) * KB + 4 * s);
        next[e][2 * s] = run.x, next[e][2 * s + 1] = run.y, next[e][2 * s + 2] = run.z, next[e][2 * s + 3] = run.w;
      }
  };
  load_runs(0);
  for (int t = 0; t < slabs_k; ++t) {
    const int s = t % Stages;
#pragma unroll
    for (int q = 0; q < kSteps; ++q)
#pragma unroll
      for (int e = 0; e < 4; ++e) now[q][e] = next[e % 2][2 * q + e / 2];
    if (t + 1 < slabs_k) load_runs(t + 1);
    barrier_wait(&full[s], (t / Stages) & 1);
    const unsigned b = shared_address(slabs + s * kStageElements);
    wg::pin_accumulators(d);
    wg::fence();
#pragma unroll
    for (int q = 0; q < kSteps; ++q)
      wg::mma_async_a_in_registers<kTileN>(
          d, now[q], wg::descriptor_mn_major(b + 2 * q * wg::kInstructionK * wg::kTileK, 2 * KB * wg::kTileK), true);
    wg::commit_group();
    wg::wait_group<0>();
    wg::pin_accumulators(d);
    barrier_arrive(&empty[s]);
  }
  }
  __half* c = C + std::size_t(row) * N + n0 + 2 * (lane % 4);
#pragma unroll
  for (int j = 0; j < kTileN / 8; ++j) {
    *reinterpret_cast<__half2*>(c + 8 * j) = __floats2half2_rn(d[4 * j], d[4 * j + 1]);
    *reinterpret_cast<__half2*>(c + std::size_t(8) * N + 8 * j) = __floats2half2_rn(d[4 * j + 2], d[4 * j + 3]);
  }
#else
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K;
#endif
}

template <int KB, int Stages, int BlocksPerSM, int Consumers, bool AShared = false>
void measure(int M, int N, int K) {
  std::mt19937 random(20261125);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<__half> a(std::size_t(M) * K), b(std::size_t(K) * N), c(std::size_t(M) * N);
  for (auto& x : a) x = __float2half(value(random));
  for (auto& x : b) x = __float2half(value(random));
  __half *da, *db, *dc;
  CHECK_CUDA(cudaMalloc(&da, a.size() * 2));
  CHECK_CUDA(cudaMalloc(&db, b.size() * 2));
  CHECK_CUDA(cudaMalloc(&dc, c.size() * 2));
  CHECK_CUDA(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dc, 0xFF, c.size() * 2));  // NaN
  const int blocks = M / (64 * Consumers) * (N / kTileN), bytes = shared_bytes<KB, Stages, Consumers, AShared>();
  const auto kernel = warp_specialized_gemm<KB, Stages, BlocksPerSM, Consumers, AShared>;
  // Past 48 KB only with the opt-in (what Kokkos 4.6 does not ask for).
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  const auto launch = [&] { kernel<<<blocks, kWarpgroup * (Consumers + 1), bytes>>>(da, db, dc, M, N, K); };
  launch();
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(c.data(), dc, c.size() * 2, cudaMemcpyDeviceToHost));
  double worst = 0.0;  // |C - fp64| / sum_k |a b|, on 2048 sampled elements
  std::uniform_int_distribution<int> pick_i(0, M - 1), pick_j(0, N - 1);
  for (int n = 0; n < 2048; ++n) {
    const int i = pick_i(random), j = pick_j(random);
    double exact = 0.0, size = 0.0;
    for (int k = 0; k < K; ++k) {
      const double p = double(__half2float(a[std::size_t(i) * K + k])) * __half2float(b[std::size_t(k) * N + j]);
      exact += p, size += std::fabs(p);
    }
    const double got = __half2float(c[std::size_t(i) * N + j]);
    worst = std::isfinite(got) ? std::fmax(worst, std::fabs(got - exact) / size) : INFINITY;
  }
  const float ms = mean_launch_ms(launch, 20);
  std::printf("%3d x 128 tiles, A in %s, kb %2d, %d buffers (%3d KB), %d block(s)/SM  %6d x %4d x %4d  %6.1f TFLOP/s  error %.1e%s\n",
              64 * Consumers, AShared ? "shared   " : "registers", KB, Stages, bytes / 1024, BlocksPerSM, M, N, K, 2.0 * M * N * K / (ms * 1e-3) / 1e12, worst,
              worst <= 1e-3 ? "" : "  WRONG");
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dc));
}

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a line per config, also into a pipe cut short by a timeout
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line out as it is measured, even into a pipe
  // ResNet-50 batch-128 layers (im2col) the warpgroup kernel runs.
  const int shapes[][3] = {{6272, 512, 4608}, {25088, 512, 1024}, {25088, 256, 2304},
                           {100352, 512, 128}, {401408, 128, 256}, {6272, 2048, 1024}};
  for (const auto& s : shapes) {
    measure<64, 2, 2, 1>(s[0], s[1], s[2]);  // A in registers, within 48 KB
    measure<64, 2, 1, 2>(s[0], s[1], s[2]);
    measure<64, 4, 1, 2>(s[0], s[1], s[2]);  // past 48 KB
    measure<64, 2, 1, 2, true>(s[0], s[1], s[2]);  // A in shared memory, a group in flight
    measure<64, 4, 1, 2, true>(s[0], s[1], s[2]);
    measure<64, 6, 1, 2, true>(s[0], s[1], s[2]);
    measure<64, 3, 2, 1, true>(s[0], s[1], s[2]);
    measure<32, 3, 2, 1, true>(s[0], s[1], s[2]);  // within 48 KB: 64-byte rows of A
    measure<32, 4, 2, 1, true>(s[0], s[1], s[2]);
  }
}
