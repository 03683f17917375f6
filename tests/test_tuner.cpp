// Tuner tests: the search strategies on made-up speed landscapes (a fast but wrong config must
// never win; budgets hold; climb finds the top of a smooth landscape in fewer evaluations than
// exhaustive), candidate generation against the device limits, real measurements per space
// rejecting a broken kernel, and the measurement cache round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <cstdio>
#include <set>
#include <tuple>
#include <unistd.h>

#include "kgemm/gpu_seeds.hpp"
#include "kgemm/spaces/call_clock.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/tuner/measurement_cache.hpp"
#include "kgemm/tuner/precision_gate.hpp"
#include "kgemm/tuner/problem_bench.hpp"
#include "kgemm/tuner/retime.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/search_space.hpp"
#include "kgemm/tuner/shard.hpp"
#include "kgemm/tuner/store_recheck.hpp"
#include "kgemm/tuner/tune_problem.hpp"
#include "support/scoped_env.hpp"

namespace kgemm::test {
namespace {

std::vector<Config> grid_of_configs() {
  std::vector<Config> configs;
  for (int mb : {16, 32, 64, 128})
    for (int nb : {16, 32, 64, 128, 256})
      for (int kb : {32, 64, 128}) configs.push_back(ConfigBuilder().mb(mb).nb(nb).kb(kb).tm(4).tn(4).team(1));
  return configs;
}

// Smooth, single-peaked: best at mb 64, nb 128, kb 64.
double smooth_speed(const Config& c) {
  auto closeness = [](int value, int best) { return 1.0 / (1.0 + std::abs(std::log2(double(value) / best))); };
  return 100.0 * closeness(c.mb, 64) * closeness(c.nb, 128) * closeness(c.kb, 64);
}

// A GPU whose split K the dispatch model prices (132 SMs, a known bandwidth), and a problem of
// 1 x 8 blocks of 64 x 64 on it with K long enough for every split.
DeviceInfo split_pricing_gpu() {
  DeviceInfo gpu;
  gpu.space = "cuda", gpu.device = "a GPU", gpu.arch = "sm_90", gpu.threads = 132, gpu.memory_gbps = 3000;
  return gpu;
}
Problem thin_grid() {
  Problem thin;
  thin.m = 49, thin.n = 512, thin.k = 4608;
  return thin;
}

TEST(Search, FastButWrongConfigNeverWins) {
  const auto configs = grid_of_configs();
  const Config wrong = parse_config("mb128_nb256_kb128_tm4_tn4_team1");
  for (Strategy strategy : {Strategy::Exhaustive, Strategy::Random, Strategy::Climb}) {
    const SearchOutcome outcome = search(configs, {configs[0]}, strategy, {}, 7, [&](const Config& c) {
      return c == wrong ? Measurement{false, 1e6, "wrong"} : Measurement{true, smooth_speed(c), ""};
    });
    EXPECT_NE(outcome.best, wrong) << to_string(strategy);
    EXPECT_EQ(outcome.rejected(), 1) << to_string(strategy);
    EXPECT_EQ(outcome.log.size(), configs.size()) << to_string(strategy) << ": unlimited budget visits all";
    EXPECT_EQ(outcome.best, (parse_config("mb64_nb128_kb64_tm4_tn4_team1"))) << to_string(strategy);
  }
}

TEST(Search, EvaluationBudgetIsRespectedAndRandomIsSeeded) {
  const auto configs = grid_of_configs();
  auto speed = [](const Config& c) { return Measurement{true, smooth_speed(c), ""}; };
  for (Strategy strategy : {Strategy::Exhaustive, Strategy::Random, Strategy::Climb})
    EXPECT_EQ(search(configs, {configs[0]}, strategy, parse_budget("9"), 3, speed).log.size(), 9u) << to_string(strategy);
  const auto first = search(configs, {configs[0]}, Strategy::Random, parse_budget("9"), 11, speed);
  const auto again = search(configs, {configs[0]}, Strategy::Random, parse_budget("9"), 11, speed);
  ASSERT_EQ(first.log.size(), again.log.size());
  for (std::size_t i = 0; i < first.log.size(); ++i) EXPECT_EQ(first.log[i].config, again.log[i].config);
}

TEST(Search, ClimbReachesTheTopOfASmoothLandscapeEarly) {
  const auto configs = grid_of_configs();
  const SearchOutcome outcome = search(configs, {parse_config("mb16_nb16_kb32_tm4_tn4_team1")}, Strategy::Climb,
                                       parse_budget(std::to_string(configs.size() / 2)), 5,
                                       [](const Config& c) { return Measurement{true, smooth_speed(c), ""}; });
  EXPECT_EQ(outcome.best, (parse_config("mb64_nb128_kb64_tm4_tn4_team1")));
}

// Two hills: given a foot of each as starts, climb measures both first and climbs the higher
// hill (each step up the first faster neighbour found: at most 4 neighbours a step).
TEST(Search, ClimbStartsFromTheBestOfItsStarts) {
  const auto configs = grid_of_configs();
  auto two_hills = [](const Config& c) {
    const bool right = c.nb >= 64;  // the low hill peaks at nb 16, the high one at nb 256
    const double height = right ? 200.0 : 100.0;
    return Measurement{true, height / (1.0 + std::abs(std::log2(c.nb / (right ? 256.0 : 16.0)))) - c.mb * 0.01, ""};
  };
  const Config low_foot = parse_config("mb16_nb32_kb32_tm4_tn4_team1"),
               high_foot = parse_config("mb16_nb64_kb32_tm4_tn4_team1"),
               high_top = parse_config("mb16_nb256_kb32_tm4_tn4_team1");
  const auto from_both = search(configs, {low_foot, high_foot}, Strategy::Climb, parse_budget("12"), 5, two_hills);
  ASSERT_GE(from_both.log.size(), 2u);
  EXPECT_EQ(from_both.log[0].config, low_foot);
  EXPECT_EQ(from_both.log[1].config, high_foot);
  EXPECT_EQ(from_both.best, high_top);
}

// A start no candidate matches (a block larger than the problem, say) starts the climb at the
// nearest candidate of its kernel family, not at a random one nor at another family's.
TEST(Search, ClimbStartsFromTheNearestCandidateOfAStartsFamily) {
  std::vector<Config> configs = grid_of_configs();
  for (int mb : {32, 64})
    for (int nb : {32, 64}) configs.push_back(ConfigBuilder().mb(mb).nb(nb).kb(32).tm(32).tn(32).team(128).family(Family::TensorCore));  // a tensor-core family
  const Config too_large = parse_config("mb128_nb128_kb32_tm32_tn32_team512_tc");  // no candidate
  std::vector<Config> measured;
  const SearchOutcome outcome = search(configs, {too_large}, Strategy::Climb, parse_budget("1"), 3, [&](const Config& c) {
    measured.push_back(c);
    return Measurement{true, smooth_speed(c), ""};
  });
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured.front(), (parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc")));
}

// Once the faster start's hill is climbed, the climb goes on beside the configs it measured, the
// other start among them, and finds the best on that start's hill rather than from a random
// candidate: every config measured until the best is a start or one step from one measured before it.
TEST(Search, ClimbGoesOnBesideMeasuredConfigsNotFromRandomOnes) {
  std::vector<Config> configs;  // 384: a random candidate is seldom next to the few measured
  for (int mb = 8; mb <= 1024; mb *= 2)
    for (int nb = 8; nb <= 1024; nb *= 2)
      for (int kb = 8; kb <= 256; kb *= 2) configs.push_back(ConfigBuilder().mb(mb).nb(nb).kb(kb).tm(4).tn(4).team(1));
  auto two_hills = [](const Config& c) {  // high start, low top at nb 256; low start, high top at nb 16 (small mb, kb)
    const bool right = c.nb >= 64;
    const double top = right ? 150.0 : 300.0, peak = right ? 256.0 : 16.0;
    const double foot = right ? 140.0 : 60.0;
    return Measurement{true, foot + (top - foot) / (1.0 + std::abs(std::log2(c.nb / peak))) - c.mb * 0.01 - c.kb * 0.001, ""};
  };
  auto rank = [](int value) { return std::log2(double(value)); };  // the values are powers of two
  auto one_step = [&](const Config& a, const Config& b) {
    return std::abs(rank(a.mb) - rank(b.mb)) + std::abs(rank(a.nb) - rank(b.nb)) + std::abs(rank(a.kb) - rank(b.kb)) == 1;
  };
  const Config left_start = parse_config("mb128_nb32_kb128_tm4_tn4_team1"),
               right_start = parse_config("mb16_nb64_kb32_tm4_tn4_team1");
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto outcome = search(configs, {left_start, right_start}, Strategy::Climb, parse_budget("40"), seed, two_hills);
    const Config top = parse_config("mb8_nb16_kb8_tm4_tn4_team1");
    EXPECT_EQ(outcome.best, top) << "seed " << seed;
    for (std::size_t i = 2; i < outcome.log.size() && outcome.log[i - 1].config != top; ++i)
      EXPECT_TRUE(std::any_of(outcome.log.begin(), outcome.log.begin() + long(i),
                              [&](const Evaluated& before) { return one_step(before.config, outcome.log[i].config); }))
          << "seed " << seed << ": evaluation " << i << ", " << to_string(outcome.log[i].config) << ", jumped";
  }
}

// A climb measures a place's neighbours in the order the model predicts them fastest: with a
// step or two of budget left after its start, a climb guided by a prediction that ranks the
// best neighbour first takes it on every seed, where random order (no prediction) misses it
// on most of the 44 neighbours' orders.
TEST(Search, ClimbStepsToTheNeighbourPredictedFastestFirst) {
  std::vector<Config> configs;
  for (int mb : {8, 16, 32, 64, 128})
    for (int nb : {8, 16, 32, 64, 128})
      for (int kb : {8, 16, 32, 64, 128}) configs.push_back(ConfigBuilder().mb(mb).nb(nb).kb(kb).tm(4).tn(4).team(1));
  const Config start = parse_config("mb32_nb32_kb32_tm4_tn4_team1"), best = parse_config("mb32_nb32_kb64_tm4_tn4_team1");
  const auto speed = [&](const Config& c) { return Measurement{true, c == best ? 200.0 : c == start ? 100.0 : 50.0, ""}; };
  const Predict knows_the_best = [&](const Config&, double from_gflops, const Config& to) { return to == best ? 2 * from_gflops : from_gflops; };
  int found_unguided = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const SearchOutcome guided = search(configs, {start}, Strategy::Climb, parse_budget("2"), seed, speed, {}, knows_the_best);
    EXPECT_EQ(guided.best, best) << "seed " << seed;
    found_unguided += search(configs, {start}, Strategy::Climb, parse_budget("2"), seed, speed).best == best;
  }
  EXPECT_LT(found_unguided, 5);
}

// From a tensor-core config a climb steps to a shallower pipeline last, whatever the model
// predicts (a slab halved or fewer slab buffers ran slower in most pairs the Hopper caches
// measured): with a model predicting the shallower slab and the buffer fewer fastest, budget 2's
// one step goes to the split and finds the best; from a SIMT config it follows the model.
TEST(Search, ClimbFromATensorCoreConfigStepsToAShallowerPipelineLast) {
  for (const Family family : {Family::TensorCore, Family::Warpgroup, Family::WarpSpecialized, Family::Simt}) {
    const int tm = family == Family::Simt ? 8 : family == Family::Warpgroup ? 128 : 64;
    const int team = family == Family::Simt || family == Family::Warpgroup ? 128 : 64;
    std::vector<Config> configs;
    for (int kb : {16, 32})
      for (int buffers : {3, 4})
        for (int ks : {1, 2})
          configs.push_back(ConfigBuilder().mb(128).nb(64).kb(kb).tm(tm).tn(family == Family::Simt ? 8 : 64).team(team).ks(ks)
                                .slab_buffers(buffers).family(family));
    const Config start = configs[6], split = configs[7];
    ASSERT_EQ(start.kb, 32);
    ASSERT_EQ(start.slab_buffers, 4);
    ASSERT_EQ(split.ks, 2);
    const auto shallower = [&](const Config& c) { return c.kb < start.kb || c.slab_buffers < start.slab_buffers; };
    const auto speed = [&](const Config& c) { return Measurement{true, c == split ? 200.0 : c == start ? 100.0 : 50.0, ""}; };
    const Predict prefers_shallower = [&](const Config& from, double from_gflops, const Config& to) {
      return to.kb < from.kb || to.slab_buffers < from.slab_buffers ? 3 * from_gflops : to == split ? 1.5 * from_gflops : from_gflops;
    };
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const SearchOutcome outcome = search(configs, {start}, Strategy::Climb, parse_budget("2"), seed, speed, {}, prefers_shallower);
      ASSERT_EQ(outcome.log.size(), 2u);
      if (family == Family::Simt)
        EXPECT_TRUE(shallower(outcome.log[1].config)) << to_string(outcome.log[1].config);
      else
        EXPECT_EQ(outcome.log[1].config, split) << family_suffix(family) << " " << to_string(outcome.log[1].config);
    }
  }
}

// From a tensor-core config a climb steps to one slab buffer more first, whatever the model
// predicts (the model's fixed cost grows with the buffers; one more ran faster in most pairs the
// Hopper caches measured): with a model predicting the deeper pipeline slowest and the split
// fastest, budget 2's one step goes to the deeper pipeline and finds the best on every seed;
// from a SIMT config it follows the model to the split.
TEST(Search, ClimbFromATensorCoreConfigStepsToOneBufferMoreFirst) {
  for (const Family family : {Family::TensorCore, Family::Warpgroup, Family::Simt}) {
    const int tm = family == Family::Warpgroup ? 128 : family == Family::TensorCore ? 64 : 8;
    const int team = family == Family::Simt ? 128 : 64;
    std::vector<Config> configs;
    for (int buffers : {0, 3, 4})
      for (int ks : {1, 2})
        configs.push_back(ConfigBuilder().mb(128).nb(64).kb(32).tm(tm).tn(family == Family::Simt ? 8 : 64).team(team).ks(ks)
                              .slab_buffers(buffers).family(family));
    const Config start = configs[0], split = configs[1], deeper = configs[2];
    ASSERT_EQ(split.ks, 2);
    ASSERT_EQ(deeper.slab_buffers, 3);
    const auto speed = [&](const Config& c) { return Measurement{true, c == deeper ? 200.0 : c == start ? 100.0 : 50.0, ""}; };
    const Predict prefers_the_split = [&](const Config& from, double from_gflops, const Config& to) {
      return to == split ? 1.5 * from_gflops : to.slab_buffers > from.slab_buffers ? 0.5 * from_gflops : from_gflops;
    };
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const SearchOutcome outcome = search(configs, {start}, Strategy::Climb, parse_budget("2"), seed, speed, {}, prefers_the_split);
      ASSERT_EQ(outcome.log.size(), 2u);
      EXPECT_EQ(outcome.log[1].config, family == Family::Simt ? split : deeper) << to_string(outcome.log[1].config);
    }
  }
}

