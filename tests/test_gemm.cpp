// Kernel tests: every space x dtype x accumulation, against the fp64 reference on fresh
// random inputs, with outputs poisoned so unwritten elements fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "kgemm/slab_pipeline.hpp"
#include "kgemm/slab_stager.hpp"
#include "kgemm/spaces/team_scratch.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"
#include "kgemm/tiled_gemm.hpp"
#include "kgemm/tuner/catalogue.hpp"
#include "kgemm/variants.hpp"
#include "support/cases.hpp"
#include "support/gemm_check.hpp"

namespace kgemm::test {
namespace {

// The 20 ResNet-50 v1.5 shapes with M cut to 192 rows (N and K, which shape the K loop and
// the column tiles, stay as they are) through the dispatched config. Prints the accuracy.
KGEMM_CASE_TEST(GemmTest, Resnet50ShapesDispatched) {
  for (const LayerShape& s : resnet_gemm_shapes("resnet50", 224, 1)) {
    GemmCheck g;
    g.m = std::min(s.m, 192), g.n = s.n, g.k = s.k;
    const Errors e = run_check<TypeParam>(g);
    std::printf("[accuracy] %s %-24s m%-4d n%-5d k%-5d frobenius %.2e max %.2e\n", TypeParam::name().c_str(),
                s.layer.c_str(), g.m, g.n, g.k, e.frobenius, e.max_rel);
  }
}

// Edge shapes (1, primes, non-multiples of every tile, K spanning several slabs with a
// remainder, one full 64-cube) with every config, row- and column-major; with padded_rows also
// row-major A and B whose rows are padded to 8 elements (aligned rows: GPUs stage them as runs,
// zero-filling past K and N themselves; host spaces read their slabs in place, rows a padded
// row apart).
template <class Case>
void check_edge_shapes(std::initializer_list<Config> configs, bool padded_rows = false) {
  const int shapes[][3] = {{1, 1, 1}, {1, 7, 3}, {13, 17, 19}, {67, 129, 37}, {130, 5, 300}, {64, 64, 64}};
  for (const Config& config : configs)
    for (const auto& shape : shapes) {
      GemmCheck g;
      g.m = shape[0], g.n = shape[1], g.k = shape[2];
      g.config = config;
      run_check<Case>(g);
      run_check<Case, Kokkos::LayoutLeft>(g);
      if (!padded_rows) continue;
      g.pad_ab = true;
      run_check<Case>(g);
    }
}

// The most threads a team of an empty kernel may have on the space.
template <class Space>
int team_size_max() {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  return int(Kokkos::TeamPolicy<Space>(1, Kokkos::AUTO).team_size_max(KOKKOS_LAMBDA(const Member&){}, Kokkos::ParallelForTag()));
}

// Threads per team for the multi-thread geometries: 4, or fewer where the space allows fewer.
template <class Space>
int small_team() {
  return std::min(4, team_size_max<Space>());
}

// Whether the case has a tensor-core kernel: fp32 accumulation on a device with tensor cores for
// its data (fp16; fp32 as 3xTF32 on TF32 tensor cores).
template <class Case>
bool has_tensor_cores() {
  using Cores = TensorCores<typename Case::ExecSpace>;
  const bool fp16 = dtype_of<typename Case::Value>() == DType::F16;
  return Case::accum == Accum::F32 && (fp16 ? Cores::on_device() : Cores::tf32_on_device());
}

// Whether the space stages aligned rows as runs (GPUs): the edge shapes then run with padded
// rows as well.
template <class Case>
constexpr bool stages_runs() {
  return SpaceTraits<typename Case::ExecSpace>::copy_run_bytes > 0;
}

// The edge shapes for every micro-tile variant the space compiles, in three geometries: one micro-tile per
// team, several per thread (partial sums in scratch), and a multi-thread team. The middle one
// has slabs of an odd depth, or of 12 where the A slab is read four k at a time.
KGEMM_CASE_TEST(GemmTest, EdgeShapesEveryVariant) {
  using Space = typename TypeParam::ExecSpace;
  const int team_max = small_team<Space>();
  const int odd_kb = kTiledReadsKRuns<Space> ? 12 : 5;
  for (auto [tm, tn] : micro_tiles_on(!SpaceTraits<Space>::is_gpu))
    check_edge_shapes<TypeParam>({ConfigBuilder().mb(tm).nb(tn).kb(8).tm(tm).tn(tn).team(1),
                                  ConfigBuilder().mb(2 * tm).nb(3 * tn).kb(odd_kb).tm(tm).tn(tn).team(1),
                                  ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(16).tm(tm).tn(tn).team(team_max)},
                                 stages_runs<TypeParam>() || SpaceTraits<Space>::reads_slabs_in_place);
}

// Host spaces multiply slabs where they lie in A and B (SlabStager::in_place) and stage the
// rest: blocks past M (whose micro-tiles wholly past M are skipped) and past N, B's rows 4 KiB
// or more apart (N = 1100 in fp32), the last slab shallower than kb, transposed operands,
// padded rows, batches sharing B, alpha and beta; one and two threads per team.
KGEMM_CASE_TEST(GemmTest, SlabsReadInPlaceOrStaged) {
  using Space = typename TypeParam::ExecSpace;
  if (!SpaceTraits<Space>::reads_slabs_in_place) GTEST_SKIP() << Space::name() << " stages every slab";
  const int shapes[][3] = {{49, 200, 100}, {49, 1100, 70}, {96, 64, 64}};
  // The build's host tiles (HostTiles): blocks of 2 x 2 default tiles and 6 x 2 seed tiles; each
  // tile whose rows divide 49 (the tuner's seed for ResNet's M = 49 * 4^j) on blocks of 49 rows
  // (M = 49 in one block, A read in place; M = 96 in a partial one) and of 56 (M = 49 in a
  // partial block, A staged; M = 96 in a whole block and a partial one).
  using Wide = HostTiles::Default;
  using Tall = HostTiles::Seed;
  std::vector<Config> configs = {ConfigBuilder().mb(2 * Wide::tm).nb(2 * Wide::tn).kb(32).tm(Wide::tm).tn(Wide::tn).team(1),
                                 ConfigBuilder().mb(6 * Tall::tm).nb(2 * Tall::tn).kb(48).tm(Tall::tm).tn(Tall::tn).team(small_team<Space>())};
  for_each_host_micro_tile([&](auto tile) {
    if (49 % tile.tm != 0) return;
    configs.push_back(ConfigBuilder().mb(49).nb(2 * tile.tn).kb(32).tm(tile.tm).tn(tile.tn).team(1));
    configs.push_back(ConfigBuilder().mb(56).nb(tile.tn).kb(48).tm(tile.tm).tn(tile.tn).team(small_team<Space>()));
  });
  for (const Config& config : configs)
    for (const auto& shape : shapes)
      for (bool batched : {false, true}) {
        GemmCheck g;
        g.m = shape[0], g.n = shape[1], g.k = shape[2];
        g.config = config;
        g.batched = batched, g.shared_b = batched, g.batch = batched ? 3 : 1;
        g.alpha = batched ? 1.5f : 1.0f, g.beta = batched ? -0.5f : 0.0f;
        run_check<TypeParam>(g);
        g.pad_ab = true;
        run_check<TypeParam>(g);
        g.pad_ab = false, g.op_b = Op::T;
        run_check<TypeParam>(g);
      }
}

// Which slabs a host stager reads in place: A's and B's interior tiles, B only while its rows
// lie less than in_place_k_row_bytes apart; never tiles crossing the source's edge off K,
// transposed sources, slabs padded past K, or a slab type other than the source's.
struct OneThreadTeam {
  int team_size() const { return 1; }
  int team_rank() const { return 0; }
};
TEST(SlabStager, ReadsInPlaceOnlyWhereTheSourceHoldsTheSlab) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using Stager = SlabStager<Space, float, float>;
  const bool host = SpaceTraits<Space>::reads_slabs_in_place;
  std::vector<float> data(400 * 2048);
  const auto row_major = [&](int rows, int cols) { return MatrixRef<const float>(data.data(), rows, cols, cols, 1, 0); };
  const OneThreadTeam team;
  const int ld = 64;
  // A (K along columns): 100 x 300, blocks of 60 rows.
  EXPECT_EQ(Stager(team, ld, row_major(100, 300), 0, 0, 0, 60, 32, true, true).in_place, host);
  EXPECT_FALSE(Stager(team, ld, row_major(100, 300), 0, 60, 0, 60, 32, true, true).in_place);   // rows past M
  EXPECT_FALSE(Stager(team, ld, row_major(100, 300), 0, 0, 0, 60, 32, true, false).in_place);   // padded past K
  EXPECT_FALSE(Stager(team, ld, row_major(300, 100).transposed(), 0, 0, 0, 60, 32, true, true).in_place);
  // B (K along rows): rows 1023 and 1024 floats apart.
  const Stager near(team, ld, row_major(300, 1023), 0, 0, 64, 32, 64, false, true);
  EXPECT_EQ(near.in_place, host);
  if (host) {
    EXPECT_EQ(near.ld_read, 1023);
    EXPECT_EQ(near.slab_at(nullptr, 2), data.data() + 2 * 32 * 1023 + 64);
  }
  EXPECT_FALSE(Stager(team, ld, row_major(300, 1024), 0, 0, 64, 32, 64, false, true).in_place);  // 4 KiB apart
  EXPECT_FALSE(Stager(team, ld, row_major(300, 1023), 0, 0, 992, 32, 64, false, true).in_place); // columns past N
  EXPECT_FALSE((SlabStager<Space, half, float>(team, ld, MatrixRef<const half>(nullptr, 300, 100, 100, 1, 0), 0, 0, 0,
                                               32, 64, false, true)
                     .in_place));  // widened while staged
}

// The block schedule every kernel launches by (BlockSchedule, here a host pipeline's): over all
// work items and product teams, each block of each product is written by exactly one team per
// split, the splits of a block cover its K slabs once, in order and none empty, and teams past
// the batch's end write nothing. Shapes with edge blocks, both walking orders (N < M and
// N >= M), K short of one slab, splits that do not divide the slabs, and products per team that
// do not divide the batch.
TEST(BlockSchedule, EveryBlockAndSlabOnceAcrossTeamsAndSplits) {
  struct Case {
    int m, n, k, batch;
    const char* config;
  };
  for (const Case& c : {Case{100, 37, 300, 1, "mb64_nb32_kb32_tm8_tn8_team32"},
                        Case{37, 100, 300, 3, "mb32_nb64_kb32_tm8_tn8_team32_ks4"},
                        Case{49, 512, 4608, 1, "mb32_nb64_kb64_tm8_tn16_team16_ks7"},
                        Case{9, 7, 5, 33, "mb8_nb8_kb32_tm4_tn4_team8_bb2"},
                        Case{64, 64, 20, 2, "mb32_nb32_kb32_tm8_tn8_team16_ks3"}}) {
    SCOPED_TRACE(c.config);
    const Config config = parse_config(c.config);
    GemmArgs<float> args;  // the shapes alone: placing blocks reads no data
    args.A = MatrixRef<const float>(nullptr, c.m, c.k, c.k, 1, c.m * c.k);
    args.B = MatrixRef<const float>(nullptr, c.k, c.n, c.n, 1, c.k * c.n);
    args.C = MatrixRef<float>(nullptr, c.m, c.n, c.n, 1, c.m * c.n);
    args.batch = c.batch;
    const SlabPipeline<Kokkos::DefaultHostExecutionSpace, float, float, false, 1> s(args, config, 1);
    EXPECT_EQ(s.walk_n_first, c.n < c.m);
    EXPECT_LE(s.splits, config.ks);
    std::vector<int> writes(std::size_t(s.blocks()) * s.splits, 0);
    for (int work = 0; work < s.work_items(); ++work)
      for (int group = 0; group < config.bb; ++group) {
        const BlockOrigin at = s.origin(work, group);
        ASSERT_TRUE(at.b >= 0 && at.b < c.batch && at.m0 >= 0 && at.m0 < c.m && at.n0 >= 0 && at.n0 < c.n);
        EXPECT_EQ(at.m0 % config.mb + at.n0 % config.nb, 0);
        const SlabRange range = s.slab_range(at);
        EXPECT_LT(range.first, range.end);  // no split without slabs
        EXPECT_EQ(range.first, at.split * s.slabs_per_split);
        if (at.split + 1 == s.splits) EXPECT_GE(range.end * config.kb, c.k);
        if (at.writes) ++writes[std::size_t(at.block) * s.splits + at.split];
      }
    EXPECT_TRUE(std::all_of(writes.begin(), writes.end(), [](int n) { return n == 1; }));
    // place() is one-to-one onto the grid of block corners.
    std::vector<int> corners(std::size_t(s.blocks()), 0);
    for (int block = 0; block < s.blocks(); ++block) {
      const BlockOrigin at = s.place(block);
      ++corners[(std::size_t(at.b) * s.blocks_m + at.m0 / config.mb) * s.blocks_n + at.n0 / config.nb];
    }
    EXPECT_TRUE(std::all_of(corners.begin(), corners.end(), [](int n) { return n == 1; }));
  }
}

// Host spaces multiply a whole tile from A and B straight into C (TiledGemm::multiplies_in_place)
// where K is one slab, A's, B's and C's rows are unit-stride, B's rows less than 4 KiB apart and
// M and N are multiples of the tile: batches of small products, with edge blocks holding tiles
// wholly past C, K from 1 to a full slab, a shared B, padded rows (A and B rows a padded row
// apart), alpha and beta, one and two threads per team, and two products per team where teams
// have two threads (batch 33: the last team's second product is past the batch). Odd products
// (7 x 9 x 5), K over two slabs and transposed operands take the slab pipeline in the same
// calls' configs.
KGEMM_CASE_TEST(GemmTest, WholeTilesMultipliedInPlace) {
  using Space = typename TypeParam::ExecSpace;
  for (auto [tm, tn] : micro_tiles_on(!SpaceTraits<Space>::is_gpu)) {
    const int team = std::min(2, small_team<Space>());
    std::vector<Config> configs = {ConfigBuilder().mb(tm).nb(tn).kb(8).tm(tm).tn(tn).team(1),
                                   ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(16).tm(tm).tn(tn).team(team)};
    if (team > 1) configs.push_back(ConfigBuilder().mb(tm).nb(tn).kb(8).tm(tm).tn(tn).team(team).bb(team));  // a product per thread
    const int shapes[][3] = {{tm, tn, 8}, {tm, tn, 1}, {3 * tm, 3 * tn, 5}, {2 * tm, tn, 16}, {7, 9, 5}, {tm, tn, 17}};
    for (const Config& config : configs)
      for (const auto& shape : shapes)
        for (bool shared : {false, true}) {
          GemmCheck g;
          g.batched = true, g.shared_b = shared, g.batch = 33, g.m = shape[0], g.n = shape[1], g.k = shape[2];
          g.config = config;
          run_check<TypeParam>(g);
          g.alpha = 1.5f, g.beta = -0.5f, g.pad_ab = true;
          run_check<TypeParam>(g);
          g.pad_ab = false, g.op_a = Op::T;
          run_check<TypeParam>(g);
        }
  }
}

// Which calls the host's fp32 tiles multiply in place: the shapes and operands above, and none
// where a tile would cross C's edge, K spans two slabs, a row is not unit-stride, B's rows lie
// 4 KiB apart, or the data is not fp32.
TEST(TiledGemm, MultipliesInPlaceOnlyWholeTilesOfOneSlab) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using Tiled = TiledGemm<Space, float, float, 8, 16, false, SpaceTraits<Space>::default_slab_buffers>;
  const bool host = !kTiledReadsKRuns<Space>;
  const auto args = [](int m, int n, int k, std::ptrdiff_t ldb) {
    GemmArgs<float> a;
    a.A = MatrixRef<const float>(nullptr, m, k, k, 1, m * k);
    a.B = MatrixRef<const float>(nullptr, k, n, ldb, 1, 0);
    a.C = MatrixRef<float>(nullptr, m, n, n, 1, m * n);
    a.batch = 33;
    return a;
  };
  const Config config = parse_config("mb16_nb32_kb32_tm8_tn16_team1");
  EXPECT_EQ(Tiled::multiplies_in_place(args(8, 16, 32, 16), config), host);
  EXPECT_EQ(Tiled::multiplies_in_place(args(24, 48, 1, 1023), config), host);
  EXPECT_FALSE(Tiled::multiplies_in_place(args(7, 16, 8, 16), config));    // a tile crosses M
  EXPECT_FALSE(Tiled::multiplies_in_place(args(8, 20, 8, 20), config));    // a tile crosses N
  EXPECT_FALSE(Tiled::multiplies_in_place(args(8, 16, 33, 16), config));   // two slabs
  EXPECT_FALSE(Tiled::multiplies_in_place(args(8, 16, 8, 1024), config));  // B's rows 4 KiB apart
  GemmArgs<float> transposed = args(8, 16, 8, 16);
  transposed.A = MatrixRef<const float>(nullptr, 8, 8, 1, 8, 64);  // column-major A
  EXPECT_FALSE(Tiled::multiplies_in_place(transposed, config));
  GemmArgs<half> fp16;
  fp16.A = MatrixRef<const half>(nullptr, 8, 8, 8, 1, 0);
  fp16.B = MatrixRef<const half>(nullptr, 8, 16, 16, 1, 0);
  fp16.C = MatrixRef<half>(nullptr, 8, 16, 16, 1, 0);
  EXPECT_FALSE((TiledGemm<Space, half, float, 8, 16, false, SpaceTraits<Space>::default_slab_buffers>::multiplies_in_place(
      fp16, config)));
}

