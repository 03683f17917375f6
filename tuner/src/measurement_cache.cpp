#include "kgemm/tuner/measurement_cache.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kgemm/spaces/error.hpp"
#include "kgemm/text_number.hpp"
#include "kgemm/tuner/tool_output.hpp"

namespace kgemm {

namespace {

constexpr char kSearchTag[] = "#search", kDeviceTag[] = "#device", kNone[] = "-";

void append_line(const std::string& path, const std::string& line) {
  const std::string what = "the measurement cache " + path;
  std::FILE* out = std::fopen(path.c_str(), "a");
  if (!out) throw RuntimeError("cannot write " + what + ": " + std::strerror(errno));
  std::fprintf(out, "%s\n", line.c_str());
  close_checked(out, what);
}

std::string next_field(std::istringstream& fields) {
  std::string field;
  std::getline(fields, field, '\t');
  return field;
}

}  // namespace

std::vector<Evaluated> RecordedSearch::first_readings() const {
  std::set<std::string> seen;
  std::vector<Evaluated> first;
  for (const Evaluated& e : readings)
    if (seen.insert(to_string(e.config)).second) first.push_back(e);
  return first;
}

std::vector<Evaluated> last_readings(const std::vector<Evaluated>& readings) {
  std::map<std::string, std::size_t> at;  // by config string: its place in `last`
  std::vector<Evaluated> last;
  for (const Evaluated& e : readings) {
    const auto [place, first] = at.emplace(to_string(e.config), last.size());
    if (first)
      last.push_back(e);
    else
      last[place->second] = e;
  }
  return last;
}

void append_measurement(const std::string& path, const Problem& problem, const Evaluated& e) {
  std::string note = e.measurement.note;
  std::replace(note.begin(), note.end(), '\t', ' ');
  std::replace(note.begin(), note.end(), '\n', ' ');
  // All 17 digits: a replay must see the very rate the run saw, or its rounding of what it stores differs.
  char gflops[32] = "wrong";
  if (e.measurement.correct) std::snprintf(gflops, sizeof gflops, "%.17g", e.measurement.gflops);
  append_line(path, to_string(problem) + "\t" + to_string(e.config) + "\t" + gflops + "\t" + note);
}

void append_search(const std::string& path, const Problem& problem, const SearchGiven& given) {
  // The store's configs in one field, comma-separated (config strings hold no comma).
  std::string known;
  for (const Config& c : given.known) known += (known.empty() ? "" : ",") + to_string(c);
  std::string line = std::string(kSearchTag) + "\t" + to_string(problem) + "\t" + std::to_string(given.candidates) +
                     "\t" + to_string(given.fallback) + "\t" + (known.empty() ? kNone : known);
  for (const Config& seed : given.seeds) line += "\t" + to_string(seed);
  append_line(path, line);
}

void append_device(const std::string& path, const DeviceInfo& device) {
  char gbps[32];
  std::snprintf(gbps, sizeof gbps, "%.17g", device.memory_gbps);
  append_line(path, std::string(kDeviceTag) + "\t" + device.space + "\t" + device.device + "\t" + device.arch + "\t" +
                        std::to_string(device.threads) + "\t" + gbps);
}

MeasurementCache load_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw RuntimeError("cannot read measurement cache " + path);
  MeasurementCache cache;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    std::istringstream fields(line);
    const std::string first = next_field(fields);
    try {
      if (first == kDeviceTag) {
        DeviceInfo device;
        device.space = next_field(fields), device.device = next_field(fields), device.arch = next_field(fields);
        const std::string threads = next_field(fields), gbps = next_field(fields);
        const auto count = integer_in(threads, 1, 1 << 30);
        const auto rate = finite_at_least(gbps, 0);
        if (device.space.empty() || device.device.empty() || !count || !rate)
          throw InvalidArgument("expected space, name, arch, threads >= 1 and GB/s >= 0");
        device.threads = *count, device.memory_gbps = *rate;
        cache.device = device;
        continue;
      }
      if (first == kSearchTag) {
        RecordedSearch& search = cache.problems[to_string(parse_problem(next_field(fields)))];
        const std::string count = next_field(fields), fallback = next_field(fields), known = next_field(fields);
        const auto candidates = integer_in(count, 1, 1 << 30);
        if (!candidates) throw InvalidArgument("'" + count + "' is not a candidate count");
        search.given.candidates = std::size_t(*candidates);
        search.given.fallback = parse_config(fallback);
        search.given.known.clear();
        if (known != kNone) {
          std::istringstream configs(known);
          for (std::string config; std::getline(configs, config, ',');) search.given.known.push_back(parse_config(config));
        }
        search.given.seeds.clear();
        for (std::string seed; std::getline(fields, seed, '\t');) search.given.seeds.push_back(parse_config(seed));
        if (search.given.seeds.empty()) throw InvalidArgument("no seed");
        continue;
      }
      Evaluated e;
      e.config = parse_config(next_field(fields));
      const std::string value = next_field(fields);
      e.measurement.correct = value != "wrong";
      if (e.measurement.correct) {
        const auto gflops = finite_at_least(value, 0);
        if (!gflops) throw InvalidArgument("'" + value + "' is neither a finite GFLOP/s >= 0 nor 'wrong'");
        e.measurement.gflops = *gflops;
      }
      std::getline(fields, e.measurement.note);
      cache.problems[to_string(parse_problem(first))].readings.push_back(e);
    } catch (const InvalidArgument& error) {
      throw RuntimeError(path + ":" + std::to_string(number) + ": not a measurement line (" + error.reason() + ")");
    }
  }
  for (auto& [key, search] : cache.problems) search.measured = last_readings(search.readings);
  return cache;
}

}  // namespace kgemm
