#pragma once
// The compile-time micro-tile shapes built into the library: each (TM, TN) below is one
// instantiation of TiledGemm per space and dtype. Everything else in a Config is runtime.
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kgemm/dtype.hpp"
#include "kgemm/spaces/error.hpp"
#include "kgemm/spaces/host_vector_width.hpp"

namespace kgemm {

template <int TM, int TN>
struct MicroTile {
  static constexpr int tm = TM, tn = TN;
};

// Every space: 1x1 for tiny matrices, 4x4 and 8x4 (tall, for N = 64 layers) and 8x8 for GPUs,
// 8x16 for CPUs (eight accumulators of AVX-512's 16 floats).
template <class F>
void for_each_portable_micro_tile(F&& f) {
  f(MicroTile<1, 1>{});
  f(MicroTile<4, 4>{});
  f(MicroTile<8, 4>{});
  f(MicroTile<8, 8>{});
  f(MicroTile<8, 16>{});
}

// Host spaces only (one GPU thread cannot hold them): register blocks of the host micro-kernel
// (host_micro_kernel.hpp) sized for the build's vector registers (kHostVectorBits). `Default`
// is the tile of the host default config, `Seed` the tile of one more of the tuner's seeds
// (TuningPolicy).
template <int VectorBits>
struct HostMicroTiles {
  // AVX and AVX2 (16 registers of 8 floats): 12 accumulators beside one to three vectors of B
  // per k and a broadcast of A: 6x16 (BLIS' Haswell shape), 4x24 (three vectors of B for four
  // broadcasts) and 12x8 (tall). 128-bit builds (SSE, NEON) take them too, at twice the
  // registers; nothing is chosen for those.
  template <class F>
  static void for_each(F&& f) {
    f(MicroTile<6, 16>{});
    f(MicroTile<4, 24>{});
    f(MicroTile<12, 8>{});
  }
  using Default = MicroTile<6, 16>;
  using Seed = MicroTile<4, 24>;
};
template <>
struct HostMicroTiles<512> {
  // AVX-512 (32 registers): 14 to 24 accumulators, two or four 16-float vectors of B per k:
  // 8x32, 12x32 (BLIS' AVX-512 shape), 6x64, and 7x32, whose rows divide every ResNet-50
  // batch-1 M (49 * 4^j), which 8- and 12-row tiles pad (49 rows: 56 and 60 computed).
  template <class F>
  static void for_each(F&& f) {
    f(MicroTile<8, 32>{});
    f(MicroTile<12, 32>{});
    f(MicroTile<6, 64>{});
    f(MicroTile<7, 32>{});
  }
  using Default = MicroTile<12, 32>;
  using Seed = MicroTile<8, 32>;
};
// This build's host micro-tiles.
using HostTiles = HostMicroTiles<kHostVectorBits>;
template <class F>
void for_each_host_micro_tile(F&& f) {
  HostTiles::for_each(f);
}

// The micro-tiles compiled for a host space (Host) or a GPU space.
template <bool Host, class F>
void for_each_micro_tile_on(F&& f) {
  for_each_portable_micro_tile(f);
  if constexpr (Host) for_each_host_micro_tile(f);
}

// Every compiled micro-tile, whichever space compiles it.
template <class F>
void for_each_micro_tile(F&& f) {
  for_each_micro_tile_on<true>(f);
}

// Tensor-core warp tiles (tm x tn per warp, in 16 x 16 fragments): CUDA, fp16 data, fp32
// accumulation. 32 x 32 keeps more warps per block; 64 x 32 (tall) suits the N = 64 layers.
template <class F>
void for_each_warp_tile(F&& f) {
  f(MicroTile<32, 32>{});
  f(MicroTile<64, 32>{});
  f(MicroTile<32, 64>{});
  f(MicroTile<64, 64>{});
}

// Warpgroup tiles (tm x tn of C per four warps): CUDA on sm_90a. fp16 data (`wgmma` m64nNk16):
// 64 x 128 is the wide one; 64 x 64 keeps more warpgroups per block. fp32 data (3xTF32 on TF32
// `wgmma`, which multiplies Cᵀ = Bᵀ Aᵀ: the instruction's 64 rows are C's columns, its 128
// columns C's rows): 128 x 64. A tile belongs to one dtype; why_illegal names the other's.
template <DType D, class F>
void for_each_warpgroup_tile_of(F&& f) {
  if constexpr (D == DType::F16) {
    f(MicroTile<64, 64>{});
    f(MicroTile<64, 128>{});
  } else {
    f(MicroTile<128, 64>{});
  }
}
// The warp-specialized kernel's tiles (fp16, both operands read from scratch through
// descriptors, so no A fragments in registers bound N): the fp16 warpgroup tiles and 64 x 256,
// whose 128 x 256 blocks (two of them and the producer) copy a quarter fewer bytes per flop than
// 128 x 128 ones.
template <class F>
void for_each_warp_specialized_tile(F&& f) {
  for_each_warpgroup_tile_of<DType::F16>(f);
  f(MicroTile<64, 256>{});
}
template <class F>
void for_each_warpgroup_tile(F&& f) {
  for_each_warpgroup_tile_of<DType::F16>(f);
  for_each_warpgroup_tile_of<DType::F32>(f);
}
// Whether tm x tn is one of dtype D's warpgroup tiles, without building a list (launches ask).
template <DType D>
bool is_warpgroup_tile_of(int tm, int tn) {
  bool found = false;
  for_each_warpgroup_tile_of<D>([&](auto tile) { found = found || (tile.tm == tm && tile.tn == tn); });
  return found;
}

inline bool is_warp_specialized_tile(int tm, int tn) {
  bool found = false;
  for_each_warp_specialized_tile([&](auto tile) { found = found || (tile.tm == tm && tile.tn == tn); });
  return found;
}

namespace detail {
template <class ForEach>
std::vector<std::pair<int, int>> tile_shapes(ForEach&& for_each) {
  std::vector<std::pair<int, int>> shapes;
  for_each([&](auto tile) { shapes.emplace_back(tile.tm, tile.tn); });
  return shapes;
}

// Calls f(MicroTile<tm, tn>{}) for the compiled tile among for_each's, or throws naming them.
template <class ForEach, class F>
void with_tile(ForEach&& for_each, const char* what, int tm, int tn, F&& f) {
  bool found = false;
  for_each([&](auto tile) {
    if (tile.tm == tm && tile.tn == tn) {
      f(tile);
      found = true;
    }
  });
  if (!found) {
    std::string known;
    for (auto [m, n] : tile_shapes(for_each)) known += " " + std::to_string(m) + "x" + std::to_string(n);
    throw InvalidArgument(std::string(what) + " " + std::to_string(tm) + "x" + std::to_string(tn) +
                          " is not a compiled variant; compiled:" + known);
  }
}

template <bool Host>
struct EachMicroTile {
  template <class F>
  void operator()(F&& f) const { for_each_micro_tile_on<Host>(f); }
};
struct EachWarpTile {
  template <class F>
  void operator()(F&& f) const { for_each_warp_tile(f); }
};
struct EachWarpgroupTile {
  template <class F>
  void operator()(F&& f) const { for_each_warpgroup_tile(f); }
};
struct EachWarpSpecializedTile {
  template <class F>
  void operator()(F&& f) const { for_each_warp_specialized_tile(f); }
};
template <DType D>
struct EachWarpgroupTileOf {
  template <class F>
  void operator()(F&& f) const { for_each_warpgroup_tile_of<D>(f); }
};
}  // namespace detail

inline std::vector<std::pair<int, int>> micro_tiles() { return detail::tile_shapes(detail::EachMicroTile<true>{}); }
// The micro-tiles a host space (host = true) or a GPU space compiles.
inline std::vector<std::pair<int, int>> micro_tiles_on(bool host) {
  return host ? micro_tiles() : detail::tile_shapes(detail::EachMicroTile<false>{});
}
inline std::vector<std::pair<int, int>> warp_tiles() { return detail::tile_shapes(detail::EachWarpTile{}); }
inline std::vector<std::pair<int, int>> warpgroup_tiles() { return detail::tile_shapes(detail::EachWarpgroupTile{}); }
inline std::vector<std::pair<int, int>> warp_specialized_tiles() { return detail::tile_shapes(detail::EachWarpSpecializedTile{}); }
// The warpgroup tiles of one dtype's data.
inline std::vector<std::pair<int, int>> warpgroup_tiles(DType dtype) {
  return dtype == DType::F16 ? detail::tile_shapes(detail::EachWarpgroupTileOf<DType::F16>{})
                             : detail::tile_shapes(detail::EachWarpgroupTileOf<DType::F32>{});
}

// f(MicroTile<tm, tn>{}) among the tiles of a host space (Host) or a GPU space.
template <bool Host, class F>
void with_micro_tile(int tm, int tn, F&& f) {
  detail::with_tile(detail::EachMicroTile<Host>{}, "micro-tile", tm, tn, f);
}
template <class F>
void with_warp_tile(int tm, int tn, F&& f) {
  detail::with_tile(detail::EachWarpTile{}, "tensor-core warp tile", tm, tn, f);
}
// f(MicroTile<tm, tn>{}) among the warpgroup tiles of dtype D's data.
template <DType D, class F>
void with_warpgroup_tile(int tm, int tn, F&& f) {
  detail::with_tile(detail::EachWarpgroupTileOf<D>{}, D == DType::F16 ? "fp16 warpgroup tile" : "fp32 warpgroup tile", tm, tn, f);
}

template <class F>
void with_warp_specialized_tile(int tm, int tn, F&& f) {
  detail::with_tile(detail::EachWarpSpecializedTile{}, "warp-specialized tile", tm, tn, f);
}

}  // namespace kgemm
