#pragma once
// The configs worth measuring for one problem on one space: the space's legal value lists
// (spaces/) times the compiled micro-tiles, minus what cannot run on this device (scratch and
// team limits read at run time, via the same checks a launch makes) and blocks far larger
// than the problem (they only add padding).
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/space_traits.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"
#include "kgemm/tuner/dispatch.hpp"
#include "kgemm/variants.hpp"

namespace kgemm {

// Whether a block edge of `tile` is worth trying on an extent of `extent`: not more than the
// smallest listed value or the power of two covering the extent, whichever is larger.
inline bool tile_fits(int tile, int extent, int smallest_listed) {
  int cover = 1;
  while (cover < extent) cover *= 2;
  return tile <= (cover > smallest_listed ? cover : smallest_listed);
}

template <class ExecSpace>
std::vector<Config> candidate_configs(const Problem& problem) {
  using Traits = SpaceTraits<ExecSpace>;
  const ParamRanges ranges = Traits::ranges();
  std::vector<Config> candidates;
  auto consider = [&](const Config& c) {
    if (c.mb % c.tm != 0 || c.nb % c.tn != 0) return;
    if (!tile_fits(c.mb, problem.m, ranges.mb.front()) || !tile_fits(c.nb, problem.n, ranges.nb.front()) ||
        !tile_fits(c.kb, problem.k, ranges.kb.front()))
      return;
    if (!Traits::worth_trying(c)) return;
    if (!detail::why_illegal<ExecSpace>(problem, c).empty()) return;
    candidates.push_back(c);
  };
  for (auto [tm, tn] : micro_tiles())
    for (int mb : ranges.mb)
      for (int nb : ranges.nb)
        for (int kb : ranges.kb)
          for (int team : ranges.team) consider({mb, nb, kb, tm, tn, team});
  // Tensor-core configs (fp16 on spaces that have them): the team is one warp per tile.
  if (TensorCores<ExecSpace>::available && problem.dtype == DType::F16)
    for (auto [tm, tn] : warp_tiles())
      for (int mb : ranges.mb)
        for (int nb : ranges.nb)
          for (int kb : ranges.kb) {
            Config c{mb, nb, kb, tm, tn, 0, true};
            c.team = c.micro_tiles() * c.threads_per_tile();  // consider() drops blocks not a multiple of the tile
            consider(c);
          }
  return candidates;
}

}  // namespace kgemm
