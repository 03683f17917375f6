#pragma once
// Measures one config on one problem, the way the autotuner needs it: operands allocated once
// with random inputs, then per config a correctness check and only then a timing (warm-up,
// repetitions timed as the benchmarks time a call (time_calls), median; re-measured with more
// repetitions when the spread is large), on the checked operands (warm) or each call on the next
// of a ring of operand sets (cold: TimingPolicy::operands).
// The check: C is poisoned with NaN first (or, with beta != 0, filled with random C0) and every
// element must come back finite; then every checked element must be within the error bound
// derived from its inputs (error_bound.hpp) of the fp64 result, computed on the host once per
// problem. Every element is checked on problems up to CheckPolicy::full_check_macs, a lattice
// of sampled rows and columns beyond (ProblemBench::pick_checked_elements says why the sample
// still sees a wrong block).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kgemm.hpp"
#include "kgemm/fill.hpp"
#include "kgemm/spaces/operand_ring_size.hpp"
#include "kgemm/spaces/space_traits.hpp"
#include "kgemm/tuner/error_bound.hpp"
#include "kgemm/tuner/hashed_reference.hpp"
#include "kgemm/tuner/operand_cache.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/timing.hpp"

namespace kgemm {

struct TimingPolicy {
  int warmup = 2;
  int reps = 7;
  double max_spread = 0.10;  // re-measure (4x the repetitions) above this interquartile spread
  // A config whose first timed call runs below this share of the rate to beat is timed no
  // further: no repetition lifts it to the best, and most of an exhaustive search is such
  // configs. A third leaves room for a call slowed by a busy machine.
  double hopeless = 1.0 / 3;
  OperandCache operands = OperandCache::Warm;
};

struct CheckPolicy {
  // Problems of up to this many multiply-adds (batch m n k) are checked on every element: 2^28
  // covers every batch-1 ResNet layer (at most 1.2e8), whose fp64 reference takes the host
  // about as long as a few candidates' measurements (0.2 - 0.3 s per ResNet-50 layer on this
  // repository's 2-core machine). Larger ones are checked on sampled rows and columns.
  double full_check_macs = 0x1p28;
};

// Rows (columns) of a product from one checked row (column) to the next on problems checked on
// samples: smaller than the smallest block edge a space searches (8), so every block holds a
// checked element, and odd, so that they fall on different places in different blocks of a
// power-of-two size.
constexpr int kCheckedStride = 7;

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

// out(r, c) = C(b, i, cols(c)) for the r-th checked row, rows(r) = b * m + i: one copy to the host.
template <class ExecSpace, class Matrices, class Indices, class Out>
void gather_checked(const ExecSpace& space, const Matrices& C, const Indices& rows, const Indices& cols,
                    const Out& out) {
  const std::size_t m = C.extent(1), count = cols.extent(0);
  Kokkos::parallel_for(
      "kgemm::gather_checked", Kokkos::RangePolicy<ExecSpace>(space, 0, rows.extent(0) * count),
      KOKKOS_LAMBDA(std::size_t index) {
        const std::size_t r = index / count, c = index % count, row = std::size_t(rows(r));
        out(r, c) = float(C(row / m, row % m, cols(c)));
      });
}

}  // namespace detail

template <class ExecSpace, class Scalar>
class ProblemBench {
  using Memory = typename ExecSpace::memory_space;
  using Matrices = Kokkos::View<Scalar***, Kokkos::LayoutRight, Memory>;  // (batch, rows, cols)

 public:
  // Gemm: A m x k, B k x n, C m x n. Batched: `batch` of each. SharedB: `batch` A and C, one B
  // shared by all (the convolution case). A (B) is stored transposed where the problem's a_order
  // (b_order) is 't', and multiplied as op(A) = A^T (op(B) = B^T).
  ProblemBench(const ExecSpace& space, const Problem& problem, std::uint64_t seed, TimingPolicy timing = {},
               CheckPolicy check = {})
      : space_(space), problem_(problem), timing_(timing), seed_a_(3 * seed + 1), seed_b_(3 * seed + 2),
        seed_c_(3 * seed + 3),
        A_("A", problem.batch, problem.a_order == 'n' ? problem.m : problem.k, problem.a_order == 'n' ? problem.k : problem.m),
        B_("B", problem.kernel == Kernel::Batched ? problem.batch : 1, problem.b_order == 'n' ? problem.k : problem.n,
           problem.b_order == 'n' ? problem.n : problem.k),
        C_("C", problem.batch, problem.m, problem.n) {
    fill_uniform(A_, seed_a_);
    fill_uniform(B_, seed_b_);
    if (timing.operands == OperandCache::Cold) add_cold_sets();
    pick_checked_elements(check);
    compute_reference();
  }

