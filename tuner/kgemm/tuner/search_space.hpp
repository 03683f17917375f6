#pragma once
// The configs worth measuring for one problem on one space: the space's legal value lists
// (spaces/) times the compiled micro-tiles, minus what cannot run on this device (scratch and
// team limits read at run time, via the same checks a launch makes), blocks far larger
// than the problem (they only add padding), K splits where they cannot pay and products
// grouped per team where they are larger than a block.
#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/dispatch/dispatch_model.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/launch.hpp"
#include "kgemm/spaces/space_traits.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuning_policy.hpp"
#include "kgemm/variants.hpp"

namespace kgemm {

// Whether a block edge of `tile` is worth trying on an extent of `extent`: not more than the
// smallest listed value or the power of two covering the extent, whichever is larger.
inline bool tile_fits(int tile, int extent, int smallest_listed) {
  int cover = 1;
  while (cover < extent) cover *= 2;
  return tile <= (cover > smallest_listed ? cover : smallest_listed);
}

// Block edges (M, N) below this are tried only on extents they cover (8 x 8 products on GPUs).
constexpr int kSmallestEdgeForLargeExtents = 16;
inline bool edge_fits(int edge, int extent, int smallest_listed) {
  return tile_fits(edge, extent, smallest_listed) && (edge >= kSmallestEdgeForLargeExtents || edge >= extent);
}

// More slab buffers than the default pay only where at least as many slabs pass through them.
inline bool stages_fit(const Config& c, const Problem& problem) {
  return c.slab_buffers == 0 || slabs_through_buffers(c, problem) >= c.slab_buffers;
}

// Several products per team pay for batches of products that fit one block each.
inline bool group_fits(const Config& c, const Problem& problem) {
  return c.bb == 1 || (c.bb <= problem.batch && c.mb >= problem.m && c.nb >= problem.n);
}

// Threads per team a seed's grouped products make up: four warps, as the one-product seeds have.
constexpr int kGroupedTeam = 128;

// A seed as a search starts from it on a batch of products smaller than its block: the block
// (and slab) shrunk to the smallest listed edges covering a product, and as many products per
// team as make teams of at most kGroupedTeam threads that fit the device (scratch): random
// starts on the 8 x 8 and 16 x 16 squares rarely reach grouped configs.
// Tensor-core seeds first take the largest compiled warp tile that one product fills (its
// extents rounded up to 16-element fragments) and slabs a multiple of 16 deep: a 128 x 64 block
// of 64 x 32 warp tiles would leave three quarters of each team idle on 64 x 64 products, and a
// climb within a tuning budget does not get from there to one product per 64 x 64 block.
template <class ExecSpace>
Config fit_to_products(Config start, const Problem& problem) {
  const ParamRanges ranges = TuningPolicy<ExecSpace>::ranges();
  if (problem.batch == 1 || ranges.bb.size() == 1) return start;
  // The smallest listed edge covering the product, or the seed's where smaller; never below the
  // tile, which the tensor-core branch may have grown past the seed's block.
  auto covering = [](const std::vector<int>& listed, int extent, int edge, int tile) {
    for (int e : listed)
      if (e >= extent && e % tile == 0) return std::max(std::min(e, edge), tile);
    return std::max(edge, tile);
  };
  if (start.tensor_cores()) {  // products smaller than every warp (group) tile keep the seed as it is
    const int rows = ceil_div(problem.m, 16) * 16, cols = ceil_div(problem.n, 16) * 16;
    bool fits = false;
    for (auto [tm, tn] : start.warpgroups() ? warpgroup_tiles(problem.dtype) : warp_tiles())
      if (tm <= rows && tn <= cols && (!fits || tm * tn > start.tm * start.tn)) start.tm = tm, start.tn = tn, fits = true;
    if (!fits) return start;
  }
  start.mb = covering(ranges.mb, problem.m, start.mb, start.tm);
  start.nb = covering(ranges.nb, problem.n, start.nb, start.tn);
  start.kb = covering(ranges.kb, problem.k, start.kb, start.warpgroups() ? 32 : start.tensor_cores() ? 16 : 1);
  if (!stages_fit(start, problem)) start.slab_buffers = 0;  // more buffers than the product has slabs
  if (start.mb < problem.m || start.nb < problem.n) return start;  // several blocks per product
  const int per_product = start.team_of_tiles();
  Config grouped = start;
  for (int bb : ranges.bb) {
    Config c = start;
    c.bb = bb, c.team = per_product * bb;
    if (bb <= problem.batch && c.team <= kGroupedTeam && why_illegal<ExecSpace>(problem, c).empty()) grouped = c;
  }
  return grouped;
}

// A seed as a search starts from it: split along K when its grid would leave most of the
// device's `processors` (SMs) idle: the smallest listed split that gives every processor two
// teams, or the largest that fits. Searches climbing from unsplit configs stay among unsplit
// ones for the M = 49 layers (H100).
// `splits`: the K splits the space searches, fewest first.
inline Config split_for_device(Config start, const Problem& problem, int processors, const std::vector<int>& splits) {
  const long blocks = grid_blocks(start, problem);
  if (blocks >= processors) return start;
  Config best = start;
  for (int ks : splits) {
    Config split = start;
    split.ks = ks;
    if (!split_fits(split, problem)) break;
    best = split;
    if (blocks * ks >= 2L * processors) break;
  }
  return best;
}
template <class ExecSpace>
Config split_for_device(const Config& start, const Problem& problem, int processors) {
  return split_for_device(start, problem, processors, TuningPolicy<ExecSpace>::ranges().ks);
}

// A seed of one C element a thread (a 1 x 1 micro-tile) on a single product pays only on grids of
// a few blocks a processor: on the Hopper caches the 16 x 16 seed came within 0.9 of a batch-1
// problem's best only on grids of up to 392 blocks (three an SM), while on large grids, where it
// runs at a fifth of the best, the model ranks it first among the seeds (its grid fills every
// wave) and it takes a small budget's place. Batches of small products keep it (fit_to_products
// groups them per team).
inline constexpr long kElementBlocksPerProcessor = 4;
inline bool seed_fits_grid(const Config& seed, const Problem& problem, int processors) {
  return problem.batch > 1 || seed.tm * seed.tn > 1 || grid_blocks(seed, problem) <= kElementBlocksPerProcessor * processors;
}

// The seeds' starts on a device (those that fit the grid: seed_fits_grid): each split_for_device,
// the default first; then, after them all, each seed unsplit where its grid already fills at
// least half the processors (the climb measures the seeds after the default in the order the
// model predicts them: search.cpp). There the split
// trades the last wave's idle processors for a sum pass and a shorter pipeline, and which wins
// depends on the kernel: the 128 x 256 `_ws` seed on the 98 blocks of a 6272 x 512 fp16 layer
// (132 SMs) runs fastest unsplit, and split it is several steps from there.
inline std::vector<Config> seed_starts(const std::vector<Config>& seeds, const Problem& problem, int processors,
                                       const std::vector<int>& splits) {
  std::vector<Config> starts, unsplit;
  for (const Config& seed : seeds) {
    if (!seed_fits_grid(seed, problem, processors)) continue;
    starts.push_back(split_for_device(seed, problem, processors, splits));
    if (starts.back() != seed && 2 * grid_blocks(seed, problem) >= processors) unsplit.push_back(seed);
  }
  starts.insert(starts.end(), unsplit.begin(), unsplit.end());
  return starts;
}

// How many of a store's configs a search starts from (store_starts), and how the model ranks them:
// a budget of 8 evaluations measures the space default and these, a step from the fastest, and
// the seeds after them. On the Hopper exhaustive caches (docs/tuning.md) six of them, far
// shapes' rates discounted by e^-0.3 per e-fold of shape distance, put the most problems within
// 2 % of the best (95 of 104; 4, 5, 7 or 8 configs: 92 - 93; ranked as dispatch ranks them, fewer).
// On GPUs a rate's fit to the shape is the better guess of which one config
// to run; among the next few, the configs of nearer shapes are more often the best.
inline constexpr std::size_t kStoreStarts = 6;
// On hosts one fewer, so that budget 8 takes two steps: a host's best config is more often a step
// or two from a stored one (mb, nb, kb move in small steps there) than another shape's winner.
// On the two EPYC caches five put 47 of 52 problems within 2 % of the best at budget 8 from a
// store of each one's other problems (six: 44; four: 46; three: 45) and 45 from the committed
// EPYC store (six: 42; four: 46); at budget 40, 50 against 49 (docs/tuning.md).
inline constexpr std::size_t kHostStoreStarts = 5;
inline constexpr double kStartTrustDecay = 0.3;
// The seconds a split GPU call is taken to cost besides its launches and sum pass when the store's
// configs are ranked as starts (after what dispatch would run, ranked as dispatch ranks).
// A split adds a kernel to calls that are latency more than arithmetic: on the H100, fp16 784 x
// 128 x 512 takes 6.9 µs with the 64 x 64 `_ws` block whole and 9.0 split 2 or 4 ways, and on the
// Hopper caches the model prices a deeper split than the best's on 53 of 340 fp16 `_ws` problems
// and a shallower one on none. Replayed at budget 8 (docs/tuning.md), 3 µs puts 554 of 580 problems
// within 2 % of the best from the committed stores (their smallest geometric mean 0.982 -> 0.991)
// and 599 of 632 from a store of the others, where none gives 547 and 600 (2 µs: 554 and 598; 4:
// 552 and 599).
inline constexpr double kStartSplitLatency = 3e-6;
// How many of those starts are ranked among the stored shapes' runners-up too (TunedEntry::
// runners_up), the last ones. On the Hopper and EPYC caches one puts the most problems within 2 %
// of the best at budget 8 (docs/tuning.md, "Runners-up"); two lose problems on two caches, all six
// on six, where a shape's runners-up take the places of other shapes' winners.
inline constexpr std::size_t kRunnerUpStarts = 1;
// A small fp32 problem on a GPU (one the dispatch model prices under kSmallProblemSeconds with
// what dispatch would run) keeps the first kSmallProblemStoreStarts of the store's configs, so
// that budget 8 reaches two more seeds. The store's configs are mostly winners of larger shapes,
// whose rates say little about a grid of a few blocks, while the fp32 seeds hold blocks made for
// small grids: on the fourteen GPU caches the seeds alone put 45 of the 51 fp32 problems under
// 15 µs within 2 % of the best, a store of the others 33 (fp16, whose seeds are large
// tensor-core blocks: 114 and 193 of 196). Replayed at budget 8 (docs/tuning.md, "What the 51
// misses are"), four configs put 586 of 632 problems within 2 % from a store of the others and
// 539 of 580 from the committed stores, where six give 581 and 535 and no cache more; 12 - 20 µs
// alike; two or three configs gain from a store of the others and lose from the committed
// stores, whose other batches of the shape give the better starts.
inline constexpr double kSmallProblemSeconds = 12e-6;
inline constexpr std::size_t kSmallProblemStoreStarts = 4;
inline bool small_gpu_fp32_problem(const Problem& problem, const RatePrediction& dispatched, const DeviceInfo& here) {
  return !here.is_host() && problem.dtype == DType::F32 && dispatched.gflops > 0 &&
         problem.flops() / (dispatched.gflops * 1e9) < kSmallProblemSeconds;
}

// How many splits of one config a search's starts hold at most, besides the config unsplit
// (splits_taken), and whether `starts` hold that many of `config` split other ways. The model
// proposes each stored config with every split that fits (rank_stored_configs), and a climb steps
// along a start's splits, so more of them would take the places of other kernels and blocks. But
// a split config's rate moves with the waves its teams fill, which the model prices only roughly:
// a grid of 20 `_wg` blocks split 8, 16 or 32 ways ran at 0.93, 0.84 and 1.00 of its best (a step
// from 8 never reaches 32). So where two stored shapes won one config, its second split is a start
// of its own: replayed at budget 8 (docs/tuning.md), two put 599 of 632 problems within 2 % of the
// best from a store of the others and 554 of 580 from the committed stores, where one gives 595
// and 554. The unsplit form counts apart: whether a config runs faster split or unsplit depends on
// how many of its teams an SM holds, which the model leaves out (a `_wg` block on a grid just short
// of the SMs).
inline constexpr std::size_t kStartSplits = 2;
inline bool splits_taken(const Config& config, const std::vector<Config>& starts) {
  return config.ks > 1 && std::size_t(std::count_if(starts.begin(), starts.end(), [&](Config start) {
           if (start.ks == 1 || start.ks == config.ks) return false;
           start.ks = config.ks;
           return start == config;
         })) >= kStartSplits;
}

// The configs a store offers a search of `problem` on the device `here`, at most `count` (on a
// host kHostStoreStarts; the first kSmallProblemStoreStarts of them for a small fp32 problem on a
// GPU), each once, in
// kStartSplits splits at most besides unsplit (splits_taken), at most one a stored shape, and
// each one `legal` takes: first what dispatch would run (the problem's own entry or, where the
// store lacks it, the dispatch model's best: rank_stored_configs with here's facts, the store may
// be another device's), so a search never ends below it; then the model's next best winners of
// other shapes, ranked with kStartTrustDecay and kStartSplitLatency; the last of them
// (kRunnerUpStarts) ranked among the winners and runners-up together and of a block class no
// other start has, so that a class no stored shape won is offered where the model ranks it high;
// where all of them are split, the last replaced by the first unsplit, if legal. `sibling`: another
// device's store (KnownConfigs) whose configs the model's next best are ranked among too, each
// from its rate on that store's device (ranks_before orders the two rankings as one); dispatch's
// pick stays `store`'s. Empty when nothing stored or proposed can run the problem here.
template <class Legal>
std::vector<Config> store_starts(const ConfigStore& store, const Problem& problem, const DeviceInfo& here,
                                 const Legal& legal, std::size_t count = kStoreStarts, const ConfigStore* sibling = nullptr) {
  if (here.is_host()) count = std::min(count, kHostStoreStarts);
  std::vector<Config> starts;
  std::vector<Problem> sources;  // the stored shape each start comes from
  // `new_class`: only configs of a block class no start has.
  const auto add = [&](const std::vector<RatePrediction>& ranked, std::size_t up_to, bool new_class) {
    const auto class_started = [&](const Config& config) {
      return std::any_of(starts.begin(), starts.end(), [&](const Config& start) { return same_block_class(start, config); });
    };
    for (const RatePrediction& candidate : ranked) {
      if (starts.size() >= up_to) return;
      if (std::find(sources.begin(), sources.end(), candidate.source.problem) == sources.end() &&
          std::find(starts.begin(), starts.end(), candidate.config) == starts.end() &&
          !splits_taken(candidate.config, starts) && !(new_class && class_started(candidate.config)) &&
          legal(candidate.config)) {
        starts.push_back(candidate.config);
        sources.push_back(candidate.source.problem);
      }
    }
  };
  const std::vector<RatePrediction> dispatch_ranked = rank_stored_configs(store, problem, here);
  const auto dispatched = std::find_if(dispatch_ranked.begin(), dispatch_ranked.end(),
                                       [&](const RatePrediction& r) { return legal(r.config); });
  add(dispatch_ranked, std::min<std::size_t>(count, 1), false);
  const auto ranked_starts = [&](StoredConfigs which) {
    std::vector<RatePrediction> ours = rank_stored_configs(store, problem, here, kStartTrustDecay, which, kStartSplitLatency);
    if (!sibling) return ours;
    const std::vector<RatePrediction> theirs =
        rank_stored_configs(*sibling, problem, here, kStartTrustDecay, which, kStartSplitLatency);
    std::vector<RatePrediction> both;
    std::merge(ours.begin(), ours.end(), theirs.begin(), theirs.end(), std::back_inserter(both), ranks_before);
    return both;
  };
  add(ranked_starts(StoredConfigs::Winners), count - std::min(count, kRunnerUpStarts), false);
  add(ranked_starts(StoredConfigs::WithRunnersUp), count, true);
  // Only split configs offered: the last gives way to the first unsplit. The model's depth and
  // fill factors can favour splitting a small grid that runs faster whole, and a budget of 8
  // measures nothing else (docs/tuning.md, "Search quality").
  const bool all_split = !starts.empty() && std::all_of(starts.begin(), starts.end(), [](const Config& c) { return c.ks > 1; });
  if (all_split && count > 1) {
    Config unsplit = starts.front();
    unsplit.ks = 1;
    if (legal(unsplit)) {
      if (starts.size() < count)
        starts.push_back(unsplit);
      else
        starts.back() = unsplit;  // count > 1: never dispatch's pick
    }
  }
  // Last, so that a small problem loses the unsplit config the rule above puts in the sixth place
  // too: cut before that rule, its four starts keep one in the fourth place, which replayed a
  // problem or two worse (584 of 632 from a store of the others, 538 of 580 from the committed
  // stores).
  if (dispatched != dispatch_ranked.end() && small_gpu_fp32_problem(problem, *dispatched, here) &&
      starts.size() > kSmallProblemStoreStarts)
    starts.resize(kSmallProblemStoreStarts);
  return starts;
}
template <class ExecSpace>
std::vector<Config> store_starts(const ConfigStore& store, const Problem& problem, const DeviceInfo& here,
                                 const ConfigStore* sibling = nullptr) {
  return store_starts(store, problem, here, [&](const Config& c) { return why_illegal<ExecSpace>(problem, c).empty(); },
                      kStoreStarts, sibling);
}
// The same from the store's own device's facts (a store of this device).
template <class ExecSpace>
std::vector<Config> store_starts(const ConfigStore& store, const Problem& problem) {
  return store_starts<ExecSpace>(store, problem, store.header.device);
}

// The order a search measures its starts in, each once: the first of the fitted `seeds` (the
// space default), then `known`, the store's configs (store_starts), so a re-tuning climb that
// wanders elsewhere within its budget never replaces an entry with a slower one, and a new
// shape's search finds at least what dispatch already gives it; then the other seeds, which
// a small budget reaches only where the store offers fewer configs.
inline std::vector<Config> ordered_starts(const std::vector<Config>& seeds, const std::vector<Config>& known) {
  std::vector<Config> starts;
  auto add = [&](const Config& start) {
    if (std::find(starts.begin(), starts.end(), start) == starts.end()) starts.push_back(start);
  };
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    add(seeds[i]);
    if (i == 0)
      for (const Config& k : known) add(k);
  }
  return starts;
}

