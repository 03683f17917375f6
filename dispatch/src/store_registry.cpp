#include "kgemm/dispatch/store_registry.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <vector>

#include "kgemm/dispatch/warnings.hpp"
#include "kgemm/launch.hpp"

namespace kgemm {

namespace {

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

namespace {
std::mutex& added_directories_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<std::string>& added_directories() {
  static std::vector<std::string> dirs;
  return dirs;
}
}  // namespace

void add_store_directory(const std::string& dir) {
  std::lock_guard<std::mutex> lock(added_directories_mutex());
  added_directories().push_back(dir);
}

std::vector<std::string> store_search_path() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("KGEMM_CONFIG_PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty()) dirs.push_back(dir);
  }
  if (const std::string user = user_store_directory(); !user.empty()) dirs.push_back(user);
  {
    std::lock_guard<std::mutex> lock(added_directories_mutex());
    dirs.insert(dirs.end(), added_directories().begin(), added_directories().end());
  }
  for (const std::string& dir : installed_store_directories()) dirs.push_back(dir);
  return dirs;
}

namespace {
// The first <dir>/<device_slug>.yaml over store_search_path(); empty when there is none.
std::string own_store_file(const DeviceInfo& device) {
  const std::string name = device_slug(device) + ".yaml";
  for (const std::string& dir : store_search_path()) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error)) return candidate.string();
  }
  return "";
}
}  // namespace

std::string find_store_file(const DeviceInfo& device) {
  if (const char* file = std::getenv("KGEMM_CONFIG_FILE"); file && *file) return file;
  return own_store_file(device);
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

const char* to_string(StoreMatch match) {
  switch (match) {
    case StoreMatch::Exact: return "exact";
    case StoreMatch::SameArch: return "same architecture";
    case StoreMatch::Named: return "named";
    case StoreMatch::Sibling: return "sibling";
    case StoreMatch::None: break;
  }
  return "none";
}

namespace {

// A store read leniently, or the reason it could not be.
struct Loaded {
  std::optional<ConfigStore> store;
  std::vector<std::string> refused;
  std::string error;
};

Loaded load_leniently(const std::string& path) {
  Loaded loaded;
  try {
    loaded.store = ConfigStore::load(path, &loaded.refused);
  } catch (const std::exception& e) {
    loaded.error = e.what();
  }
  return loaded;
}

ServingStore served(StoreMatch match, const std::string& path, Loaded&& loaded, const DeviceInfo& device) {
  ServingStore s;
  s.match = match;
  s.path = path;
  s.own = same_device(loaded.store->header.device, device);
  s.store = std::move(loaded.store);
  s.refused = std::move(loaded.refused);
  return s;
}

// Every *.yaml over the search path, a file name once (the first directory's shadows the others),
// in search order and by name within a directory.
std::vector<std::string> stores_in_search_path() {
  std::vector<std::string> files;
  std::set<std::string> names;
  for (const std::string& dir : store_search_path()) {
    std::error_code error;
    std::vector<std::filesystem::path> here;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error))
      if (entry.path().extension() == ".yaml" && entry.is_regular_file(error)) here.push_back(entry.path());
    std::sort(here.begin(), here.end());
    for (const auto& file : here)
      if (names.insert(file.filename().string()).second) files.push_back(file.string());
  }
  return files;
}

// How far a store tuned on `tuned` is from `device` of the same space and architecture, nearest
// first: this device under another name, the same model, the nearest count (ratio), the larger.
auto nearness(const DeviceInfo& tuned, const DeviceInfo& device) {
  const double ratio = std::abs(std::log(double(std::max(tuned.threads, 1)) / std::max(device.threads, 1)));
  return std::make_tuple(!same_device(tuned, device), tuned.device != device.device, ratio, -tuned.threads);
}

// Of every *.yaml over the search path, the store nearest `device` among those of its space and
// architecture (`others_only`: those of other devices), served as what it is to the device.
ServingStore nearest_of_architecture(const DeviceInfo& device, bool others_only) {
  std::optional<std::pair<std::string, Loaded>> nearest;
  for (const std::string& path : stores_in_search_path()) {
    Loaded candidate = load_leniently(path);
    if (!candidate.store) continue;
    const DeviceInfo& tuned = candidate.store->header.device;
    if (tuned.space != device.space || tuned.arch != device.arch || (others_only && same_device(tuned, device))) continue;
    // Strictly nearer only: on a tie the earlier file in search order stays.
    if (!nearest || nearness(tuned, device) < nearness(nearest->second.store->header.device, device))
      nearest.emplace(path, std::move(candidate));
  }
  if (!nearest) return {};
  const bool own = same_device(nearest->second.store->header.device, device);
  return served(own ? StoreMatch::Exact : StoreMatch::SameArch, nearest->first, std::move(nearest->second), device);
}

}  // namespace

