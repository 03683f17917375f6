#pragma once
// The tunable parameters of the GEMM kernels, printable as one canonical string
// ("mb64_nb64_kb32_tm4_tn4_team16", "..._team128_ks4" for split K, "..._bb8" for products per
// team, "..._st3" for three slab buffers, "..._tc" for tensor cores, "..._wg" for Hopper's
// warpgroup MMA, "..._ws" for its warp-specialized kernel) that parses back: log lines, YAML and
// benchmark labels use it.
#include <string>

#include "kgemm/spaces/error.hpp"

namespace kgemm {

// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b near INT_MAX.
constexpr int ceil_div(int a, int b) { return a / b + (a % b != 0); }

// The kernel family a config runs, named by its config string's suffix. Warpgroups are tensor
// cores, and the warp-specialized kernel runs warpgroups: one value per config, so no config can
// claim a family without what that family runs on.
enum class Family {
  // SIMT lanes (no suffix): tm x tn is a thread's register micro-tile.
  Simt,
  // Tensor cores ("_tc"): tm x tn is a warp's tile (multiples of 16), one warp per tile. fp16 data
  // multiplies as it is; fp32 data as three TF32 products per product (3xTF32), whose error stays
  // at fp32's level: the choice between it and fp32 SIMT lanes is a store entry's, or a call's.
  TensorCore,
  // Hopper's warpgroup MMA ("_wg", `wgmma`, sm_90a device code): tm x tn is a warpgroup's tile,
  // four warps per tile (variants.hpp). fp16 data: 64 x 64 or 64 x 128, A from registers
  // (kb <= 64), B's slabs staged in the swizzled layout the instruction reads. fp32 data
  // (3xTF32): 128 x 64, B from registers, A's slabs staged (kb 16 or 32).
  Warpgroup,
  // Warp specialization ("_ws", fp16 data on Hopper): a producer warpgroup, one thread of which
  // copies both operands' slabs by bulk tensor copies (TMA: operands row-major with 16-byte
  // aligned data, rows and products), and the tiles' warpgroups multiply them straight from
  // scratch through descriptors, one group left in flight, each buffer handed over and back
  // through shared-memory barriers instead of a team barrier per slab. That needs three or more
  // slab buffers of 128 x 128 x 64 (96 KB and up: team scratch past Kokkos 4.6's 48 KB, spaces/
  // team_scratch.hpp). kb is 64 (A's rows of 128 bytes, the 128-byte swizzle).
  WarpSpecialized,
};

// A config is written as its config string (parse_config: seeds, defaults, tests) or, where its
// values are worked out (blocks rounded to a tile, loops over tiles) or must be malformed on
// purpose, through ConfigBuilder's named fields. The user-provided constructor keeps Config from
// being an aggregate, so no config can be built from a list of positional values.
struct Config {
  constexpr Config() {}

  int mb = 64;    // rows of C per team (block tile)
  int nb = 64;    // columns of C per team
  int kb = 32;    // depth of the K slab staged in team scratch
  int tm = 4;     // rows of the per-thread register micro-tile (compile-time: see variants.hpp)
  int tn = 4;     // columns of the per-thread register micro-tile (compile-time)
  int team = 16;  // threads per team
  Family family = Family::Simt;
  // Split K: teams per block of C, each over its own range of K slabs, writing partial blocks
  // that a second kernel adds up (split_sum.hpp). Gives small grids (batch 1, M = 49) enough
  // teams to fill a GPU.
  int ks = 1;
  // Products of a batch per team, each on team / bb of its threads: small products (8 x 8 ...
  // 32 x 32) would otherwise make GPU blocks of a few threads, of which an SM runs too few.
  int bb = 1;
  // Slab buffers ("stages" in CUTLASS' names): K slabs staged ahead of the one multiplied, plus
  // one. 0 takes the space's own (SpaceTraits::default_slab_buffers: 2 on GPUs, 1 on CPUs); deeper
  // pipelines keep more copies in flight, for teams whose slabs are short next to the latency
  // of global memory, at the price of scratch.
  int slab_buffers = 0;

  bool tensor_cores() const { return family != Family::Simt; }
  bool warpgroups() const { return family == Family::Warpgroup || family == Family::WarpSpecialized; }
  bool warp_specialized() const { return family == Family::WarpSpecialized; }

