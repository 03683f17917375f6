#pragma once
// Tensor cores behind the team pattern: a warp's WM x WN tile of C held in registers as
// 16 x 8 fp32 accumulator tiles, multiplied with `mma.sync` from fp16 scratch slabs (compute
// capability 7.5 and newer) or, fp32-accurate through three TF32 products, from fp32 ones (8.0
// and newer). Their register layout is documented (PTX ISA, "Matrix fragments for mma.m16n8k16"),
// unlike WMMA's, so results go from the registers straight to C two columns at a time. Spaces
// without tensor cores say so (TensorCores<>::available) and never run it.
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "kgemm/spaces/compat.hpp"
#include "kgemm/spaces/gpu_capability.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kgemm/spaces/mma_sync.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"
#endif

namespace kgemm {

template <class ExecSpace>
struct TensorCores {
  static constexpr bool available = false;
  static bool on_device() { return false; }
  static bool tf32_on_device() { return false; }
};

#if defined(KOKKOS_ENABLE_CUDA)
// A warp's WM x WN tile of C at (row0, col0) of the block, as 16 x 8 fp32 accumulator tiles in
// the mma m16n8 layout, which both tiles below share.
template <int WM, int WN>
struct WarpAccumulators {
  static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tiles are whole 16 x 16 fragments");
  static constexpr int FM = WM / 16, FN = WN / 8;  // 16 x 8 accumulator tiles
  float acc[FM][FN][4];
  int lane;

  KOKKOS_INLINE_FUNCTION explicit WarpAccumulators(int lane_in_warp) : lane(lane_in_warp) {
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  }

  // Calls f(i, j, value_j, value_j+1) for the lane's elements of the tile, two adjacent columns
  // at a time: of a 16 x 8 tile, lane l holds row l / 4 and row l / 4 + 8, columns 2 (l % 4) + 0, 1.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_pair(F&& f) const {
    const int row = lane / 4, col = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        f(16 * i + row, 8 * j + col, acc[i][j][0], acc[i][j][1]);
        f(16 * i + row + 8, 8 * j + col, acc[i][j][2], acc[i][j][3]);
      }
  }

  KOKKOS_INLINE_FUNCTION static void unsupported(const char* what) { Kokkos::abort(what); }
};

// fp16 slabs. A slab: row-major rows of the block (element (i, k) at i * ld_a + k); B slab:
// row-major K rows (element (k, j) at k * ld_b + j). Rows start 16-byte aligned (leading
// dimensions multiples of 8), as ldmatrix requires; with an odd number of 16-byte units per row,
// the eight rows one ldmatrix reads hit distinct banks.
template <int WM, int WN>
struct HalfWarpTile : WarpAccumulators<WM, WN> {
  using Base = WarpAccumulators<WM, WN>;
  using Base::acc, Base::lane, Base::FM, Base::FN;
  static constexpr int b_pad_runs = 1;  // 16-byte runs of padding after each B slab row
  KOKKOS_INLINE_FUNCTION explicit HalfWarpTile(int lane_in_warp) : Base(lane_in_warp) {}

