#pragma once
// Measures one config on one problem, the way the autotuner needs it: operands allocated once
// with random inputs, then per config a correctness check and only then a timing (warm-up,
// repetitions timed as the benchmarks time a call (time_calls), median; re-measured with more
// repetitions when the spread is large).
// The check, against fp64 references computed once per problem: the output is poisoned with
// NaN first and every element must come back finite; every row's checksum C x (x a random
// +-[0.5, 1] vector, Freivalds-style) must match A (B x); and sampled rows, always including
// the first and the last, must match element by element.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kgemm.hpp"
#include "kgemm/fill.hpp"
#include "kgemm/tuner/hashed_reference.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/timing.hpp"

namespace kgemm {

struct TimingPolicy {
  int warmup = 2;
  int reps = 7;
  double max_spread = 0.10;  // re-measure (4x the repetitions) above this interquartile spread
};

// Largest error of fp32-accumulated output relative to sum_k |a_ik b_kj| that is still right:
// a few roundings per term for fp32, the fp16 output rounding for fp16 data. Wrong indexing
// or a missed slab gives errors of order 1.
inline double correctness_tolerance(DType dtype, int k) {
  return dtype == DType::F32 ? 4.0 * (k + 2) * 0x1p-24 : 4.0 * 0x1p-11 + 4.0 * (k + 2) * 0x1p-24;
}

namespace detail {

// Device-side parts of the check; free functions because CUDA lambdas may not live in
// private members.
template <class ExecSpace, class View>
std::size_t count_not_finite(const ExecSpace& space, const View& v) {
  const auto* data = v.data();
  std::size_t count = 0;
  Kokkos::parallel_reduce(
      "kgemm::count_not_finite", Kokkos::RangePolicy<ExecSpace>(space, 0, v.span()),
      KOKKOS_LAMBDA(std::size_t i, std::size_t & n) {
        const float x = float(data[i]);
        if (!(x - x == 0.0f)) ++n;  // NaN or infinite
      },
      count);
  return count;
}

// sums(b * m + i) = sum_j C(b, i, j) x(j), in fp64.
template <class ExecSpace, class Matrices, class Vector, class Sums>
void row_checksums(const ExecSpace& space, const Matrices& C, const Vector& x, const Sums& sums) {
  const int m = int(C.extent(1)), n = int(C.extent(2));
  Kokkos::parallel_for(
      "kgemm::row_checksums", Kokkos::RangePolicy<ExecSpace>(space, 0, int(C.extent(0)) * m), KOKKOS_LAMBDA(int row) {
        double sum = 0;
        for (int j = 0; j < n; ++j) sum += double(float(C(row / m, row % m, j))) * double(x(j));
        sums(row) = sum;
      });
}

}  // namespace detail

template <class ExecSpace, class Scalar>
class ProblemBench {
  using Memory = typename ExecSpace::memory_space;
  using Matrices = Kokkos::View<Scalar***, Kokkos::LayoutRight, Memory>;  // (batch, rows, cols)

 public:
  // Gemm: A m x k, B k x n, C m x n. Batched: `batch` of each. SharedB: `batch` A and C, one B
  // shared by all (the convolution case). All in the 'nn' order.
  ProblemBench(const ExecSpace& space, const Problem& problem, std::uint64_t seed, TimingPolicy timing = {})
      : space_(space), problem_(problem), timing_(timing), seed_a_(2 * seed + 1), seed_b_(2 * seed + 2),
        A_("A", problem.batch, problem.m, problem.k),
        B_("B", problem.kernel == Kernel::Batched ? problem.batch : 1, problem.k, problem.n),
        C_("C", problem.batch, problem.m, problem.n), x_("x", problem.n), row_sums_("C x", problem.batch * problem.m) {
    fill_uniform(A_, seed_a_);
    fill_uniform(B_, seed_b_);
    sample_rows_ = sample_rows(problem.batch * problem.m, 16, seed);
    prepare_checksums(seed);
  }

  virtual ~ProblemBench() = default;

  // One call of the kernel with `config` (virtual: tests substitute a broken kernel).
  virtual void run(const Config& config) const {
    Options options;
    options.config = config;
    const auto all = Kokkos::ALL;
    if (problem_.kernel == Kernel::Batched)
      batched_gemm(space_, Op::N, Op::N, 1.0f, A_, B_, 0.0f, C_, options);
    else if (problem_.kernel == Kernel::SharedB)
      batched_gemm(space_, Op::N, Op::N, 1.0f, A_, Kokkos::subview(B_, 0, all, all), 0.0f, C_, options);
    else
      gemm(space_, Op::N, Op::N, 1.0f, Kokkos::subview(A_, 0, all, all), Kokkos::subview(B_, 0, all, all), 0.0f,
           Kokkos::subview(C_, 0, all, all), options);
  }

  // Checked, then timed. A config the kernel rejects counts as incorrect, with its reason.
  Measurement measure(const Config& config) const {
    Measurement m;
    try {
      fill_value(C_, std::nanf(""));
      run(config);
      space_.fence();
      m.note = wrong_output();
      if (!m.note.empty()) return m;
      Timing t = time_calls(space_, [&] { run(config); }, timing_.warmup, timing_.reps);
      if (t.spread > timing_.max_spread) t = time_calls(space_, [&] { run(config); }, 1, 4 * timing_.reps);
      m.correct = true;
      m.gflops = problem_.flops() / t.median_s * 1e-9;
    } catch (const std::exception& e) {
      m.note = e.what();
    }
    return m;
  }

