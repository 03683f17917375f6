#pragma once
// Per-execution-space facts the kernels and the tuner build on: the micro-tile layout that suits
// the hardware, the default config, and the legal value lists the tuner searches.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/dtype.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

// Value lists of the runtime parameters a space accepts; (tm, tn) come from the compiled variants.
struct ParamRanges {
  std::vector<int> mb, nb, kb, team;
  std::vector<int> ks;  // K splits
  std::vector<int> bb;  // products per team
  std::vector<int> stages;  // slab buffers, 0 for the space's own
};

template <class ExecSpace>
struct SpaceTraits {
  // CPU threads: a thread's micro-tile is one contiguous TM x TN patch, so the compiler can
  // vectorise its inner loop. Teams are one thread each; partial sums between K slabs stay
  // in the (cache-resident) team scratch.
  static constexpr bool is_gpu = false;
  static constexpr int micro_run(int extent) { return extent; }
  // Level 1: host team scratch is plain memory; level 0 caps it at 32 KiB.
  static constexpr int scratch_level = 1;
  static Config default_config(DType = DType::F32) { return {64, 64, 256, 8, 8, 1}; }
  // Where the tuner's climb may start (the best of them): the default alone suffices here.
  static std::vector<Config> seed_configs(DType dtype) { return {default_config(dtype)}; }
  // No split K and one product per team: two or so threads find enough blocks in every shape.
  static ParamRanges ranges() {
    return {{16, 32, 64, 128}, {16, 32, 64, 128, 256}, {32, 64, 128, 256}, {1, 2}, {1}, {1}, {0}};
  }
  // Two threads per team only pay when each has several micro-tiles of its own.
  static bool worth_trying(const Config& c) { return c.team == 1 || c.micro_tiles() >= 4 * c.team; }
  // Team scratch is ordinary memory here.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T* in_scratch(T* p) {
    return p;
  }
  // One slab buffer: a second one would only double the cache footprint, CPUs have nothing to
  // overlap the copies with. Copies are plain (converting) element assignments the compiler
  // vectorises itself.
  static constexpr int slab_buffers = 1;
  static constexpr int max_slab_buffers = 1;
  static constexpr int copy_run_bytes = 0;
  template <class To, class From>
  KOKKOS_INLINE_FUNCTION static void copy_to_scratch(To* to, const From* from) {
    *to = To(*from);
  }
  template <int R, class To, class From>
  KOKKOS_INLINE_FUNCTION static void copy_run_to_scratch(To* to, const From* from) {
    for (int q = 0; q < R; ++q) to[q] = To(from[q]);
  }
  // Runs a thread copies per loop turn (copy_runs_to_scratch); caches hide the latency here.
  static constexpr int runs_in_flight = 1;
  template <int U, int R, class To, class From>
  KOKKOS_INLINE_FUNCTION static void copy_runs_to_scratch(To* to, int to_step, const From* from, std::ptrdiff_t from_step) {
    for (int u = 0; u < U; ++u) copy_run_to_scratch<R>(to + u * to_step, from + u * from_step);
  }
  // Copies finish inside the copy calls here.
  KOKKOS_INLINE_FUNCTION static void commit_scratch_copies() {}
  template <int Pending>
  KOKKOS_INLINE_FUNCTION static void wait_scratch_copies() {}
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct SpaceTraits<Kokkos::Cuda> {
  // GPU threads: each thread's micro-tile columns are cut into runs of 4 interleaved with its
  // neighbours', so a warp reads consecutive scratch words (no bank conflicts) and each run is
  // one 16-byte access (A's rows are read four k at a time instead: tiled_gemm.hpp). One
  // micro-tile per thread keeps accumulators in registers.
  static constexpr bool is_gpu = true;
  static constexpr int micro_run(int extent) { return extent % 4 == 0 ? 4 : extent; }
  static constexpr int scratch_level = 0;  // shared memory
  // The configs that won most often in the H100 store (session 4): fp32 8x8 micro-tiles on
  // 128 x 64 blocks, fp16 tensor cores with one 64 x 32 warp tile per warp (on GPUs that run
  // kgemm's tensor-core fragments; older ones take the fp32 default for fp16 too).
  static bool fp16_on_tensor_cores(DType dtype) { return dtype == DType::F16 && TensorCores<Kokkos::Cuda>::on_device(); }
  static Config default_config(DType dtype = DType::F32) {
    return fp16_on_tensor_cores(dtype) ? Config{128, 64, 32, 64, 32, 128, true} : Config{128, 64, 16, 8, 8, 128};
  }
  // Climbs start from the best of these: blocks for large, medium and small M (batch-1 layers
  // have M = 49 ... 12544). Climbing from the default alone kept 128-row blocks on M = 49
  // configs that 32-row blocks beat 1.2 - 2.5x (H100, session 4).
  static std::vector<Config> seed_configs(DType dtype) {
    const Config small_m{32, 64, 32, 4, 4, 128};
    if (fp16_on_tensor_cores(dtype)) return {default_config(dtype), {64, 64, 32, 32, 32, 128, true}, small_m};
    return {default_config(dtype), {64, 64, 32, 8, 4, 128}, small_m};
  }
  static ParamRanges ranges() {
    // 16-row and 16-column blocks give batch-1 layers (M = 49 ... 784) enough blocks to fill the SMs
    // (8-row and 8-column ones are for 8 x 8 products: search_space.hpp);
    // teams of 8 and 16 threads give them (and 8x8 / 16x16 batched products) 4x4 and 8x4 micro-tiles.
    // Split K lets long-K layers with few blocks (batch 1: M = 49, K = 4608) use every SM; up to
    // 32 splits, now that a split costs a partial block and a share of a separate sum kernel.
    // 64-deep slabs fit the scratch only for small fp16 blocks (64 x 64 tensor-core blocks: +10 %
    // over 32-deep ones on the H100, half the barriers per K).
    // Several products per team give batches of small products blocks of 64 - 256 threads.
    // Three or four slab buffers keep more copies in flight than two (0: the default).
    return {{8, 16, 32, 64, 128, 256}, {8, 16, 32, 64, 128, 256}, {8, 16, 32, 64}, {8, 16, 32, 64, 128, 256, 512},
            {1, 2, 4, 8, 16, 32}, {1, 2, 4, 8, 16, 32}, {0, 3, 4}};
  }
  // One micro-tile per thread (per warp for tensor cores): partial sums between K slabs then
  // stay in registers.
  static bool worth_trying(const Config& c) { return c.threads_per_product() == c.micro_tiles() * c.threads_per_tile(); }
  // Team scratch is shared memory, but Kokkos hands it out as a generic pointer, and nvcc then
  // emits generic loads and stores (LD/ST, slower) for the slabs. Rebased on an extern
  // __shared__ array (all of them start at the dynamic shared-memory base, where level-0
  // scratch lives) the same address is known to be shared: LDS/STS.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T* in_scratch(T* p) {
#if defined(__CUDA_ARCH__)
    extern __shared__ char kgemm_dynamic_shared[];
    return reinterpret_cast<T*>(kgemm_dynamic_shared + (reinterpret_cast<char*>(p) - kgemm_dynamic_shared));
#else
    return p;
#endif
  }
  // Two slab buffers: the next K slab is copied while this one is multiplied. From Ampere on,
  // same-type 4-byte copies go global -> shared asynchronously (cp.async), without passing
  // through registers, so a thread issues them all and multiplies at once; everything else
  // (fp16 data widened to fp32 scratch, older GPUs) is a plain load and store.
  // Up to four buffers (Config::stages): copies of three slabs in flight while one is multiplied.
  static constexpr int slab_buffers = 2;
  static constexpr int max_slab_buffers = 4;
  template <class To, class From>
  KOKKOS_INLINE_FUNCTION static void copy_to_scratch(To* to, const From* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same<To, std::remove_const_t<From>>::value && sizeof(To) == 4) {
      const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(to));
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared_address), "l"(from));
    } else
