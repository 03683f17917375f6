#pragma once
// autotune's command lines: tuning (and --verify-store), `autotune merge` and `autotune retime`. Every option is
// declared once in autotune_options.cpp, with its help, default and checks; the rules between
// options are checked there too, so a refused command line never starts Kokkos.
#include <optional>
#include <string>
#include <vector>

#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/shard.hpp"
#include "kgemm/tuner/operand_cache.hpp"
#include "kgemm/tuner/retime.hpp"

namespace kgemm::cli {

struct AutotuneOptions {
  std::optional<std::string> space;  // lower case; none: KGEMM_DEFAULT_SPACE (--verify-store: the store's)
  std::string model = "resnet50";    // --shapes
  std::vector<std::string> shapes;   // --shape: instead of the model
  int image = 224;
  std::vector<int> batches{1};
  std::vector<std::string> dtypes{"fp32"};
  bool batched = false, shared_b = false;
  Strategy strategy = Strategy::Climb;
  Budget budget{40, 0};
  std::optional<double> time_limit;   // seconds
  std::string time_limit_text;        // as given, for messages
  std::optional<std::string> out;     // none: the device's store (store_registry.hpp)
  std::optional<double> lock_timeout;  // seconds; none: no limit
  bool resume = false;
  std::optional<Shard> shard;
  std::optional<std::string> claim;
  int reps = 7;
  OperandCache operands = OperandCache::Warm;
  int confirm = kConfirmedConfigs;
  int seed = 1;
  std::string cache, replay;          // empty: none
  std::optional<std::string> verify_store;
};

struct MergeOptions {
  std::string out;
  std::optional<double> lock_timeout;
  std::vector<std::string> inputs;
};

struct RetimeOptions {
  std::string cache;
  std::optional<std::string> store;  // its configs for the cache's problems re-timed beside the leaders
  int top = 16;
  int rounds = 5;
  int reps = 7;
  OperandCache operands = OperandCache::Warm;
  int seed = 1;
};

// The options of `words` (argv less the program name and Kokkos' flags); nullopt when --help
// printed the help. Throws InvalidArgument naming the option and why.
std::optional<AutotuneOptions> parse_autotune(const std::vector<std::string>& words);
// `autotune merge`'s, `words` being those after "merge".
std::optional<MergeOptions> parse_merge(const std::vector<std::string>& words);
// `autotune retime`'s, `words` being those after "retime".
std::optional<RetimeOptions> parse_retime(const std::vector<std::string>& words);

}  // namespace kgemm::cli
