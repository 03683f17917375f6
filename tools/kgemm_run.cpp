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

namespace {

using kgemm::cli::Format;

const char* dtype_name(kgemm::DType dtype) { return dtype == kgemm::DType::F32 ? "fp32" : "fp16"; }

// One run's GEMMs: a model at one image size and batch, or the given shapes at one batch.
struct GemmSet {
  std::string name;   // resnet18_i224_b1 | shapes_b1
  std::string model;  // empty for --shape
  int image = 0;      // 0 for --shape
  int batch = 1;
  std::vector<kgemm::LayerShape> layers;
};

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
        throw std::invalid_argument(set.name + ", " + layer.layer + ": " + why);
    }
  plan.reps = options.reps;
  plan.config = options.config;
  plan.format = options.format;
  plan.progress = options.progress;
  plan.why = options.why;
  plan.why_store = options.why_store.value_or("");
  return plan;
}

struct LayerResult {
  kgemm::LayerShape shape;
  kgemm::Problem problem;
  std::string config;
  std::optional<kgemm::DispatchChoice> why;  // --why
  double kernel_s = 0, launch_s = 0, call_s = 0, transfer_s = 0;
  double max_rel_err = 0, mean_rel_err = 0;

  double flops() const { return problem.flops(); }
  double gflops() const { return flops() / kernel_s * 1e-9; }
};

struct RunResult {
  std::string space;        // as typed in --space, lower case
  std::string space_label;  // Kokkos' name: OpenMP, Cuda
  kgemm::DeviceInfo device;
  std::string dtype;
  const GemmSet* set = nullptr;
  std::shared_ptr<const kgemm::TunedConfigs> tuned;  // what dispatch reads for the space
  std::string team_scratch;  // the block's team scratch limit in force and why, where one caps it
  bool host_memory = true;
  std::vector<LayerResult> layers;
};

// A forward pass: each layer's per-call numbers times its count, summed.
struct Totals {
  int gemms = 0;
  double kernel_s = 0, launch_s = 0, call_s = 0, transfer_s = 0, flops = 0;
  double max_rel_err = 0, mean_rel_err = 0;  // largest over the layers; count-weighted mean

  double gflops() const { return flops / kernel_s * 1e-9; }
};

Totals forward_pass(const RunResult& run) {
  Totals t;
  double weighted_error = 0;
  for (const LayerResult& layer : run.layers) {
    const int count = layer.shape.count;
    t.gemms += count;
    t.kernel_s += count * layer.kernel_s;
    t.launch_s += count * layer.launch_s;
    t.call_s += count * layer.call_s;
    t.transfer_s += count * layer.transfer_s;
    t.flops += count * layer.flops();
    t.max_rel_err = std::max(t.max_rel_err, layer.max_rel_err);
    weighted_error += count * layer.mean_rel_err;
  }
  t.mean_rel_err = weighted_error / t.gemms;
  return t;
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
                 run.dtype.c_str(), run.set->name.c_str(), shape.layer.c_str(), shape.m, shape.n, shape.k);
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
  run.dtype = dtype_name(kgemm::dtype_of<Scalar>());
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

// ---- output ----

std::string number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Errors and times as JSON numbers (a non-finite error, a broken kernel's, becomes null).
std::string json_number(double value) { return std::isfinite(value) ? number("%.9g", value) : "null"; }

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char ch : text) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += char(ch);
    else if (ch < 0x20)
      out += number("\\u%04x", ch);
    else
      out += char(ch);
  }
  return out + "\"";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string transfer_note(const RunResult& run) {
  return run.host_memory ? " (host space: the operands are in host memory already)" : "";
}

