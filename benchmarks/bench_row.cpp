#include "bench_row.hpp"

namespace kgemm_bench {

int run_registered_rows(std::vector<char*> benchmark_args) {
  // Defaults go first: the last of a repeated flag wins, so the command line's own still hold.
  std::string defaults[] = {"--benchmark_repetitions=5", "--benchmark_display_aggregates_only=true"};
  for (std::string& flag : defaults) benchmark_args.insert(benchmark_args.begin() + 1, flag.data());
  int argc = int(benchmark_args.size());
  benchmark::Initialize(&argc, benchmark_args.data());
  if (benchmark::ReportUnrecognizedArguments(argc, benchmark_args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The rows' measures, and what they own (MKL's JIT kernels), go now, while the libraries they
  // call are loaded: Google Benchmark's registry would otherwise last until its own library unloads.
  benchmark::ClearRegisteredBenchmarks();
  return 0;
}

}  // namespace kgemm_bench