  virtual ~ProblemBench() = default;

  // One call of the kernel with `config`: C = alpha op(A) op(B) + beta C, on the operand set being
  // timed, the checked one outside a timing (virtual: tests substitute broken kernels).
  virtual void run(const Config& config, float alpha, float beta) const {
    Options options;
    options.config = config;
    const auto all = Kokkos::ALL;
    const Op op_a = problem_.a_order == 'n' ? Op::N : Op::T, op_b = problem_.b_order == 'n' ? Op::N : Op::T;
    const OperandSet& o = timed_ == 0 ? OperandSet{A_, B_, C_} : cold_sets_[timed_ - 1];
    if (problem_.kernel == Kernel::Batched)
      batched_gemm(space_, op_a, op_b, alpha, o.A, o.B, beta, o.C, options);
    else if (problem_.kernel == Kernel::SharedB)
      batched_gemm(space_, op_a, op_b, alpha, o.A, Kokkos::subview(o.B, 0, all, all), beta, o.C, options);
    else
      gemm(space_, op_a, op_b, alpha, Kokkos::subview(o.A, 0, all, all), Kokkos::subview(o.B, 0, all, all), beta,
           Kokkos::subview(o.C, 0, all, all), options);
  }

  // Why `config` does not compute C = alpha op(A) op(B) + beta C0 right (a config the kernel
  // rejects: its reason); empty when it does.
  std::string wrong_result(const Config& config, float alpha = 1.0f, float beta = 0.0f) const {
    try {
      if (beta == 0.0f)
        fill_value(C_, std::nanf(""));  // poison: any element the kernel skips stays NaN
      else
        fill_uniform(C_, seed_c_);
      run(config, alpha, beta);
      space_.fence();
      return wrong_output(ErrorBound::of_call(problem_.dtype, Accum::F32, problem_.k, config), alpha, beta);
    } catch (const std::exception& e) {
      return e.what();
    }
  }

  // max |C - C_exact| / max |C_exact| over the checked elements of one call of `config` (alpha 1,
  // beta 0): the error measure of the kernel tests' max_rel, to compare two arithmetics on the same
  // inputs. Throws where the config cannot run.
  double max_relative_error(const Config& config) const {
    run(config, 1.0f, 0.0f);
    space_.fence();
    const auto values = checked_values();
    RelativeError error;
    for (std::size_t r = 0; r < rows_.size(); ++r)
      for (std::size_t c = 0; c < cols_.size(); ++c) error.add(double(values(r, c)), sums_[r * cols_.size() + c]);
    return error.max_relative();
  }

  // Checked (alpha 1, beta 0), then timed. A config that fails the check is incorrect, with its
  // reason. `to_beat` (GFLOP/s, the search's best so far; 0: none): a config hopeless against it
  // (TimingPolicy::hopeless) keeps its first timed call's rate, with a note saying so.
  Measurement measure(const Config& config, double to_beat = 0) const {
    Measurement m;
    m.note = wrong_result(config);
    if (!m.note.empty()) return m;
    try {
      m.correct = true;
      if (to_beat > 0) {  // the check's run was its warm-up
        m.gflops = problem_.flops() / time_operands(config, 0, 1).median_s * 1e-9;
        if (m.gflops < timing_.hopeless * to_beat) {
          m.note = "timed once: below " + std::to_string(int(timing_.hopeless * 100)) + " % of the best so far";
          return m;
        }
      }
      Timing t = time_operands(config, timing_.warmup, timing_.reps);
      if (t.spread > timing_.max_spread) t = time_operands(config, 1, 4 * timing_.reps);
      m.gflops = problem_.flops() / t.median_s * 1e-9;
    } catch (const std::exception& e) {
      m = {false, 0, e.what()};
    }
    return m;
  }

  // The operand sets timed calls cycle through: 1 with warm operands (the checked one); cold, as
  // many as make the ring larger than 4x the cache a call could find them in (at most 16).
  int operand_sets() const { return cold_sets_.empty() ? 1 : int(cold_sets_.size()); }

  // The check compares C(b, i, j) for every row b * m + i and column j listed here.
  const std::vector<int>& checked_rows() const { return rows_; }
  const std::vector<int>& checked_cols() const { return cols_; }

 protected:
  const Matrices& output() const { return C_; }
  // The operand set run() uses now: 0, the checked one, outside a timing.
  std::size_t timed_set() const { return timed_; }

