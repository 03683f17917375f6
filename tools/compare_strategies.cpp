// kgemm-compare-strategies: how close each search strategy gets to exhaustive search for a few
// evaluations, replayed on measurement caches of exhaustive autotune runs (`autotune --strategy
// exhaustive --cache FILE`: every candidate measured, and what a search is given recorded). No
// hardware needed: the searches read the recorded numbers, so every strategy sees the same ones.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <iterator>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kgemm/cli/compare_strategies_options.hpp"
#include "kgemm/cli/options.hpp"
#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/dispatch/dispatch_model.hpp"
#include "kgemm/gpu_seeds.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/tuning_policy.hpp"
#include "kgemm/tuner/measurement_cache.hpp"
#include "kgemm/tuner/retime.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/search_space.hpp"
#include "kgemm/tuner/tool_output.hpp"
#include "report.hpp"

namespace {

using kgemm::cli::Judge;
using kgemm::cli::Starts;
using kgemm::cli::StartSeeds;
// The seeds a problem's searches start from, unfitted; none (or no function): the seeds the cache
// recorded.
using SeedsOf = std::function<std::optional<std::vector<kgemm::Config>>(const kgemm::Problem&)>;

// One problem's replay: the candidates, the starts and what exhaustive search keeps.
struct Replayed {
  std::string key;
  std::vector<kgemm::Config> candidates;
  std::vector<kgemm::Config> starts;
  kgemm::Config fallback;  // the space default, measured before the search
  // By config string: what a search measuring the config reads, and what the config is worth once
  // kept (--judge).
  std::map<std::string, kgemm::Measurement> read, worth;
  int confirm = 1;  // the fastest configs read that autotune re-times before it keeps one
  kgemm::Config best_config;  // what exhaustive search keeps
  double best = 0;            // and its worth
  double fastest = 0;         // the highest worth of any config (--judge best's reference)
  std::optional<double> dispatch_pick;  // its worth over the best (dispatch_picks), where the cache names its device
  kgemm::Predict predict;  // how autotune's climb ranks steps (model_prediction), where the cache names its device
  std::size_t step_after = 0;  // the starts stepped from before the seeds (step_after_starts)

