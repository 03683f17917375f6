#pragma once
// An entry measured on kernels older than the code's (kernel_generation.hpp), re-timed on the
// device it was tuned for (autotune --verify-store): kept with the rates measured now and the
// code's generation, without its runners-up, where its config still runs at least as fast as the
// space default (or is the default), dropped where it runs slower or wrong, so that dispatch
// never steers a call from the default onto a config that lost to it on today's kernels.
#include <cstdio>
#include <optional>
#include <string>

#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/kernel_generation.hpp"
#include "kgemm/tuner/search.hpp"

namespace kgemm {

struct Recheck {
  std::optional<TunedEntry> kept;  // absent: dropped
  // "kept (...)" or "dropped, <why> (...)", with both rates; a kept entry's says where its
  // runners-up were left out.
  std::string verdict;
};

// `tuned`: the entry's config measured now; `by_default`: `fallback`, the space default for the
// problem, measured now (the same measurement where the entry's config is the default).
inline Recheck recheck_entry(const TunedEntry& stale, const Config& fallback, const Measurement& tuned,
                             const Measurement& by_default) {
  // Four significant digits, as autotune stores rates.
  const auto rounded = [](double gflops) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", gflops);
    return std::string(text);
  };
  const std::string rates = (tuned.correct ? rounded(tuned.gflops) + " GFLOP/s" : "wrong") + ", the default " +
                            (by_default.correct ? rounded(by_default.gflops) + " GFLOP/s" : "wrong");
  if (!tuned.correct || tuned.gflops <= 0) return {std::nullopt, "dropped, wrong on today's kernels: " + tuned.note};
  if (stale.config != fallback && by_default.correct && tuned.gflops < by_default.gflops)
    return {std::nullopt, "dropped, slower than the default (" + rates + ")"};
  TunedEntry entry = stale;
  // The runners-up were measured on the kernels of their day and are not re-timed: a search would
  // start from rates today's kernels may not reach.
  entry.runners_up.clear();
  entry.gflops = std::stod(rounded(tuned.gflops));
  entry.default_gflops = by_default.correct ? std::stod(rounded(by_default.gflops)) : 0;
  entry.generation = kKernelGeneration;
  const std::string left_out = stale.runners_up.empty() ? "" : "; its runners-up left out, not re-timed";
  return {entry, "kept (" + rates + left_out + ")"};
}

}  // namespace kgemm
