#pragma once
// Every measurement the autotuner makes, appended as one tab-separated line
// (problem, config, GFLOP/s or "wrong", note), in the spirit of Kernel Tuner's cache files:
// an interrupted run loses nothing measured, and --replay / kgemm-compare-strategies can
// rerun searches on recorded numbers without the hardware. A line "#device" records the device
// a run measured on, and one "#search" before a problem's measurements what its search was given
// (the number of candidates, the space default, the store's config and the seeds), which depend on the space
// and device that measured: a replay elsewhere starts where the device's own search would.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kgemm/problem.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/tuner/search.hpp"

namespace kgemm {

// What a search was given besides its measurements.
struct SearchGiven {
  std::size_t candidates = 0;
  Config fallback;              // the space default, measured before the search (the rate to beat)
  std::vector<Config> seeds;    // the space's, fitted to the problem (search_starts), the default first
  std::vector<Config> known;    // the store's configs for the problem (KnownConfigs), best first
};

// What one problem's search was given and what it measured.
struct RecordedSearch {
  SearchGiven given;  // candidates 0 when the cache has no "#search" line for the problem
  std::vector<Evaluated> measured;  // in file order; a config measured twice keeps its last value
  std::vector<Evaluated> readings;  // every measurement line in file order (what a replay gives a run back)
  // Each config's first reading, in file order: what the search read of it (later ones re-time it).
  std::vector<Evaluated> first_readings() const;
  // Whether every candidate was measured: the cache of an exhaustive search that ran to the end.
  bool exhaustive() const { return given.candidates > 0 && measured.size() >= given.candidates; }
};

// Each config of `readings` once, in the order it was first read, at its last reading (later
// readings re-time it).
std::vector<Evaluated> last_readings(const std::vector<Evaluated>& readings);

struct MeasurementCache {
  std::optional<DeviceInfo> device;  // the last "#device" line's
  std::map<std::string, RecordedSearch> problems;  // by problem key (to_string(Problem))
};

// Each throws RuntimeError naming the file and the reason when the line does not reach it.
void append_measurement(const std::string& path, const Problem& problem, const Evaluated& evaluated);
void append_search(const std::string& path, const Problem& problem, const SearchGiven& given);
void append_device(const std::string& path, const DeviceInfo& device);

// Throws RuntimeError naming the file and line of a bad line.
MeasurementCache load_measurements(const std::string& path);

}  // namespace kgemm
