#pragma once
// Re-timing the leaders of an exhaustive measurement cache. The best of some 2000 configs, each
// measured once, is biased upwards: it is the highest of many noisy readings (the winner's
// curse), and a replay judged against it counts a search short for missing one config's lucky
// reading. Measuring the fastest few of each problem again, in rounds that visit each of them
// once, and keeping each one's median over the rounds gives the replays a target measured as
// carefully as the choice between those configs needs.
#include <functional>
#include <optional>
#include <vector>

#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/tuner/measurement_cache.hpp"
#include "kgemm/tuner/search.hpp"

namespace kgemm {

// One exhaustive problem's leaders: its `top` fastest correct configs by recorded rate, fastest
// first (ties in config-string order), and the recorded rate of the fastest config left out (none
// when every correct config is a leader).
struct RetimeLeaders {
  Problem problem;
  std::vector<Evaluated> leaders;
  std::optional<double> first_left_out;  // GFLOP/s
  // A search's choice for the problem, re-timed in the same rounds as the leaders so that it is
  // judged against them on equal terms: single readings taken minutes apart are not.
  std::optional<Config> judged;
  // What the exhaustive search kept (kept_config over its first readings, confirmed at each one's
  // last reading before this re-timing): the reference a search's choice is judged against, as
  // its rate in the same rounds. None where no config was correct.
  std::optional<Config> kept;
};

// Every exhaustively measured problem of the cache, in key order. Throws InvalidArgument when
// `top` < 1 or no problem was measured exhaustively.
std::vector<RetimeLeaders> retime_leaders(const MeasurementCache& cache, int top);

// Sets each problem's `judged` to `store`'s config for exactly that problem, where it has one;
// returns how many it set.
std::size_t judge_store(std::vector<RetimeLeaders>& problems, const ConfigStore& store);

// What one problem's rounds measure: its leaders, then the kept and the judged config where they
// are none of them.
std::vector<Config> retimed_configs(const RetimeLeaders& problem);

// The `count` fastest distinct correct configs of `measured`, fastest first (a config measured
// twice counts at its faster reading).
std::vector<Config> fastest_measured(const std::vector<Evaluated>& measured, std::size_t count);

// What a tuning run keeps of the configs it measured (`measured`, each config's reading as the
// search read it), as tune_problem keeps it: of the `confirm` fastest, the one `confirmed` rates
// fastest (the rate its re-timing gives it); none where no config is correct.
std::optional<Config> kept_config(const std::vector<Evaluated>& measured, int confirm, const std::function<double(const Config&)>& confirmed);

// How many runners-up a tuning run stores beside its winner (TunedEntry::runners_up): two put
// the most problems within 2 % of the best at budget 8 over the Hopper and EPYC exhaustive caches
// (docs/tuning.md, "Runners-up"; one or three: fewer).
inline constexpr std::size_t kStoredRunnersUp = 2;

// The fastest correct config of each block class (same_block_class) other than `winner`'s among
// `measured`, each config at its last reading there, fastest first (ties in measured order), at
// most `count`: the runners-up a tuning run stores.
std::vector<RatedConfig> runners_up(const std::vector<Evaluated>& measured, const Config& winner, std::size_t count);

// How many of the fastest configs its search found a tuning run re-times by default before it
// keeps one (TuneSettings::confirm), and in how many rounds: an odd count, whose median is one of
// the readings.
inline constexpr int kConfirmedConfigs = 3;
inline constexpr int kConfirmRounds = 3;

// `rounds` rounds (>= 1), each measuring every config once, round r starting at config r (mod
// their number) so that none is always measured first or after the same one. Per config, in the
// order given: the median of its rounds' rates, its note saying so and giving their range; a
// config incorrect in any round is incorrect, with that round's note.
std::vector<Evaluated> retime(const std::vector<Config>& configs, int rounds, const Evaluate& measure);

}  // namespace kgemm
