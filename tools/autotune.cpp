// autotune: searches tile and team sizes per GEMM shape on one execution space and keeps the
// winners in the device's YAML store, which kgemm's dispatch reads from then on.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "kgemm/cli/autotune_options.hpp"
#include "kgemm/cli/options.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/spaces/team_scratch.hpp"
#include "kgemm/tuner/catalogue.hpp"
#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/tuner/kokkos_session.hpp"
#include "kgemm/tuner/measurement_cache.hpp"
#include "kgemm/tuner/precision_gate.hpp"
#include "kgemm/tuner/problem_bench.hpp"
#include "kgemm/tuner/retime.hpp"
#include "kgemm/tuner/search_space.hpp"
#include "kgemm/tuner/shard.hpp"
#include "kgemm/tuner/store_merge.hpp"
#include "kgemm/tuner/store_recheck.hpp"
#include "kgemm/tuner/tune_problem.hpp"
#include "kgemm/tuner/tool_output.hpp"
#include "kgemm/dispatch/store_registry.hpp"
#include "report.hpp"

namespace {

struct Request {
  kgemm::Problem problem;
  std::string layer;
};

std::vector<Request> requests(const kgemm::cli::AutotuneOptions& options) {
  std::vector<Request> out;
  for (const std::string& dtype : options.dtypes)
    for (int batch : options.batches) {
      std::vector<kgemm::LayerShape> layers;
      if (!options.shapes.empty()) {
        for (const std::string& text : options.shapes) layers.push_back(kgemm::parse_shape(text, options.batched ? 1 : batch));
      } else {
        layers = kgemm::resnet_gemm_shapes(options.model, options.image, options.batched ? 1 : batch);
      }
      for (const auto& s : layers) {
        Request r;
        r.layer = s.layer;
        r.problem.kernel = !options.batched  ? kgemm::Kernel::Gemm
                           : options.shared_b ? kgemm::Kernel::SharedB
                                              : kgemm::Kernel::Batched;
        r.problem.dtype = kgemm::parse_dtype(dtype);
        r.problem.m = s.m, r.problem.n = s.n, r.problem.k = s.k;
        r.problem.batch = options.batched ? batch : 1;
        if (const std::string why = kgemm::why_invalid(r.problem); !why.empty())
          throw kgemm::InvalidArgument(r.layer + " at batch " + std::to_string(batch) + ": " + why);
        out.push_back(r);
      }
    }
  return out;
}

// The problems of the run: each once, in the order first asked for (a repeat would be tuned
// twice, the second result overwriting the first), and of those only this run's shard.
std::vector<Request> problems_to_tune(const kgemm::cli::AutotuneOptions& options) {
  std::vector<Request> distinct;
  std::set<kgemm::Problem, kgemm::StoreOrder> seen;
  for (const Request& request : requests(options))
    if (seen.insert(request.problem).second) distinct.push_back(request);
  if (!options.shard) return distinct;
  const kgemm::Shard& shard = *options.shard;
  std::vector<Request> taken = kgemm::shard_of(distinct, shard);
  std::fprintf(stderr, "autotune: shard %d/%d: %zu of %zu problems\n", shard.index, shard.count, taken.size(),
               distinct.size());
  return taken;
}

std::string format_significant(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

std::string clock_text(double seconds) {
  char text[32];
  const int s = int(seconds + 0.5);
  std::snprintf(text, sizeof text, "%d:%02d", s / 60, s % 60);
  return text;
}

class ProgressLine {
 public:
  ProgressLine(int index, int total, const std::string& title, double default_gflops, const kgemm::Budget& budget)
      : index_(index), total_(total), title_(title), default_gflops_(default_gflops), budget_(budget),
        tty_(isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()) {}

  void operator()(const kgemm::SearchOutcome& so_far, std::size_t candidates) {
    const int done = int(so_far.log.size());
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    int planned = int(candidates);
    if (budget_.evaluations > 0 && budget_.evaluations < planned) planned = budget_.evaluations;
    double left = elapsed / done * (planned - done);
    if (budget_.seconds > 0 && budget_.seconds - elapsed < left) left = budget_.seconds - elapsed;
    if (!tty_ && done != planned && done % 10 != 0) return;
    std::fprintf(stderr, "%s[%d/%d] %s  %d/%d candidates (%d wrong)  best %.1f GFLOP/s (default %.1f)  ETA %s%s",
                 tty_ ? "\r\033[K" : "", index_, total_, title_.c_str(), done, planned, so_far.rejected(),
                 so_far.best_gflops, default_gflops_, clock_text(left > 0 ? left : 0).c_str(), tty_ ? "" : "\n");
  }
  void finish() const {
    if (tty_) std::fputc('\n', stderr);
  }

 private:
  int index_, total_;
  std::string title_;
  double default_gflops_;
  kgemm::Budget budget_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

// A problem of the run and what the store now holds for it: the table's row.
struct Row {
  Request request;
  kgemm::TunedEntry entry;
  bool skipped = false;  // --resume: the stored entry, not tuned again
  std::optional<kgemm::PrecisionGate> gate;

  double speedup() const { return entry.default_gflops > 0 ? entry.gflops / entry.default_gflops : 0; }
};

using kgemm::report::Columns;
using kgemm::report::kTable;
using kgemm::report::Style;
using kgemm::report::Value;

const Columns<Row> kColumns{
    {"layer", "layer", 28, Style::Text, kTable, [](const Row& r) -> Value { return r.request.layer; }},
    {"problem", "problem", 26, Style::Text, kTable, [](const Row& r) -> Value { return kgemm::to_string(r.entry.problem); }},
    {"default_gflops", "default", 9, Style::Rate, kTable, [](const Row& r) -> Value { return r.entry.default_gflops; }},
    {"gflops", "tuned", 9, Style::Rate, kTable, [](const Row& r) -> Value { return r.entry.gflops; }},
    {"speedup", "speedup", 8, Style::Speedup, kTable, [](const Row& r) -> Value { return r.speedup(); }},
    {"candidates", "tried", 5, Style::Count, kTable, [](const Row& r) -> Value { return r.entry.candidates; }},
    // fp32 problems with tensor-core candidates are gated (precision_gate.hpp); a table without one leaves it out.
    {"errors", "max rel. error: SIMT / 3xTF32 families", 62, Style::Text, kTable,
     [](const Row& r) -> Value { return r.gate ? kgemm::describe(*r.gate) : std::string(); }},
    {"config", "config", 0, Style::Text, kTable, [](const Row& r) -> Value {
       return kgemm::to_string(r.entry.config) + (r.skipped ? "  (from store)" : "");
     }},
};

void print_table(const std::vector<Row>& rows) {
  const bool gated = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.gate.has_value(); });
  const Columns<Row> columns = gated ? kColumns : kColumns.without("errors");
  fmt::print("\n{}\n", columns.table_header());
  double log_sum = 0;
  int counted = 0;
  for (const Row& r : rows) {
    fmt::print("{}\n", columns.table_line(r));
    if (r.speedup() > 0) log_sum += std::log(r.speedup()), ++counted;
  }
  if (counted > 0)
    fmt::print("geometric-mean speed-up of tuned over default: {:.2f}x over {} shapes (GFLOP/s = 2*M*N*K*batch / time)\n",
               std::exp(log_sum / counted), counted);
  if (gated)
    fmt::print("3xTF32 (fp32 on tensor cores: configs ending in _tc, on Hopper also _wg) offered per family where its "
               "error on the problem's inputs is at most {:.0f}x the SIMT default's (max |C - C_fp64| / max |C_fp64|)\n",
               kgemm::kMaxSplitTf32ErrorRatio);
}

template <class ExecSpace>
void tune(const ExecSpace& space, const kgemm::cli::AutotuneOptions& options) {
  const kgemm::DeviceInfo device = kgemm::device_info<ExecSpace>();
  const std::optional<double>& lock_timeout = options.lock_timeout;
  const std::string path = options.out ? *options.out : kgemm::tuning_store_path(device, lock_timeout);
  // Read before anything is tuned: a foreign or bad store stops the run before time is spent.
  kgemm::ConfigStore store = kgemm::ConfigStore::open(path, device);
  kgemm::TuneSettings settings;  // each shape's budget may be cut short by --time-limit
  settings.strategy = options.strategy;
  settings.budget = options.budget;
  settings.seed = options.seed;
  settings.reps = options.reps;
  settings.operands = options.operands;
  settings.confirm = options.confirm;
  const double time_limit = options.time_limit.value_or(0);
  const std::vector<Request> todo = problems_to_tune(options);
  const auto run_start = std::chrono::steady_clock::now();
  const std::string& cache = options.cache;
  if (!cache.empty()) kgemm::append_device(cache, device);
  kgemm::MeasurementCache replay;
  if (!options.replay.empty()) replay = kgemm::load_measurements(options.replay);
  // Proven before anything is tuned: a store found unwritable after the first shape costs its tuning.
  kgemm::ConfigStore::check_writable(path, lock_timeout);

  std::printf("autotune: %s, Kokkos %s, strategy %s, %s operands, store %s\n", kgemm::to_string(device).c_str(),
              kgemm::kokkos_version_string().c_str(), kgemm::to_string(settings.strategy), kgemm::to_string(settings.operands),
              path.c_str());
  // Configs past the limit are never measured: a tune under a lower one searches shallower pipelines.
  if (const kgemm::TeamScratchLimit& limit = kgemm::team_scratch_limit<ExecSpace>(); limit.block_bytes > 0)
    std::printf("team scratch per block: %s\n", limit.why.c_str());
  kgemm::flush_output();  // an output that cannot be written stops the run before hours of tuning
  std::optional<kgemm::ProblemClaims> claims;
  if (options.claim) claims.emplace(*options.claim);
  // A merge job lists every shard's store: an empty shard still leaves one.
  if ((options.shard || claims) && access(path.c_str(), F_OK) != 0)
    store = kgemm::ConfigStore::update(path, device, [](kgemm::ConfigStore&) {}, lock_timeout);
  const kgemm::KnownConfigs known_configs(store, device);
  if (!known_configs.other_description().empty())
    std::printf(known_configs.sibling() ? "autotune: the searches' starts are also ranked from %s\n"
                                        : "autotune: no store of this device to start from; searches also start from %s\n",
                known_configs.other_description().c_str());
  std::vector<Row> rows;
  int index = 0, claimed_elsewhere = 0;
  for (const Request& request : todo) {
    ++index;
    const kgemm::Problem& problem = request.problem;
    kgemm::TuneSettings shape = settings;
    if (time_limit > 0) {
      const double left = time_limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
      if (left <= 0) {
        std::fprintf(stderr, "autotune: --time-limit %s reached: %d of %d shapes done; the store keeps them, and a rerun "
                     "with --resume tunes the rest\n", options.time_limit_text.c_str(), index - 1, int(todo.size()));
        break;
      }
      if (shape.budget.seconds <= 0 || shape.budget.seconds > left) shape.budget.seconds = left;
    }
    const std::string key = kgemm::to_string(problem);
    if (options.resume && store.exact(problem)) {
      const kgemm::TunedEntry& held = *store.exact(problem);
      const bool host = store.header.device.is_host();
      const std::string illegal = kgemm::why_illegal<ExecSpace>(problem, held.config);
      const std::string why =
          !illegal.empty() ? "the stored config cannot run here (" + illegal + ")"
          : kgemm::measured_on_older_kernels(held, host)
              ? "it was measured on kernel generation " + std::to_string(held.generation) + ", before its kernels " +
                    "changed at " + std::to_string(kgemm::kernels_changed_at(held.config.family, host))
              : "";
      if (why.empty()) {
        std::fprintf(stderr, "[%d/%d] %s: already in the store, skipped (--resume)\n", index, int(todo.size()), key.c_str());
        rows.push_back({request, held, true});
        continue;
      }
      std::fprintf(stderr, "[%d/%d] %s: %s; tuning it again\n", index, int(todo.size()), key.c_str(), why.c_str());
    }
    if (claims && !claims->claim(key)) {
      std::fprintf(stderr, "[%d/%d] %s: claimed by another run, skipped\n", index, int(todo.size()), key.c_str());
      ++claimed_elsewhere;
      continue;
    }
    kgemm::TuneHooks hooks;
    // A config's n-th measurement replays its n-th recorded reading (the last one past those): the
    // search's single reading first, then what re-timing it recorded.
    std::map<std::string, int> replayed;
    if (!options.replay.empty()) {
      hooks.replay = [&recorded = replay.problems[key].readings, &replayed](const kgemm::Config& c) {
        const int wanted = replayed[kgemm::to_string(c)]++;
        const kgemm::Measurement* found = nullptr;
        int seen = 0;
        for (const auto& e : recorded)
          if (e.config == c) {
            found = &e.measurement;
            if (seen++ == wanted) break;
          }
        return found ? *found : kgemm::Measurement{false, 0, "not in the replay cache"};
      };
    }
    if (!cache.empty()) {
      hooks.searching = [&](const kgemm::SearchGiven& given) { kgemm::append_search(cache, problem, given); };
      hooks.record = [&](const kgemm::Config& c, const kgemm::Measurement& m) {
        kgemm::append_measurement(cache, problem, {c, m});
      };
    }
    std::optional<ProgressLine> progress;
    hooks.measured_default = [&](const kgemm::Measurement& baseline) {
      progress.emplace(index, int(todo.size()), key, baseline.gflops, shape.budget);
    };
    hooks.progress = [&](const kgemm::SearchOutcome& so_far, std::size_t candidates) { (*progress)(so_far, candidates); };
    const kgemm::TuneOutcome outcome = kgemm::tune_problem(
        space, problem, shape, known_configs.for_problem<ExecSpace>(problem), device, hooks);
    progress->finish();
    if (!outcome.entry) {
      std::fprintf(stderr, "[%d/%d] %s: no correct config found; nothing stored\n", index, int(todo.size()), key.c_str());
      continue;
    }
    const kgemm::TunedEntry& entry = *outcome.entry;
    // Merged into the file as it is now: other autotune runs on the same store keep their entries.
    store = kgemm::ConfigStore::update(path, device, [&](kgemm::ConfigStore& latest) { latest.put(entry); }, lock_timeout);
    rows.push_back({request, entry, false, outcome.gate});
  }
  print_table(rows);
  if (claims)
    std::printf("claims: %zu of %zu problems tuned here, %d claimed by other runs (%s)\n", rows.size(), todo.size(),
                claimed_elsewhere, options.claim->c_str());
  std::printf("store: %s (%zu entries)\n", path.c_str(), store.entries().size());
  std::printf("wall time: %.1f s for %zu problems\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count(), rows.size());
}

// Why `entry`'s config does not compute its problem right here (empty when it does): checked as
// tuning checks (problem_bench.hpp), with alpha = 1, beta = 0 as tuned and with both in play.
template <class Scalar, class ExecSpace>
std::string wrong_entry(const ExecSpace& space, const kgemm::TunedEntry& entry, std::uint64_t seed) {
  const kgemm::ProblemBench<ExecSpace, Scalar> bench(space, entry.problem, seed);
  const float scalars[][2] = {{1.0f, 0.0f}, {-1.5f, 0.5f}};
  for (const auto& alpha_beta : scalars) {
    const std::string why = bench.wrong_result(entry.config, alpha_beta[0], alpha_beta[1]);
    if (!why.empty())
      return "wrong with alpha " + format_significant(alpha_beta[0]) + ", beta " + format_significant(alpha_beta[1]) +
             ": " + why;
  }
  return "";
}

// An entry of an older kernel generation re-timed here against the space default (store_recheck.hpp).
template <class Scalar, class ExecSpace>
kgemm::Recheck recheck(const ExecSpace& space, const kgemm::TunedEntry& entry, std::uint64_t seed) {
  const kgemm::ProblemBench<ExecSpace, Scalar> bench(space, entry.problem, seed);
  kgemm::Config fallback = kgemm::TuningPolicy<ExecSpace>::default_config(entry.problem.dtype);
  if (!kgemm::why_illegal<ExecSpace>(entry.problem, fallback).empty()) fallback = kgemm::TuningPolicy<ExecSpace>::default_config();
  const kgemm::Measurement tuned = bench.measure(entry.config);
  return kgemm::recheck_entry(entry, fallback, tuned, entry.config == fallback ? tuned : bench.measure(fallback));
}

// autotune --verify-store: every entry of `store` run on this device, one line each, after the
// entries the store's loader `refused`; false when any was refused, cannot run here or computes
// its problem wrong. On the store's own device, entries of an older kernel generation are also
// re-timed against the space default: kept with today's rates and generation, or dropped (wrong,
// or slower than the default), and the store rewritten so; false when it cannot be.
template <class ExecSpace>
bool verify_store(const ExecSpace& space, const kgemm::ConfigStore& store, const std::vector<std::string>& refused,
                  const std::string& path, std::uint64_t seed) {
  const kgemm::DeviceInfo device = kgemm::device_info<ExecSpace>();
  const bool own = kgemm::same_device(store.header.device, device);
  const std::size_t count = store.entries().size() + refused.size();
  std::printf("verify-store: %s: %zu entries tuned on %s, checked on %s\n", path.c_str(), count,
              kgemm::to_string(store.header.device).c_str(), kgemm::to_string(device).c_str());
  const bool host = store.header.device.is_host();
  if (!own && store.entries_on_older_kernels() > 0)
    std::printf("verify-store: entries measured before their kernels changed are re-timed only on the store's own "
                "device\n");
  std::size_t index = 0, failed = refused.size();
  std::vector<std::pair<kgemm::Problem, std::optional<kgemm::TunedEntry>>> rechecked;  // nullopt: dropped
  for (const std::string& why : refused) std::printf("[%zu/%zu] FAILED, refused on load: %s\n", ++index, count, why.c_str());
  for (const kgemm::TunedEntry& entry : store.entries()) {
    const bool stale = own && kgemm::measured_on_older_kernels(entry, host);
    std::string why = kgemm::why_illegal<ExecSpace>(entry.problem, entry.config), verdict;
    try {
      if (!why.empty())
        why = "cannot run here: " + why;
      else if (entry.problem.dtype == kgemm::DType::F32)
        why = wrong_entry<float>(space, entry, seed);
      else
        why = wrong_entry<kgemm::half>(space, entry, seed);
      if (stale) {
        kgemm::Recheck r = !why.empty() ? kgemm::Recheck{std::nullopt, "dropped"}
                           : entry.problem.dtype == kgemm::DType::F32 ? recheck<float>(space, entry, seed)
                                                                      : recheck<kgemm::half>(space, entry, seed);
        verdict = ", generation " + std::to_string(entry.generation) + " re-timed: " + r.verdict;
        rechecked.emplace_back(entry.problem, std::move(r.kept));
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    failed += !why.empty();
    std::printf("[%zu/%zu] %s %s: %s%s\n", ++index, count, kgemm::to_string(entry.problem).c_str(),
                kgemm::to_string(entry.config).c_str(), why.empty() ? "ok" : ("FAILED, " + why).c_str(), verdict.c_str());
    kgemm::flush_output();
  }
  std::printf("verify-store: %zu of %zu entries failed\n", failed, count);
  if (rechecked.empty()) return failed == 0;
  const std::size_t kept =
      std::size_t(std::count_if(rechecked.begin(), rechecked.end(), [](const auto& r) { return r.second.has_value(); }));
  try {
    kgemm::ConfigStore::update(path, device, [&](kgemm::ConfigStore& latest) {
      for (const auto& [problem, entry] : rechecked) {
        // An entry another writer measured on today's kernels meanwhile stays.
        const kgemm::TunedEntry* held = latest.exact(problem);
        if (held && !kgemm::measured_on_older_kernels(*held, host)) continue;
        if (entry)
          latest.put(*entry);
        else
          latest.erase(problem);
      }
    });
  } catch (const kgemm::StoreError& e) {
    std::printf("verify-store: %zu entries of older kernel generations re-timed, but the store was not rewritten: %s\n",
                rechecked.size(), e.what());
    return false;
  }
  std::printf("verify-store: %zu entries of older kernel generations re-timed: %zu kept at generation %d, %zu dropped; "
              "%s rewritten\n", rechecked.size(), kept, kgemm::kKernelGeneration, rechecked.size() - kept, path.c_str());
  return failed == 0;
}

// autotune merge --out FILE [--lock-timeout S] STORE...: no Kokkos, no device; the stores name
// their device.
int merge_command(const std::vector<std::string>& words) {
  const std::optional<kgemm::cli::MergeOptions> options = kgemm::cli::parse_merge(words);
  if (!options) return 0;
  kgemm::ConfigStore::check_writable(options->out, options->lock_timeout);
  const kgemm::MergeOutcome outcome = kgemm::merge_stores(options->inputs, options->out, options->lock_timeout);
  for (const std::string& clash : outcome.clashes) std::printf("clash: %s\n", clash.c_str());
  std::printf("merged %zu stores of %s into %s: %zu entries (%d added, %zu clashes)\n", options->inputs.size(),
              kgemm::to_string(outcome.store.header.device).c_str(), options->out.c_str(), outcome.store.entries().size(),
              outcome.added, outcome.clashes.size());
  return 0;
}

// A problem's leaders re-timed (retime.hpp) and what the recorded and re-timed bests were: the
// retime table's row.
struct Retimed {
  kgemm::RetimeLeaders recorded;
  std::vector<kgemm::Evaluated> retimed;

  const kgemm::Evaluated& recorded_best() const { return recorded.leaders.front(); }
  const kgemm::Evaluated* retimed_best() const {
    const kgemm::Evaluated* best = nullptr;
    for (const kgemm::Evaluated& e : retimed)
      if (e.measurement.correct && (!best || e.measurement.gflops > best->measurement.gflops)) best = &e;
    return best;
  }
  // The recorded best's re-timed rate over its recorded one.
  double held() const {
    const kgemm::Measurement& again = retimed.front().measurement;
    return again.correct ? again.gflops / recorded_best().measurement.gflops : 0;
  }
  // Its rate in these rounds (0 where it was wrong or not re-timed).
  double retimed_rate(const kgemm::Config& c) const {
    for (const kgemm::Evaluated& e : retimed)
      if (e.config == c) return e.measurement.correct ? e.measurement.gflops : 0;
    return 0;
  }
  // The judged config's re-timed rate over that of `reference`: the re-timed best, or what the
  // exhaustive search kept (chosen before these rounds, as the judged config was, so that neither
  // is the luckiest of them); none where nothing was judged.
  std::optional<double> judged_share(double reference) const {
    if (!recorded.judged) return std::nullopt;
    return reference > 0 ? retimed_rate(*recorded.judged) / reference : 0;
  }
  double best_rate() const { return retimed_best() ? retimed_best()->measurement.gflops : 0; }
  double kept_rate() const { return recorded.kept ? retimed_rate(*recorded.kept) : 0; }
  // Whether a config left out was recorded faster than the re-timed best: too few re-timed.
  bool too_few() const {
    return recorded.first_left_out && (!retimed_best() || *recorded.first_left_out > retimed_best()->measurement.gflops);
  }
};

const Columns<Retimed> kRetimeColumns{
    {"problem", "problem", 34, Style::Text, kTable, [](const Retimed& r) -> Value { return kgemm::to_string(r.recorded.problem); }},
    {"recorded_gflops", "recorded best", 13, Style::Rate, kTable,
     [](const Retimed& r) -> Value { return r.recorded_best().measurement.gflops; }},
    {"held", "re-timed / recorded", 19, Style::Share, kTable, [](const Retimed& r) -> Value { return r.held(); }},
    {"retimed_gflops", "re-timed best", 13, Style::Rate, kTable, [](const Retimed& r) -> Value {
       return r.retimed_best() ? Value(r.retimed_best()->measurement.gflops) : Value();
     }},
    {"first_left_out", "first left out", 14, Style::Rate, kTable, [](const Retimed& r) -> Value {
       return r.recorded.first_left_out ? Value(*r.recorded.first_left_out) : Value();
     }},
    {"judged", "--store's / best", 16, Style::Share, kTable, [](const Retimed& r) -> Value {
       const std::optional<double> share = r.judged_share(r.best_rate());
       return share ? Value(*share) : Value();
     }},
    {"judged_kept", "--store's / kept", 16, Style::Share, kTable, [](const Retimed& r) -> Value {
       const std::optional<double> share = r.judged_share(r.kept_rate());
       return share ? Value(*share) : Value();
     }},
    {"config", "re-timed best's config", 0, Style::Text, kTable, [](const Retimed& r) -> Value {
       if (!r.retimed_best()) return std::string("none correct");
       const kgemm::Evaluated& best = *r.retimed_best();
       return kgemm::to_string(best.config) + (best.config == r.recorded_best().config ? " (the recorded best)" : "") +
              (r.too_few() ? "  (a config left out was recorded faster: raise --top)" : "");
     }},
};

// --store's summary: its configs over the re-timed bests and over what the exhaustive search kept,
// as kgemm-compare-strategies summarizes a replayed search (--judge best and kept).
void print_judged(const std::vector<Retimed>& rows, const std::string& store) {
  const auto print = [&](const char* over, double (Retimed::*reference)() const) {
    std::vector<double> shares;
    for (const Retimed& r : rows)
      if (const std::optional<double> share = r.judged_share((r.*reference)())) shares.push_back(*share);
    const kgemm::report::ShareSummary summary = kgemm::report::summarize_shares(shares);
    fmt::print("{}'s configs over {}, {} problems: geometric mean {:.3f}, worst {:.3f}, {} reach 0.98\n", store, over,
               shares.size(), summary.geomean, summary.worst, summary.reaching);
  };
  print("the re-timed best", &Retimed::best_rate);
  print("what exhaustive search kept", &Retimed::kept_rate);
}

template <class Scalar, class ExecSpace>
std::vector<kgemm::Evaluated> retime_problem(const ExecSpace& space, const kgemm::RetimeLeaders& leaders,
                                             const kgemm::cli::RetimeOptions& options) {
  kgemm::TimingPolicy timing;
  timing.reps = options.reps;
  timing.operands = options.operands;
  const kgemm::ProblemBench<ExecSpace, Scalar> bench(space, leaders.problem, options.seed, timing);
  return kgemm::retime(kgemm::retimed_configs(leaders), options.rounds, [&](const kgemm::Config& c) { return bench.measure(c); });
}

// autotune retime: the leaders of every exhaustive problem of the cache re-timed on the device
// that measured them, appended to the cache as they are done (an interrupted run keeps them).
template <class ExecSpace>
void retime_cache(const ExecSpace& space, const kgemm::cli::RetimeOptions& options, const kgemm::DeviceInfo& measured_on,
                  const std::vector<kgemm::RetimeLeaders>& all) {
  const kgemm::DeviceInfo device = kgemm::device_info<ExecSpace>();
  if (!kgemm::same_device(measured_on, device))
    throw kgemm::InvalidArgument(options.cache + " was measured on " + kgemm::to_string(measured_on) + ", not on " +
                                 kgemm::to_string(device) + ": re-time it where it was measured");
  std::printf("autotune retime: %s, %zu problems, the %d fastest of each in %d rounds, %s operands, into %s\n",
              kgemm::to_string(device).c_str(), all.size(), options.top, options.rounds, kgemm::to_string(options.operands),
              options.cache.c_str());
  kgemm::flush_output();
  std::vector<Retimed> rows;
  for (const kgemm::RetimeLeaders& leaders : all) {
    Retimed row{leaders, leaders.problem.dtype == kgemm::DType::F32 ? retime_problem<float>(space, leaders, options)
                                                                    : retime_problem<kgemm::half>(space, leaders, options)};
    for (const kgemm::Evaluated& e : row.retimed) kgemm::append_measurement(options.cache, leaders.problem, e);
    std::fprintf(stderr, "[%zu/%zu] %s re-timed\n", rows.size() + 1, all.size(), kgemm::to_string(leaders.problem).c_str());
    rows.push_back(std::move(row));
  }
  fmt::print("\n{}\n", kRetimeColumns.table_header());
  double log_held = 0, log_best = 0;
  int moved = 0, too_few = 0;
  for (const Retimed& r : rows) {
    fmt::print("{}\n", kRetimeColumns.table_line(r));
    log_held += std::log(std::max(r.held(), 1e-300));
    if (r.retimed_best()) log_best += std::log(r.retimed_best()->measurement.gflops / r.recorded_best().measurement.gflops);
    moved += r.retimed_best() && !(r.retimed_best()->config == r.recorded_best().config);
    too_few += r.too_few();
  }
  const double n = double(rows.size());
  fmt::print("geometric means over {} problems: the recorded best re-timed {:.3f} of its recording, the re-timed best "
             "{:.3f}; another config first on {}; a config left out recorded above the re-timed best on {}\n",
             rows.size(), std::exp(log_held / n), std::exp(log_best / n), moved, too_few);
  if (options.store) print_judged(rows, *options.store);
}

}  // namespace

int main(int argc, char** argv) {
  return kgemm::run_tool("autotune", [&] {
    std::vector<std::string> words = kgemm::cli::own_words(argc, argv);
    if (!words.empty() && words.front() == "merge") return merge_command({words.begin() + 1, words.end()});
    if (!words.empty() && words.front() == "retime") {
      const std::optional<kgemm::cli::RetimeOptions> options = kgemm::cli::parse_retime({words.begin() + 1, words.end()});
      if (!options) return 0;
      // Read before Kokkos starts: a bad cache ends the run at once.
      const kgemm::MeasurementCache cache = kgemm::load_measurements(options->cache);
      if (!cache.device)
        throw kgemm::InvalidArgument(options->cache + " has no #device line (autotune --cache writes it): the device to "
                                     "re-time on is unknown");
      std::vector<kgemm::RetimeLeaders> leaders = kgemm::retime_leaders(cache, options->top);
      if (options->store) {
        const kgemm::ConfigStore store = kgemm::ConfigStore::load(*options->store);
        if (!kgemm::same_device(store.header.device, *cache.device))
          throw kgemm::InvalidArgument("--store " + *options->store + " was tuned on " + kgemm::to_string(store.header.device) +
                                       ", not on " + kgemm::to_string(*cache.device) + " where " + options->cache + " was measured");
        if (kgemm::judge_store(leaders, store) == 0)
          throw kgemm::InvalidArgument("--store " + *options->store + " holds none of the problems " + options->cache +
                                       " measured exhaustively: nothing to judge");
      }
      const kgemm::KokkosSession kokkos(argc, argv);
      kgemm::with_space(cache.device->space, [&](auto space) { retime_cache(space, *options, *cache.device, leaders); });
      return 0;
    }
    const std::optional<kgemm::cli::AutotuneOptions> options = kgemm::cli::parse_autotune(words);
    if (!options) return 0;
    const kgemm::KokkosSession kokkos(argc, argv);
    if (options->verify_store) {
      const std::string& path = *options->verify_store;
      std::vector<std::string> refused;
      const kgemm::ConfigStore store = kgemm::ConfigStore::load(path, &refused);
      if (options->space && *options->space != kgemm::lowercase(store.header.device.space))
        throw kgemm::InvalidArgument("--space " + *options->space + " but " + path + " holds configs of the " +
                                     store.header.device.space + " space");
      bool passed = false;
      kgemm::with_space(store.header.device.space,
                        [&](auto space) { passed = verify_store(space, store, refused, path, options->seed); });
      return passed ? 0 : 1;
    }
    kgemm::with_space(options->space.value_or(KGEMM_DEFAULT_SPACE), [&](auto space) { tune(space, *options); });
    return 0;
  });
}
