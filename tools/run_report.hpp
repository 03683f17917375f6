#pragma once
// kgemm-run's results and their report: a record per layer and per run, the columns each record
// shows declared once (run_report.cpp) and written to a table, CSV or JSON by report.hpp.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kgemm.hpp"
#include "kgemm/cli/run_options.hpp"
#include "kgemm/tuner/catalogue.hpp"

namespace kgemm_run {

using kgemm::cli::Format;

// One run's GEMMs: a model at one image size and batch, or the given shapes at one batch.
struct GemmSet {
  std::string name;   // resnet18_i224_b1 | shapes_b1
  std::string model;  // empty for --shape
  int image = 0;      // 0 for --shape
  int batch = 1;
  std::vector<kgemm::LayerShape> layers;
};

struct LayerResult {
  kgemm::LayerShape shape;
  kgemm::Problem problem;
  std::string config;
  std::optional<kgemm::DispatchChoice> why;  // --why
  double kernel_s = 0, launch_s = 0, call_s = 0, transfer_s = 0;
  double max_rel_err = 0, mean_rel_err = 0;
};

struct RunResult {
  std::string space;        // as typed in --space, lower case
  std::string space_label;  // Kokkos' name: OpenMP, Cuda
  kgemm::DeviceInfo device;
  kgemm::DType dtype;
  const GemmSet* set = nullptr;
  std::shared_ptr<const kgemm::TunedConfigs> tuned;  // what dispatch reads for the space
  std::string team_scratch;  // the block's team scratch limit in force and why, where one caps it
  bool host_memory = true;
  std::vector<LayerResult> layers;
};

// Why a layer got its config (--why, --why-store): the dispatch model's choice and the config of
// the nearest tuned shape.
struct WhyRow {
  const kgemm::LayerShape* shape;
  std::string config;  // empty: the space default of a device that is not here
  kgemm::DispatchChoice::Source source;
  std::optional<kgemm::RatePrediction> prediction;
  const kgemm::TunedEntry* nearest;
  double measured_gflops = 0;  // 0: not run
};

// The comparable entry closest in shape (store order on ties): what a nearest-neighbour
// dispatch would run, shown beside the model's choice.
const kgemm::TunedEntry* nearest_entry(const kgemm::ConfigStore* store, const kgemm::Problem& problem);

// Writes runs as they finish: a table or CSV rows at once, the JSON document at the end.
class Reporter {
 public:
  Reporter(Format format, int reps) : format_(format), reps_(reps) {}
  void begin();
  void run(const RunResult& run);
  // --why's table after a run's.
  void why(const RunResult& run);
  // The table's forward-pass summary over several runs (sets x dtypes, a column per space); the
  // JSON document of every run.
  void end(const std::vector<RunResult>& runs, const std::vector<GemmSet>& sets, const std::vector<kgemm::DType>& dtypes);

 private:
  Format format_;
  int reps_;
  int runs_ = 0;
};

// --why-store: the header CSV rows follow, then a table or the CSV rows of one set and dtype.
void begin_why_store(Format format);
void write_why_store(Format format, const GemmSet& set, kgemm::DType dtype, const std::string& title,
                     const std::vector<WhyRow>& rows);

// --list-shapes.
void write_shapes(const std::vector<GemmSet>& sets);

}  // namespace kgemm_run
