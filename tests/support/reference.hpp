#pragma once
// fp64 reference GEMM on the host and the error measures every kernel test uses.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kgemm/matrix_ref.hpp"
#include "kgemm/tuner/error_bound.hpp"

namespace kgemm::test {

// Host copy of a device view (any rank, any layout), same strides.
template <class View>
auto host_copy(const View& v) {
  auto h = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(h, v);
  return h;
}

// C_ref[b] = alpha * A[b] * B[b] + beta * C0[b] in double, over host operands (op() applied),
// with what each element's error bound is made of: sum_k |a_ik b_kj| and beta C0.
struct Reference {
  std::vector<double> values, magnitudes, beta_c0;
  double alpha = 1;
};

template <class TA, class TB, class TC>
Reference reference_gemm(const MatrixRef<TA>& A, const MatrixRef<TB>& B, const MatrixRef<TC>& C0, int batch,
                         double alpha, double beta) {
  const int M = C0.rows, N = C0.cols, K = A.cols;
  Reference ref;
  ref.alpha = alpha;
  ref.values.resize(std::size_t(batch) * M * N);
  ref.magnitudes.resize(ref.values.size());
  ref.beta_c0.resize(ref.values.size());
  std::vector<double> row(N), magnitude(N);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < M; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      std::fill(magnitude.begin(), magnitude.end(), 0.0);
      for (int k = 0; k < K; ++k) {
        const double a = double(A(b, i, k));
        for (int j = 0; j < N; ++j) {
          row[j] += a * double(B(b, k, j));
          magnitude[j] += std::abs(a * double(B(b, k, j)));
        }
      }
      const std::size_t at = (std::size_t(b) * M + i) * N;
      for (int j = 0; j < N; ++j) {
        ref.beta_c0[at + j] = beta != 0.0 ? beta * double(C0(b, i, j)) : 0.0;
        ref.values[at + j] = alpha * row[j] + ref.beta_c0[at + j];
        ref.magnitudes[at + j] = magnitude[j];
      }
    }
  return ref;
}

struct Errors {
  double frobenius = 0;  // ||C - ref||_F / ||ref||_F
  double max_rel = 0;    // max |C - ref| / max |ref|: one wrong or unwritten element shows here
  bool finite = true;    // no NaN/Inf (a NaN-poisoned element that was never written)
  std::size_t beyond_bound = 0;  // elements whose error exceeds their bound (error_bound.hpp)
  double worst_bound_ratio = 0;  // the largest error / bound
};

// magnitude_floor: references are measured as if no smaller than this. A result stored in a
// format whose smallest normal is f carries absolute rounding error up to f * unit roundoff
// below f (subnormal spacing), so relative measures need that floor to stay meaningful.
// `bound` holds every element to the error a correct kernel may leave there.
template <class TC>
Errors compare(const MatrixRef<TC>& C, int batch, const Reference& reference, const ErrorBound& bound,
               double magnitude_floor) {
  const std::vector<double>& ref = reference.values;
  const int M = C.rows, N = C.cols;
  double diff2 = 0, ref2 = 0, diff_max = 0, ref_max = 0;
  Errors e;
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        const std::size_t at = (std::size_t(b) * M + i) * N + j;
        const double c = double(C(b, i, j)), r = ref[at];
        if (!std::isfinite(c)) e.finite = false;
        const double allowed = bound(r, reference.magnitudes[at], reference.alpha, reference.beta_c0[at]);
        if (!(std::abs(c - r) <= allowed)) ++e.beyond_bound;
        e.worst_bound_ratio = std::max(e.worst_bound_ratio, std::abs(c - r) / allowed);
        diff2 += (c - r) * (c - r);
        ref2 += r * r;
        diff_max = std::max(diff_max, std::abs(c - r));
        ref_max = std::max(ref_max, std::abs(r));
      }
  const double count = double(batch) * M * N;
  e.frobenius = std::sqrt(diff2) / std::max(std::sqrt(ref2), magnitude_floor * std::sqrt(count));
  e.max_rel = diff_max / std::max(ref_max, magnitude_floor);
  return e;
}

}  // namespace kgemm::test