// Where the model predicts a neighbour of another block kBlockLeap (1.2) times here's rate or
// more, a climb steps there first, before the buffer-more rule's deeper pipeline: the model
// prices how a block fills the device, which that rule does not know. Predicted only 1.1 times
// faster, the deeper pipeline comes first.
TEST(Search, ClimbStepsFirstToABlockTheModelPredictsMuchFaster) {
  std::vector<Config> configs;
  for (int mb : {128, 192})
    for (int buffers : {0, 3})
      configs.push_back(ConfigBuilder().mb(mb).nb(64).kb(32).tm(64).tn(32).team(mb).slab_buffers(buffers).family(Family::TensorCore));
  const Config start = configs[0], deeper = configs[1], taller = configs[2];
  ASSERT_EQ(deeper.slab_buffers, 3);
  ASSERT_EQ(taller.mb, 192);
  for (const double taller_predicted : {1.5, 1.1}) {
    const Config best = taller_predicted > 1.2 ? taller : deeper;
    const auto speed = [&](const Config& c) { return Measurement{true, c == best ? 200.0 : c == start ? 100.0 : 50.0, ""}; };
    const Predict prefers_taller = [&](const Config& from, double from_gflops, const Config& to) {
      return to.mb != from.mb ? taller_predicted * from_gflops : to.slab_buffers > from.slab_buffers ? 0.9 * from_gflops : from_gflops;
    };
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const SearchOutcome outcome = search(configs, {start}, Strategy::Climb, parse_budget("2"), seed, speed, {}, prefers_taller);
      ASSERT_EQ(outcome.log.size(), 2u);
      EXPECT_EQ(outcome.log[1].config, best) << "predicted " << taller_predicted << "x: " << to_string(outcome.log[1].config);
    }
  }
}

// After the store's starts, the seed the model ranks first goes before the step beside the fastest
// config where it is of a kernel family measured by then and predicted faster than both; a seed of
// a family not yet measured (priced from another family's rate: fit alone) waits for the step.
TEST(Search, SeedsOfAMeasuredFamilyPredictedFasterGoBeforeTheStep) {
  const Config fallback = ConfigBuilder().mb(128).nb(64).kb(16).tm(8).tn(8).team(128);
  const Config stored = ConfigBuilder().mb(64).nb(64).kb(32).tm(32).tn(32).team(128).family(Family::TensorCore);
  Config deeper = stored;
  deeper.slab_buffers = 3;
  for (const Family seed_family : {Family::TensorCore, Family::Warpgroup}) {
    const Config seed = ConfigBuilder().mb(128).nb(128).kb(32).tm(64).tn(64).team(128).family(seed_family);
    const std::vector<Config> configs = {fallback, stored, deeper, seed};
    const auto speed = [&](const Config& c) { return Measurement{true, c == stored ? 100.0 : 50.0, ""}; };
    const Predict bigger_blocks = [](const Config& from, double from_gflops, const Config& to) {
      return to.mb * to.nb > from.mb * from.nb ? 1.5 * from_gflops : from_gflops;
    };
    const Config third = seed_family == Family::TensorCore ? seed : deeper;
    for (std::uint64_t rng_seed = 1; rng_seed <= 5; ++rng_seed) {
      const SearchOutcome outcome =
          search(configs, {fallback, stored, seed}, Strategy::Climb, parse_budget("3"), rng_seed, speed, {}, bigger_blocks, 2);
      ASSERT_EQ(outcome.log.size(), 3u);
      EXPECT_EQ(outcome.log[2].config, third) << family_suffix(seed) << ": " << to_string(outcome.log[2].config);
    }
  }
}

// Once no neighbour of the fastest config is faster, a climb steps beside the next fastest config
// measured, not from a start far below: a config one step past the second best, two from the
// first start, is found within the budget on every seed (the first start's six neighbours, then
// the second best's five).
TEST(Search, ClimbStepsBesideTheSecondBestBeforeALowerStart) {
  const auto configs = grid_of_configs();
  const Config start = parse_config("mb32_nb64_kb64_tm4_tn4_team1"), low_start = parse_config("mb16_nb256_kb128_tm4_tn4_team1"),
               second = parse_config("mb64_nb64_kb64_tm4_tn4_team1"), best = parse_config("mb128_nb64_kb64_tm4_tn4_team1");
  const auto speed = [&](const Config& c) {
    const double rate = c == best ? 200 : c == start ? 100 : c == second ? 95 : c == low_start ? 20 : 10;
    const bool beside_start = std::abs(std::log2(double(c.mb) / start.mb)) + std::abs(std::log2(double(c.nb) / start.nb)) +
                                  std::abs(std::log2(double(c.kb) / start.kb)) == 1;
    return Measurement{true, beside_start && c != second ? 90.0 : rate, ""};
  };
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const SearchOutcome outcome = search(configs, {start, low_start}, Strategy::Climb, parse_budget("13"), seed, speed);
    EXPECT_EQ(outcome.best, best) << "seed " << seed;
  }
}

// A warp tile's rows and its columns are a step each: from a 32 x 64 warp tile a climb of two
// steps reaches 64 x 64 (the block's two other tiles, 32 x 32 and 64 x 32, are slower than the
// start), where one ordering of the tiles would put 64 x 32 between them and end the climb at the
// start.
TEST(Search, ClimbStepsAlongAWarpTilesRowsAndColumnsApart) {
  std::vector<Config> configs;
  for (auto [tm, tn] : std::vector<std::pair<int, int>>{{32, 32}, {32, 64}, {64, 32}, {64, 64}})
    configs.push_back(ConfigBuilder().mb(128).nb(64).kb(16).tm(tm).tn(tn).team(128 / tm * (64 / tn) * 32).family(Family::TensorCore));
  const Config start = configs[1], best = configs[3];
  const auto speed = [&](const Config& c) { return Measurement{true, c == best ? 200.0 : c == start ? 100.0 : 50.0, ""}; };
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const SearchOutcome outcome = search(configs, {start}, Strategy::Climb, parse_budget("3"), seed, speed);
    EXPECT_EQ(outcome.best, best) << "seed " << seed;
  }
}

// The dispatch model's prediction from a measured config: the same config at the rate measured,
// a block that pads the problem more slower, a split of K on a grid that leaves most SMs idle
// faster (the sum pass costs less than the idle SMs).
TEST(Search, ModelPredictionScalesAMeasuredRateByTheFit) {
  const Predict predict = model_prediction(thin_grid(), split_pricing_gpu());
  const Config here = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  Config padded = here, split = here;
  padded.mb = 128, split.ks = 8;
  EXPECT_DOUBLE_EQ(predict(here, 1000, here), 1000);
  EXPECT_LT(predict(here, 1000, padded), 1000);
  EXPECT_GT(predict(here, 1000, split), 1000);
}

// The store's configs are measured right after the space default and before the other seeds,
// each once: a budget that ends before the seeds still measures every one of them, and finds the
// best where it is the store's third config.
TEST(Search, StoresConfigsAreMeasuredBeforeTheOtherSeeds) {
  const auto configs = grid_of_configs();
  const std::vector<Config> seeds = {configs[0], configs[1], configs[2], configs[3]};
  const std::vector<Config> known = {configs[10], configs[1], configs[20], configs[30]};
  const std::vector<Config> starts = ordered_starts(seeds, known);
  EXPECT_EQ(starts, (std::vector<Config>{configs[0], configs[10], configs[1], configs[20], configs[30], configs[2], configs[3]}));
  const auto speed = [&](const Config& c) { return Measurement{true, c == configs[30] ? 300.0 : smooth_speed(c), ""}; };
  const SearchOutcome outcome = search(configs, starts, Strategy::Climb, parse_budget("5"), 1, speed);
  EXPECT_EQ(outcome.best, configs[30]);
  for (std::size_t i = 0; i < outcome.log.size(); ++i) EXPECT_EQ(outcome.log[i].config, starts[i]);
}

// With step_after, the climb steps once from the fastest of the first starts (the default and the
// store's configs) before it measures the others (the seeds): a budget that ends one evaluation
// after the store's configs finds the best next to the fastest of them, where measuring the seeds
// first would spend that evaluation on a seed. Without a store nothing is stepped from early.
TEST(Search, ClimbStepsFromTheStoresBestBeforeMeasuringTheSeeds) {
  const auto configs = grid_of_configs();  // 4 x 5 x 3: mb, nb, kb
  const Config fallback = parse_config("mb16_nb16_kb32_tm4_tn4_team1"), stored = parse_config("mb64_nb64_kb64_tm4_tn4_team1"),
               other_stored = parse_config("mb128_nb256_kb128_tm4_tn4_team1");
  const Config best = parse_config("mb64_nb128_kb64_tm4_tn4_team1");  // one step from `stored` along nb
  const std::vector<Config> seeds = {fallback, parse_config("mb32_nb32_kb32_tm4_tn4_team1"), parse_config("mb128_nb16_kb32_tm4_tn4_team1")};
  const std::vector<Config> known = {other_stored, stored};
  const std::vector<Config> starts = ordered_starts(seeds, known);
  EXPECT_EQ(step_after_starts(starts, known), 3u);
  EXPECT_EQ(step_after_starts(starts, {}), 0u);
  EXPECT_EQ(step_after_starts(starts, {fallback}), 1u);
  const auto speed = [&](const Config& c) { return Measurement{true, c == best ? 300.0 : c == stored ? 200.0 : 100.0, ""}; };
  const Predict knows_the_best = [&](const Config&, double from_gflops, const Config& to) { return to == best ? 2 * from_gflops : from_gflops; };
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const SearchOutcome stepped = search(configs, starts, Strategy::Climb, parse_budget("4"), seed, speed, {}, knows_the_best,
                                         step_after_starts(starts, known));
    EXPECT_EQ(stepped.best, best) << "seed " << seed;
    const SearchOutcome seeds_first = search(configs, starts, Strategy::Climb, parse_budget("4"), seed, speed, {}, knows_the_best);
    EXPECT_EQ(seeds_first.best, stored) << "seed " << seed;
    ASSERT_EQ(seeds_first.log.size(), 4u);
    EXPECT_EQ(seeds_first.log[3].config, seeds[1]) << "seed " << seed;
  }
}

// The seeds after the first start (the default) are measured in the order the model predicts
// them fastest (here every config is of one family, and the prediction the same from any), the
// given order among equal predictions; the store's configs (the first step_after starts) keep
// their order.
TEST(Search, SeedsAreMeasuredInThePredictedOrder) {
  const auto configs = grid_of_configs();
  const std::vector<Config> starts = {configs[0], configs[10], configs[20], configs[30], configs[40]};
  const auto speed = [](const Config& c) { return Measurement{true, smooth_speed(c), ""}; };
  const Predict prefers_the_last = [&](const Config&, double from_gflops, const Config& to) {
    return to == starts.back() ? 2 * from_gflops : from_gflops;
  };
  const SearchOutcome seeds_alone = search(configs, starts, Strategy::Climb, parse_budget("3"), 1, speed, {}, prefers_the_last);
  ASSERT_EQ(seeds_alone.log.size(), 3u);
  EXPECT_EQ(seeds_alone.log[0].config, starts[0]);
  EXPECT_EQ(seeds_alone.log[1].config, starts[4]);
  EXPECT_EQ(seeds_alone.log[2].config, starts[1]);
  // The first three as given, a step from the fastest of them (none of the starts is one step
  // from another), then the seeds, the predicted fastest first. The model predicts the step as
  // fast as the last seed, so the seeds wait for it (SeedsOfAMeasuredFamilyPredictedFasterGoBeforeTheStep).
  const Predict and_the_steps = [&](const Config&, double from_gflops, const Config& to) {
    return to == starts.back() || std::find(starts.begin(), starts.end(), to) == starts.end() ? 2 * from_gflops : from_gflops;
  };
  const SearchOutcome after_the_store =
      search(configs, starts, Strategy::Climb, parse_budget("5"), 1, speed, {}, and_the_steps, 3);
  ASSERT_EQ(after_the_store.log.size(), 5u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(after_the_store.log[i].config, starts[i]);
  EXPECT_EQ(std::find(starts.begin(), starts.end(), after_the_store.log[3].config), starts.end());
  EXPECT_EQ(after_the_store.log[4].config, starts[4]);
}

// The seeds are ranked once, before the first of them, each from the measured configs of its own
// kernel family where there are any: the model prices a block's fit, not a family's instructions,
// so from the SIMT default every tensor-core seed looks as fast as its fit. Here the model, from
// any config, ranks the SIMT seed above the tensor-core ones; measured from the tensor-core store
// config, which ran twice as fast as the default, a tensor-core seed ranks first. With the seeds
// alone, a tensor-core seed measured fast does not pull the other one ahead of the SIMT seed.
TEST(Search, SeedsAreRankedOnceFromTheirOwnFamilysRate) {
  const Config fallback = parse_config("mb128_nb64_kb16_tm8_tn8_team128"), simt_seed = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  const Config stored = parse_config("mb64_nb64_kb16_tm32_tn64_team64_st4_tc"), tc_seed = parse_config("mb32_nb64_kb32_tm32_tn32_team64_st3_tc"),
               other_tc_seed = parse_config("mb64_nb32_kb32_tm32_tn32_team64_st3_tc");
  const std::vector<Config> configs = {fallback, simt_seed, stored, tc_seed, other_tc_seed};
  const auto speed = [&](const Config& c) { return Measurement{true, c.tensor_cores() ? 200.0 : 100.0, ""}; };
  const Predict fit_alone = [&](const Config&, double from_gflops, const Config& to) {
    return to == simt_seed ? 1.2 * from_gflops : to == other_tc_seed ? 1.5 * from_gflops : from_gflops;
  };
  const std::vector<Config> seeds = {fallback, simt_seed, tc_seed};
  const std::vector<Config> starts = ordered_starts(seeds, {stored});
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const SearchOutcome outcome = search(configs, starts, Strategy::Climb, parse_budget("3"), seed, speed, {}, fit_alone,
                                         step_after_starts(starts, {stored}));
    ASSERT_EQ(outcome.log.size(), 3u);
    EXPECT_EQ(outcome.log[1].config, stored);
    EXPECT_EQ(outcome.log[2].config, tc_seed) << to_string(outcome.log[2].config);
    // Seeds alone: nothing of the tensor-core family measured before the first seed, every seed
    // ranked from the default, and that order kept after the first tensor-core seed ran fast.
    const std::vector<Config> alone = {fallback, other_tc_seed, tc_seed, simt_seed};
    const SearchOutcome seeds_alone = search(configs, alone, Strategy::Climb, parse_budget("3"), seed, speed, {}, fit_alone);
    ASSERT_EQ(seeds_alone.log.size(), 3u);
    EXPECT_EQ(seeds_alone.log[1].config, other_tc_seed);
    EXPECT_EQ(seeds_alone.log[2].config, simt_seed) << to_string(seeds_alone.log[2].config);
  }
}