  // acc += A[row0 : row0 + WM, 0 : depth] * B[0 : depth, col0 : col0 + WN]; depth % 16 == 0.
  KOKKOS_INLINE_FUNCTION void multiply(const half* a_slab, int ld_a, const half* b_slab, int ld_b, int row0,
                                       int col0, int depth) {
#if defined(KGEMM_MMA)
    // Lane l addresses row l % 16 of a 16 x 16 block: A's matrices are (rows 0-7 | 8-15) x
    // (k 0-7 | 8-15), the a0..a3 of mma's A fragment; B's are (k 0-7 | 8-15) x (columns 0-7 |
    // 8-15), transposed into the b0, b1 of two neighbouring 16 x 8 tiles.
    const unsigned a_lane = detail::shared_address(a_slab + (row0 + lane % 16) * ld_a + lane / 16 * 8);
    const unsigned b_lane = detail::shared_address(b_slab + (lane % 16) * ld_b + col0 + lane / 16 * 8);
    constexpr unsigned kBytes = sizeof(half);
    for (int k = 0; k < depth; k += 16) {
      unsigned a[FM][4], b[FN][2];
#pragma unroll
      for (int i = 0; i < FM; ++i) detail::load_matrices<false>(a[i], a_lane + kBytes * (16 * i * ld_a + k));
#pragma unroll
      for (int j = 0; j < FN; j += 2) {
        unsigned pair[4];
        detail::load_matrices<true>(pair, b_lane + kBytes * (k * ld_b + 8 * j));
        b[j][0] = pair[0], b[j][1] = pair[1], b[j + 1][0] = pair[2], b[j + 1][1] = pair[3];
      }
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) detail::multiply_accumulate(acc[i][j], a[i], b[j]);
    }
#else
    (void)a_slab, (void)ld_a, (void)b_slab, (void)ld_b, (void)row0, (void)col0, (void)depth;
    Base::unsupported("kgemm: fp16 tensor-core configs (_tc) need a GPU of compute capability 7.5 or newer");
#endif
  }
};

// fp32 slabs, laid out as HalfWarpTile's (A rows an odd number of 16-byte units apart), B's rows
// padded by 8 floats (ld_b = nb + 8 with nb a multiple of 16, so ld_b = 8 mod 16): the 32 lanes'
// reads of one B fragment register (row l % 4, column l / 4) then fall in distinct banks.
// fp32-accurate GEMM on TF32 tensor cores ("3xTF32", as CUTLASS' tfloat32x3): each operand x = big + small with big = tf32(x) and small = tf32(x -
// big); a * b is taken as big_a small_b + small_a big_b + big_a big_b, the small terms first.
// Each of the three products is exact in fp32; what is dropped (small_a small_b and the
// roundings of the small parts) is at most 3 * 2^-22 |a b| (tuner/.../error_bound.hpp counts it).
// The tensor cores add into their fp32 accumulator by truncation, an error of up to an ulp of the
// running sum per mma, always towards zero: summed over K that grows linearly, to several times
// the SIMT kernel's error on long K (docs/gpu-notes.md, 11-25 (tf32x3)). So each 8-deep step sums its three
// products in a fresh fragment, and that partial sum joins the accumulator with an ordinary
// fp32 add (round to nearest): K / 8 roundings of the running sum instead of SIMT's K.
template <int WM, int WN>
struct SplitTf32WarpTile : WarpAccumulators<WM, WN> {
  using Base = WarpAccumulators<WM, WN>;
  using Base::acc, Base::lane, Base::FM, Base::FN;
  static constexpr int b_pad_runs = 2;  // 8 floats
  KOKKOS_INLINE_FUNCTION explicit SplitTf32WarpTile(int lane_in_warp) : Base(lane_in_warp) {}

  // acc += A[row0 : row0 + WM, 0 : depth] * B[0 : depth, col0 : col0 + WN]; depth % 8 == 0.
  KOKKOS_INLINE_FUNCTION void multiply(const float* a_slab, int ld_a, const float* b_slab, int ld_b, int row0,
                                       int col0, int depth) {
#if defined(KGEMM_MMA_TF32)
    // A through ldmatrix as 16-bit pairs: matrices (rows 0-7 | 8-15) x (k 0-3 | 4-7) hand lane l
    // the fp32 elements of the TF32 A fragment. B element by element (no transposing load for
    // 32-bit elements).
    const unsigned a_lane = detail::shared_address(a_slab + (row0 + lane % 16) * ld_a + lane / 16 * 4);
    const float* b_lane = b_slab + (lane % 4) * ld_b + col0 + lane / 4;
    constexpr unsigned kBytes = sizeof(float);
    for (int k = 0; k < depth; k += 8) {
      unsigned a_big[FM][4], a_small[FM][4], b_big[FN][2], b_small[FN][2];
#pragma unroll
      for (int i = 0; i < FM; ++i) {
        detail::load_matrices<false>(a_big[i], a_lane + kBytes * (16 * i * ld_a + k));
#pragma unroll
        for (int e = 0; e < 4; ++e) split(__uint_as_float(a_big[i][e]), a_big[i][e], a_small[i][e]);
      }
#pragma unroll
      for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) split(b_lane[(k + 4 * e) * ld_b + 8 * j], b_big[j][e], b_small[j][e]);
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) {
          float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          detail::multiply_accumulate_tf32(part, a_big[i], b_small[j]);
          detail::multiply_accumulate_tf32(part, a_small[i], b_big[j]);
          detail::multiply_accumulate_tf32(part, a_big[i], b_big[j]);
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j][e] += part[e];
        }
    }