#endif
      *to = To(*from);
  }
  // Runs of consecutive elements, aligned to their size, contiguous in memory and in scratch:
  // one 16-byte cp.async when the types match, else element copies.
  static constexpr int copy_run_bytes = 16;
  template <int R, class To, class From>
  KOKKOS_INLINE_FUNCTION static void copy_run_to_scratch(To* to, const From* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same<To, std::remove_const_t<From>>::value && sizeof(To) * R == 16) {
      const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(to));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address), "l"(from));
    } else
#endif
      for (int q = 0; q < R; ++q) copy_to_scratch(to + q, from + q);
  }
  // U runs `to_step` / `from_step` apart. Copies through registers (fp16 rows not 16-byte
  // aligned, fp16 widened to fp32) load all U runs before storing any, so U loads are in
  // flight at once: one at a time, conv1's 147-wide fp16 rows ran at half its fp32 speed
  // (H100, session 4). cp.async copies are asynchronous anyway.
  static constexpr int runs_in_flight = 4;
  template <int U, int R, class To, class From>
  KOKKOS_INLINE_FUNCTION static void copy_runs_to_scratch(To* to, int to_step, const From* from, std::ptrdiff_t from_step) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same<To, std::remove_const_t<From>>::value && (sizeof(To) == 4 || sizeof(To) * R == 16)) {
#pragma unroll
      for (int u = 0; u < U; ++u) copy_run_to_scratch<R>(to + u * to_step, from + u * from_step);
    } else