  kgemm::Measurement measure(const kgemm::Config& c) const { return read.at(kgemm::to_string(c)); }
  double worth_of(const kgemm::Config& c) const {
    const kgemm::Measurement& m = worth.at(kgemm::to_string(c));
    return m.correct ? m.gflops : 0;
  }
  // What autotune keeps of `measured` (the default first): kept_config, confirming at each one's worth.
  kgemm::Config kept(const std::vector<kgemm::Evaluated>& measured) const {
    return kgemm::kept_config(measured, confirm, [&](const kgemm::Config& c) { return worth_of(c); }).value_or(fallback);
  }
  // The default's measurement, where the cache holds one, then `more` in config-string order: a
  // tie goes to the default, as in autotune, and otherwise falls alike whatever order a search
  // measured in, so that a search measuring every candidate keeps what exhaustive search keeps.
  std::vector<kgemm::Evaluated> after_default(std::vector<kgemm::Evaluated> more) const {
    std::sort(more.begin(), more.end(),
              [](const kgemm::Evaluated& a, const kgemm::Evaluated& b) { return kgemm::to_string(a.config) < kgemm::to_string(b.config); });
    if (read.count(kgemm::to_string(fallback))) more.insert(more.begin(), {fallback, measure(fallback)});
    return more;
  }
  // What autotune keeps of a search over the best, and the evaluations it cost, the default's included.
  std::pair<double, int> tune(kgemm::Strategy strategy, int budget, std::uint64_t seed) const {
    kgemm::Budget limit;
    limit.evaluations = budget;
    const kgemm::SearchOutcome outcome =
        kgemm::search(candidates, starts, strategy, limit, seed, [&](const kgemm::Config& c) { return measure(c); }, {}, predict,
                      step_after);
    int evaluations = int(outcome.log.size());
    const bool searched = std::any_of(outcome.log.begin(), outcome.log.end(),
                                      [&](const kgemm::Evaluated& e) { return e.config == fallback; });
    if (read.count(kgemm::to_string(fallback)) && !searched) ++evaluations;
    return {worth_of(kept(after_default(outcome.log))) / best, evaluations};
  }
};

// The seeds as autotune would fit them to `problem` on `device` (batch-1 problems: split along K only).
std::vector<kgemm::Config> fitted_seeds(const std::vector<kgemm::Config>& seeds, const kgemm::Problem& problem,
                                        const kgemm::DeviceInfo& device) {
  const std::vector<int> splits = device.is_host() ? std::vector<int>{1}
                                                   : std::vector<int>(std::begin(kgemm::kGpuSplitCounts), std::end(kgemm::kGpuSplitCounts));
  return kgemm::ordered_starts(kgemm::seed_starts(seeds, problem, device.threads, splits), {});
}

// The seeds autotune gives `problem` on `device` today, where this build can tell: a GPU's by the
// compute capability its arch names (gpu_seeds.hpp), a host's where its SIMD width is this build's
// (the host micro-tiles follow it); none otherwise.
std::optional<std::vector<kgemm::Config>> todays_seeds(const kgemm::DeviceInfo& device, const kgemm::Problem& problem) {
  if (!device.is_host()) {
    if (const int capability = kgemm::capability_of_arch(device.arch))
      return kgemm::gpu_seed_configs(problem.dtype, kgemm::tensor_cores_of(capability));
  } else if (kgemm::arch_vector_bits(device.arch) == kgemm::kHostVectorBits) {
    return kgemm::TuningPolicy<Kokkos::DefaultHostExecutionSpace>::seed_configs(problem);
  }
  return std::nullopt;
}

// The seeds a cache's searches start from: --f32-seeds / --f16-seeds, then --start-seeds'.
SeedsOf start_seeds(const kgemm::MeasurementCache& cache, const kgemm::cli::CompareStrategiesOptions& options) {
  if (!options.seed_configs.empty() && !cache.device)
    throw kgemm::RuntimeError("--f32-seeds and --f16-seeds need the cache's #device line (autotune --cache writes it)");
  return [&cache, &options](const kgemm::Problem& problem) -> std::optional<std::vector<kgemm::Config>> {
    const auto given = options.seed_configs.find(problem.dtype);
    if (given != options.seed_configs.end()) return given->second;
    if (options.start_seeds == StartSeeds::Today && cache.device) return todays_seeds(*cache.device, problem);
    return std::nullopt;
  };
}

// The store's configs among the starts where autotune puts them (ordered_starts).
void add_known(Replayed& r, const std::vector<kgemm::Config>& known) {
  r.starts = kgemm::ordered_starts(r.starts, known);
  r.step_after = kgemm::step_after_starts(r.starts, known);
}

// Per problem, from a store holding every other problem with its exhaustive best and, as an
// exhaustive tuning stores them, its runners-up (among the configs' worths): what dispatch
// would run on `device` (the dispatch model's first pick that is a candidate of the problem) and
// the store's configs autotune's search would start from (store_starts, among the candidates).
struct StorePicks {
  std::optional<kgemm::Config> dispatched;
  std::vector<kgemm::Config> starts;
};
std::vector<StorePicks> dispatch_picks(const std::vector<Replayed>& problems, const kgemm::DeviceInfo& device,
                                       const std::optional<kgemm::ConfigStore>& given,
                                       const std::optional<kgemm::ConfigStore>& sibling) {
  std::vector<kgemm::TunedEntry> bests;
  for (const Replayed& r : problems) {
    kgemm::TunedEntry entry;
    entry.problem = kgemm::parse_problem(r.key);
    entry.gflops = r.best;
    entry.config = r.best_config;
    entry.candidates = int(r.candidates.size());
    std::vector<kgemm::Evaluated> rated;
    for (const auto& [config, m] : r.worth) rated.push_back({kgemm::parse_config(config), m});
    entry.runners_up = kgemm::runners_up(rated, entry.config, kgemm::kStoredRunnersUp);
    bests.push_back(entry);
  }
  std::vector<StorePicks> picks(problems.size());
  for (std::size_t p = 0; p < problems.size(); ++p) {
    kgemm::ConfigStore others;
    others.header.device = device;
    if (given) {
      others = *given;
      others.erase(bests[p].problem);  // a store that tuned the problem would not search it
    } else {
      for (std::size_t q = 0; q < bests.size(); ++q)
        if (q != p) others.put(bests[q]);
    }
    const std::vector<kgemm::Config>& legal = problems[p].candidates;
    const auto is_candidate = [&](const kgemm::Config& c) { return std::find(legal.begin(), legal.end(), c) != legal.end(); };
    for (const kgemm::RatePrediction& pick : kgemm::rank_stored_configs(others, bests[p].problem))
      if (is_candidate(pick.config)) {
        picks[p].dispatched = pick.config;
        break;
      }
    std::optional<kgemm::ConfigStore> their_others = sibling;
    if (their_others) their_others->erase(bests[p].problem);
    picks[p].starts = kgemm::store_starts(others, bests[p].problem, device, is_candidate, kgemm::kStoreStarts,
                                          their_others ? &*their_others : nullptr);
  }
  return picks;
}

// Under --judge kept, a config read once is worth its reading scaled as the problem's re-timed
// configs (`retimed`: read more than once) moved from their first reading to their last (the
// median of their ratios): leaders re-timed minutes after an exhaustive run read lower or higher as
// a whole (clocks, the host's other work), and a search keeping a config never re-timed must
// neither gain nor lose by that.
void value_unretimed(Replayed& r, const std::set<std::string>& retimed) {
  std::vector<double> moved;
  for (const std::string& config : retimed) {
    const kgemm::Measurement &first = r.read.at(config), &last = r.worth.at(config);
    if (first.correct && last.correct) moved.push_back(last.gflops / first.gflops);
  }
  if (moved.empty()) return;
  std::nth_element(moved.begin(), moved.begin() + std::ptrdiff_t(moved.size() / 2), moved.end());
  const double factor = moved[moved.size() / 2];
  for (auto& [config, m] : r.worth)
    if (!retimed.count(config)) m.gflops *= factor;
}

// Every problem the cache measured exhaustively: its candidates and starts, what a search reads of
// each config and what it is worth (--judge), and what exhaustive search keeps.
std::vector<Replayed> measured_problems(const kgemm::MeasurementCache& cache, Starts starts, Judge judge,
                                        const SeedsOf& seeds_of) {
  std::vector<Replayed> problems;
  for (const auto& [key, recorded] : cache.problems) {
    if (!recorded.exhaustive()) continue;
    Replayed r;
    r.key = key;
    const kgemm::Problem problem = kgemm::parse_problem(key);
    const std::optional<std::vector<kgemm::Config>> seeds = seeds_of ? seeds_of(problem) : std::nullopt;
    r.starts = seeds ? fitted_seeds(*seeds, problem, *cache.device) : recorded.given.seeds;
    if (starts == Starts::Recorded) add_known(r, recorded.given.known);
    if (cache.device) r.predict = kgemm::model_prediction(problem, *cache.device);
    r.fallback = recorded.given.fallback;
    const bool default_besides = recorded.measured.size() > recorded.given.candidates;
    for (const kgemm::Evaluated& e : recorded.measured) {
      // The candidates are what the search was given; the default may be measured besides them.
      if (e.config != r.fallback || !default_besides) r.candidates.push_back(e.config);
      r.worth[kgemm::to_string(e.config)] = e.measurement;  // its last: re-timed where it was
    }
    if (judge == Judge::Kept) {
      r.confirm = kgemm::kConfirmedConfigs;
      for (const kgemm::Evaluated& e : recorded.first_readings()) r.read[kgemm::to_string(e.config)] = e.measurement;
      std::map<std::string, int> times;
      for (const kgemm::Evaluated& e : recorded.readings) ++times[kgemm::to_string(e.config)];
      std::set<std::string> retimed;
      for (const auto& [config, n] : times)
        if (n > 1) retimed.insert(config);
      value_unretimed(r, retimed);
    } else {
      r.read = r.worth;
    }
    // What exhaustive search keeps: every candidate read.
    std::vector<kgemm::Evaluated> all;
    for (const kgemm::Evaluated& e : recorded.measured) all.push_back({e.config, r.measure(e.config)});
    r.best_config = r.kept(r.after_default(all));
    r.best = r.worth_of(r.best_config);
    for (const auto& entry : r.worth)
      if (entry.second.correct) r.fastest = std::max(r.fastest, entry.second.gflops);
    if (r.best > 0) problems.push_back(std::move(r));
  }
  return problems;
}

// measured_problems with the store's configs among each problem's starts (--starts store) and
// dispatch's pick, from `store` less the problem or from the cache's other problems.
std::vector<Replayed> exhaustive_problems(const kgemm::MeasurementCache& cache, Starts starts, Judge judge,
                                          const SeedsOf& seeds_of,
                                          const std::optional<kgemm::ConfigStore>& store,
                                          const std::optional<kgemm::ConfigStore>& sibling) {
  std::vector<Replayed> problems = measured_problems(cache, starts, judge, seeds_of);
  if (cache.device) {
    const std::vector<StorePicks> picks = dispatch_picks(problems, *cache.device, store, sibling);
    for (std::size_t p = 0; p < problems.size(); ++p) {
      Replayed& r = problems[p];
      if (starts == Starts::Store) add_known(r, picks[p].starts);
      if (picks[p].dispatched) r.dispatch_pick = r.worth_of(*picks[p].dispatched) / r.best;
    }
  } else if (starts == Starts::Store) {
    throw kgemm::RuntimeError("--starts store needs the cache's #device line (autotune --cache writes it)");
  }
  return problems;
}

// Shares of a reference over problems: "geomean G, worst W, N reach 0.98".
std::string shares_summary(const std::vector<double>& shares) {
  const kgemm::report::ShareSummary summary = kgemm::report::summarize_shares(shares);
  return fmt::format("geomean {:.3f}, worst {:.3f}, {} reach 0.98", summary.geomean, summary.worst, summary.reaching);
}

// --again: per problem of `problems` that `again` (exhaustive caches of the same problems measured
// again) also measured, what that exhaustive search kept, worth on `problems`' measurements over
// what theirs kept. A kept config `problems` never measured (another build's candidates) is left
// out and counted.
struct Again {
  std::vector<double> shares;
  int unmeasured = 0;
};
Again exhaustive_again(const std::vector<Replayed>& problems, const std::vector<Replayed>& again) {
  std::map<std::string, kgemm::Config> kept;
  for (const Replayed& r : again) kept.emplace(r.key, r.best_config);
  Again result;
  for (const Replayed& p : problems)
    if (const auto found = kept.find(p.key); found != kept.end()) {
      if (p.worth.count(kgemm::to_string(found->second)))
        result.shares.push_back(p.worth_of(found->second) / p.best);
      else
        ++result.unmeasured;
    }
  return result;
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

using kgemm::report::Columns;
using kgemm::report::kTable;
using kgemm::report::Style;
using kgemm::report::Value;

// The summary's row: a strategy at a budget over every problem.
struct Summary {
  kgemm::Strategy strategy;
  int budget;
  const Cell* cell;
  std::size_t problems;
};

const Columns<Summary> kSummaryColumns{
    {"strategy", "strategy", 0, Style::Text, kTable, [](const Summary& r) -> Value { return std::string(kgemm::to_string(r.strategy)); }},
    {"budget", "budget", 0, Style::Count, kTable, [](const Summary& r) -> Value { return r.budget; }},
    {"geomean", "geomean", 0, Style::Share, kTable, [](const Summary& r) -> Value { return r.cell->geomean(); }},
    {"worst", "worst", 0, Style::Share, kTable, [](const Summary& r) -> Value { return r.cell->worst_problem(); }},
    {"reaching", ">= 0.98", 0, Style::Count, kTable,
     [](const Summary& r) -> Value { return fmt::format("{} of {}", r.cell->reaching(0.98), r.problems); }},
    {"evaluations", "evaluations", 0, Style::Count, kTable, [](const Summary& r) -> Value { return r.cell->evaluations; }},
};

// --per-problem's columns, a row per problem (its index): its candidates and exhaustive best,
// whether the best's block class is among the starts a store gives the search (no store: none),
// and per strategy and budget the mean over seeds (the worst seed).
Columns<std::size_t> per_problem_columns(const std::vector<Replayed>& problems, const std::vector<kgemm::Strategy>& strategies,
                                         const std::vector<int>& budgets, const std::map<std::pair<int, int>, Cell>& cells) {
  const std::vector<Replayed>* all = &problems;  // the columns outlive this call's references
  std::vector<kgemm::report::Column<std::size_t>> columns{
      {"problem", "problem", 0, Style::Text, kTable, [all](std::size_t p) -> Value { return (*all)[p].key; }},
      {"candidates", "candidates", 0, Style::Count, kTable, [all](std::size_t p) -> Value { return int((*all)[p].candidates.size()); }},
      {"best_gflops", "exhaustive best GFLOP/s", 0, Style::Rate, kTable, [all](std::size_t p) -> Value { return (*all)[p].best; }},
      {"best_class_started", "its class a store start", 0, Style::Text, kTable,
       [all](std::size_t p) -> Value {
         const Replayed& r = (*all)[p];
         if (r.step_after == 0) return std::monostate{};
         const auto from_store = r.starts.begin() + std::ptrdiff_t(r.step_after);
         return std::any_of(r.starts.begin(), from_store, [&](const kgemm::Config& c) { return kgemm::same_block_class(c, r.best_config); });
       }},
  };
  for (std::size_t s = 0; s < strategies.size(); ++s)
    for (std::size_t b = 0; b < budgets.size(); ++b) {
      const Cell* cell = &cells.at({int(s), int(b)});
      const char* strategy = kgemm::to_string(strategies[s]);
      columns.push_back({fmt::format("{}_{}", strategy, budgets[b]), fmt::format("{} {}", strategy, budgets[b]), 0, Style::Share,
                         kTable, [cell](std::size_t p) -> Value {
                           return fmt::format("{:.3f} ({:.3f})", cell->ratio[p], cell->worst[p]);
                         }});
    }
  return Columns<std::size_t>(std::move(columns));
}

}  // namespace

int main(int argc, char** argv) {
  return kgemm::run_tool("kgemm-compare-strategies", [&] {
    const std::optional<kgemm::cli::CompareStrategiesOptions> options =
        kgemm::cli::parse_compare_strategies(kgemm::cli::own_words(argc, argv, {}));
    if (!options) return 0;
    std::optional<kgemm::ConfigStore> store;
    if (options->store) store = kgemm::ConfigStore::load(*options->store);
    std::optional<kgemm::ConfigStore> sibling;
    if (options->sibling_store) sibling = kgemm::ConfigStore::load(*options->sibling_store);
    std::vector<Replayed> problems;
    for (const std::string& path : options->caches) {
      const kgemm::MeasurementCache cache = kgemm::load_measurements(path);
      for (Replayed& r : exhaustive_problems(cache, options->starts, options->judge, start_seeds(cache, *options), store, sibling))
        problems.push_back(std::move(r));
    }
    if (problems.empty())
      throw kgemm::RuntimeError("no problem in the caches was measured exhaustively (a #search line and every candidate)");
    std::vector<Replayed> again;
    for (const std::string& path : options->again)
      for (Replayed& r : measured_problems(kgemm::load_measurements(path), Starts::Seeds, options->judge, {}))
        again.push_back(std::move(r));
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

    fmt::print("{} problems measured exhaustively ({} candidates each on average), {} seeds; {}\n"
               "(geometric mean over problems of the mean over seeds; worst problem and seed; problems whose every seed\n"
               "reaches 0.98; evaluations spent on average):\n\n{}\n",
               problems.size(), candidates / problems.size(), seeds,
               options->judge == Judge::Kept ? "what autotune keeps of the search over what it keeps of exhaustive search (--judge kept)"
                                             : "best found / exhaustive best (--judge best)",
               kSummaryColumns.markdown_header());
    for (std::size_t s = 0; s < strategies.size(); ++s)
      for (std::size_t b = 0; b < budgets.size(); ++b)
        fmt::print("{}\n", kSummaryColumns.markdown_line({strategies[s], budgets[b], &cells.at({int(s), int(b)}), problems.size()}));
    std::vector<double> picks, kept;
    for (const Replayed& p : problems) {
      if (p.dispatch_pick) picks.push_back(*p.dispatch_pick);
      kept.push_back(p.best / p.fastest);
    }
    if (options->judge == Judge::Kept)
      fmt::print("\nWhat exhaustive search keeps, over the fastest config's worth (--judge best's reference): {}\n",
                 shares_summary(kept));
    if (!options->again.empty()) {
      const Again result = exhaustive_again(problems, again);
      if (result.shares.empty())
        throw kgemm::RuntimeError("--again: no problem of --cache was measured exhaustively there too, with a config it kept measured here");
      fmt::print("\nExhaustive search again (what {} kept, judged alike) on {} problems{}: {} of what this one kept\n",
                 fmt::join(options->again, ", "), result.shares.size(),
                 result.unmeasured ? fmt::format(" ({} more kept a config never measured here)", result.unmeasured) : "",
                 shares_summary(result.shares));
    }
    if (!picks.empty())
      fmt::print("\nDispatch model (what dispatch runs from {}) on {}\n"
                 "problems: {} of the exhaustive best\n",
                 options->store ? *options->store + " less the problem's own entry" : "a store of every other problem's exhaustive best",
                 picks.size(), shares_summary(picks));
    else
      fmt::print("\nDispatch model: on no problem (the caches name no device, or no problem's pick from the others'\n"
                 "exhaustive bests is one of its candidates)\n");
    if (options->per_problem) {
      const Columns<std::size_t> columns = per_problem_columns(problems, strategies, budgets, cells);
      fmt::print("\n{}\n", columns.markdown_header());
      for (std::size_t p = 0; p < problems.size(); ++p) fmt::print("{}\n", columns.markdown_line(p));
    }
    if (const int worst = options->worst; worst > 0) {
      const Cell& cell = cells.at({0, 0});
      std::vector<std::size_t> order(problems.size());
      for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cell.worst[a] < cell.worst[b]; });
      const Columns<std::size_t> columns{
          {"worst", "worst seed", 0, Style::Share, kTable, [&](std::size_t p) -> Value { return cell.worst[p]; }},
          {"problem", "problem", 0, Style::Text, kTable, [&](std::size_t p) -> Value { return problems[p].key; }},
          {"best_config", "the exhaustive best's config", 0, Style::Text, kTable,
           [&](std::size_t p) -> Value { return kgemm::to_string(problems[p].best_config); }},
      };
      fmt::print("\n{} at budget {}, the worst problems:\n\n{}\n", kgemm::to_string(strategies[0]), budgets[0],
                 columns.markdown_header());
      for (int i = 0; i < worst && i < int(order.size()); ++i) fmt::print("{}\n", columns.markdown_line(order[std::size_t(i)]));
    }
    return 0;
  });
}
