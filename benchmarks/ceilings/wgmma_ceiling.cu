// wgmma_ceiling: Hopper's warpgroup MMA (kgemm/spaces/warpgroup_mma.hpp), fp16 in, fp32
// accumulate, checked and measured outside Kokkos. One warpgroup (128 threads) per block.
//   check: a one-stage GEMM (each block a 64 x N tile of C; per 64-deep slab, the block copies
//          A and B into 128-byte-swizzled shared memory, then four wgmma k-steps) against an
//          fp64 host reference on fresh random inputs: every element of small problems, sampled
//          elements of the timed one; C is poisoned (NaN) before every run.
//   gemm:  that GEMM timed (CUDA events, median of 10 after 2 warm-up runs): a floor for what
//          wgmma gives before any pipelining.
//   peak:  the instruction rate from shared memory with no global traffic (operands loaded
//          once, one wgmma group kept in flight), 1 to 4 warpgroups per SM: the ceiling.
// Standalone; needs CUDA >= 12 and sm_90a (docs/gpu.md):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I spaces -o wgmma_ceiling \
//        benchmarks/ceilings/wgmma_ceiling.cu && ./wgmma_ceiling
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "study_support.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace wg = kgemm::wgmma;

constexpr int kWarpgroup = 128;
constexpr int kTileM = 64;

// Dynamic shared memory for one block: the A tile (64 rows) and B tile (N rows) of one slab, the
// A tile first, both 1024-byte aligned (the launch asks for 1 KB more to align the start).
template <int N>
constexpr int shared_bytes() {
  return (kTileM + N) * wg::kTileK * int(sizeof(__half)) + wg::kSwizzleAtomBytes;
}

// Copies rows [row0, row0 + rows) x k [k0, k0 + 64) of a K-major matrix (leading dimension ld)
// into a swizzled tile, 16 bytes (8 fp16) per copy.
__device__ inline void copy_tile(__half* tile, const __half* src, int ld, int row0, int rows, int k0) {
  for (int c = threadIdx.x; c < rows * (wg::kTileK / 8); c += kWarpgroup) {
    const int row = c / (wg::kTileK / 8), k = c % (wg::kTileK / 8) * 8;
    *reinterpret_cast<int4*>(tile + wg::swizzled_offset(row, k)) =
        *reinterpret_cast<const int4*>(src + size_t(row0 + row) * ld + k0 + k);
  }
}

// C (M x N_total, row-major, fp32) = A (M x K, row-major) * B, B given as Bt (N_total x K,
// row-major, i.e. B column-major). M % 64 == 0, N_total % N == 0, K % 64 == 0.
template <int N>
__global__ void __launch_bounds__(kWarpgroup) gemm_one_stage(const __half* a, const __half* bt, float* c, int n_total,
                                                             int k_total) {
#if defined(KGEMM_WGMMA)
  extern __shared__ unsigned char raw[];
  __half* tile_a = reinterpret_cast<__half*>(swizzle_aligned(raw));
  __half* tile_b = tile_a + kTileM * wg::kTileK;
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * N;
  // Defined before the first wgmma (undefined accumulators serialize the wgmma, ptxas C7515), and
  // NaN, so that a first k-step that added to them instead of overwriting them shows in C.
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = __int_as_float(0x7fffffff);
  for (int k0 = 0; k0 < k_total; k0 += wg::kTileK) {
    copy_tile(tile_a, a, k_total, row0, kTileM, k0);
    copy_tile(tile_b, bt, k_total, col0, N, k0);
    wg::fence_shared_for_async();
    __syncthreads();
    wg::pin_accumulators(d);
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < wg::kTileK; kk += wg::kInstructionK)
      wg::mma_async<N>(d, wg::descriptor_k_major(shared_address(tile_a + kk), 128),
                       wg::descriptor_k_major(shared_address(tile_b + kk), 128), k0 + kk > 0);
    wg::commit_group();
    wg::wait_group<0>();
    wg::pin_accumulators(d);
    __syncthreads();  // the next slab overwrites the tiles
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = row0 + 16 * warp + lane / 4;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    const int col = col0 + 8 * j + 2 * (lane % 4);
    *reinterpret_cast<float2*>(c + size_t(row) * n_total + col) = make_float2(d[4 * j], d[4 * j + 1]);
    *reinterpret_cast<float2*>(c + size_t(row + 8) * n_total + col) = make_float2(d[4 * j + 2], d[4 * j + 3]);
  }
#endif
}

