#pragma once
// One problem tuned: the space default measured as the rate to beat, the candidates listed and
// (fp32 on tensor cores) gated by their error, the search run from the default, the seeds and the
// store's config, and the winner written up as a store entry. autotune and the Python package's
// kgemm.tune both tune through it, so a problem is tuned the same way whoever asks.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/dispatch/store_registry.hpp"
#include "kgemm/tuner/measurement_cache.hpp"
#include "kgemm/tuner/precision_gate.hpp"
#include "kgemm/tuner/problem_bench.hpp"
#include "kgemm/tuner/retime.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/search_space.hpp"
#include "kgemm/tuning_policy.hpp"

namespace kgemm {

struct TuneSettings {
  Strategy strategy = Strategy::Climb;
  Budget budget{40, 0};
  std::uint64_t seed = 1;  // the inputs' and the search's
  int reps = 7;            // timed runs per candidate
  OperandCache operands = OperandCache::Warm;  // whether they find their operands in cache (operand_cache.hpp)
  // The fastest configs found (the default among them) re-timed in kConfirmRounds alternating
  // rounds before one is kept, by median: the highest of many single readings is as often a lucky
  // reading as a faster config (docs/tuning.md). 0 or 1: the fastest single reading.
  int confirm = kConfirmedConfigs;
};

// What the caller may plug in around the measurements.
struct TuneHooks {
  Evaluate replay;  // set: measurements come from it (an earlier run's cache), no kernel runs
  std::function<void(const Config&, const Measurement&)> record;  // each measurement as it is made
  std::function<void(const Measurement&)> measured_default;       // the space default's, before the search
  // What the search is given, before it starts (measurement_cache.hpp's SearchGiven).
  std::function<void(const SearchGiven&)> searching;
  OnProgress progress;                                            // after each evaluation
};

struct TuneOutcome {
  Measurement baseline;  // the space default's
  SearchOutcome search;
  std::optional<PrecisionGate> gate;  // fp32 with tensor-core candidates: which families may run
  std::optional<TunedEntry> entry;    // absent when no config computed the problem right
};

// The store a tuning run extends on `device` unless told another: writable_store_file's. When
// the store in use is read-only (an installed prefix), the new one in the user's data directory
// starts as a copy of it: that directory comes first in the search path, and dispatch must not
// lose the installed entries.
std::string tuning_store_path(const DeviceInfo& device, std::optional<double> lock_timeout = std::nullopt);

// Where a device's searches start besides the defaults and seeds (search_starts): the store's
// configs for the problem (store_starts: its own entry or dispatch's pick first, then the model's
// next best) and another device's store, ranked with this device's facts: the store that serves a
// device without one of its own (find_serving_store), else on a GPU the nearest store of another
// GPU of its architecture (find_sibling_store). Where the device's store offers nothing for the
// problem (none, or none of its kind), the other's configs alone: a new device's tuning begins
// where its neighbour's ended. Else, on a GPU, the starts after dispatch's pick are ranked among
// both stores' configs: another GPU's store holds shapes this one's may lack (replayed on the
// twelve H200 caches from the committed H200 store, ResNet-50 at batch 1 and 128, with the H100's
// beside it, budget 8 puts 437 of 454 problems within 2 % of the best, 431 without, budget 4 410
// and 366; the nine H100 caches from the H100's store with the H200's beside it, 303 and 302 of
// 313). Hosts take the device's own alone: a host's rates move with cache sizes another model's
// lack (the two EPYC caches from the EPYC's store with the Intel Xeon's beside it: 41 and 42 of
// 52 at budget 8, 30 and 37 at budget 4; docs/tuning.md).
class KnownConfigs {
 public:
  // `store`: the device's store as the run found it (what the run adds is left out, so a run split
  // among processes or shards tunes each problem as one run would). The other store's lookup
  // warnings are dispatch's to give.
  KnownConfigs(ConfigStore store, const DeviceInfo& device) : found_(std::move(store)), device_(device) {
    found_.header.device = device;  // read by the device's own facts (its bandwidth prices split K)
    std::vector<std::string> warnings;
    ServingStore other = find_serving_store(device, warnings);
    if (other.store && other.own) other = device.is_host() ? ServingStore{} : find_sibling_store(device);
    sibling_ = other.match == StoreMatch::Sibling;
    if (other.store && !other.own) {
      other_description_ = describe(other, device);
      other_ = std::move(other.store);
    }
  }
  template <class ExecSpace>
  std::vector<Config> for_problem(const Problem& problem) const {
    std::vector<Config> known = store_starts<ExecSpace>(found_, problem);
    if (!other_) return known;
    if (known.empty()) return store_starts<ExecSpace>(*other_, problem, device_);
    return device_.is_host() ? known : store_starts<ExecSpace>(found_, problem, device_, &*other_);
  }
  // The other device's store the searches also start from (describe's line); empty when none.
  const std::string& other_description() const { return other_description_; }
  // Whether that store is a sibling of the device's own (find_sibling_store), not the store that
  // serves a device without one.
  bool sibling() const { return sibling_; }

