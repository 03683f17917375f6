// The tuner's check against kernels with planted faults: a correct kernel's output corrupted
// the way a real bug would leave it (a dropped k term, a skipped K slab, two blocks swapped, a
// stale split-K partial), on the long-K ResNet layers where a loose tolerance lets small faults
// through; every element checked and, as on a problem too large for that, sampled ones only. Also
// every problem kind and operand order passes with alpha and beta in play, and the error bound
// itself on hand-made cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/tuner/error_bound.hpp"
#include "kgemm/tuner/problem_bench.hpp"
#include "kgemm/tuner/search_space.hpp"

namespace kgemm::test {
namespace {

enum class Fault { None, DroppedKTerm, SkippedSlab, SwappedBlocks, StaleSplitPartial };

std::string to_string(Fault fault) {
  switch (fault) {
    case Fault::None: return "none";
    case Fault::DroppedKTerm: return "dropped k term";
    case Fault::SkippedSlab: return "skipped K slab in one block";
    case Fault::SwappedBlocks: return "two blocks swapped";
    case Fault::StaleSplitPartial: return "stale split-K partial in one block";
  }
  return "";
}

// The faulty kernel's geometry: blocks of 16 x 64, slabs 32 deep, K in 4 splits.
constexpr int kBlockRows = 16, kBlockCols = 64, kSlab = 32, kSplits = 4;

struct Block {
  int row, col;    // first row and column
  int rows, cols;  // extents (cut at C's edges)
};

// A correct kernel whose output is then corrupted as `fault` would leave it, in C's own
// precision: C(b, i, j) -= alpha * (the terms the fault loses), + alpha * (what it adds).
template <class Space, class Scalar>
class FaultyKernelBench : public ProblemBench<Space, Scalar> {
  using Base = ProblemBench<Space, Scalar>;

 public:
  FaultyKernelBench(const Space& space, const Problem& problem, CheckPolicy check)
      : Base(space, problem, fresh_seed(), TimingPolicy{0, 1, 1e9}, check), problem_(problem) {}

  Fault fault = Fault::None;

  void run(const Config& config, float alpha, float beta) const override {
    Base::run(config, alpha, beta);
    if (fault == Fault::None) return;
    auto C = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), this->output());
    plant(C, alpha);
    Kokkos::deep_copy(this->output(), C);
  }

 private:
  static std::uint64_t fresh_seed() {
    static std::uint64_t seed = std::random_device()();
    return ++seed;
  }

  // sum over k in [k0, k1) of op(A)(b, i, k) op(B)(b, k, j).
  double terms(int b, int i, int j, int k0, int k1) const {
    double sum = 0;
    for (int k = k0; k < k1; ++k) sum += this->input_a(b, i, k) * this->input_b(b, k, j);
    return sum;
  }

  template <class HostC, class F>
  void add_to_block(const HostC& C, Block block, F&& delta) const {
    for (int i = block.row; i < std::min(block.row + block.rows, problem_.m); ++i)
      for (int j = block.col; j < std::min(block.col + block.cols, problem_.n); ++j)
        C(0, i, j) = Scalar(float(C(0, i, j)) + float(delta(i, j)));
  }

  template <class HostC>
  void plant(const HostC& C, float alpha) const {
    const int k = problem_.k;
    // Faults confined to one block hit the second block of the second block row: inside C on
    // the long-K layers, away from its edges.
    const Block hit{kBlockRows, kBlockCols, kBlockRows, kBlockCols}, other{0, 0, kBlockRows, kBlockCols};
    switch (fault) {
      case Fault::None: return;
      case Fault::DroppedKTerm: {  // every element misses one k term
        // The k where row 0 of op(A) is largest: row 0 is always checked, and its dropped terms
        // |a b| then exceed the error bound (about 0.6 on 49x512x4608) wherever |b| does, on
        // about a third of the columns. With k = K - 1 on fresh inputs, all checked rows'
        // a_ik were sometimes small enough for the fault to pass (1 - 2 % of runs).
        int dropped = 0;
        for (int kk = 1; kk < k; ++kk)
          if (std::abs(this->input_a(0, 0, kk)) > std::abs(this->input_a(0, 0, dropped))) dropped = kk;
        add_to_block(C, {0, 0, problem_.m, problem_.n},
                     [&](int i, int j) { return -alpha * terms(0, i, j, dropped, dropped + 1); });
        return;
      }
      case Fault::SkippedSlab: {  // one block misses the middle slab
        const int k0 = (k / kSlab / 2) * kSlab;
        add_to_block(C, hit, [&](int i, int j) { return -alpha * terms(0, i, j, k0, k0 + kSlab); });
        return;
      }
      case Fault::SwappedBlocks:  // each block written in the other's place
        for (int i = 0; i < kBlockRows; ++i)
          for (int j = 0; j < kBlockCols; ++j) std::swap(C(0, hit.row + i, hit.col + j), C(0, other.row + i, other.col + j));
        return;
      case Fault::StaleSplitPartial: {
        // One block's third split reads a partial block another block left in the workspace
        // (a previous call with another grid): that block's sum over the same K range.
        const int slabs = (k + kSlab - 1) / kSlab, per_split = (slabs + kSplits - 1) / kSplits;
        const int k0 = 2 * per_split * kSlab, k1 = std::min(k, 3 * per_split * kSlab);
        add_to_block(C, hit, [&](int i, int j) {
          const int i_other = other.row + i - hit.row, j_other = other.col + j - hit.col;
          return alpha * (terms(0, i_other, j_other, k0, k1) - terms(0, i, j, k0, k1));
        });
        return;
      }
    }
  }

