// kgemm-run: the main job and the course's instrument. Runs every distinct im2col GEMM of a
// ResNet (or given shapes) through kgemm::gemm (configs from the tuned store when there is one,
// else the space defaults) on one or more execution spaces in one process, and reports per layer
// the kernel, launch, call and transfer times, GFLOP/s and the error against an fp64 reference;
// per model the forward pass: each layer's time times its number of occurrences, summed.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kgemm.hpp"
#include "kgemm/cli/options.hpp"
#include "kgemm/cli/run_options.hpp"
#include "kgemm/fill.hpp"
#include "kgemm/spaces/compat.hpp"
#include "kgemm/spaces/team_scratch.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/tuner/catalogue.hpp"
#include "kgemm/tuner/hashed_reference.hpp"
#include "kgemm/tuner/first_use.hpp"
#include "kgemm/tuner/kokkos_session.hpp"
#include "kgemm/tuner/timing.hpp"
#include "kgemm/tuner/tool_output.hpp"
#include "run_report.hpp"

namespace {

using namespace kgemm_run;

// Everything the command line asks for, checked before Kokkos starts (the spaces after).
struct Plan {
  std::vector<std::string> spaces;
  std::vector<kgemm::DType> dtypes;
  std::vector<GemmSet> sets;
  int reps = 10;
  std::optional<kgemm::Config> config;
  Format format = Format::Table;
  bool progress = false;
  bool why = false;
  std::string why_store;  // --why-store: explain from this file, run nothing

  int layer_runs() const {
    std::size_t layers = 0;
    for (const GemmSet& set : sets) layers += set.layers.size();
    return int(layers * spaces.size() * dtypes.size());
  }
};

std::vector<GemmSet> gemm_sets(const kgemm::cli::RunOptions& options) {
  std::vector<GemmSet> sets;
  for (int batch : options.batches) {
    if (!options.shapes.empty()) {
      GemmSet set{"shapes_b" + std::to_string(batch), "", 0, batch, {}};
      for (const std::string& text : options.shapes) set.layers.push_back(kgemm::parse_shape(text, batch));
      sets.push_back(set);
      continue;
    }
    for (int image : options.images)
      sets.push_back({options.model + "_i" + std::to_string(image) + "_b" + std::to_string(batch), options.model, image,
                      batch, kgemm::resnet_gemm_shapes(options.model, image, batch)});
  }
  return sets;
}

Plan make_plan(const kgemm::cli::RunOptions& options) {
  Plan plan;
  plan.spaces = options.spaces;
  for (const std::string& name : options.dtypes) plan.dtypes.push_back(kgemm::parse_dtype(name));
  plan.sets = gemm_sets(options);
  for (const GemmSet& set : plan.sets)
    for (const kgemm::LayerShape& layer : set.layers) {
      kgemm::Problem problem;
      problem.m = layer.m, problem.n = layer.n, problem.k = layer.k;
      if (const std::string why = kgemm::why_invalid(problem); !why.empty())
        throw kgemm::InvalidArgument(set.name + ", " + layer.layer + ": " + why);
    }
  plan.reps = options.reps;
  plan.config = options.config;
  plan.format = options.format;
  plan.progress = options.progress;
  plan.why = options.why;
  plan.why_store = options.why_store.value_or("");
  return plan;
}

// Errors of C's sampled rows against the fp64 product of the inputs as fill_uniform generated
// them: for fp16 data that includes rounding the inputs, which is what fp16 costs a network.
template <class Matrix>
void measure_error(const Matrix& C, const kgemm::LayerShape& shape, std::uint64_t seed_a, std::uint64_t seed_b,
                   LayerResult& result) {
  const std::vector<int> rows = kgemm::sample_rows(shape.m, 16, seed_a);
  const kgemm::ProductRows reference = kgemm::hashed_product_rows<float>(seed_a, rows, shape.k, seed_b, 0, shape.n);
  kgemm::RelativeError error;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto host_row = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(C, rows[r], Kokkos::ALL));
    for (int j = 0; j < shape.n; ++j) error.add(double(float(host_row(j))), reference.exact[r * shape.n + j]);
  }
  result.max_rel_err = error.max_relative();
  result.mean_rel_err = error.mean_relative();
}

template <class Scalar, class ExecSpace>
LayerResult measure_layer(const ExecSpace& space, const kgemm::LayerShape& shape, int index, const Plan& plan) {
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
  const std::uint64_t seed_a = 2 * index + 1, seed_b = 2 * index + 2;
  Matrix A("A", shape.m, shape.k), B("B", shape.k, shape.n), C("C", shape.m, shape.n);
  kgemm::fill_uniform(A, seed_a);
  kgemm::fill_uniform(B, seed_b);
  kgemm::Options options;
  options.config = plan.config;
  const auto call = [&] { kgemm::gemm(space, kgemm::Op::N, kgemm::Op::N, 1.0f, A, B, 0.0f, C, options); };

  LayerResult result;
  result.shape = shape;
  const kgemm::Problem problem =
      kgemm::problem_of(kgemm::gemm_args(kgemm::Op::N, kgemm::Op::N, 1.0f, A, B, 0.0f, C), false);
  result.problem = problem;
  result.config = kgemm::to_string(plan.config ? *plan.config : kgemm::select_config<ExecSpace>(problem));
  if (plan.why) result.why = kgemm::explain_config<ExecSpace>(problem);
  result.kernel_s = kgemm::time_calls(space, call, 1, plan.reps).median_s;
  // On host spaces the work runs inside the call, so launch and call repeat the kernel's
  // measurement: a few calls show that without doubling a long CPU run.
  const int overhead_calls = std::min(plan.reps, kgemm::CallClock<ExecSpace>::queues ? 10 : 3);
  const kgemm::CallOverheads overheads = kgemm::time_call_overheads(space, overhead_calls, [&](int) { call(); });
  result.launch_s = overheads.launch_s;
  result.call_s = overheads.complete_s;
  space.fence();
  measure_error(C, shape, seed_a, seed_b, result);
  // Last: the copies overwrite A and B with the host mirrors' contents.
  result.transfer_s = kgemm::transfer_seconds(space, A, B, C, std::min(plan.reps, 5));
  return result;
}

