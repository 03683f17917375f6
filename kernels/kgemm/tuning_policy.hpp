#pragma once
// What to run on each execution space: the default config per dtype, where the tuner's climbs
// start, the value lists it searches and which configs are worth measuring. Legality is not
// decided here (why_malformed, why_illegal): these are choices among legal configs.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <iterator>
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/dtype.hpp"
#include "kgemm/gpu_seeds.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"
#include "kgemm/variants.hpp"

namespace kgemm {

// Blocks of C a config cuts the problem into (over every product of a batch).
inline long grid_blocks(const Config& c, const Problem& problem) {
  return long(ceil_div(problem.m, c.mb)) * ceil_div(problem.n, c.nb) * problem.batch;
}

// K slabs of a block, and of one team: the whole K, or its split's share.
inline int block_slabs(const Config& c, const Problem& problem) { return split_slabs(c, problem.k).slabs; }
inline int slabs_per_team(const Config& c, const Problem& problem) { return split_slabs(c, problem.k).slabs_per_split; }
// K slabs that pass through one team's slab buffers: its block's (or split's) share; on the
// warp-specialized kernel, whose teams walk their blocks in turn with the buffers carried from one
// block to the next (warp_specialized_gemm.hpp), those of every block it may be given: the
// grid's, since how many teams run at once is the device's.
inline long slabs_through_buffers(const Config& c, const Problem& problem) {
  return long(slabs_per_team(c, problem)) * (c.warp_specialized() ? grid_blocks(c, problem) * c.ks : 1);
}

// Split K pays when the grid of blocks is too small to fill the device and each split still
// has a few slabs to pipeline; above this many blocks, a grid fills any current GPU.
constexpr long kMostBlocksWorthSplitting = 1024;
inline bool split_fits(const Config& c, const Problem& problem) {
  if (c.ks == 1) return true;
  if (c.bb > 1) return false;  // products per team and split K do not combine
  return grid_blocks(c, problem) <= kMostBlocksWorthSplitting && block_slabs(c, problem) >= 2 * c.ks;
}

// The K splits GPU searches try (TuningPolicy<Cuda>::ranges) and dispatch proposes for shapes never
// tuned (dispatch_model.hpp): up to 32, since a split costs a partial block and a share of a
// separate sum kernel.
inline constexpr int kGpuSplitCounts[] = {1, 2, 4, 8, 16, 32};

// Value lists of the runtime parameters the tuner searches; (tm, tn) come from the compiled variants.
struct ParamRanges {
  std::vector<int> mb, nb, kb, team;
  std::vector<int> ks;      // K splits
  std::vector<int> bb;      // products per team
  std::vector<int> slab_buffers;  // 0 for the space's own
};

// Host spaces: teams of one or two threads, each walking many micro-tiles with the host
// micro-kernel (host_micro_kernel.hpp), on the build's host tiles (HostTiles, variants.hpp).
template <class ExecSpace>
struct TuningPolicy {
  // The default tile on 60 x 64 blocks: five 12-row or ten 6-row tiles cover the M = 49 layers
  // with little padding, 64 columns the N = 64 ones. With AVX-512's 12x32 this was the best
  // single config measured over the 20 ResNet-50 batch-1 shapes on the 2-core AVX-512 Xeon
  // (docs/results.md); the tuner picks per shape from the seeds and ranges below.
  static Config default_config(DType = DType::F32) { return on_blocks<HostTiles::Default>({60, 64, 256}); }
  // Where the tuner's climb may start on `problem` (the best of them): the default and, where a
  // tile's rows divide the problem's row unit (row_unit: 49 at 224 x 224, whose every ResNet
  // batch-1 M is 49 * 4^j, covered without padding), the widest such tile on one or four unit-row
  // block rows and on 16-tile ones, and the set's other seed tile on 56-row ones: chosen greedily
  // on the 2-core EPYC's exhaustive cache of ResNet-18/34/50 batch-1 problems at 224 x 224, each
  // adding the most problems within 2 % of the best, and checked on the half of the problems not
  // fitted on (docs/tuning.md, "The seeds"). A climb does not reach those blocks from the default,
  // since a step changes the tile or the block rows but not both. The rule follows the image: at
  // 192 x 192 (unit 36) the 6 x 64 tile on 36- and 144-row blocks, where 224's 7-row seeds put no
  // problem within 2 % of the best, and the widest tile rather than every one whose rows divide
  // 36 (the 12 x 32 too) put two more there at budget 8 (docs/tuning.md, "The EPYC at other image
  // sizes"); a block no candidate has starts at its nearest (search.cpp). Problems without such a
  // tile start from tall blocks for large M and wide N and the other seed tile on the default's
  // blocks.
  static std::vector<Config> seed_configs(const Problem& problem) {
    std::vector<Config> seeds = {default_config(problem.dtype)};
    const int unit = row_unit(problem.m);
    int widest = 0;  // the widest tile whose rows divide the unit (its columns; 0: none)
    for_each_host_micro_tile([&](auto tile) {
      if (unit % tile.tm == 0) widest = std::max(widest, int(tile.tn));
    });
    for_each_host_micro_tile([&](auto tile) {
      using Tile = decltype(tile);
      if (unit % Tile::tm != 0 || Tile::tn != widest) return;
      for (const BlockShape& b : {BlockShape{unit, 256, 512}, BlockShape{4 * unit, 32, 512}, BlockShape{unit, 64, 512},
                                  BlockShape{4 * unit, 64, 512}, BlockShape{16 * Tile::tm, 32, 256}})
        seeds.push_back(on_blocks<Tile>(b));
    });
    const bool row_unit_tile = seeds.size() > 1;  // some tile's rows divide the unit: its seeds are in
    if (row_unit_tile)
      seeds.push_back(on_blocks<HostTiles::Seed>({56, 32, 256}));
    else
      seeds.insert(seeds.end(), {on_blocks<HostTiles::Default>({120, 128, 256}), on_blocks<HostTiles::Seed>({60, 64, 256})});
    return seeds;
  }
  // No split K and one product per team: two or so threads find enough blocks in every shape.
  // Block rows in multiples of the 12-, 8-, 6- and 4-row tiles and, where a tile's rows divide
  // 49, 49 and 196 (the M = 49 and 196 layers in one block row: none partial, so A is read in
  // place; both divide every larger batch-1 M) and 8 and 16 of its tiles (for 7 rows 56 and 112,
  // beside 60 / 64 and 120 / 128, dividing M = 784, 3136 and 12544); builds without such a tile
  // search no more. Columns of the 8-, 16-, 32- and 64-column tiles and, where a tile's columns
  // are not a power of two (24), its own multiples; K slabs up to 512 deep (a 60 x 512 A slab and
  // a 512 x 64 B slab fit a 2 MiB L2 with room to spare).
  static ParamRanges ranges() {
    std::vector<int> mb = {16, 24, 32, 48, 60, 64, 96, 120, 128, 192};
    std::vector<int> nb = {16, 32, 64, 128, 256};
    for_each_host_micro_tile([&](auto tile) {
      if (kRowUnit % tile.tm == 0) mb.insert(mb.end(), {kRowUnit, 4 * kRowUnit, 8 * tile.tm, 16 * tile.tm});
      if ((tile.tn & (tile.tn - 1)) != 0)
        for (int cols = tile.tn; cols <= nb.back(); cols *= 2) nb.push_back(cols);
    });
    for (std::vector<int>* edges : {&mb, &nb}) {
      std::sort(edges->begin(), edges->end());
      edges->erase(std::unique(edges->begin(), edges->end()), edges->end());
    }
    return {mb, nb, {32, 64, 128, 256, 512}, {1, 2}, {1}, {1}, {0}};
  }
  // Two threads per team only pay when each has several micro-tiles of its own.
  static bool worth_trying(const Config& c) { return c.team == 1 || c.micro_tiles() >= 4 * c.team; }
  // The rows `m` is a power-of-4 multiple of: a ResNet batch-1 M is (image / 32)^2 * 4^j (49 at
  // 224 x 224, 36 at 192, 25 at 160), so `m` with factors of 4 taken out while kSmallestRowUnit
  // rows or more are left (16 at 256 x 256, whose smallest M is 64); 1 for an empty M, whose rows
  // no tile divides.
  static int row_unit(int m) {
    while (m % 4 == 0 && m / 4 >= kSmallestRowUnit) m /= 4;
    return std::max(m, 1);
  }

