// The small things every room relies on: the canonical Config and Problem strings, the shape
// catalogue against the source thesis' table, and the clear rejection of bad calls before any
// launch (per space: scratch and team limits are the device's).
#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgemm.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/spaces/error.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"
#include "kgemm/tiled_gemm.hpp"
#include "kgemm/tuner/catalogue.hpp"

namespace kgemm::test {
namespace {

TEST(ConfigString, RoundTripsAndRejectsMalformedText) {
  const Config c = parse_config("mb128_nb64_kb16_tm8_tn4_team256");
  EXPECT_EQ(to_string(c), "mb128_nb64_kb16_tm8_tn4_team256");
  EXPECT_EQ(parse_config(to_string(c)), c);
  const Config tensor_cores = parse_config("mb128_nb64_kb32_tm64_tn32_team128_tc");
  EXPECT_EQ(to_string(tensor_cores), "mb128_nb64_kb32_tm64_tn32_team128_tc");
  EXPECT_EQ(parse_config(to_string(tensor_cores)), tensor_cores);
  // Without _tc, 64x32 would be a thread's micro-tile, and none that large is compiled.
  EXPECT_THROW(parse_config("mb128_nb64_kb32_tm64_tn32_team128"), std::invalid_argument);
  const Config split = parse_config("mb32_nb64_kb32_tm4_tn4_team128_ks8"),
               split_tc = parse_config("mb64_nb64_kb32_tm32_tn32_team128_ks4_tc");
  EXPECT_EQ(to_string(split), "mb32_nb64_kb32_tm4_tn4_team128_ks8");
  EXPECT_EQ(to_string(split_tc), "mb64_nb64_kb32_tm32_tn32_team128_ks4_tc");
  EXPECT_EQ(parse_config(to_string(split)), split);
  EXPECT_EQ(parse_config(to_string(split_tc)), split_tc);
  EXPECT_EQ(parse_config("mb32_nb64_kb32_tm4_tn4_team128_ks1"), (parse_config("mb32_nb64_kb32_tm4_tn4_team128")));
  const Config grouped = parse_config("mb16_nb16_kb16_tm4_tn4_team128_bb8"),
               grouped_tc = parse_config("mb32_nb32_kb32_tm32_tn32_team64_bb2_tc");
  EXPECT_EQ(to_string(grouped), "mb16_nb16_kb16_tm4_tn4_team128_bb8");
  EXPECT_EQ(to_string(grouped_tc), "mb32_nb32_kb32_tm32_tn32_team64_bb2_tc");
  EXPECT_EQ(parse_config(to_string(grouped)), grouped);
  EXPECT_EQ(parse_config(to_string(grouped_tc)), grouped_tc);
  EXPECT_EQ(parse_config("mb16_nb16_kb16_tm4_tn4_team128_ks1_bb8"), grouped);
  const Config deep = parse_config("mb128_nb64_kb32_tm64_tn32_team128_ks4_st3_tc");
  EXPECT_EQ(to_string(deep), "mb128_nb64_kb32_tm64_tn32_team128_ks4_st3_tc");
  EXPECT_EQ(parse_config(to_string(deep)), deep);
  EXPECT_EQ(parse_config("mb128_nb64_kb32_tm64_tn32_team128_st0_tc"), tensor_cores);
  EXPECT_NE(parse_config("mb128_nb64_kb32_tm64_tn32_team128_st2_tc"), tensor_cores);
  const Config warpgroups = parse_config("mb128_nb128_kb32_tm64_tn128_team256_ks2_st3_wg");
  EXPECT_EQ(to_string(warpgroups), "mb128_nb128_kb32_tm64_tn128_team256_ks2_st3_wg");
  EXPECT_EQ(parse_config(to_string(warpgroups)), warpgroups);
  EXPECT_NE(parse_config("mb128_nb128_kb32_tm64_tn64_team512_wg"), parse_config("mb128_nb128_kb32_tm64_tn64_team128_tc"));
  const Config specialized = parse_config("mb128_nb128_kb64_tm64_tn128_team384_st4_ws");
  EXPECT_EQ(to_string(specialized), "mb128_nb128_kb64_tm64_tn128_team384_st4_ws");
  EXPECT_EQ(parse_config(to_string(specialized)), specialized);
  const Config its_warpgroups = ConfigBuilder().mb(128).nb(128).kb(64).tm(64).tn(128).team(384).family(Family::Warpgroup).slab_buffers(4);
  EXPECT_NE(specialized, its_warpgroups);
  for (const char* bad : {"", "mb128", "mb128_nb64_kb16_tm8_tn4", "mb128_nb64_kb16_tm8_tn4_team256_x1",
                          "mbx_nb64_kb16_tm8_tn4_team256", "nb64_mb128_kb16_tm8_tn4_team256", "_tc",
                          "mb128_nb64_kb16_tm8_tn4_team256_tc_tc", "mb128_nb64_kb16_tm8_tn4_tc",
                          "mb128_nb64_kb16_tm8_tn4_team256_ks", "mb128_nb64_kb16_tm8_tn4_team256_ks4_ks4",
                          "mb128_nb64_kb16_tm8_tn4_team256_tc_ks4", "mb128_nb64_kb16_tm8_tn4_team256_ks-2",
                          "mb16_nb16_kb16_tm4_tn4_team128_bb8_ks1", "mb16_nb16_kb16_tm4_tn4_team128_bb8_bb8",
                          "mb16_nb16_kb16_tm4_tn4_team128_bb", "mb16_nb16_kb16_tm4_tn4_team128_st3_bb8",
                          "mb16_nb16_kb16_tm4_tn4_team128_st", "mb128_nb128_kb32_tm64_tn128_team256_tc_wg",
                          "mb128_nb128_kb32_tm64_tn128_team256_wg_tc", "mb128_nb128_kb32_tm64_tn128_team256wg",
                          "mb128_nb128_kb64_tm64_tn128_team384_ws_wg", "mb128_nb128_kb64_tm64_tn128_team384_wg_ws"})
    EXPECT_THROW(parse_config(bad), std::invalid_argument) << "'" << bad << "'";
}

// Values a hostile or careless user writes: each refused with the field, its range or the rule
// broken, never a division by zero, a wrapped integer or a bare "stoi".
TEST(ConfigString, OutOfRangeAndContradictoryFieldsAreRefusedWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"mb64_nb64_kb32_tm0_tn4_team16", "tm must be 1 to 256"},
      {"mb64_nb64_kb32_tm4_tn0_team16", "tn must be 1 to 256"},
      {"mb99999999999_nb64_kb32_tm4_tn4_team16", "'mb99999999999': mb must be 1 to 4096"},
      {"mb64_nb64_kb2147483647_tm4_tn4_team16", "kb must be 1 to 4096"},
      {"mb64_nb64_kb536870912_tm4_tn4_team16", "kb must be 1 to 4096"},
      {"mb64_nb64_kb32_tm4_tn4_team16_ks0", "ks must be 1 to 1024"},
      {"mb64_nb64_kb32_tm4_tn4_team16_st9", "st must be 0 to 8"},
      {"mb64_nb64_kb32_tm4_tn4_team0", "team must be 1 to 65536"},
      {"mb60_nb64_kb32_tm8_tn4_team16", "not a multiple of the micro-tile 8x4"},
      {"mb64_nb64_kb32_tm3_tn4_team16", "micro-tile 3x4 is not a compiled variant"},
      {"mb64_nb64_kb32_tm4_tn4_team6_bb4", "multiple of bb"},
      {"mb64_nb64_kb32_tm4_tn4_team16_ks2_bb2", "do not combine"},
      {"mb64_nb64_kb8_tm32_tn32_team128_tc", "multiple of 16"},
      {"mb128_nb128_kb32_tm64_tn32_team512_wg", "warpgroup tile 64x32 is not a compiled variant; compiled: 64x64 64x128 128x64"},
      {"mb128_nb64_kb48_tm128_tn64_team128_wg", "fp32 warpgroup tile 128x64 reads A's slabs as rows of 16 or 32 floats"},
      {"mb128_nb128_kb16_tm128_tn64_team128_wg", "one 128-thread warpgroup per 128x64 tile: team 256"},
      {"mb128_nb128_kb128_tm64_tn128_team256_wg", "64 k at most"},
      {"mb128_nb128_kb32_tm64_tn128_team128_wg", "one 128-thread warpgroup per 64x128 tile: team 256"},
      {"mb64_nb128_kb32_tm64_tn128_team256_bb2_wg", "one product per team"},
      {"mb128_nb128_kb64_tm64_tn128_team256_ws", "one 128-thread warpgroup per 64x128 tile and the producer warpgroup: team 384"},
      {"mb128_nb64_kb32_tm128_tn64_team256_ws", "the warp-specialized kernel (_ws) multiplies fp16 data; its tiles are 64x64 64x128"},
      {"mb128_nb128_kb32_tm64_tn128_team384_ws", "rows of 64 fp16 (the 128-byte swizzle); make kb 64"},
  };
  for (const auto& [text, reason] : cases) {
    try {
      parse_config(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(text), std::string::npos) << message;
      EXPECT_NE(message.find(reason), std::string::npos) << message << "\nmissing: " << reason;
    }
  }
  EXPECT_EQ(why_malformed(Config{}), "");
  EXPECT_NE(why_malformed(ConfigBuilder().mb(64).nb(64).kb(32).tm(4).tn(0).team(16)), "");
  const Config deep_warpgroup = ConfigBuilder().mb(128).nb(128).kb(128).tm(64).tn(128).team(256).family(Family::Warpgroup);
  EXPECT_NE(why_malformed(deep_warpgroup).find("64 k at most"), std::string::npos);
}

