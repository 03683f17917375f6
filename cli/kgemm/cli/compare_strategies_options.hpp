#pragma once
// kgemm-compare-strategies' command line, every option declared once in
// compare_strategies_options.cpp with its help, default and checks.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/dtype.hpp"
#include "kgemm/tuner/search.hpp"

namespace kgemm::cli {

// Where the replayed searches start besides the space's seeds.
enum class Starts { Store, Seeds, Recorded };
// What a replayed search reads of a config and what the config it keeps is worth (--judge).
enum class Judge { Kept, Best };
// Which seeds a replayed search starts from (--start-seeds): those autotune gives the cache's
// device today, or those the measuring run recorded.
enum class StartSeeds { Today, Recorded };

struct CompareStrategiesOptions {
  std::vector<std::string> caches;
  std::vector<int> budgets{4, 8, 20, 40};
  int seeds = 20;
  std::vector<Strategy> strategies;  // default: every one that searches within a budget
  Starts starts = Starts::Store;
  Judge judge = Judge::Kept;
  StartSeeds start_seeds = StartSeeds::Today;
  std::optional<std::string> store;  // --store: the store --starts store (and the dispatch check) take
  std::optional<std::string> sibling_store;  // --sibling-store: another device's store the starts also take
  std::vector<std::string> again;     // --again: exhaustive caches of the same problems measured again
  std::map<DType, std::vector<Config>> seed_configs;  // --f32-seeds, --f16-seeds (before --start-seeds)
  bool per_problem = false;
  int worst = 0;
};

// The options of `words` (argv less the program name); nullopt when --help printed the help.
// Throws InvalidArgument naming the option and why.
std::optional<CompareStrategiesOptions> parse_compare_strategies(const std::vector<std::string>& words);

}  // namespace kgemm::cli