// Tensor-core warp tiles, where the space has tensor cores for the case's data with fp32
// accumulation: the edge shapes (K not a multiple of the 16-deep fragments, partial blocks)
// with one and several warps per team, staged element-wise and, rows padded, as runs.
KGEMM_CASE_TEST(GemmTest, EdgeShapesEveryTensorCoreTile) {
  if (!has_tensor_cores<TypeParam>()) GTEST_SKIP() << "no tensor-core kernel for this case";
  // Two slabs of 128 x 64 x 32 fp32 elements need more than Kokkos 4.6's 48 KB of team scratch.
  const int two_warps_kb = dtype_of<typename TypeParam::Value>() == DType::F16 ? 32 : 16;
  for (auto [tm, tn] : warp_tiles())
    check_edge_shapes<TypeParam>({ConfigBuilder().mb(tm).nb(tn).kb(16).tm(tm).tn(tn).team(32).family(Family::TensorCore),
                                  ConfigBuilder().mb(2 * tm).nb(tn).kb(two_warps_kb).tm(tm).tn(tn).team(64).family(Family::TensorCore),
                                  ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(16).tm(tm).tn(tn).team(128).family(Family::TensorCore)},
                                 true);
}

// Hopper's warpgroup MMA (_wg), where this build's device code and the GPU have it. fp16: both
// warpgroup tiles, 16- to 64-deep slabs (A's fragments in registers, one to four 16-deep steps),
// one, two and four warpgroups per team, split K, and three or four slab buffers; the
// warp-specialized kernel (_ws, bulk tensor copies zero-filling every edge) with its three tiles
// (64 x 256 too), one to four tiles and the producer (two teams per multiprocessor and one; three
// 64 x 128 tiles in 192-row blocks),
// split K, two to six buffers (past 48 KB where the lift is in force). fp32 (3xTF32):
// 16- and 32-deep slabs (the 64- and 128-byte swizzle), one and two warpgroups per team, split K
// and three slab buffers. The edge shapes (partial blocks, K not a multiple of the instruction's k
// or of the slab, odd K) with rows padded to 16 bytes, the operands warpgroups stage; batched
// products with alpha, beta and a shared B.
KGEMM_CASE_TEST(GemmTest, WarpgroupTilesEdgeShapes) {
  using Space = typename TypeParam::ExecSpace;
  if (!has_tensor_cores<TypeParam>()) GTEST_SKIP() << "no warpgroup kernel for this case";
  const DType dtype = dtype_of<typename TypeParam::Value>();
  const std::vector<Config> configs =
      dtype == DType::F16 ? std::vector<Config>{parse_config("mb64_nb64_kb32_tm64_tn64_team128_wg"),
                                                parse_config("mb128_nb128_kb64_tm64_tn128_team256_wg"),
                                                parse_config("mb128_nb128_kb32_tm64_tn64_team512_wg"),
                                                parse_config("mb128_nb64_kb16_tm64_tn64_team256_ks3_wg"),
                                                parse_config("mb64_nb128_kb48_tm64_tn128_team128_st3_wg"),
                                                parse_config("mb256_nb128_kb32_tm64_tn128_team512_st3_wg"),
                                                parse_config("mb128_nb64_kb16_tm64_tn64_team256_ks3_st4_wg"),
                                                parse_config("mb128_nb128_kb64_tm64_tn128_team384_st4_ws"),
                                                parse_config("mb128_nb128_kb64_tm64_tn128_team384_st5_ws"),
                                                parse_config("mb64_nb64_kb64_tm64_tn64_team256_st6_ws"),
                                                parse_config("mb64_nb128_kb64_tm64_tn128_team256_st3_ws"),
                                                parse_config("mb128_nb64_kb64_tm64_tn64_team384_ks2_st3_ws"),
                                                parse_config("mb128_nb128_kb64_tm64_tn64_team640_st4_ws"),
                                                parse_config("mb64_nb64_kb64_tm64_tn64_team256_st2_ws"),
                                                parse_config("mb128_nb256_kb64_tm64_tn256_team384_st3_ws"),
                                                parse_config("mb192_nb128_kb64_tm64_tn128_team512_st3_ws"),
                                                parse_config("mb64_nb256_kb64_tm64_tn256_team256_ks2_st2_ws")}
                          : std::vector<Config>{parse_config("mb128_nb64_kb16_tm128_tn64_team128_wg"),
                                                parse_config("mb128_nb64_kb32_tm128_tn64_team128_wg"),
                                                parse_config("mb128_nb128_kb16_tm128_tn64_team256_wg"),
                                                parse_config("mb128_nb64_kb16_tm128_tn64_team128_ks3_wg"),
                                                parse_config("mb128_nb128_kb16_tm128_tn64_team256_st3_wg")};
  const Problem probe{Kernel::Gemm, dtype, 'n', 'n', 64, 64, 64, 1};
  if (const std::string why = why_illegal<Space>(probe, configs.front()); !why.empty()) GTEST_SKIP() << why;
  const int shapes[][3] = {{1, 1, 1}, {1, 7, 3}, {13, 17, 19}, {67, 129, 37}, {130, 5, 300}, {64, 64, 64}, {200, 136, 272}};
  for (const Config& config : configs) {
    // Deeper slabs and more buffers need more team scratch than some Kokkos versions give (4.6: 48 KB
    // unless spaces/ lifts it).
    if (const std::string why = why_illegal<Space>(probe, config); why.find("team scratch") != std::string::npos) {
      std::printf("[skipped] %s\n", why.c_str());
      continue;
    }
    for (const auto& shape : shapes) {
      GemmCheck g;
      g.m = shape[0], g.n = shape[1], g.k = shape[2], g.pad_ab = true, g.config = config;
      run_check<TypeParam>(g);
    }
    for (bool shared : {false, true}) {
      GemmCheck g;
      g.batched = true, g.shared_b = shared, g.batch = 3, g.m = 70, g.n = 72, g.k = 96, g.pad_ab = true;
      g.alpha = 1.5f, g.beta = -0.5f, g.config = config;
      run_check<TypeParam>(g);
    }
  }
}

