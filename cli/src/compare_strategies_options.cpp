#include "kgemm/cli/compare_strategies_options.hpp"

#include <string>

#include "kgemm/cli/options.hpp"
#include "kgemm/tuner/retime.hpp"

namespace kgemm::cli {

namespace {

const char* kAbout = R"(Replays each strategy (default: every one autotune offers but exhaustive) on every problem the
caches measured exhaustively, from the starts its search would be given, with each budget (evaluations,
the space default's measurement included, as autotune counts it), over several seeds, and prints
per strategy and budget the geometric mean and the worst over problems of what the config autotune
keeps of the search is worth over what exhaustive search keeps (--judge), how many problems reach
0.98 of it, and the evaluations spent on average.)";

// The help's footer, with the count of configs autotune confirms (retime.hpp) in force.
std::string footer() {
  return R"(--starts: where the searches start besides the space's seeds (fitted to the problem, as recorded):
  store     (default) the configs autotune takes from a store holding every other problem of the
            cache with what its exhaustive search kept and its runners-up (store_starts: what
            dispatch would run, then the dispatch model's next picks, ranked with the cache's
            device facts): a shape tuned
            where its neighbours are already tuned; with --store FILE, from that store less the
            problem's own entry: a new shape tuned from a committed store, as autotune would
            start today
  seeds     the seeds alone: a shape nothing is known about
  recorded  the store's configs the measuring run had, if any

--judge: what a search reads of a config, and what the config autotune keeps is worth:
  kept      (default) a search reads each config's first measurement, the single reading a
            search takes; autotune re-times the fastest )" + std::to_string(kConfirmedConfigs) + R"( it read (its --confirm) and
            keeps the fastest of them again, each worth its last measurement (the median
            `autotune retime` appended; a config never re-timed, its reading scaled as the
            problem's re-timed configs moved). Exhaustive search, judged alike, is the
            reference: what it keeps, not the luckiest of the re-timed configs, which it too
            misses where they lie within their rounds' spread of each other
  best      every config reads and is worth its last measurement; the reference is the best of them

--start-seeds: the seeds the searches start from besides the starts above:
  today     (default) those autotune gives the cache's device with this source tree: a GPU's by
            the compute capability its #device line names (kernels/kgemm/gpu_seeds.hpp), a
            host's where the cache's SIMD width is this build's (its micro-tiles follow it);
            each split along K for the device as autotune splits them. Where this build cannot
            tell (no #device line, another host SIMD width), the recorded ones
  recorded  those the measuring run recorded (a cache keeps the seeds of the day it was measured)
)";
}

}  // namespace

std::optional<CompareStrategiesOptions> parse_compare_strategies(const std::vector<std::string>& words) {
  CompareStrategiesOptions o;
  std::vector<std::string> strategies = CLI::detail::split(searching_strategies(), ',');
  std::string starts = "store";
  std::string judge = "kept";
  std::string start_seeds = "today";
  std::map<DType, std::vector<std::string>> seeds{{DType::F32, {}}, {DType::F16, {}}};
  App app(kAbout, "kgemm-compare-strategies", footer());
  app.add_list("--cache", o.caches, "measurement caches of exhaustive autotune runs (autotune --strategy\nexhaustive --cache FILE)")
      ->type_name("FILE,...")
      ->required();
  app.add_list("--budgets", o.budgets, "evaluations per search")->transform(count());
  app.add_option("--seeds", o.seeds, "seeds per problem and budget")->transform(count())->type_name("N")->capture_default_str();
  app.add_list("--strategies", strategies, "the strategies replayed");
  app.add_option("--starts", starts, "store | seeds | recorded (below)")
      ->check(one_of({"store", "seeds", "recorded"}))
      ->type_name("NAME")
      ->capture_default_str();
  app.add_option("--store", o.store, "with --starts store: start from this store (less each problem's own\nentry), not from the cache's other problems")
      ->type_name("FILE");
  app.add_option("--sibling-store", o.sibling_store,
                 "with --store: the store of another device of its architecture, less each\n"
                 "problem's own entry, whose configs the starts after dispatch's pick are\n"
                 "also ranked among, as autotune ranks them (store_starts)")
      ->type_name("FILE");
  app.add_list("--again", o.again,
               "exhaustive caches of the same problems measured again (another run, or\n"
               "another device of the kind): what their exhaustive search keeps, judged\n"
               "on --cache as a search is: how far exhaustive search itself repeats")
      ->type_name("FILE,...");
  app.add_option("--judge", judge, "kept | best (below)")->check(one_of({"kept", "best"}))->type_name("NAME")->capture_default_str();
  app.add_option("--start-seeds", start_seeds, "today | recorded (below)")
      ->check(one_of({"today", "recorded"}))
      ->type_name("NAME")
      ->capture_default_str();
  const char* seeds_help =
      "the space's seeds for the dtype instead of --start-seeds' (config\n"
      "strings, the default first), each split along K for the cache's device as\n"
      "autotune splits them (search_space.hpp): what other seeds would have given,\n"
      "on the same measurements";
  app.add_list("--f32-seeds", seeds[DType::F32], seeds_help)->type_name("CONFIGS");
  app.add_list("--f16-seeds", seeds[DType::F16], seeds_help)->type_name("CONFIGS");
  app.add_flag("--per-problem", o.per_problem,
               "a row per problem (mean and worst over seeds), saying whether the best's block class is among the "
               "store's starts");
  app.add_option("--worst", o.worst, "the N problems the first strategy does worst on at the first budget")
      ->transform(integer(0))
      ->type_name("N");
  if (!app.read(words)) return std::nullopt;
  for (const std::string& name : strategies) o.strategies.push_back(parse_strategy(name));
  o.judge = judge == "best" ? Judge::Best : Judge::Kept;
  o.start_seeds = start_seeds == "recorded" ? StartSeeds::Recorded : StartSeeds::Today;
  o.starts = starts == "seeds" ? Starts::Seeds : starts == "recorded" ? Starts::Recorded : Starts::Store;
  if (o.store && o.starts != Starts::Store)
    throw InvalidArgument("option --store: the searches start from a store only with --starts store, not " + starts);
  if (o.sibling_store && !o.store)
    throw InvalidArgument("option --sibling-store: a sibling's configs join the starts of a store given with --store");
  for (const auto& [dtype, texts] : seeds)
    for (const std::string& text : texts) o.seed_configs[dtype].push_back(parse_config(text));
  return o;
}

}  // namespace kgemm::cli
