#include "kgemm/cli/autotune_options.hpp"

#include <map>

#include "kgemm/cli/options.hpp"
#include "kgemm/text_number.hpp"
#include "kgemm/tuner/retime.hpp"

namespace kgemm::cli {

namespace {

const char* kMergeUsage = "usage: autotune merge --out FILE [--lock-timeout S] STORE...";

const char* kMergeText = R"(merge: adds the entries of the STOREs (one device's, loaded strictly) to --out (created or
extended); where two hold the same problem, the one of the newer kernel generation wins, else
the one with more GFLOP/s, and merge says so.
The header keeps the stores' Kokkos and kgemm versions where they all agree.
A bad or foreign store refuses the whole merge and leaves --out as it was. --lock-timeout
bounds the wait for --out's lock as when tuning.
)";

const char* kRetimeUsage = "usage: autotune retime --cache FILE [--store FILE] [--top N] [--rounds R] [--reps N] [--operands warm|cold] [--seed N]";

const char* kRetimeText = R"(retime: measures again, on the device the cache names, the N fastest configs of every problem the
cache FILE measured exhaustively, in R rounds that each visit every one of them once, and
appends each one's median over the rounds to FILE, where it replaces the single reading for
kgemm-compare-strategies: the best of thousands of single readings is biased upwards, and a
replay judged against it misses a lucky reading rather than a faster config. A table shows per
problem the recorded best and the re-timed one, and warns where the fastest config left out was
recorded above the re-timed best (a larger --top would re-time it too).
With --store, the config a store (a search's --out, on the same device) holds for each of those
problems is re-timed in the same rounds and shown over the re-timed best: a search judged on
equal terms with the exhaustive one, not by readings taken minutes apart.
)";

const char* kTuneText = R"(Each candidate is checked before it is timed: its output (poisoned with NaN first) must be
fully written and every element (every 7th row and column on large problems) within an error
bound derived from its inputs of the fp64 result; wrong configs never win.
The store is rewritten atomically after every shape: Ctrl-C loses at most the current one.
Before anything is tuned or merged, the store is proven writable (see docs/tuning.md, "The
store file: guarantees"): a read-only store, an unwritable directory or a lock that cannot be
taken ends the run at once.
Kokkos' flags pass through: --kokkos-num-threads=N, --kokkos-device-id=N, ...
)";

// --operands, for tuning and for retime alike.
CLI::Option* add_operands(CLI::App& app, OperandCache& operands) {
  return app
      .add_option_function<std::string>(
          "--operands", [&operands](const std::string& text) { operands = parse_operand_cache(text); },
          "warm | cold: each timed call on the same operands (warm), or on the\n"
          "next of a ring of operand sets larger than the cache, as the\n"
          "benchmarks time a call (cold)")
      ->type_name("NAME")
      ->default_str("warm");
}

// --lock-timeout: seconds, finite and >= 0.
CLI::Option* add_lock_timeout(CLI::App& app, std::optional<double>& seconds) {
  return app
      .add_option_function<std::string>(
          "--lock-timeout",
          [&seconds](const std::string& text) {
            seconds = finite_at_least(text, 0);
            if (!seconds)
              throw InvalidArgument("option --lock-timeout: '" + text +
                                    "' is not a number of seconds >= 0 (e.g. 0, 30, 600)");
          },
          "wait at most S seconds (0: not at all) for the store's lock, then fail\nnaming its holder (default: no "
          "limit; a wait says once who holds it).\nWriters hold it only while they rewrite the store")
      ->type_name("S");
}

// "90s", "45m", "2h": a positive duration in seconds, up to a year (a job's --time).
double parse_time_limit(const std::string& text) {
  const std::map<char, double> units{{'s', 1}, {'m', 60}, {'h', 3600}};
  const auto unit = text.empty() ? units.end() : units.find(text.back());
  const auto number = unit == units.end() ? std::nullopt : finite_at_least(text.substr(0, text.size() - 1), 0);
  const double seconds = number ? *number * unit->second : 0;
  if (seconds <= 0 || seconds > 365.0 * 24 * 3600)
    throw InvalidArgument("option --time-limit: bad duration '" + text +
                          "' (expected a number > 0 with s, m or h, e.g. 600s, 45m, 2h; a year at most)");
  return seconds;
}