// A seed of a family nothing measured here belongs to is ranked from the fastest prediction of any
// config measured, not from the default's alone: a SIMT store config that ran 3x the default's rate
// prices the SIMT seed at 1.2x its own rate; from the default, the tensor-core seed (priced at 1.5x
// whatever it is predicted from) would rank below it, from the store's config above it. The stored
// config is a step from neither seed, so no step comes between.
TEST(Search, AnUnmeasuredFamilysSeedsAreRankedFromTheFastestConfigMeasured) {
  const Config fallback = parse_config("mb128_nb64_kb16_tm8_tn8_team128"), stored = parse_config("mb32_nb32_kb64_tm4_tn4_team64");
  const Config simt_seed = parse_config("mb64_nb64_kb32_tm8_tn4_team128"), tc_seed = parse_config("mb32_nb64_kb32_tm32_tn32_team64_st3_tc");
  const std::vector<Config> configs = {fallback, stored, simt_seed, tc_seed};
  const auto speed = [&](const Config& c) { return Measurement{true, c == fallback ? 50.0 : c == stored ? 150.0 : 100.0, ""}; };
  const Predict fit = [&](const Config&, double from_gflops, const Config& to) {
    return to == tc_seed ? 1.5 * from_gflops : to == simt_seed ? 1.2 * from_gflops : from_gflops;
  };
  const std::vector<Config> starts = ordered_starts({fallback, simt_seed, tc_seed}, {stored});
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const SearchOutcome outcome =
        search(configs, starts, Strategy::Climb, parse_budget("3"), seed, speed, {}, fit, step_after_starts(starts, {stored}));
    ASSERT_EQ(outcome.log.size(), 3u);
    EXPECT_EQ(outcome.log[1].config, stored);
    EXPECT_EQ(outcome.log[2].config, tc_seed) << to_string(outcome.log[2].config);
  }
}

TEST(Search, BadStrategyAndBudgetTextsAreRejected) {
  EXPECT_THROW(parse_strategy("annealing"), std::invalid_argument);
  EXPECT_THROW(parse_budget("ten"), std::invalid_argument);
  EXPECT_THROW(parse_budget("-3"), std::invalid_argument);
  EXPECT_THROW(parse_budget("30m"), std::invalid_argument);
  EXPECT_EQ(parse_budget("30s").seconds, 30.0);
  EXPECT_EQ(parse_budget("40").evaluations, 40);
}

TEST(MeasurementCache, RoundTripKeepsTheLastValuePerConfigExactly) {
  const std::string path = ::testing::TempDir() + "kgemm_cache_test.tsv";
  std::remove(path.c_str());
  Problem p;
  p.m = 49, p.n = 2048, p.k = 512;
  append_measurement(path, p, {parse_config("mb64_nb64_kb32_tm4_tn4_team16"), {true, 12.5, ""}});
  append_measurement(path, p, {parse_config("mb64_nb64_kb32_tm8_tn8_team16"), {false, 0, "C(0,1,2)\toff"}});
  append_measurement(path, p, {parse_config("mb64_nb64_kb32_tm4_tn4_team16"), {true, 1.0 / 3.0, ""}});
  const auto loaded = load_measurements(path).problems;
  ASSERT_EQ(loaded.size(), 1u);
  const auto& list = loaded.at(to_string(p)).measured;
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].measurement.gflops, 1.0 / 3.0);  // every digit: a replay rounds what the run rounded
  EXPECT_FALSE(list[1].measurement.correct);
  EXPECT_EQ(list[1].measurement.note, "C(0,1,2) off");
  EXPECT_EQ(loaded.at(to_string(p)).given.candidates, 0u);  // no search line: not known to be exhaustive
  // Every reading in file order too: a replay gives a run back its n-th reading of a config.
  const auto& readings = loaded.at(to_string(p)).readings;
  ASSERT_EQ(readings.size(), 3u);
  EXPECT_EQ(readings[0].measurement.gflops, 12.5);
  EXPECT_EQ(readings[2].measurement.gflops, 1.0 / 3.0);
  EXPECT_EQ(readings[0].config, readings[2].config);
}

TEST(MeasurementCache, RecordsTheDeviceAndWhatEachSearchWasGiven) {
  const std::string path = ::testing::TempDir() + "kgemm_cache_search_test.tsv";
  std::remove(path.c_str());
  Problem p, q;
  p.m = 49, p.n = 2048, p.k = 512;
  q.m = 3136, q.n = 64, q.k = 576, q.dtype = DType::F16;
  const DeviceInfo device{"cuda", "NVIDIA H200", "sm_90", 132, 4814.304};
  const std::vector<Config> seeds = {parse_config("mb64_nb64_kb32_tm4_tn4_team16"),
                                     parse_config("mb64_nb64_kb32_tm32_tn32_team128_ks4_tc")};
  append_device(path, device);
  append_search(path, p, {2, seeds[0], seeds, {}});
  append_measurement(path, p, {seeds[0], {true, 12.5, ""}});
  append_search(path, q, {3, seeds[1], {seeds[1]}, {seeds[0], seeds[1]}});
  append_measurement(path, q, {seeds[0], {true, 2.5, ""}});
  append_measurement(path, p, {seeds[1], {true, 20.0, ""}});
  const MeasurementCache loaded = load_measurements(path);
  ASSERT_TRUE(loaded.device.has_value());
  EXPECT_EQ(*loaded.device, device);
  ASSERT_EQ(loaded.problems.size(), 2u);
  const RecordedSearch& first = loaded.problems.at(to_string(p));
  EXPECT_EQ(first.given.candidates, 2u);
  EXPECT_EQ(first.given.seeds, seeds);
  EXPECT_EQ(first.given.fallback, seeds[0]);
  EXPECT_TRUE(first.given.known.empty());
  EXPECT_TRUE(first.exhaustive());
  const RecordedSearch& second = loaded.problems.at(to_string(q));
  EXPECT_EQ(second.given.candidates, 3u);
  EXPECT_EQ(second.given.known, (std::vector<Config>{seeds[0], seeds[1]}));
  EXPECT_EQ(second.given.fallback, seeds[1]);
  EXPECT_FALSE(second.exhaustive());  // one of three candidates measured

  std::FILE* bad = std::fopen(path.c_str(), "a");
  std::fputs("#search\tgemm_f32_nn_m49_n2048_k512_b1\tmany\tmb64_nb64_kb32_tm4_tn4_team16\t-\tmb64_nb64_kb32_tm4_tn4_team16\n", bad);
  std::fclose(bad);
  try {
    load_measurements(path);
    ADD_FAILURE() << "a search line without a count was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(":7: not a measurement line ('many' is not a candidate count)"), std::string::npos)
        << e.what();
  }
}

TEST(Retime, LeadersAreTheFastestCorrectConfigsOfEachExhaustiveProblem) {
  const Config a = parse_config("mb64_nb64_kb32_tm4_tn4_team16"), b = parse_config("mb64_nb64_kb32_tm8_tn8_team16"),
               c = parse_config("mb32_nb64_kb32_tm4_tn4_team16"), d = parse_config("mb32_nb32_kb32_tm4_tn4_team16");
  Problem p, q;
  p.m = 49, p.n = 2048, p.k = 512;
  q.m = 196, q.n = 256, q.k = 128;
  MeasurementCache cache;
  RecordedSearch& searched = cache.problems[to_string(p)];
  searched.given.candidates = 4;
  // b and c tie: config-string order puts c (mb32...) first.
  searched.measured = {{a, {true, 10, ""}}, {b, {true, 30, ""}}, {c, {true, 30, ""}}, {d, {false, 0, "wrong"}}};
  RecordedSearch& cut_short = cache.problems[to_string(q)];
  cut_short.given.candidates = 4;
  cut_short.measured = {{a, {true, 50, ""}}};

  const std::vector<RetimeLeaders> two = retime_leaders(cache, 2);
  ASSERT_EQ(two.size(), 1u);  // q was not measured exhaustively
  EXPECT_EQ(two[0].problem, p);
  ASSERT_EQ(two[0].leaders.size(), 2u);
  EXPECT_EQ(two[0].leaders[0].config, c);
  EXPECT_EQ(two[0].leaders[1].config, b);
  ASSERT_TRUE(two[0].first_left_out.has_value());
  EXPECT_EQ(*two[0].first_left_out, 10);
  const std::vector<RetimeLeaders> all = retime_leaders(cache, 5);
  EXPECT_EQ(all[0].leaders.size(), 3u);  // the wrong config is no leader
  EXPECT_FALSE(all[0].first_left_out.has_value());

  EXPECT_THROW(retime_leaders(cache, 0), std::invalid_argument);
  cache.problems.erase(to_string(p));
  EXPECT_THROW(retime_leaders(cache, 2), std::invalid_argument);
}

// A store's choice for a problem joins its leaders once, after them, where it is none of them;
// problems the store lacks, and entries for other problems, judge nothing.
TEST(Retime, AStoresChoiceIsReTimedBesideTheLeadersOnce) {
  const Config a = parse_config("mb64_nb64_kb32_tm4_tn4_team16"), b = parse_config("mb64_nb64_kb32_tm8_tn8_team16"),
               c = parse_config("mb32_nb64_kb32_tm4_tn4_team16");
  Problem p, q, r;
  p.m = 49, p.n = 2048, p.k = 512;
  q.m = 196, q.n = 256, q.k = 128;
  r.m = 784, r.n = 128, r.k = 512;
  MeasurementCache cache;
  for (const Problem& x : {p, q}) {
    RecordedSearch& searched = cache.problems[to_string(x)];
    searched.given.candidates = 3;
    searched.measured = {{a, {true, 30, ""}}, {b, {true, 20, ""}}, {c, {true, 10, ""}}};
  }
  std::vector<RetimeLeaders> leaders = retime_leaders(cache, 2);  // a, b each
  ConfigStore store;
  TunedEntry entry{p, c, 100, 50, 3};  // c: not a leader of p
  store.put(entry);
  entry.problem = r, entry.config = a;  // no problem of the cache
  store.put(entry);
  EXPECT_EQ(judge_store(leaders, store), 1u);
  ASSERT_EQ(leaders.size(), 2u);
  const RetimeLeaders& of_p = leaders[0].problem == p ? leaders[0] : leaders[1];
  const RetimeLeaders& of_q = leaders[0].problem == p ? leaders[1] : leaders[0];
  ASSERT_TRUE(of_p.judged.has_value());
  EXPECT_EQ(*of_p.judged, c);
  EXPECT_FALSE(of_q.judged.has_value());
  EXPECT_EQ(retimed_configs(of_p), (std::vector<Config>{a, b, c}));
  EXPECT_EQ(retimed_configs(of_q), (std::vector<Config>{a, b}));

  entry.problem = p, entry.config = b;  // a leader of p: re-timed once
  store.put(entry);
  EXPECT_EQ(judge_store(leaders, store), 1u);
  EXPECT_EQ(retimed_configs(of_p), (std::vector<Config>{a, b}));
}

// What exhaustive search kept, the reference a store's choice is judged against: of the three
// fastest first readings (a config's later lines re-time it), the one re-timed fastest; a config
// re-timed fast but read slow the first time was never among them.
TEST(Retime, TheKeptConfigIsTheFastestReTimedOfTheThreeFastestFirstReadings) {
  const std::vector<Config> c = {parse_config("mb64_nb64_kb32_tm4_tn4_team16"), parse_config("mb64_nb64_kb32_tm8_tn8_team16"),
                                 parse_config("mb32_nb64_kb32_tm4_tn4_team16"), parse_config("mb32_nb32_kb32_tm4_tn4_team16"),
                                 parse_config("mb16_nb16_kb32_tm4_tn4_team16")};
  Problem p;
  p.m = 49, p.n = 2048, p.k = 512;
  MeasurementCache cache;
  RecordedSearch& searched = cache.problems[to_string(p)];
  searched.given.candidates = 5;
  const double first[] = {50, 40, 30, 20, 10}, again[] = {25, 35, 32, 45, 9};
  for (std::size_t i = 0; i < c.size(); ++i) searched.readings.push_back({c[i], {true, first[i], ""}});
  for (std::size_t i = 0; i < c.size(); ++i) searched.readings.push_back({c[i], {true, again[i], "re-timed"}});
  for (std::size_t i = 0; i < c.size(); ++i) searched.measured.push_back({c[i], {true, again[i], "re-timed"}});

  const std::vector<Evaluated> read = searched.first_readings();
  ASSERT_EQ(read.size(), c.size());
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(read[i].measurement.gflops, first[i]);
  const std::vector<RetimeLeaders> leaders = retime_leaders(cache, 2);  // by their last readings: c[3], c[1]
  ASSERT_EQ(leaders.size(), 1u);
  ASSERT_TRUE(leaders[0].kept.has_value());
  EXPECT_EQ(*leaders[0].kept, c[1]);  // 35 of c[0..2]; c[3]'s 45 was read at 20
  EXPECT_EQ(retimed_configs(leaders[0]), (std::vector<Config>{c[3], c[1]}));  // the kept config is a leader: once

  const std::vector<RetimeLeaders> one = retime_leaders(cache, 1);  // c[3] alone: the kept config joins it
  ASSERT_TRUE(one[0].kept.has_value());
  EXPECT_EQ(retimed_configs(one[0]), (std::vector<Config>{c[3], c[1]}));

  for (Evaluated& e : searched.readings) e.measurement = {false, 0, "wrong"};
  EXPECT_FALSE(kept_config(searched.first_readings(), kConfirmedConfigs, [](const Config&) { return 1.0; }).has_value());
}