  // op(A)(b, i, k) and op(B)(b, k, j) as the kernel reads them, regenerated on the host from the
  // fill's hash (no copy of A or B comes back).
  double input_a(int b, int i, int k) const {
    const std::size_t index = problem_.a_order == 'n' ? (std::size_t(b) * problem_.m + i) * problem_.k + k
                                                      : (std::size_t(b) * problem_.k + k) * problem_.m + i;
    return stored(seed_a_, index);
  }
  double input_b(int b, int k, int j) const {
    const std::size_t p = B_.extent(0) > 1 ? b : 0;  // the one B where it is shared
    const std::size_t index = problem_.b_order == 'n' ? (p * problem_.k + k) * problem_.n + j
                                                      : (p * problem_.n + j) * problem_.k + k;
    return stored(seed_b_, index);
  }
  // C0(b, i, j), where a call with beta != 0 starts from it.
  double initial_c(int b, int i, int j) const {
    return stored(seed_c_, (std::size_t(b) * problem_.m + i) * problem_.n + j);
  }

 private:
  struct OperandSet {
    Matrices A, B, C;
  };

  static double stored(std::uint64_t seed, std::size_t index) { return hashed_element<Scalar>(seed, index); }

  // Cold timing's ring: operand sets random like the checked one (from further seeds), as many as
  // make the ring larger than 4x the cache a call could find them in. The checked set is not one of
  // them: each check leaves it in cache just before the timing. None where one set alone is that
  // large: the checked set is out of cache again by the time its call ends.
  void add_cold_sets() {
    const std::size_t set_bytes = (A_.span() + B_.span() + C_.span()) * sizeof(Scalar);
    const int sets = ring_size(set_bytes, operand_cache_bytes(SpaceTraits<ExecSpace>::is_gpu));
    for (int i = 1; i <= sets && sets > 1; ++i) {
      OperandSet o{Matrices("A", A_.layout()), Matrices("B", B_.layout()), Matrices("C", C_.layout())};
      fill_uniform(o.A, seed_c_ + 2 * std::uint64_t(i));
      fill_uniform(o.B, seed_c_ + 2 * std::uint64_t(i) + 1);
      cold_sets_.push_back(o);
    }
    Kokkos::fence();
  }

  // time_calls of `config`, each call on the ring's next operand set (going round across timings,
  // so that each set comes back only after all the others), or on the checked set where there is
  // no ring (warm); the checked set is current again after.
  Timing time_operands(const Config& config, int warmup, int reps) const {
    struct Restore {
      std::size_t& timed;
      ~Restore() { timed = 0; }
    } restore{timed_};
    return time_calls(space_, [&] {
      if (!cold_sets_.empty()) timed_ = 1 + next_cold_++ % cold_sets_.size();
      run(config, 1.0f, 0.0f);
    }, warmup, reps);
  }

  // Every element when the problem is small enough; else per product every kCheckedStride-th
  // row and the last, in every kCheckedStride-th column and the last. Why the sample catches a
  // wrong block: every config the tuner tries cuts C into blocks at least 8 x 8 (the spaces'
  // smallest listed edge), so every block of every product holds checked elements: a block that
  // is not computed, computed from a skipped or stale slab or split partial, or written in
  // another block's place (two blocks swapped) is wrong there. The stride is odd and block
  // edges are powers of two, so the checked elements fall on different places in different
  // blocks (on every place of a block where C has 7 blocks or more each way): a micro-tile
  // placed wrong in every block is seen too. Faults common to all elements (a dropped k term,
  // a skipped slab everywhere) show on every checked element. What the sample can miss: a
  // fault confined to unchecked elements of one block. It costs 1/49 of the full reference.
  void pick_checked_elements(const CheckPolicy& check) {
    const bool every_element = double(problem_.batch) * problem_.m * problem_.n * problem_.k <= check.full_check_macs;
    const int stride = every_element ? 1 : kCheckedStride;
    const auto sample = [stride](int extent, int offset, std::vector<int>& into) {
      for (int i = 0; i < extent; i += stride) into.push_back(offset + i);
      if ((extent - 1) % stride != 0) into.push_back(offset + extent - 1);
    };
    for (int b = 0; b < problem_.batch; ++b) sample(problem_.m, b * problem_.m, rows_);
    sample(problem_.n, 0, cols_);
  }