TEST(ProblemKey, HugeOrMalformedNumbersAreRefused) {
  for (const char* bad : {"gemm_f32_nn_m99999999999_n1_k1_b1", "gemm_f32_nn_m1_n1_k1_b0", "gemm_f32_nn_m-1_n1_k1_b1",
                          "gemm_f32_nn_m1_n1_k1_b1_", "gemm_f32_nn_m1_n1_k1_b1x", "gemm_f32_nn_m 1_n1_k1_b1",
                          "gemm_f32_nn_m2147483647_n2147483647_k2147483647_b2147483647"})
    EXPECT_THROW(parse_problem(bad), std::invalid_argument) << bad;
  EXPECT_EQ(parse_problem("gemm_f32_nn_m2147483647_n1_k1_b1").m, INT_MAX);
}

TEST(ProblemKey, RoundTripsAndRejectsMalformedText) {
  Problem p;
  p.kernel = Kernel::Batched, p.dtype = DType::F16, p.b_order = 't', p.m = 3136, p.n = 64, p.k = 576, p.batch = 128;
  EXPECT_EQ(to_string(p), "batched_f16_nt_m3136_n64_k576_b128");
  EXPECT_EQ(parse_problem(to_string(p)), p);
  p.kernel = Kernel::SharedB;
  EXPECT_EQ(to_string(p), "sharedb_f16_nt_m3136_n64_k576_b128");
  EXPECT_EQ(parse_problem(to_string(p)), p);
  EXPECT_THROW(parse_problem("conv_f32_nn_m1_n1_k1_b1"), std::invalid_argument);
  EXPECT_THROW(parse_problem("gemm_f64_nn_m1_n1_k1_b1"), std::invalid_argument);
  EXPECT_THROW(parse_problem("gemm_f32_nn_m1_n1_k1"), std::invalid_argument);
}

