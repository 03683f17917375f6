#pragma once
// The tensor maps of bulk tensor copies (tensor_copy.hpp), on the host: encoded per operand and
// call (fp16 elements, the 128-byte swizzle `wgmma` reads) by the driver's encoder, reached
// through the runtime's entry-point query so that nothing more is linked.
//
// Kokkos passes a kernel's functor as an ordinary parameter (not __grid_constant__), whose
// address a copy cannot take, so the maps lie in global memory (maps_on): written on the
// launch's stream before the kernel, which needs no fence on the device (the host wrote them).
//
// Rules of the hardware (describable): the tensor's address 16-byte aligned, every stride but
// the contiguous dimension's a multiple of 16 bytes below 2^40, extents from 1 to 2^32, boxes
// of at most 256 per dimension whose rows fit the swizzle's 128 bytes. Encoding needs a CUDA 12
// build (KGEMM_TENSOR_MAPS).
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "kgemm/spaces/error.hpp"
#include "kgemm/spaces/tensor_copy.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda.h>
#if CUDA_VERSION >= 12000
#define KGEMM_TENSOR_MAPS 1
#endif
#endif

namespace kgemm {
namespace tensor_copy {

// A tensor of 2-byte elements, dimension 0 contiguous, and the box one copy moves: box[0] x
// box[1] elements of dimensions 0 and 1 at one index of dimension 2.
struct Tiles {
  const void* data = nullptr;
  std::uint64_t extents[3] = {1, 1, 1};
  std::uint64_t strides[2] = {16, 16};  // bytes from one index of dimension 1 (2) to the next
  std::uint32_t box[2] = {1, 1};
};

inline bool describable(const Tiles& t) {
  const auto stride_ok = [](std::uint64_t bytes) { return bytes > 0 && bytes % 16 == 0 && bytes < (std::uint64_t(1) << 40); };
  const auto extent_ok = [](std::uint64_t n) { return n >= 1 && n <= (std::uint64_t(1) << 32); };
  return reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0 && stride_ok(t.strides[0]) && stride_ok(t.strides[1]) &&
         extent_ok(t.extents[0]) && extent_ok(t.extents[1]) && extent_ok(t.extents[2]) && t.box[0] >= 8 &&
         t.box[0] * 2 <= 128 && t.box[0] % 8 == 0 && t.box[1] >= 1 && t.box[1] <= 256;
}

#if defined(KGEMM_TENSOR_MAPS)
namespace detail {
using EncodeTiled = decltype(&cuTensorMapEncodeTiled);
inline EncodeTiled encode_tiled() {
  static const EncodeTiled encode = [] {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &found, cudaEnableDefault, &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess)
      return EncodeTiled(nullptr);
    return reinterpret_cast<EncodeTiled>(found);
  }();
  return encode;
}
}  // namespace detail
static_assert(sizeof(Map) == sizeof(CUtensorMap) && alignof(Map) == alignof(CUtensorMap), "a Map is a CUtensorMap");
#endif

// Why this build or driver encodes no tensor maps (empty where it does).
inline std::string why_no_maps() {
#if defined(KGEMM_TENSOR_MAPS)
  return detail::encode_tiled() ? "" : "the CUDA driver offers no cuTensorMapEncodeTiled";
#else
  return "tensor maps need a CUDA 12 build";
#endif
}

// The map of `t` (fp16 elements, the 128-byte swizzle: box[0] x 2 bytes at most 128), for
// describable tiles; throws naming the driver's error otherwise.
inline Map encode(const Tiles& t) {
  Map map{};
#if defined(KGEMM_TENSOR_MAPS)
  const cuuint32_t box[3] = {t.box[0], t.box[1], 1}, element_strides[3] = {1, 1, 1};
  const CUresult result = detail::encode_tiled()(
      reinterpret_cast<CUtensorMap*>(&map), CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<void*>(t.data), t.extents,
      t.strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw RuntimeError("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(result)) + ")");
#else
  (void)t;
  throw InvalidArgument(why_no_maps());
#endif
  return map;
}

#if defined(KGEMM_TENSOR_MAPS)
// `maps` (Count of them) in CUDA global memory, for the kernel the caller launches next on
// `space`'s stream. The last kSlots groups written stay there, and a group equal to one of them is
// not written again: calls on the same operands (a model's layers called over and over, a
// benchmark's rotating inputs) copy nothing. A group overwritten while an earlier kernel on the
// stream still reads it is overwritten after that kernel, in stream order; like split K's
// partial blocks, the slots are shared by all calls on the space, ordered on one instance.
template <int Count>
const Map* maps_on(const Kokkos::Cuda& space, const Map (&maps)[Count]) {
  constexpr int kSlots = 64;
  struct Slots {
    Kokkos::View<Map*, Kokkos::CudaSpace> device{"kgemm::tensor_maps", std::size_t(kSlots) * Count};
    Map host[kSlots][Count] = {};
    bool written[kSlots] = {};
    int next = 0;
  };
  static std::mutex mutex;
  static std::unique_ptr<Slots> slots;
  std::lock_guard<std::mutex> lock(mutex);
  if (!slots) {
    slots = std::make_unique<Slots>();
    // Views must be gone before Kokkos::finalize; a later initialize starts afresh.
    Kokkos::push_finalize_hook([] { slots.reset(); });
    if (reinterpret_cast<std::uintptr_t>(slots->device.data()) % alignof(Map) != 0)
      throw RuntimeError("tensor maps in global memory are not 64-byte aligned");
  }
  for (int s = 0; s < kSlots; ++s)
    if (slots->written[s] && std::memcmp(slots->host[s], maps, sizeof(maps)) == 0) return slots->device.data() + s * Count;
  const int s = slots->next;
  slots->next = (s + 1) % kSlots;
  std::memcpy(slots->host[s], maps, sizeof(maps));
  slots->written[s] = true;
  Map* to = slots->device.data() + s * Count;
  if (cudaMemcpyAsync(to, maps, sizeof(maps), cudaMemcpyHostToDevice, space.cuda_stream()) != cudaSuccess)
    throw RuntimeError("copying tensor maps to the GPU failed");
  return to;
}
#endif

}  // namespace tensor_copy
}  // namespace kgemm