// The warp-specialized kernel launches as many teams as run at once and each walks its blocks
// (and split-K ranges) in turn, its slab buffers and barriers carried from one block to the next:
// products of several times more blocks than that, unsplit and split along K, one product and
// batches. Results leave by bulk stores (beta = 0, C's rows 16-byte aligned: N a multiple of 8,
// clipped at edges that cut a box) or from the registers (beta != 0, or rows unaligned).
KGEMM_CASE_TEST(GemmTest, WarpSpecializedTeamsWalkSeveralBlocks) {
  using Space = typename TypeParam::ExecSpace;
  if (!has_tensor_cores<TypeParam>() || dtype_of<typename TypeParam::Value>() != DType::F16)
    GTEST_SKIP() << "no warp-specialized kernel for this case";
  const std::vector<Config> configs = {parse_config("mb64_nb64_kb64_tm64_tn64_team256_st2_ws"),
                                       parse_config("mb128_nb256_kb64_tm64_tn256_team384_st3_ws"),
                                       parse_config("mb192_nb128_kb64_tm64_tn128_team512_st3_ws"),
                                       parse_config("mb128_nb128_kb64_tm64_tn128_team384_ks2_st4_ws")};
  const Problem probe{Kernel::Gemm, DType::F16, 'n', 'n', 64, 64, 64, 1};
  for (const Config& config : configs) {
    if (const std::string why = why_illegal<Space>(probe, config); !why.empty()) {
      std::printf("[skipped] %s\n", why.c_str());
      continue;
    }
    for (const int n : {1032, 1030}) {
      GemmCheck g;
      g.m = 4100, g.n = n, g.k = 200, g.alpha = 1.5f, g.pad_ab = true, g.config = config;
      run_check<TypeParam>(g);
    }
    for (const float beta : {0.0f, -0.5f}) {
      GemmCheck b;
      b.batched = true, b.batch = 8, b.m = 600, b.n = 296, b.k = 130, b.pad_ab = true;
      b.alpha = 1.5f, b.beta = beta, b.config = config;
      run_check<TypeParam>(b);
    }
  }
}

