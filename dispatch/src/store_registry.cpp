#include "kgemm/dispatch/store_registry.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <vector>

#include "kgemm/launch.hpp"

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

std::string user_store_directory() {
  if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data == '/') return std::string(data) + "/kgemm";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/share/kgemm";
  return "";
}

std::vector<std::string> installed_store_directories() {
  std::vector<std::string> dirs;
  // Beside the program: <prefix>/bin/tool finds <prefix>/share/kgemm/configs wherever the
  // prefix was moved, and a build tree's programs find the link the build puts there (to the
  // source tree's configs/).
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) dirs.push_back((program.parent_path().parent_path() / KGEMM_STORE_SUBDIR).string());
  dirs.push_back(KGEMM_INSTALL_STORE_DIR);
  return dirs;
}

std::vector<std::string> store_search_path() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("KGEMM_CONFIG_PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty()) dirs.push_back(dir);
  }
  if (const std::string user = user_store_directory(); !user.empty()) dirs.push_back(user);
  for (const std::string& dir : installed_store_directories()) dirs.push_back(dir);
  return dirs;
}

std::string find_store_file(const DeviceInfo& device) {
  if (const char* file = std::getenv("KGEMM_CONFIG_FILE"); file && *file) return file;
  const std::string name = device_slug(device) + ".yaml";
  for (const std::string& dir : store_search_path()) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error)) return candidate.string();
  }
  return "";
}

std::string writable_store_file(const DeviceInfo& device) {
  const std::string found = find_store_file(device);
  const auto writable = [](const std::string& path) { return access(path.c_str(), W_OK) == 0; };
  if (!found.empty() && !read_only_store(found) && writable(std::filesystem::path(found).parent_path().string()))
    return found;
  const std::string name = device_slug(device) + ".yaml";
  // A new store goes beside the installed ones when that place may be written; a read-only
  // store found there is never shadowed from it (the user's directory comes first in the path).
  if (found.empty())
    for (const std::string& dir : installed_store_directories()) {
      std::error_code error;
      if (std::filesystem::is_directory(dir, error) && writable(dir)) return dir + "/" + name;
    }
  const std::string user = user_store_directory();
  if (user.empty()) throw StoreError(name, "no writable place for it: set XDG_DATA_HOME or HOME, or name a file");
  return user + "/" + name;
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

const char* to_string(DispatchChoice::Source source) {
  return source == DispatchChoice::Source::Exact ? "exact entry"
         : source == DispatchChoice::Source::Model ? "model"
                                                   : "space default";
}

DispatchChoice TunedConfigs::choose(const Problem& problem, const Fallback& fallback, const Check& check,
                                    const Check& blame) {
  // Best prediction first; legality is asked only until one passes. It is asked for this
  // problem: an entry's config may be legal for one shape and not another (counts past int).
  if (store_)
    for (RatePrediction& candidate : rank_stored_configs(*store_, problem)) {
      const std::string why = check(problem, candidate.config);
      if (why.empty()) {
        const auto source = candidate.exact ? DispatchChoice::Source::Exact : DispatchChoice::Source::Model;
        return {candidate.config, source, std::move(candidate)};
      }
      // A split the model proposed that cannot run here is no fault of the store, nor a config
      // these operands cannot take: passed over quietly.
      if (candidate.config != candidate.source.config || warned_.count(candidate.source.problem)) continue;
      if (const std::string fault = blame(problem, candidate.config); !fault.empty()) {
        warned_.insert(candidate.source.problem);
        warn("ignoring tuned config " + to_string(candidate.config) + " for " + to_string(candidate.source.problem) +
             " in " + path_ + ": " + fault);
      }
    }
  return {fallback(), DispatchChoice::Source::Default, std::nullopt};
}

Config TunedConfigs::select(const Problem& problem, const OperandLayout& layout, Accum accum,
                            const Fallback& fallback, const Check& check, const Check& blame) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Call call{accum, layout, problem};
  const auto known = chosen_.find(call);
  if (known != chosen_.end()) return known->second;
  return chosen_.emplace(call, choose(problem, fallback, check, blame).config).first->second;
}

Config TunedConfigs::select(const Problem& problem, Accum accum, const Fallback& fallback, const Check& check) {
  return select(problem, contiguous_layout(problem), accum, fallback, check, check);
}

DispatchChoice TunedConfigs::explain(const Problem& problem, const Fallback& fallback, const Check& check,
                                     const Check& blame) {
  std::lock_guard<std::mutex> lock(mutex_);
  return choose(problem, fallback, check, blame);
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
