#include "bench_cli.hpp"

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <iostream>
#include <stdexcept>

#include "bench_row.hpp"
#include "kgemm/spaces/compat.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/dispatch/store_registry.hpp"
#include "operand_ring.hpp"

namespace kgemm_bench {

namespace {

const std::set<std::string> kCommonOptions = {"space", "dtype", "impls", "peers", "model", "image", "batch"};

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

std::string common_help(const Program& program) {
  std::string peers = join(program.peers);
  peers.resize(std::max<std::size_t>(peers.size(), 31), ' ');
  return R"(Selection (comma lists; every combination runs):
  --space LIST    serial,openmp,cuda             (default: )" KGEMM_DEFAULT_SPACE R"()
  --dtype LIST    fp32,fp16                      (default: fp32)
  --impls LIST    kgemm,kgemm-default            (default: both; "--impls=" for none)
  --peers LIST    )" + peers + R"((default: all; "--peers=" for none)
  --model NAME    resnet18 | resnet34 | resnet50 (default: resnet50)
  --image LIST    input image sides              (default: 224)
  --batch LIST    batch sizes                    (default: 1)
  --help
Google Benchmark's --benchmark_* flags (--benchmark_filter=REGEX, --benchmark_min_time=S,
--benchmark_repetitions=N, --benchmark_out=FILE --benchmark_out_format=json, ...) and Kokkos'
--kokkos-* flags pass through. Unless told otherwise every benchmark runs 5 repetitions and the
console shows their aggregates (the JSON file holds all).
)";
}

// `items` must all be in `allowed`; `what` names them in the message.
std::set<std::string> checked(const std::vector<std::string>& items, const std::vector<std::string>& allowed,
                              const std::string& what) {
  for (const std::string& item : items)
    if (std::find(allowed.begin(), allowed.end(), item) == allowed.end())
      throw std::invalid_argument("unknown " + what + " '" + item + "' (expected some of " + join(allowed) + ")");
  return {items.begin(), items.end()};
}

Selection parse_selection(const kgemm::CommandLine& cli, const Program& program) {
  Selection s;
  s.spaces = cli.get_list("space", KGEMM_DEFAULT_SPACE);
  for (const std::string& name : s.spaces) kgemm::with_space(name, [](auto) {});  // throws for a missing one
  for (const std::string& name : cli.get_list("dtype", "fp32")) s.dtypes.push_back(kgemm::parse_dtype(name));
  // "--impls=" / "--peers=" (an empty list, as the help offers) run none of them.
  if (!cli.given_empty("impls")) s.impls = checked(cli.get_list("impls", join(kKgemmImpls)), kKgemmImpls, "impl");
  if (!cli.given_empty("peers")) s.peers = checked(cli.get_list("peers", join(program.peers)), program.peers, "peer");
  s.model = cli.get("model", "resnet50");
  s.images = cli.get_int_list("image", "224");
  s.batches = cli.get_int_list("batch", "1");
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
    std::vector<char*> own{argv[0]}, benchmark_args{argv[0]}, kokkos_args{argv[0]};
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      auto& to = arg.rfind("--benchmark_", 0) == 0 ? benchmark_args : arg.rfind("--kokkos-", 0) == 0 ? kokkos_args : own;
      to.push_back(argv[i]);
    }
    std::set<std::string> options = kCommonOptions, flags = program.flags;
    options.insert(program.options.begin(), program.options.end());
    flags.insert("help");
    const kgemm::CommandLine cli(int(own.size()), own.data(), options, flags);
    if (cli.has("help")) {
      std::cout << program.usage << common_help(program);
      return 0;
    }

    kgemm::KokkosArguments kokkos_arguments(int(kokkos_args.size()), kokkos_args.data());
    Kokkos::ScopeGuard kokkos(kokkos_arguments.argc(), kokkos_arguments.argv());
    const Selection selection = parse_selection(cli, program);
    program.register_benchmarks(selection, cli);
    add_context(selection);

    return run_registered_rows(benchmark_args);
  } catch (const std::exception& e) {
    std::cerr << program.name << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace kgemm_bench
