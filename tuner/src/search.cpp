#include "kgemm/tuner/search.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string_view>
#include <utility>

#include "kgemm/spaces/error.hpp"
#include "kgemm/text_number.hpp"

namespace kgemm {

Strategy parse_strategy(const std::string& text) {
  if (text == "exhaustive") return Strategy::Exhaustive;
  if (text == "random") return Strategy::Random;
  if (text == "climb") return Strategy::Climb;
  throw InvalidArgument("unknown strategy '" + text + "' (expected exhaustive, random or climb)");
}

const char* to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::Exhaustive: return "exhaustive";
    case Strategy::Random: return "random";
    case Strategy::Climb: return "climb";
  }
  return "?";
}

std::string searching_strategies() {
  std::string names;
  for (Strategy s : {Strategy::Random, Strategy::Climb}) names += std::string(names.empty() ? "" : ",") + to_string(s);
  return names;
}

Budget parse_budget(const std::string& text) {
  // Seconds up to a year; evaluations a whole count. nan, inf, 0 and fractions of an
  // evaluation would otherwise read as "no limit".
  constexpr double kMaxSeconds = 365.0 * 24 * 3600;
  Budget budget;
  const bool seconds = !text.empty() && text.back() == 's';
  const std::string_view number = std::string_view(text).substr(0, text.size() - (seconds ? 1 : 0));
  if (seconds) {
    const auto value = finite_at_least(number, 0.0);
    if (value && *value > 0 && *value <= kMaxSeconds) budget.seconds = *value;
  } else if (const auto value = integer_in(number, 1, INT_MAX)) {
    budget.evaluations = *value;
  }
  if (budget.seconds <= 0 && budget.evaluations <= 0)
    throw InvalidArgument("bad budget '" + text + "' (expected evaluations, a whole number from 1 to " +
                          std::to_string(INT_MAX) + ", e.g. 40, or seconds, more than 0 and at most " +
                          std::to_string(int(kMaxSeconds)) + " (a year), e.g. 30s)");
  return budget;
}

int SearchOutcome::rejected() const {
  return int(std::count_if(log.begin(), log.end(), [](const Evaluated& e) { return !e.measurement.correct; }));
}

namespace {

// The parameters Climb steps along; the team size is not one of them on its own (on GPUs it
// follows from the tiles), but configs differing only in team (or kernel family) are neighbours too.
// The micro-tile's rows and columns are two: doubling a warp tile's rows is one step whatever its
// columns (a 32 x 64 warp tile's 64 x 64 neighbour, the best on a K = 147 layer where the 64 x 32
// one between them in a single ordering is slower).
using Coordinates = std::array<int, 8>;  // ranks of mb, nb, kb, tm, tn, ks, bb and slab buffers

class Neighbourhood {
 public:
  explicit Neighbourhood(const std::vector<Config>& candidates) : candidates_(candidates) {
    for (const Config& c : candidates) {
      values_[0].insert(c.mb), values_[1].insert(c.nb), values_[2].insert(c.kb);
      values_[3].insert(c.tm), values_[4].insert(c.tn), values_[5].insert(c.ks), values_[6].insert(c.bb);
      values_[7].insert(c.slab_buffers);
    }
    for (const Config& c : candidates) at_.push_back(coordinates(c));
  }
  // Indices of the candidates one step away from candidates_[i].
  std::vector<std::size_t> of(std::size_t i) const {
    std::vector<std::size_t> near;
    for (std::size_t j = 0; j < candidates_.size(); ++j) {
      const int steps = steps_between(at_[i], at_[j]);
      if (steps == 1 || (steps == 0 && j != i)) near.push_back(j);
    }
    return near;
  }
  // The candidate of `c`'s kernel family (family_suffix) fewest steps from it (the first such):
  // where a search starts from a seed that is no candidate of the problem (a block larger than
  // it, a split it cannot take). None when no candidate is of its family.
  std::optional<std::size_t> nearest(const Config& c) const {
    const Coordinates here = coordinates(c);
    std::optional<std::size_t> best;
    int fewest = 0;
    for (std::size_t j = 0; j < candidates_.size(); ++j) {
      if (std::string_view(family_suffix(candidates_[j])) != family_suffix(c)) continue;
      const int steps = steps_between(here, at_[j]);
      if (!best || steps < fewest) best = j, fewest = steps;
    }
    return best;
  }