// A tuning run's runners-up: the fastest correct config of each block class but the winner's,
// each config at its last reading, fastest first, as many as asked for.
TEST(Retime, RunnersUpAreTheFastestOfEachOtherBlockClassAtTheirLastReading) {
  const Config winner = parse_config("mb64_nb64_kb32_tm4_tn4_team256");
  const Config deeper_winner = parse_config("mb64_nb64_kb64_tm4_tn4_team256_ks2");  // the winner's class
  const Config wide = parse_config("mb64_nb128_kb32_tm4_tn4_team512"), wide_deep = parse_config("mb64_nb128_kb64_tm4_tn4_team512");
  const Config tiles = parse_config("mb64_nb64_kb32_tm8_tn8_team64"), wrong = parse_config("mb32_nb32_kb32_tm4_tn4_team64");
  const Config cores = parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc");
  const std::vector<Evaluated> measured = {
      {winner, {true, 100, ""}},     {deeper_winner, {true, 99, ""}}, {wide, {true, 80, ""}},
      {wide_deep, {true, 85, ""}},   {tiles, {true, 95, ""}},         {wrong, {false, 0, "C(0,0,1) off"}},
      {cores, {true, 60, ""}},       {tiles, {true, 70, "re-timed"}},  // tiles' last reading
  };
  const std::vector<RatedConfig> two = runners_up(measured, winner, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].config, wide_deep);
  EXPECT_EQ(two[0].gflops, 85);
  EXPECT_EQ(two[1].config, tiles);
  EXPECT_EQ(two[1].gflops, 70);
  const std::vector<RatedConfig> all = runners_up(measured, winner, 10);
  ASSERT_EQ(all.size(), 3u);  // the wrong config's class is never one
  EXPECT_EQ(all[2].config, cores);
  EXPECT_TRUE(runners_up(measured, winner, 0).empty());
  EXPECT_TRUE(same_block_class(winner, deeper_winner));
  EXPECT_FALSE(same_block_class(winner, cores));
  Problem p;
  p.m = p.n = p.k = 64;
  TunedEntry entry{p, winner, 100, 50, 8};
  entry.runners_up = all;
  EXPECT_EQ(why_bad(entry), "");
}

TEST(Retime, RoundsVisitEveryConfigOnceFromAShiftingStartAndKeepMedians) {
  const std::vector<Config> configs = {parse_config("mb64_nb64_kb32_tm4_tn4_team16"),
                                       parse_config("mb64_nb64_kb32_tm8_tn8_team16"),
                                       parse_config("mb32_nb64_kb32_tm4_tn4_team16")};
  const auto index_of = [&](const Config& c) { return int(std::find(configs.begin(), configs.end(), c) - configs.begin()); };
  for (const int rounds : {3, 4}) {
    std::vector<int> order;
    // Config i's j-th reading is 100 i + j * j (odd rounds: median j = 1; four rounds: (1 + 4) / 2).
    std::vector<int> readings(configs.size());
    const std::vector<Evaluated> out = retime(configs, rounds, [&](const Config& c) {
      const int i = index_of(c), j = readings[i]++;
      order.push_back(i);
      return Measurement{true, 100.0 * i + j * j, ""};
    });
    std::vector<int> expected;
    for (int r = 0; r < rounds; ++r)
      for (int i = 0; i < 3; ++i) expected.push_back((r + i) % 3);
    EXPECT_EQ(order, expected);
    ASSERT_EQ(out.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(out[i].config, configs[i]);
      EXPECT_TRUE(out[i].measurement.correct);
      EXPECT_EQ(out[i].measurement.gflops, 100.0 * i + (rounds == 3 ? 1.0 : 2.5));
      EXPECT_NE(out[i].measurement.note.find("median of " + std::to_string(rounds) + " rounds"), std::string::npos);
    }
  }
  // Wrong in round 2: wrong, not measured again, the other configs unaffected.
  int calls_of_first = 0, round = 0;
  const std::vector<Evaluated> out = retime(configs, 3, [&](const Config& c) {
    if (index_of(c) != 0) return Measurement{true, 7, ""};
    ++round;
    ++calls_of_first;
    return round == 2 ? Measurement{false, 0, "C(0,0,1) off"} : Measurement{true, 9, ""};
  });
  EXPECT_EQ(calls_of_first, 2);
  EXPECT_FALSE(out[0].measurement.correct);
  EXPECT_EQ(out[0].measurement.note, "round 2: C(0,0,1) off");
  EXPECT_TRUE(out[1].measurement.correct);
  EXPECT_EQ(out[1].measurement.gflops, 7);
  EXPECT_THROW(retime(configs, 0, [](const Config&) { return Measurement{true, 1, ""}; }), std::invalid_argument);
}

// A tuning run keeps the fastest median of its leaders re-timed, not its luckiest single reading.
// Each config's first reading comes from its hash; every later one reverses their order, so the
// luckiest first reading is the slowest on re-timing whatever configs the space offers.
TEST(TuneProblem, KeepsTheLeaderFastestOnReTimingNotTheLuckiestReading) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  Problem p;
  p.m = 64, p.n = 64, p.k = 64;
  const auto rate = [](const Config& c, bool first) {
    const double reading = 100.0 + double(std::hash<std::string>{}(to_string(c)) % 100000);
    return first ? reading : 200100.0 - reading;
  };
  std::map<std::string, int> readings;
  TuneHooks hooks;
  hooks.replay = [&](const Config& c) { return Measurement{true, rate(c, readings[to_string(c)]++ == 0), ""}; };
  TuneSettings settings;
  settings.budget.evaluations = 12;
  const DeviceInfo device = device_info<Space>();
  const TuneOutcome confirmed = tune_problem(Space(), p, settings, {}, device, hooks);
  std::vector<Evaluated> first{{TuningPolicy<Space>::default_config(p.dtype), {true, 0, ""}}};
  first.front().measurement.gflops = rate(first.front().config, true);
  first.insert(first.end(), confirmed.search.log.begin(), confirmed.search.log.end());
  const std::vector<Config> leaders = fastest_measured(first, 3);
  ASSERT_EQ(leaders.size(), 3u);
  const Config steadiest = *std::max_element(leaders.begin(), leaders.end(), [&](const Config& a, const Config& b) {
    return rate(a, false) < rate(b, false);
  });
  ASSERT_NE(steadiest, leaders.front()) << "the inputs must make the luckiest reading lose on re-timing";
  ASSERT_TRUE(confirmed.entry.has_value());
  EXPECT_EQ(confirmed.entry->config, steadiest);
  // The replays' and the re-timing's account of it (retime.hpp) keeps the same config.
  EXPECT_EQ(kept_config(first, settings.confirm, [&](const Config& c) { return rate(c, false); }), steadiest);
  EXPECT_EQ(confirmed.entry->gflops, stored_rate(rate(steadiest, false)));
  for (const Config& c : leaders) EXPECT_EQ(readings[to_string(c)], 1 + kConfirmRounds) << to_string(c);
  // Its runners-up are of other block classes, each at its last reading: a leader's re-timing.
  EXPECT_FALSE(confirmed.entry->runners_up.empty());
  EXPECT_LE(confirmed.entry->runners_up.size(), kStoredRunnersUp);
  EXPECT_EQ(why_bad(*confirmed.entry), "");
  for (const RatedConfig& r : confirmed.entry->runners_up)
    EXPECT_EQ(r.gflops, stored_rate(rate(r.config, readings[to_string(r.config)] == 1))) << to_string(r.config);

  readings.clear();
  settings.confirm = 1;
  const TuneOutcome single = tune_problem(Space(), p, settings, {}, device, hooks);
  ASSERT_TRUE(single.entry.has_value());
  EXPECT_EQ(single.entry->config, leaders.front());
}

// A kernel that is right except for one element of C (the last product's) when it runs `broken`.
template <class Space>
class SabotagedBench : public ProblemBench<Space, float> {
 public:
  SabotagedBench(const Space& space, const Problem& p, const Config& broken, TimingPolicy timing = {})
      : ProblemBench<Space, float>(space, p, 99, timing), broken_(broken) {}
  void run(const Config& config, float alpha, float beta) const override {
    ProblemBench<Space, float>::run(config, alpha, beta);
    sets_run.insert(this->timed_set());
    if (config != broken_) return;
    const auto C = this->output();
    const int b = int(C.extent(0)) - 1, m = int(C.extent(1)) - 1, n = int(C.extent(2)) - 1;
    Kokkos::parallel_for(
        "sabotage", Kokkos::RangePolicy<Space>(0, 1), KOKKOS_LAMBDA(int) { C(b, m, n) += 0.5f; });
  }

  mutable std::set<std::size_t> sets_run;  // the operand sets its calls ran on

 private:
  Config broken_;
};

// Every kernel kind: a single GEMM, products with their own B each (checked against each
// product's B), products sharing one B.
TEST(ProblemBench, MeasuresCorrectConfigsAndRejectsABrokenKernelOnEverySpace) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    SCOPED_TRACE(Space::name());
    for (Kernel kernel : {Kernel::Gemm, Kernel::Batched, Kernel::SharedB}) {
      SCOPED_TRACE(to_string(kernel));
      Problem p;
      p.kernel = kernel, p.m = 37, p.n = 29, p.k = 131, p.batch = kernel == Kernel::Gemm ? 1 : 3;
      const auto candidates = candidate_configs<Space>(p);
      ASSERT_GE(candidates.size(), 2u);
      SabotagedBench<Space> bench(space, p, candidates[1]);
      const Measurement good = bench.measure(candidates[0]);
      EXPECT_TRUE(good.correct) << good.note;
      EXPECT_GT(good.gflops, 0.0);
      const Measurement bad = bench.measure(candidates[1]);
      EXPECT_FALSE(bad.correct);
      EXPECT_NE(bad.note.find("off by"), std::string::npos) << bad.note;
      const SearchOutcome outcome = search({candidates[0], candidates[1]}, {candidates[0]}, Strategy::Exhaustive, {}, 1,
                                           [&](const Config& c) { return bench.measure(c); });
      EXPECT_EQ(outcome.best, candidates[0]);
    }
  });
}

// A GEMM of odd extents, none a multiple of a block or tile edge.
Problem odd_problem() {
  Problem p;
  p.m = 37, p.n = 29, p.k = 131;
  return p;
}

// Against a rate it cannot approach, a config is checked and timed once (its note says so); a
// wrong one is still wrong; with nothing to beat it is timed in full.
TEST(ProblemBench, HopelessConfigsAreTimedOnceButStillChecked) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    SCOPED_TRACE(Space::name());
    const std::vector<Config> candidates = candidate_configs<Space>(odd_problem());
    ASSERT_GE(candidates.size(), 2u);
    SabotagedBench<Space> bench(space, odd_problem(), candidates[1]);
    const Measurement once = bench.measure(candidates[0], 1e12);
    EXPECT_TRUE(once.correct) << once.note;
    EXPECT_GT(once.gflops, 0.0);
    EXPECT_EQ(once.note.rfind("timed once: below 33 % of the best so far", 0), 0u) << once.note;
    const Measurement wrong = bench.measure(candidates[1], 1e12);
    EXPECT_FALSE(wrong.correct);
    EXPECT_NE(wrong.note.find("off by"), std::string::npos) << wrong.note;
    const Measurement full = bench.measure(candidates[0], once.gflops * 1e-3);
    EXPECT_TRUE(full.correct);
    EXPECT_EQ(full.note, "");
  });
}

// Cold operands: the timed calls go round a ring of operand sets larger than 4x the cache (several
// sets for a small problem) from one timing to the next, the checks run on the checked set before
// and after a timing (a wrong kernel is still seen off by its fault there, not as a poisoned C
// left unwritten), and warm timing stays on the checked set.
TEST(ProblemBench, ColdOperandsAreTimedOnARingAndCheckedOnTheFirstSet) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    SCOPED_TRACE(Space::name());
    const std::vector<Config> candidates = candidate_configs<Space>(odd_problem());
    ASSERT_GE(candidates.size(), 2u);
    TimingPolicy cold;
    cold.operands = OperandCache::Cold;
    SabotagedBench<Space> bench(space, odd_problem(), candidates[1], cold);
    EXPECT_GT(bench.operand_sets(), 1);
    for (int i = 0; i < 2; ++i) {  // 9 timed calls each (warm-up and repetitions): round the ring
      const Measurement good = bench.measure(candidates[0]);
      EXPECT_TRUE(good.correct) << good.note;
      EXPECT_GT(good.gflops, 0.0);
    }
    std::set<std::size_t> every_set;  // the checked one (0) and the ring's
    for (int i = 0; i <= bench.operand_sets(); ++i) every_set.insert(std::size_t(i));
    EXPECT_EQ(bench.sets_run, every_set);
    const Measurement bad = bench.measure(candidates[1]);
    EXPECT_FALSE(bad.correct);
    EXPECT_NE(bad.note.find("off by"), std::string::npos) << bad.note;
    EXPECT_TRUE(bench.measure(candidates[0]).correct);

    SabotagedBench<Space> warm(space, odd_problem(), candidates[1]);
    EXPECT_EQ(warm.operand_sets(), 1);
    EXPECT_TRUE(warm.measure(candidates[0]).correct);
    EXPECT_EQ(warm.sets_run, std::set<std::size_t>{0});
  });
}

// The error measure the precision gate compares: of order fp32's rounding for a correct config,
// and as large as the fault where one element is off by 0.5.
TEST(ProblemBench, MaxRelativeErrorIsSmallForACorrectConfigAndSeesAFault) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    SCOPED_TRACE(Space::name());
    const std::vector<Config> candidates = candidate_configs<Space>(odd_problem());
    ASSERT_GE(candidates.size(), 2u);
    SabotagedBench<Space> bench(space, odd_problem(), candidates[1]);
    const double correct = bench.max_relative_error(candidates[0]);
    EXPECT_GT(correct, 0.0);
    EXPECT_LT(correct, 1e-5);
    // max |C_exact| over k = 131 products of inputs in [-1, 1) is well under 0.5 * 131.
    EXPECT_GT(bench.max_relative_error(candidates[1]), 0.5 / 131);
  });
}

