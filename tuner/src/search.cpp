#include "kgemm/tuner/search.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>

#include "kgemm/text_number.hpp"

namespace kgemm {

Strategy parse_strategy(const std::string& text) {
  if (text == "exhaustive") return Strategy::Exhaustive;
  if (text == "random") return Strategy::Random;
  if (text == "climb") return Strategy::Climb;
  throw std::invalid_argument("kgemm: unknown strategy '" + text + "' (expected exhaustive, random or climb)");
}

const char* to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::Exhaustive: return "exhaustive";
    case Strategy::Random: return "random";
    case Strategy::Climb: return "climb";
  }
  return "?";
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
    throw std::invalid_argument("kgemm: bad budget '" + text + "' (expected evaluations, a whole number from 1 to " +
                                std::to_string(INT_MAX) + ", e.g. 40, or seconds, more than 0 and at most " +
                                std::to_string(int(kMaxSeconds)) + " (a year), e.g. 30s)");
  return budget;
}

int SearchOutcome::rejected() const {
  return int(std::count_if(log.begin(), log.end(), [](const Evaluated& e) { return !e.measurement.correct; }));
}

namespace {

// The parameters Climb steps along; the team size is not one of them on its own (on GPUs it
// follows from the tiles), but configs differing only in team are neighbours too.
using Coordinates = std::array<int, 7>;  // ranks of mb, nb, kb, the micro-tile, ks, bb and slab buffers

class Neighbourhood {
 public:
  explicit Neighbourhood(const std::vector<Config>& candidates) : candidates_(candidates) {
    for (const Config& c : candidates) {
      values_[0].insert(c.mb), values_[1].insert(c.nb), values_[2].insert(c.kb);
      values_[3].insert(c.tm * 1000 + c.tn), values_[4].insert(c.ks), values_[5].insert(c.bb);
      values_[6].insert(c.slab_buffers);
    }
  }
  // Indices of the candidates one step away from candidates_[i].
  std::vector<std::size_t> of(std::size_t i) const {
    const Coordinates here = coordinates(candidates_[i]);
    std::vector<std::size_t> near;
    for (std::size_t j = 0; j < candidates_.size(); ++j) {
      const Coordinates there = coordinates(candidates_[j]);
      int steps = 0;
      for (std::size_t p = 0; p < here.size(); ++p) steps += std::abs(here[p] - there[p]);
      if (steps == 1 || (steps == 0 && j != i)) near.push_back(j);
    }
    return near;
  }

 private:
  int rank(int p, int value) const { return int(std::distance(values_[p].begin(), values_[p].find(value))); }
  Coordinates coordinates(const Config& c) const {
    return {rank(0, c.mb), rank(1, c.nb), rank(2, c.kb), rank(3, c.tm * 1000 + c.tn),
            rank(4, c.ks), rank(5, c.bb), rank(6, c.slab_buffers)};
  }
  const std::vector<Config>& candidates_;
  std::array<std::set<int>, 7> values_;
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

  // Measures candidate i once; its GFLOP/s, 0 when it was wrong.
  double measure(std::size_t i) {
    if (visited(i)) return measured_[i];
    const Measurement m = evaluate_(candidates_[i]);
    measured_[i] = m.correct ? m.gflops : 0.0;
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
  std::chrono::steady_clock::time_point start_;
  SearchOutcome outcome_;
};

void climb(Searcher& searcher, const std::vector<Config>& candidates, const std::vector<std::size_t>& starts,
           std::mt19937_64& rng) {
  const Neighbourhood neighbourhood(candidates);
  std::vector<std::size_t> restarts(candidates.size());
  for (std::size_t i = 0; i < restarts.size(); ++i) restarts[i] = i;
  std::shuffle(restarts.begin(), restarts.end(), rng);

  std::size_t here = starts.front();
  double here_gflops = searcher.measure(here);
  for (std::size_t i : starts) {
    if (searcher.exhausted()) return;
    const double gflops = searcher.measure(i);
    if (gflops > here_gflops) here = i, here_gflops = gflops;
  }
  while (!searcher.exhausted()) {
    std::vector<std::size_t> near = neighbourhood.of(here);
    std::shuffle(near.begin(), near.end(), rng);
    std::size_t best = here;
    double best_gflops = here_gflops;
    for (std::size_t j : near) {
      if (searcher.exhausted()) return;
      const double gflops = searcher.measure(j);
      if (gflops > best_gflops) best = j, best_gflops = gflops;
    }
    if (best != here) {
      here = best, here_gflops = best_gflops;
      continue;
    }
    // A local optimum: start again from a candidate not yet measured.
    while (!restarts.empty() && searcher.visited(restarts.back())) restarts.pop_back();
    if (restarts.empty()) return;
    here = restarts.back();
    here_gflops = searcher.measure(here);
  }
}

}  // namespace

SearchOutcome search(const std::vector<Config>& candidates, const std::vector<Config>& starts, Strategy strategy,
                     const Budget& budget, std::uint64_t seed, const Evaluate& evaluate,
                     const OnProgress& on_progress) {
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
      std::vector<std::size_t> at_starts;
      for (const Config& start : starts) {
        const auto at = std::find(candidates.begin(), candidates.end(), start);
        if (at != candidates.end()) at_starts.push_back(std::size_t(at - candidates.begin()));
      }
      if (at_starts.empty())
        at_starts.push_back(std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng));
      climb(searcher, candidates, at_starts, rng);
      break;
    }
  }
  return searcher.outcome();
}

}  // namespace kgemm