#else
    (void)a_slab, (void)ld_a, (void)b_slab, (void)ld_b, (void)row0, (void)col0, (void)depth;
    Base::unsupported("kgemm: fp32 tensor-core configs (_tc, 3xTF32) need a GPU of compute capability 8.0 or newer");
#endif
  }

#if defined(KGEMM_MMA_TF32)
  KOKKOS_INLINE_FUNCTION static void split(float x, unsigned& big, unsigned& small) {
    big = detail::to_tf32(x);
    small = detail::to_tf32(x - __uint_as_float(big));
  }
#endif
};

// Hopper's warpgroup MMA (sm_90a device code: KGEMM_WGMMA): four warps own a 64 x WN tile of C.
// A comes from registers, in the m16n8k16 A-fragment layout (each thread loads its own fp16
// pairs: `fragment_row`; their k in the slab's wgmma::FragmentKOrder, `fragment_run_k`), so that
// team scratch holds B alone; B is read by the
// tensor cores straight from its slab, row-major as it is stored (MN-major) in tiles of 64
// columns (wgmma::SwizzledSlab). Each warp holds 16 rows of the tile in the m16n8 accumulator
// layout, the one WarpAccumulators<16, WN> stores from.
template <int WN>
struct WarpgroupTile : WarpAccumulators<16, WN> {
  using Base = WarpAccumulators<16, WN>;
  using Base::acc;
  static constexpr int b_row = wgmma::kTileK;  // B tile width
  static constexpr int max_steps = 4;           // 16-deep steps of A held per slab: kb <= 64
  int warp;  // in the warpgroup: its rows start at 16 * warp
  KOKKOS_INLINE_FUNCTION explicit WarpgroupTile(int rank_in_group) : Base(rank_in_group % 32), warp(rank_in_group / 32) {}

  // Row (of the warpgroup's 64) of fragment register `e`'s pair: {row, k lo}, {row + 8, k lo},
  // {row, k hi}, {row + 8, k hi}.
  KOKKOS_INLINE_FUNCTION int fragment_row(int e) const { return 16 * warp + this->lane / 4 + 8 * (e % 2); }
  // The operand's k (from the slab's start) where this thread's run of k starts, slabs of `steps`
  // steps: the low pairs of step s are 4 s + {0, 1} into the run, the high ones 4 s + {2, 3}.
  KOKKOS_INLINE_FUNCTION int fragment_run_k(int steps) const {
    return wgmma::FragmentKOrder{steps}.first_k(this->lane % 4);
  }