// A batched call is keyed as products with their own B, or as products sharing one B when B's
// batch stride is 0 (tuned apart: the memory traffic differs).
TEST(ProblemKey, BatchedCallsAreKeyedByWhetherTheyShareB) {
  Kokkos::View<float***, Kokkos::HostSpace> A("A", 4, 6, 5), B("B", 4, 5, 7), C("C", 4, 6, 7);
  Kokkos::View<float**, Kokkos::HostSpace> B1("B1", 5, 7), C1("C1", 6, 7);
  EXPECT_EQ(problem_of(gemm_args(Op::N, Op::N, 1.0f, A, B, 0.0f, C), true).kernel, Kernel::Batched);
  EXPECT_EQ(problem_of(gemm_args(Op::N, Op::N, 1.0f, A, B1, 0.0f, C), true).kernel, Kernel::SharedB);
  EXPECT_EQ(to_string(problem_of(gemm_args(Op::N, Op::N, 1.0f, A, B1, 0.0f, C), true)), "sharedb_f32_nn_m6_n7_k5_b4");
  EXPECT_EQ(problem_of(gemm_args(Op::N, Op::N, 1.0f, Kokkos::subview(A, 0, Kokkos::ALL, Kokkos::ALL), B1, 0.0f, C1), false).kernel,
            Kernel::Gemm);
}

