#include "kgemm/dispatch/config_store.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <utility>

#include "kgemm/spaces/compat.hpp"
#include "kgemm/text_number.hpp"
#include "store_file.hpp"
#include "store_reader.hpp"

namespace kgemm {

StoreError::StoreError(const std::string& path, const std::string& what)
    : RuntimeError(path + ": " + what) {}

bool StoreOrder::operator()(const Problem& x, const Problem& y) const {
  return std::tie(x.kernel, x.dtype, x.a_order, x.b_order, x.batch, x.m, x.n, x.k) <
         std::tie(y.kernel, y.dtype, y.a_order, y.b_order, y.batch, y.m, y.n, y.k);
}

StoreHeader StoreHeader::stamped(const DeviceInfo& device) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {device, kokkos_version_string(), KGEMM_VERSION, date};
}

namespace {

// One flow mapping per entry keeps each entry on one line: diffs show exactly what changed.
// yaml-cpp's emitter writes the header, whose text (device names) may need quotes; the entries'
// values never do (words, numbers, config strings), and are written directly: the emitter would
// take seconds for a store of 100,000 entries.
std::string to_yaml(const ConfigStore& store) {
  const StoreHeader& h = store.header;
  YAML::Emitter out;
  out << YAML::Comment("kgemm tuned configurations (written by autotune; edit with care)") << YAML::BeginMap;
  out << "format" << kStoreFormat;
  out << "device" << YAML::Flow << YAML::BeginMap << "space" << h.device.space << "name" << h.device.device
      << "arch" << h.device.arch << "threads" << h.device.threads;
  if (h.device.memory_gbps > 0) out << "memory_gbps" << shortest(h.device.memory_gbps);
  out << YAML::EndMap;
  out << "kokkos" << h.kokkos_version << "kgemm" << h.kgemm_version << "date" << h.date << YAML::EndMap;
  std::string text = std::string(out.c_str()) + (store.entries().empty() ? "\nentries: []\n" : "\nentries:\n");
  for (const TunedEntry& e : store.entries()) {
    const Problem& p = e.problem;
    text += "  - {kernel: " + to_string(p.kernel) + ", dtype: " + to_string(p.dtype) + ", order: " + p.a_order +
            p.b_order + ", m: " + std::to_string(p.m) + ", n: " + std::to_string(p.n) + ", k: " + std::to_string(p.k) +
            ", batch: " + std::to_string(p.batch) + ", config: " + to_string(e.config) + ", gflops: " + shortest(e.gflops) +
            ", default_gflops: " + shortest(e.default_gflops) + ", candidates: " + std::to_string(e.candidates) +
            ", generation: " + std::to_string(e.generation);
    if (!e.runners_up.empty()) {
      text += ", runners_up: [";
      for (std::size_t i = 0; i < e.runners_up.size(); ++i)
        text += std::string(i ? ", " : "") + "{config: " + to_string(e.runners_up[i].config) +
                ", gflops: " + shortest(e.runners_up[i].gflops) + "}";
      text += "]";
    }
    text += "}\n";
  }
  return text;
}

template <class Entries>
auto position_of(Entries& entries, const Problem& problem) {
  return std::lower_bound(entries.begin(), entries.end(), problem,
                          [](const TunedEntry& e, const Problem& p) { return StoreOrder()(e.problem, p); });
}

}  // namespace

ConfigStore ConfigStore::load(const std::string& path, std::vector<std::string>* refused) {
  // A directory, FIFO or device would fail later in odd ways (an exception from the stream, a
  // read that never ends); only a regular file can be a store.
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) throw StoreError(path, std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) throw StoreError(path, "cannot open: not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StoreError(path, std::string("cannot open: ") + std::strerror(errno));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw StoreError(path, std::string("cannot read: ") + std::strerror(errno));
  return detail::read_store(path, text, refused);
}

void ConfigStore::save(const std::string& path) const {
  const std::string target = store_file::target_of(path);
  store_file::refuse_read_only(path, target);
  store_file::create_parent_directory(path, target);
  store_file::TempFile(path, target).replace(to_yaml(*this));
}

void ConfigStore::check_writable(const std::string& path, std::optional<double> lock_timeout) {
  const std::string target = store_file::target_of(path);
  store_file::refuse_read_only(path, target);
  store_file::create_parent_directory(path, target);
  { const store_file::TempFile probe(path, target); }
  const store_file::StoreLock lock(path, target, lock_timeout);
}

ConfigStore ConfigStore::open(const std::string& path, const DeviceInfo& device) {
  ConfigStore store;
  store.header = StoreHeader::stamped(device);
  if (access(path.c_str(), F_OK) != 0) return store;
  store = load(path);
  if (!same_device(store.header.device, device))
    throw StoreError(path, "holds configs of " + to_string(store.header.device) + ", not " + to_string(device) +
                               "; pass --out with another file");
  return store;
}