 private:
  // A value's rank among the candidates' values; one that none has ranks where it would go.
  int rank(int p, int value) const { return int(std::distance(values_[p].begin(), values_[p].lower_bound(value))); }
  Coordinates coordinates(const Config& c) const {
    return {rank(0, c.mb), rank(1, c.nb), rank(2, c.kb), rank(3, c.tm), rank(4, c.tn),
            rank(5, c.ks), rank(6, c.bb), rank(7, c.slab_buffers)};
  }
  static int steps_between(const Coordinates& a, const Coordinates& b) {
    int steps = 0;
    for (std::size_t p = 0; p < a.size(); ++p) steps += std::abs(a[p] - b[p]);
    return steps;
  }
  const std::vector<Config>& candidates_;
  std::array<std::set<int>, 8> values_;
  std::vector<Coordinates> at_;
};

class Searcher {
 public:
  Searcher(const std::vector<Config>& candidates, const Budget& budget, const Evaluate& evaluate,
           const OnProgress& on_progress)
      : candidates_(candidates), budget_(budget), evaluate_(evaluate), on_progress_(on_progress),
        measured_(candidates.size(), -1.0), start_(std::chrono::steady_clock::now()) {}

  bool exhausted() const {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return (budget_.evaluations > 0 && int(outcome_.log.size()) >= budget_.evaluations) ||
           (budget_.seconds > 0 && elapsed >= budget_.seconds) || outcome_.log.size() == candidates_.size();
  }
  bool visited(std::size_t i) const { return measured_[i] >= 0; }
  double rate(std::size_t i) const { return measured_[i]; }
  // The candidates measured so far, in the order measured.
  const std::vector<std::size_t>& measured_in_order() const { return visited_; }
  // The candidates measured so far, fastest first (in the order measured among equal rates).
  std::vector<std::size_t> visited_fastest_first() const {
    std::vector<std::size_t> order = visited_;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return measured_[a] > measured_[b]; });
    return order;
  }

  // Measures candidate i once; its GFLOP/s, 0 when it was wrong.
  double measure(std::size_t i) {
    if (visited(i)) return measured_[i];
    const Measurement m = evaluate_(candidates_[i]);
    measured_[i] = m.correct ? m.gflops : 0.0;
    visited_.push_back(i);
    outcome_.log.push_back({candidates_[i], m});
    if (m.correct && m.gflops > outcome_.best_gflops) {
      outcome_.best_gflops = m.gflops;
      outcome_.best = candidates_[i];
    }
    if (on_progress_) on_progress_(outcome_, candidates_.size());
    return measured_[i];
  }

  SearchOutcome outcome() const { return outcome_; }

 private:
  const std::vector<Config>& candidates_;
  Budget budget_;
  const Evaluate& evaluate_;
  const OnProgress& on_progress_;
  std::vector<double> measured_;
  std::vector<std::size_t> visited_;  // in the order measured
  std::chrono::steady_clock::time_point start_;
  SearchOutcome outcome_;
};

// Sorts the candidate indices [first, last) by `rate_of` each, fastest first, keeping their order
// among equal rates; each rate worked out once.
template <class RateOf>
void sort_by_rate(std::vector<std::size_t>::iterator first, std::vector<std::size_t>::iterator last, const RateOf& rate_of) {
  std::vector<std::pair<double, std::size_t>> ranked;
  for (auto i = first; i != last; ++i) ranked.push_back({rate_of(*i), *i});
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [rate, i] : ranked) *first++ = i;
}

// Whether `to` is `from` with one slab buffer more: its neighbour along the buffers, deeper (0,
// the space's own count, is the fewest a space takes).
bool one_buffer_more(const Config& from, Config to) {
  const int buffers = to.slab_buffers;
  to.slab_buffers = from.slab_buffers;
  return to == from && buffers > from.slab_buffers;
}

// Whether `to` runs a shallower pipeline than `from`: shallower slabs, or `from` with fewer slab
// buffers.
bool shallower_pipeline(const Config& from, const Config& to) { return to.kb < from.kb || one_buffer_more(to, from); }

// How much faster than here the model must predict a neighbour of another block (rows or
// columns) for it to be measured first. Replayed at budget 8 (docs/tuning.md), any factor from
// 1.05 to 1.3 put the same problems within 2 % of the best: on the fp16 K = 147 layers a
// `_tc` block of 128 rows steps to the best, of 192, before its deeper pipeline.
constexpr double kBlockLeap = 1.2;

