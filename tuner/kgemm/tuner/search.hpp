#pragma once
// Search strategies over a list of candidate configs, independent of what measuring one costs:
// the autotuner plugs in real kernel runs, tests plug in made-up speeds (including a fast but
// wrong config, which must never win), and --replay plugs in a cache of earlier measurements.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kgemm/config.hpp"

namespace kgemm {

enum class Strategy {
  Exhaustive,  // every candidate, in order
  Random,      // candidates in random order, until the budget runs out
  Climb,       // from the start configs, step by step beside the fastest measured config
               // (one parameter one step away; search() below)
};
Strategy parse_strategy(const std::string& text);
const char* to_string(Strategy strategy);
// The strategies that search within a budget (all but exhaustive), comma-separated.
std::string searching_strategies();

// Per problem: at most `evaluations` candidates and `seconds` of search; 0 = no limit.
struct Budget {
  int evaluations = 0;
  double seconds = 0;
};
// "40" (evaluations) or "30s" (seconds); throws InvalidArgument otherwise.
Budget parse_budget(const std::string& text);

struct Measurement {
  bool correct = false;  // checked against the fp64 reference; incorrect ones never win
  double gflops = 0;
  std::string note;      // why it was rejected
};

struct Evaluated {
  Config config;
  Measurement measurement;
};

struct SearchOutcome {
  Config best;
  double best_gflops = 0;  // 0 when no candidate was correct
  std::vector<Evaluated> log;  // in evaluation order
  int rejected() const;
};

using Evaluate = std::function<Measurement(const Config&)>;
// Called after each evaluation with the outcome so far and the number of candidates.
using OnProgress = std::function<void(const SearchOutcome&, std::size_t candidates)>;

// A config's rate on the problem predicted from another config's rate measured there (`from` at
// `from_gflops`, GFLOP/s): how a climb orders the neighbours it measures (search_space.hpp's
// model_prediction: the dispatch model's).
using Predict = std::function<double(const Config& from, double from_gflops, const Config& to)>;

// Searches `candidates` (the legal configs for one problem). Climb measures the `starts` that
// are candidates (a random one if none is), then steps beside the fastest config measured: the
// unmeasured neighbour `predict` ranks fastest from it (random order among equal predictions,
// and without one; from a tensor-core config its neighbour with a slab buffer more first and
// those with a shallower pipeline last, where measurements overrule the model; before
// those, a neighbour of another block the model predicts much faster: search.cpp,
// in_climbing_order), or, where all of that config's neighbours are measured, the next fastest
// config's; a random unmeasured candidate where every measured config's are. With `step_after`
// (the space default and the store's configs: the starts most likely near the best), it takes
// one such step after the first `step_after` starts, before it measures the others (the seeds),
// unless the seed it would measure first is of a kernel family measured by then and `predict`
// ranks it faster than both the fastest config and that step (search.cpp, seeds_before_step).
// The starts past the first `step_after` (past the first where none) are measured in the order
// `predict` ranks them before the first of them, each from the configs of its kernel family
// measured by then (from the first start where none is), the given order among equal
// predictions.
// `seed` makes Random and Climb repeatable.
SearchOutcome search(const std::vector<Config>& candidates, const std::vector<Config>& starts, Strategy strategy,
                     const Budget& budget, std::uint64_t seed, const Evaluate& evaluate,
                     const OnProgress& on_progress = {}, const Predict& predict = {}, std::size_t step_after = 0);

}  // namespace kgemm