// The geometric-mean line comes last, as scripts that read a run's last line expect.
void print_table(const RunResult& run, bool first) {
  const GemmSet& set = *run.set;
  if (!first) std::printf("\n");
  if (set.model.empty())
    std::printf("kgemm-run: %zu shapes, batch %d, %s, space %s (%d threads), Kokkos %s\n", set.layers.size(),
                set.batch, run.dtype.c_str(), run.space_label.c_str(), run.device.threads,
                kgemm::kokkos_version_string().c_str());
  else
    std::printf("kgemm-run: %s, image %d, batch %d, %s, space %s (%d threads), Kokkos %s\n", set.model.c_str(),
                set.image, set.batch, run.dtype.c_str(), run.space_label.c_str(), run.device.threads,
                kgemm::kokkos_version_string().c_str());
  std::printf("device: %s\ntuned configs: %s\n", kgemm::to_string(run.device).c_str(),
              kgemm::describe(run.tuned->serving(), run.device).c_str());
  if (!run.team_scratch.empty()) std::printf("team scratch per block: %s\n", run.team_scratch.c_str());
  std::printf("%-3s %-26s %9s %5s %5s %5s  %-34s %10s %10s %10s %12s %9s %11s %11s\n", "#", "layer", "M", "N", "K",
              "count", "config", "kernel[ms]", "launch[ms]", "call[ms]", "transfer[ms]", "GFLOP/s", "max rel err",
              "mean rel err");
  double log_sum = 0;
  int index = 0;
  for (const LayerResult& l : run.layers) {
    log_sum += std::log(l.gflops());
    std::printf("%-3d %-26s %9d %5d %5d %5d  %-34s %10.3f %10.3f %10.3f %12.3f %9.1f %11.2e %11.2e\n", ++index,
                l.shape.layer.c_str(), l.shape.m, l.shape.n, l.shape.k, l.shape.count, l.config.c_str(),
                l.kernel_s * 1e3, l.launch_s * 1e3, l.call_s * 1e3, l.transfer_s * 1e3, l.gflops(), l.max_rel_err,
                l.mean_rel_err);
  }
  const Totals t = forward_pass(run);
  std::printf("%s (%d GEMMs, sum of count x kernel): %.3f ms = %.6f s, %.1f GFLOP/s; summed the same way: "
              "launch %.3f ms, call %.3f ms, transfer %.3f ms%s; max rel err %.2e, mean %.2e\n",
              set.model.empty() ? "all shapes" : "forward pass", t.gemms, t.kernel_s * 1e3, t.kernel_s, t.gflops(),
              t.launch_s * 1e3, t.call_s * 1e3, t.transfer_s * 1e3, transfer_note(run).c_str(), t.max_rel_err,
              t.mean_rel_err);
  std::printf("geometric mean over %zu shapes: %.1f GFLOP/s\n", run.layers.size(),
              std::exp(log_sum / run.layers.size()));
  std::fflush(stdout);
}

// ---- why: the dispatch model's choice per layer ----

// The comparable entry closest in shape (store order on ties): what a nearest-neighbour
// dispatch would run, printed beside the model's choice.
const kgemm::TunedEntry* nearest_entry(const kgemm::ConfigStore* store, const kgemm::Problem& problem) {
  const kgemm::TunedEntry* nearest = nullptr;
  double closest = 0;
  if (store)
    for (const kgemm::TunedEntry& entry : store->entries())
      if (kgemm::comparable(entry.problem, problem)) {
        const double distance = kgemm::shape_distance(entry.problem, problem);
        if (!nearest || distance < closest) nearest = &entry, closest = distance;
      }
  return nearest;
}

struct WhyRow {
  const kgemm::LayerShape* shape;
  std::string config;  // empty: the space default of a device that is not here
  kgemm::DispatchChoice::Source source;
  std::optional<kgemm::RatePrediction> prediction;
  const kgemm::TunedEntry* nearest;
  double measured_gflops = 0;  // 0: not run
};

std::string extents(const kgemm::Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
         (p.batch > 1 ? "b" + std::to_string(p.batch) : "");
}

void print_why(const std::vector<WhyRow>& rows) {
  std::printf("why: predicted = source GFLOP/s x fit x busy here / fit x busy at the source x trust; fit = padding x "
              "fill x depth, busy = share of the call multiplying, the rest split K's sum pass (here/source); nearest = "
              "the config of the closest tuned shape ('=' when the same)\n");
  std::printf("%-3s %-26s %-16s %-46s %-11s %-18s %9s %11s %11s %11s %11s %5s %9s %9s  %s\n", "#", "layer", "MxNxK",
              "config", "from", "source MxNxK", "source GF", "padding", "fill", "depth", "busy", "trust", "predicted",
              "measured", "nearest");
  const auto pair = [](double here, double there) { return number("%.2f", here) + "/" + number("%.2f", there); };
  int index = 0;
  for (const WhyRow& row : rows) {
    const std::string config = row.config.empty() ? "(space default)" : row.config;
    const std::string nearest = !row.nearest ? "-" : kgemm::to_string(row.nearest->config) == row.config ? "=" : kgemm::to_string(row.nearest->config);
    const std::string measured = row.measured_gflops > 0 ? number("%.1f", row.measured_gflops) : "-";
    const std::string shape = std::to_string(row.shape->m) + "x" + std::to_string(row.shape->n) + "x" + std::to_string(row.shape->k);
    if (const auto& r = row.prediction)
      std::printf("%-3d %-26s %-16s %-46s %-11s %-18s %9.1f %11s %11s %11s %11s %5.2f %9.1f %9s  %s\n", ++index,
                  row.shape->layer.c_str(), shape.c_str(), config.c_str(), kgemm::to_string(row.source),
                  extents(r->source.problem).c_str(),
                  r->source.gflops, pair(r->on_problem.padding, r->on_source.padding).c_str(),
                  pair(r->on_problem.fill, r->on_source.fill).c_str(), pair(r->on_problem.depth, r->on_source.depth).c_str(),
                  pair(r->busy, r->source_busy).c_str(), r->trust, r->gflops, measured.c_str(), nearest.c_str());
    else
      std::printf("%-3d %-26s %-16s %-46s %-11s %-18s %9s %11s %11s %11s %11s %5s %9s %9s  %s\n", ++index,
                  row.shape->layer.c_str(), shape.c_str(), config.c_str(), kgemm::to_string(row.source), "-", "-", "-",
                  "-", "-", "-", "-", "-", measured.c_str(), nearest.c_str());
  }
}