#if defined(KOKKOS_ENABLE_CUDA)
// On GPUs the clock holds the stream before the timed call and after the lead: the hold runs (the
// whole takes at least its length) and is no part of the reading (an empty call reads well under
// it), so a launch slower than the lead's kernel never counts as the call's time.
TEST(CallClock, HoldsTheStreamBeforeTheTimedCallAndLeavesItOut) {
  CallClock<Kokkos::Cuda> clock{Kokkos::Cuda()};
  const auto begin = std::chrono::steady_clock::now();
  const double reading = time_queued_call(clock, [] {}, [] {});
  const double whole = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_GE(whole, kStreamHoldSeconds);
  EXPECT_LT(reading, kStreamHoldSeconds / 2);
}
#endif

// On a device with TF32 tensor cores, 3xTF32 on a long-K problem (its inputs fixed by the bench's
// seed) errs no more than twice the SIMT default, what the tuner's gate asks of it: truncating
// accumulation in the tensor cores over the whole K made it 11x on K = 4608 (H100).
TEST(ProblemBench, SplitTf32ErrsAtMostTwiceTheSimtKernelOnLongK) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    if (!TensorCores<Space>::tf32_on_device()) return;
    SCOPED_TRACE(Space::name());
    Problem p;
    p.m = 192, p.n = 128, p.k = 4608;
    const ProblemBench<Space, float> bench(space, p, 7);
    const double simt = bench.max_relative_error(TuningPolicy<Space>::default_config(DType::F32));
    const Config split_configs[] = {parse_config("mb128_nb64_kb16_tm64_tn32_team128_tc"),
                                    parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc")};
    for (const Config& tc : split_configs) {
      const double split = bench.max_relative_error(tc);
      std::printf("[accuracy] %s 192x128x4608 SIMT %.2e, 3xTF32 %s %.2e\n", Space::name(), simt, to_string(tc).c_str(), split);
      EXPECT_LE(split, kMaxSplitTf32ErrorRatio * simt) << to_string(tc);
    }
  });
}

// Errors made up per config: the SIMT default errs 1e-6, each tensor-core family as listed.
struct MadeUpErrors {
  double mma_sync, warpgroup;
  mutable std::vector<Config> measured;
  double max_relative_error(const Config& c) const {
    measured.push_back(c);
    return c.warpgroups() ? warpgroup : c.tensor_cores() ? mma_sync : 1e-6;
  }
};

TEST(PrecisionGate, OffersEachSplitTf32FamilyOnlyWithinTwiceTheSimtError) {
  const Config simt = parse_config("mb128_nb64_kb16_tm8_tn8_team128"),
               tc_seed = parse_config("mb128_nb64_kb16_tm64_tn32_team128_tc"),
               tc_other = parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc");
  const Config wg_seed = parse_config("mb128_nb64_kb16_tm128_tn64_team128_wg"),
               wg_other = parse_config("mb128_nb128_kb32_tm128_tn64_team256_wg");
  const std::vector<Config> seeds = {simt, tc_seed, wg_seed};
  const std::vector<Config> all = {simt, wg_other, tc_other, tc_seed, wg_seed};
  for (double tc_ratio : {0.5, 2.0, 2.5, 40.0})
    for (double wg_ratio : {0.3, 3.0}) {
      SCOPED_TRACE(std::to_string(tc_ratio) + " " + std::to_string(wg_ratio));
      std::vector<Config> candidates = all;
      const MadeUpErrors bench{tc_ratio * 1e-6, wg_ratio * 1e-6, {}};
      const auto gate = gate_split_tf32(bench, simt, seeds, candidates);
      ASSERT_TRUE(gate.has_value());
      EXPECT_DOUBLE_EQ(gate->simt_error, 1e-6);
      ASSERT_EQ(gate->families.size(), 2u);
      EXPECT_EQ(gate->families[0].suffix, "_tc");
      EXPECT_EQ(gate->families[1].suffix, "_wg");
      EXPECT_DOUBLE_EQ(gate->families[0].error, tc_ratio * 1e-6);
      EXPECT_DOUBLE_EQ(gate->families[1].error, wg_ratio * 1e-6);
      // The seeds, not the first candidates of each family.
      EXPECT_EQ(bench.measured, (std::vector<Config>{simt, tc_seed, wg_seed}));
      const bool tc_offered = tc_ratio <= kMaxSplitTf32ErrorRatio, wg_offered = wg_ratio <= kMaxSplitTf32ErrorRatio;
      EXPECT_EQ(gate->families[0].offered, tc_offered);
      EXPECT_EQ(gate->families[1].offered, wg_offered);
      std::vector<Config> kept;
      for (const Config& c : all)
        if (!c.tensor_cores() || (c.warpgroups() ? wg_offered : tc_offered)) kept.push_back(c);
      EXPECT_EQ(candidates, kept);
      if (tc_ratio == 0.5)
        EXPECT_EQ(describe(*gate), wg_offered ? "1.00e-06 / _tc 5.00e-07 offered, _wg 3.00e-07 offered"
                                              : "1.00e-06 / _tc 5.00e-07 offered, _wg 3.00e-06 withheld");
    }
  // Without a tensor-core candidate there is nothing to decide, and nothing runs.
  std::vector<Config> simt_only = {simt};
  const MadeUpErrors bench{1.0, 1.0, {}};
  EXPECT_FALSE(gate_split_tf32(bench, simt, seeds, simt_only).has_value());
  EXPECT_TRUE(bench.measured.empty());
  // A seed that is not a candidate is not measured: its family's first candidate is; a family
  // without candidates is not gated.
  std::vector<Config> without_seed = {simt, tc_other};
  const MadeUpErrors other{1e-6, 1e-6, {}};
  const auto gate = gate_split_tf32(other, simt, seeds, without_seed);
  ASSERT_TRUE(gate.has_value());
  ASSERT_EQ(gate->families.size(), 1u);
  EXPECT_EQ(gate->families[0].probe, tc_other);
  EXPECT_EQ(other.measured.back(), tc_other);
}

TEST(SearchSpace, CandidatesAreLegalOnThisDeviceAndDistinct) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    Problem p;
    p.m = 3136, p.n = 64, p.k = 576;
    const auto candidates = candidate_configs<Space>(p);
    EXPECT_GT(candidates.size(), 10u) << Space::name();
    std::set<std::string> names;
    for (const Config& c : candidates) {
      EXPECT_EQ(why_illegal<Space>(p, c), "") << Space::name() << " " << to_string(c);
      EXPECT_LE(c.nb, 64) << "blocks wider than N = 64 only add padding";
      names.insert(to_string(c));
    }
    EXPECT_EQ(names.size(), candidates.size());
  });
}

// On host spaces, each tile whose rows divide 49 starts a search on the M = 49 layers as it is
// seeded (a candidate, not the nearest one), and every ResNet-50 batch-1 M (49 * 4^j) has
// candidates with that tile on blocks that divide M (no partial block row).
TEST(SearchSpace, TilesWhoseRowsDivide49AreSeededOnBlocksDividingEveryBatch1M) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    if (SpaceTraits<Space>::is_gpu) return;
    for_each_host_micro_tile([&](auto tile) {
      if (49 % tile.tm != 0) return;
      const auto has_tile = [&](const Config& c) { return c.tm == tile.tm && c.tn == tile.tn; };
      Problem p;
      p.m = 49, p.n = 512, p.k = 4608;
      const std::vector<Config> seeds = TuningPolicy<Space>::seed_configs(p);
      const auto seed = std::find_if(seeds.begin(), seeds.end(), has_tile);
      ASSERT_NE(seed, seeds.end()) << Space::name() << " " << dims(tile.tm, tile.tn);
      const std::vector<Config> at_49 = candidate_configs<Space>(p);
      EXPECT_NE(std::find(at_49.begin(), at_49.end(), *seed), at_49.end()) << to_string(*seed);
      for (int m : {49, 196, 784, 3136, 12544}) {
        p.m = m;
        const std::vector<Config> candidates = candidate_configs<Space>(p);
        EXPECT_TRUE(std::any_of(candidates.begin(), candidates.end(),
                                [&](const Config& c) { return has_tile(c) && m % c.mb == 0; }))
            << Space::name() << " M = " << m;
      }
    });
  });
}

// A GPU's arch names its compute capability; anything else names none.
TEST(GpuSeeds, AnArchNamesItsComputeCapability) {
  EXPECT_EQ(capability_of_arch("sm_90"), 90);
  EXPECT_EQ(capability_of_arch("sm_90a"), 90);
  EXPECT_EQ(capability_of_arch("sm_75"), 75);
  EXPECT_EQ(capability_of_arch("sm_120"), 120);
  for (const char* none : {"", "sm_", "sm_9x", "sm_90ab", "sm_123456", "x86_64-avx512", "unknown", "SM_90"})
    EXPECT_EQ(capability_of_arch(none), 0) << none;
  EXPECT_FALSE(tensor_cores_of(70).fp16);
  EXPECT_TRUE(tensor_cores_of(75).fp16);
  EXPECT_FALSE(tensor_cores_of(75).tf32);
  EXPECT_TRUE(tensor_cores_of(80).tf32);
  EXPECT_TRUE(tensor_cores_of(90).fp16 && tensor_cores_of(90).tf32);
}

// The CUDA space's seeds as data: the default first, and no kernel family the GPU cannot run
// (tensor-core configs only where its tensor cores take the dtype's fragments); Hopper's fp32
// seeds hold TF32 tensor-core and SIMT ones, its fp16 seeds tensor-core ones alone. Where CUDA
// is built, the tuning policy gives the same for the GPU it runs on.
TEST(GpuSeeds, SeedsStartWithTheDefaultAndOnlyRunWhatTheGpuRuns) {
  for (int capability : {70, 75, 80, 90})
    for (DType dtype : {DType::F32, DType::F16}) {
      const GpuTensorCores tc = tensor_cores_of(capability);
      const std::vector<Config> seeds = gpu_seed_configs(dtype, tc);
      ASSERT_GE(seeds.size(), 3u) << capability;
      EXPECT_EQ(seeds.front(), gpu_default_config(dtype, tc)) << capability;
      std::set<std::string> distinct;
      for (const Config& c : seeds) distinct.insert(to_string(c));
      EXPECT_EQ(distinct.size(), seeds.size()) << capability;
      const bool tensor_cores = dtype == DType::F16 ? tc.fp16 : tc.tf32;
      const auto on_tensor_cores = [](const Config& c) { return c.tensor_cores(); };
      if (!tensor_cores)
        EXPECT_TRUE(std::none_of(seeds.begin(), seeds.end(), on_tensor_cores)) << capability << " " << to_string(dtype);
      else if (dtype == DType::F16)
        EXPECT_TRUE(std::all_of(seeds.begin(), seeds.end(), on_tensor_cores)) << capability;
      else
        EXPECT_TRUE(std::any_of(seeds.begin(), seeds.end(), on_tensor_cores) &&
                    !std::all_of(seeds.begin(), seeds.end(), on_tensor_cores)) << capability;
    }
#if defined(KOKKOS_ENABLE_CUDA)
  for (DType dtype : {DType::F32, DType::F16}) {
    Problem p;
    p.dtype = dtype;
    EXPECT_EQ(TuningPolicy<Kokkos::Cuda>::seed_configs(p),
              gpu_seed_configs(dtype, tensor_cores_of(TensorCores<Kokkos::Cuda>::capability())));
  }
#endif
}

// Split K is searched only where the grid is small and every split keeps two slabs or more.
TEST(SearchSpace, SplitsKOnlyForSmallGridsWithLongK) {
  Problem batch1;
  batch1.m = 49, batch1.n = 512, batch1.k = 4608;
  const Config eight = parse_config("mb32_nb64_kb32_tm4_tn4_team128_ks8");
  EXPECT_TRUE(split_fits(eight, batch1));
  Problem short_k = batch1;
  short_k.k = 480;  // 15 slabs: fewer than two per split
  EXPECT_FALSE(split_fits(eight, short_k));
  Problem big_grid = batch1;
  big_grid.m = 49 * 128;  // 196 x 8 blocks
  EXPECT_FALSE(split_fits(eight, big_grid));
  EXPECT_TRUE(split_fits(parse_config("mb32_nb64_kb32_tm4_tn4_team128"), big_grid));
  for_each_enabled_space([&](auto space) {
    for (const Config& c : candidate_configs<decltype(space)>(batch1)) EXPECT_TRUE(split_fits(c, batch1)) << to_string(c);
  });
}

// A seed of one C element a thread starts a single product's search only where its grid is a few
// blocks a processor; other seeds always, and a batch of small products keeps it.
TEST(SearchSpace, AOneElementAThreadSeedStartsOnlySmallGridsOfOneProduct) {
  const Config fallback = parse_config("mb128_nb64_kb16_tm8_tn8_team128"), element = parse_config("mb16_nb16_kb64_tm1_tn1_team256");
  const auto started = [&](const Problem& p) {
    const std::vector<Config> starts = seed_starts({fallback, element}, p, 132, {1});
    EXPECT_EQ(starts.front(), fallback);
    return std::find(starts.begin(), starts.end(), element) != starts.end();
  };
  Problem p;
  p.m = 196, p.n = 256, p.k = 128;  // 208 blocks of 16 x 16
  EXPECT_TRUE(started(p));
  p.m = 16 * 4 * 132;  // 4 blocks an SM exactly
  p.n = 16;
  EXPECT_TRUE(started(p));
  p.m += 16;
  EXPECT_FALSE(started(p));
  p.m = 25088, p.n = 256;
  EXPECT_FALSE(started(p));
  Problem batch = p;
  batch.m = batch.n = batch.k = 16, batch.batch = 65536;
  EXPECT_TRUE(started(batch));
}

