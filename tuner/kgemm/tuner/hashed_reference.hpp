#pragma once
// fp64 references for operands that fill_uniform wrote: their elements are regenerated on the
// host from the fill's hash, so checking a device result needs no copy of A or B, only of the
// output rows compared. No Kokkos: standalone peers compute their errors with it too.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "kgemm/uniform_hash.hpp"

namespace kgemm {

// Element `index` of a view fill_uniform(seed) filled, rounded through `Stored`: the view's
// scalar type gives the value the view holds; float gives the value as generated (24 random
// bits, exact in fp32), before any rounding to a narrower type.
template <class Stored>
double hashed_element(std::uint64_t seed, std::size_t index) {
  return double(float(Stored(uniform_from_hash(seed, index))));
}

// Up to `count` of the rows 0 .. rows - 1 to check: all of them when there are no more, else
// the first, the last and random ones (repeats possible) drawn from `seed`.
inline std::vector<int> sample_rows(int rows, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> picked;
  const int samples = rows < count ? rows : count;
  for (int s = 0; s < samples; ++s)
    picked.push_back(rows <= count ? s : s == 0 ? 0 : s == 1 ? rows - 1 : int(rng() % rows));
  return picked;
}

// Rows of the fp64 product A B and of |A| |B| (the scale of its rounding errors), for the rows
// `rows` of a row-major A with k columns (fill_uniform(seed_a) over all its rows) times one
// row-major k x n B whose element (kk, j) has fill index b_offset + kk * n + j.
struct ProductRows {
  int n = 0;
  std::vector<double> exact, magnitude;  // the r-th requested row at [r * n, (r + 1) * n)
};

// The error measures kgemm reports, gathered element by element: max |C - C_exact| / max |C_exact|
// (the kernel tests' max_rel) and mean |C - C_exact| / mean |C_exact|. Both are NaN once a value
// was not finite (std::max would drop it), so a broken kernel shows.
struct RelativeError {
  double diff_max = 0, exact_max = 0, diff_sum = 0, exact_sum = 0;
  void add(double value, double exact) {
    const double diff = std::abs(value - exact);
    diff_max = diff > diff_max ? diff : diff_max;
    exact_max = std::abs(exact) > exact_max ? std::abs(exact) : exact_max;
    diff_sum += diff, exact_sum += std::abs(exact);
  }
  // An all-zero reference leaves the absolute error.
  double max_relative() const {
    return !std::isfinite(diff_sum) ? std::nan("") : exact_max > 0 ? diff_max / exact_max : diff_max;
  }
  double mean_relative() const {
    return !std::isfinite(diff_sum) ? std::nan("") : exact_sum > 0 ? diff_sum / exact_sum : diff_sum;
  }
};

template <class Stored>
ProductRows hashed_product_rows(std::uint64_t seed_a, const std::vector<int>& rows, int k, std::uint64_t seed_b,
                                std::size_t b_offset, int n) {
  ProductRows out;
  out.n = n;
  out.exact.assign(rows.size() * std::size_t(n), 0.0);
  out.magnitude.assign(out.exact.size(), 0.0);
  std::vector<double> b_row(n);
  for (int kk = 0; kk < k; ++kk) {  // each element of B generated once
    for (int j = 0; j < n; ++j) b_row[j] = hashed_element<Stored>(seed_b, b_offset + std::size_t(kk) * n + j);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double a = hashed_element<Stored>(seed_a, std::size_t(rows[r]) * k + kk);
      double* exact = &out.exact[r * n];
      double* magnitude = &out.magnitude[r * n];
      for (int j = 0; j < n; ++j) {
        const double product = a * b_row[j];
        exact[j] += product;
        magnitude[j] += std::abs(product);
      }
    }
  }
  return out;
}

}  // namespace kgemm