// The warp-specialized kernel's bulk tensor copies read operands row-major with 16-byte aligned
// data, rows and products: a call whose A or B starts off 16 bytes, has rows or products not a
// multiple of 8 elements apart, or is transposed is refused naming the copies, and the same
// operands without a config (dispatch picks one they allow) multiply right. Windows that start
// 16 bytes in, with rows padded past K and N (the copy engine zero-fills the box past the
// window, never reading the padding), run `_ws` and check.
KGEMM_CASE_TEST(GemmTest, WarpSpecializedCopiesNeedAlignedRowMajorOperands) {
  using Space = typename TypeParam::ExecSpace;
  if (!has_tensor_cores<TypeParam>() || dtype_of<typename TypeParam::Value>() != DType::F16)
    GTEST_SKIP() << "no warp-specialized kernel for this case";
  const Config ws = parse_config("mb64_nb64_kb64_tm64_tn64_team256_st2_ws");
  const Problem problem{Kernel::Gemm, DType::F16, 'n', 'n', 130, 136, 272, 1};
  if (const std::string why = why_illegal<Space>(problem, ws); !why.empty()) GTEST_SKIP() << why;
  const GemmArgs<half> aligned = best_laid_operands<half>(Problem{Kernel::Gemm, DType::F16, 'n', 'n', 130, 136, 272, 2});
  ASSERT_EQ(why_illegal<Space>(aligned, ws), "");
  const auto expect_refused = [&](const GemmArgs<half>& args, const char* what) {
    const std::string why = why_illegal<Space>(args, ws);
    EXPECT_NE(why.find("bulk tensor copies"), std::string::npos) << what << ": " << why;
  };
  GemmArgs<half> args = aligned;
  args.A.data = reinterpret_cast<const half*>(std::uintptr_t{4096} + sizeof(half));
  expect_refused(args, "A 2 bytes past 16-byte alignment");
  args = aligned, args.B.row_stride = 140;
  expect_refused(args, "B's rows 140 elements apart");
  args = aligned, args.A.batch_stride = 130 * 272 + 4;
  expect_refused(args, "A's products 4 elements off");
  expect_refused(operands_without_data<half>(Problem{Kernel::Gemm, DType::F16, 't', 'n', 128, 128, 128, 1}), "A transposed");
  expect_refused(operands_without_data<half>(Problem{Kernel::Gemm, DType::F16, 'n', 't', 128, 128, 128, 1}), "B transposed");

  GemmCheck g;
  g.m = 130, g.n = 136, g.k = 272;
  g.a_window.offset = 1;
  run_check<TypeParam>(g);
  g.a_window.offset = 0, g.op_a = Op::T, g.op_b = Op::T;
  run_check<TypeParam>(g);
  g.op_a = g.op_b = Op::N, g.config = ws, g.pad_ab = true;
  g.a_window = {8, 8}, g.b_window = {16, 0}, g.k = 197;
  run_check<TypeParam>(g);
  g.batched = true, g.batch = 3, g.alpha = 1.5f, g.beta = -0.5f;
  run_check<TypeParam>(g);
}