 private:
  // Every ResNet batch-1 M at 224 x 224 is kRowUnit * 4^j: the block rows ranges() lists besides
  // the tiles' multiples, which the stores and exhaustive caches of those layers hold.
  static constexpr int kRowUnit = 49;
  static constexpr int kSmallestRowUnit = 16;
  struct BlockShape {
    int rows, cols, depth;
  };
  // Tile on blocks of at least rows x cols, rounded up to whole tiles, slabs `depth` deep, one thread.
  template <class Tile>
  static Config on_blocks(BlockShape b) {
    return ConfigBuilder()
        .mb(ceil_div(b.rows, Tile::tm) * Tile::tm)
        .nb(ceil_div(b.cols, Tile::tn) * Tile::tn)
        .kb(b.depth)
        .tm(Tile::tm)
        .tn(Tile::tn)
        .team(1);
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct TuningPolicy<Kokkos::Cuda> {
  // The defaults and seeds are data (gpu_seeds.hpp), for what this GPU's tensor cores run.
  static Config default_config(DType dtype = DType::F32) { return gpu_default_config(dtype, tensor_cores()); }
  static std::vector<Config> seed_configs(const Problem& problem) { return gpu_seed_configs(problem.dtype, tensor_cores()); }
  static GpuTensorCores tensor_cores() { return tensor_cores_of(TensorCores<Kokkos::Cuda>::capability()); }
  static ParamRanges ranges() {
    // 16-row and 16-column blocks give batch-1 layers (M = 49 ... 784) enough blocks to fill the SMs
    // (8-row and 8-column ones are for 8 x 8 products: search_space.hpp);
    // teams of 8 and 16 threads give them (and 8x8 / 16x16 batched products) 4x4 and 8x4 micro-tiles.
    // Split K lets long-K layers with few blocks (batch 1: M = 49, K = 4608) use every SM.
    // 64-deep slabs fit the scratch only for small fp16 blocks (64 x 64 tensor-core blocks, where
    // half the barriers per K pay: docs/gpu-notes.md, s7).
    // 192-row blocks (three warp-specialized 64 x 128 tiles) cut M into as many blocks as fill
    // the SMs where 128-row ones leave a quarter idle (M = 6272: 98 blocks of 128 x 256 on 132 SMs,
    // 132 of 192 x 128).
    // Several products per team give batches of small products blocks of 64 - 256 threads.
    // Three to six slab buffers keep more copies in flight than two (0: the default; five and six
    // only the warp-specialized kernel, whose producer copies the slabs itself).
    return {{8, 16, 32, 64, 128, 192, 256}, {8, 16, 32, 64, 128, 256}, {8, 16, 32, 64}, {8, 16, 32, 64, 128, 256, 512},
            {std::begin(kGpuSplitCounts), std::end(kGpuSplitCounts)}, {1, 2, 4, 8, 16, 32}, {0, 3, 4, 5, 6}};
  }
  // One micro-tile per thread (per warp for tensor cores): partial sums between K slabs then
  // stay in registers.
  static bool worth_trying(const Config& c) { return c.threads_per_product() == c.team_of_tiles(); }
};
#endif

}  // namespace kgemm