// How many of `starts` (ordered_starts' with `known`) a climb steps from before it measures the
// others (search's step_after): the space default and the store's configs, where the store
// offers any (on the Hopper caches at budget 8, 95 problems of 104 within 2 % of the best against 92
// measuring the seeds first, 58 of 62 against 57); none without (a step from the default alone
// costs a seed: 67 of 104 against 69).
inline std::size_t step_after_starts(const std::vector<Config>& starts, const std::vector<Config>& known) {
  return known.empty() || starts.empty() ? 0 : ordered_starts({starts.front()}, known).size();
}

// Where a search starts: the space's seeds, each fitted to small products and split for the
// device, in ordered_starts' order with `known`.
template <class ExecSpace>
std::vector<Config> search_starts(const Problem& problem, int processors, const std::vector<Config>& known = {}) {
  std::vector<Config> fitted;
  for (const Config& seed : TuningPolicy<ExecSpace>::seed_configs(problem)) fitted.push_back(fit_to_products<ExecSpace>(seed, problem));
  return ordered_starts(seed_starts(fitted, problem, processors, TuningPolicy<ExecSpace>::ranges().ks), known);
}

// The dispatch model's prediction of a config's rate on `problem` on `device` from another's
// measured there (Predict): the measured config as a store entry of the problem, its rate scaled
// by how each fits the shape (padding, fill, pipeline depth) less split K's sum pass.
inline Predict model_prediction(const Problem& problem, const DeviceInfo& device) {
  return [problem, device](const Config& from, double from_gflops, const Config& to) {
    TunedEntry measured;
    measured.problem = problem, measured.config = from, measured.gflops = from_gflops;
    return predict_rate(problem, measured, to, device).gflops;
  };
}

