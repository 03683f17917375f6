#include "run_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kgemm/dispatch/dispatch_model.hpp"
#include "kgemm/spaces/compat.hpp"
#include "kgemm/tuner/tool_output.hpp"
#include "report.hpp"

namespace kgemm_run {
namespace {

using kgemm::report::Columns;
using kgemm::report::csv_field;
using kgemm::report::Json;
using kgemm::report::kCsv;
using kgemm::report::kJson;
using kgemm::report::kTable;
using kgemm::report::Style;
using kgemm::report::Value;

// The forward pass's JSON object: the row's columns that also describe a whole pass.
constexpr unsigned kJsonForward = kgemm::report::kFirstOwn;

// ---- the measurements: a line per layer and per forward pass ----

// A layer, or a forward pass: each layer's per-call numbers times its count, summed (errors: the
// largest, and the count-weighted mean).
struct Row {
  std::string layer;
  std::optional<kgemm::LayerShape> shape;  // a layer's
  int count = 0;                           // a layer's occurrences; a forward pass's GEMMs
  std::string config;                      // a layer's
  double kernel_s = 0, launch_s = 0, call_s = 0, transfer_s = 0, flops = 0;
  double max_rel_err = 0, mean_rel_err = 0;
  double forward_s = 0;  // the row's share of a forward pass: count x kernel for a layer

