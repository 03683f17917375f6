// wgmma_tf32x3: what would Hopper's warpgroup MMA give fp32-accurate GEMM (3xTF32)? A study
// outside Kokkos of the form docs/gpu-notes.md describes (s18, "Not built"). TF32 wgmma reads
// shared-memory operands K-major only, and B (K x N, row-major) is MN-major, so each block
// computes its tile of C transposed, Cᵀ = Bᵀ Aᵀ: Aᵀ is K-major as A is stored and is staged with
// cp.async into swizzled rows of KB floats (the wgmma B operand, a block's 128 rows of C as its
// N); Bᵀ is the A operand, from registers, each thread loading its fragments B[k][n], B[k][n + 8],
// B[k + 4][n], B[k + 4][n + 8] straight from global memory a slab ahead. Each warpgroup owns 64
// columns of C: blocks of 128 x 64 or 128 x 128. 3xTF32: Bᵀ splits in registers (big rounded to
// nearest, small = the rest); the tensor cores truncate what they read of Aᵀ, so its small part
// (x minus x with its 13 low bits cleared) is written beside it in shared memory by a pass after
// each slab lands. Products: small Bᵀ · Aᵀ, big Bᵀ · small Aᵀ, big Bᵀ · Aᵀ. Passes = 1 times the
// last product alone (plain TF32: the rate's ceiling for this form, and TF32's error).
// Synchronous per slab (copies of the next slab in flight, one wgmma group waited for), two
// team barriers a slab; shared memory: two raw slabs and one small one.
// Checked on sampled elements against an fp64 host reference on random inputs (C poisoned with
// NaN first): |C - C64| / sum |a b|, beside a plain fp32 SIMT kernel's on the same inputs. Timed with CUDA events, mean of 20 runs after one.
// Standalone; needs CUDA >= 12 and sm_90a (docs/gpu.md):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I spaces -o wgmma_tf32x3 \
//        benchmarks/ceilings/wgmma_tf32x3.cu && ./wgmma_tf32x3
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "study_support.hpp"
#include "kgemm/spaces/mma_sync.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace wg = kgemm::wgmma;

constexpr int kWarpgroup = 128, kBlockM = 128;  // a block: 128 rows of C by 64 columns a warpgroup

// A slab: kBlockM rows of KB floats (rows of 4 KB bytes: 128- or 64-byte swizzle).
template <int KB>
__host__ __device__ constexpr int slab_bytes() {
  return kBlockM * KB * 4;
}
template <int KB>
constexpr int shared_bytes() {
  return 3 * slab_bytes<KB>() + wg::kSwizzleAtomBytes;  // two raw slabs, one small, 1 KB to align
}