// Team scratch past Kokkos' cap (48 KB a CUDA block): four 128 x 128 x 32 slab buffers run,
// correctly, where the lift is in force (team_scratch.hpp: this build's option, a Kokkos it was
// tested with, KGEMM_TEAM_SCRATCH_LIFT not off), and are refused naming the team scratch limit
// where it is not. Spaces that cap no team scratch by block skip.
KGEMM_CASE_TEST(GemmTest, TeamScratchPastKokkosCap) {
  using Space = typename TypeParam::ExecSpace;
  const TeamScratchLimit& limit = team_scratch_limit<Space>();
  if (limit.block_bytes == 0) GTEST_SKIP() << limit.why;
  std::printf("[team scratch] %s\n", limit.why.c_str());
  const Config deep = parse_config("mb128_nb128_kb32_tm8_tn8_team256_st4");
  const Problem probe{Kernel::Gemm, dtype_of<typename TypeParam::Value>(), 'n', 'n', 128, 128, 128, 1};
  const std::string why = why_illegal<Space>(probe, deep, TypeParam::accum);
  if (!limit.lifted) {
    EXPECT_NE(why.find("team scratch"), std::string::npos) << why;
    return;
  }
  EXPECT_GT(max_team_scratch_bytes<Space>(0, deep.team), int(Kokkos::TeamPolicy<Space>::scratch_size_max(0)));
  ASSERT_EQ(why, "");
  const int shapes[][3] = {{300, 260, 200}, {128, 128, 32}, {1, 7, 3}, {129, 131, 97}};
  for (const auto& shape : shapes) {
    GemmCheck g;
    g.m = shape[0], g.n = shape[1], g.k = shape[2], g.config = deep;
    run_check<TypeParam>(g);
  }
}