ServingStore find_serving_store(const DeviceInfo& device, std::vector<std::string>& warnings) {
  if (const char* file = std::getenv("KGEMM_CONFIG_FILE"); file && *file) {
    Loaded named = load_leniently(file);
    if (!named.store) {
      warnings.push_back("ignoring tuned configs: " + named.error);
      return {};
    }
    const DeviceInfo& tuned = named.store->header.device;
    if (tuned.space == device.space) {
      if (!same_device(tuned, device))
        warnings.push_back("using tuned configs in " + std::string(file) + " (KGEMM_CONFIG_FILE) tuned for " +
                           to_string(tuned) + " on " + to_string(device) +
                           ": each entry is checked for this device before it runs");
      return served(StoreMatch::Named, file, std::move(named), device);
    }
    warnings.push_back("KGEMM_CONFIG_FILE " + std::string(file) + " holds configs of the " + tuned.space +
                       " space, not " + device.space + ": looking for " + device.space + "'s store in the search path");
  }
  // The device's own file, shadowing any later one of its name; when it is not its store, the
  // search below goes on.
  if (const std::string path = own_store_file(device); !path.empty()) {
    Loaded own = load_leniently(path);
    if (!own.store)
      warnings.push_back("ignoring tuned configs: " + own.error);
    else if (!same_device(own.store->header.device, device))
      warnings.push_back("ignoring " + path + " as this device's store: it holds configs of " +
                         to_string(own.store->header.device) + ", this is " + to_string(device));
    else
      return served(StoreMatch::Exact, path, std::move(own), device);
  }
  return nearest_of_architecture(device, false);
}

ServingStore find_sibling_store(const DeviceInfo& device) {
  ServingStore sibling = nearest_of_architecture(device, true);
  if (sibling.store) sibling.match = StoreMatch::Sibling;
  return sibling;
}

std::string generation_note(const ConfigStore& store) {
  const std::size_t older = store.entries_on_older_kernels();
  if (older == 0) return "";
  return std::to_string(older) + " entries measured before their kernels changed (oldest generation " +
         std::to_string(store.oldest_generation()) + ", code's " + std::to_string(kKernelGeneration) + ")" +
         ": re-check with autotune --verify-store";
}

std::string describe(const ServingStore& s, const DeviceInfo& device) {
  if (s.match == StoreMatch::None) return "none for this device (space defaults)";
  const std::string tuned = s.own ? "this device's" : "tuned for " + to_string(s.store->header.device);
  const std::string rechecked = s.own ? "" : "; each entry checked for " + device.device + " before it runs";
  const std::string why = s.match == StoreMatch::Exact     ? "exact: " + tuned
                          : s.match == StoreMatch::Named   ? "named by KGEMM_CONFIG_FILE: " + tuned + rechecked
                          : s.match == StoreMatch::Sibling ? "sibling, same architecture, " + device.arch + ": " + tuned +
                                                                 ", beside this device's own, ranked with this device's facts"
                                                           : "same architecture, " + device.arch +
                                                               ": no store of this device; " + tuned + rechecked +
                                                               ", ranked with this device's facts";
  const std::string generation = generation_note(*s.store);
  return s.path + " (" + why + (generation.empty() ? "" : "; " + generation) + ")";
}

TunedConfigs::TunedConfigs(const DeviceInfo& device, FirstUseTuner first_use)
    : first_use_(std::move(first_use)), here_(device) {
  std::vector<std::string> warnings;
  serving_ = find_serving_store(device, warnings);
  for (const std::string& what : warnings) warn(what);
  // A bad entry costs its own shape only: the others stay tuned.
  for (const std::string& why : serving_.refused) warn(std::string("ignoring a tuned entry: ") + why);
  if (serving_.own) here_ = serving_.store->header.device;
}

