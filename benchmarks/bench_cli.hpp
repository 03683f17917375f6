#pragma once
// The command line and main() of kgemm's benchmark executables. One argv carries three parsers'
// words: the executable's own options (CLI11, kgemm/cli/options.hpp), Google Benchmark's
// --benchmark_* flags and Kokkos' --kokkos-* flags; each parser sees only its own, so none rejects
// the others'.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "kgemm/cli/options.hpp"
#include "kgemm/dtype.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"

namespace kgemm_bench {

// kgemm's rows (kgemm_rows.hpp): the dispatched config and the space default.
inline const std::vector<std::string> kKgemmImpls = {"kgemm", "kgemm-default"};

template <class ExecSpace>
std::string space_name() {
  return kgemm::lowercase(ExecSpace::name());
}

// What to measure: every combination of these.
struct Selection {
  std::vector<std::string> spaces;  // names as kgemm::with_space takes them
  std::vector<kgemm::DType> dtypes;
  std::set<std::string> impls;  // of kKgemmImpls
  std::set<std::string> peers;  // of the executable's peers
  std::string model;            // the ResNet shape catalogue's
  std::vector<int> images, batches;

  bool wants(const std::string& impl_or_peer) const {
    return impls.count(impl_or_peer) > 0 || peers.count(impl_or_peer) > 0;
  }
};

struct Program {
  std::string name;   // for messages: "kgemm-bench-gemm"
  std::string about;   // --help's first lines: what it measures
  std::vector<std::string> peers;  // the peers it can run; all by default
  // Declares its own options, beyond the common ones (none by default).
  std::function<void(kgemm::cli::App&)> add_options = [](kgemm::cli::App&) {};
  // Registers the benchmarks. Kokkos is initialised; Google Benchmark's flags are not parsed yet.
  std::function<void(const Selection&)> register_benchmarks;
};

// The whole of a benchmark executable's main(): Kokkos lives from registration to the last run.
int run_program(int argc, char** argv, const Program& program);

// f(space, Scalar()) for every selected space and dtype.
template <class F>
void for_each_space_and_scalar(const Selection& selection, F&& f) {
  for (const std::string& name : selection.spaces)
    kgemm::with_space(name, [&](auto space) {
      for (kgemm::DType dtype : selection.dtypes) {
        if (dtype == kgemm::DType::F32)
          f(space, float());
        else
          f(space, kgemm::half());
      }
    });
}

}  // namespace kgemm_bench
