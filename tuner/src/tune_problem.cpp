#include "kgemm/tuner/tune_problem.hpp"

#include <unistd.h>

#include <cstdio>

namespace kgemm {

std::string tuning_store_path(const DeviceInfo& device, std::optional<double> lock_timeout) {
  const std::string found = find_store_file(device), path = writable_store_file(device);
  if (!found.empty() && path != found && access(path.c_str(), F_OK) != 0) {
    const ConfigStore installed = ConfigStore::open(found, device);
    ConfigStore::update(path, device, [&](ConfigStore& copy) {
      for (const TunedEntry& entry : installed.entries()) copy.put(entry);
    }, lock_timeout);
    std::fprintf(stderr, "kgemm: %s is read-only; starting %s from its %zu entries\n", found.c_str(), path.c_str(),
                 installed.entries().size());
  }
  return path;
}

}  // namespace kgemm
