#pragma once
// The dispatch model: which of a store's configs to run on a problem that was never tuned.
//
// Every entry of the store measured its winning config on its own shape (gflops). On a new
// problem that config keeps the rate it multiplied at there, scaled by how it fits the new shape
// against how it fitted its own ("roofline with grid fill"), less the call's overhead (its kernel
// launches and split K's sum pass):
//
//   predicted = gflops x fit(problem) x busy(problem) / (fit(source) x busy(source)) x trust
//   fit       = padding x fill x depth                                     (config_fit)
//   padding   = M N / (ceil(M / mb) mb x ceil(N / nb) nb)       useful share of the blocks computed
//   fill      = teams / (ceil(teams / slots) x slots)           busy share of the last wave's slots
//   depth     = Kt / (Kt + K0)                                  a team's K walk against its fixed cost
//   busy      = multiply time / (multiply time + overhead)      the share of a call spent multiplying
//   trust     = exp(-trust_decay(device) x distance)            shape_distance: on hosts a rate
//                                                              measured on a far shape says less
//
// teams = ceil(blocks x batch / bb) x splits, as the kernels launch them (block_schedule.hpp);
// slots = the teams the device runs at full speed at once (team_slots); Kt = the K extent one
// team walks (split K's share of the slabs). K0 is a team's fixed cost in K steps: on GPUs the
// slab pipeline's fill, slab buffers x kb (the first slabs' global-memory latency is not hidden
// behind arithmetic), for fp32 `_wg` teams shared among the teams an SM runs at once; on hosts
// kHostFixedDepth, a few steps for writing the C block once. Both follow how a store's best rates
// at one M and N grow with K (docs/gpu-notes.md, "Measurements behind the code").
//
// The overhead (overhead_seconds) is what a call spends besides multiplying. On GPUs each kernel
// launch has a fixed cost (kGpuLaunchSeconds): a split call launches two, the multiply and the
// sum pass. Split K's sum pass (split_sum.hpp) writes every team's partial block (4-byte sums)
// and reads it back: at the device's peak memory bandwidth that is a lower bound of its time.
// Removed from the source's measured time the overhead leaves the rate the config multiplied at;
// added to the problem's, it prices small shapes' fixed costs and splitting against filling the
// device. Where the device at hand has a known bandwidth (GPUs), each entry's config is also
// proposed with its K split the other ways GPU searches try (kGpuSplitCounts, where split_fits
// says a search would): a shape with few blocks and long K then gets the split its neighbours of
// more blocks never needed. Without one (host stores) the stored configs are ranked as they are.
//
// A store tuned on another device of the same space and architecture (the fallback of
// store_registry.hpp) is ranked alike, each side fitted on its own device: the source on the
// store's device (header.device: its SMs or threads, its bandwidth), the problem on the device at
// hand, so its slots and overhead are this device's.
//
// The problem's own entry, when it has one, comes first whatever the predictions; ties go to the
// closer shape, then to the stored split, then to store order, so the choice is deterministic.
// What the model leaves out: registers and scratch limiting how many teams an SM holds, memory
// bandwidth beyond what the measured rate already contains.
#include <optional>
#include <string>
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/text_number.hpp"

namespace kgemm {

// How a rate's weight falls with shape distance, per kind of device: for each, the decay at which
// the configs the model picks run fastest over a cross table of measured rates (every config of
// the device's store timed on shapes it never tuned and on its own shapes, each shape's entry
// left out in turn; docs/results.md, "Dispatch on shapes never tuned"). GPUs: none. Grid fill,
// padding, pipeline depth and the sum pass explain how a config's rate moves with the shape, and
// discounting far sources only keeps configs measured on big shapes from smaller ones. Hosts:
// e^-0.2 per e-fold (a config measured on a shape twice as large in one extent keeps 87 % of its
// scaled rate, 8x as large 66 %): a host's rate moves with cache fits the model leaves out, so
// nearer shapes say more.
inline constexpr double kGpuTrustDecay = 0.0, kHostTrustDecay = 0.2;
inline double trust_decay(const DeviceInfo& device) { return device.is_host() ? kHostTrustDecay : kGpuTrustDecay; }

// A GPU kernel launch's fixed cost in the tuner's timings (the device's time, the host's launch
// held out: call_clock.hpp), whatever the grid: fitted on the H200's exhaustive cache measured so
// (docs/tuning.md), where the configs each store entry won are ranked best with 1 µs a launch
// (the dispatch model's own pick; 0.5 - 1.5 µs alike, 2 µs worse; without it, rates measured on
// batch-1 shapes of 5 - 20 µs understate what their configs do on larger shapes, and those of
// large shapes overstate what split configs do on small ones).
inline constexpr double kGpuLaunchSeconds = 1e-6;

// The model above in one sentence with this build's constants, for the tools that explain a
// choice (kgemm-run's help and --why): what the prediction multiplies, each factor in words.
// Inline: the command-line parsers that print it are also built without the dispatch library
// (tests/fuzz).
inline std::string dispatch_model_summary() {
  return "predicted = the rate the config measured on its own shape x fit x busy here / fit x busy there x trust; "
         "fit = padding x fill x depth (useful share of the blocks computed, of the device's team slots over the "
         "grid's waves, of a team's K walk against its fixed cost), busy = the share of the call not spent in "
         "overhead (on GPUs " + shortest(kGpuLaunchSeconds * 1e6) + " us a kernel launch, two where K is split, and split "
         "K's sum pass: partial sums at the device's peak memory bandwidth), trust = exp(-" +
         shortest(kHostTrustDecay) + " x shape distance) on hosts, exp(-" + shortest(kGpuTrustDecay) +
         " x shape distance) on GPUs";
}

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
  int splits = 1;    // the K ranges a block's teams walk (split_slabs)
  int slots = 1;
  int team_depth = 0;   // Kt: the K extent one team walks
  double fixed_depth = 0;  // K0: a team's fixed cost in K steps