// Section 5.2.1 of the source thesis (../shared/seeds/003_*.txt): the 20 distinct im2col GEMMs
// of ResNet-50 v1.5 at 224x224, batch 1, as (M, N, K) in the thesis' order.
TEST(Catalogue, ReproducesTheThesisResNet50Table) {
  const std::vector<std::array<int, 3>> thesis = {
      {12544, 64, 147}, {3136, 64, 64},    {3136, 64, 576},   {3136, 256, 64},   {3136, 64, 256},
      {3136, 128, 256}, {784, 128, 1152},  {784, 512, 128},   {784, 512, 256},   {784, 128, 512},
      {784, 256, 512},  {196, 256, 2304},  {196, 1024, 256},  {196, 1024, 512},  {196, 256, 1024},
      {196, 512, 1024}, {49, 512, 4608},   {49, 2048, 512},   {49, 2048, 1024},  {49, 512, 2048}};
  const auto shapes = resnet_gemm_shapes("resnet50", 224, 1);
  ASSERT_EQ(shapes.size(), thesis.size());
  for (std::size_t i = 0; i < thesis.size(); ++i) {
    EXPECT_EQ((std::array<int, 3>{shapes[i].m, shapes[i].n, shapes[i].k}), thesis[i]) << "row " << i + 1;
  }
  int convs = 0;
  for (const auto& s : shapes) convs += s.count;
  EXPECT_EQ(convs, 53);  // conv1 + 16 bottlenecks x 3 + 4 downsamples
}

TEST(Catalogue, ScalesWithBatchAndImageAndCoversOtherModels) {
  const auto base = resnet_gemm_shapes("resnet50", 224, 1);
  const auto batched = resnet_gemm_shapes("resnet50", 224, 128);
  ASSERT_EQ(base.size(), batched.size());
  for (std::size_t i = 0; i < base.size(); ++i) EXPECT_EQ(batched[i].m, 128 * base[i].m);
  EXPECT_EQ(resnet_gemm_shapes("resnet50", 512, 1)[0].m, 256 * 256);  // conv1: stride 2, pad 3
  int convs18 = 0, convs34 = 0;
  for (const auto& s : resnet_gemm_shapes("resnet18")) convs18 += s.count;
  for (const auto& s : resnet_gemm_shapes("resnet34")) convs34 += s.count;
  EXPECT_EQ(convs18, 20);  // 1 + 16 + 3 downsamples
  EXPECT_EQ(convs34, 36);  // 1 + 32 + 3 downsamples
  EXPECT_THROW(resnet_gemm_shapes("resnet101"), std::invalid_argument);
  EXPECT_THROW(resnet_gemm_shapes("resnet50", 0, 1), std::invalid_argument);
}

// Runs f and expects std::invalid_argument whose message contains every fragment.
template <class F>
void expect_rejected(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    for (const auto& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what() << "\nmissing: " << fragment;
  }
}

