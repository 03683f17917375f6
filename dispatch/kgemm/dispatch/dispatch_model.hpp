#pragma once
// The dispatch model: which of a store's configs to run on a problem that was never tuned.
//
// Every entry of the store measured its winning config on its own shape (gflops). On a new
// problem that config keeps the rate it had there, scaled by how it fits the new shape against
// how it fitted its own ("roofline with grid fill"):
//
//   predicted = gflops x fit(problem) / fit(source) x trust
//   fit       = padding x fill x depth                                     (config_fit)
//   padding   = M N / (ceil(M / mb) mb x ceil(N / nb) nb)       useful share of the blocks computed
//   fill      = teams / (ceil(teams / slots) x slots)           busy share of the last wave's slots
//   depth     = Kt / (Kt + K0)                                  a team's K walk against its fixed cost
//   trust     = exp(-kTrustDecay x distance)                    shape_distance: a rate measured on a
//                                                              far shape says less about this one
//
// teams = ceil(blocks x batch / bb) x splits, as the kernels launch them (slab_pipeline.hpp);
// slots = the teams the device runs at full speed at once (team_slots); Kt = the K extent one
// team walks (split K's share of the slabs). K0 is a team's fixed cost in K steps: on GPUs the
// slab pipeline's fill, slab buffers x kb (the first slabs' global-memory latency is not hidden
// behind arithmetic); on hosts kHostFixedDepth, a few steps for writing the C block once. Both
// match their store's best rates at one M and N as K grows: the H100 store's at 401408 x 64 run
// 0.53 and 0.89 of the K = 576 rate at K = 64 and 256 (2 buffers of 32: 0.56 and 0.89); the
// host store's at 3136 x 64 run 0.83 and 0.98 of it (K0 = 16: 0.82 and 0.97).
//
// The problem's own entry, when it has one, comes first whatever the predictions; ties go to the
// closer shape, then to store order, so the choice is deterministic. What the model leaves out:
// registers and scratch limiting how many teams an SM holds, memory bandwidth beyond what the
// measured rate already contains, the cost of split K's sum pass.
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/device_info.hpp"

namespace kgemm {

// How a rate's weight falls with shape distance: e^-0.3 per e-fold. A config measured on a shape
// twice as large in one extent keeps 81 % of its scaled rate, 8x as large 54 %: the fit factors
// decide between entries of similar shape, the measured rates between entries of similar fit.
// 0.3 is where leaving each entry of the H100 store out in turn stops picking the held-out winner
// less often as it grows (docs/results.md); 0.1 trusted far rates enough to pick it less often than
// the nearest-entry rule.
inline constexpr double kTrustDecay = 0.3;

// A host team's fixed cost in K steps (see depth above).
inline constexpr int kHostFixedDepth = 16;

// Threads that keep an SM busy with register-blocked tiles: 8 warps. A GPU team of fewer threads
// shares its SM with others up to this many (at most 32 blocks, 2048 threads per SM).
inline constexpr int kSaturatingThreadsPerSm = 256;

// Teams that `device` runs at full speed at once: GPUs (DeviceInfo::threads is the SM count)
// ceil(256 / team) per SM, within the SM's 2048 threads and 32 blocks; host spaces one team per
// `team` threads. At least 1.
int team_slots(const Config& config, const DeviceInfo& device);

// How `config` fits `problem` on `device`: the factors of the model, each in [0, 1], and the
// counts they come from.
struct ConfigFit {
  double padding = 1, fill = 1, depth = 1;
  double teams = 0;  // the grid (a double: teams x splits of a valid problem may pass 64 bits)
  int slots = 1;
  int team_depth = 0;   // Kt: the K extent one team walks
  int fixed_depth = 0;  // K0: a team's fixed cost in K steps

  double product() const { return padding * fill * depth; }
};
ConfigFit config_fit(const Problem& problem, const Config& config, const DeviceInfo& device);

// Whether rates measured on `a` compare with rates on `b`: same kernel, dtype and access orders.
bool comparable(const Problem& a, const Problem& b);

// The sum of |log(x / y)| over m, n, k and batch (extents count as at least 1): 0 for equal shapes.
double shape_distance(const Problem& a, const Problem& b);

// One stored config's predicted rate on `problem`.
struct RatePrediction {
  TunedEntry source;  // the entry the config won, with the rate it measured there
  ConfigFit on_problem, on_source;
  double distance = 0, trust = 1;
  double gflops = 0;  // source.gflops x on_problem.product() / on_source.product() x trust
  bool exact = false;  // the source is the problem's own entry
};
RatePrediction predict_rate(const Problem& problem, const TunedEntry& source, const DeviceInfo& device);

// The predictions of every entry of `store` comparable with `problem`, best first: the problem's
// own entry, then by predicted rate, closer shape and store order. The device is the store's
// (header.device).
std::vector<RatePrediction> rank_stored_configs(const ConfigStore& store, const Problem& problem);

}  // namespace kgemm
