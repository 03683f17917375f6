#include "kgemm/tuner/store_merge.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include <unistd.h>

namespace kgemm {

namespace {

std::string described(const TunedEntry& entry, const std::string& file) {
  char gflops[32];
  std::snprintf(gflops, sizeof gflops, "%.4g", entry.gflops);
  return file + "'s " + to_string(entry.config) + " (" + gflops + " GFLOP/s)";
}

// Whether two stores' entries were tuned by the same Kokkos and kgemm versions.
bool same_versions(const StoreHeader& a, const StoreHeader& b) {
  return a.kokkos_version == b.kokkos_version && a.kgemm_version == b.kgemm_version;
}

}  // namespace

MergeOutcome merge_stores(const std::vector<std::string>& inputs, const std::string& out,
                          std::optional<double> lock_timeout) {
  if (inputs.empty()) throw InvalidArgument("nothing to merge: name at least one input store");
  std::vector<ConfigStore> stores;
  for (const std::string& path : inputs) stores.push_back(ConfigStore::load(path));
  const DeviceInfo& device = stores.front().header.device;
  for (std::size_t i = 1; i < stores.size(); ++i)
    if (!same_device(stores[i].header.device, device))
      throw StoreError(inputs[i], "holds configs of " + to_string(stores[i].header.device) + ", but " + inputs.front() +
                                      " holds configs of " + to_string(device) +
                                      "; stores of different devices cannot be merged");
  // The versions the header names are those that tuned the entries where every store taking
  // part agrees (the output's own entries included); else the merging program's. A merge run
  // elsewhere (a login node's host-only build merging a GPU job's stores) would otherwise record
  // its own Kokkos for the GPU's tuning.
  const StoreHeader tuned_by = stores.front().header;
  bool one_version = std::all_of(stores.begin(), stores.end(),
                                 [&](const ConfigStore& store) { return same_versions(store.header, tuned_by); });
  if (one_version && access(out.c_str(), F_OK) == 0) one_version = same_versions(ConfigStore::load(out).header, tuned_by);
  MergeOutcome outcome;
  outcome.store = ConfigStore::update(out, device, [&](ConfigStore& merged) {
    if (one_version) {
      merged.header.kokkos_version = tuned_by.kokkos_version;
      merged.header.kgemm_version = tuned_by.kgemm_version;
    }
    outcome.clashes.clear();
    outcome.added = 0;
    std::map<Problem, std::string, StoreOrder> source;  // the file each merged entry came from
    for (const TunedEntry& entry : merged.entries()) source[entry.problem] = out;
    for (std::size_t i = 0; i < stores.size(); ++i)
      for (const TunedEntry& entry : stores[i].entries()) {
        const TunedEntry* held = merged.exact(entry.problem);
        if (!held) {
          merged.put(entry);
          source[entry.problem] = inputs[i];
          ++outcome.added;
          continue;
        }
        if (held->config == entry.config && held->gflops == entry.gflops && held->generation == entry.generation)
          continue;
        // A rate measured on older kernels says less than one on newer ones, however high.
        const bool newer = entry.generation != held->generation;
        const bool wins = newer ? entry.generation > held->generation : entry.gflops > held->gflops;
        const std::string winner = wins ? described(entry, inputs[i]) : described(*held, source[entry.problem]);
        const std::string loser = wins ? described(*held, source[entry.problem]) : described(entry, inputs[i]);
        outcome.clashes.push_back(to_string(entry.problem) + ": kept " + winner + " over " + loser +
                                  (newer ? ", the newer kernel generation (" + std::to_string(std::max(entry.generation, held->generation)) +
                                               " over " + std::to_string(std::min(entry.generation, held->generation)) + ")"
                                   : wins || held->gflops > entry.gflops ? ", the faster"
                                                                         : ", the first of equal speed"));
        if (wins) {
          merged.put(entry);
          source[entry.problem] = inputs[i];
        }
      }
  }, lock_timeout);
  return outcome;
}

}  // namespace kgemm
