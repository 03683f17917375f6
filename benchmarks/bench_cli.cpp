#include "bench_cli.hpp"

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "bench_row.hpp"
#include "kgemm/cli/options.hpp"
#include "kgemm/spaces/compat.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/dispatch/store_registry.hpp"
#include "operand_ring.hpp"

namespace kgemm_bench {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

const char* kFooter = R"(Google Benchmark's --benchmark_* flags (--benchmark_filter=REGEX, --benchmark_min_time=S,
--benchmark_repetitions=N, --benchmark_out=FILE --benchmark_out_format=json, ...) and Kokkos'
--kokkos-* flags pass through. Unless told otherwise every benchmark runs 5 repetitions and the
console shows their aggregates (the JSON file holds all).
)";

// The selection's options (comma lists; every combination runs), then the program's own.
// nullopt when --help printed the help.
std::optional<Selection> parse_selection(const std::vector<std::string>& words, const Program& program) {
  Selection s;
  std::vector<std::string> spaces{kgemm::lowercase(KGEMM_DEFAULT_SPACE)}, dtypes{"fp32"};
  std::vector<std::string> impls = kKgemmImpls, peers = program.peers;
  s.model = "resnet50";
  s.images = {224};
  s.batches = {1};
  kgemm::cli::App app(program.about, program.name, kFooter);
  app.add_list("--space", spaces, "serial,openmp,cuda")->transform(kgemm::cli::lower_case());
  app.add_list("--dtype", dtypes, "fp32,fp16")->transform(kgemm::cli::dtype());
  app.add_list("--impls", impls, "kgemm,kgemm-default (\"--impls=\" for none)", true)
      ->check(kgemm::cli::one_of(kKgemmImpls));
  app.add_list("--peers", peers, join(program.peers) + " (\"--peers=\" for none)", true)
      ->check(kgemm::cli::one_of(program.peers));
  app.add_option("--model", s.model, "resnet18 | resnet34 | resnet50")->type_name("NAME")->capture_default_str();
  app.add_list("--image", s.images, "input image sides")->transform(kgemm::cli::count());
  app.add_list("--batch", s.batches, "batch sizes")->transform(kgemm::cli::count());
  program.add_options(app);
  if (!app.read(words)) return std::nullopt;
  s.spaces = spaces;
  for (const std::string& name : dtypes) s.dtypes.push_back(kgemm::parse_dtype(name));
  s.impls = {impls.begin(), impls.end()};
  s.peers = {peers.begin(), peers.end()};
  return s;
}

// The run's facts that no benchmark name carries, in the JSON's "context".
void add_context(const Selection& selection) {
  benchmark::AddCustomContext("kokkos_version", kgemm::kokkos_version_string());
  for (const std::string& name : selection.spaces)
    kgemm::with_space(name, [](auto space) {
      using ExecSpace = decltype(space);
      const kgemm::DeviceInfo device = kgemm::device_info<ExecSpace>();
      const auto tuned = kgemm::tuned_configs(ExecSpace::name(), [&] { return device; });
      benchmark::AddCustomContext("kgemm_configs_" + space_name<ExecSpace>(),
                                  tuned->serving().match == kgemm::StoreMatch::None
                                      ? "none: rows kgemm and kgemm-default both run the default"
                                      : kgemm::describe(tuned->serving(), device));
      benchmark::AddCustomContext("operand_ring_cache_bytes_" + space_name<ExecSpace>(),
                                  std::to_string(cache_bytes<ExecSpace>()));
    });
}

}  // namespace

int run_program(int argc, char** argv, const Program& program) {
  try {
    std::vector<char*> benchmark_args{argv[0]}, kokkos_args{argv[0]};
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg.rfind("--benchmark_", 0) == 0) benchmark_args.push_back(argv[i]);
      if (arg.rfind("--kokkos-", 0) == 0) kokkos_args.push_back(argv[i]);
    }
    const std::optional<Selection> selection =
        parse_selection(kgemm::cli::own_words(argc, argv, {"--benchmark_", "--kokkos-"}), program);
    if (!selection) return 0;

    kgemm::KokkosArguments kokkos_arguments(int(kokkos_args.size()), kokkos_args.data());
    Kokkos::ScopeGuard kokkos(kokkos_arguments.argc(), kokkos_arguments.argv());
    for (const std::string& name : selection->spaces) kgemm::with_space(name, [](auto) {});  // throws for a missing one
    program.register_benchmarks(*selection);
    add_context(*selection);

    return run_registered_rows(benchmark_args);
  } catch (const std::exception& e) {
    std::cerr << program.name << ": " << kgemm::reason_of(e) << "\n";
    return 1;
  }
}

}  // namespace kgemm_bench