// The instruction rate: each block loads one A and one B tile once, then issues `iters` groups of
// four k-steps, waiting only for the group before the last (one in flight while the next issues).
template <int N>
__global__ void __launch_bounds__(kWarpgroup) peak(const __half* a, const __half* bt, float* out, int iters) {
#if defined(KGEMM_WGMMA)
  extern __shared__ unsigned char raw[];
  __half* tile_a = reinterpret_cast<__half*>(swizzle_aligned(raw));
  __half* tile_b = tile_a + kTileM * wg::kTileK;
  copy_tile(tile_a, a, wg::kTileK, 0, kTileM, 0);
  copy_tile(tile_b, bt, wg::kTileK, 0, N, 0);
  wg::fence_shared_for_async();
  __syncthreads();
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  for (int i = 0; i < iters; ++i) {
    wg::pin_accumulators(d);
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < wg::kTileK; kk += wg::kInstructionK)
      wg::mma_async<N>(d, wg::descriptor_k_major(shared_address(tile_a + kk), 128),
                       wg::descriptor_k_major(shared_address(tile_b + kk), 128), true);
    wg::commit_group();
    wg::wait_group<1>();
  }
  wg::wait_group<0>();
  wg::pin_accumulators(d);
  float s = 0;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  if (s == 1234.5f) out[0] = s;  // keeps the work; practically never true
#endif
}

struct Problem {
  int m, n, k;
  std::vector<__half> a, bt;  // A row-major (M x K), Bt row-major (N x K)
  std::vector<double> a64, bt64;
};

Problem random_problem(int m, int n, int k, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Problem p{m, n, k, std::vector<__half>(size_t(m) * k), std::vector<__half>(size_t(n) * k),
            std::vector<double>(size_t(m) * k), std::vector<double>(size_t(n) * k)};
  for (size_t i = 0; i < p.a.size(); ++i) p.a[i] = __float2half(u(rng)), p.a64[i] = __half2float(p.a[i]);
  for (size_t i = 0; i < p.bt.size(); ++i) p.bt[i] = __float2half(u(rng)), p.bt64[i] = __half2float(p.bt[i]);
  return p;
}