 private:
  ConfigStore found_;
  DeviceInfo device_;
  std::optional<ConfigStore> other_;
  std::string other_description_;
  bool sibling_ = false;
};

// Rates as stores keep them: four significant digits, short diff-friendly lines, and a tiny
// problem's rate stays non-zero.
inline double stored_rate(double gflops) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", gflops);
  return std::stod(text);
}

// Tunes `problem` on `space`: `known` are the store's configs for it (store_starts), starts of
// the search; `device` the space's device (its threads or SMs split the seeds: search_starts; its
// facts rank a climb's steps: model_prediction).
template <class ExecSpace>
TuneOutcome tune_problem(const ExecSpace& space, const Problem& problem, const TuneSettings& settings,
                         const std::vector<Config>& known, const DeviceInfo& device, const TuneHooks& hooks = {}) {
  double best = 0;  // the fastest correct rate so far: configs hopeless against it are timed once
  std::unique_ptr<ProblemBench<ExecSpace, float>> bench32;
  std::unique_ptr<ProblemBench<ExecSpace, half>> bench16;
  // A config measured against a rate to beat (0: timed in full whatever its first call).
  std::function<Measurement(const Config&, double)> bench_measure;
  if (!hooks.replay) {
    TimingPolicy timing;
    timing.reps = settings.reps;
    timing.operands = settings.operands;
    const int seed = int(settings.seed);
    if (problem.dtype == DType::F32) {
      bench32 = std::make_unique<ProblemBench<ExecSpace, float>>(space, problem, seed, timing);
      bench_measure = [b = bench32.get()](const Config& c, double to_beat) { return b->measure(c, to_beat); };
    } else {
      bench16 = std::make_unique<ProblemBench<ExecSpace, half>>(space, problem, seed, timing);
      bench_measure = [b = bench16.get()](const Config& c, double to_beat) { return b->measure(c, to_beat); };
    }
  }
  const Evaluate measure = hooks.replay ? hooks.replay : Evaluate([&](const Config& c) { return bench_measure(c, best); });
  const Evaluate recorded = [&](const Config& c) {
    const Measurement m = measure(c);
    if (m.correct) best = std::max(best, m.gflops);
    if (hooks.record) hooks.record(c, m);
    return m;
  };

  TuneOutcome out;
  const Config fallback = TuningPolicy<ExecSpace>::default_config(problem.dtype);
  out.baseline = recorded(fallback);
  if (hooks.measured_default) hooks.measured_default(out.baseline);
  // The default is usually a candidate too (climb may start there): its measurement is reused.
  const Evaluate measure_once = [&](const Config& c) { return c == fallback ? out.baseline : recorded(c); };
  std::vector<Config> candidates = candidate_configs<ExecSpace>(problem);
  if (bench32)
    out.gate = gate_split_tf32(*bench32, fallback, TuningPolicy<ExecSpace>::seed_configs(problem), candidates);
  if (hooks.searching) hooks.searching({candidates.size(), fallback, search_starts<ExecSpace>(problem, device.threads), known});
  const std::vector<Config> starts = search_starts<ExecSpace>(problem, device.threads, known);
  out.search = search(candidates, starts, settings.strategy, settings.budget, settings.seed, measure_once, hooks.progress,
                      model_prediction(problem, device), step_after_starts(starts, known));

  // The default first: it keeps the place a tie gives it over the search's configs.
  std::vector<Evaluated> measured{{fallback, out.baseline}};
  measured.insert(measured.end(), out.search.log.begin(), out.search.log.end());
  std::vector<Evaluated> readings = measured;  // every reading, re-timings last
  if (settings.confirm > 1) {
    const std::vector<Config> leaders = fastest_measured(measured, std::size_t(settings.confirm));
    if (leaders.size() > 1) {
      // Timed in full, none of them hopeless: the search's cut-off would keep a slow first call.
      const Evaluate timed = hooks.replay ? hooks.replay : Evaluate([&](const Config& c) { return bench_measure(c, 0); });
      measured = retime(leaders, kConfirmRounds, timed);
      readings.insert(readings.end(), measured.begin(), measured.end());
      for (const Evaluated& e : measured) {
        if (hooks.record) hooks.record(e.config, e.measurement);
        if (e.config == fallback) out.baseline = e.measurement;
      }
    }
  }
  const std::vector<Config> kept = fastest_measured(measured, 1);
  if (kept.empty()) return out;  // no config computed the problem right
  TunedEntry entry;
  entry.problem = problem;
  entry.candidates = int(out.search.log.size());
  entry.default_gflops = out.baseline.correct ? stored_rate(out.baseline.gflops) : 0;
  entry.config = kept.front();
  for (const Evaluated& e : measured)
    if (e.config == entry.config && e.measurement.correct) entry.gflops = stored_rate(std::max(entry.gflops, e.measurement.gflops));
  for (RatedConfig runner_up : runners_up(readings, entry.config, kStoredRunnersUp)) {
    runner_up.gflops = stored_rate(runner_up.gflops);
    entry.runners_up.push_back(runner_up);
  }
  out.entry = entry;
  return out;
}

}  // namespace kgemm
