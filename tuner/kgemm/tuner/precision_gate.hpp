#pragma once
// Which arithmetic an fp32 problem may be tuned with. 3xTF32 (fp32 data on tensor cores, configs
// ending in _tc or _wg) gives fp32 results through another arithmetic than the SIMT kernels'
// fp32 FMAs: the tuner offers a family of its configs for a problem only when one of them,
// measured on that problem's inputs against the fp64 result, errs no more than
// kMaxSplitTf32ErrorRatio times as much as the SIMT default; otherwise the family leaves the
// candidates. The families are gated apart because their sums differ: `mma.sync` (_tc) adds
// every 8 k's products in fp32 registers, Hopper's `wgmma` (_wg) a whole slab's inside the
// tensor cores first. One config of each family, and the default, runs before the search.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "kgemm/config.hpp"

namespace kgemm {

constexpr double kMaxSplitTf32ErrorRatio = 2.0;

// A family of 3xTF32 configs: its suffix and which configs are its.
struct SplitTf32Family {
  const char* suffix;
  bool (*member)(const Config&);
};
inline const SplitTf32Family kSplitTf32Families[] = {{"_tc", [](const Config& c) { return c.tensor_cores() && !c.warpgroups(); }},
                                                     {"_wg", [](const Config& c) { return c.warpgroups(); }}};

// One family's error (max |C - C_exact| / max |C_exact| over the checked elements), the config
// that gave it, and the outcome.
struct FamilyGate {
  std::string suffix;
  Config probe;
  double error = 0;
  bool offered = false;
};
struct PrecisionGate {
  double simt_error = 0;
  std::vector<FamilyGate> families;  // those with candidates, in kSplitTf32Families' order
};

// Bench: anything with double max_relative_error(const Config&) (ProblemBench). Empty when
// `candidates` has no tensor-core config (nothing to decide). Each family's config measured is
// its seed among the candidates, else its first candidate.
template <class Bench>
std::optional<PrecisionGate> gate_split_tf32(const Bench& bench, const Config& simt, const std::vector<Config>& seeds,
                                             std::vector<Config>& candidates) {
  if (std::none_of(candidates.begin(), candidates.end(), [](const Config& c) { return c.tensor_cores(); })) return std::nullopt;
  PrecisionGate gate;
  gate.simt_error = bench.max_relative_error(simt);
  for (const SplitTf32Family& family : kSplitTf32Families) {
    const auto first = std::find_if(candidates.begin(), candidates.end(), family.member);
    if (first == candidates.end()) continue;
    FamilyGate result{family.suffix, *first};
    for (const Config& seed : seeds)
      if (family.member(seed) && std::find(candidates.begin(), candidates.end(), seed) != candidates.end()) {
        result.probe = seed;
        break;
      }
    result.error = bench.max_relative_error(result.probe);
    result.offered = result.error <= kMaxSplitTf32ErrorRatio * gate.simt_error;
    if (!result.offered) candidates.erase(std::remove_if(candidates.begin(), candidates.end(), family.member), candidates.end());
    gate.families.push_back(result);
  }
  return gate;
}

// "1.20e-06 / _tc 1.10e-06 offered, _wg 9.00e-07 offered": the SIMT error, then each family's.
inline std::string describe(const PrecisionGate& gate) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2e", gate.simt_error);
  std::string out = text;
  for (const FamilyGate& family : gate.families) {
    std::snprintf(text, sizeof text, "%s %s %.2e %s", &family == gate.families.data() ? " /" : ",",
                  family.suffix.c_str(), family.error, family.offered ? "offered" : "withheld");
    out += text;
  }
  return out;
}

}  // namespace kgemm
