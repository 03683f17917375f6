#pragma once
// Runs one GEMM through kgemm's public API on fresh random inputs and measures it against
// the fp64 reference: the building block of every kernel test.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "kgemm.hpp"
#include "kgemm/fill.hpp"
#include "support/reference.hpp"

namespace kgemm::test {

// Where an operand lies in the wider matrix it is a window of: its first column `offset`
// elements in, its rows `pad` elements shorter than the matrix's past that (both 0: the operand
// is its own matrix).
struct Window {
  int offset = 0, pad = 0;
  int wide(int cols) const { return offset + cols + pad; }
  std::string describe(const char* operand) const {
    return offset || pad ? std::string(" ") + operand + " at column " + std::to_string(offset) + " of rows " +
                               std::to_string(pad) + " longer"
                         : "";
  }
};

struct GemmCheck {
  int m = 1, n = 1, k = 1;
  int batch = 1;
  bool batched = false;   // batched_gemm with rank-3 views (else gemm with rank-2 views)
  bool shared_b = false;  // batched only: one B (rank 2, batch stride 0) for every product
  Op op_a = Op::N, op_b = Op::N;
  float alpha = 1.0f, beta = 0.0f;
  // The stored operands (A, B as the call passes them, before op()) as windows of wider matrices.
  Window a_window, b_window, c_window;
  // A and B are windows of matrices whose rows are padded to a multiple of 8 elements: rows
  // start 16-byte aligned whatever K and N are (GPUs stage them as whole runs, zero-filling
  // past the window's edge: run_stager.hpp).
  bool pad_ab = false;
  std::optional<Config> config;  // unset: the dispatcher chooses