struct DeviceProblem {
  __half *a = nullptr, *bt = nullptr;
  float* c = nullptr;
  explicit DeviceProblem(const Problem& p) {
    CHECK_CUDA(cudaMalloc(&a, p.a.size() * sizeof(__half)));
    CHECK_CUDA(cudaMalloc(&bt, p.bt.size() * sizeof(__half)));
    CHECK_CUDA(cudaMalloc(&c, size_t(p.m) * p.n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(a, p.a.data(), p.a.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(bt, p.bt.data(), p.bt.size() * sizeof(__half), cudaMemcpyHostToDevice));
  }
  ~DeviceProblem() { cudaFree(a), cudaFree(bt), cudaFree(c); }
};

template <int N>
void launch_gemm(const Problem& p, const DeviceProblem& d) {
  gemm_one_stage<N><<<dim3(p.n / N, p.m / kTileM), kWarpgroup, shared_bytes<N>()>>>(d.a, d.bt, d.c, p.n, p.k);
  CHECK_CUDA(cudaGetLastError());
}

// Checks C element (i, j) against the fp64 product of the fp16 inputs. Products of fp16 values are
// exact in fp32, so the error is the fp32 accumulation's: at most K u sum |a_ik b_kj| (u = 2^-24)
// for sequential sums; the bound allows twice that for the tensor cores' own summation order.
struct ErrorStats {
  double worst_ratio = 0, sq_err = 0, sq_ref = 0;
  long checked = 0, failed = 0;
};
void check_element(const Problem& p, const std::vector<float>& c, int i, int j, ErrorStats& s) {
  double ref = 0, magnitude = 0;
  const double* ai = &p.a64[size_t(i) * p.k];
  const double* bj = &p.bt64[size_t(j) * p.k];
  for (int k = 0; k < p.k; ++k) ref += ai[k] * bj[k], magnitude += std::fabs(ai[k] * bj[k]);
  const double got = c[size_t(i) * p.n + j], err = std::fabs(got - ref);
  const double bound = 2.0 * p.k * std::ldexp(1.0, -24) * magnitude;
  s.worst_ratio = std::max(s.worst_ratio, magnitude > 0 ? err / bound : 0.0);
  s.sq_err += err * err, s.sq_ref += ref * ref, ++s.checked;
  if (!(err <= bound)) {  // NaN (an element never written) fails too
    if (s.failed++ < 5) std::printf("  C(%d, %d) = %.8g, fp64 reference %.8g, bound %.3g\n", i, j, got, ref, bound);
  }
}

// Runs the GEMM on poisoned C and checks it: every element, or `samples` random ones plus every
// element's being written.
template <int N>
bool run_check(const Problem& p, const DeviceProblem& d, long samples, std::mt19937& rng) {
  CHECK_CUDA(cudaMemset(d.c, 0xFF, size_t(p.m) * p.n * sizeof(float)));  // all NaN
  launch_gemm<N>(p, d);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> c(size_t(p.m) * p.n);
  CHECK_CUDA(cudaMemcpy(c.data(), d.c, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  ErrorStats s;
  const long unwritten = std::count_if(c.begin(), c.end(), [](float x) { return std::isnan(x); });
  if (samples <= 0) {
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) check_element(p, c, i, j, s);
  } else {
    std::uniform_int_distribution<int> ri(0, p.m - 1), rj(0, p.n - 1);
    for (long t = 0; t < samples; ++t) check_element(p, c, ri(rng), rj(rng), s);
  }
  const bool ok = s.failed == 0 && unwritten == 0;
  std::printf("check  m64n%-3d %5dx%5dx%5d: %s (%ld elements checked, %ld failed, %ld left unwritten; "
              "rel. Frobenius error %.2e, worst error / bound %.3f)\n",
              N, p.m, p.n, p.k, ok ? "PASS" : "FAIL", s.checked, s.failed, unwritten, std::sqrt(s.sq_err / s.sq_ref),
              s.worst_ratio);
  return ok;
}

template <int N>
double time_gemm(const Problem& p, const DeviceProblem& d) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int w = 0; w < 2; ++w) launch_gemm<N>(p, d);
  std::vector<float> ms(10);
  for (float& t : ms) {
    CHECK_CUDA(cudaEventRecord(start));
    launch_gemm<N>(p, d);
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
  }
  std::sort(ms.begin(), ms.end());
  const double median_ms = 0.5 * (ms[4] + ms[5]);
  const double tflops = 2.0 * p.m * p.n * p.k / (median_ms * 1e-3) * 1e-12;
  std::printf("gemm   m64n%-3d %5dx%5dx%5d: %.3f ms median, %.1f TFLOP/s (one-stage, no pipelining)\n", N, p.m, p.n,
              p.k, median_ms, tflops);
  return tflops;
}

template <int N>
void time_peak(const DeviceProblem& tiles, int sms) {
  const int iters = 4096;
  float* out;
  CHECK_CUDA(cudaMalloc(&out, sizeof(float)));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int per_sm : {1, 2, 3, 4}) {
    const int blocks = sms * per_sm;
    peak<N><<<blocks, kWarpgroup, shared_bytes<N>()>>>(tiles.a, tiles.bt, out, 16);  // warm-up
    CHECK_CUDA(cudaGetLastError());
    std::vector<float> ms(5);
    for (float& t : ms) {
      CHECK_CUDA(cudaEventRecord(start));
      peak<N><<<blocks, kWarpgroup, shared_bytes<N>()>>>(tiles.a, tiles.bt, out, iters);
      CHECK_CUDA(cudaEventRecord(stop));
      CHECK_CUDA(cudaEventSynchronize(stop));
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    }
    std::sort(ms.begin(), ms.end());
    const double flops = double(blocks) * iters * (wg::kTileK / wg::kInstructionK) * 2.0 * kTileM * N * wg::kInstructionK;
    std::printf("peak   m64n%-3d %d warpgroup(s)/SM: %.1f TFLOP/s (median of 5, %.3f ms)\n", N, per_sm,
                flops / (ms[2] * 1e-3) * 1e-12, ms[2]);
  }
  CHECK_CUDA(cudaFree(out));
}

template <int N>
void allow_shared() {
  CHECK_CUDA(cudaFuncSetAttribute(gemm_one_stage<N>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes<N>()));
  CHECK_CUDA(cudaFuncSetAttribute(peak<N>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes<N>()));
}

int main() {
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, compute capability %d.%d, %d SMs, %d MHz\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.clockRate / 1000);
  if (prop.major != 9) {
    std::printf("wgmma needs compute capability 9.0 (sm_90a); this device has %d.%d\n", prop.major, prop.minor);
    return 1;
  }
  allow_shared<128>();
  allow_shared<256>();
  std::mt19937 rng(std::random_device{}());
  bool ok = true;
  {
    const Problem small = random_problem(192, 512, 320, rng);  // 5 slabs, 3 x 4 / 3 x 2 blocks
    const DeviceProblem d(small);
    ok &= run_check<128>(small, d, 0, rng);
    ok &= run_check<256>(small, d, 0, rng);
  }
  const Problem big = random_problem(8192, 8192, 8192, rng);
  const DeviceProblem d(big);
  ok &= run_check<128>(big, d, 4096, rng);
  ok &= run_check<256>(big, d, 4096, rng);
  if (!ok) {
    std::printf("wgmma_ceiling: FAILED correctness checks; no timings\n");
    return 1;
  }
  time_gemm<128>(big, d);
  time_gemm<256>(big, d);
  time_peak<128>(d, prop.multiProcessorCount);
  time_peak<256>(d, prop.multiProcessorCount);
  return 0;
}