// The rules between options.
void check_combination(const CLI::App& app, const AutotuneOptions& o) {
  const auto given = [&](const char* name) { return app.count(name) > 0; };
  if (o.verify_store) {
    // The store names its space; options that only steer tuning would be silently ignored.
    for (const CLI::Option* option : app.get_options())
      if (option->count() > 0 && option->get_name() != "--verify-store" && option->get_name() != "--space" &&
          option->get_name() != "--seed")
        throw InvalidArgument(option->get_name() + " does not apply to --verify-store");
    return;
  }
  if (o.shared_b && !o.batched) throw InvalidArgument("--shared-b applies to --batched only");
  if (given("--shape") && (given("--shapes") || given("--image")))
    throw InvalidArgument("--shape gives the GEMMs itself; --shapes and --image apply to a model only");
  if (o.shard && o.claim) throw InvalidArgument("--shard and --claim both split the problem list: give one");
}

}  // namespace

std::optional<AutotuneOptions> parse_autotune(const std::vector<std::string>& words) {
  AutotuneOptions o;
  App app("Finds the fastest correct kernel config for each GEMM shape on one execution space and writes\n"
          "them to the device's YAML store (one entry per kernel, dtype, M, N, K, batch).",
          "autotune", std::string(kMergeUsage) + "\n" + kMergeText + kRetimeUsage + "\n" + kRetimeText + kTuneText);
  app.add_option("--space", o.space, "serial | openmp | cuda")
      ->transform(lower_case())
      ->type_name("NAME")
      ->default_str(KGEMM_DEFAULT_SPACE);
  app.add_option("--shapes", o.model, "resnet18 | resnet34 | resnet50: the im2col GEMMs of the model")
      ->type_name("MODEL")
      ->capture_default_str();
  app.add_list("--shape", o.shapes, "one shape MxNxK instead of a model (repeatable, or comma-separated)")
      ->type_name("MxNxK");
  app.add_option("--image", o.image, "input image side for --shapes")->transform(count())->type_name("N")->capture_default_str();
  app.add_list("--batch", o.batches, "batch sizes, e.g. 1,128\nGEMM: M = batch*H*W. With --batched: batch products of M = H*W")
      ->transform(count());
  app.add_list("--dtype", o.dtypes, "fp32,fp16");
  app.add_flag("--batched", o.batched, "tune batched products (each its own A and B)");
  app.add_flag("--shared-b", o.shared_b, "with --batched: one B shared by the batch (a convolution's weights)");
  app.add_option_function<std::string>(
         "--strategy", [&](const std::string& text) { o.strategy = parse_strategy(text); },
         "exhaustive | random | climb\n"
         "climb: from the space's seed configs (the default first; each\n"
         "split along K where its grid leaves the device idle) and the\n"
         "store's configs for the shape (for a shape it lacks, the config\n"
         "dispatch would run first; on a device without a store of its own,\n"
         "those of the nearest store of its architecture), step by step to\n"
         "an unmeasured config one parameter away from the fastest measured")
      ->type_name("NAME")
      ->default_str("climb");
  app.add_option_function<std::string>(
         "--budget", [&](const std::string& text) { o.budget = parse_budget(text); },
         "per shape: N evaluations, or T seconds (e.g. 30s)")
      ->type_name("N|Ts")
      ->default_str("40");
  app.add_option_function<std::string>(
         "--time-limit",
         [&](const std::string& text) {
           o.time_limit = parse_time_limit(text);
           o.time_limit_text = text;
         },
         "the whole run: T seconds, minutes or hours (e.g. 600s, 45m, 2h). The\n"
         "shape under way when time runs out keeps the best config found so far\n"
         "(its search cut short); later shapes are left for a rerun with --resume")
      ->type_name("T");
  app.add_option("--out", o.out,
                 "store to update (default: the device's store in the search path when\n"
                 "writable, else share/kgemm/configs beside the program when writable,\n"
                 "else $XDG_DATA_HOME/kgemm, which starts as a copy of a read-only store)")
      ->type_name("FILE");
  add_lock_timeout(app, o.lock_timeout);
  app.add_flag("--resume", o.resume,
               "skip shapes the store already has (tuning again those whose config\n"
               "cannot run here or was measured on an older kernel generation)");
  app.add_option_function<std::string>(
         "--shard", [&](const std::string& text) { o.shard = parse_shard(text); },
         "tune only shard I of N (numbered from 0: 0/N .. N-1/N) of the\n"
         "problem list (repeats dropped): problems I, I+N, I+2N, ... Each\n"
         "shard writes its own store (--out, created even when the shard is\n"
         "empty); `autotune merge` joins them")
      ->type_name("I/N");
  app.add_option("--claim", o.claim,
                 "share the problem list with the autotune runs using the same DIR\n"
                 "(on one node, or a shared file system): each problem goes to the\n"
                 "first run to claim it (a file DIR/<problem>), so runs end about\n"
                 "together however unequal the problems. Each run writes its own\n"
                 "store (--out, created even when it tunes nothing); `autotune merge`\n"
                 "joins them. Clear DIR before a new split: claims outlive their runs")
      ->type_name("DIR");
  app.add_option("--reps", o.reps, "timed repetitions per candidate, median")->transform(count())->type_name("N")->capture_default_str();
  add_operands(app, o.operands);
  app.add_option("--confirm", o.confirm,
                 "re-time the N fastest configs found (the default among them) in\n" +
                     std::to_string(kConfirmRounds) +
                     " alternating rounds and keep the fastest median: the highest of\n"
                     "many single readings is often a lucky one (0 or 1: keep it)")
      ->transform(integer(0))
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the inputs and the random strategies")
      ->transform(integer(INT_MIN))
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--cache", o.cache, "also append every measurement to FILE (tab-separated)")->type_name("FILE");
  app.add_option("--replay", o.replay, "take measurements from such a cache instead of running kernels")->type_name("FILE");
  app.add_option("--verify-store", o.verify_store,
                 "instead of tuning: run every entry of the store FILE on its problem on\n"
                 "this device (random inputs from --seed; alpha 1, beta 0, then alpha -1.5,\n"
                 "beta 0.5), check it as tuning does and report each entry's verdict; exit\n"
                 "status 1 when any entry fails, cannot run here or is refused on load.\n"
                 "On the store's own device, entries measured on an older kernel\n"
                 "generation are re-timed against the space default and kept (with\n"
                 "today's rates and generation) or dropped (wrong, or slower than the\n"
                 "default), and the store is rewritten so")
      ->type_name("FILE");
  if (!app.read(words)) return std::nullopt;
  check_combination(app, o);
  return o;
}