// C (M x N) = A (M x K) B (K x N), fp32 row-major; M % 128 == 0, N % 128 == 0, K % KB == 0.
// Fresh: each slab's products go to accumulators of their own, added to C's in fp32 after the
// slab (as kgemm's mma.sync 3xTF32 does per 8 k): the tensor cores' own accumulation is not
// IEEE fp32's, and over the whole of K its error grows past the SIMT kernel's.
template <int KB, int Passes, int BlocksPerSM, int Warpgroups, bool Fresh>
__global__ void __launch_bounds__(Warpgroups * kWarpgroup, BlocksPerSM)
    tf32x3_gemm(const float* A, const float* B, float* C, int M, int N, int K) {
#if defined(KGEMM_WGMMA)
  constexpr int kSteps = KB / 8, kRowBytes = 4 * KB, kRunsPerRow = KB / 4;
  constexpr int kThreads = Warpgroups * kWarpgroup, kBlockN = 64 * Warpgroups;
  constexpr int kRunsPerThread = kBlockM * kRunsPerRow / kThreads;
  extern __shared__ unsigned char raw[];
  unsigned char* slabs = swizzle_aligned(raw);  // raw slab 0, raw slab 1, small slab
  const int blocks_n = N / kBlockN, m0 = blockIdx.x / blocks_n * kBlockM, n0 = blockIdx.x % blocks_n * kBlockN;
  const int slabs_k = K / KB, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // This thread's runs of A's slab: row p / kRunsPerRow (+ rows a pass), run p % kRunsPerRow.
  const int p = threadIdx.x;
  constexpr int kRowsPerPass = kThreads / kRunsPerRow;
  const float* a_from = A + std::size_t(m0 + p / kRunsPerRow) * K + p % kRunsPerRow * 4;
  unsigned offsets[kRunsPerThread];
#pragma unroll
  for (int i = 0; i < kRunsPerThread; ++i)
    offsets[i] = wg::swizzle(unsigned((p / kRunsPerRow + i * kRowsPerPass) * kRowBytes + p % kRunsPerRow * 16), kRowBytes);
  const auto stage = [&](int t) {
    const unsigned to = shared_address(slabs + (t % 2) * slab_bytes<KB>());
#pragma unroll
    for (int i = 0; i < kRunsPerThread; ++i) copy_run(to + offsets[i], a_from + std::size_t(i * kRowsPerPass) * K + t * KB);
    copies_commit();
  };
  // Bᵀ's fragments: this warp's rows n (16 w + l / 4, + 8), k l % 4 and + 4 of each 8-deep step.
  const int n = n0 + 16 * warp + lane / 4;
  const float* b_from = B + std::size_t(lane % 4) * N + n;
  float next[kSteps][4];
  const auto load = [&](int t) {
#pragma unroll
    for (int q = 0; q < kSteps; ++q) {
      const float* at = b_from + std::size_t(t * KB + 8 * q) * N;
      next[q][0] = at[0], next[q][1] = at[8], next[q][2] = at[std::size_t(4) * N], next[q][3] = at[std::size_t(4) * N + 8];
    }
  };
  float d[64];
  for (float& x : d) x = 0.0f;
  stage(0);
  load(0);
  unsigned char* small = slabs + 2 * slab_bytes<KB>();
  for (int t = 0; t < slabs_k; ++t) {
    unsigned big[kSteps][4], rest[kSteps][4];
#pragma unroll
    for (int q = 0; q < kSteps; ++q)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        big[q][e] = kgemm::detail::to_tf32(next[q][e]);
        rest[q][e] = kgemm::detail::to_tf32(next[q][e] - __uint_as_float(big[q][e]));
      }
    if (t + 1 < slabs_k) {
      stage(t + 1);
      load(t + 1);
      copies_wait<1>();
    } else {
      copies_wait<0>();
    }
    __syncthreads();  // slab t landed for every thread's copies
    unsigned char* slab = slabs + (t % 2) * slab_bytes<KB>();
    if constexpr (Passes == 3) {
#pragma unroll
      for (int i = 0; i < kRunsPerThread; ++i) {
        float4 x = *reinterpret_cast<const float4*>(slab + offsets[i]);
        x.x = wg::tf32_truncated_rest(x.x), x.y = wg::tf32_truncated_rest(x.y);
        x.z = wg::tf32_truncated_rest(x.z), x.w = wg::tf32_truncated_rest(x.w);
        *reinterpret_cast<float4*>(small + offsets[i]) = x;
      }
      wg::fence_shared_for_async();
      __syncthreads();
    }
    const unsigned at_raw = shared_address(slab), at_small = shared_address(small);
    float part[64];  // this slab's products, where Fresh
    float(&into)[64] = Fresh ? part : d;
    wg::pin_accumulators(into);
    wg::fence();
#pragma unroll
    for (int q = 0; q < kSteps; ++q) {
      if constexpr (Passes == 3) {  // the small terms first
        wg::mma_async_tf32_a_in_registers(into, rest[q], wg::descriptor_k_major(at_raw + 32 * q, kRowBytes), !Fresh || q > 0);
        wg::mma_async_tf32_a_in_registers(into, big[q], wg::descriptor_k_major(at_small + 32 * q, kRowBytes), true);
        wg::mma_async_tf32_a_in_registers(into, big[q], wg::descriptor_k_major(at_raw + 32 * q, kRowBytes), true);
      } else {
        wg::mma_async_tf32_a_in_registers(into, big[q], wg::descriptor_k_major(at_raw + 32 * q, kRowBytes), !Fresh || q > 0);
      }
    }
    wg::commit_group();
    wg::wait_group<0>();
    wg::pin_accumulators(into);
    if constexpr (Fresh)
#pragma unroll
      for (int i = 0; i < 64; ++i) d[i] += part[i];
    __syncthreads();  // slab t and the small slab are free for the next turn
  }
  // d[4j], d[4j + 1]: Cᵀ row n, columns m0 + 8 j + 2 (l % 4) + {0, 1}; d[4j + 2], d[4j + 3]: row n + 8.
#pragma unroll
  for (int j = 0; j < kBlockM / 8; ++j) {
    const int m = m0 + 8 * j + 2 * (lane % 4);
    C[std::size_t(m) * N + n] = d[4 * j];
    C[std::size_t(m + 1) * N + n] = d[4 * j + 1];
    C[std::size_t(m) * N + n + 8] = d[4 * j + 2];
    C[std::size_t(m + 1) * N + n + 8] = d[4 * j + 3];
  }