 protected:
  const Matrices& output() const { return C_; }

 private:
  // Elements are regenerated on the host from the fill's hash (hashed_reference.hpp), so
  // checking needs no copy of A or B; only the sampled rows of C come back.
  double a(int b, int i, int k) const {
    return hashed_element<Scalar>(seed_a_, (std::size_t(b) * problem_.m + i) * problem_.k + k);
  }
  // Which of the B matrices product `batch` multiplies by (the one B where it is shared).
  int b_of(int batch) const { return B_.extent(0) > 1 ? batch : 0; }
  std::size_t b_offset(int batch) const { return std::size_t(b_of(batch)) * problem_.k * problem_.n; }
  double b(int batch, int k, int j) const {
    return hashed_element<Scalar>(seed_b_, b_offset(batch) + std::size_t(k) * problem_.n + j);
  }

  // x, and per row the expected checksum A (B x) with its error scale |A| (|B| |x|), in fp64.
  void prepare_checksums(std::uint64_t seed) {
    auto x = Kokkos::create_mirror_view(x_);
    for (int j = 0; j < problem_.n; ++j) {
      const float u = uniform_from_hash(seed ^ 0x5eedull, j);
      x(j) = (u < 0 ? -0.5f : 0.5f) + 0.5f * u;
    }
    Kokkos::deep_copy(x_, x);
    std::vector<double> bx(B_.extent(0) * problem_.k, 0.0), abs_bx(bx.size(), 0.0);
    for (int p = 0; p < int(B_.extent(0)); ++p)
      for (int k = 0; k < problem_.k; ++k)
        for (int j = 0; j < problem_.n; ++j) {
          const double bkj = b(p, k, j) * x(j);
          bx[std::size_t(p) * problem_.k + k] += bkj, abs_bx[std::size_t(p) * problem_.k + k] += std::abs(bkj);
        }
    expected_sums_.assign(std::size_t(problem_.batch) * problem_.m, 0.0);
    sum_scales_.assign(expected_sums_.size(), 0.0);
    for (int batch = 0; batch < problem_.batch; ++batch)
      for (int i = 0; i < problem_.m; ++i) {
        const std::size_t b_row = std::size_t(b_of(batch)) * problem_.k;
        const std::size_t row = std::size_t(batch) * problem_.m + i;
        for (int k = 0; k < problem_.k; ++k) {
          const double a_ik = a(batch, i, k);
          expected_sums_[row] += a_ik * bx[b_row + k];
          sum_scales_[row] += std::abs(a_ik) * abs_bx[b_row + k];
        }
      }
  }

  std::string wrong_checksum(double tolerance) const {
    detail::row_checksums(space_, C_, x_, row_sums_);
    const auto host_sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), row_sums_);
    for (std::size_t row = 0; row < expected_sums_.size(); ++row)
      if (std::abs(host_sums(row) - expected_sums_[row]) > tolerance * sum_scales_[row] + 1e-30)
        return "checksum of row " + std::to_string(row) + " off by " +
               std::to_string(std::abs(host_sums(row) - expected_sums_[row]) / sum_scales_[row]) + " relative (tolerance " +
               std::to_string(tolerance) + ")";
    return "";
  }

  // Empty when every element is finite and the sampled rows match the reference.
  std::string wrong_output() const {
    const std::size_t not_finite = detail::count_not_finite(space_, C_);
    if (not_finite > 0) return std::to_string(not_finite) + " output elements not written or not finite";

    const double tolerance = correctness_tolerance(problem_.dtype, problem_.k);
    const std::string checksum = wrong_checksum(tolerance);
    if (!checksum.empty()) return checksum;
    std::map<std::size_t, std::vector<int>> rows_by_b;  // sampled rows of A times one B
    for (int row : sample_rows_) rows_by_b[b_offset(row / problem_.m)].push_back(row);
    for (const auto& [offset, rows] : rows_by_b) {
      const ProductRows reference = hashed_product_rows<Scalar>(seed_a_, rows, problem_.k, seed_b_, offset, problem_.n);
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const int batch = rows[r] / problem_.m, i = rows[r] % problem_.m;
        auto device_row = Kokkos::subview(C_, batch, i, Kokkos::ALL);
        auto host_row = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), device_row);
        for (int j = 0; j < problem_.n; ++j) {
          const double exact = reference.exact[r * problem_.n + j], magnitude = reference.magnitude[r * problem_.n + j];
          const double error = std::abs(double(float(host_row(j))) - exact) / (magnitude > 0 ? magnitude : 1);
          if (error > tolerance)
            return "C(" + std::to_string(batch) + "," + std::to_string(i) + "," + std::to_string(j) + ") off by " +
                   std::to_string(error) + " relative (tolerance " + std::to_string(tolerance) + ")";
        }
      }
    }
    return "";
  }

  ExecSpace space_;
  Problem problem_;
  TimingPolicy timing_;
  std::uint64_t seed_a_, seed_b_;
  Matrices A_;
  Matrices B_;
  Matrices C_;
  Kokkos::View<float*, Memory> x_;
  Kokkos::View<double*, Memory> row_sums_;
  std::vector<int> sample_rows_;
  std::vector<double> expected_sums_, sum_scales_;
};

}  // namespace kgemm
