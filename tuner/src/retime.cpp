#include "kgemm/tuner/retime.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "kgemm/spaces/error.hpp"

namespace kgemm {

std::vector<RetimeLeaders> retime_leaders(const MeasurementCache& cache, int top) {
  if (top < 1) throw InvalidArgument("re-timing needs at least one config a problem, not " + std::to_string(top));
  std::vector<RetimeLeaders> out;
  for (const auto& [key, recorded] : cache.problems) {
    if (!recorded.exhaustive()) continue;
    RetimeLeaders r;
    r.problem = parse_problem(key);
    std::vector<Evaluated> correct;
    for (const Evaluated& e : recorded.measured)
      if (e.measurement.correct) correct.push_back(e);
    std::sort(correct.begin(), correct.end(), [](const Evaluated& a, const Evaluated& b) {
      if (a.measurement.gflops != b.measurement.gflops) return a.measurement.gflops > b.measurement.gflops;
      return to_string(a.config) < to_string(b.config);
    });
    const auto last = [&](const Config& c) {
      const auto it = std::find_if(correct.begin(), correct.end(), [&](const Evaluated& e) { return e.config == c; });
      return it == correct.end() ? 0.0 : it->measurement.gflops;
    };
    r.kept = kept_config(recorded.first_readings(), kConfirmedConfigs, last);
    if (correct.size() > std::size_t(top)) r.first_left_out = correct[std::size_t(top)].measurement.gflops;
    correct.resize(std::min(correct.size(), std::size_t(top)));
    r.leaders = std::move(correct);
    out.push_back(std::move(r));
  }
  if (out.empty()) throw InvalidArgument("no problem in the cache was measured exhaustively (autotune --strategy exhaustive --cache FILE)");
  return out;
}

std::size_t judge_store(std::vector<RetimeLeaders>& problems, const ConfigStore& store) {
  std::size_t judged = 0;
  for (RetimeLeaders& r : problems)
    if (const TunedEntry* entry = store.exact(r.problem)) r.judged = entry->config, ++judged;
  return judged;
}

std::vector<Config> retimed_configs(const RetimeLeaders& problem) {
  std::vector<Config> configs;
  for (const Evaluated& e : problem.leaders) configs.push_back(e.config);
  const auto add = [&](const Config& c) {
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  };
  if (problem.kept) add(*problem.kept);
  if (problem.judged) add(*problem.judged);
  return configs;
}

std::vector<Config> fastest_measured(const std::vector<Evaluated>& measured, std::size_t count) {
  std::vector<const Evaluated*> correct;
  for (const Evaluated& e : measured)
    if (e.measurement.correct) correct.push_back(&e);
  std::stable_sort(correct.begin(), correct.end(),
                   [](const Evaluated* a, const Evaluated* b) { return a->measurement.gflops > b->measurement.gflops; });
  std::vector<Config> out;
  for (const Evaluated* e : correct) {
    if (out.size() == count) break;
    if (std::find(out.begin(), out.end(), e->config) == out.end()) out.push_back(e->config);
  }
  return out;
}

std::vector<RatedConfig> runners_up(const std::vector<Evaluated>& measured, const Config& winner, std::size_t count) {
  std::vector<Evaluated> latest = last_readings(measured);
  latest.erase(std::remove_if(latest.begin(), latest.end(), [](const Evaluated& e) { return !e.measurement.correct; }),
               latest.end());
  std::stable_sort(latest.begin(), latest.end(),
                   [](const Evaluated& a, const Evaluated& b) { return a.measurement.gflops > b.measurement.gflops; });
  std::vector<RatedConfig> out;
  const auto class_taken = [&](const Config& c) {
    return same_block_class(c, winner) ||
           std::any_of(out.begin(), out.end(), [&](const RatedConfig& r) { return same_block_class(c, r.config); });
  };
  for (const Evaluated& e : latest) {
    if (out.size() == count) break;
    if (!class_taken(e.config)) out.push_back({e.config, e.measurement.gflops});
  }
  return out;
}

std::optional<Config> kept_config(const std::vector<Evaluated>& measured, int confirm,
                                  const std::function<double(const Config&)>& confirmed) {
  const std::vector<Config> leaders = fastest_measured(measured, std::size_t(std::max(confirm, 1)));
  if (leaders.empty()) return std::nullopt;
  return *std::max_element(leaders.begin(), leaders.end(),
                           [&](const Config& a, const Config& b) { return confirmed(a) < confirmed(b); });
}

std::vector<Evaluated> retime(const std::vector<Config>& configs, int rounds, const Evaluate& measure) {
  if (rounds < 1) throw InvalidArgument("re-timing needs at least one round, not " + std::to_string(rounds));
  const std::size_t count = configs.size();
  std::vector<std::vector<double>> rates(count);
  std::vector<std::string> wrong(count);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t c = (std::size_t(round) + i) % count;
      if (!wrong[c].empty()) continue;
      const Measurement m = measure(configs[c]);
      if (m.correct)
        rates[c].push_back(m.gflops);
      else
        wrong[c] = "round " + std::to_string(round + 1) + ": " + m.note;
    }
  std::vector<Evaluated> out;
  for (std::size_t c = 0; c < count; ++c) {
    Evaluated e{configs[c], {}};
    if (!wrong[c].empty()) {
      e.measurement = {false, 0, wrong[c]};
    } else {
      std::vector<double>& r = rates[c];
      std::sort(r.begin(), r.end());
      const std::size_t mid = r.size() / 2;
      e.measurement.correct = true;
      e.measurement.gflops = r.size() % 2 ? r[mid] : (r[mid - 1] + r[mid]) / 2;
      char note[96];
      std::snprintf(note, sizeof note, "re-timed: median of %d rounds (%.4g - %.4g GFLOP/s)", rounds, r.front(), r.back());
      e.measurement.note = note;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace kgemm