  // acc += A (a[s]: the fragments of step s of the slab) * B[slab, col0 : col0 + WN], over the
  // slab's b_rows / 16 <= max_steps steps (all of them: in the fragment K order each step holds k
  // from across the slab; rows past K are zeros in both operands). The multiplications are
  // complete on return.
  KOKKOS_INLINE_FUNCTION void multiply(unsigned (&a)[max_steps][4], const half* b_slab, int b_rows, int col0) {
#if defined(KGEMM_WGMMA)
    static_assert(sizeof(acc) == WN / 2 * sizeof(float), "the accumulators are wgmma's N / 2 floats a thread");
    float(&d)[WN / 2] = reinterpret_cast<float(&)[WN / 2]>(acc);
    constexpr int kBytes = sizeof(half);
    const unsigned b_base = detail::shared_address(b_slab + col0 / b_row * b_rows * b_row);
    const unsigned b_tile_bytes = kBytes * b_rows * b_row;
    wgmma::pin_accumulators(d);
    wgmma::pin_fragments(a);
    wgmma::fence();
    // One straight run of instructions per step count: behind a test each, ptxas gives every
    // wgmma a fence of its own and the commit an empty wgmma.
    const auto steps = [&](auto count) {
#pragma unroll
      for (int s = 0; s < decltype(count)::value; ++s)
        wgmma::mma_async_a_in_registers<WN>(
            d, a[s], wgmma::descriptor_mn_major(b_base + kBytes * s * wgmma::kInstructionK * b_row, b_tile_bytes), true);
    };
    switch (b_rows / wgmma::kInstructionK) {
      case 1: steps(std::integral_constant<int, 1>{}); break;
      case 2: steps(std::integral_constant<int, 2>{}); break;
      case 3: steps(std::integral_constant<int, 3>{}); break;
      default: steps(std::integral_constant<int, max_steps>{}); break;
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();
    wgmma::pin_accumulators(d);
    wgmma::pin_fragments(a);
#else
    (void)a, (void)b_slab, (void)b_rows, (void)col0;
    Base::unsupported("kgemm: warpgroup configs (_wg) need device code compiled for sm_90a and a GPU of compute capability 9.0");
#endif
  }

  // acc += A (the warpgroup's 64 rows of a 64-deep slab staged K-major: rows of 128 bytes, the
  // 128-byte swizzle, from a_rows) * B[slab, col0 : col0 + WN] (MN-major tiles of 64 columns, 64
  // rows each), both read by the tensor cores through descriptors. Issued as one group and not
  // waited for: the caller keeps it in flight while the next slab lands (wait_for_groups). The
  // depth is fixed: behind a run-time test on it, ptxas closed each group with an empty wgmma of
  // its own, and waiting for all but one group then waited for the real one.
  static constexpr int staged_k = wgmma::kTileK;
  KOKKOS_INLINE_FUNCTION void multiply_staged(const half* a_rows, const half* b_slab, int col0) {
#if defined(KGEMM_WGMMA)
    float(&d)[WN / 2] = reinterpret_cast<float(&)[WN / 2]>(acc);
    constexpr int kBytes = sizeof(half), kSteps = staged_k / wgmma::kInstructionK;
    const unsigned a_base = detail::shared_address(a_rows);
    const unsigned b_base = detail::shared_address(b_slab + col0 / b_row * staged_k * b_row);
    wgmma::fence();
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
      wgmma::mma_async<WN, true>(
          d, wgmma::descriptor_k_major(a_base + kBytes * s * wgmma::kInstructionK, kBytes * staged_k),
          wgmma::descriptor_mn_major(b_base + kBytes * s * wgmma::kInstructionK * b_row, kBytes * staged_k * b_row), true);
    wgmma::commit_group();
#else
    (void)a_rows, (void)b_slab, (void)col0;
    Base::unsupported("kgemm: warp-specialized configs (_ws) need device code compiled for sm_90a and a GPU of compute capability 9.0");
#endif
  }

  // Returns once at most InFlight of the groups multiply_staged issued are still running; with
  // none left, the accumulators are the caller's again.
  template <int InFlight>
  KOKKOS_INLINE_FUNCTION void wait_for_groups() {
#if defined(KGEMM_WGMMA)
    wgmma::wait_group<InFlight>();
    if constexpr (InFlight == 0) wgmma::pin_accumulators(reinterpret_cast<float(&)[WN / 2]>(acc));
#endif
  }

  // f(i, j, value_j, value_j+1) over the thread's elements of the 64 x WN tile.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_pair(F&& f) const {
    const int rows = 16 * warp;
    Base::for_each_pair([&](int i, int j, float first, float second) { f(rows + i, j, first, second); });
  }
};