// The host seeds follow the problem's row unit (the rows its M is a power-of-4 multiple of): at
// 192 x 192 (M = 36 * 4^j) the widest tile whose rows divide 36 is seeded on 36- and 144-row
// blocks, at 224 x 224 on 49- and 196-row ones, and no other tile on four units of rows (160 x
// 160, M = 25 * 4^j: no tile of these builds divides 25).
template <class Space>
void host_seeds_follow_the_row_unit() {
  using Policy = TuningPolicy<Space>;
  EXPECT_EQ(Policy::row_unit(49), 49);
  EXPECT_EQ(Policy::row_unit(12544), 49);
  EXPECT_EQ(Policy::row_unit(9216), 36);
  EXPECT_EQ(Policy::row_unit(6400), 25);
  EXPECT_EQ(Policy::row_unit(16384), 16);
  EXPECT_EQ(Policy::row_unit(1000), 250);
  EXPECT_EQ(Policy::row_unit(98 * 64), 98);
  EXPECT_EQ(Policy::row_unit(0), 1);
  for (int unit : {25, 36, 49}) {
    Problem p;
    p.m = unit * 16, p.n = 256, p.k = 576;
    const std::vector<Config> seeds = Policy::seed_configs(p);
    EXPECT_EQ(seeds.front(), Policy::default_config(p.dtype)) << Space::name();
    int widest = 0;
    for_each_host_micro_tile([&](auto tile) {
      if (unit % tile.tm == 0) widest = std::max(widest, int(tile.tn));
    });
    for_each_host_micro_tile([&](auto tile) {
      const auto on_unit = [&](int rows) {
        return std::any_of(seeds.begin(), seeds.end(), [&](const Config& c) {
          return c.tm == tile.tm && c.tn == tile.tn && c.mb == ceil_div(rows, tile.tm) * tile.tm;
        });
      };
      const std::string what = std::string(Space::name()) + " unit " + std::to_string(unit) + " tile " + dims(tile.tm, tile.tn);
      if (unit % tile.tm == 0 && tile.tn == widest)
        EXPECT_TRUE(on_unit(unit) && on_unit(4 * unit)) << what;
      else
        EXPECT_FALSE(on_unit(4 * unit)) << what;
    });
  }
}

TEST(SearchSpace, HostSeedsFollowTheProblemsRowUnit) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    if constexpr (!SpaceTraits<Space>::is_gpu) host_seeds_follow_the_row_unit<Space>();
  });
}

// A search starts from every seed of the space, the default first, split along K where its
// grid leaves the device idle, and only on spaces that list splits.
TEST(SearchSpace, StartsAreTheSeedsSplitWhereTheSpaceSplits) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    Problem batch1;
    batch1.m = 49, batch1.n = 512, batch1.k = 4608;
    const std::vector<Config> starts = search_starts<Space>(batch1, 132);
    const std::vector<Config> seeds = TuningPolicy<Space>::seed_configs(batch1);
    ASSERT_GE(starts.size(), seeds.size()) << Space::name();
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      EXPECT_TRUE(split_fits(starts[i], batch1)) << to_string(starts[i]);
      Config unsplit = starts[i];
      unsplit.ks = 1;
      EXPECT_EQ(unsplit, seeds[i]) << Space::name();
      if (TuningPolicy<Space>::ranges().ks.size() > 1)
        EXPECT_GT(starts[i].ks, 1) << Space::name() << " " << to_string(starts[i]);
      else
        EXPECT_EQ(starts[i].ks, 1) << Space::name();
    }
    EXPECT_EQ(seeds.front(), TuningPolicy<Space>::default_config(batch1.dtype)) << Space::name();
    Problem batch128 = batch1;
    batch128.m = 49 * 128;
    for (const Config& start : search_starts<Space>(batch128, 132)) EXPECT_EQ(start.ks, 1) << Space::name();
    // Re-tuning: the store's configs start the climb too, each once, after the default and
    // before the other seeds.
    const std::vector<Config> legal = candidate_configs<Space>(batch1);
    const std::vector<Config> known = {legal.back(), legal.front()};
    std::vector<Config> with_known = search_starts<Space>(batch1, 132, known);
    EXPECT_EQ(with_known[0], starts.front()) << Space::name();
    EXPECT_EQ(with_known[1], known[0]) << Space::name();
    if (known[1] != starts.front()) EXPECT_EQ(with_known[2], known[1]) << Space::name();
    std::size_t added = 0;
    for (const Config& k : known) added += std::find(starts.begin(), starts.end(), k) == starts.end();
    EXPECT_EQ(with_known.size(), starts.size() + added) << Space::name();
    with_known = search_starts<Space>(batch1, 132, {starts.front()});
    EXPECT_EQ(with_known, starts) << Space::name();
  });
}

// A seed whose grid fills at least half the SMs starts the search both split (with the others)
// and unsplit (after them all); one whose grid leaves most SMs idle only split; one that fills
// them only unsplit.
TEST(SearchSpace, SeedsThatHalfFillTheDeviceStartSplitAndUnsplit) {
  Problem layer;  // fp16 6272 x 512, K 4608: 98 blocks of 128 x 256 on 132 SMs
  layer.m = 6272, layer.n = 512, layer.k = 4608, layer.dtype = DType::F16;
  const Config wide = parse_config("mb128_nb256_kb64_tm64_tn256_team384_st3_ws");
  const Config narrow = parse_config("mb64_nb64_kb64_tm64_tn64_team256_st4_ws");  // 784 blocks
  Problem thin = layer;  // 8 blocks of 128 x 256
  thin.m = 128 * 2, thin.n = 256 * 4;
  const std::vector<int> splits(std::begin(kGpuSplitCounts), std::end(kGpuSplitCounts));
  const std::vector<Config> starts = seed_starts({narrow, wide}, layer, 132, splits);
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0], narrow);
  EXPECT_EQ(starts[1].ks, 4) << to_string(starts[1]);  // 392 teams: two or more per SM
  EXPECT_EQ(starts[2], wide);
  const std::vector<Config> on_thin = seed_starts({wide}, thin, 132, splits);
  ASSERT_EQ(on_thin.size(), 1u);
  EXPECT_GT(on_thin[0].ks, 1) << to_string(on_thin[0]);
}

// A tuned problem, its neighbour along M, and a problem between them that was never tuned.
std::tuple<Problem, Problem, Problem> start_problems() {
  Problem own, neighbour, unseen;
  own.m = 784, own.n = 128, own.k = 1152;
  neighbour.m = 3136, neighbour.n = 128, neighbour.k = 1152;
  unseen.m = 1568, unseen.n = 128, unseen.k = 1152;
  return {own, neighbour, unseen};
}

// The store's starts for a search: first the problem's own entry where it can run here, else the
// config dispatch would run (here the one neighbour's), none from an empty store; then the
// model's next picks, each once.
TEST(SearchSpace, TheStoreStartsTheSearchWithWhatDispatchWouldRun) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    const auto [own, neighbour, unseen] = start_problems();
    const std::vector<Config> legal = candidate_configs<Space>(own);
    ASSERT_GE(legal.size(), 2u) << Space::name();
    ConfigStore store;
    store.header = StoreHeader::stamped(device_info<Space>());
    EXPECT_TRUE(store_starts<Space>(store, unseen).empty()) << Space::name();
    store.put({neighbour, legal.front(), 100, 50, 10});
    store.put({own, legal.back(), 100, 50, 10});
    const std::vector<Config> for_own = store_starts<Space>(store, own);
    ASSERT_FALSE(for_own.empty()) << Space::name();
    EXPECT_EQ(for_own.front(), legal.back()) << Space::name();
    EXPECT_NE(std::find(for_own.begin(), for_own.end(), legal.front()), for_own.end()) << Space::name();
    const std::vector<Config> for_unseen = store_starts<Space>(store, unseen);
    ASSERT_FALSE(for_unseen.empty()) << Space::name();
    EXPECT_EQ(for_unseen.front(), rank_stored_configs(store, unseen).front().config) << Space::name();
    EXPECT_LE(for_unseen.size(), kStoreStarts) << Space::name();
    for (std::size_t i = 0; i < for_unseen.size(); ++i)
      EXPECT_EQ(std::count(for_unseen.begin(), for_unseen.end(), for_unseen[i]), 1) << to_string(for_unseen[i]);
    if (!TensorCores<Space>::available) {  // a tensor-core entry cannot run here: the neighbour's config can
      const Config tensor_cores = parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc");
      store.put({own, tensor_cores, 1000, 50, 10});
      const std::vector<Config> legal_here = store_starts<Space>(store, own);
      ASSERT_FALSE(legal_here.empty()) << Space::name();
      EXPECT_EQ(legal_here.front(), legal.front()) << Space::name();
      EXPECT_EQ(std::find(legal_here.begin(), legal_here.end(), tensor_cores), legal_here.end()) << Space::name();
    }
  });
}

// Past dispatch's own pick, the store's starts are the model's next best with far shapes' rates
// discounted by kStartTrustDecay, each once and no more than kStoreStarts: with a config measured
// on a shape 64 times larger at a rate that the model, undiscounted, ranks above a near shape's,
// the near one is measured first.
TEST(SearchSpace, TheStoresNextStartsPreferNearShapes) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    const auto [own, neighbour, unseen] = start_problems();
    std::vector<Config> legal;  // of distinct block classes, as the last start must be (store_starts)
    for (const Config& c : candidate_configs<Space>(unseen))
      if (std::none_of(legal.begin(), legal.end(), [&](const Config& k) { return same_block_class(c, k); }))
        legal.push_back(c);
    ASSERT_GE(legal.size(), kStoreStarts + 3) << Space::name();
    ConfigStore store;
    store.header = StoreHeader::stamped(device_info<Space>());
    store.header.device.memory_gbps = 0;  // the stored configs as they are, no splits proposed
    Problem far = unseen, near = unseen;
    far.m *= 64, near.k /= 2;
    // The problem's own entry: dispatch's pick, at a rate that prices the problem above
    // kSmallProblemSeconds (a small fp32 problem on a GPU keeps fewer store starts).
    store.put({unseen, legal[2], 1e4, 50, 10});
    ASSERT_GT(unseen.flops() / (1e4 * 1e9), kSmallProblemSeconds);
    // Undiscounted, the far config is predicted twice the near one's rate (predictions scale with
    // the stored rate); discounted, the near one is ahead (e^-0.3 (ln 64 - ln 2) = 0.35 < 1/2).
    const TunedEntry far_entry{far, legal[0], 1000, 50, 10}, near_entry{near, legal[1], 1000, 50, 10};
    const double far_rate = predict_rate(unseen, far_entry, legal[0], store.header.device, store.header.device, 0.0).gflops;
    const double near_rate = predict_rate(unseen, near_entry, legal[1], store.header.device, store.header.device, 0.0).gflops;
    store.put(far_entry);
    store.put({near, legal[1], 1000 * far_rate / near_rate / 2, 50, 10});
    for (std::size_t i = 3; i < kStoreStarts + 3; ++i) {  // slow configs of other shapes
      Problem other = unseen;
      other.n = unseen.n * int(i) * 4;
      store.put({other, legal[i], 1, 50, 10});
    }
    const std::vector<Config> starts = store_starts<Space>(store, unseen);
    ASSERT_EQ(starts.size(), store.header.device.is_host() ? kHostStoreStarts : kStoreStarts) << Space::name();
    EXPECT_EQ(starts[0], legal[2]) << Space::name();
    EXPECT_EQ(starts[1], legal[1]) << Space::name();
    EXPECT_EQ(starts[2], legal[0]) << Space::name();
    for (const Config& c : starts) EXPECT_EQ(std::count(starts.begin(), starts.end(), c), 1) << to_string(c);
  });
}

// Past the winners, the last store start is ranked among the winners and their runners-up
// together, one config a stored shape, of a block class no other start has: a runner-up predicted
// above the next winner takes its place, unless its shape already gave a start or its class is
// started already.
TEST(SearchSpace, TheLastStoreStartMayBeARunnerUpOfAShapeNotYetStartedFrom) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    const Problem unseen = std::get<2>(start_problems());
    std::vector<Config> classes;  // candidates of distinct block classes
    for (const Config& c : candidate_configs<Space>(unseen))
      if (std::none_of(classes.begin(), classes.end(), [&](const Config& k) { return same_block_class(c, k); }))
        classes.push_back(c);
    ASSERT_GE(classes.size(), 5u) << Space::name();
    ConfigStore store;
    store.header = StoreHeader::stamped(device_info<Space>());
    store.header.device.memory_gbps = 0;  // the stored configs as they are, no splits proposed
    Problem a = unseen, b = unseen, c = unseen;
    a.n *= 2, b.n *= 4, c.n *= 8;
    TunedEntry best{a, classes[0], 1e6, 50, 10}, next{b, classes[1], 1e4, 50, 10}, last{c, classes[2], 1e2, 50, 10};
    best.runners_up = {{classes[3], 5e6}};  // predicted first of all, but its shape gives the first start
    last.runners_up = {{classes[4], 1e5}};  // predicted above the next winner
    for (const TunedEntry& e : {best, next, last}) store.put(e);
    const auto legal = [](const Config&) { return true; };
    const DeviceInfo& here = store.header.device;
    EXPECT_EQ(store_starts(store, unseen, here, legal, 3), (std::vector<Config>{classes[0], classes[1], classes[4]})) << Space::name();
    EXPECT_EQ(store_starts(store, unseen, here, legal, 2), (std::vector<Config>{classes[0], classes[4]})) << Space::name();
    EXPECT_EQ(store_starts(store, unseen, here, legal, 1), (std::vector<Config>{classes[0]})) << Space::name();
    // The runner-up of a class that starts already gives way to the next of another class.
    last.runners_up = {{parse_config(to_string(classes[1])), 1e5}};
    last.runners_up.front().config.kb = classes[1].kb == 32 ? 64 : 32;
    ASSERT_TRUE(same_block_class(last.runners_up.front().config, classes[1]));
    store.put(last);
    EXPECT_EQ(store_starts(store, unseen, here, legal, 3), (std::vector<Config>{classes[0], classes[1], classes[2]})) << Space::name();
    // Dispatch runs winners only.
    for (const RatePrediction& r : rank_stored_configs(store, unseen))
      EXPECT_TRUE(r.config == classes[0] || r.config == classes[1] || r.config == classes[2]) << to_string(r.config);
  });
}