class Progress {
 public:
  Progress(bool enabled, int total) : enabled_(enabled), total_(total) {}
  void layer(const RunResult& run, const kgemm::LayerShape& shape) {
    ++done_;
    if (!enabled_) return;
    std::fprintf(stderr, "kgemm-run: [%d/%d] %s %s %s: %s (%dx%dx%d)\n", done_, total_, run.space_label.c_str(),
                 kgemm::dtype_name(run.dtype), run.set->name.c_str(), shape.layer.c_str(), shape.m, shape.n, shape.k);
    std::fflush(stderr);
  }

 private:
  bool enabled_;
  int total_, done_ = 0;
};

template <class Scalar, class ExecSpace>
RunResult run_set(const ExecSpace& space, const std::string& space_name, const GemmSet& set, const Plan& plan,
                  Progress& progress) {
  RunResult run;
  run.space = space_name;
  run.space_label = ExecSpace::name();
  run.device = kgemm::device_info<ExecSpace>();
  run.dtype = kgemm::dtype_of<Scalar>();
  run.set = &set;
  run.tuned = kgemm::tuned_configs(ExecSpace::name(), [&] { return run.device; });
  if (const kgemm::TeamScratchLimit& limit = kgemm::team_scratch_limit<ExecSpace>(); limit.block_bytes > 0)
    run.team_scratch = limit.why;
  run.host_memory = kgemm::in_host_memory<typename ExecSpace::memory_space>;
  int index = 0;
  for (const kgemm::LayerShape& shape : set.layers) {
    progress.layer(run, shape);
    run.layers.push_back(measure_layer<Scalar>(space, shape, index++, plan));
  }
  return run;
}

// --why-store: the model's choice from a store file for every layer, nothing run.
void explain_store(const Plan& plan) {
  std::vector<std::string> refused;
  const kgemm::ConfigStore store = kgemm::ConfigStore::load(plan.why_store, &refused);
  for (const std::string& why : refused) std::fprintf(stderr, "kgemm-run: ignoring a tuned entry: %s\n", why.c_str());
  const std::string generation = kgemm::generation_note(store);
  begin_why_store(plan.format);
  bool first = true;
  for (const GemmSet& set : plan.sets)
    for (kgemm::DType dtype : plan.dtypes) {
      const std::string title = std::string(first ? "" : "\n") + "kgemm-run: dispatch of " + set.name + ", " +
                                kgemm::dtype_name(dtype) + " from " + plan.why_store + ", tuned for " +
                                kgemm::to_string(store.header.device) + " (nothing run; legality there not checked)" +
                                (generation.empty() ? "" : "; " + generation);
      first = false;
      std::vector<WhyRow> rows;
      for (const kgemm::LayerShape& layer : set.layers) {
        const kgemm::Problem problem{kgemm::Kernel::Gemm, dtype, 'n', 'n', layer.m, layer.n, layer.k, 1};
        // The store's device is not here: its legality there is not checked (every config runs).
        kgemm::DispatchChoice choice = kgemm::choose_stored(
            store, problem, store.header.device, [] { return kgemm::Config{}; }, [](const auto&) { return true; });
        if (choice.source == kgemm::DispatchChoice::Source::Default) {
          rows.push_back({&layer, "", choice.source, std::nullopt, nullptr});
          continue;
        }
        rows.push_back({&layer, kgemm::to_string(choice.config), choice.source, std::move(choice.prediction),
                        nearest_entry(&store, problem)});
      }
      write_why_store(plan.format, set, dtype, title, rows);
    }
}

void run_plan(const Plan& plan) {
  for (const std::string& name : plan.spaces) kgemm::with_space(name, [](auto) {});  // throws for a missing one
  Reporter report(plan.format, plan.reps);
  report.begin();
  Progress progress(plan.progress, plan.layer_runs());
  std::vector<RunResult> runs;
  for (const std::string& name : plan.spaces)
    kgemm::with_space(name, [&](auto space) {
      for (kgemm::DType dtype : plan.dtypes)
        for (const GemmSet& set : plan.sets) {
          runs.push_back(dtype == kgemm::DType::F32 ? run_set<float>(space, name, set, plan, progress)
                                                    : run_set<kgemm::half>(space, name, set, plan, progress));
          report.run(runs.back());
          if (plan.why) report.why(runs.back());
        }
    });
  report.end(runs, plan.sets, plan.dtypes);
}

}  // namespace

int main(int argc, char** argv) {
  return kgemm::run_tool("kgemm-run", [&] {
    const std::optional<kgemm::cli::RunOptions> options = kgemm::cli::parse_run(kgemm::cli::own_words(argc, argv));
    if (!options) return 0;
    const Plan plan = make_plan(*options);
    if (options->list_shapes) {
      write_shapes(plan.sets);
      return 0;
    }
    if (options->why_store) {
      explain_store(plan);
      return 0;
    }
    const kgemm::KokkosSession kokkos(argc, argv);
    kgemm::enable_tuning_on_first_use();
    run_plan(plan);
    return 0;
  });
}