// Of `near`, ranked fastest first by the model from `from`'s measured rate, the first of another
// block where the model predicts it kBlockLeap times that rate or more.
std::optional<std::size_t> block_leap(const std::vector<std::size_t>& near, const std::vector<Config>& candidates,
                                      const Config& from, double from_gflops, const Predict& predict) {
  const auto other_block = std::find_if(near.begin(), near.end(), [&](std::size_t j) {
    return candidates[j].mb != from.mb || candidates[j].nb != from.nb;
  });
  if (other_block == near.end() || predict(from, from_gflops, candidates[*other_block]) < kBlockLeap * from_gflops)
    return std::nullopt;
  return *other_block;
}

// The neighbours of a place in the order a climb measures them: predicted fastest first (from
// here's measured rate: a larger block where the grid fills the device, a split where it does not),
// in random order among equal predictions (the model does not tell a tile or kernel family from
// another) and where there is no prediction. Twice the measurements overrule the model's depth
// factor, whose fixed cost (slab buffers x kb) prices both deeper slabs and deeper pipelines; the
// overruling is here and not in the model because dispatch ranks stored configs by that cost
// (a fixed cost independent of buffers and slab depth ranked them worse: docs/tuning.md):
// - from a tensor-core config, those with a shallower pipeline (shallower slabs, or fewer slab
//   buffers) come last: the model predicts them faster, but on the fourteen GPU replay caches a
//   slab halved ran faster in 0 - 3 % of pairs (fp32 `_tc` 24 %) and fewer buffers in 22 - 33 %,
//   so a climb's one step there at budget 8 was mostly lost (docs/tuning.md, "a shallower
//   pipeline last");
// - from a tensor-core config, the one with a slab buffer more comes first: the model predicts
//   every deeper pipeline slower, but on the fourteen Hopper caches one buffer more ran faster
//   in 58 % of 78 216 pairs (fp32 `_wg` 73 %, fp16 `_ws` 64 %, fp32 `_tc` 59 %: a stage more
//   hides more of global memory's latency).
// Those rules overrule the model where it prices a slab; a block's rows and columns it prices
// well (how the grid fills the device, how the block pads the shape), so a neighbour of another
// block the model predicts kBlockLeap times here's rate or more comes before them all.
std::vector<std::size_t> in_climbing_order(std::vector<std::size_t> near, const std::vector<Config>& candidates,
                                           std::size_t here, double here_gflops, const Predict& predict,
                                           std::mt19937_64& rng) {
  std::shuffle(near.begin(), near.end(), rng);
  const Config& from = candidates[here];
  std::optional<std::size_t> leap;
  if (predict && here_gflops > 0) {
    sort_by_rate(near.begin(), near.end(), [&](std::size_t j) { return predict(from, here_gflops, candidates[j]); });
    leap = block_leap(near, candidates, from, here_gflops, predict);
  }
  if (from.tensor_cores()) {
    std::stable_partition(near.begin(), near.end(), [&](std::size_t j) { return !shallower_pipeline(from, candidates[j]); });
    std::stable_partition(near.begin(), near.end(), [&](std::size_t j) { return one_buffer_more(from, candidates[j]); });
  }
  if (leap) {
    const auto at = std::find(near.begin(), near.end(), *leap);
    std::rotate(near.begin(), at, at + 1);
  }
  return near;
}

// The model's guess of `to`'s rate on this problem: the fastest it predicts from a config of
// `to`'s kernel family measured so far, or from any config measured where none of that family is.
// The model prices how a block fits the shape (padding, fill, pipeline depth), not what a family's
// instructions make of it, so a guess from another family's rate is one of fit alone: from the
// SIMT default, a tensor-core seed whose grid fills the device less ranks below a SIMT one that
// runs slower. From any config measured, not the default alone: a default split against a short
// K (784 x 512 x 128 on the H200: 0.54 of the best) prices an unmeasured family's seed below the
// SIMT seeds a faster SIMT store config prices (docs/tuning.md). 0 where nothing measured ran.
struct Guesses {
  double own = 0;  // the fastest from a config of `to`'s kernel family
  double any = 0;  // the fastest from any config
};
Guesses guesses(const Searcher& searcher, const std::vector<Config>& candidates, const Config& to, const Predict& predict) {
  Guesses g;
  for (std::size_t i : searcher.measured_in_order()) {
    if (searcher.rate(i) <= 0) continue;
    const double guess = predict(candidates[i], searcher.rate(i), to);
    g.any = std::max(g.any, guess);
    if (candidates[i].family == to.family) g.own = std::max(g.own, guess);
  }
  return g;
}
double predicted_rate(const Searcher& searcher, const std::vector<Config>& candidates, const Config& to,
                      const Predict& predict) {
  const Guesses g = guesses(searcher, candidates, to, predict);
  return g.own > 0 ? g.own : g.any;
}