// A small fp32 problem on a GPU keeps the first kSmallProblemStoreStarts of the store's starts
// (the seeds come sooner); a problem the model prices slower or a fp16 one keeps kStoreStarts, one
// on a host kHostStoreStarts (whatever its size).
TEST(SearchSpace, ASmallFp32ProblemOnAGpuStartsFromFewerStoredConfigs) {
  Problem small;
  small.m = 196, small.n = 256, small.k = 128;
  std::vector<Config> classes;  // of distinct block classes
  for (const Config& c : candidate_configs<Kokkos::DefaultHostExecutionSpace>(small))
    if (std::none_of(classes.begin(), classes.end(), [&](const Config& k) { return same_block_class(c, k); }))
      classes.push_back(c);
  ASSERT_GE(classes.size(), kStoreStarts + 1);
  const auto store_at = [&](DType dtype, double scale, const DeviceInfo& device) {
    ConfigStore store;
    store.header.device = device;
    store.header.device.memory_gbps = 0;  // the stored configs as they are, no splits proposed
    for (std::size_t i = 0; i <= kStoreStarts; ++i) {
      Problem large = small;
      large.dtype = dtype, large.m = small.m * 512, large.n = small.n * int(i + 1), large.k = small.k * 64;
      store.put({large, classes[i], scale * double(i + 1), 50, 10});
    }
    return store;
  };
  const auto legal = [](const Config&) { return true; };
  const auto predicted_seconds = [](const ConfigStore& store, const Problem& p) {
    return p.flops() / (rank_stored_configs(store, p, store.header.device).front().gflops * 1e9);
  };
  const DeviceInfo gpu = split_pricing_gpu();
  const ConfigStore fast = store_at(DType::F32, 1e6, gpu), slow = store_at(DType::F32, 1e2, gpu);
  ASSERT_LT(predicted_seconds(fast, small), kSmallProblemSeconds);
  ASSERT_GT(predicted_seconds(slow, small), kSmallProblemSeconds);
  EXPECT_EQ(store_starts(slow, small, slow.header.device, legal).size(), kStoreStarts);
  // What dispatch would run, then the model's next best (each stored shape's one config).
  std::vector<Config> first{rank_stored_configs(fast, small, fast.header.device).front().config};
  for (const RatePrediction& r : rank_stored_configs(fast, small, fast.header.device, kStartTrustDecay))
    if (first.size() < kSmallProblemStoreStarts && r.config != first.front()) first.push_back(r.config);
  EXPECT_EQ(store_starts(fast, small, fast.header.device, legal), first);
  Problem small16 = small;
  small16.dtype = DType::F16;
  const ConfigStore fast16 = store_at(DType::F16, 1e6, gpu);
  ASSERT_LT(predicted_seconds(fast16, small16), kSmallProblemSeconds);
  EXPECT_EQ(store_starts(fast16, small16, fast16.header.device, legal).size(), kStoreStarts);
  const ConfigStore host = store_at(DType::F32, 1e6, device_info<Kokkos::DefaultHostExecutionSpace>());
  ASSERT_LT(predicted_seconds(host, small), kSmallProblemSeconds);
  EXPECT_EQ(store_starts(host, small, host.header.device, legal).size(), kHostStoreStarts);
  EXPECT_LT(kHostStoreStarts, kStoreStarts);
  Problem large_on_host = small;
  large_on_host.m *= 64;
  EXPECT_EQ(store_starts(host, large_on_host, host.header.device, legal).size(), kHostStoreStarts);
}

// The store's starts take one config a stored shape: the model proposes a stored config split
// every way that fits a thin shape, and a climb steps along a start's splits itself, so the other
// starts go to other shapes' configs.
// A store of split_pricing_gpu() holding two neighbours of thin_grid(), twice as wide and twice as
// deep, each with a config the model proposes split every way that fits the thin grid.
struct ThinGridNeighbours {
  Problem thin = thin_grid();
  DeviceInfo gpu = split_pricing_gpu();
  Config simt = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  Config tensor_cores = parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc");
  ConfigStore store;
  ThinGridNeighbours() {
    Problem wide = thin, deep = thin;
    wide.n *= 2, deep.k *= 2;
    store.header.device = gpu;
    store.put({wide, simt, 1000, 50, 10});
    store.put({deep, tensor_cores, 900, 50, 10});
  }
};

TEST(SearchSpace, TheStoresStartsTakeOneConfigAStoredShape) {
  const ThinGridNeighbours n;
  const Config &simt = n.simt, &tensor_cores = n.tensor_cores;
  const std::vector<Config> starts = store_starts(n.store, n.thin, n.gpu, [](const Config&) { return true; });
  // One start a shape, both split; then the first unsplit (a store offering only split configs).
  ASSERT_EQ(starts.size(), 3u);
  const auto unsplit_of = [](Config c) {
    c.ks = 1;
    return c;
  };
  EXPECT_TRUE((unsplit_of(starts[0]) == simt && unsplit_of(starts[1]) == tensor_cores) ||
              (unsplit_of(starts[0]) == tensor_cores && unsplit_of(starts[1]) == simt))
      << to_string(starts[0]) << " " << to_string(starts[1]);
  EXPECT_GT(starts[0].ks, 1) << to_string(starts[0]);  // dispatch's pick: the thin grid split
  EXPECT_GT(starts[1].ks, 1) << to_string(starts[1]);
  Config unsplit = starts[0];
  unsplit.ks = 1;
  EXPECT_EQ(starts[2], unsplit) << to_string(starts[2]);
}

// A sibling store's configs (another GPU's of the architecture) are ranked among the starts after
// dispatch's pick, each from its rate on its own store's device: a config only the sibling won,
// priced fastest, comes right after dispatch's pick, which stays the device's own store's.
TEST(SearchSpace, ASiblingStoresConfigsAreRankedAmongTheStartsAfterDispatchsPick) {
  const ThinGridNeighbours n;
  Problem wide = n.thin, wider = n.thin, deep = n.thin;
  wide.n *= 2, wider.n *= 4, deep.k *= 2;
  ConfigStore own, sibling;
  own.header.device = n.gpu;
  own.put({wide, n.simt, 1000, 50, 10});
  own.put({wider, n.simt, 1000, 50, 10});
  sibling.header.device = n.gpu;
  sibling.header.device.device = "Another GPU";
  sibling.put({deep, n.tensor_cores, 9000, 50, 10});
  const auto any = [](const Config&) { return true; };
  const auto unsplit = [](Config c) {
    c.ks = 1;
    return c;
  };
  const std::vector<Config> alone = store_starts(own, n.thin, n.gpu, any);
  ASSERT_FALSE(alone.empty());
  for (const Config& c : alone) EXPECT_EQ(unsplit(c), n.simt) << to_string(c);
  const std::vector<Config> both = store_starts(own, n.thin, n.gpu, any, kStoreStarts, &sibling);
  ASSERT_GE(both.size(), 2u);
  EXPECT_EQ(both[0], alone[0]);
  EXPECT_EQ(unsplit(both[1]), n.tensor_cores) << to_string(both[1]);
  // Priced from a rate a hundredth as fast, the sibling's config ranks after the own store's.
  sibling.put({deep, n.tensor_cores, 90, 50, 10});
  const std::vector<Config> slower = store_starts(own, n.thin, n.gpu, any, kStoreStarts, &sibling);
  ASSERT_GE(slower.size(), 2u);
  EXPECT_EQ(unsplit(slower[1]), n.simt) << to_string(slower[1]);
}

// Which other store a device's searches start from (KnownConfigs): on a GPU with a store of its
// own, the sibling of its architecture; on a host, none (a host's rates move with cache sizes
// another model's lack); on a device without a store, the store that serves it, alone.
TEST(SearchSpace, AGpuWithAStoreStartsFromItsSiblingsTooAHostDoesNot) {
  const TempDir dir;
  const SearchPath path({dir.path()});
  Problem problem;
  problem.m = 96, problem.n = 80, problem.k = 64;
  Problem near = problem, other_near = problem;  // a stored shape gives one start: two shapes
  near.k *= 2, other_near.n *= 2;
  using Host = Kokkos::DefaultHostExecutionSpace;
  const std::vector<Config> legal = candidate_configs<Host>(problem);  // the micro-tiles this build compiles
  ASSERT_GE(legal.size(), 2u);
  const Config ours = legal.front(), theirs = legal.back();
  for (const bool gpu : {true, false}) {
    const DeviceInfo here{gpu ? "cuda" : "openmp", "Test Device A", gpu ? "test_sm_99" : "test_arch-simd9", gpu ? 100 : 4,
                          gpu ? 1000.0 : 0.0};
    DeviceInfo other = here;
    other.device = "Test Device B";
    ConfigStore sibling;
    sibling.header.device = other;
    sibling.put({other_near, theirs, 5000, 50, 10});
    sibling.save(dir.file("b.yaml"));
    ConfigStore own;
    own.header.device = here;
    own.put({near, ours, 100, 50, 10});
    own.save(dir.file(device_slug(here) + ".yaml"));  // the store that serves the device is its own
    const KnownConfigs known(own, here);
    EXPECT_EQ(known.sibling(), gpu);
    EXPECT_EQ(known.other_description().find("b.yaml (sibling") != std::string::npos, gpu) << known.other_description();
    const std::vector<Config> starts = known.for_problem<Host>(problem);
    ASSERT_FALSE(starts.empty());
    EXPECT_EQ(starts.front(), ours);
    EXPECT_EQ(std::find(starts.begin(), starts.end(), theirs) != starts.end(), gpu) << gpu;
    // Without a store of its own, the store that serves it alone, on both.
    std::filesystem::remove(dir.file(device_slug(here) + ".yaml"));
    const KnownConfigs storeless(ConfigStore{}, here);
    EXPECT_FALSE(storeless.sibling());
    EXPECT_NE(storeless.other_description().find("no store of this device"), std::string::npos) << storeless.other_description();
    const std::vector<Config> served = storeless.for_problem<Host>(problem);
    ASSERT_FALSE(served.empty());
    EXPECT_EQ(served.front(), theirs) << gpu;
  }
}

// One config is offered in two splits at most (kStartSplits), the unsplit form apart: where three
// stored shapes won it, the third gives no third split. The model prices a split's waves only
// roughly, so its second split is worth a start; more would take the places of other kernels.
TEST(SearchSpace, TheStoresStartsOfferAConfigInTwoSplitsAtMost) {
  ThinGridNeighbours n;
  Problem wider = n.thin, deeper = n.thin, both = n.thin;
  wider.n *= 4, deeper.k *= 4, both.n *= 2, both.k *= 2;
  ConfigStore store;
  store.header.device = n.gpu;
  for (const Problem& p : {wider, deeper, both}) store.put({p, n.tensor_cores, 900, 50, 10});
  const std::vector<Config> starts = store_starts(store, n.thin, n.gpu, [](const Config&) { return true; });
  std::set<int> splits;
  for (const Config& c : starts) {
    Config unsplit = c;
    unsplit.ks = 1;
    EXPECT_EQ(unsplit, n.tensor_cores) << to_string(c);
    if (c.ks > 1) splits.insert(c.ks);
  }
  EXPECT_EQ(splits.size(), kStartSplits);
  EXPECT_GT(splits.size(), 1u);  // a second split of the config three shapes won
  ASSERT_FALSE(starts.empty());
  Config third = starts.front();
  for (int ks : kGpuSplitCounts)
    if (ks > 1 && !splits.count(ks)) third.ks = ks;
  EXPECT_TRUE(splits_taken(third, starts)) << to_string(third);
  EXPECT_FALSE(splits_taken(starts.front(), {n.simt, n.tensor_cores}));  // unsplit starts do not count
}

// On a GPU the store's configs after dispatch's pick are ranked with a split call's latency
// (kStartSplitLatency): on a grid the model would split, a stored config the model prices a little
// faster split than whole is offered whole after dispatch's pick, whose ranking has no such
// latency. On a host nothing is split and the ranking is dispatch's.
TEST(SearchSpace, TheStoresStartsAfterDispatchsPickPayASplitsLatency) {
  const ThinGridNeighbours n;
  const auto any = [](const Config&) { return true; };
  const std::vector<RatePrediction> dispatch_ranked = rank_stored_configs(n.store, n.thin, n.gpu);
  const std::vector<RatePrediction> start_ranked =
      rank_stored_configs(n.store, n.thin, n.gpu, kStartTrustDecay, StoredConfigs::Winners, kStartSplitLatency);
  ASSERT_FALSE(dispatch_ranked.empty());
  ASSERT_FALSE(start_ranked.empty());
  EXPECT_GT(dispatch_ranked.front().config.ks, 1);
  const std::vector<Config> starts = store_starts(n.store, n.thin, n.gpu, any);
  ASSERT_GE(starts.size(), 2u);
  EXPECT_EQ(starts.front(), dispatch_ranked.front().config);
  // Past dispatch's pick, the starts follow the ranking with the latency.
  const auto start_rank = [&](const Config& c) {
    return std::find_if(start_ranked.begin(), start_ranked.end(), [&](const RatePrediction& r) { return r.config == c; }) -
           start_ranked.begin();
  };
  for (std::size_t i = 2; i < starts.size(); ++i) EXPECT_LT(start_rank(starts[i - 1]), start_rank(starts[i])) << i;
  // The latency moves split configs down: each split prediction is lower, each unsplit one equal.
  for (const RatePrediction& with : start_ranked) {
    const RatePrediction without = predict_rate(n.thin, with.source, with.config, n.gpu, n.gpu, kStartTrustDecay);
    if (with.config.ks > 1)
      EXPECT_LT(with.gflops, without.gflops) << to_string(with.config);
    else
      EXPECT_DOUBLE_EQ(with.gflops, without.gflops) << to_string(with.config);
  }
}

// Where the store offers only split configs, the last start gives way to the first one unsplit:
// the model's depth and fill factors can favour splitting a small grid that runs faster whole
// (docs/tuning.md, "Search quality"), and a budget of 8 measures no other.
// An unsplit form the problem cannot take changes nothing.
TEST(SearchSpace, AStoreOfferingOnlySplitConfigsAlsoOffersTheFirstUnsplit) {
  const ThinGridNeighbours n;  // the model splits every config on the thin grid
  const auto any = [](const Config&) { return true; };
  const std::vector<Config> split_only = store_starts(n.store, n.thin, n.gpu, [](const Config& c) { return c.ks > 1; }, 2);
  ASSERT_EQ(split_only.size(), 2u);
  for (const Config& c : split_only) EXPECT_GT(c.ks, 1) << to_string(c);  // no unsplit form it could take
  const std::vector<Config> two = store_starts(n.store, n.thin, n.gpu, any, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two.front(), split_only.front());
  Config unsplit = two.front();
  unsplit.ks = 1;
  EXPECT_GT(two.front().ks, 1);
  EXPECT_EQ(two.back(), unsplit) << to_string(two.back());
  // Room for more starts than the store has shapes: the unsplit form is added, nothing gives way.
  const std::vector<Config> six = store_starts(n.store, n.thin, n.gpu, any);
  ASSERT_EQ(six.size(), 3u);
  EXPECT_EQ(six[0], two[0]);
  EXPECT_EQ(six[2], unsplit);
}