TEST(TeamScratch, TheLiftIsTurnedOnOrOffAndNothingElse) {
  const auto wanted = [](const char* value) {
    setenv("KGEMM_TEAM_SCRATCH_LIFT", value, 1);
    const bool on = detail::lift_wanted();
    unsetenv("KGEMM_TEAM_SCRATCH_LIFT");
    return on;
  };
  EXPECT_TRUE(detail::lift_wanted());
  EXPECT_TRUE(wanted("on"));
  EXPECT_FALSE(wanted("off"));
  for (const char* bad : {"", "0", "OFF", "yes"}) {
    try {
      wanted(bad);
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("KGEMM_TEAM_SCRATCH_LIFT='") + bad + "' is not 'on' or 'off'"),
                std::string::npos)
          << e.what();
    }
    unsetenv("KGEMM_TEAM_SCRATCH_LIFT");
  }
}

TEST(TeamScratch, HostSpacesCapNoTeamScratchByBlock) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  EXPECT_EQ(team_scratch_limit<Host>().block_bytes, 0u);
  EXPECT_FALSE(team_scratch_limit<Host>().lifted);
  EXPECT_EQ(max_team_scratch_bytes<Host>(0, 2), int(Kokkos::TeamPolicy<Host>::scratch_size_max(0)));
}

// Split K on every space: 3 splits (uneven on K = 300), 16 splits (more than most edge shapes
// have slabs: fewer are used), batched products with alpha and beta, and tensor cores where
// the case has them; on GPUs also a block whose padded rows stage as runs. Blocks 1, 2 and 16
// columns wide: the split sum adds the partials up a column or four columns at a time, and 16
// splits take it through more than one round of reads. Consecutive calls reuse the partial
// blocks the previous call left.
KGEMM_CASE_TEST(GemmTest, SplitKEdgeShapesBatchesAlphaBeta) {
  using Space = typename TypeParam::ExecSpace;
  const auto [tm, tn] = micro_tiles().front();
  const auto [tm4, tn4] = micro_tiles()[1];
  const Config three = ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(16).tm(tm).tn(tn).team(small_team<Space>()).ks(3);
  check_edge_shapes<TypeParam>({three, ConfigBuilder().mb(tm).nb(tn).kb(8).tm(tm).tn(tn).team(1).ks(16),
                                ConfigBuilder().mb(4 * tm4).nb(4 * tn4).kb(8).tm(tm4).tn(tn4).team(small_team<Space>()).ks(16)},
                               stages_runs<TypeParam>());
  if (stages_runs<TypeParam>()) check_edge_shapes<TypeParam>({parse_config("mb16_nb16_kb16_tm4_tn4_team16_ks3")}, true);
  for (bool shared : {false, true}) {
    GemmCheck g;
    g.batched = true, g.shared_b = shared, g.batch = 5, g.m = 19, g.n = 23, g.k = 77;
    g.alpha = 1.5f, g.beta = -0.5f, g.config = three;
    run_check<TypeParam>(g);
  }
  if (has_tensor_cores<TypeParam>()) {
    const auto [wm, wn] = warp_tiles().front();
    check_edge_shapes<TypeParam>({ConfigBuilder().mb(2 * wm).nb(wn).kb(16).tm(wm).tn(wn).team(64).family(Family::TensorCore).ks(3)}, true);
  }
}