// Orders the starts from `from` on (the seeds) by predicted_rate, fastest first, the given order
// among equal predictions: a seed whose blocks pad the problem or leave the last wave half empty is
// measured after those that fit it, which at a budget of 4 measures the better-fitting seeds (on
// the Hopper caches, seeds alone: 0.84 and 0.82 of the best where the given order gave 0.83 and
// 0.78); and where the store's configs and a step have measured a family here, its seeds rank by
// that family's rate (replayed at budget 8: 595 of 632 problems within 2 % of the best from a
// store of the others, 543 of 580 from the committed stores, where ranking every seed from the
// default gave 592 and 542; docs/tuning.md).
void order_by_prediction(std::vector<std::size_t>& starts, std::size_t from, const Searcher& searcher,
                         const std::vector<Config>& candidates, const Predict& predict) {
  if (!predict || from >= starts.size()) return;
  sort_by_rate(starts.begin() + std::ptrdiff_t(from), starts.end(),
               [&](std::size_t i) { return predicted_rate(searcher, candidates, candidates[i], predict); });
}

// Where a climb steps next: the unmeasured neighbour (in in_climbing_order) of the fastest
// config measured that has one. From a config faster than its neighbours it goes on beside the
// configs just below it, whose neighbours are more often faster still than those of a start far
// below (a deeper pipeline or a wider warp tile than the second best's; docs/tuning.md). None
// when every measured config's neighbours are measured. `closed`: the configs known to have none
// unmeasured, skipped.
std::optional<std::size_t> beside_the_fastest(const Searcher& searcher, const std::vector<Config>& candidates,
                                              const Neighbourhood& neighbourhood, const Predict& predict,
                                              std::vector<bool>& closed, std::mt19937_64& rng) {
  for (std::size_t i : searcher.visited_fastest_first()) {
    if (closed[i]) continue;
    for (std::size_t j : in_climbing_order(neighbourhood.of(i), candidates, i, searcher.rate(i), predict, rng))
      if (!searcher.visited(j)) return j;
    closed[i] = true;
  }
  return std::nullopt;
}

// Whether the seeds go before the step that follows the store's starts (`step_to`, beside the
// fastest config): where the model, from the configs of its own kernel family measured here,
// predicts the seed order_by_prediction measures first (of starts[from...]) faster than both the
// fastest config so far and the step. With six store configs and a step a budget of 8 measures
// no seed, and a seed of a block no stored shape won (the K = 147 layers' `_tc` block where no
// other conv1 is stored) is then never reached. Only from its own family's rate: from another family's the model prices fit
// alone, and a `_tc` seed it so priced at twice a `_wg` config's rate read 0.8 of it. Replayed at
// budget 8 (docs/tuning.md): from a store of each cache's other problems 607 of 632 against 604
// with the step first, none lost at budgets 4 - 40; from the committed stores 562 of 580 either way.
bool seeds_before_step(const Searcher& searcher, const std::vector<Config>& candidates, const std::vector<std::size_t>& starts,
                       std::size_t from, std::size_t step_to, const Predict& predict) {
  if (!predict) return false;
  std::optional<std::size_t> seed;
  double seed_rate = 0;
  for (std::size_t s = from; s < starts.size(); ++s) {
    if (searcher.visited(starts[s])) continue;
    const double rate = predicted_rate(searcher, candidates, candidates[starts[s]], predict);
    if (!seed || rate > seed_rate) seed = starts[s], seed_rate = rate;
  }
  if (!seed) return false;
  const std::size_t fastest = searcher.visited_fastest_first().front();
  const double here = searcher.rate(fastest);
  return guesses(searcher, candidates, candidates[*seed], predict).own >
         std::max(here, predict(candidates[fastest], here, candidates[step_to]));
}

