#pragma once
// kgemm-run's command line: every option declared once in run_options.cpp, with its help, default
// and checks, the rules between options included, so a refused command line never starts Kokkos.
#include <optional>
#include <string>
#include <vector>

#include "kgemm/config.hpp"

namespace kgemm::cli {

enum class Format { Table, Csv, Json };

// Lists hold each item once (a repeat would run and print twice).
struct RunOptions {
  std::vector<std::string> spaces;   // lower case
  std::string model = "resnet50";
  std::vector<std::string> shapes;   // MxNxK instead of a model
  std::vector<int> images{224};
  std::vector<int> batches{1};
  std::vector<std::string> dtypes{"fp32"};  // fp32 | fp16
  int reps = 10;
  std::optional<Config> config;      // instead of the dispatched one
  Format format = Format::Table;
  bool progress = false, list_shapes = false, why = false;
  std::optional<std::string> why_store;  // explain from this store file, run nothing
};

// The options of `words` (argv less the program name and Kokkos' flags); nullopt when --help
// printed the help. Throws InvalidArgument naming the option and why.
std::optional<RunOptions> parse_run(const std::vector<std::string>& words);

}  // namespace kgemm::cli