  double gflops() const { return flops / kernel_s * 1e-9; }
};

Row layer_row(const LayerResult& l) {
  Row r{l.shape.layer, l.shape, l.shape.count, l.config, l.kernel_s, l.launch_s, l.call_s, l.transfer_s, l.problem.flops(),
        l.max_rel_err, l.mean_rel_err, 0};
  r.forward_s = r.count * r.kernel_s;
  return r;
}

Row forward_row(const RunResult& run) {
  Row t;
  t.layer = run.set->model.empty() ? "all shapes" : "forward pass";
  double weighted_error = 0;
  for (const LayerResult& layer : run.layers) {
    const int count = layer.shape.count;
    t.count += count;
    t.kernel_s += count * layer.kernel_s;
    t.launch_s += count * layer.launch_s;
    t.call_s += count * layer.call_s;
    t.transfer_s += count * layer.transfer_s;
    t.flops += count * layer.problem.flops();
    t.max_rel_err = std::max(t.max_rel_err, layer.max_rel_err);
    weighted_error += count * layer.mean_rel_err;
  }
  t.mean_rel_err = weighted_error / t.count;
  t.forward_s = t.kernel_s;
  return t;
}

Value extent(const Row& r, int kgemm::LayerShape::*field) { return r.shape ? Value((*r.shape).*field) : Value(); }

const Columns<Row> kRowColumns{
    {"layer", "layer", 26, Style::Text, kTable | kCsv | kJson, [](const Row& r) -> Value { return r.layer; }},
    {"m", "M", 9, Style::Count, kTable | kCsv | kJson, [](const Row& r) { return extent(r, &kgemm::LayerShape::m); }},
    {"n", "N", 5, Style::Count, kTable | kCsv | kJson, [](const Row& r) { return extent(r, &kgemm::LayerShape::n); }},
    {"k", "K", 5, Style::Count, kTable | kCsv | kJson, [](const Row& r) { return extent(r, &kgemm::LayerShape::k); }},
    {"count", "count", 5, Style::Count, kTable | kCsv | kJson, [](const Row& r) -> Value { return r.count; }},
    {"config", "config", 34, Style::Text, kTable | kCsv | kJson,
     [](const Row& r) { return r.shape ? Value(r.config) : Value(); }},
    {"kernel_ms", "kernel[ms]", 10, Style::Time, kTable | kCsv | kJson | kJsonForward,
     [](const Row& r) -> Value { return r.kernel_s * 1e3; }},
    {"launch_ms", "launch[ms]", 10, Style::Time, kTable | kCsv | kJson | kJsonForward,
     [](const Row& r) -> Value { return r.launch_s * 1e3; }},
    {"call_ms", "call[ms]", 10, Style::Time, kTable | kCsv | kJson | kJsonForward,
     [](const Row& r) -> Value { return r.call_s * 1e3; }},
    {"transfer_ms", "transfer[ms]", 12, Style::Time, kTable | kCsv | kJson | kJsonForward,
     [](const Row& r) -> Value { return r.transfer_s * 1e3; }},
    {"gflops", "GFLOP/s", 9, Style::Rate, kTable | kCsv | kJson | kJsonForward,
     [](const Row& r) -> Value { return r.gflops(); }},
    {"max_rel_err", "max rel err", 11, Style::Error, kTable | kCsv | kJson | kJsonForward,
     [](const Row& r) -> Value { return r.max_rel_err; }},
    {"mean_rel_err", "mean rel err", 11, Style::Error, kTable | kCsv | kJson | kJsonForward,
     [](const Row& r) -> Value { return r.mean_rel_err; }},
    {"forward_ms", "", 0, Style::Time, kCsv, [](const Row& r) -> Value { return r.forward_s * 1e3; }},
    {"forward_s", "", 0, Style::Time, kCsv, [](const Row& r) -> Value { return r.forward_s; }},
};

// What every row of a run shares: the CSV columns before a row's, the JSON run's fields.
const Columns<RunResult> kRunColumns{
    {"space", "", 0, Style::Text, kCsv | kJson, [](const RunResult& r) -> Value { return r.space; }},
    {"space_label", "", 0, Style::Text, kJson, [](const RunResult& r) -> Value { return r.space_label; }},
    {"device", "", 0, Style::Text, kCsv | kJson, [](const RunResult& r) -> Value { return r.device.device; }},
    {"arch", "", 0, Style::Text, kJson, [](const RunResult& r) -> Value { return r.device.arch; }},
    {"threads", "", 0, Style::Count, kJson, [](const RunResult& r) -> Value { return r.device.threads; }},
    {"dtype", "", 0, Style::Text, kCsv | kJson, [](const RunResult& r) -> Value { return std::string(kgemm::dtype_name(r.dtype)); }},
    {"set", "", 0, Style::Text, kCsv | kJson, [](const RunResult& r) -> Value { return r.set->name; }},
    {"model", "", 0, Style::Text, kCsv | kJson,
     [](const RunResult& r) { return r.set->model.empty() ? Value() : Value(r.set->model); }},
    {"image", "", 0, Style::Count, kCsv | kJson,
     [](const RunResult& r) { return r.set->image ? Value(r.set->image) : Value(); }},
    {"batch", "", 0, Style::Count, kCsv | kJson, [](const RunResult& r) -> Value { return r.set->batch; }},
    {"store", "", 0, Style::Text, kJson, [](const RunResult& r) {
       const std::string& path = r.tuned->serving().path;
       return path.empty() ? Value() : Value(path);
     }},
    {"store_match", "", 0, Style::Text, kJson,
     [](const RunResult& r) -> Value { return std::string(kgemm::to_string(r.tuned->serving().match)); }},
    {"operands_in_host_memory", "", 0, Style::Text, kJson, [](const RunResult& r) -> Value { return r.host_memory; }},
};

// The geometric-mean line comes last, as scripts that read a run's last line expect.
void write_table(const RunResult& run, bool first) {
  const GemmSet& set = *run.set;
  if (!first) fmt::print("\n");
  const std::string what = set.model.empty() ? fmt::format("{} shapes", set.layers.size())
                                             : fmt::format("{}, image {}", set.model, set.image);
  fmt::print("kgemm-run: {}, batch {}, {}, space {} ({} threads), Kokkos {}\n", what, set.batch,
             kgemm::dtype_name(run.dtype), run.space_label, run.device.threads, kgemm::kokkos_version_string());
  fmt::print("device: {}\ntuned configs: {}\n", kgemm::to_string(run.device),
             kgemm::describe(run.tuned->serving(), run.device));
  if (!run.team_scratch.empty()) fmt::print("team scratch per block: {}\n", run.team_scratch);
  fmt::print("{:<3} {}\n", "#", kRowColumns.table_header());
  double log_sum = 0;
  int index = 0;
  for (const LayerResult& layer : run.layers) {
    const Row row = layer_row(layer);
    log_sum += std::log(row.gflops());
    fmt::print("{:<3} {}\n", ++index, kRowColumns.table_line(row));
  }
  const Row t = forward_row(run);
  fmt::print("{} ({} GEMMs, sum of count x kernel): {:.3f} ms = {:.6f} s, {:.1f} GFLOP/s; summed the same way: "
             "launch {:.3f} ms, call {:.3f} ms, transfer {:.3f} ms{}; max rel err {:.2e}, mean {:.2e}\n",
             t.layer, t.count, t.kernel_s * 1e3, t.kernel_s, t.gflops(), t.launch_s * 1e3, t.call_s * 1e3,
             t.transfer_s * 1e3, run.host_memory ? " (host space: the operands are in host memory already)" : "",
             t.max_rel_err, t.mean_rel_err);
  fmt::print("geometric mean over {} shapes: {:.1f} GFLOP/s\n", run.layers.size(), std::exp(log_sum / run.layers.size()));
  kgemm::flush_output();
}

// Layer rows: per-call numbers, forward_ms = count x kernel_ms (the layer's share of a forward
// pass). The forward row: every time column summed as count x time over the layers.
void write_csv(const RunResult& run) {
  const std::string shared = kRunColumns.csv_line(run);
  for (const LayerResult& layer : run.layers) fmt::print("layer,{},{}\n", shared, kRowColumns.csv_line(layer_row(layer)));
  fmt::print("forward,{},{}\n", shared, kRowColumns.csv_line(forward_row(run)));
  kgemm::flush_output();
}

Json run_json(const RunResult& run) {
  Json object = Json::object();
  kRunColumns.add_json(object, run);
  Json layers = Json::array();
  for (const LayerResult& layer : run.layers) {
    Json row = Json::object();
    kRowColumns.add_json(row, layer_row(layer));
    layers.push_back(row);
  }
  object["layers"] = layers;
  const Row t = forward_row(run);
  Json forward = {{"gemms", t.count}, {"kernel_s", t.kernel_s}};
  kRowColumns.add_json(forward, t, kJsonForward);
  object["forward"] = forward;
  return object;
}

// The practice's table: forward-pass seconds per model, image size, batch and dtype, one column per space.
void write_forward_summary(const std::vector<RunResult>& runs, const std::vector<GemmSet>& sets,
                           const std::vector<kgemm::DType>& dtypes) {
  std::vector<std::string> labels;
  for (const RunResult& run : runs)
    if (std::find(labels.begin(), labels.end(), run.space_label) == labels.end()) labels.push_back(run.space_label);
  fmt::print("forward pass, seconds (sum over the layers of count x kernel time):\n{:<10} {:>6} {:>6} {:<6}", "model",
             "image", "batch", "dtype");
  for (const std::string& label : labels) fmt::print(" {:>14}", label);
  fmt::print("\n");
  for (const GemmSet& set : sets)
    for (kgemm::DType dtype : dtypes) {
      fmt::print("{:<10} {:>6} {:>6} {:<6}", set.model.empty() ? "shapes" : set.model,
                 set.image ? std::to_string(set.image) : "-", set.batch, kgemm::dtype_name(dtype));
      for (const std::string& label : labels)
        for (const RunResult& run : runs)
          if (run.set == &set && run.dtype == dtype && run.space_label == label)
            fmt::print(" {:>14.6f}", forward_row(run).kernel_s);
      fmt::print("\n");
    }
}

// ---- why: the dispatch model's choice per layer ----

// A line of --why or --why-store: a layer's row, and the set and dtype CSV names it by.
struct WhyLine {
  const GemmSet* set;
  kgemm::DType dtype;
  const WhyRow* row;
};

Value predicted(const WhyLine& l, double (*field)(const kgemm::RatePrediction&)) {
  return l.row->prediction ? Value(field(*l.row->prediction)) : Value();
}
Value source_extent(const WhyLine& l, int kgemm::Problem::*field) {
  return l.row->prediction ? Value(l.row->prediction->source.problem.*field) : Value();
}
// A model factor here and at the source, as the table pairs them.
Value factor_pair(const WhyLine& l, double (*here)(const kgemm::RatePrediction&), double (*there)(const kgemm::RatePrediction&)) {
  if (!l.row->prediction) return {};
  return fmt::format("{:.2f}/{:.2f}", here(*l.row->prediction), there(*l.row->prediction));
}

using P = kgemm::RatePrediction;
const Columns<WhyLine> kWhyColumns{
    {"set", "", 0, Style::Text, kCsv, [](const WhyLine& l) -> Value { return l.set->name; }},
    {"dtype", "", 0, Style::Text, kCsv, [](const WhyLine& l) -> Value { return std::string(kgemm::dtype_name(l.dtype)); }},
    {"layer", "layer", 26, Style::Text, kTable | kCsv, [](const WhyLine& l) -> Value { return l.row->shape->layer; }},
    {"shape", "MxNxK", 16, Style::Text, kTable,
     [](const WhyLine& l) -> Value { return fmt::format("{}x{}x{}", l.row->shape->m, l.row->shape->n, l.row->shape->k); }},
    {"m", "", 0, Style::Count, kCsv, [](const WhyLine& l) -> Value { return l.row->shape->m; }},
    {"n", "", 0, Style::Count, kCsv, [](const WhyLine& l) -> Value { return l.row->shape->n; }},
    {"k", "", 0, Style::Count, kCsv, [](const WhyLine& l) -> Value { return l.row->shape->k; }},
    {"config", "config", 46, Style::Text, kTable | kCsv,
     [](const WhyLine& l) { return l.row->config.empty() ? Value() : Value(l.row->config); }},
    {"from", "from", 11, Style::Text, kTable | kCsv, [](const WhyLine& l) -> Value { return std::string(kgemm::to_string(l.row->source)); }},
    {"source", "source MxNxK", 18, Style::Text, kTable, [](const WhyLine& l) {
       if (!l.row->prediction) return Value();
       const kgemm::Problem& p = l.row->prediction->source.problem;
       return Value(fmt::format("{}x{}x{}{}", p.m, p.n, p.k, p.batch > 1 ? fmt::format("b{}", p.batch) : ""));
     }},
    {"source_m", "", 0, Style::Count, kCsv, [](const WhyLine& l) { return source_extent(l, &kgemm::Problem::m); }},
    {"source_n", "", 0, Style::Count, kCsv, [](const WhyLine& l) { return source_extent(l, &kgemm::Problem::n); }},
    {"source_k", "", 0, Style::Count, kCsv, [](const WhyLine& l) { return source_extent(l, &kgemm::Problem::k); }},
    {"source_batch", "", 0, Style::Count, kCsv, [](const WhyLine& l) { return source_extent(l, &kgemm::Problem::batch); }},
    {"source_gflops", "source GF", 9, Style::Rate, kTable | kCsv,
     [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.source.gflops; }); }},
    {"padding", "padding", 11, Style::Text, kTable, [](const WhyLine& l) {
       return factor_pair(l, [](const P& p) { return p.on_problem.padding; }, [](const P& p) { return p.on_source.padding; });
     }},
    {"fill", "fill", 11, Style::Text, kTable, [](const WhyLine& l) {
       return factor_pair(l, [](const P& p) { return p.on_problem.fill; }, [](const P& p) { return p.on_source.fill; });
     }},
    {"depth", "depth", 11, Style::Text, kTable, [](const WhyLine& l) {
       return factor_pair(l, [](const P& p) { return p.on_problem.depth; }, [](const P& p) { return p.on_source.depth; });
     }},
    {"busy", "busy", 11, Style::Text, kTable,
     [](const WhyLine& l) { return factor_pair(l, [](const P& p) { return p.busy; }, [](const P& p) { return p.source_busy; }); }},
    {"padding", "", 0, Style::Factor, kCsv, [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.on_problem.padding; }); }},
    {"source_padding", "", 0, Style::Factor, kCsv,
     [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.on_source.padding; }); }},
    {"fill", "", 0, Style::Factor, kCsv, [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.on_problem.fill; }); }},
    {"source_fill", "", 0, Style::Factor, kCsv, [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.on_source.fill; }); }},
    {"depth", "", 0, Style::Factor, kCsv, [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.on_problem.depth; }); }},
    {"source_depth", "", 0, Style::Factor, kCsv,
     [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.on_source.depth; }); }},
    {"busy", "", 0, Style::Factor, kCsv, [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.busy; }); }},
    {"source_busy", "", 0, Style::Factor, kCsv, [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.source_busy; }); }},
    {"trust", "trust", 5, Style::Factor, kTable | kCsv, [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.trust; }); }},
    {"predicted_gflops", "predicted", 9, Style::Rate, kTable | kCsv,
     [](const WhyLine& l) { return predicted(l, [](const P& p) { return p.gflops; }); }},
    {"measured", "measured", 9, Style::Rate, kTable,
     [](const WhyLine& l) { return l.row->measured_gflops > 0 ? Value(l.row->measured_gflops) : Value(); }},
    {"nearest_config", "nearest", 0, Style::Text, kCsv,
     [](const WhyLine& l) { return l.row->nearest ? Value(kgemm::to_string(l.row->nearest->config)) : Value(); }},
    {"nearest", "nearest", 0, Style::Text, kTable, [](const WhyLine& l) {
       if (!l.row->nearest) return Value();
       const std::string nearest = kgemm::to_string(l.row->nearest->config);
       return Value(nearest == l.row->config ? std::string("=") : nearest);
     }},
};