// Measures the starts (past the first `step_after`, at least the first, in order_by_prediction's
// order from what was measured before them), then steps beside the fastest config measured while
// budget is left, and from a random unmeasured candidate where every measured config's neighbours
// are measured. Where `step_after` of the starts are followed by others, one step beside the
// fastest of those first ones comes before the others are measured, unless seeds_before_step. The
// seeds are ranked once: ranked again after each, a family's first seed measured pulls its
// siblings ahead of the other families' seeds, and with the seeds alone a budget of 4 measures
// fewer families (replayed, 261 of 632 problems within 2 % of the best against 310).
void climb(Searcher& searcher, const std::vector<Config>& candidates, std::vector<std::size_t> starts,
           std::size_t step_after, const Predict& predict, std::mt19937_64& rng) {
  const Neighbourhood neighbourhood(candidates);
  std::vector<bool> closed(candidates.size(), false);
  const auto next_step = [&] { return beside_the_fastest(searcher, candidates, neighbourhood, predict, closed, rng); };
  const auto step = [&] {
    std::optional<std::size_t> next = next_step();
    if (next) searcher.measure(*next);
    return next.has_value();
  };
  for (std::size_t n = 0; n < starts.size(); ++n) {
    if (searcher.exhausted()) return;
    if (n == std::max<std::size_t>(1, step_after)) order_by_prediction(starts, n, searcher, candidates, predict);
    searcher.measure(starts[n]);
    if (n + 1 == step_after && n + 1 != starts.size() && !searcher.exhausted()) {
      const std::optional<std::size_t> next = next_step();
      if (next && !seeds_before_step(searcher, candidates, starts, n + 1, *next, predict)) searcher.measure(*next);
    }
  }
  while (!searcher.exhausted()) {
    if (step()) continue;
    // Every measured config's neighbours measured: a random unmeasured candidate (not exhausted:
    // there is one).
    std::vector<std::size_t> unmeasured;
    for (std::size_t i = 0; i < candidates.size(); ++i)
      if (!searcher.visited(i)) unmeasured.push_back(i);
    searcher.measure(unmeasured[std::uniform_int_distribution<std::size_t>(0, unmeasured.size() - 1)(rng)]);
  }
}

// The candidates a climb starts from: each start, or where it is no candidate the nearest of
// its family; a random candidate when none is left. `first`: how many of them the first `first`
// starts gave (the count becomes that).
std::vector<std::size_t> start_indices(const std::vector<Config>& candidates, const std::vector<Config>& starts,
                                       std::size_t& first, std::mt19937_64& rng) {
  const Neighbourhood neighbourhood(candidates);
  std::vector<std::size_t> at;
  const std::size_t first_starts = first;
  first = 0;
  for (std::size_t n = 0; n < starts.size(); ++n) {
    const Config& start = starts[n];
    if (n == first_starts) first = at.size();
    const auto exact = std::find(candidates.begin(), candidates.end(), start);
    const std::optional<std::size_t> i =
        exact != candidates.end() ? std::optional<std::size_t>(std::size_t(exact - candidates.begin())) : neighbourhood.nearest(start);
    if (i && std::find(at.begin(), at.end(), *i) == at.end()) at.push_back(*i);
  }
  if (first_starts >= starts.size()) first = at.size();
  if (at.empty()) at.push_back(std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng));
  return at;
}

}  // namespace

SearchOutcome search(const std::vector<Config>& candidates, const std::vector<Config>& starts, Strategy strategy,
                     const Budget& budget, std::uint64_t seed, const Evaluate& evaluate,
                     const OnProgress& on_progress, const Predict& predict, std::size_t step_after) {
  if (candidates.empty()) return {};
  Searcher searcher(candidates, budget, evaluate, on_progress);
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> order(candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  switch (strategy) {
    case Strategy::Random:
      std::shuffle(order.begin(), order.end(), rng);
      [[fallthrough]];
    case Strategy::Exhaustive:
      for (std::size_t i : order) {
        if (searcher.exhausted()) break;
        searcher.measure(i);
      }
      break;
    case Strategy::Climb: {
      std::size_t first = step_after;
      const std::vector<std::size_t> at = start_indices(candidates, starts, first, rng);
      climb(searcher, candidates, at, first, predict, rng);
      break;
    }
  }
  return searcher.outcome();
}

}  // namespace kgemm