// Deeper slab pipelines (Config::slab_buffers), where the space stages more than its default number
// of slab buffers (GPUs): every depth with K over fewer, as many and more slabs than buffers,
// split K (each split's own prologue) and several products per team; micro-tiles, and tensor
// cores where the case has them; padded rows staged as runs.
KGEMM_CASE_TEST(GemmTest, DeepSlabPipelines) {
  using Space = typename TypeParam::ExecSpace;
  using Traits = SpaceTraits<Space>;
  if (Traits::max_slab_buffers == Traits::default_slab_buffers) GTEST_SKIP() << Space::name() << " stages one slab buffer";
  const auto [tm, tn] = micro_tiles()[1];
  for (int buffers = Traits::default_slab_buffers + 1; buffers <= Traits::max_slab_buffers; ++buffers) {
    std::vector<Config> configs = {ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(8).tm(tm).tn(tn).team(4).slab_buffers(buffers),
                                   ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(16).tm(tm).tn(tn).team(4).ks(3).slab_buffers(buffers),
                                   ConfigBuilder().mb(tm).nb(tn).kb(8).tm(tm).tn(tn).team(4).bb(4).slab_buffers(buffers)};
    if (has_tensor_cores<TypeParam>()) {
      const auto [wm, wn] = warp_tiles().front();
      configs.push_back(ConfigBuilder().mb(2 * wm).nb(2 * wn).kb(16).tm(wm).tn(wn).team(128).family(Family::TensorCore).slab_buffers(buffers));
      configs.push_back(ConfigBuilder().mb(2 * wm).nb(wn).kb(16).tm(wm).tn(wn).team(64).family(Family::TensorCore).ks(3).slab_buffers(buffers));
    }
    for (const Config& config : configs) check_edge_shapes<TypeParam>({config}, stages_runs<TypeParam>());
  }
}

// Several products per team (Config::bb): batch counts that are not a multiple of bb (the last
// team's spare product teams walk slabs but must not write), odd products, K over several
// slabs with a remainder, a shared B, alpha and beta; one and four micro-tiles per thread,
// and a product team per thread. Tensor cores with two warps' products per team where the
// case has them.
KGEMM_CASE_TEST(GemmTest, SeveralProductsPerTeam) {
  using Space = typename TypeParam::ExecSpace;
  const int team_max = team_size_max<Space>();
  if (team_max < 2) GTEST_SKIP() << Space::name() << " runs teams of one thread";
  // Four threads per product where the team has 16 (GPUs), else one; small blocks keep the
  // products' scratch within every space's limit.
  const int team = std::min(16, team_max), per_product = team >= 16 ? 4 : 1, products = team / per_product;
  std::vector<Config> configs = {ConfigBuilder().mb(4).nb(4 * per_product).kb(8).tm(4).tn(4).team(team).bb(products),
                                 ConfigBuilder().mb(8).nb(8 * per_product).kb(12).tm(4).tn(4).team(team).bb(products),
                                 ConfigBuilder().mb(4).nb(4).kb(8).tm(4).tn(4).team(team).bb(team)};
  if (has_tensor_cores<TypeParam>()) configs.push_back(parse_config("mb32_nb32_kb32_tm32_tn32_team64_bb2_tc"));
  const int shapes[][3] = {{1, 1, 1}, {13, 17, 19}, {8, 8, 8}, {20, 9, 30}};
  for (const Config& config : configs)
    for (const auto& shape : shapes)
      for (bool shared : {false, true}) {
        GemmCheck g;
        g.batched = true, g.shared_b = shared, g.batch = 5, g.m = shape[0], g.n = shape[1], g.k = shape[2];
        g.alpha = 1.5f, g.beta = -0.5f, g.config = config;
        run_check<TypeParam>(g);
        g.batch = 2 * config.bb + 1, g.beta = 0.0f;
        run_check<TypeParam, Kokkos::LayoutLeft>(g);
        g.pad_ab = config.tensor_cores();  // tensor cores: aligned rows, staged as runs
        if (g.pad_ab) run_check<TypeParam>(g);
      }
}

// op(A), op(B) in {N, T}, row- and column-major storage, alpha and beta both in play.
KGEMM_CASE_TEST(GemmTest, TransposesLayoutsAlphaBeta) {
  for (Op op_a : {Op::N, Op::T})
    for (Op op_b : {Op::N, Op::T}) {
      GemmCheck g;
      g.m = 37, g.n = 29, g.k = 41, g.op_a = op_a, g.op_b = op_b, g.alpha = 1.5f, g.beta = -0.5f;
      run_check<TypeParam, Kokkos::LayoutRight>(g);
      run_check<TypeParam, Kokkos::LayoutLeft>(g);
      g.alpha = -2.0f, g.beta = 0.0f;
      run_check<TypeParam, Kokkos::LayoutRight>(g);
    }
}