  // Per checked element, sum_k a_ik b_kj and sum_k |a_ik b_kj| in fp64, product by product (a
  // batch's products may each have their own B), rows in parallel on the host.
  void compute_reference() {
    const int m = problem_.m, k = problem_.k, n = int(cols_.size());
    sums_.assign(rows_.size() * n, 0.0);
    magnitudes_.assign(sums_.size(), 0.0);
    using Host = Kokkos::DefaultHostExecutionSpace;
    std::vector<double> b_values(std::size_t(k) * n);  // checked columns of op(B) of the current product
    for (std::size_t first = 0; first < rows_.size();) {
      const int batch = rows_[first] / m;
      std::size_t last = first;
      while (last < rows_.size() && rows_[last] / m == batch) ++last;
      if (first == 0 || B_.extent(0) > 1)
        Kokkos::parallel_for("kgemm::reference_b", Kokkos::RangePolicy<Host>(0, k), [&](int kk) {
          for (int c = 0; c < n; ++c) b_values[std::size_t(kk) * n + c] = input_b(batch, kk, cols_[c]);
        });
      Kokkos::parallel_for("kgemm::reference_rows", Kokkos::RangePolicy<Host>(int(first), int(last)), [&](int r) {
        const int i = rows_[r] % m;
        double* sum = &sums_[std::size_t(r) * n];
        double* magnitude = &magnitudes_[std::size_t(r) * n];
        for (int kk = 0; kk < k; ++kk) {
          const double a = input_a(batch, i, kk), abs_a = std::abs(a);
          const double* b_row = &b_values[std::size_t(kk) * n];
          for (int c = 0; c < n; ++c) {
            sum[c] += a * b_row[c];
            magnitude[c] += abs_a * std::abs(b_row[c]);
          }
        }
      });
      first = last;
    }
    Kokkos::fence();
  }

  // The checked elements of C on the host, (checked row, checked column).
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> checked_values() const {
    using Indices = Kokkos::View<const int*, Kokkos::HostSpace>;
    const auto rows = Kokkos::create_mirror_view_and_copy(Memory(), Indices(rows_.data(), rows_.size()));
    const auto cols = Kokkos::create_mirror_view_and_copy(Memory(), Indices(cols_.data(), cols_.size()));
    Kokkos::View<float**, Kokkos::LayoutRight, Memory> values("checked values", rows_.size(), cols_.size());
    detail::gather_checked(space_, C_, rows, cols, values);
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
  }

  // Empty when every element is finite and every checked one within `bound`; else the count
  // and the worst element (largest error over its bound).
  std::string wrong_output(const ErrorBound& bound, float alpha, float beta) const {
    const std::size_t not_finite = detail::count_not_finite(space_, C_);
    if (not_finite > 0) return std::to_string(not_finite) + " output elements not written or not finite";

    const int m = problem_.m, n = int(cols_.size());
    const auto host = checked_values();

    std::size_t wrong = 0, worst_r = 0;
    int worst_c = 0;
    double worst_ratio = 0, worst_exact = 0, worst_bound = 0;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      const int b = rows_[r] / m, i = rows_[r] % m;
      for (int c = 0; c < n; ++c) {
        const std::size_t at = r * n + c;
        const double beta_c0 = beta != 0.0f ? double(beta) * initial_c(b, i, cols_[c]) : 0.0;
        const double exact = double(alpha) * sums_[at] + beta_c0;
        const double allowed = bound(exact, magnitudes_[at], alpha, beta_c0);
        const double error = std::abs(double(host(r, c)) - exact);
        if (error <= allowed) continue;
        ++wrong;
        if (!(error / allowed <= worst_ratio))
          worst_ratio = error / allowed, worst_r = r, worst_c = c, worst_exact = exact, worst_bound = allowed;
      }
    }
    if (wrong == 0) return "";
    char text[320];
    std::snprintf(text, sizeof text,
                  "C(%d,%d,%d) = %.9g off by %.3g from the fp64 result %.9g, %.3g times its error bound %.3g "
                  "(alpha %g, beta %g); %zu of %zu checked elements out of bounds",
                  rows_[worst_r] / m, rows_[worst_r] % m, cols_[worst_c], double(host(worst_r, worst_c)),
                  std::abs(double(host(worst_r, worst_c)) - worst_exact), worst_exact, worst_ratio, worst_bound,
                  double(alpha), double(beta), wrong, rows_.size() * std::size_t(n));
    return text;
  }

  ExecSpace space_;
  Problem problem_;
  TimingPolicy timing_;
  std::uint64_t seed_a_, seed_b_, seed_c_;
  Matrices A_;
  Matrices B_;
  Matrices C_;
  std::vector<OperandSet> cold_sets_;  // cold timing's ring besides the checked set
  mutable std::size_t timed_ = 0;      // the set run() uses: 0, the checked one, or cold_sets_[timed_ - 1]
  mutable std::size_t next_cold_ = 0;  // calls timed on the ring so far
  std::vector<int> rows_, cols_;             // checked: rows as b * m + i, columns
  std::vector<double> sums_, magnitudes_;  // per checked element: sum_k a b and sum_k |a b|
};

}  // namespace kgemm
