#include "kgemm/dispatch/dispatch_model.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "kgemm/spaces/space_traits.hpp"
#include "kgemm/tuning_policy.hpp"

namespace kgemm {

namespace {

// An SM's resident limits, alike on every GPU kgemm runs on from Volta to Hopper (Turing holds
// 1024 threads and 16 blocks; it then gets slots it cannot hold, on every config alike).
constexpr int kSmThreads = 2048, kSmBlocks = 32;

// A GPU team's fixed cost in K steps: its slab pipeline's fill, slab buffers x kb, while the first
// slabs' global-memory latency is not hidden behind its own arithmetic. A TF32 warpgroup team
// (fp32 `_wg`) fills its pipeline while the other teams its SM runs at once multiply, so there the
// cost is shared among the grid's teams an SM holds (up to its slots). On the Hopper exhaustive
// caches (docs/tuning.md, "The model's fixed cost for fp32 `_wg` teams"), dispatch's pick from the
// committed stores then reaches 0.98 of the best on 386 of 580 problems against 372 (held out, on
// four live sets, 64 of 105 against 58), and the split it prices fastest for the best's block is
// the best's on 237 of 265 fp32 `_wg` problems against 234; shared alike for every family, 371.
double gpu_fixed_depth(const Problem& p, const Config& c, const ConfigFit& fit, const DeviceInfo& device) {
  const double pipeline_fill = double(c.slab_buffers ? c.slab_buffers : kGpuDefaultSlabBuffers) * std::min(c.kb, p.k);
  if (c.family != Family::Warpgroup || p.dtype != DType::F32) return pipeline_fill;
  const double sms = std::max(device.threads, 1);
  const double together = std::min(std::max(1.0, fit.slots / sms), std::ceil(fit.teams / sms));
  return pipeline_fill / std::max(1.0, together);
}

}  // namespace

int team_slots(const Config& config, const DeviceInfo& device) {
  const int team = std::max(config.team, 1), units = std::max(device.threads, 1);
  if (device.is_host()) return std::max(1, units / team);
  const int resident = std::max(1, std::min(kSmBlocks, kSmThreads / team));
  // Saturated: a store's header may name up to INT_MAX SMs.
  const std::int64_t slots = std::int64_t(units) * std::min(resident, ceil_div(kSaturatingThreadsPerSm, team));
  return int(std::min<std::int64_t>(slots, INT_MAX));
}

ConfigFit config_fit(const Problem& p, const Config& c, const DeviceInfo& device) {
  ConfigFit fit;
  // In doubles: a valid problem's block count times its splits may pass 64-bit integers.
  const double blocks_m = std::ceil(double(p.m) / c.mb), blocks_n = std::ceil(double(p.n) / c.nb);
  const double computed = blocks_m * c.mb * blocks_n * c.nb;
  fit.padding = computed > 0 ? double(p.m) * p.n / computed : 0;
  const SlabSplit split = split_slabs(c, p.k);  // as the kernels cut K
  fit.splits = split.splits;
  fit.teams = std::ceil(blocks_m * blocks_n * p.batch / std::max(c.bb, 1)) * split.splits;
  fit.slots = team_slots(c, device);
  fit.fill = fit.teams > 0 ? fit.teams / (std::ceil(fit.teams / fit.slots) * fit.slots) : 0;
  fit.team_depth = int(std::min<std::int64_t>(p.k, std::int64_t(split.slabs_per_split) * c.kb));
  fit.fixed_depth = device.is_host() ? kHostFixedDepth : gpu_fixed_depth(p, c, fit, device);
  // No K, no arithmetic: nothing for a fixed cost to weigh against.
  fit.depth = fit.team_depth > 0 ? double(fit.team_depth) / (double(fit.team_depth) + fit.fixed_depth) : 1;
  return fit;
}

bool comparable(const Problem& a, const Problem& b) {
  return a.kernel == b.kernel && a.dtype == b.dtype && a.a_order == b.a_order && a.b_order == b.b_order;
}

double shape_distance(const Problem& a, const Problem& b) {
  const auto gap = [](int x, int y) { return std::abs(std::log(double(std::max(x, 1)) / std::max(y, 1))); };
  return gap(a.m, b.m) + gap(a.n, b.n) + gap(a.k, b.k) + gap(a.batch, b.batch);
}

double sum_pass_seconds(const ConfigFit& fit, const Config& config, const DeviceInfo& device) {
  if (device.memory_gbps <= 0 || fit.splits <= 1) return 0;
  constexpr double kBytesPerPartialSum = 2 * sizeof(float);  // written by a team, read by the sum
  return fit.teams * config.mb * config.nb * kBytesPerPartialSum / (device.memory_gbps * 1e9);
}

double launch_seconds(const ConfigFit& fit, const DeviceInfo& device) {
  if (device.is_host()) return 0;
  return kGpuLaunchSeconds * (fit.splits > 1 ? 2 : 1);
}

double overhead_seconds(const ConfigFit& fit, const Config& config, const DeviceInfo& device, double split_latency_s) {
  const double split_latency = !device.is_host() && fit.splits > 1 ? split_latency_s : 0;
  return launch_seconds(fit, device) + sum_pass_seconds(fit, config, device) + split_latency;
}

RatePrediction predict_rate(const Problem& problem, const TunedEntry& source, const Config& config,
                            const DeviceInfo& here, const DeviceInfo& there, std::optional<double> decay,
                            double split_latency_s) {
  RatePrediction r;
  r.source = source;
  r.config = config;
  r.on_problem = config_fit(problem, config, here);
  r.on_source = config_fit(source.problem, source.config, there);
  // The source's overhead (launches, sum pass, split latency), taken out of its measured time. An
  // overhead that cannot account for that time (a header edited by hand, a rate no launch allows)
  // is not used there.
  const double measured_s = source.problem.flops() / (source.gflops * 1e9);
  const double source_overhead_s = overhead_seconds(r.on_source, source.config, there, split_latency_s);
  r.source_busy = source_overhead_s < measured_s ? 1 - source_overhead_s / measured_s : 1;
  // A stored shape has extents >= 1 (why_bad), so its fit and rate are positive.
  const double multiply_gflops = source.gflops / r.source_busy * r.on_problem.product() / r.on_source.product();
  const double overhead_s = overhead_seconds(r.on_problem, config, here, split_latency_s);
  // multiply / (multiply + overhead) as 1 / (1 + overhead / multiply): a multiply time and an
  // overhead that both overflow (a rate near 0 against a bandwidth near 0) give 0, not NaN.
  if (overhead_s > 0 && multiply_gflops > 0) r.busy = 1 / (1 + overhead_s * (multiply_gflops * 1e9) / problem.flops());
  r.distance = shape_distance(problem, source.problem);
  r.trust = std::exp(-decay.value_or(trust_decay(here)) * r.distance);
  r.exact = source.problem == problem && config == source.config;
  r.gflops = multiply_gflops * r.busy * r.trust;
  return r;
}

std::vector<RatePrediction> rank_stored_configs(const ConfigStore& store, const Problem& problem,
                                                const DeviceInfo& here, std::optional<double> decay, StoredConfigs which,
                                                double split_latency_s) {
  const DeviceInfo& there = store.header.device;
  std::vector<RatePrediction> ranked;
  for (const TunedEntry& stored : store.entries()) {
    if (!comparable(stored.problem, problem)) continue;
    const std::vector<TunedEntry> rated = rated_entries(stored);
    for (std::size_t i = 0; i < (which == StoredConfigs::WithRunnersUp ? rated.size() : 1); ++i) {
      const TunedEntry& entry = rated[i];
      const auto add = [&](const Config& config) {
        ranked.push_back(predict_rate(problem, entry, config, here, there, decay, split_latency_s));
        ranked.back().exact = ranked.back().exact && i == 0;  // the winner is the problem's own pick
      };
      add(entry.config);
      if (here.memory_gbps <= 0) continue;  // a split's cost is not known
      for (int splits : kGpuSplitCounts) {
        Config split = entry.config;
        split.ks = splits;
        if (splits != entry.config.ks && split_fits(split, problem)) add(split);
      }
    }
  }
  // Stable: equal predictions at equal distances and splits keep store order.
  std::stable_sort(ranked.begin(), ranked.end(), ranks_before);
  return ranked;
}

bool ranks_before(const RatePrediction& x, const RatePrediction& y) {
  if (x.exact != y.exact) return x.exact;
  if (x.gflops != y.gflops) return x.gflops > y.gflops;
  if (x.distance != y.distance) return x.distance < y.distance;
  return (x.config.ks == x.source.config.ks) > (y.config.ks == y.source.config.ks);
}

}  // namespace kgemm