  Problem problem_;
};

Problem long_k_layer(DType dtype, int m, int n, int k) {
  Problem p;
  p.dtype = dtype, p.m = m, p.n = n, p.k = k;
  return p;
}

// The correct kernel passes; every fault is refused by measure (alpha 1, beta 0) and by the
// check with alpha and beta.
template <class Space, class Scalar>
void expect_faults_refused(const Problem& problem, CheckPolicy check) {
  const Space space;
  SCOPED_TRACE(std::string(Space::name()) + " " + kgemm::to_string(problem));
  FaultyKernelBench<Space, Scalar> bench(space, problem, check);
  const Config config = TuningPolicy<Space>::default_config(problem.dtype);
  const Measurement good = bench.measure(config);
  EXPECT_TRUE(good.correct) << good.note;
  EXPECT_EQ(bench.wrong_result(config, -1.5f, 0.5f), "");
  for (Fault fault : {Fault::DroppedKTerm, Fault::SkippedSlab, Fault::SwappedBlocks, Fault::StaleSplitPartial}) {
    SCOPED_TRACE(to_string(fault));
    bench.fault = fault;
    const Measurement bad = bench.measure(config);
    EXPECT_FALSE(bad.correct);
    EXPECT_NE(bad.note.find("out of bounds"), std::string::npos) << bad.note;
    EXPECT_NE(bench.wrong_result(config, -1.5f, 0.5f), "");
  }
}

TEST(PlantedFaults, AreRefusedOnLongKLayersCheckedEverywhere) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    for (DType dtype : {DType::F32, DType::F16}) {
      for (const Problem& p : {long_k_layer(dtype, 49, 512, 4608), long_k_layer(dtype, 196, 256, 2304)}) {
        if (dtype == DType::F32)
          expect_faults_refused<Space, float>(p, {});
        else
          expect_faults_refused<Space, half>(p, {});
      }
    }
  });
}

// With a budget below the problem, only every seventh row and column and the last are checked;
// the faults confined to one block are still seen.
TEST(PlantedFaults, AreRefusedOnLongKLayersCheckedOnSampledElements) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    for (const Problem& p : {long_k_layer(DType::F32, 49, 512, 4608), long_k_layer(DType::F32, 196, 256, 2304)})
      expect_faults_refused<Space, float>(p, CheckPolicy{0});
  });
}

// Sampled elements: every 8 x 8 block of every product holds one, and the last row and column
// of each are checked.
TEST(CheckedElements, SampledOnesMeetEveryBlockOfEveryProduct) {
  Problem p;
  p.kernel = Kernel::Batched, p.m = 61, p.n = 37, p.k = 3, p.batch = 3;
  using Host = Kokkos::DefaultHostExecutionSpace;
  const ProblemBench<Host, float> sampled(Host(), p, 1, {}, CheckPolicy{0});
  const std::set<int> rows(sampled.checked_rows().begin(), sampled.checked_rows().end());
  const std::set<int> cols(sampled.checked_cols().begin(), sampled.checked_cols().end());
  const auto meets = [](const std::set<int>& checked, int first, int end) {
    return checked.lower_bound(first) != checked.lower_bound(end);
  };
  EXPECT_TRUE(cols.count(p.n - 1));
  for (int first = 0; first < p.n; first += 8) EXPECT_TRUE(meets(cols, first, first + 8)) << "columns " << first << "+";
  for (int b = 0; b < p.batch; ++b) {
    EXPECT_TRUE(rows.count(b * p.m + p.m - 1)) << "product " << b;
    for (int first = 0; first < p.m; first += 8)
      EXPECT_TRUE(meets(rows, b * p.m + first, b * p.m + std::min(first + 8, p.m))) << "product " << b << " rows " << first << "+";
  }
  EXPECT_LE(rows.size(), std::size_t(p.batch * (p.m / kCheckedStride + 2)));
  EXPECT_LE(cols.size(), std::size_t(p.n / kCheckedStride + 2));
  const ProblemBench<Host, float> full(Host(), p, 1);
  EXPECT_EQ(full.checked_rows().size(), std::size_t(p.batch * p.m));
  EXPECT_EQ(full.checked_cols().size(), std::size_t(p.n));
}