void write_why_table(const GemmSet& set, kgemm::DType dtype, const std::vector<WhyRow>& rows) {
  fmt::print("why: {}; nearest = the config of the closest tuned shape ('=' when the same)\n",
             kgemm::dispatch_model_summary());
  fmt::print("{:<3} {}\n", "#", kWhyColumns.table_header());
  int index = 0;
  for (const WhyRow& row : rows) fmt::print("{:<3} {}\n", ++index, kWhyColumns.table_line(WhyLine{&set, dtype, &row}));
}

}  // namespace

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

void Reporter::begin() {
  if (format_ == Format::Csv) fmt::print("row,{},{}\n", kRunColumns.csv_header(), kRowColumns.csv_header());
}

void Reporter::run(const RunResult& run) {
  if (format_ == Format::Table) write_table(run, runs_ == 0);
  if (format_ == Format::Csv) write_csv(run);
  ++runs_;
}

void Reporter::why(const RunResult& run) {
  const std::optional<kgemm::ConfigStore>& store = run.tuned->serving().store;
  std::vector<WhyRow> rows;
  for (const LayerResult& l : run.layers)
    rows.push_back({&l.shape, l.config, l.why->source, l.why->prediction, nearest_entry(store ? &*store : nullptr, l.problem),
                    layer_row(l).gflops()});
  write_why_table(*run.set, run.dtype, rows);
}