const char* kWhyCsvHeader =
    "set,dtype,layer,m,n,k,config,from,source_m,source_n,source_k,source_batch,source_gflops,padding,source_padding,"
    "fill,source_fill,depth,source_depth,busy,source_busy,trust,predicted_gflops,nearest_config\n";

// --why-store --format csv: one line per layer; the source's columns are empty for the space default.
void print_why_csv(const GemmSet& set, kgemm::DType dtype, const std::vector<WhyRow>& rows) {
  for (const WhyRow& row : rows) {
    std::printf("%s,%s,%s,%d,%d,%d,%s,%s,", set.name.c_str(), dtype_name(dtype), csv_field(row.shape->layer).c_str(),
                row.shape->m, row.shape->n, row.shape->k, row.config.c_str(), kgemm::to_string(row.source));
    if (const auto& r = row.prediction) {
      const kgemm::Problem& p = r->source.problem;
      std::printf("%d,%d,%d,%d,%.6g,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.6g,", p.m, p.n, p.k, p.batch,
                  r->source.gflops, r->on_problem.padding, r->on_source.padding, r->on_problem.fill, r->on_source.fill,
                  r->on_problem.depth, r->on_source.depth, r->busy, r->source_busy, r->trust, r->gflops);
    } else {
      std::printf(",,,,,,,,,,,,,,,");
    }
    std::printf("%s\n", row.nearest ? kgemm::to_string(row.nearest->config).c_str() : "");
  }
}

void print_run_why(const RunResult& run) {
  const std::optional<kgemm::ConfigStore>& store = run.tuned->serving().store;
  std::vector<WhyRow> rows;
  for (const LayerResult& l : run.layers)
    rows.push_back({&l.shape, l.config, l.why->source, l.why->prediction, nearest_entry(store ? &*store : nullptr, l.problem),
                    l.gflops()});
  print_why(rows);
}

// --why-store: the model's choice from a store file for every layer, nothing run.
void explain_store(const Plan& plan) {
  std::vector<std::string> refused;
  const kgemm::ConfigStore store = kgemm::ConfigStore::load(plan.why_store, &refused);
  for (const std::string& why : refused) std::fprintf(stderr, "kgemm-run: ignoring a tuned entry: %s\n", why.c_str());
  bool first = true;
  const bool csv = plan.format == Format::Csv;
  if (csv) std::printf("%s", kWhyCsvHeader);
  for (const GemmSet& set : plan.sets)
    for (kgemm::DType dtype : plan.dtypes) {
      const std::string generation = kgemm::generation_note(store);
      if (!csv)
        std::printf("%skgemm-run: dispatch of %s, %s from %s, tuned for %s (nothing run; legality there not checked)%s\n",
                    first ? "" : "\n", set.name.c_str(), dtype_name(dtype), plan.why_store.c_str(),
                    kgemm::to_string(store.header.device).c_str(), generation.empty() ? "" : ("; " + generation).c_str());
      first = false;
      std::vector<WhyRow> rows;
      for (const kgemm::LayerShape& layer : set.layers) {
        const kgemm::Problem problem{kgemm::Kernel::Gemm, dtype, 'n', 'n', layer.m, layer.n, layer.k, 1};
        const std::vector<kgemm::RatePrediction> ranked = kgemm::rank_stored_configs(store, problem);
        if (ranked.empty()) {
          rows.push_back({&layer, "", kgemm::DispatchChoice::Source::Default, std::nullopt, nullptr});
          continue;
        }
        const auto source = ranked[0].exact ? kgemm::DispatchChoice::Source::Exact : kgemm::DispatchChoice::Source::Model;
        rows.push_back({&layer, kgemm::to_string(ranked[0].config), source, ranked[0], nearest_entry(&store, problem)});
      }
      if (csv)
        print_why_csv(set, dtype, rows);
      else
        print_why(rows);
    }
}