// fp32-accurate GEMM on Hopper's TF32 warpgroup MMA (3xTF32, sm_90a device code: KGEMM_WGMMA).
// TF32 `wgmma` reads shared-memory operands K-major only, and B is stored MN-major (rows of k), so
// four warps compute a 128 x 64 tile of C transposed, Cᵀ = Bᵀ Aᵀ: Aᵀ is the instruction's B
// operand, read by the tensor cores from the A slab as A is stored (rows of the block, K along
// them: rows of kb = 16 or 32 floats, swizzled: wgmma::SwizzledSlab); Bᵀ is its A operand, from
// registers, each thread loading its own fragments of B from memory (`fragment_col`,
// `fragment_k`). Each operand x = big + small: Bᵀ splits in registers (big = tf32(x), small =
// tf32(x - big)); the tensor cores truncate what they read of Aᵀ to TF32, so its small part
// (wgmma::tf32_truncated_rest) is a second slab beside the first, which the kernel writes. Three
// products per 8 k, the small terms first. Each slab's products are summed into accumulators of
// their own and added to the tile's in fp32: summed over all of K inside the tensor cores, whose
// accumulation is not IEEE fp32's, the error is several times a SIMT kernel's; per slab it stays
// within it (docs/gpu-notes.md, s18).
// Steps: 8-deep steps per slab (kb / 8), fixed at compile time: fragment arrays with room for four
// steps whatever kb would hold B's fragments and their split parts in far more registers (docs/gpu-notes.md, s19).
template <int Steps>
struct Tf32x3WarpgroupTile {
  static_assert(Steps == 2 || Steps == 4, "fp32 warpgroup slabs are 16 or 32 floats deep");
  static constexpr int rows = 128, cols = 64;  // of C
  static constexpr int kb = Steps * 8;
  using Fragments = float[Steps][4];
  static constexpr int accumulators = rows * cols / 128;  // a thread's share of the tile
  float acc[accumulators];
  int lane, warp;

  KOKKOS_INLINE_FUNCTION explicit Tf32x3WarpgroupTile(int rank_in_group) : lane(rank_in_group % 32), warp(rank_in_group / 32) {
#pragma unroll
    for (int i = 0; i < accumulators; ++i) acc[i] = 0.0f;
  }

  // Where fragment element e (0 ... 3) of an 8-deep step lies in B: column (of the tile's 64)
  // and k (of the step's 8): {col, k}, {col + 8, k}, {col, k + 4}, {col + 8, k + 4}.
  KOKKOS_INLINE_FUNCTION int fragment_col(int e) const { return 16 * warp + lane / 4 + 8 * (e % 2); }
  KOKKOS_INLINE_FUNCTION int fragment_k(int e) const { return lane % 4 + 4 * (e / 2); }

