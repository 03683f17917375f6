#pragma once
// Every measurement the autotuner makes, appended as one tab-separated line
// (problem, config, GFLOP/s or "wrong", note), in the spirit of Kernel Tuner's cache files:
// an interrupted run loses nothing measured, and --replay / kgemm-compare-strategies can
// rerun searches on recorded numbers without the hardware.
#include <map>
#include <string>
#include <vector>

#include "kgemm/problem.hpp"
#include "kgemm/tuner/search.hpp"

namespace kgemm {

// Throws std::runtime_error naming the file and the reason when the line does not reach it.
void append_measurement(const std::string& path, const Problem& problem, const Evaluated& evaluated);

// Measurements per problem key (to_string(Problem)), in file order; a config measured twice
// keeps its last value. Throws std::runtime_error naming the file and line of a bad line.
std::map<std::string, std::vector<Evaluated>> load_measurements(const std::string& path);

}  // namespace kgemm