// The practice's table: forward-pass seconds per model, image size, batch and dtype, one column per space.
void print_forward_summary(const std::vector<RunResult>& runs, const Plan& plan) {
  std::vector<std::string> labels;
  for (const RunResult& run : runs)
    if (std::find(labels.begin(), labels.end(), run.space_label) == labels.end()) labels.push_back(run.space_label);
  std::printf("forward pass, seconds (sum over the layers of count x kernel time):\n%-10s %6s %6s %-6s", "model",
              "image", "batch", "dtype");
  for (const std::string& label : labels) std::printf(" %14s", label.c_str());
  std::printf("\n");
  for (const GemmSet& set : plan.sets)
    for (kgemm::DType dtype : plan.dtypes) {
      std::printf("%-10s %6s %6d %-6s", set.model.empty() ? "shapes" : set.model.c_str(),
                  set.image ? std::to_string(set.image).c_str() : "-", set.batch, dtype_name(dtype));
      for (const std::string& label : labels)
        for (const RunResult& run : runs)
          if (run.set == &set && run.dtype == dtype_name(dtype) && run.space_label == label)
            std::printf(" %14.6f", forward_pass(run).kernel_s);
      std::printf("\n");
    }
}

const char* kCsvHeader =
    "row,space,device,dtype,set,model,image,batch,layer,m,n,k,count,config,kernel_ms,launch_ms,call_ms,"
    "transfer_ms,gflops,max_rel_err,mean_rel_err,forward_ms,forward_s\n";

// Layer rows: per-call numbers, forward_ms = count x kernel_ms (the layer's share of a forward
// pass). The forward row: every time column summed as count x time over the layers.
void print_csv(const RunResult& run) {
  const GemmSet& set = *run.set;
  const std::string prefix = csv_field(run.space) + "," + csv_field(run.device.device) + "," + run.dtype + "," +
                             set.name + "," + set.model + "," + (set.image ? std::to_string(set.image) : "") + "," +
                             std::to_string(set.batch) + ",";
  const auto times = [](double kernel, double launch, double call, double transfer, double gflops, double max_err,
                        double mean_err, double forward) {
    return number("%.9g", kernel * 1e3) + "," + number("%.9g", launch * 1e3) + "," + number("%.9g", call * 1e3) + "," +
           number("%.9g", transfer * 1e3) + "," + number("%.6g", gflops) + "," + number("%.4g", max_err) + "," +
           number("%.4g", mean_err) + "," + number("%.9g", forward * 1e3) + "," + number("%.9g", forward);
  };
  for (const LayerResult& l : run.layers)
    std::printf("layer,%s%s,%d,%d,%d,%d,%s,%s\n", prefix.c_str(), csv_field(l.shape.layer).c_str(), l.shape.m,
                l.shape.n, l.shape.k, l.shape.count, l.config.c_str(),
                times(l.kernel_s, l.launch_s, l.call_s, l.transfer_s, l.gflops(), l.max_rel_err, l.mean_rel_err,
                      l.shape.count * l.kernel_s)
                    .c_str());
  const Totals t = forward_pass(run);
  std::printf("forward,%sforward pass,,,,%d,,%s\n", prefix.c_str(), t.gemms,
              times(t.kernel_s, t.launch_s, t.call_s, t.transfer_s, t.gflops(), t.max_rel_err, t.mean_rel_err,
                    t.kernel_s)
                  .c_str());
  kgemm::flush_output();
}