// Every kernel kind in every operand order passes the check with alpha and beta, with the
// first candidates of each space (split K, products per team where the space has them).
TEST(ProblemBench, CorrectKernelsPassInEveryOrderWithAlphaAndBeta) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    for (Kernel kernel : {Kernel::Gemm, Kernel::Batched, Kernel::SharedB})
      for (char a_order : {'n', 't'})
        for (char b_order : {'n', 't'}) {
          Problem p;
          p.kernel = kernel, p.a_order = a_order, p.b_order = b_order;
          p.m = 37, p.n = 29, p.k = 131, p.batch = kernel == Kernel::Gemm ? 1 : 3;
          SCOPED_TRACE(std::string(Space::name()) + " " + kgemm::to_string(p));
          const ProblemBench<Space, float> bench(space, p, 5);
          const auto candidates = candidate_configs<Space>(p);
          ASSERT_GE(candidates.size(), 2u);
          for (std::size_t c = 0; c < 2; ++c) {
            EXPECT_EQ(bench.wrong_result(candidates[c]), "") << to_string(candidates[c]);
            EXPECT_EQ(bench.wrong_result(candidates[c], 0.75f, -1.25f), "") << to_string(candidates[c]);
          }
        }
  });
}

// The bound on hand-made cases: first order c k u |A||B| for fp32; fp16 outputs add their own
// rounding of the result, not of |A||B|; alpha scales the sum's error, beta C0 adds roundings.
TEST(ErrorBound, GrowsWithKAndTheOutputRoundingAndAlphaBeta) {
  const ErrorBound f32{DType::F32, DType::F32, 1000};
  EXPECT_NEAR(f32(0.0, 100.0, 1.0, 0.0), 2 * 1000 * 0x1p-24 * 100.0, 0.01 * 2 * 1000 * 0x1p-24 * 100.0);
  const ErrorBound f16{DType::F16, DType::F32, 1000};
  EXPECT_NEAR(f16(10.0, 100.0, 1.0, 0.0) - f32(10.0, 100.0, 1.0, 0.0), 0x1p-11 * 10.0, 1e-4);
  EXPECT_NEAR(f32(0.0, 100.0, -3.0, 0.0), 3 * f32(0.0, 100.0, 1.0, 0.0), 1e-6);
  EXPECT_GT(f32(0.0, 100.0, 1.0, 50.0), f32(0.0, 100.0, 1.0, 0.0) + 50 * 0x1p-24);
  const ErrorBound acc16{DType::F16, DType::F16, 64};
  EXPECT_GT(acc16(0.0, 16.0, 1.0, 0.0), 2 * 64 * 0x1p-11 * 16.0);
  // One product of the 49x512x4608 layer (|a b| about 1/4 on average, up to 1) exceeds the fp32
  // bound on an element of average magnitude sum |a b| = K / 4.
  const ErrorBound layer{DType::F32, DType::F32, 4608};
  EXPECT_LT(layer(0.0, 4608 / 4.0, 1.0, 0.0), 0.7);
}

// 3xTF32's products: the mma.sync kernels split both operands by rounding; the fp32 warpgroup
// kernel's A is truncated by the tensor cores, which loosens each product's bound by 4.001 * 2^-22
// |a b|. fp16 data is never split.
TEST(ErrorBound, SplitTf32ProductsFollowTheKernelsSplit) {
  const Config simt = parse_config("mb128_nb64_kb16_tm8_tn8_team128"),
               tc = parse_config("mb128_nb64_kb16_tm64_tn32_team128_tc");
  const Config wg_fp32 = parse_config("mb128_nb64_kb16_tm128_tn64_team128_wg"),
               wg_fp16 = parse_config("mb128_nb128_kb64_tm64_tn128_team256_wg");
  EXPECT_EQ(ErrorBound::of_call(DType::F32, Accum::F32, 8, simt).products, Products::Rounded);
  EXPECT_EQ(ErrorBound::of_call(DType::F32, Accum::F32, 8, tc).products, Products::SplitTf32);
  EXPECT_EQ(ErrorBound::of_call(DType::F32, Accum::F32, 8, wg_fp32).products, Products::SplitTf32TruncatedA);
  EXPECT_EQ(ErrorBound::of_call(DType::F16, Accum::F32, 8, wg_fp16).products, Products::Rounded);
  const auto bound = [](const Config& c) { return ErrorBound::of_call(DType::F32, Accum::F32, 1, c)(0.0, 1.0, 1.0, 0.0); };
  EXPECT_NEAR(bound(wg_fp32) - bound(tc), 4.001 * 0x1p-22, 1e-3 * 0x1p-22);
  EXPECT_GT(bound(tc), bound(simt));
}

}  // namespace
}  // namespace kgemm::test