  std::string describe() const {
    return std::string(batched ? "batched" : "gemm") + " m" + std::to_string(m) + " n" + std::to_string(n) + " k" +
           std::to_string(k) + " b" + std::to_string(batch) + (shared_b ? " sharedB" : "") +
           (op_a == Op::T ? " At" : "") + (op_b == Op::T ? " Bt" : "") + " alpha" + std::to_string(alpha) +
           " beta" + std::to_string(beta) + a_window.describe("A") + b_window.describe("B") +
           c_window.describe("C") + (pad_ab ? " A, B rows padded to 8" : "") +
           " config " + (config ? to_string(*config) : "dispatched");
  }
};

// Stated tolerances on the relative Frobenius error and on max|C - ref| / max|ref|; besides,
// every element must be within the error bound derived from its inputs (error_bound.hpp).
// fp32: accumulation rounding, far under 1e-5. fp16 data with fp32 accumulation: the inputs
// are exact, so only the final rounding to fp16 (2^-11) remains. fp16 accumulation: every
// partial sum rounds to fp16, an error that grows like sqrt(K).
// Both are relative to the reference, measured no smaller than the output format's smallest
// normal (2^-14 for fp16): below it fp16 keeps a fixed spacing of 2^-24, so a product of two
// small inputs (m = n = k = 1) is stored with absolute, not relative, error.
struct Tolerance {
  double frobenius, max_rel;
  double magnitude_floor;
};
template <class Scalar, Accum A>
Tolerance tolerance_for(int k) {
  if (dtype_of<Scalar>() == DType::F32) return {1e-5, 1e-4, double(std::numeric_limits<float>::min())};
  const double fp16_smallest_normal = std::ldexp(1.0, -14);
  if (A == Accum::F32) return {1e-3, 2e-3, fp16_smallest_normal};
  const double u16 = std::ldexp(1.0, -11), frob = u16 * (2.0 + std::sqrt(double(k)));
  return {frob, 4 * frob, fp16_smallest_normal};
}

inline std::uint64_t fresh_seed() {
  static std::random_device device;
  return (std::uint64_t(device()) << 32) | device();
}

template <class Case, class Layout = Kokkos::LayoutRight>
Errors run_check(const GemmCheck& g) {
  using Space = typename Case::ExecSpace;
  using T = typename Case::Value;
  using View3 = Kokkos::View<T***, Layout, typename Space::memory_space>;
  const auto all = Kokkos::ALL;
  const int batch_ab = g.batched ? g.batch : 1;
  const auto padded = [&](int cols) { return g.pad_ab ? (cols + 7) / 8 * 8 : cols; };
  const int a_cols = g.op_a == Op::N ? g.k : g.m, b_cols = g.op_b == Op::N ? g.n : g.k;
  View3 wide_A("A", batch_ab, g.op_a == Op::N ? g.m : g.k, g.a_window.wide(padded(a_cols)));
  View3 wide_B("B", g.shared_b ? 1 : batch_ab, g.op_b == Op::N ? g.k : g.n, g.b_window.wide(padded(b_cols)));
  const auto columns = [](const Window& w, int cols) { return Kokkos::make_pair(w.offset, w.offset + cols); };
  const auto A = Kokkos::subview(wide_A, all, all, columns(g.a_window, a_cols));
  const auto B = Kokkos::subview(wide_B, all, all, columns(g.b_window, b_cols));
  const int wide_n = g.c_window.wide(g.n);
  View3 wide_C("C", batch_ab, g.m, wide_n);
  const auto window = columns(g.c_window, g.n);
  const auto C = Kokkos::subview(wide_C, all, all, window);
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(g.describe() + " seed " + std::to_string(seed));
  fill_uniform(wide_A, seed);  // the padding too: a kernel reading past the window shows
  fill_uniform(wide_B, seed + 1);
  if (g.beta == 0.0f)
    fill_value(wide_C, std::nanf(""));  // poison: any element the kernel skips stays NaN
  else
    fill_uniform(wide_C, seed + 2);

  const auto hA_wide = host_copy(wide_A), hB_wide = host_copy(wide_B), hC0_wide = host_copy(wide_C);
  const auto hA = Kokkos::subview(hA_wide, all, all, columns(g.a_window, a_cols));
  const auto hB = Kokkos::subview(hB_wide, all, all, columns(g.b_window, b_cols));
  const auto hC0 = Kokkos::subview(hC0_wide, all, all, window);
  auto refB = as_matrix(hB, g.op_b);
  if (g.shared_b) refB.batch_stride = 0;
  const auto ref = reference_gemm(as_matrix(hA, g.op_a), refB, as_matrix(hC0), batch_ab, g.alpha, g.beta);

  Options options;
  options.config = g.config;
  options.accum = Case::accum;
  const Space space;
  // The config dispatch picks for these operands where the case names none.
  const auto dispatched = [&](const auto& a, const auto& b, const auto& c) {
    return select_config<Space>(gemm_args(g.op_a, g.op_b, g.alpha, a, b, g.beta, c), g.batched, Case::accum);
  };
  Config ran;
  if (!g.batched) {
    const auto A0 = Kokkos::subview(A, 0, all, all), B0 = Kokkos::subview(B, 0, all, all);
    const auto C0 = Kokkos::subview(C, 0, all, all);
    ran = g.config ? *g.config : dispatched(A0, B0, C0);
    gemm(space, g.op_a, g.op_b, g.alpha, A0, B0, g.beta, C0, options);
  } else if (g.shared_b) {
    const auto B0 = Kokkos::subview(B, 0, all, all);
    ran = g.config ? *g.config : dispatched(A, B0, C);
    batched_gemm(space, g.op_a, g.op_b, g.alpha, A, B0, g.beta, C, options);
  } else {
    ran = g.config ? *g.config : dispatched(A, B, C);
    batched_gemm(space, g.op_a, g.op_b, g.alpha, A, B, g.beta, C, options);
  }
  space.fence();
  const Tolerance tol = tolerance_for<T, Case::accum>(g.k);
  const auto hC_wide = host_copy(wide_C);
  const ErrorBound bound = ErrorBound::of_call(dtype_of<T>(), Case::accum, g.k, ran);
  const Errors e =
      compare(as_matrix(Kokkos::subview(hC_wide, all, all, window)), batch_ab, ref, bound, tol.magnitude_floor);
  EXPECT_TRUE(e.finite) << "non-finite output: an element was not written";
  EXPECT_EQ(e.beyond_bound, 0u) << "elements off by more than their error bound, the worst by " << e.worst_bound_ratio
                                << " times it";
  EXPECT_LE(e.frobenius, tol.frobenius);
  EXPECT_LE(e.max_rel, tol.max_rel);
  // Columns either side of C's window are not C's: they keep their values (NaN stays NaN).
  int overwritten = 0;
  for (int b = 0; b < batch_ab; ++b)
    for (int i = 0; i < g.m; ++i)
      for (int j = 0; j < wide_n; ++j) {
        if (j >= window.first && j < window.second) continue;
        const float before = float(hC0_wide(b, i, j)), after = float(hC_wide(b, i, j));
        overwritten += !(before == after || (std::isnan(before) && std::isnan(after)));
      }
  EXPECT_EQ(overwritten, 0) << "elements outside C were written";
  return e;
}

}  // namespace kgemm::test
