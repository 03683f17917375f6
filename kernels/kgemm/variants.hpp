#pragma once
// The compile-time micro-tile shapes built into the library: each (TM, TN) below is one
// instantiation of TiledGemm per space and dtype. Everything else in a Config is runtime.
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kgemm {

template <int TM, int TN>
struct MicroTile {
  static constexpr int tm = TM, tn = TN;
};

// 1x1 for tiny matrices, 4x4 and 8x4 (tall, for N = 64 layers) and 8x8 for GPUs,
// 8x16 for CPUs (eight 16-wide SIMD accumulators).
template <class F>
void for_each_micro_tile(F&& f) {
  f(MicroTile<1, 1>{});
  f(MicroTile<4, 4>{});
  f(MicroTile<8, 4>{});
  f(MicroTile<8, 8>{});
  f(MicroTile<8, 16>{});
}

inline std::vector<std::pair<int, int>> micro_tiles() {
  std::vector<std::pair<int, int>> shapes;
  for_each_micro_tile([&](auto tile) { shapes.emplace_back(tile.tm, tile.tn); });
  return shapes;
}

// Calls f(MicroTile<tm, tn>{}) for the compiled variant, or throws naming the ones there are.
template <class F>
void with_micro_tile(int tm, int tn, F&& f) {
  bool found = false;
  for_each_micro_tile([&](auto tile) {
    if (tile.tm == tm && tile.tn == tn) {
      f(tile);
      found = true;
    }
  });
  if (!found) {
    std::string known;
    for (auto [m, n] : micro_tiles()) known += " " + std::to_string(m) + "x" + std::to_string(n);
    throw std::invalid_argument("kgemm: micro-tile " + std::to_string(tm) + "x" + std::to_string(tn) +
                                " is not a compiled variant; compiled:" + known);
  }
}

}  // namespace kgemm
