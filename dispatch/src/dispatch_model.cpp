#include "kgemm/dispatch/dispatch_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kgemm {

namespace {

// An SM's resident limits, alike on every GPU kgemm runs on from Volta to Hopper (Turing holds
// 1024 threads and 16 blocks; it then gets slots it cannot hold, on every config alike).
constexpr int kSmThreads = 2048, kSmBlocks = 32;
// The slab buffers of a GPU config without _st (SpaceTraits<Kokkos::Cuda>::default_slab_buffers,
// not visible to a build without CUDA).
constexpr int kGpuSlabBuffers = 2;

}  // namespace

int team_slots(const Config& config, const DeviceInfo& device) {
  const int team = std::max(config.team, 1), units = std::max(device.threads, 1);
  if (device.is_host()) return std::max(1, units / team);
  const int resident = std::max(1, std::min(kSmBlocks, kSmThreads / team));
  return units * std::min(resident, ceil_div(kSaturatingThreadsPerSm, team));
}

ConfigFit config_fit(const Problem& p, const Config& c, const DeviceInfo& device) {
  ConfigFit fit;
  // In doubles: a valid problem's block count times its splits may pass 64-bit integers.
  const double blocks_m = std::ceil(double(p.m) / c.mb), blocks_n = std::ceil(double(p.n) / c.nb);
  const double computed = blocks_m * c.mb * blocks_n * c.nb;
  fit.padding = computed > 0 ? double(p.m) * p.n / computed : 0;
  const SlabSplit split = split_slabs(c, p.k);  // as the kernels cut K
  fit.teams = std::ceil(blocks_m * blocks_n * p.batch / std::max(c.bb, 1)) * split.splits;
  fit.slots = team_slots(c, device);
  fit.fill = fit.teams > 0 ? fit.teams / (std::ceil(fit.teams / fit.slots) * fit.slots) : 0;
  fit.team_depth = int(std::min<std::int64_t>(p.k, std::int64_t(split.slabs_per_split) * c.kb));
  fit.fixed_depth = device.is_host() ? kHostFixedDepth
                                     : (c.slab_buffers ? c.slab_buffers : kGpuSlabBuffers) * std::min(c.kb, p.k);
  // No K, no arithmetic: nothing for a fixed cost to weigh against.
  fit.depth = fit.team_depth > 0 ? double(fit.team_depth) / (fit.team_depth + fit.fixed_depth) : 1;
  return fit;
}

bool comparable(const Problem& a, const Problem& b) {
  return a.kernel == b.kernel && a.dtype == b.dtype && a.a_order == b.a_order && a.b_order == b.b_order;
}

double shape_distance(const Problem& a, const Problem& b) {
  const auto gap = [](int x, int y) { return std::abs(std::log(double(std::max(x, 1)) / std::max(y, 1))); };
  return gap(a.m, b.m) + gap(a.n, b.n) + gap(a.k, b.k) + gap(a.batch, b.batch);
}

RatePrediction predict_rate(const Problem& problem, const TunedEntry& source, const DeviceInfo& device) {
  RatePrediction r;
  r.source = source;
  r.on_problem = config_fit(problem, source.config, device);
  r.on_source = config_fit(source.problem, source.config, device);
  r.distance = shape_distance(problem, source.problem);
  r.trust = std::exp(-kTrustDecay * r.distance);
  r.exact = source.problem == problem;
  // A stored shape has extents >= 1 (why_bad), so its fit is positive.
  r.gflops = source.gflops * r.on_problem.product() / r.on_source.product() * r.trust;
  return r;
}

std::vector<RatePrediction> rank_stored_configs(const ConfigStore& store, const Problem& problem) {
  std::vector<RatePrediction> ranked;
  for (const TunedEntry& entry : store.entries())
    if (comparable(entry.problem, problem)) ranked.push_back(predict_rate(problem, entry, store.header.device));
  // Stable: equal predictions at equal distances keep store order.
  std::stable_sort(ranked.begin(), ranked.end(), [](const RatePrediction& x, const RatePrediction& y) {
    if (x.exact != y.exact) return x.exact;
    if (x.gflops != y.gflops) return x.gflops > y.gflops;
    return x.distance < y.distance;
  });
  return ranked;
}

}  // namespace kgemm