  double product() const { return padding * fill * depth; }
};
ConfigFit config_fit(const Problem& problem, const Config& config, const DeviceInfo& device);

// Whether rates measured on `a` compare with rates on `b`: same kernel, dtype and access orders.
bool comparable(const Problem& a, const Problem& b);

// The sum of |log(x / y)| over m, n, k and batch (extents count as at least 1): 0 for equal shapes.
double shape_distance(const Problem& a, const Problem& b);

// Seconds split K's sum pass takes at least on `device` for `config` fitted to a problem (`fit`,
// from config_fit): its teams' partial blocks written and read back once at the peak memory
// bandwidth. 0 for an unsplit config and where the bandwidth is not known.
double sum_pass_seconds(const ConfigFit& fit, const Config& config, const DeviceInfo& device);

// Seconds of a call on `device` for a config fitted to a problem (`fit`) spent launching its
// kernels: kGpuLaunchSeconds each, the multiply's and, split, the sum pass's; 0 on hosts (a
// parallel region's start is small beside their calls: on the EPYC's exhaustive cache any fixed
// cost from 5 µs up ranks the dispatch model's picks worse).
double launch_seconds(const ConfigFit& fit, const DeviceInfo& device);

// A call's seconds outside its multiply: launch_seconds and sum_pass_seconds, and for a split GPU
// call `split_latency_s` more (none in dispatch's ranking: predict_rate below; on hosts, where no
// kernel is launched, none).
double overhead_seconds(const ConfigFit& fit, const Config& config, const DeviceInfo& device, double split_latency_s = 0);

// A config's predicted rate on `problem`: a stored config, or one with its K split another way.
struct RatePrediction {
  TunedEntry source;  // the entry whose rate the prediction scales
  Config config;      // what would run: source.config, or it with another split of K
  ConfigFit on_problem, on_source;
  // Share of the call spent multiplying (not in overhead_seconds), here and at the source.
  double busy = 1, source_busy = 1;
  double distance = 0, trust = 1;
  double gflops = 0;  // source.gflops x on_problem.product() x busy / (on_source.product() x source_busy) x trust
  bool exact = false;  // the source is the problem's own entry and config its winner
};
// `here`: the device the problem runs on (its fit and sum pass); `there`: the device the source
// entry was measured on (a store tuned on another device of the same architecture).
// `decay`: trust's decay per e-fold of shape distance; the device's (trust_decay(here)) unless given.
// `split_latency_s`: seconds a split GPU call costs besides its launches and sum pass, at the
// source and here. Dispatch ranks with none: its picks from the committed stores reach 0.98 of the best on
// 386 of 580 problems of the Hopper caches, and 297 - 273 with 2 - 3 µs, whose removal from small
// split sources' measured times inflates the rates scaled from them. The tuner ranks its searches'
// starts with one (tuner/search_space.hpp, kStartSplitLatency).
RatePrediction predict_rate(const Problem& problem, const TunedEntry& source, const Config& config,
                            const DeviceInfo& here, const DeviceInfo& there, std::optional<double> decay = std::nullopt,
                            double split_latency_s = 0);
inline RatePrediction predict_rate(const Problem& problem, const TunedEntry& source, const Config& config,
                                   const DeviceInfo& device) {
  return predict_rate(problem, source, config, device, device);
}

// The predictions of every entry of `store` comparable with `problem` on the device `here`, and
// of their splits where here's bandwidth is known, best first: the problem's own entry, then by
// predicted rate, closer shape, the stored split and store order. The entries' rates were
// measured on the store's device (header.device), `here` by default.
// `decay` and `split_latency_s` as predict_rate's: dispatch ranks with the device's decay and no
// split latency; the tuner ranks its searches' starts with its own (tuner/search_space.hpp,
// store_starts). `which`: the entries' winners, or their
// runners-up too (TunedEntry::runners_up, each predicted from its own rate as a winner is; only
// a winner is `exact`). Dispatch runs winners: on the H200's exhaustive cache fewer of the
// model's picks reach 0.98 of the best with the runners-up among them (docs/tuning.md,
// "Runners-up").
enum class StoredConfigs { Winners, WithRunnersUp };
// Whether `a` comes before `b` in rank_stored_configs' order (the problem's own entry, then
// predicted rate, closer shape, the stored split): rankings of two stores merge by it.
bool ranks_before(const RatePrediction& a, const RatePrediction& b);
std::vector<RatePrediction> rank_stored_configs(const ConfigStore& store, const Problem& problem,
                                                const DeviceInfo& here, std::optional<double> decay = std::nullopt,
                                                StoredConfigs which = StoredConfigs::Winners, double split_latency_s = 0);
inline std::vector<RatePrediction> rank_stored_configs(const ConfigStore& store, const Problem& problem) {
  return rank_stored_configs(store, problem, store.header.device);
}

}  // namespace kgemm
