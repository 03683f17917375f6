// kgemm-compare-strategies: how close each search strategy gets to exhaustive search for a few
// evaluations, replayed on measurement caches of exhaustive autotune runs (`autotune --strategy
// exhaustive --cache FILE`: every candidate measured, and what a search is given recorded). No
// hardware needed: the searches read the recorded numbers, so every strategy sees the same ones.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgemm/cli/compare_strategies_options.hpp"
#include "kgemm/cli/options.hpp"
#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/dispatch/dispatch_model.hpp"
#include "kgemm/tuner/measurement_cache.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/search_space.hpp"
#include "kgemm/tuner/tool_output.hpp"

namespace {

using kgemm::cli::Starts;

// One problem's replay: the candidates, the starts and the exhaustive best.
struct Replayed {
  std::string key;
  std::vector<kgemm::Config> candidates;
  std::vector<kgemm::Config> starts;
  kgemm::Config fallback;  // the space default, measured before the search
  std::map<std::string, kgemm::Measurement> measured;  // by config string
  double best = 0;
  std::optional<double> dispatch_pick;  // its rate over the best (dispatch_picks), where the cache names its device

  kgemm::Measurement measure(const kgemm::Config& c) const { return measured.at(kgemm::to_string(c)); }
  // What autotune keeps of a search: its best, or the default measured before it where that is
  // faster; and the evaluations it cost, the default's included.
  std::pair<double, int> tune(kgemm::Strategy strategy, int budget, std::uint64_t seed) const {
    kgemm::Budget limit;
    limit.evaluations = budget;
    const kgemm::SearchOutcome outcome =
        kgemm::search(candidates, starts, strategy, limit, seed, [&](const kgemm::Config& c) { return measure(c); });
    double found = outcome.best_gflops;
    int evaluations = int(outcome.log.size());
    const auto at_default = measured.find(kgemm::to_string(fallback));
    if (at_default != measured.end()) {
      if (at_default->second.correct) found = std::max(found, at_default->second.gflops);
      const bool searched = std::any_of(outcome.log.begin(), outcome.log.end(),
                                        [&](const kgemm::Evaluated& e) { return e.config == fallback; });
      if (!searched) ++evaluations;
    }
    return {found / best, evaluations};
  }
};

// The seeds as autotune would fit them to `problem` on `device` (batch-1 problems: split along K only).
std::vector<kgemm::Config> fitted_seeds(const std::vector<kgemm::Config>& seeds, const kgemm::Problem& problem,
                                        const kgemm::DeviceInfo& device) {
  const std::vector<int> splits = device.is_host() ? std::vector<int>{1}
                                                   : std::vector<int>(std::begin(kgemm::kGpuSplitCounts), std::end(kgemm::kGpuSplitCounts));
  std::vector<kgemm::Config> fitted;
  for (const kgemm::Config& seed : seeds) fitted.push_back(kgemm::split_for_device(seed, problem, device.threads, splits));
  return kgemm::ordered_starts(fitted, nullptr);
}

// The store's config among the starts where autotune puts it (ordered_starts).
void add_known(std::vector<kgemm::Config>& starts, const kgemm::Config& known) { starts = kgemm::ordered_starts(starts, &known); }

// Per problem, what dispatch would run on `device` from a store holding every other problem with
// its exhaustive best (the dispatch model's first pick that is a candidate of the problem).
std::vector<std::optional<kgemm::Config>> dispatch_picks(const std::vector<Replayed>& problems, const kgemm::DeviceInfo& device) {
  std::vector<kgemm::TunedEntry> bests;
  for (const Replayed& r : problems) {
    kgemm::TunedEntry entry;
    entry.problem = kgemm::parse_problem(r.key);
    entry.gflops = r.best;
    for (const auto& [config, m] : r.measured)
      if (m.correct && m.gflops == r.best) entry.config = kgemm::parse_config(config);
    entry.candidates = int(r.candidates.size());
    bests.push_back(entry);
  }
  std::vector<std::optional<kgemm::Config>> picks(problems.size());
  for (std::size_t p = 0; p < problems.size(); ++p) {
    kgemm::ConfigStore others;
    others.header.device = device;
    for (std::size_t q = 0; q < bests.size(); ++q)
      if (q != p) others.put(bests[q]);
    const std::vector<kgemm::Config>& legal = problems[p].candidates;
    for (const kgemm::RatePrediction& pick : kgemm::rank_stored_configs(others, bests[p].problem))
      if (std::find(legal.begin(), legal.end(), pick.config) != legal.end()) {
        picks[p] = pick.config;
        break;
      }
  }
  return picks;
}

std::vector<Replayed> exhaustive_problems(const kgemm::MeasurementCache& cache, Starts starts,
                                          const std::map<kgemm::DType, std::vector<kgemm::Config>>& seed_configs) {
  if (!seed_configs.empty() && !cache.device)
    throw std::runtime_error("--f32-seeds and --f16-seeds need the cache's #device line (autotune --cache writes it)");
  std::vector<Replayed> problems;
  for (const auto& [key, recorded] : cache.problems) {
    if (!recorded.exhaustive()) continue;
    Replayed r;
    r.key = key;
    const kgemm::Problem problem = kgemm::parse_problem(key);
    const auto seeds = seed_configs.find(problem.dtype);
    r.starts = seeds == seed_configs.end() ? recorded.given.seeds : fitted_seeds(seeds->second, problem, *cache.device);
    if (starts == Starts::Recorded && recorded.given.known) add_known(r.starts, *recorded.given.known);
    r.fallback = recorded.given.fallback;
    const bool default_besides = recorded.measured.size() > recorded.given.candidates;
    for (const kgemm::Evaluated& e : recorded.measured) {
      r.measured[kgemm::to_string(e.config)] = e.measurement;
      if (e.measurement.correct) r.best = std::max(r.best, e.measurement.gflops);
      // The candidates are what the search was given; the default may be measured besides them.
      if (e.config != r.fallback || !default_besides) r.candidates.push_back(e.config);
    }
    if (r.best > 0) problems.push_back(std::move(r));
  }
  if (cache.device) {
    const std::vector<std::optional<kgemm::Config>> picks = dispatch_picks(problems, *cache.device);
    for (std::size_t p = 0; p < problems.size(); ++p) {
      Replayed& r = problems[p];
      if (!picks[p]) continue;
      const kgemm::Measurement picked = r.measure(*picks[p]);
      r.dispatch_pick = picked.correct ? picked.gflops / r.best : 0;
      if (starts == Starts::Store) add_known(r.starts, *picks[p]);
    }
  } else if (starts == Starts::Store) {
    throw std::runtime_error("--starts store needs the cache's #device line (autotune --cache writes it)");
  }
  return problems;
}

struct Cell {
  std::vector<double> ratio;  // per problem: the mean over seeds
  std::vector<double> worst;  // per problem: the worst seed
  double evaluations = 0;     // mean over problems and seeds
  double geomean() const {
    double log_sum = 0;
    for (double r : ratio) log_sum += std::log(r);
    return std::exp(log_sum / double(ratio.size()));
  }
  double worst_problem() const { return *std::min_element(worst.begin(), worst.end()); }
  int reaching(double share) const { return int(std::count_if(worst.begin(), worst.end(), [&](double w) { return w >= share; })); }
};

std::string fixed(double value, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  return kgemm::run_tool("kgemm-compare-strategies", [&] {
    const std::optional<kgemm::cli::CompareStrategiesOptions> options =
        kgemm::cli::parse_compare_strategies(kgemm::cli::own_words(argc, argv, {}));
    if (!options) return 0;
    std::vector<Replayed> problems;
    for (const std::string& path : options->caches)
      for (Replayed& r : exhaustive_problems(kgemm::load_measurements(path), options->starts, options->seed_configs))
        problems.push_back(std::move(r));
    if (problems.empty()) throw std::runtime_error("no problem in the caches was measured exhaustively (a #search line and every candidate)");
    const std::vector<int>& budgets = options->budgets;
    const int seeds = options->seeds;
    const std::vector<kgemm::Strategy>& strategies = options->strategies;

    std::map<std::pair<int, int>, Cell> cells;  // (strategy, budget) index
    std::size_t candidates = 0;
    for (const Replayed& p : problems) candidates += p.candidates.size();
    for (std::size_t s = 0; s < strategies.size(); ++s)
      for (std::size_t b = 0; b < budgets.size(); ++b) {
        Cell& cell = cells[{int(s), int(b)}];
        for (const Replayed& p : problems) {
          double sum = 0, worst = 1;
          for (int seed = 1; seed <= seeds; ++seed) {
            const auto [ratio, evaluations] = p.tune(strategies[s], budgets[b], std::uint64_t(seed));
            sum += ratio, worst = std::min(worst, ratio), cell.evaluations += evaluations;
          }
          cell.ratio.push_back(sum / seeds), cell.worst.push_back(worst);
        }
        cell.evaluations /= double(problems.size()) * seeds;
      }

    std::printf("%zu problems measured exhaustively (%zu candidates each on average), %d seeds; best found / exhaustive best\n"
                "(geometric mean over problems of the mean over seeds; worst problem and seed; problems whose every seed\n"
                "reaches 0.98; evaluations spent on average):\n\n",
                problems.size(), candidates / problems.size(), seeds);
    std::printf("| strategy | budget | geomean | worst | >= 0.98 | evaluations |\n|---|--:|--:|--:|--:|--:|\n");
    for (std::size_t s = 0; s < strategies.size(); ++s)
      for (std::size_t b = 0; b < budgets.size(); ++b) {
        const Cell& cell = cells.at({int(s), int(b)});
        std::printf("| %s | %d | %s | %s | %d of %zu | %s |\n", kgemm::to_string(strategies[s]), budgets[b],
                    fixed(cell.geomean()).c_str(), fixed(cell.worst_problem()).c_str(), cell.reaching(0.98),
                    problems.size(), fixed(cell.evaluations, 1).c_str());
      }
    std::vector<double> picks;
    for (const Replayed& p : problems)
      if (p.dispatch_pick) picks.push_back(*p.dispatch_pick);
    if (!picks.empty()) {
      double log_sum = 0;
      for (double r : picks) log_sum += std::log(std::max(r, 1e-9));
      std::printf("\nDispatch model (what dispatch runs from a store of every other problem's exhaustive best) on %zu\n"
                  "problems: geomean %s, worst %s, %d reach 0.98 of the exhaustive best\n",
                  picks.size(), fixed(std::exp(log_sum / double(picks.size()))).c_str(),
                  fixed(*std::min_element(picks.begin(), picks.end())).c_str(),
                  int(std::count_if(picks.begin(), picks.end(), [](double r) { return r >= 0.98; })));
    } else {
      std::printf("\nDispatch model: on no problem (the caches name no device, or no problem's pick from the others'\n"
                  "exhaustive bests is one of its candidates)\n");
    }
    if (options->per_problem) {
      std::printf("\n| problem | candidates | exhaustive best GFLOP/s |");
      for (kgemm::Strategy strategy : strategies)
        for (int budget : budgets) std::printf(" %s %d |", kgemm::to_string(strategy), budget);
      std::printf("\n|---|--:|--:|");
      for (std::size_t i = 0; i < strategies.size() * budgets.size(); ++i) std::printf("--:|");
      std::printf("\n");
      for (std::size_t p = 0; p < problems.size(); ++p) {
        std::printf("| %s | %zu | %.1f |", problems[p].key.c_str(), problems[p].candidates.size(), problems[p].best);
        for (std::size_t s = 0; s < strategies.size(); ++s)
          for (std::size_t b = 0; b < budgets.size(); ++b) {
            const Cell& cell = cells.at({int(s), int(b)});
            std::printf(" %s (%s) |", fixed(cell.ratio[p]).c_str(), fixed(cell.worst[p]).c_str());
          }
        std::printf("\n");
      }
    }
    if (const int worst = options->worst; worst > 0) {
      const Cell& cell = cells.at({0, 0});
      std::vector<std::size_t> order(problems.size());
      for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cell.worst[a] < cell.worst[b]; });
      std::printf("\n%s at budget %d, the worst problems (worst seed; the exhaustive best's config):\n",
                  kgemm::to_string(strategies[0]), budgets[0]);
      for (int i = 0; i < worst && i < int(order.size()); ++i) {
        const Replayed& p = problems[order[std::size_t(i)]];
        const auto best = std::find_if(p.measured.begin(), p.measured.end(), [&](const auto& m) {
          return m.second.correct && m.second.gflops == p.best;
        });
        std::printf("  %s  %s  best %s\n", fixed(cell.worst[order[std::size_t(i)]]).c_str(), p.key.c_str(),
                    best->first.c_str());
      }
    }
    return 0;
  });
}