// A config of every kernel family: each compiled micro-tile (one per team, several per thread),
// a multi-thread team, split K, batched products (own B and a shared one) and several products
// per team where the space's teams have the threads, tensor cores where the case has them.
struct KernelFamily {
  Config config;
  bool batched, shared_b;
};
template <class Case>
std::vector<KernelFamily> every_kernel_family() {
  using Space = typename Case::ExecSpace;
  const int team = small_team<Space>(), odd_kb = kTiledReadsKRuns<Space> ? 12 : 5;
  std::vector<KernelFamily> families;
  for (auto [tm, tn] : micro_tiles_on(!SpaceTraits<Space>::is_gpu)) {
    families.push_back({ConfigBuilder().mb(tm).nb(tn).kb(8).tm(tm).tn(tn).team(1), false, false});
    families.push_back({ConfigBuilder().mb(2 * tm).nb(3 * tn).kb(odd_kb).tm(tm).tn(tn).team(1), false, false});
  }
  const auto [tm, tn] = micro_tiles()[1];
  families.push_back({ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(16).tm(tm).tn(tn).team(team), false, false});
  families.push_back({ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(8).tm(tm).tn(tn).team(team).ks(3), false, false});
  families.push_back({ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(8).tm(tm).tn(tn).team(team).ks(3), true, false});
  families.push_back({ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(8).tm(tm).tn(tn).team(team), true, false});
  families.push_back({ConfigBuilder().mb(2 * tm).nb(2 * tn).kb(8).tm(tm).tn(tn).team(team), true, true});
  if (team_size_max<Space>() >= 2) {
    families.push_back({parse_config("mb4_nb4_kb8_tm4_tn4_team2_bb2"), true, false});
    families.push_back({parse_config("mb4_nb4_kb8_tm4_tn4_team2_bb2"), true, true});
  }
  if (has_tensor_cores<Case>()) {
    const auto [wm, wn] = warp_tiles().front();
    families.push_back({ConfigBuilder().mb(2 * wm).nb(wn).kb(16).tm(wm).tn(wn).team(64).family(Family::TensorCore), false, false});
    families.push_back({ConfigBuilder().mb(2 * wm).nb(wn).kb(16).tm(wm).tn(wn).team(64).family(Family::TensorCore).ks(3), false, false});
    families.push_back({ConfigBuilder().mb(wm).nb(wn).kb(16).tm(wm).tn(wn).team(64).family(Family::TensorCore).bb(2), true, true});
  }
  return families;
}

// Every kernel family in every operand order with alpha and beta; K over several slabs with a
// remainder, odd extents.
KGEMM_CASE_TEST(GemmTest, EveryOrderAlphaBetaEveryKernelFamily) {
  for (const KernelFamily& family : every_kernel_family<TypeParam>())
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T}) {
        GemmCheck g;
        g.batched = family.batched, g.shared_b = family.shared_b, g.batch = family.batched ? 5 : 1;
        g.m = 13, g.n = 11, g.k = 45, g.op_a = op_a, g.op_b = op_b, g.config = family.config;
        g.alpha = 1.5f, g.beta = -0.5f;
        run_check<TypeParam>(g);
        g.alpha = -0.75f, g.beta = 0.0f;
        run_check<TypeParam, Kokkos::LayoutLeft>(g);
      }
}

// K = 0: no slab to multiply, and C = beta C (zero where beta is 0) in every kernel family,
// whatever a team's scratch held from the product before (one runs first to leave sums there).
KGEMM_CASE_TEST(GemmTest, NoDepthScalesCEveryKernelFamily) {
  for (const KernelFamily& family : every_kernel_family<TypeParam>())
    for (float beta : {-0.5f, 0.0f}) {
      GemmCheck g;
      g.batched = family.batched, g.shared_b = family.shared_b, g.batch = family.batched ? 3 : 1;
      g.m = 13, g.n = 11, g.k = 45, g.config = family.config;
      run_check<TypeParam>(g);
      g.k = 0, g.alpha = 1.5f, g.beta = beta;
      run_check<TypeParam>(g);
    }
}

// C a window of a wider matrix, its first column 1, 2 or 4 elements in and rows padded to 8:
// row starts aligned to one, two or four elements, so results are stored element by element,
// in pairs or in runs of four, and nothing either side of the window is touched (the last run
// of a row crosses its right edge). Tensor cores where the case has them.
KGEMM_CASE_TEST(GemmTest, OutputWindowsOfWiderMatrices) {
  std::vector<std::optional<Config>> configs = {std::nullopt};
  if (has_tensor_cores<TypeParam>()) configs.push_back(parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc"));
  for (const auto& config : configs)
    for (int offset : {1, 2, 4}) {
      GemmCheck g;
      g.m = 37, g.n = 45, g.k = 29, g.config = config;
      g.c_window = {offset, (8 - (offset + g.n) % 8) % 8};
      run_check<TypeParam>(g);
      g.batched = true, g.batch = 3, g.alpha = 1.5f, g.beta = -0.5f;
      run_check<TypeParam>(g);
    }
}

// Strided batches, each product its own A and B, or one B shared by all (batch stride 0:
// the convolution case of one weight matrix for every image).
KGEMM_CASE_TEST(GemmTest, BatchedStridedAndSharedOperand) {
  for (bool shared : {false, true}) {
    GemmCheck g;
    g.batched = true, g.shared_b = shared, g.batch = 5, g.m = 19, g.n = 23, g.k = 17;
    run_check<TypeParam, Kokkos::LayoutRight>(g);
    run_check<TypeParam, Kokkos::LayoutLeft>(g);
    g.batch = 1, g.m = 1, g.n = 1, g.k = 1;
    run_check<TypeParam>(g);
  }
}

}  // namespace
}  // namespace kgemm::test