#endif
    {
      std::remove_const_t<From> loaded[U][R];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int q = 0; q < R; ++q) loaded[u][q] = from[u * from_step + q];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int q = 0; q < R; ++q) to[u * to_step + q] = To(loaded[u][q]);
    }
  }
  // A run of R elements (16 bytes) whose first `bytes` come from `from`, the rest zeros (a
  // source's edge): one cp.async with zero fill from Ampere on; `from` is not read past `bytes`.
  template <int R, class T>
  KOKKOS_INLINE_FUNCTION static void copy_run_zero_filled(T* to, const T* from, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(sizeof(T) * R == 16, "kgemm: zero-filled runs are 16-byte copies");
    const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address), "l"(from), "r"(bytes));
#else
    for (int q = 0; q < R; ++q) to[q] = q * int(sizeof(T)) < bytes ? from[q] : T(0);
#endif
  }
  // The same for a run that is wholly inside the source or wholly outside: the copy's
  // ignore-source predicate, without the source-size arithmetic ptxas emits for the above
  // (five instructions per copy).
  template <int R, class T>
  KOKKOS_INLINE_FUNCTION static void copy_run_or_zeros(T* to, const T* from, bool inside) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(sizeof(T) * R == 16, "kgemm: zero-filled runs are 16-byte copies");
    const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(to));
    asm volatile(
        "{\n .reg .pred outside;\n setp.eq.u32 outside, %2, 0;\n"
        " cp.async.cg.shared.global [%0], [%1], 16, outside;\n}\n" ::"r"(shared_address),
        "l"(from), "r"(int(inside)));
#else
    copy_run_zero_filled<R>(to, from, inside ? R * int(sizeof(T)) : 0);
#endif
  }
  // The asynchronous copies a thread issued since the last commit form one group (one slab);
  // waiting leaves at most `Pending` of its latest groups in flight. A team barrier then
  // publishes the finished ones to all. Plain copies are done when issued.
  KOKKOS_INLINE_FUNCTION static void commit_scratch_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
  }
  template <int Pending>
  KOKKOS_INLINE_FUNCTION static void wait_scratch_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
  }
};
#endif

}  // namespace kgemm