TEST(Validation, BadCallsAreRejectedBeforeLaunchWithTheReasonOnEverySpace) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    SCOPED_TRACE(Space::name());
    using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
    Matrix A("A", 8, 5), B("B", 5, 6), C("C", 8, 6), wrong("wrong", 4, 6);
    auto with = [&](const Config& c) {
      Options o;
      o.config = c;
      return o;
    };
    expect_rejected([&] { gemm(A, B, wrong); }, {"shape mismatch", "C is 4x6"});
    expect_rejected([&] { gemm(A, B, C, with(parse_config("mb4096_nb4096_kb256_tm8_tn8_team1"))); },
                    {"team scratch", "shrink mb, nb or kb"});
    expect_rejected([&] { gemm(A, B, C, with(parse_config("mb64_nb64_kb8_tm4_tn4_team2048"))); },
                    {"team size 2048", "maximum"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(64).nb(64).kb(8).tm(4).tn(4).team(100000))); },
                    {"team = 100000 is outside 1 to 65536"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(30).nb(64).kb(8).tm(4).tn(4).team(1))); },
                    {"not a multiple of the micro-tile"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(60).nb(64).kb(8).tm(3).tn(4).team(1))); },
                    {"not a compiled variant", "8x8"});
    if (SpaceTraits<Space>::is_gpu) {
      using Host = HostTiles::Default;
      expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(2 * Host::tm).nb(2 * Host::tn).kb(8).tm(Host::tm).tn(Host::tn).team(8))); },
                      {"micro-tile " + dims(Host::tm, Host::tn), "host spaces only"});
    }
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(64).nb(64).kb(0).tm(4).tn(4).team(1))); },
                    {"kb = 0 is outside 1 to 4096"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(64).nb(64).kb(8).tm(0).tn(4).team(1))); },
                    {"tm = 0 is outside"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(64).nb(64).kb(8).tm(4).tn(4).team(1).ks(0))); },
                    {"ks = 0 is outside 1 to 1024"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(64).nb(64).kb(8).tm(4).tn(4).team(1).bb(0))); },
                    {"bb = 0 is outside 1 to 1024"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(64).nb(64).kb(INT_MAX).tm(4).tn(4).team(1))); },
                    {"kb = 2147483647 is outside"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(16).nb(16).kb(8).tm(4).tn(4).team(6).bb(4))); },
                    {"team 6", "bb = 4", "multiple of bb"});
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(16).nb(16).kb(8).tm(4).tn(4).team(32).ks(2).bb(2))); },
                    {"(bb) and split K (ks) do not combine"});
    using Traits = SpaceTraits<Space>;
    const int too_deep = Traits::max_slab_buffers + 1;
    expect_rejected([&] { gemm(A, B, C, with(ConfigBuilder().mb(16).nb(16).kb(8).tm(4).tn(4).team(1).slab_buffers(too_deep))); },
                    {"_st" + std::to_string(too_deep), Traits::max_slab_buffers > 1 ? "slab buffers" : "drop _st"});
    if (kTiledReadsKRuns<Space>)
      expect_rejected([&] { gemm(A, B, C, with(parse_config("mb64_nb64_kb6_tm4_tn4_team256"))); },
                      {"four k at a time", "multiple of 4"});
    Options fp16_accumulation;
    fp16_accumulation.accum = Accum::F16;
    expect_rejected([&] { gemm(A, B, C, fp16_accumulation); }, {"fp16 accumulation", "fp32 data"});
    // Tensor-core configs: fp32 accumulation on a space that has them, one warp per tile; fp32
    // data where the device has TF32 tensor cores (3xTF32).
    const Config tc = parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc");
    if (TensorCores<Space>::on_device() && !TensorCores<Space>::tf32_on_device())
      expect_rejected([&] { gemm(A, B, C, with(tc)); }, {"3xTF32", "8.0 or newer", "drop _tc"});
    if (TensorCores<Space>::on_device()) {
      using Half = Kokkos::View<half**, Kokkos::LayoutRight, typename Space::memory_space>;
      Half Ah("Ah", 8, 5), Bh("Bh", 5, 6), Ch("Ch", 8, 6);
      Options tc_fp16_accumulation = with(tc);
      tc_fp16_accumulation.accum = Accum::F16;
      expect_rejected([&] { gemm(Ah, Bh, Ch, tc_fp16_accumulation); }, {"accumulate in fp32", "drop _tc"});
      expect_rejected([&] { gemm(Ah, Bh, Ch, with(ConfigBuilder().mb(64).nb(64).kb(8).tm(32).tn(32).team(128).family(Family::TensorCore))); },
                      {"multiple of 16"});
      expect_rejected([&] { gemm(Ah, Bh, Ch, with(ConfigBuilder().mb(64).nb(64).kb(32).tm(32).tn(32).team(64).family(Family::TensorCore))); },
                      {"one 32-thread warp", "team 128"});
      expect_rejected([&] { gemm(Ah, Bh, Ch, with(ConfigBuilder().mb(32).nb(32).kb(32).tm(32).tn(32).team(32).family(Family::TensorCore).bb(2))); },
                      {"one 32-thread warp", "team 64 for this block and bb"});
      expect_rejected([&] { gemm(Ah, Bh, Ch, with(ConfigBuilder().mb(64).nb(64).kb(32).tm(16).tn(16).team(512).family(Family::TensorCore))); },
                      {"tensor-core warp tile", "32x32"});
    } else {
      expect_rejected([&] { gemm(A, B, C, with(tc)); }, {"uses tensor cores", "drop _tc"});
    }
    // Warpgroup configs: each tile for its own dtype's data, and a build and GPU with sm_90a code
    // (else the reason says so).
    const Config wg = parse_config("mb128_nb128_kb32_tm64_tn128_team256_wg"),
                 wg_fp32 = parse_config("mb128_nb64_kb16_tm128_tn64_team128_wg");
    const bool cores = TensorCores<Space>::available;
    expect_rejected([&] { gemm(A, B, C, with(wg)); },
                    {cores ? "warpgroup tile 64x128 multiplies fp16 data; fp32 data takes the warpgroup tiles 128x64"
                           : "uses tensor cores", cores ? "" : "drop _wg"});
    if (cores) {
      using Half = Kokkos::View<half**, Kokkos::LayoutRight, typename Space::memory_space>;
      Half Ah("Ah", 130, 40), Bh("Bh", 40, 96), Bt("Bt", 96, 40), Ch("Ch", 130, 96);
      expect_rejected([&] { gemm(Space(), Op::N, Op::N, 1.0f, Ah, Bh, 0.0f, Ch, with(wg_fp32)); },
                      {"warpgroup tile 128x64 multiplies fp32 data; fp16 data takes the warpgroup tiles 64x64 64x128"});
      const std::string why = why_illegal<Space>(Problem{Kernel::Gemm, DType::F16, 'n', 'n', 130, 96, 40, 1}, wg);
      if (why.find("sm_90a") == std::string::npos) {  // this build and GPU run warpgroup configs
        expect_rejected([&] { gemm(Space(), Op::N, Op::T, 1.0f, Ah, Bt, 0.0f, Ch, with(wg)); }, {"row-major", "use _tc"});
        // fp32: A is staged as runs (row-major, rows a multiple of 4 floats); B is read as it lies.
        Matrix At("At", 40, 130), Bf("Bf", 40, 96), Cf("Cf", 130, 96);
        expect_rejected([&] { gemm(Space(), Op::T, Op::N, 1.0f, At, Bf, 0.0f, Cf, with(wg_fp32)); }, {"row-major", "use _tc"});
      }
    }
    Kokkos::View<float***, Kokkos::LayoutRight, typename Space::memory_space> A3("A3", 3, 8, 5), C3("C3", 2, 8, 6);
    expect_rejected([&] { batched_gemm(space, Op::N, Op::N, 1.0f, A3, B, 0.0f, C3); }, {"batch counts differ"});
  });
}

