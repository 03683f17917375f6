#pragma once
// The CUDA space's default configs and climb seeds, as data any build reads:
// TuningPolicy<Kokkos::Cuda> gives them for the GPU it runs on, and kgemm-compare-strategies
// replays a GPU's measurement cache from today's seeds in a build without CUDA (a cache records
// the seeds of the day it was measured).
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/dtype.hpp"
#include "kgemm/spaces/gpu_capability.hpp"

namespace kgemm {

// The configs that won most often in the H100 store: fp32 8x8 micro-tiles on 128 x 64 blocks,
// fp16 tensor cores with one 64 x 32 warp tile per warp (on GPUs that run kgemm's tensor-core
// fragments; older ones take the fp32 default for fp16 too). fp32 on TF32 tensor cores (3xTF32)
// is never the default: the tuner offers it per problem where its error is no worse than twice
// the SIMT kernel's.
inline Config gpu_default_config(DType dtype, GpuTensorCores tensor_cores) {
  return parse_config(dtype == DType::F16 && tensor_cores.fp16 ? "mb128_nb64_kb32_tm64_tn32_team128_tc"
                                                               : "mb128_nb64_kb16_tm8_tn8_team128");
}

// Climbs start from these (tuner/search_space.hpp fits each to the problem; the search moves a
// seed that no candidate matches to its kernel family's nearest candidate), since a climb one
// step at a time seldom crosses from one kernel family or block class to another. On Hopper they
// were chosen greedily on the H200's exhaustive cache of today's kernels, each adding the most
// problems within 2 % of the best (docs/tuning.md, "The seeds"); a held-out cache checks them.
// Warpgroup families (`_wg`, `_ws`) are dropped where the build or the GPU has none, configs past
// 48 KB of scratch where spaces/ does not lift the cap (no candidate is of them there).
inline std::vector<Config> gpu_seed_configs(DType dtype, GpuTensorCores tensor_cores) {
  if (dtype == DType::F16 && tensor_cores.fp16)
    return {gpu_default_config(dtype, tensor_cores),
            parse_config("mb192_nb128_kb64_tm64_tn128_team512_st4_ws"),  // three 64 x 128 consumer warpgroups, 4 buffers
            parse_config("mb64_nb64_kb64_tm64_tn64_team256_st4_ws"),     // one 64 x 64 consumer: small grids
            parse_config("mb128_nb64_kb64_tm64_tn64_team384_st5_ws"),    // two 64 x 64 consumers, 5 buffers
            parse_config("mb128_nb128_kb64_tm64_tn128_team384_st5_ws"),  // two 64 x 128 consumers, 5 buffers
            parse_config("mb64_nb64_kb64_tm32_tn32_team128_tc"),         // warps' 32 x 32 tiles: K = 147 (conv1)
            parse_config("mb64_nb32_kb32_tm64_tn32_team32_tc")};         // one warp a block: batch-1 layers
  if (dtype != DType::F32 || !tensor_cores.tf32)
    return {gpu_default_config(dtype, tensor_cores), parse_config("mb64_nb64_kb32_tm8_tn4_team128"),
            parse_config("mb32_nb64_kb32_tm4_tn4_team128")};  // small M: M = 49 ... 12544
  // Hopper's TF32 warpgroup MMA on 32-deep slabs: one warpgroup's 128 x 64 tile with 3 buffers
  // (the most frequent fp32 winner); `mma.sync` warp tiles on small blocks, and two 64 x 64 ones
  // on 16-deep slabs with 3 buffers (the K = 147 layer's best on both Hopper GPUs at every batch,
  // which no other shape's config is near); a thread a C element for the smallest products; a
  // SIMT 32 x 32 block of 4 x 4 micro-tiles on 64-deep slabs, the best of batch-1 layers of a few
  // µs with short K (784 x 128 x 64, 784 x 256 x 128 on the H200), which SIMT seeds of larger
  // tiles sit three or four steps from, and a SIMT start for problems whose 3xTF32 candidates the
  // precision gate withholds (docs/tuning.md, "A SIMT 4 x 4 seed").
  return {gpu_default_config(dtype, tensor_cores),
          parse_config("mb128_nb64_kb32_tm128_tn64_team128_st3_wg"),
          parse_config("mb32_nb64_kb32_tm32_tn32_team64_st3_tc"),
          parse_config("mb16_nb16_kb64_tm1_tn1_team256"),
          parse_config("mb128_nb64_kb16_tm64_tn64_team64_st3_tc"),
          parse_config("mb32_nb32_kb64_tm4_tn4_team64")};
}

}  // namespace kgemm
