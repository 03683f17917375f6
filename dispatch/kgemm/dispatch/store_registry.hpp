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
// ~/.local/share/kgemm), the directories add_store_directory added, <program's prefix>/share/kgemm/configs (an installed program's prefix;
// in a build tree, a link to the source tree's configs/), and the install prefix's
// share/kgemm/configs.
std::vector<std::string> store_search_path();
// Adds `dir` to store_search_path(), after the user's data directory: where a program that embeds
// kgemm ships stores of its own (the Python package's configs/). Takes effect for the spaces whose
// store is not read yet: call it before the first product.
void add_store_directory(const std::string& dir);
// The user's data directory (empty when neither $XDG_DATA_HOME nor $HOME is set).
std::string user_store_directory();

// The store file for `device`: $KGEMM_CONFIG_FILE when set (whatever its name), else the first
// existing <dir>/<device_slug>.yaml over store_search_path(); empty when there is none.
std::string find_store_file(const DeviceInfo& device);

// Why a store serves a device (find_serving_store).
enum class StoreMatch {
  Exact,     // tuned for this device
  SameArch,  // no store of this device: the nearest of another device of its space and architecture
  Named,     // $KGEMM_CONFIG_FILE, whichever device of the space it was tuned for
  None,      // the space defaults
  Sibling,   // beside this device's own store: the nearest of another device of its space and
             // architecture (find_sibling_store; the tuner's starts, never dispatch)
};
// "exact", "same architecture", "named", "none", "sibling".
const char* to_string(StoreMatch match);

// The store that serves a device, read leniently (its bad entries left out, and listed in
// `refused`), and why.
struct ServingStore {
  StoreMatch match = StoreMatch::None;
  std::string path;                  // empty for None
  std::optional<ConfigStore> store;  // absent for None
  std::vector<std::string> refused;  // the store's entries left out on load, with their reasons
  // Whether the store was tuned on this very device (same_device): its header's facts are this
  // device's and its entries' failures its own; else they are another device's, re-checked here.
  bool own = false;
};

// The store dispatch reads for `device`, as CLBlast's database falls back from the device to its
// architecture to defaults:
//   1. $KGEMM_CONFIG_FILE when set (Named): used whichever device of the space it was tuned for
//      (a warning says so when it is not this one); unreadable, it is warned about and nothing
//      serves; of another space, it is warned about and the search below runs.
//   2. The first <dir>/<device_slug>.yaml over store_search_path() that holds this device's
//      configs (Exact).
//   3. Else, of every *.yaml over the search path (a file name once: the first directory's),
//      the store nearest the device among those of its space and architecture (DeviceInfo::arch:
//      a GPU's compute capability, a CPU's machine and widest SIMD): one of this device under
//      another name (Exact), then one of the same model, then the nearest thread or SM count
//      (by ratio), then the larger count, then search order (SameArch). Files that do not load
//      or are of other architectures are passed over silently: they belong to other devices.
//      Stores of another architecture never serve: their configs were chosen for other vector
//      widths or instructions and may run slower than the space defaults.
//   4. None.
// What was wrong on the way (a named or own store that did not load, a file named for this device
// that holds another's) is appended to `warnings`, one line each.
ServingStore find_serving_store(const DeviceInfo& device, std::vector<std::string>& warnings);
// The store nearest `device` among those of other devices of its space and architecture (step 3
// above with this device's own stores passed over; Sibling), or None: where a device has a store
// of its own, the tuner's searches also start from this one's configs, which hold shapes its own
// may lack (tuner/tune_problem.hpp, KnownConfigs). Dispatch never reads it.
ServingStore find_sibling_store(const DeviceInfo& device);
// One line for messages and tools: the path and why it serves, or that none does; and where some
// of its entries are of an older kernel generation than the code's, generation_note's words.
std::string describe(const ServingStore& serving, const DeviceInfo& device);
// "generation N, code is M: re-check with autotune --verify-store" for a store whose oldest
// entry is of an older kernel generation (kernel_generation.hpp); empty otherwise.
std::string generation_note(const ConfigStore& store);

// Where autotune writes `device`'s store unless told: the store find_store_file names when it
// may be rewritten (not read_only_store, in a writable directory), else (no store yet) the
// program's or install prefix's configs directory when writable, else the user's data directory
// (an installed, read-only prefix).
std::string writable_store_file(const DeviceInfo& device);

// Tuning on first use ($KGEMM_TUNE): tunes a problem the device's own store lacks and stores the
// winner, returning its entry, or nothing when no config computed it right. The search lives in
// the tuner (tuner/: enable_tuning_on_first_use registers one per space when $KGEMM_TUNE asks),
// so a program that never links it never tunes.
using FirstUseTuner = std::function<std::optional<TunedEntry>(const Problem&)>;
// Sets (or, with an empty function, clears) the tuner of the space named `space` (ExecSpace::name()).
void set_first_use_tuner(const std::string& space, FirstUseTuner tuner);

// The config a problem gets and why: its own entry, the model's pick among the store's configs
// (dispatch_model.hpp), or the space default. `prediction` is the source entry's, when one was used.
struct DispatchChoice {
  enum class Source { Exact, Model, Default, FirstUse };
  Config config;
  Source source = Source::Default;
  std::optional<RatePrediction> prediction;
};
// "exact entry", "model", "space default", "tuned on first use".
const char* to_string(DispatchChoice::Source source);

// The dispatch model's choice for `problem` among `store`'s configs, fitted with `device`'s
// facts (rank_stored_configs): the first that `runs` lets run, asked in rank order (so it may
// report the ones it turns down); the space default (DispatchChoice::Source::Default,
// `fallback()`) where none runs. Dispatch asks legality on the device at hand; `kgemm-run
// --why-store`, on a store of another machine, lets every config run.
DispatchChoice choose_stored(const ConfigStore& store, const Problem& problem, const DeviceInfo& device,
                             const std::function<Config()>& fallback,
                             const std::function<bool(const RatePrediction&)>& runs);

// One device's tuned configs and the config each problem got.
class TunedConfigs {
 public:
  // Why `config` cannot run `problem` on the device (empty when it can).
  using Check = std::function<std::string(const Problem&, const Config&)>;

  // Reads the store find_serving_store picks, reporting its warnings and the store's bad
  // entries on stderr, one line each; no store at all is the untuned case, and silent. Another
  // device's store is ranked with `device`'s facts (dispatch_model.hpp), and its entries that
  // cannot run here are passed over quietly: they are no fault of the store.
  // `first_use`: the space's tuner on first use (set_first_use_tuner), if any.
  TunedConfigs(const DeviceInfo& device, FirstUseTuner first_use = {});

  // The store in use and why.
  const ServingStore& serving() const { return serving_; }

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
  // With a tuner on first use, a problem the device's own store has no entry for is tuned (with
  // fp32 accumulation, as stores are) on its first call, and its winner runs wherever `check`
  // lets it; once per problem, whatever the layout.
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

  // The first-use tuner's entry for `problem`, tuning it once when the own store lacks it;
  // null when there is no tuner or it found no correct config. With mutex_ held.
  const TunedEntry* tuned_on_first_use(const Problem& problem);

  ServingStore serving_;
  FirstUseTuner first_use_;
  std::map<Problem, std::optional<TunedEntry>, StoreOrder> first_use_entries_;  // tuned by first_use_ (or tried)
  DeviceInfo here_;  // the facts the model fits problems with: the store's own where it is this device's
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