#else
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K;
#endif
}

// The fp32 SIMT reference the 3xTF32 error is set beside: one thread per element, fp32 FMAs in k order.
__global__ void simt_gemm(const float* A, const float* B, float* C, int M, int N, int K) {
  const int i = blockIdx.x, j = blockIdx.y * blockDim.x + threadIdx.x;
  if (j >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum = fmaf(A[std::size_t(i) * K + k], B[std::size_t(k) * N + j], sum);
  C[std::size_t(i) * N + j] = sum;
}

// Worst |C - fp64| / sum_k |a b| over 2048 sampled elements (the same ones for every call).
double sampled_error(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, int M, int N,
                     int K) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> pick_i(0, M - 1), pick_j(0, N - 1);
  double worst = 0.0;
  for (int s = 0; s < 2048; ++s) {
    const int i = pick_i(random), j = pick_j(random);
    double exact = 0.0, size = 0.0;
    for (int k = 0; k < K; ++k) {
      const double p = double(a[std::size_t(i) * K + k]) * b[std::size_t(k) * N + j];
      exact += p, size += std::fabs(p);
    }
    const double got = c[std::size_t(i) * N + j];
    worst = std::isfinite(got) ? std::fmax(worst, std::fabs(got - exact) / size) : INFINITY;
  }
  return worst;
}

template <int KB, int Passes, int BlocksPerSM, int Warpgroups, bool Fresh>
void measure(int M, int N, int K) {
  if (N % (64 * Warpgroups) != 0) return;  // whole blocks only
  std::mt19937 random(20261125);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> a(std::size_t(M) * K), b(std::size_t(K) * N), c(std::size_t(M) * N);
  for (auto& x : a) x = value(random);
  for (auto& x : b) x = value(random);
  float *da, *db, *dc;
  CHECK_CUDA(cudaMalloc(&da, a.size() * 4));
  CHECK_CUDA(cudaMalloc(&db, b.size() * 4));
  CHECK_CUDA(cudaMalloc(&dc, c.size() * 4));
  CHECK_CUDA(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dc, 0xFF, c.size() * 4));  // NaN
  const int blocks = M / kBlockM * (N / (64 * Warpgroups)), bytes = shared_bytes<KB>();
  const auto kernel = tf32x3_gemm<KB, Passes, BlocksPerSM, Warpgroups, Fresh>;
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  const auto launch = [&] { kernel<<<blocks, Warpgroups * kWarpgroup, bytes>>>(da, db, dc, M, N, K); };
  launch();
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost));
  const double worst = sampled_error(a, b, c, M, N, K);
  const float ms = mean_launch_ms(launch, 20);
  // The SIMT reference on the same inputs, for the error only.
  simt_gemm<<<dim3(M, (N + 127) / 128), 128>>>(da, db, dc, M, N, K);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> simt(c.size());
  CHECK_CUDA(cudaMemcpy(simt.data(), dc, simt.size() * 4, cudaMemcpyDeviceToHost));
  const double simt_worst = sampled_error(a, b, simt, M, N, K);
  // WRONG past what a correct kernel leaves: 3xTF32 near fp32's K u, TF32 alone near 2^-11.
  std::printf("%dxTF32, %s, 128 x %3d blocks, kb %2d (%2d KB), %d block(s)/SM  %6d x %4d x %4d  %6.1f TFLOP/s  error %.1e "
              "(fp32 SIMT %.1e: %.2fx)%s\n",
              Passes, Fresh ? "fresh per slab" : "one sum      ", 64 * Warpgroups, KB, bytes / 1024, BlocksPerSM, M, N, K, 2.0 * M * N * K / (ms * 1e-3) / 1e12,
              worst, simt_worst, worst / simt_worst, worst <= (Passes == 3 ? 1e-5 : 1e-2) ? "" : "  WRONG");
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dc));
}

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int shapes[][3] = {{6272, 512, 4608},  {25088, 512, 1024}, {25088, 256, 2304}, {100352, 512, 128},
                           {401408, 128, 256}, {6272, 2048, 1024}, {401408, 64, 576}};
  for (const auto& s : shapes) {
    measure<32, 1, 1, 2, false>(s[0], s[1], s[2]);
    measure<16, 3, 2, 2, false>(s[0], s[1], s[2]);
    measure<16, 3, 2, 1, false>(s[0], s[1], s[2]);
    measure<16, 3, 2, 2, true>(s[0], s[1], s[2]);
    measure<16, 3, 2, 1, true>(s[0], s[1], s[2]);
    measure<32, 3, 2, 1, true>(s[0], s[1], s[2]);
  }
}