ConfigStore ConfigStore::update(const std::string& path, const DeviceInfo& device,
                                const std::function<void(ConfigStore&)>& change,
                                std::optional<double> lock_timeout) {
  const std::string target = store_file::target_of(path);
  store_file::create_parent_directory(path, target);
  const store_file::StoreLock lock(path, target, lock_timeout);
  store_file::remove_stale_temps(target);
  ConfigStore store = open(path, device);
  // The file's device (same_device leaves a GPU's thread count out), with the bandwidth of the
  // caller's where it knows one: a store written before bandwidths were recorded gains it.
  DeviceInfo stamped = store.header.device;
  if (device.memory_gbps > 0) stamped.memory_gbps = device.memory_gbps;
  store.header = StoreHeader::stamped(stamped);
  change(store);
  store.save(path);
  return store;
}

bool ConfigStore::erase(const Problem& problem) {
  const auto it = position_of(entries_, problem);
  if (it == entries_.end() || !(it->problem == problem)) return false;
  entries_.erase(it);
  return true;
}

std::size_t ConfigStore::entries_on_older_kernels() const {
  const bool host = header.device.is_host();
  return std::size_t(std::count_if(entries_.begin(), entries_.end(),
                                   [host](const TunedEntry& entry) { return measured_on_older_kernels(entry, host); }));
}

int ConfigStore::oldest_generation() const {
  int oldest = kKernelGeneration;
  for (const TunedEntry& entry : entries_) oldest = std::min(oldest, entry.generation);
  return oldest;
}

const TunedEntry* ConfigStore::exact(const Problem& problem) const {
  const auto it = position_of(entries_, problem);
  return it != entries_.end() && it->problem == problem ? &*it : nullptr;
}

std::vector<TunedEntry> rated_entries(const TunedEntry& entry) {
  std::vector<TunedEntry> rated{entry};
  rated.front().runners_up.clear();
  for (const RatedConfig& runner_up : entry.runners_up) {
    rated.push_back(rated.front());
    rated.back().config = runner_up.config;
    rated.back().gflops = runner_up.gflops;
  }
  return rated;
}

namespace {

// Why a measured rate cannot be stored (empty when it can); `zero_allowed`: a default's, which
// is 0 where the default failed.
std::string why_bad_rate(const char* name, double gflops, bool zero_allowed) {
  if (std::isfinite(gflops) && (gflops > 0 || (zero_allowed && gflops == 0)) && gflops <= kMaxStoreGflops) return "";
  return std::string(name) + " " + shortest(gflops) + " is not finite, " + (zero_allowed ? ">= 0" : "> 0") +
         " and at most " + shortest(kMaxStoreGflops);
}

}  // namespace

std::string why_bad(const TunedEntry& entry) {
  if (std::string why = why_invalid(entry.problem); !why.empty()) return why;
  if (entry.problem.m < 1 || entry.problem.n < 1 || entry.problem.k < 1) return "a stored shape has extents >= 1";
  if (std::string why = why_malformed(entry.config); !why.empty()) return "config " + to_string(entry.config) + ": " + why;
  if (std::string why = why_bad_rate("gflops", entry.gflops, false); !why.empty()) return why;
  if (std::string why = why_bad_rate("default_gflops", entry.default_gflops, true); !why.empty()) return why;
  if (entry.candidates < 0) return "candidates " + std::to_string(entry.candidates) + " is negative";
  if (entry.generation < 0) return "generation " + std::to_string(entry.generation) + " is negative";
  for (std::size_t i = 0; i < entry.runners_up.size(); ++i) {
    const RatedConfig& runner_up = entry.runners_up[i];
    const std::string name = "runners_up[" + std::to_string(i) + "]";
    if (std::string why = why_malformed(runner_up.config); !why.empty())
      return name + ": config " + to_string(runner_up.config) + ": " + why;
    if (std::string why = why_bad_rate("gflops", runner_up.gflops, false); !why.empty()) return name + ": " + why;
    if (same_block_class(runner_up.config, entry.config))
      return name + ": " + to_string(runner_up.config) + " is of the winner's block class (" + to_string(entry.config) +
             "): a runner-up is the fastest of another class";
    for (std::size_t j = 0; j < i; ++j)
      if (same_block_class(runner_up.config, entry.runners_up[j].config))
        return name + ": " + to_string(runner_up.config) + " is of the block class of runners_up[" + std::to_string(j) +
               "] (" + to_string(entry.runners_up[j].config) + "): a class has one runner-up";
  }
  return "";
}

void ConfigStore::put(const TunedEntry& entry) {
  if (const std::string why = why_bad(entry); !why.empty())
    throw InvalidArgument("refusing to store an entry for " + to_string(entry.problem) + ": " + why);
  const auto it = position_of(entries_, entry.problem);
  if (it != entries_.end() && it->problem == entry.problem)
    *it = entry;
  else
    entries_.insert(it, entry);
}

}  // namespace kgemm
