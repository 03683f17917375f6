// C = A B through an installed kgemm, checked against a plain triple loop in double.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <kgemm.hpp>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int m = 97, n = 64, k = 147;
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> A("A", m, k), B("B", k, n), C("C", m, n);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) A(i, p) = float((i * 7 + p * 3) % 11) / 11 - 0.5f;
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < n; ++j) B(p, j) = float((p * 5 + j) % 13) / 13 - 0.5f;
  kgemm::gemm(Kokkos::DefaultHostExecutionSpace(), kgemm::Op::N, kgemm::Op::N, 1.0f, A, B, 0.0f, C);
  Kokkos::fence();
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (int p = 0; p < k; ++p) exact += double(A(i, p)) * B(p, j), magnitude += std::abs(double(A(i, p)) * B(p, j));
      worst = std::max(worst, std::abs(C(i, j) - exact) / (magnitude + 1e-30));
    }
  // fp32 accumulation over k terms: |error| <= k u sum|a b| with u = 2^-24.
  const bool ok = worst <= k * std::ldexp(1.0, -24);
  std::printf("consumer: %dx%dx%d through kgemm::gemm, worst relative error %.2e: %s\n", m, n, k, worst, ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
