#include "kgemm/cli/run_options.hpp"

#include "kgemm/cli/options.hpp"
#include "kgemm/dispatch/dispatch_model.hpp"

namespace kgemm::cli {

namespace {

const char* kAbout = R"(Runs the im2col GEMMs of a ResNet (or given shapes) through kgemm::gemm and prints per layer
its times, GFLOP/s and error against fp64, and per model the forward pass. LIST options take
comma-separated values (or repeat the option); every combination runs, all in one process.)";

// Text broken into lines of at most `width` characters, at spaces.
std::string wrapped(const std::string& text, std::size_t width = 96) {
  std::string out, line;
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t to = text.find(' ', from);
    if (to == std::string::npos) to = text.size();
    const std::string word = text.substr(from, to - from);
    if (!line.empty() && line.size() + 1 + word.size() > width) out += line + "\n", line.clear();
    line += (line.empty() ? "" : " ") + word;
    from = to + 1;
  }
  return out + line;
}

// Built when kgemm-run parses, not at every program's start: it reads the dispatch model's constants.
std::string footer() {
  return R"(Kokkos' flags pass through: --kokkos-num-threads=N, --kokkos-device-id=N, ...
Per layer (one call, medians): kernel = the call's work (GPU: CUDA events around a call queued
behind another, so without the host's launch; host: the call between fences); launch = host
time until the call returns, on an idle space; call = launch to completion, as a host clock
around a call and a fence sees it; transfer = A and B to the device and C back once (0 on host
spaces: the operands are in host memory already). GFLOP/s = 2 M N K / kernel.
Errors, over 16 sampled rows of C, against the fp64 product of the inputs as generated (before
any rounding to fp16): max |C - C64| / max |C64| and mean |C - C64| / mean |C64|.
Forward pass: the sum over layers of count x kernel (count: the model's layers with that GEMM
shape), in ms and s; launch, call and transfer are summed the same way.
Tuned configs (the line naming the store, and why it serves): $KGEMM_CONFIG_FILE when set
(named), else this device's store (exact), else the nearest store of another device of the same
space and architecture (same architecture: each entry checked for this device before it runs,
ranked with this device's facts), else none: the space defaults (docs/tuning.md).
$KGEMM_TUNE=8 (configs per shape) or =30s (seconds per shape): a shape this device's own store
lacks is tuned on its first call, as autotune would, and stored before it is timed.
)" + wrapped("Dispatch model (docs/architecture.md): a shape the store never tuned runs the stored "
                 "config with the highest predicted rate: " + dispatch_model_summary() +
                 ". On GPUs each stored config is also tried with its K split the other ways the tuner "
                 "searches. The problem's own entry always wins.") + "\n";
}

// The rules between options.
void check_combination(const CLI::App& app, const RunOptions& o) {
  if (app.count("--shape") && (app.count("--model") || app.count("--image")))
    throw InvalidArgument("--shape gives the GEMMs itself; --model and --image apply to a model only");
  if (o.why_store && o.why_store->empty()) throw InvalidArgument("option --why-store needs a file");
  if ((o.why || o.why_store) && o.config) throw InvalidArgument("--why explains dispatch; --config bypasses it");
  if (o.why && o.format != Format::Table) throw InvalidArgument("--why prints a table; drop --format");
  if (o.why_store && o.format == Format::Json)
    throw InvalidArgument("--why-store prints a table or CSV; drop --format json");
}

}  // namespace

std::optional<RunOptions> parse_run(const std::vector<std::string>& words) {
  RunOptions o;
  o.spaces = {lowercase(KGEMM_DEFAULT_SPACE)};
  App app(kAbout, "kgemm-run", footer());
  app.add_list("--space", o.spaces, "serial,openmp,cuda")->transform(lower_case())->check(distinct());
  app.add_option("--model", o.model, "resnet18 | resnet34 | resnet50")->type_name("NAME")->capture_default_str();
  app.add_list("--shape", o.shapes, "GEMM shapes MxNxK instead of a model; the batch multiplies M")->check(distinct());
  app.add_list("--image", o.images, "input image sides, e.g. 224,512,1024")->transform(count())->check(distinct());
  app.add_list("--batch", o.batches, "batch sizes, e.g. 1,128: multiply M")->transform(count())->check(distinct());
  app.add_list("--dtype", o.dtypes, "fp32,fp16")->transform(dtype())->check(distinct());
  app.add_option("--reps", o.reps, "timed repetitions per layer, median")->transform(count())->type_name("N")->capture_default_str();
  app.add_option_function<std::string>(
         "--config", [&](const std::string& text) { o.config = parse_config(text); },
         "run every layer with this config (e.g. mb128_nb64_kb16_tm8_tn4_team256)\ninstead of the dispatched one")
      ->type_name("STR");
  app.add_option_function<std::string>(
         "--format",
         [&](const std::string& text) { o.format = text == "csv" ? Format::Csv : text == "json" ? Format::Json : Format::Table; },
         "table | csv | json")
      ->check(one_of({"table", "csv", "json"}))
      ->type_name("F")
      ->default_str("table");
  app.add_flag("--progress", o.progress, "a line on stderr as each layer starts");
  app.add_flag("--list-shapes", o.list_shapes,
               "print the shapes as CSV (set,layer,m,n,k) and exit: the input of the\ncuBLAS peer (benchmarks/cublas_peer)");
  app.add_flag("--why", o.why,
               "after each table, why each layer got its config: the store entry it was\n"
               "tuned for, the dispatch model's factors and predicted GFLOP/s beside the\n"
               "measured ones, and the config of the nearest tuned shape (table format)");
  app.add_option("--why-store", o.why_store,
                 "run nothing: the same explanation from the store file F, for the device F was\n"
                 "tuned on (e.g. a GPU's store read on a laptop); legality on that device is\n"
                 "not checked, since it is not here; table or CSV")
      ->type_name("F");
  if (!app.read(words)) return std::nullopt;
  check_combination(app, o);
  return o;
}

}  // namespace kgemm::cli
