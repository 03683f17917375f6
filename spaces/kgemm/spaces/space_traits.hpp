#pragma once
// Per-execution-space hardware facts the kernels build on: the micro-tile layout that suits the
// hardware, the scratch level, how slabs are copied into it. What to run there (defaults, the
// values the tuner searches) is the kernels' tuning policy (kgemm/tuning_policy.hpp).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

template <class ExecSpace>
struct SpaceTraits {
  // CPU threads: a thread's micro-tile is one contiguous TM x TN patch, so the compiler can
  // vectorise its inner loop. Teams are one thread each; partial sums between K slabs stay
  // in the (cache-resident) team scratch.
  static constexpr bool is_gpu = false;
  static constexpr int micro_run(int extent) { return extent; }
  // Level 1: host team scratch is plain memory; level 0 caps it at 32 KiB.
  static constexpr int scratch_level = 1;
  // Team scratch is ordinary memory here.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T* in_scratch(T* p) {
    return p;
  }
  // One slab buffer: a second one would only double the cache footprint, CPUs have nothing to
  // overlap the copies with. Copies are plain (converting) element assignments the compiler
  // vectorises itself.
  static constexpr int default_slab_buffers = 1;
  static constexpr int max_slab_buffers = 1;
  // A slab that already lies in the operand as the kernel reads it (rows unit-stride, the tile
  // inside the operand) is multiplied where it lies: copying it would only move it from one
  // cache level to another and back (slab_stager.hpp).
  static constexpr bool reads_slabs_in_place = true;
  // The micro-kernel reads B's slab one row per k, kb rows in turn, several times over. Rows
  // 4 KiB or more apart fall in the same few L1 sets (x86 L1d: 4 KiB per way), so such a slab,
  // read in place, evicts itself: it is staged instead, while slabs of closer rows run faster in
  // place (docs/gpu-notes.md, "Measurements behind the code").
  static constexpr std::ptrdiff_t in_place_k_row_bytes = 4096;
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
  // Unaligned runs are copied element by element here (copy_realigned_runs_to_scratch: GPUs).
  template <class To, class From>
  KOKKOS_INLINE_FUNCTION static constexpr bool realigns_runs() {
    return false;
  }
  // Copies finish inside the copy calls here.
  KOKKOS_INLINE_FUNCTION static void commit_scratch_copies() {}
  template <int Pending>
  KOKKOS_INLINE_FUNCTION static void wait_scratch_copies() {}
};

// GPU slab buffers without _st (SpaceTraits<Kokkos::Cuda>::default_slab_buffers), stated outside
// the CUDA specialization so that a build without CUDA still models GPU stores (dispatch).
inline constexpr int kGpuDefaultSlabBuffers = 2;

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
  // Up to four buffers (Config::slab_buffers): copies of three slabs in flight while one is multiplied.
  static constexpr int default_slab_buffers = kGpuDefaultSlabBuffers;
  static constexpr int max_slab_buffers = 4;
  static constexpr bool reads_slabs_in_place = false;  // slabs live in shared memory
  static constexpr std::ptrdiff_t in_place_k_row_bytes = 0;
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
  // flight at once: with one at a time such rows (conv1's 147-wide fp16 ones) stage far slower
  // than fp32 rows do (docs/gpu-notes.md, s5). cp.async copies are asynchronous anyway.
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
  // Runs of 16 bytes whose source is not aligned to 16 bytes, contiguous in memory and in
  // scratch (fp16 rows of an odd length: conv1's K = 147), where the types match and element
  // copies would go through registers two bytes at a time: each run is read as the aligned
  // 16-byte words holding it (one where it happens to be aligned, else two) and shifted into
  // place, so a thread has U 16-byte loads in flight instead of U 2-byte ones, and a slab is
  // staged at the rate of aligned rows. Each word read holds a byte of the run, and memory is
  // allocated and mapped in whole 16-byte words, so no read leaves the memory the run lies in.
  template <class To, class From>
  KOKKOS_INLINE_FUNCTION static constexpr bool realigns_runs() {
    return std::is_same<To, std::remove_const_t<From>>::value && sizeof(To) == 2;
  }
  template <int U, int R, class T>
  KOKKOS_INLINE_FUNCTION static void copy_realigned_runs_to_scratch(T* to, int to_step, const T* from, std::ptrdiff_t from_step) {
    static_assert(sizeof(T) * R == 16 && realigns_runs<T, T>(), "kgemm: realigned runs are 16 bytes of 2-byte elements");
#if defined(__CUDA_ARCH__)
    uint4 low[U], high[U];
    unsigned offset[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const auto address = reinterpret_cast<std::uintptr_t>(from + u * from_step);
      offset[u] = unsigned(address) & 15u;
      const uint4* word = reinterpret_cast<const uint4*>(address - offset[u]);
      low[u] = word[0];
      high[u] = low[u];
      if (offset[u] != 0) high[u] = word[1];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) *reinterpret_cast<uint4*>(in_scratch(to + u * to_step)) = realigned(low[u], high[u], offset[u]);
#else
    for (int u = 0; u < U; ++u)
      for (int q = 0; q < R; ++q) to[u * to_step + q] = from[u * from_step + q];
#endif
  }
#if defined(__CUDA_ARCH__)
  // The 16 bytes from byte `offset` (even) of the 32 in `low` then `high`: whole words moved by
  // selects (an indexed array would go to local memory), then half a word by a funnel shift.
  KOKKOS_INLINE_FUNCTION static uint4 realigned(const uint4& low, const uint4& high, unsigned offset) {
    unsigned x[8] = {low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
#pragma unroll
    for (int i = 0; i < 6; ++i) x[i] = (offset & 8u) ? x[i + 2] : x[i];
#pragma unroll
    for (int i = 0; i < 5; ++i) x[i] = (offset & 4u) ? x[i + 1] : x[i];
    const unsigned bits = (offset & 2u) * 8u;
    return {__funnelshift_r(x[0], x[1], bits), __funnelshift_r(x[1], x[2], bits), __funnelshift_r(x[2], x[3], bits),
            __funnelshift_r(x[3], x[4], bits)};
  }
#endif
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