// An entry of an older kernel generation, re-timed on its device: kept with today's rates and
// generation where it runs at least as fast as the default (or is the default), dropped where
// it runs slower or wrong. The measurements are made up: what is decided, not timed.
TEST(StoreRecheck, KeepsWhatStillBeatsTheDefaultAndDropsTheRest) {
  Problem problem;
  problem.m = 784, problem.n = 128, problem.k = 1152;
  const Config tuned = parse_config("mb64_nb128_kb64_tm8_tn8_team1"),
               fallback = parse_config("mb64_nb64_kb256_tm8_tn8_team1");
  TunedEntry stale{problem, tuned, 300, 100, 40, kKernelGeneration - 1};
  stale.runners_up = {{fallback, 250}};  // measured then, not now: left out of what is kept
  const Measurement fast{true, 123.456, ""}, slow{true, 99.5, ""}, wrong{false, 500, "element (3, 4) off"};

  const Recheck kept = recheck_entry(stale, fallback, fast, slow);
  ASSERT_TRUE(kept.kept);
  EXPECT_TRUE(*kept.kept == (TunedEntry{problem, tuned, 123.5, 99.5, 40, kKernelGeneration})) << kept.verdict;
  EXPECT_EQ(kept.verdict, "kept (123.5 GFLOP/s, the default 99.5 GFLOP/s; its runners-up left out, not re-timed)");
  const Recheck tie = recheck_entry(stale, fallback, slow, slow);
  EXPECT_TRUE(tie.kept) << tie.verdict;

  const Recheck slower = recheck_entry(stale, fallback, slow, fast);
  EXPECT_FALSE(slower.kept);
  EXPECT_EQ(slower.verdict, "dropped, slower than the default (99.5 GFLOP/s, the default 123.5 GFLOP/s)");
  const Recheck broken = recheck_entry(stale, fallback, wrong, slow);
  EXPECT_FALSE(broken.kept);
  EXPECT_EQ(broken.verdict, "dropped, wrong on today's kernels: element (3, 4) off");

  // The default itself stays whatever the noise; an entry whose default is wrong here stays too.
  TunedEntry stale_default = stale;
  stale_default.config = fallback;
  EXPECT_TRUE(recheck_entry(stale_default, fallback, slow, fast).kept);
  const Recheck default_wrong = recheck_entry(stale, fallback, slow, wrong);
  ASSERT_TRUE(default_wrong.kept);
  EXPECT_EQ(default_wrong.kept->default_gflops, 0);
  EXPECT_EQ(default_wrong.verdict, "kept (99.5 GFLOP/s, the default wrong; its runners-up left out, not re-timed)");
  TunedEntry without = stale;
  without.runners_up.clear();
  EXPECT_EQ(recheck_entry(without, fallback, fast, slow).verdict, "kept (123.5 GFLOP/s, the default 99.5 GFLOP/s)");
}

// On a device without a store of its own, another device's store (eight times the threads or SMs)
// starts the search with what dispatch would run here: its best config legal here, ranked with
// this device's facts; an entry this device cannot run gives way to the next.
TEST(SearchSpace, AnotherDevicesStoreStartsTheSearchWithWhatDispatchWouldRunHere) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    const DeviceInfo here = device_info<Space>();
    DeviceInfo bigger = here;
    bigger.device = "a bigger device";
    bigger.threads *= 8;
    const auto [own, neighbour, unseen] = start_problems();
    const std::vector<Config> legal = candidate_configs<Space>(own);
    ASSERT_GE(legal.size(), 2u) << Space::name();
    Config huge_team = legal.back();
    huge_team.team = 4096;
    ASSERT_NE(why_illegal<Space>(own, huge_team), "") << Space::name();
    ConfigStore store;
    store.header = StoreHeader::stamped(bigger);
    store.put({neighbour, legal.front(), 100, 50, 10});
    store.put({own, huge_team, 1000, 50, 10});
    EXPECT_EQ(store_starts<Space>(store, own, here).front(), legal.front()) << Space::name();
    std::optional<Config> dispatched;
    for (const RatePrediction& r : rank_stored_configs(store, unseen, here))
      if (!dispatched && why_illegal<Space>(unseen, r.config).empty()) dispatched = r.config;
    ASSERT_TRUE(dispatched) << Space::name();
    EXPECT_EQ(store_starts<Space>(store, unseen, here).front(), *dispatched) << Space::name();
  });
}

// Deeper slab pipelines are searched only on spaces that stage more buffers, and only where at
// least as many slabs pass through a team's buffers as it has.
TEST(SearchSpace, DeepPipelinesOnlyWhereTheSpaceHasThemAndTeamsWalkEnoughSlabs) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    using Traits = SpaceTraits<Space>;
    Problem p;
    p.m = 784, p.n = 128, p.k = 1152;
    bool deep = false;
    for (const Config& c : candidate_configs<Space>(p)) {
      EXPECT_TRUE(stages_fit(c, p)) << to_string(c);
      EXPECT_TRUE(c.slab_buffers == 0 || (c.slab_buffers > Traits::default_slab_buffers && c.slab_buffers <= Traits::max_slab_buffers)) << to_string(c);
      deep = deep || c.slab_buffers != 0;
    }
    EXPECT_EQ(deep, Traits::max_slab_buffers > Traits::default_slab_buffers) << Space::name();
  });
  Problem short_k;
  short_k.m = 784, short_k.n = 128, short_k.k = 96;  // 3 slabs of 32
  EXPECT_TRUE(stages_fit(parse_config("mb32_nb32_kb32_tm4_tn4_team64_st3"), short_k));
  EXPECT_FALSE(stages_fit(parse_config("mb32_nb32_kb32_tm4_tn4_team64_st4"), short_k));
  EXPECT_FALSE(stages_fit(parse_config("mb32_nb32_kb32_tm4_tn4_team64_ks2_st3"), short_k));  // 2 slabs per split
  // The warp-specialized kernel's buffers carry from a team's block to its next: two slabs a
  // block (K = 128) keep four buffers busy where the grid has blocks to walk, not in one block.
  const Config walking = parse_config("mb128_nb256_kb64_tm64_tn256_team384_st4_ws");
  Problem wide{Kernel::Gemm, DType::F16, 'n', 'n', 100352, 512, 128, 1};
  EXPECT_TRUE(stages_fit(walking, wide));
  wide.m = 128, wide.n = 256;
  EXPECT_FALSE(stages_fit(walking, wide));
}

// Batches of products smaller than a block (the 8 x 8 squares): on spaces that group products
// the searches start from the seeds shrunk to a product with products grouped into teams of
// kGroupedTeam threads, and those starts are candidates; products spanning several blocks are
// never grouped, and spaces that do not group get neither.
TEST(SearchSpace, SmallProductsStartGroupedWhereTheSpaceGroups) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    SCOPED_TRACE(Space::name());
    const bool groups = TuningPolicy<Space>::ranges().bb.size() > 1;
    Problem squares;
    squares.kernel = Kernel::Batched, squares.m = squares.n = squares.k = 8, squares.batch = 262144;
    const std::vector<Config> candidates = candidate_configs<Space>(squares);
    int grouped_starts = 0;
    for (const Config& start : search_starts<Space>(squares, 132)) {
      if (start.bb == 1) continue;
      ++grouped_starts;
      EXPECT_EQ(start.team, start.team_of_tiles() * start.bb) << to_string(start);
      EXPECT_LE(start.team, kGroupedTeam) << to_string(start);
      EXPECT_NE(std::find(candidates.begin(), candidates.end(), start), candidates.end()) << to_string(start);
    }
    EXPECT_EQ(grouped_starts > 0, groups);
    const bool any_grouped = std::any_of(candidates.begin(), candidates.end(), [](const Config& c) { return c.bb > 1; });
    EXPECT_EQ(any_grouped, groups);
    Problem layers = squares;
    layers.m = 3136, layers.n = 64, layers.k = 576, layers.batch = 128;
    for (const Config& c : candidate_configs<Space>(layers)) {
      EXPECT_EQ(c.bb, 1) << to_string(c);
      EXPECT_GE(std::min(c.mb, c.nb), kSmallestEdgeForLargeExtents) << to_string(c);
    }
    for (const Config& start : search_starts<Space>(layers, 132)) EXPECT_EQ(start.bb, 1) << to_string(start);
    // Tensor-core seeds (fp32 as 3xTF32 where the device has TF32) fitted to 32 x 32 and 64 x 64
    // products: one product per block of warp tiles that the product fills, and a candidate. A
    // seed whose tiles are all larger than a product (the 128 x 64 fp32 warpgroup tile) stays as
    // it is and is no candidate.
    for (int side : {32, 64}) {
      Problem fp32_squares = squares;
      fp32_squares.m = fp32_squares.n = fp32_squares.k = side, fp32_squares.batch = 16777216 / side / side;
      const std::vector<Config> fp32_candidates = candidate_configs<Space>(fp32_squares);
      int tc_starts = 0;
      for (const Config& start : search_starts<Space>(fp32_squares, 132)) {
        if (!start.tensor_cores()) continue;
        if (start.tm > side) {
          EXPECT_EQ(std::find(fp32_candidates.begin(), fp32_candidates.end(), start), fp32_candidates.end()) << to_string(start);
          continue;
        }
        ++tc_starts;
        EXPECT_EQ(start.mb, side) << to_string(start);
        EXPECT_EQ(start.nb, side) << to_string(start);
        EXPECT_LE(start.tm, side) << to_string(start);
        EXPECT_NE(std::find(fp32_candidates.begin(), fp32_candidates.end(), start), fp32_candidates.end()) << to_string(start);
      }
      EXPECT_EQ(tc_starts > 0, TensorCores<Space>::tf32_on_device());
    }
  });
}


// Shards of a problem list: numbered from 0, each input the rule it breaks named, and the
// shards of one count partition the list, each keeping its order.
TEST(Shard, ParsesIndexOfCountFromZero) {
  const std::tuple<const char*, int, int> good[] = {{"0/1", 0, 1}, {"1/2", 1, 2}, {"3/4", 3, 4}, {"0/1000", 0, 1000}};
  for (const auto& [text, index, count] : good) {
    const Shard shard = parse_shard(text);
    EXPECT_EQ(shard.index, index) << text;
    EXPECT_EQ(shard.count, count) << text;
  }
  const std::pair<std::string, std::string> bad[] = {
      {"2/2", "the index i must be an integer from 0 to n-1 = 1"},
      {"4/2", "the index i must be an integer from 0 to n-1 = 1"},
      {"1/0", "the count n must be an integer from 1 to 2147483647"},
      {"0/-2", "the count n must be an integer from 1 to 2147483647"},
      {"-1/2", "the index i must be an integer from 0 to n-1 = 1"},
      {"2147483647/2147483648", "the count n must be an integer from 1 to 2147483647"},
      {"1", "no '/'"},
      {"", "no '/'"},
      {"/2", "the index i must be"},
      {"1/", "the count n must be"},
      {"1/2/3", "the count n must be"},
      {"a/b", "the count n must be"},
      {"1/99999999999", "the count n must be"},
      {" 1/2", "the index i must be"},
  };
  for (const auto& [text, reason] : bad) {
    try {
      parse_shard(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("kgemm: bad shard '" + text + "': ", 0), 0u) << message;
      EXPECT_NE(message.find(reason), std::string::npos) << message << "\nmissing: " << reason;
      EXPECT_NE(message.find("numbered from 0"), std::string::npos) << message;
    }
  }
}

TEST(Shard, ShardsOfOneCountPartitionTheListInOrder) {
  std::vector<int> items(11);
  for (int i = 0; i < 11; ++i) items[i] = 100 + i;
  for (int count = 1; count <= 13; ++count) {
    std::vector<int> all;
    for (int index = 0; index < count; ++index) {
      const std::vector<int> taken = shard_of(items, Shard{index, count});
      EXPECT_TRUE(std::is_sorted(taken.begin(), taken.end())) << index << "/" << count;
      // Round robin: sizes differ by one at most.
      EXPECT_LE(taken.size(), (items.size() + count - 1) / count) << index << "/" << count;
      EXPECT_GE(taken.size(), items.size() / count) << index << "/" << count;
      all.insert(all.end(), taken.begin(), taken.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, items) << "shards of " << count;
  }
  EXPECT_EQ(shard_of(items, Shard{1, 4}), (std::vector<int>{101, 105, 109}));
  EXPECT_TRUE(shard_of(std::vector<int>{}, Shard{0, 3}).empty());
}

// Claims: the first run to claim a problem owns it, also against a second ProblemClaims on the
// same directory (as another process would hold); a claims path that is a file, or whose parent
// is missing, is refused naming it.
TEST(ProblemClaims, FirstClaimWinsAndBadDirectoriesAreNamed) {
  const std::string dir = ::testing::TempDir() + "kgemm_claims_" + std::to_string(::getpid());
  std::remove((dir + "/gemm_f32_nn_m8_n8_k8_b1").c_str());
  std::remove((dir + "/gemm_f16_nn_m8_n8_k8_b1").c_str());
  const ProblemClaims mine(dir), theirs(dir);
  EXPECT_TRUE(mine.claim("gemm_f32_nn_m8_n8_k8_b1"));
  EXPECT_FALSE(mine.claim("gemm_f32_nn_m8_n8_k8_b1"));
  EXPECT_FALSE(theirs.claim("gemm_f32_nn_m8_n8_k8_b1"));
  EXPECT_TRUE(theirs.claim("gemm_f16_nn_m8_n8_k8_b1"));
  EXPECT_FALSE(mine.claim("gemm_f16_nn_m8_n8_k8_b1"));
  EXPECT_THROW(mine.claim("a/b"), std::invalid_argument);
  const auto refusal = [](const std::string& path) {
    try {
      ProblemClaims claims(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string file = dir + "/gemm_f32_nn_m8_n8_k8_b1";
  EXPECT_EQ(refusal(file), "kgemm: claims directory " + file + ": not a directory");
  EXPECT_EQ(refusal(""), "kgemm: claims directory: the path is empty");
  EXPECT_NE(refusal(dir + "/missing/claims").find("claims directory " + dir + "/missing/claims: cannot create it: "),
            std::string::npos);
}

}  // namespace
}  // namespace kgemm::test
