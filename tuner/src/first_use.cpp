#include "kgemm/tuner/first_use.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kgemm/spaces/device_info.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/spaces/error.hpp"
#include "kgemm/tuner/tune_problem.hpp"

namespace kgemm {

namespace {

// Tunes `problem` on Space and stores its entry; the entry also serves this process when the
// store cannot be written (the reason goes to stderr).
template <class Space>
std::optional<TunedEntry> tune_on_first_use(const Problem& problem, const TuneSettings& settings,
                                            const std::string& asked) {
  const DeviceInfo device = device_info<Space>();
  const std::string key = to_string(problem);
  std::string path;
  std::optional<TunedEntry> entry;
  try {
    path = tuning_store_path(device);
    const KnownConfigs known(ConfigStore::open(path, device), device);
    entry = tune_problem(Space(), problem, settings, known.template for_problem<Space>(problem), device).entry;
    if (!entry) {
      std::fprintf(stderr, "kgemm: KGEMM_TUNE=%s: no config computed %s right; it runs untuned\n", asked.c_str(), key.c_str());
      return entry;
    }
    ConfigStore::update(path, device, [&](ConfigStore& latest) { latest.put(*entry); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kgemm: KGEMM_TUNE=%s: %s%s\n", asked.c_str(), e.what(),
                 entry ? "; the winner serves this run only" : "; the problem runs untuned");
    return entry;
  }
  std::fprintf(stderr, "kgemm: tuned %s on first use (KGEMM_TUNE=%s, %d configs): %s at %.4g GFLOP/s, space default %.4g; stored in %s\n",
               key.c_str(), asked.c_str(), entry->candidates, to_string(entry->config).c_str(), entry->gflops,
               entry->default_gflops, path.c_str());
  return entry;
}

}  // namespace

bool enable_tuning_on_first_use() {
  const char* value = std::getenv("KGEMM_TUNE");
  const std::string asked = value ? value : "";
  if (asked.empty() || asked == "off") return false;
  TuneSettings settings;
  try {
    settings.budget = parse_budget(asked);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("environment variable KGEMM_TUNE='" + asked +
                          "' is not a budget: configs per problem (e.g. 8) or seconds (e.g. 30s), or 'off' (" +
                          e.reason() + ")");
  }
  for_each_enabled_space_type([&](auto tag) {  // Kokkos may not run yet
    using Space = typename decltype(tag)::type;
    set_first_use_tuner(Space::name(), [settings, asked](const Problem& problem) {
      return tune_on_first_use<Space>(problem, settings, asked);
    });
  });
  return true;
}

}  // namespace kgemm
