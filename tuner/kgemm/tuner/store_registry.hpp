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

#include "kgemm/tuner/config_store.hpp"

namespace kgemm {

// The store file for `device`: $KGEMM_CONFIG_FILE when set (whatever its name), else the first
// existing <dir>/<device_slug>.yaml over the directories of $KGEMM_CONFIG_PATH (colon-separated)
// and then the source tree's configs/; empty when there is none.
std::string find_store_file(const DeviceInfo& device);

// One device's tuned configs and the config each problem got.
class TunedConfigs {
 public:
  // Why `config` cannot run `problem` on the device (empty when it can).
  using Check = std::function<std::string(const Problem&, const Config&)>;

  // Reads the store find_store_file names. A missing, malformed or other device's file is
  // reported in one line on stderr and ignored; no file in the search path is the untuned case,
  // and silent.
  explicit TunedConfigs(const DeviceInfo& device);

  // The exact entry's config, else the nearest shape's, else `fallback`. Entries that `check`
  // rejects are never used, and warned about once.
  Config select(const Problem& problem, const Config& fallback, const Check& check);

 private:
  std::string path_;
  std::optional<ConfigStore> store_;
  std::mutex mutex_;
  std::map<Problem, Config, StoreOrder> chosen_;
  std::set<Problem, StoreOrder> rejected_;  // entries whose config is illegal here
};

// The tuned configs of the space named `space` (ExecSpace::name()); `device` describes it when
// they are first loaded.
std::shared_ptr<TunedConfigs> tuned_configs(const std::string& space, const std::function<DeviceInfo()>& device);

// Forgets every loaded store, so the next dispatch finds and reads them again (tests change
// $KGEMM_CONFIG_FILE between cases).
void reload_config_stores();

}  // namespace kgemm
