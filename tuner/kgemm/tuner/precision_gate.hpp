#pragma once
// Which arithmetic an fp32 problem may be tuned with. 3xTF32 (fp32 data on tensor cores, configs
// ending in _tc) gives fp32 results through another arithmetic than the SIMT kernels' fp32 FMAs:
// the tuner offers its configs for a problem only when one of them, measured on that problem's
// inputs against the fp64 result, errs no more than kMaxSplitTf32ErrorRatio times as much as the
// SIMT default; otherwise they leave the candidates. One config of each runs before the search.
#include <algorithm>
#include <optional>
#include <vector>

#include "kgemm/config.hpp"

namespace kgemm {

constexpr double kMaxSplitTf32ErrorRatio = 2.0;

// Both errors (max |C - C_exact| / max |C_exact| over the checked elements) and the outcome.
struct PrecisionGate {
  double simt_error = 0, split_tf32_error = 0;
  bool offered = false;
};

// Bench: anything with double max_relative_error(const Config&) (ProblemBench). Empty when
// `candidates` has no tensor-core config (nothing to decide). The 3xTF32 config measured is a
// tensor-core seed among the candidates, else the first tensor-core candidate.
template <class Bench>
std::optional<PrecisionGate> gate_split_tf32(const Bench& bench, const Config& simt, const std::vector<Config>& seeds,
                                             std::vector<Config>& candidates) {
  const auto is_tc = [](const Config& c) { return c.tc; };
  const auto first_tc = std::find_if(candidates.begin(), candidates.end(), is_tc);
  if (first_tc == candidates.end()) return std::nullopt;
  Config probe = *first_tc;
  for (const Config& seed : seeds)
    if (seed.tc && std::find(candidates.begin(), candidates.end(), seed) != candidates.end()) {
      probe = seed;
      break;
    }
  PrecisionGate gate;
  gate.simt_error = bench.max_relative_error(simt);
  gate.split_tf32_error = bench.max_relative_error(probe);
  gate.offered = gate.split_tf32_error <= kMaxSplitTf32ErrorRatio * gate.simt_error;
  if (!gate.offered) candidates.erase(std::remove_if(candidates.begin(), candidates.end(), is_tc), candidates.end());
  return gate;
}

}  // namespace kgemm
