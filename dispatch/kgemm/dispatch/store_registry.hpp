#pragma once
// Where each execution space's tuned configs come from, and the choice among them: a device's
// store is found and read once per process, and each problem's config is decided once, so a
// dispatch after the first costs a map lookup.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kgemm/dtype.hpp"
#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/dispatch/dispatch_model.hpp"
#include "kgemm/operand_layout.hpp"

namespace kgemm {

// Where stores are looked for, first to last: the directories of $KGEMM_CONFIG_PATH
// (colon-separated), the user's data directory ($XDG_DATA_HOME/kgemm, else
// ~/.local/share/kgemm), <program's prefix>/share/kgemm/configs (an installed program's prefix;
// in a build tree, a link to the source tree's configs/), and the install prefix's
// share/kgemm/configs.
std::vector<std::string> store_search_path();
// The user's data directory (empty when neither $XDG_DATA_HOME nor $HOME is set).
std::string user_store_directory();

// The store file for `device`: $KGEMM_CONFIG_FILE when set (whatever its name), else the first
// existing <dir>/<device_slug>.yaml over store_search_path(); empty when there is none.
std::string find_store_file(const DeviceInfo& device);

// Where autotune writes `device`'s store unless told: the store find_store_file names when it
// may be rewritten (not read_only_store, in a writable directory), else (no store yet) the
// program's or install prefix's configs directory when writable, else the user's data directory
// (an installed, read-only prefix).
std::string writable_store_file(const DeviceInfo& device);

// The config a problem gets and why: its own entry, the model's pick among the store's configs
// (dispatch_model.hpp), or the space default. `prediction` is the source entry's, when one was used.
struct DispatchChoice {
  enum class Source { Exact, Model, Default };
  Config config;
  Source source = Source::Default;
  std::optional<RatePrediction> prediction;
};
// "exact entry", "model", "space default".
const char* to_string(DispatchChoice::Source source);

// One device's tuned configs and the config each problem got.
class TunedConfigs {
 public:
  // Why `config` cannot run `problem` on the device (empty when it can).
  using Check = std::function<std::string(const Problem&, const Config&)>;

  // Reads the store find_store_file names. A missing, malformed or other device's file is
  // reported in one line on stderr and ignored; no file in the search path is the untuned case,
  // and silent.
  explicit TunedConfigs(const DeviceInfo& device);

  // The config that runs when no entry can; asked for only when a problem is first seen.
  using Fallback = std::function<Config()>;

  // The exact entry's config, else the config the dispatch model predicts fastest on `problem`
  // (rank_stored_configs), else `fallback()`, for a call whose operands lie as `layout` says,
  // accumulating in `accum`. Entries that `check` rejects for the call are passed over; each
  // such entry is warned about once where `blame` rejects it too (it cannot run the problem
  // however the operands lie: the entry is at fault, not the call). Choices are remembered per
  // accumulation and layout: what is legal differs (tensor cores: fp32 only; staging in 16-byte
  // runs: aligned rows only).
  Config select(const Problem& problem, const OperandLayout& layout, Accum accum, const Fallback& fallback,
                const Check& check, const Check& blame);
  // The same on contiguous operands, every rejection blamed on the entry.
  Config select(const Problem& problem, Accum accum, const Fallback& fallback, const Check& check);
  // The same choice with its reasons (the predicted rate and its factors), worked out afresh.
  DispatchChoice explain(const Problem& problem, const Fallback& fallback, const Check& check, const Check& blame);
  DispatchChoice explain(const Problem& problem, const Fallback& fallback, const Check& check) {
    return explain(problem, fallback, check, check);
  }

 private:
  struct Call {
    Accum accum;
    OperandLayout layout;
    Problem problem;
  };
  struct Order {
    bool operator()(const Call& x, const Call& y) const {
      if (x.accum != y.accum) return x.accum < y.accum;
      if (!(x.layout == y.layout)) return x.layout < y.layout;
      return StoreOrder()(x.problem, y.problem);
    }
  };
  // The choice, with mutex_ held.
  DispatchChoice choose(const Problem& problem, const Fallback& fallback, const Check& check, const Check& blame);

  std::string path_;
  std::optional<ConfigStore> store_;
  std::mutex mutex_;
  std::map<Call, Config, Order> chosen_;
  std::set<Problem, StoreOrder> warned_;  // entries already reported illegal
};

// The tuned configs of the space named `space` (ExecSpace::name()); `device` describes it when
// they are first loaded.
std::shared_ptr<TunedConfigs> tuned_configs(const std::string& space, const std::function<DeviceInfo()>& device);

// Forgets every loaded store, so the next dispatch finds and reads them again (tests change
// $KGEMM_CONFIG_FILE between cases).
void reload_config_stores();

}  // namespace kgemm