void print_json(const std::vector<RunResult>& runs, const Plan& plan) {
  std::printf("{\n  \"tool\": \"kgemm-run\",\n  \"kokkos_version\": %s,\n  \"reps\": %d,\n  \"runs\": [",
              json_string(kgemm::kokkos_version_string()).c_str(), plan.reps);
  const char* run_separator = "\n";
  for (const RunResult& run : runs) {
    const GemmSet& set = *run.set;
    std::printf("%s    {\"space\": %s, \"space_label\": %s, \"device\": %s, \"arch\": %s, \"threads\": %d,\n", run_separator,
                json_string(run.space).c_str(), json_string(run.space_label).c_str(),
                json_string(run.device.device).c_str(), json_string(run.device.arch).c_str(), run.device.threads);
    const kgemm::ServingStore& serving = run.tuned->serving();
    std::printf("     \"dtype\": %s, \"set\": %s, \"model\": %s, \"image\": %s, \"batch\": %d, \"store\": %s, "
                "\"store_match\": %s,\n",
                json_string(run.dtype).c_str(), json_string(set.name).c_str(),
                set.model.empty() ? "null" : json_string(set.model).c_str(),
                set.image ? std::to_string(set.image).c_str() : "null", set.batch,
                serving.path.empty() ? "null" : json_string(serving.path).c_str(),
                json_string(kgemm::to_string(serving.match)).c_str());
    std::printf("     \"operands_in_host_memory\": %s,\n     \"layers\": [", run.host_memory ? "true" : "false");
    const char* layer_separator = "\n";
    for (const LayerResult& l : run.layers) {
      std::printf("%s       {\"layer\": %s, \"m\": %d, \"n\": %d, \"k\": %d, \"count\": %d, \"config\": %s, "
                  "\"kernel_ms\": %s, \"launch_ms\": %s, \"call_ms\": %s, \"transfer_ms\": %s, \"gflops\": %s, "
                  "\"max_rel_err\": %s, \"mean_rel_err\": %s}",
                  layer_separator, json_string(l.shape.layer).c_str(), l.shape.m, l.shape.n, l.shape.k, l.shape.count,
                  json_string(l.config).c_str(), json_number(l.kernel_s * 1e3).c_str(),
                  json_number(l.launch_s * 1e3).c_str(), json_number(l.call_s * 1e3).c_str(),
                  json_number(l.transfer_s * 1e3).c_str(), json_number(l.gflops()).c_str(),
                  json_number(l.max_rel_err).c_str(), json_number(l.mean_rel_err).c_str());
      layer_separator = ",\n";
    }
    const Totals t = forward_pass(run);
    std::printf("],\n     \"forward\": {\"gemms\": %d, \"kernel_ms\": %s, \"kernel_s\": %s, \"launch_ms\": %s, "
                "\"call_ms\": %s, \"transfer_ms\": %s, \"gflops\": %s, \"max_rel_err\": %s, \"mean_rel_err\": %s}}",
                t.gemms, json_number(t.kernel_s * 1e3).c_str(), json_number(t.kernel_s).c_str(),
                json_number(t.launch_s * 1e3).c_str(), json_number(t.call_s * 1e3).c_str(),
                json_number(t.transfer_s * 1e3).c_str(), json_number(t.gflops()).c_str(),
                json_number(t.max_rel_err).c_str(), json_number(t.mean_rel_err).c_str());
    run_separator = ",\n";
  }
  std::printf("\n  ]\n}\n");
}

void list_shapes(const Plan& plan) {
  std::printf("set,layer,m,n,k\n");
  for (const GemmSet& set : plan.sets)
    for (const kgemm::LayerShape& s : set.layers)
      std::printf("%s,%s,%d,%d,%d\n", set.name.c_str(), csv_field(s.layer).c_str(), s.m, s.n, s.k);
}

void run_plan(const Plan& plan) {
  for (const std::string& name : plan.spaces) kgemm::with_space(name, [](auto) {});  // throws for a missing one
  if (plan.format == Format::Csv) std::printf("%s", kCsvHeader);
  Progress progress(plan.progress, plan.layer_runs());
  std::vector<RunResult> runs;
  for (const std::string& name : plan.spaces)
    kgemm::with_space(name, [&](auto space) {
      for (kgemm::DType dtype : plan.dtypes)
        for (const GemmSet& set : plan.sets) {
          runs.push_back(dtype == kgemm::DType::F32 ? run_set<float>(space, name, set, plan, progress)
                                                    : run_set<kgemm::half>(space, name, set, plan, progress));
          if (plan.format == Format::Table) print_table(runs.back(), runs.size() == 1);
          if (plan.why) print_run_why(runs.back());
          if (plan.format == Format::Csv) print_csv(runs.back());
        }
    });
  if (plan.format == Format::Table && runs.size() > 1) {
    std::printf("\n");
    print_forward_summary(runs, plan);
  }
  if (plan.format == Format::Json) print_json(runs, plan);
}

}  // namespace

int main(int argc, char** argv) {
  return kgemm::run_tool("kgemm-run", [&] {
    const std::optional<kgemm::cli::RunOptions> options = kgemm::cli::parse_run(kgemm::cli::own_words(argc, argv));
    if (!options) return 0;
    const Plan plan = make_plan(*options);
    if (options->list_shapes) {
      list_shapes(plan);
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