std::optional<MergeOptions> parse_merge(const std::vector<std::string>& words) {
  MergeOptions o;
  App app(kMergeText, "autotune merge", "");
  app.add_option("--out", o.out, "the store to create or extend")->type_name("FILE");
  add_lock_timeout(app, o.lock_timeout);
  app.add_option("STORE", o.inputs, "the stores to merge into --out")->type_name("");
  if (!app.read(words)) return std::nullopt;
  if (!app.count("--out")) throw InvalidArgument(std::string("merge: --out FILE is required (") + kMergeUsage + ")");
  if (o.out.empty()) throw InvalidArgument("merge: option --out needs a file name");
  return o;
}

std::optional<RetimeOptions> parse_retime(const std::vector<std::string>& words) {
  RetimeOptions o;
  App app(kRetimeText, "autotune retime", "Kokkos' flags pass through: --kokkos-num-threads=N (the cache's thread count), --kokkos-device-id=N");
  app.add_option("--cache", o.cache, "the measurement cache of an exhaustive autotune run, extended in place")->type_name("FILE");
  app.add_option("--store", o.store, "a store of the same device whose configs for these problems are re-timed and judged too")->type_name("FILE");
  app.add_option("--top", o.top, "configs re-timed per problem, the fastest recorded")->transform(count())->type_name("N")->capture_default_str();
  app.add_option("--rounds", o.rounds, "rounds, each measuring every one of them once")->transform(count())->type_name("R")->capture_default_str();
  app.add_option("--reps", o.reps, "timed repetitions per measurement, median")->transform(count())->type_name("N")->capture_default_str();
  add_operands(app, o.operands);
  app.add_option("--seed", o.seed, "seed of the inputs")->transform(integer(INT_MIN))->type_name("N")->capture_default_str();
  if (!app.read(words)) return std::nullopt;
  if (o.cache.empty()) throw InvalidArgument(std::string("retime: --cache FILE is required (") + kRetimeUsage + ")");
  return o;
}

}  // namespace kgemm::cli