// Counts the kernels keep in int (teams, split K's partial elements) are checked in 64-bit
// arithmetic before a launch; no allocation is needed to ask.
TEST(Validation, CallsWhoseCountsWouldOverflowAreRefused) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    SCOPED_TRACE(Space::name());
    const Problem huge{Kernel::Gemm, DType::F32, 'n', 'n', INT_MAX, INT_MAX, INT_MAX, 1};
    const std::string why = why_illegal<Space>(huge, parse_config("mb1_nb1_kb4_tm1_tn1_team1"));
    EXPECT_NE(why.find("teams"), std::string::npos) << why;
    EXPECT_NE(why.find("more than the kernels count"), std::string::npos) << why;
    Problem split = huge;
    split.m = split.n = 1 << 16;
    EXPECT_NE(why_illegal<Space>(split, parse_config("mb64_nb64_kb32_tm4_tn4_team16_ks4")).find("partial elements"),
              std::string::npos);
    EXPECT_EQ(why_illegal<Space>(Problem{Kernel::Gemm, DType::F32, 'n', 'n', INT_MAX, 1, INT_MAX, 1},
                                 parse_config("mb64_nb64_kb32_tm4_tn4_team1")).find("more than the kernels count"), std::string::npos)
        << "K near INT_MAX must not overflow the slab count";
  });
}

TEST(Errors, EachKindIsCaughtByItsStandardBaseAndTheFamilyWithOneMessage) {
  try {
    parse_config("mb0");
    ADD_FAILURE() << "accepted 'mb0'";
  } catch (const std::invalid_argument& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    ASSERT_NE(error, nullptr) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("kgemm: 'mb0' is not a config string: ", 0), 0u) << e.what();
    EXPECT_EQ("kgemm: " + std::string(error->reason()), e.what());
    EXPECT_STREQ(reason_of(e), error->reason());
  }
  EXPECT_THROW(parse_dtype("fp64"), InvalidArgument);
  EXPECT_THROW(parse_dtype("fp64"), std::logic_error);
  EXPECT_THROW(parse_dtype("fp64"), Error);
  EXPECT_THROW(parse_dtype("fp64"), std::exception);  // one std::exception base: not ambiguous

  const RuntimeError failure("the disk is full");
  EXPECT_STREQ(failure.what(), "kgemm: the disk is full");
  EXPECT_STREQ(failure.reason(), "the disk is full");
  const RuntimeError copy = failure;
  EXPECT_STREQ(copy.reason(), "the disk is full");
  EXPECT_THROW(throw failure, std::runtime_error);
  const std::runtime_error theirs("not kgemm's");
  EXPECT_STREQ(reason_of(theirs), "not kgemm's");
}

TEST(Validation, UnknownOrDisabledSpaceNamesAreRejected) {
  expect_rejected([] { with_space("hip", [](auto) {}); }, {"hip"});
  with_space("SERIAL", [](auto space) { EXPECT_STREQ(decltype(space)::name(), "Serial"); });
}

}  // namespace
}  // namespace kgemm::test