const char* to_string(DispatchChoice::Source source) {
  return source == DispatchChoice::Source::Exact      ? "exact entry"
         : source == DispatchChoice::Source::Model    ? "model"
         : source == DispatchChoice::Source::FirstUse ? "tuned on first use"
                                                      : "space default";
}

DispatchChoice choose_stored(const ConfigStore& store, const Problem& problem, const DeviceInfo& device,
                             const std::function<Config()>& fallback,
                             const std::function<bool(const RatePrediction&)>& runs) {
  for (RatePrediction& candidate : rank_stored_configs(store, problem, device))
    if (runs(candidate)) {
      const auto source = candidate.exact ? DispatchChoice::Source::Exact : DispatchChoice::Source::Model;
      return {candidate.config, source, std::move(candidate)};
    }
  return {fallback(), DispatchChoice::Source::Default, std::nullopt};
}

DispatchChoice TunedConfigs::choose(const Problem& problem, const Fallback& fallback, const Check& check,
                                    const Check& blame) {
  if (!serving_.store) return {fallback(), DispatchChoice::Source::Default, std::nullopt};
  // Best prediction first; legality is asked only until one passes. It is asked for this
  // problem: an entry's config may be legal for one shape and not another (counts past int).
  return choose_stored(*serving_.store, problem, here_, fallback, [&](const RatePrediction& candidate) {
    if (check(problem, candidate.config).empty()) return true;
    // A split the model proposed that cannot run here is no fault of the store, nor a config
    // these operands cannot take, nor another shape's config that this shape cannot take (K
    // not a multiple of its runs), nor another device's config that this one cannot run:
    // passed over quietly. Only the problem's own entry is at fault.
    if (!serving_.own || candidate.config != candidate.source.config || !(candidate.source.problem == problem) ||
        warned_.count(candidate.source.problem))
      return false;
    if (const std::string fault = blame(problem, candidate.config); !fault.empty()) {
      warned_.insert(candidate.source.problem);
      warn("ignoring tuned config " + to_string(candidate.config) + " for " + to_string(candidate.source.problem) +
           " in " + serving_.path + ": " + fault);
    }
    return false;
  });
}

const TunedEntry* TunedConfigs::tuned_on_first_use(const Problem& problem) {
  if (!first_use_ || (serving_.own && serving_.store->exact(problem))) return nullptr;
  auto found = first_use_entries_.find(problem);
  if (found == first_use_entries_.end()) found = first_use_entries_.emplace(problem, first_use_(problem)).first;
  return found->second ? &*found->second : nullptr;
}

Config TunedConfigs::select(const Problem& problem, const OperandLayout& layout, Accum accum,
                            const Fallback& fallback, const Check& check, const Check& blame) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Call call{accum, layout, problem};
  const auto known = chosen_.find(call);
  if (known != chosen_.end()) return known->second;
  if (accum == Accum::F32)
    if (const TunedEntry* entry = tuned_on_first_use(problem); entry && check(problem, entry->config).empty())
      return chosen_.emplace(call, entry->config).first->second;
  return chosen_.emplace(call, choose(problem, fallback, check, blame).config).first->second;
}

Config TunedConfigs::select(const Problem& problem, Accum accum, const Fallback& fallback, const Check& check) {
  return select(problem, contiguous_layout(problem), accum, fallback, check, check);
}

DispatchChoice TunedConfigs::explain(const Problem& problem, const Fallback& fallback, const Check& check,
                                     const Check& blame) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto found = first_use_entries_.find(problem); found != first_use_entries_.end() && found->second &&
                                                            check(problem, found->second->config).empty())
    return {found->second->config, DispatchChoice::Source::FirstUse, std::nullopt};
  return choose(problem, fallback, check, blame);
}

namespace {
std::map<std::string, FirstUseTuner>& first_use_tuners() {
  static std::map<std::string, FirstUseTuner> by_space;
  return by_space;
}
}  // namespace

void set_first_use_tuner(const std::string& space, FirstUseTuner tuner) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  first_use_tuners()[space] = std::move(tuner);
  registry().erase(space);  // the next dispatch on the space reads its store with the tuner
}

std::shared_ptr<TunedConfigs> tuned_configs(const std::string& space, const std::function<DeviceInfo()>& device) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::shared_ptr<TunedConfigs>& configs = registry()[space];
  if (!configs) configs = std::make_shared<TunedConfigs>(device(), first_use_tuners()[space]);
  return configs;
}

void reload_config_stores() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().clear();
}

}  // namespace kgemm