  // Micro-tiles per block, and how many each thread walks (1 keeps accumulators in registers
  // for the whole K loop; more stages partial sums in scratch between slabs).
  int micro_tiles() const { return (mb / tm) * (nb / tn); }
  int threads_per_tile() const { return warpgroups() ? 128 : tensor_cores() ? 32 : 1; }
  // A team's threads that only stage slabs: the warp-specialized kernel's producer warpgroup.
  int producer_threads() const { return warp_specialized() ? threads_per_tile() : 0; }
  // A product's team when every thread owns one tile, the producer's beside them.
  int team_of_tiles() const { return micro_tiles() * threads_per_tile() + producer_threads(); }
  int threads_per_product() const { return team / bb; }
  int tiles_per_thread() const { return (micro_tiles() + threads_per_product() - 1) / threads_per_product(); }

  friend bool operator==(const Config& a, const Config& b) {
    return a.mb == b.mb && a.nb == b.nb && a.kb == b.kb && a.tm == b.tm && a.tn == b.tn &&
           a.team == b.team && a.ks == b.ks && a.bb == b.bb && a.slab_buffers == b.slab_buffers && a.family == b.family;
  }
  friend bool operator!=(const Config& a, const Config& b) { return !(a == b); }
};

// Whether two configs are of one block class: the same kernel family, block, tile and team, so
// that they differ only in how a team walks K (slab depth, slab buffers, split K). A store entry
// keeps one runner-up a class (TunedEntry::runners_up).
inline bool same_block_class(const Config& a, const Config& b) {
  return a.family == b.family && a.mb == b.mb && a.nb == b.nb && a.tm == b.tm && a.tn == b.tn && a.team == b.team &&
         a.bb == b.bb;
}

// Config's fields by name, each left out keeping Config's default:
//   Config c = ConfigBuilder().mb(60).nb(64).kb(256).tm(12).tn(32).team(1);
class ConfigBuilder {
 public:
  constexpr ConfigBuilder& mb(int value) { return set(&Config::mb, value); }
  constexpr ConfigBuilder& nb(int value) { return set(&Config::nb, value); }
  constexpr ConfigBuilder& kb(int value) { return set(&Config::kb, value); }
  constexpr ConfigBuilder& tm(int value) { return set(&Config::tm, value); }
  constexpr ConfigBuilder& tn(int value) { return set(&Config::tn, value); }
  constexpr ConfigBuilder& team(int value) { return set(&Config::team, value); }
  constexpr ConfigBuilder& ks(int value) { return set(&Config::ks, value); }
  constexpr ConfigBuilder& bb(int value) { return set(&Config::bb, value); }
  constexpr ConfigBuilder& slab_buffers(int value) { return set(&Config::slab_buffers, value); }
  constexpr ConfigBuilder& family(Family value) {
    config_.family = value;
    return *this;
  }
  constexpr operator Config() const { return config_; }

 private:
  constexpr ConfigBuilder& set(int Config::*field, int value) {
    config_.*field = value;
    return *this;
  }
  Config config_;
};

// How the kernels cut a K extent for a config: kb-deep slabs, whole slabs per split (Config::ks),
// no split left empty, so splits <= ks.
struct SlabSplit {
  int slabs, slabs_per_split, splits;
};
constexpr SlabSplit split_slabs(const Config& config, int k) {
  const int slabs = ceil_div(k, config.kb);
  const int per_split = slabs > config.ks ? ceil_div(slabs, config.ks) : 1;
  return {slabs, per_split, slabs > 0 ? ceil_div(slabs, per_split) : 1};
}

std::string to_string(const Config& config);

// The suffix naming a kernel family: "_ws", "_wg", "_tc", or "" (SIMT lanes).
const char* family_suffix(Family family);
const char* family_suffix(const Config& config);

// "ROWSxCOLS", as the messages about tiles, blocks and operands name extents.
std::string dims(int rows, int cols);

// Why no kernel can run `config`, whatever the space and the problem (empty when one can): a
// field outside its range (declared beside the fields in config.cpp; the bounds keep every size
// worked out from a config inside the kernels' integer arithmetic), a tile that is not compiled,
// or fields that contradict each other. The space's own limits are checked by why_illegal
// (launch.hpp), which asks this first.
std::string why_malformed(const Config& config);

// Throws InvalidArgument naming the offending text and the reason when `text` is not a
// config string or names a malformed config.
Config parse_config(const std::string& text);

}  // namespace kgemm
