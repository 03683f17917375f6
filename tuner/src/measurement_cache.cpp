#include "kgemm/tuner/measurement_cache.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kgemm/text_number.hpp"
#include "kgemm/tuner/tool_output.hpp"

namespace kgemm {

void append_measurement(const std::string& path, const Problem& problem, const Evaluated& e) {
  const std::string what = "the measurement cache " + path;
  std::FILE* out = std::fopen(path.c_str(), "a");
  if (!out) throw std::runtime_error("cannot write " + what + ": " + std::strerror(errno));
  std::string note = e.measurement.note;
  std::replace(note.begin(), note.end(), '\t', ' ');
  std::replace(note.begin(), note.end(), '\n', ' ');
  // All 17 digits: a replay must see the very rate the run saw, or its rounding of what it stores differs.
  char gflops[32] = "wrong";
  if (e.measurement.correct) std::snprintf(gflops, sizeof gflops, "%.17g", e.measurement.gflops);
  std::fprintf(out, "%s\t%s\t%s\t%s\n", to_string(problem).c_str(), to_string(e.config).c_str(), gflops, note.c_str());
  close_checked(out, what);
}

std::map<std::string, std::vector<Evaluated>> load_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("kgemm: cannot read measurement cache " + path);
  std::map<std::string, std::vector<Evaluated>> by_problem;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string problem, config, value;
    std::getline(fields, problem, '\t');
    std::getline(fields, config, '\t');
    std::getline(fields, value, '\t');
    Evaluated e;
    try {
      problem = to_string(parse_problem(problem));
      e.config = parse_config(config);
      e.measurement.correct = value != "wrong";
      if (e.measurement.correct) {
        const auto gflops = finite_at_least(value, 0);
        if (!gflops) throw std::invalid_argument("'" + value + "' is neither a finite GFLOP/s >= 0 nor 'wrong'");
        e.measurement.gflops = *gflops;
      }
    } catch (const std::exception& error) {
      throw std::runtime_error("kgemm: " + path + ":" + std::to_string(number) + ": not a measurement line (" +
                               error.what() + ")");
    }
    std::getline(fields, e.measurement.note);
    auto& list = by_problem[problem];
    const auto same = std::find_if(list.begin(), list.end(), [&](const Evaluated& x) { return x.config == e.config; });
    if (same != list.end())
      *same = e;
    else
      list.push_back(e);
  }
  return by_problem;
}

}  // namespace kgemm
