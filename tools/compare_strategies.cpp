// kgemm-compare-strategies: how close `random` and `climb` get to `exhaustive` for a share of
// its evaluations, replayed on a measurement cache written by `autotune --strategy exhaustive
// --cache FILE` (no hardware needed: the searches read the recorded numbers).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "kgemm/tuner/cli.hpp"
#include "kgemm/tuner/measurement_cache.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/tool_output.hpp"

namespace {

const char* kHelp = R"(usage: kgemm-compare-strategies --cache FILE [--shares 5,10,20,40] [--seeds 20]
For each problem of an exhaustive autotune cache, runs random and climb with a budget of each
share (percent) of the problem's candidates, over several seeds, and prints the mean and worst
ratio of the best GFLOP/s found to the exhaustive best. Climb runs twice: from the config autotune
measured first (the space default, as autotune does) and from a random candidate (which shows
the search itself, without the head start of a good default).
)";

struct Ratios {
  double sum = 0, worst = 1;
  int count = 0;
  void add(double r) { sum += r, worst = std::min(worst, r), ++count; }
};

}  // namespace

int main(int argc, char** argv) {
  return kgemm::run_tool("kgemm-compare-strategies", [&] {
    kgemm::CommandLine cli(argc, argv, {"cache", "shares", "seeds"}, {"help"});
    if (cli.has("help") || !cli.has("cache")) {
      std::cout << kHelp;
      return cli.has("help") ? 0 : 2;
    }
    const auto by_problem = kgemm::load_measurements(cli.get("cache", ""));
    const std::vector<int> shares = cli.get_int_list("shares", "5,10,20,40");
    const int seeds = cli.get_int("seeds", 20);
    std::vector<Ratios> random(shares.size()), climb(shares.size()), climb_anywhere(shares.size());
    int problems = 0;
    std::size_t candidates_total = 0;
    for (const auto& problem : by_problem) {
      const std::vector<kgemm::Evaluated>& measured = problem.second;
      std::vector<kgemm::Config> candidates;
      double best = 0;
      for (const auto& e : measured) {
        candidates.push_back(e.config);
        if (e.measurement.correct) best = std::max(best, e.measurement.gflops);
      }
      if (best <= 0 || candidates.size() < 20) continue;
      ++problems, candidates_total += candidates.size();
      const kgemm::Evaluate replay = [&](const kgemm::Config& c) {
        return std::find_if(measured.begin(), measured.end(), [&](const auto& e) { return e.config == c; })->measurement;
      };
      for (std::size_t s = 0; s < shares.size(); ++s) {
        kgemm::Budget budget;
        budget.evaluations = std::max(1, int(candidates.size() * shares[s] / 100));
        for (int seed = 1; seed <= seeds; ++seed) {
          random[s].add(kgemm::search(candidates, {candidates[0]}, kgemm::Strategy::Random, budget, seed, replay).best_gflops / best);
          climb[s].add(kgemm::search(candidates, {candidates[0]}, kgemm::Strategy::Climb, budget, seed, replay).best_gflops / best);
          const kgemm::Config& anywhere = candidates[(seed * 7919u) % candidates.size()];
          climb_anywhere[s].add(kgemm::search(candidates, {anywhere}, kgemm::Strategy::Climb, budget, seed, replay).best_gflops / best);
        }
      }
    }
    if (problems == 0) throw std::runtime_error("no problem in the cache has 20 or more measured candidates");
    std::printf("%d problems, %zu candidates each on average, %d seeds; best found / exhaustive best:\n\n", problems,
                candidates_total / problems, seeds);
    std::printf("| share of exhaustive | random mean (worst) | climb from default mean (worst) | climb from random start mean (worst) |\n|---|---|---|---|\n");
    auto cell = [](const Ratios& r) { return std::to_string(r.sum / r.count).substr(0, 5) + " (" + std::to_string(r.worst).substr(0, 5) + ")"; };
    for (std::size_t s = 0; s < shares.size(); ++s)
      std::printf("| %d %% | %s | %s | %s |\n", shares[s], cell(random[s]).c_str(), cell(climb[s]).c_str(),
                  cell(climb_anywhere[s]).c_str());
    return 0;
  });
}
