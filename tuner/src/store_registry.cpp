#include "kgemm/tuner/store_registry.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <vector>

namespace kgemm {

namespace {

// One line, one write: warnings from several threads do not interleave.
void warn(const std::string& what) { std::cerr << ("kgemm: warning: " + what + "\n") << std::flush; }

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, std::shared_ptr<TunedConfigs>>& registry() {
  static std::map<std::string, std::shared_ptr<TunedConfigs>> by_space;
  return by_space;
}

}  // namespace

std::string find_store_file(const DeviceInfo& device) {
  if (const char* file = std::getenv("KGEMM_CONFIG_FILE"); file && *file) return file;
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("KGEMM_CONFIG_PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty()) dirs.push_back(dir);
  }
  dirs.push_back(KGEMM_SOURCE_CONFIG_DIR);
  const std::string name = device_slug(device) + ".yaml";
  for (const std::string& dir : dirs) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error)) return candidate.string();
  }
  return "";
}

TunedConfigs::TunedConfigs(const DeviceInfo& device) : path_(find_store_file(device)) {
  if (path_.empty()) return;
  try {
    std::vector<std::string> refused;
    ConfigStore store = ConfigStore::load(path_, &refused);
    if (!same_device(store.header.device, device)) {
      warn("ignoring tuned configs in " + path_ + ": they were tuned for " + to_string(store.header.device) +
           ", this is " + to_string(device));
      return;
    }
    // A bad entry costs its own shape only: the others stay tuned.
    for (const std::string& why : refused) warn(std::string("ignoring a tuned entry: ") + why);
    store_ = std::move(store);
  } catch (const std::exception& e) {
    warn(std::string("ignoring tuned configs: ") + e.what());
  }
}

Config TunedConfigs::select(const Problem& problem, Accum accum, const Fallback& fallback, const Check& check) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto known = chosen_.find({accum, problem});
  if (known != chosen_.end()) return known->second;
  const auto legal = [&](const TunedEntry& entry) {
    if (rejected_.count({accum, entry.problem})) return false;
    const std::string why = check(problem, entry.config);
    if (why.empty()) return true;
    rejected_.insert({accum, entry.problem});
    if (warned_.insert(entry.problem).second)
      warn("ignoring tuned config " + to_string(entry.config) + " for " + to_string(entry.problem) + " in " +
           path_ + ": " + why);
    return false;
  };
  // The exact entry, when legal, is the nearest (distance 0).
  const TunedEntry* entry = store_ ? store_->nearest(problem, legal) : nullptr;
  return chosen_.emplace(std::make_pair(accum, problem), entry ? entry->config : fallback()).first->second;
}

std::shared_ptr<TunedConfigs> tuned_configs(const std::string& space, const std::function<DeviceInfo()>& device) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::shared_ptr<TunedConfigs>& configs = registry()[space];
  if (!configs) configs = std::make_shared<TunedConfigs>(device());
  return configs;
}

void reload_config_stores() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().clear();
}

}  // namespace kgemm