template <class ExecSpace>
std::vector<Config> candidate_configs(const Problem& problem) {
  using Policy = TuningPolicy<ExecSpace>;
  const ParamRanges ranges = Policy::ranges();
  std::vector<Config> candidates;
  auto consider = [&](const Config& c) {
    if (c.mb % c.tm != 0 || c.nb % c.tn != 0) return;
    if (!edge_fits(c.mb, problem.m, ranges.mb.front()) || !edge_fits(c.nb, problem.n, ranges.nb.front()) ||
        !tile_fits(c.kb, problem.k, ranges.kb.front()) || !split_fits(c, problem) || !group_fits(c, problem) ||
        !stages_fit(c, problem))
      return;
    if (!Policy::worth_trying(c)) return;
    if (!why_illegal<ExecSpace>(problem, c).empty()) return;
    candidates.push_back(c);
  };
  for (int buffers : ranges.slab_buffers)
    for (int ks : ranges.ks)
      for (int bb : ranges.bb) {
        for (auto [tm, tn] : micro_tiles())
          for (int mb : ranges.mb)
            for (int nb : ranges.nb)
              for (int kb : ranges.kb)
                for (int team : ranges.team)
                  consider(ConfigBuilder().mb(mb).nb(nb).kb(kb).tm(tm).tn(tn).team(team).ks(ks).bb(bb).slab_buffers(buffers));
        // Tensor-core configs (fp16, and fp32 as 3xTF32, on devices that run them): the team is
        // one warp per tile; warpgroup configs (Hopper; why_illegal drops them elsewhere): four
        // warps per tile of the dtype's own, one product per team.
        const bool tensor_cores = problem.dtype == DType::F16 ? TensorCores<ExecSpace>::on_device()
                                                              : TensorCores<ExecSpace>::tf32_on_device();
        const auto consider_tiles = [&](const std::vector<std::pair<int, int>>& tiles, Family family) {
          for (auto [tm, tn] : tiles)
            for (int mb : ranges.mb)
              for (int nb : ranges.nb)
                for (int kb : ranges.kb) {
                  Config c = ConfigBuilder().mb(mb).nb(nb).kb(kb).tm(tm).tn(tn).family(family).ks(ks).bb(bb).slab_buffers(buffers);
                  c.team = c.team_of_tiles() * bb;  // consider() drops blocks not a multiple of the tile
                  consider(c);
                }
        };
        if (tensor_cores) consider_tiles(warp_tiles(), Family::TensorCore);
        if (tensor_cores && bb == 1) consider_tiles(warpgroup_tiles(problem.dtype), Family::Warpgroup);
        // The warp-specialized kernel (fp16; why_illegal drops it where it cannot run).
        if (tensor_cores && bb == 1 && problem.dtype == DType::F16) consider_tiles(warp_specialized_tiles(), Family::WarpSpecialized);
      }
  return candidates;
}

}  // namespace kgemm