  // acc += A[row0 : row0 + 128, slab] * B[slab, tile columns] over a slab of kb k: b holds this
  // thread's fragments of B's slab, a_slab the A slab (rows of kb floats, the tile's rows from
  // row0, a multiple of 8) and a_rest its small part, laid out alike. The multiplications are
  // complete on return.
  KOKKOS_INLINE_FUNCTION void multiply(const Fragments& b, const float* a_slab, const float* a_rest, int row0) {
#if defined(KGEMM_WGMMA)
    unsigned big[Steps][4], small[Steps][4];
#pragma unroll
    for (int s = 0; s < Steps; ++s)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        big[s][e] = detail::to_tf32(b[s][e]);
        small[s][e] = detail::to_tf32(b[s][e] - __uint_as_float(big[s][e]));
      }
    constexpr int row_bytes = int(sizeof(float)) * kb;
    const unsigned at_slab = detail::shared_address(a_slab + row0 * kb), at_rest = detail::shared_address(a_rest + row0 * kb);
    constexpr int kStepBytes = int(sizeof(float)) * wgmma::kTf32InstructionK;
    float part[accumulators];
    wgmma::pin_accumulators(part);
    wgmma::fence();
#pragma unroll
    for (int s = 0; s < Steps; ++s) {
      const unsigned slab_step = at_slab + kStepBytes * s, rest_step = at_rest + kStepBytes * s;
      wgmma::mma_async_tf32_a_in_registers(part, small[s], wgmma::descriptor_k_major(slab_step, row_bytes), s > 0);
      wgmma::mma_async_tf32_a_in_registers(part, big[s], wgmma::descriptor_k_major(rest_step, row_bytes), true);
      wgmma::mma_async_tf32_a_in_registers(part, big[s], wgmma::descriptor_k_major(slab_step, row_bytes), true);
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();
    wgmma::pin_accumulators(part);
#pragma unroll
    for (int i = 0; i < accumulators; ++i) acc[i] += part[i];
#else
    (void)b, (void)a_slab, (void)a_rest, (void)row0;
    Kokkos::abort("kgemm: fp32 warpgroup configs (_wg) need device code compiled for sm_90a and a GPU of compute capability 9.0");
#endif
  }

  // f(i, j, value) over the thread's elements of the 128 x 64 tile: accumulators 4 q ... 4 q + 3
  // hold Cᵀ's row n = 16 w + l / 4 (and n + 8), columns m = 8 q + 2 (l % 4) and m + 1.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each(F&& f) const {
    const int n = 16 * warp + lane / 4, m = 2 * (lane % 4);
#pragma unroll
    for (int q = 0; q < rows / 8; ++q) {
      f(8 * q + m, n, acc[4 * q]);
      f(8 * q + m + 1, n, acc[4 * q + 1]);
      f(8 * q + m, n + 8, acc[4 * q + 2]);
      f(8 * q + m + 1, n + 8, acc[4 * q + 3]);
    }
  }
};

template <>
struct TensorCores<Kokkos::Cuda> {
  static constexpr bool available = true;
  static constexpr int warp = 32;
  static constexpr int fragment = 16;  // m = k of one mma; warp tiles are multiples of it
  // The warp tile for fp16 slabs (HalfWarpTile) or fp32 slabs (SplitTf32WarpTile).
  template <class Slab, int WM, int WN>
  using WarpTile = std::conditional_t<std::is_same<Slab, float>::value, SplitTf32WarpTile<WM, WN>, HalfWarpTile<WM, WN>>;
  // A warpgroup's 64 x WN tile (fp16 slabs, sm_90a), and how many threads own one.
  template <int WN>
  using GroupTile = WarpgroupTile<WN>;
  template <int Steps>
  using Tf32x3GroupTile = Tf32x3WarpgroupTile<Steps>;  // fp32 slabs: a warpgroup's 128 x 64 tile
  static constexpr int warpgroup = wgmma::kWarpgroupThreads;
  // Whether the device runs the fp16 fragments and the TF32 ones (gpu_capability.hpp).
  static bool on_device() { return tensor_cores_of(capability()).fp16; }
  static bool tf32_on_device() { return tensor_cores_of(capability()).tf32; }
  // Asked once: Kokkos drives one device per process.
  static int capability() {
    static const int major_minor = [] {
      int id = 0, major = 0, minor = 0;
      const bool known = cudaGetDevice(&id) == cudaSuccess &&
                         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, id) == cudaSuccess &&
                         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, id) == cudaSuccess;
      return known ? major * 10 + minor : 0;
    }();
    return major_minor;
  }
};
#endif

}  // namespace kgemm