void Reporter::end(const std::vector<RunResult>& runs, const std::vector<GemmSet>& sets,
                   const std::vector<kgemm::DType>& dtypes) {
  if (format_ == Format::Table && runs.size() > 1) {
    fmt::print("\n");
    write_forward_summary(runs, sets, dtypes);
  }
  if (format_ == Format::Json) {
    Json document = {{"tool", "kgemm-run"}, {"kokkos_version", kgemm::kokkos_version_string()}, {"reps", reps_}};
    Json list = Json::array();
    for (const RunResult& run : runs) list.push_back(run_json(run));
    document["runs"] = list;
    fmt::print("{}\n", document.dump(2));
  }
}

void begin_why_store(Format format) {
  if (format == Format::Csv) fmt::print("{}\n", kWhyColumns.csv_header());
}

void write_why_store(Format format, const GemmSet& set, kgemm::DType dtype, const std::string& title,
                     const std::vector<WhyRow>& rows) {
  if (format == Format::Csv) {
    for (const WhyRow& row : rows) fmt::print("{}\n", kWhyColumns.csv_line(WhyLine{&set, dtype, &row}));
    return;
  }
  fmt::print("{}\n", title);
  write_why_table(set, dtype, rows);
}

void write_shapes(const std::vector<GemmSet>& sets) {
  fmt::print("set,layer,m,n,k\n");
  for (const GemmSet& set : sets)
    for (const kgemm::LayerShape& s : set.layers) fmt::print("{},{},{},{},{}\n", set.name, csv_field(s.layer), s.m, s.n, s.k);
}

}  // namespace kgemm_run
