#pragma once
// Fills a contiguous view with uniform values in [-1, 1) from a counter-based hash, on the
// view's own execution space: fresh inputs for any seed, fast even for GPU-sized operands.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kgemm/spaces/error.hpp"
#include "kgemm/uniform_hash.hpp"

namespace kgemm {

template <class View>
void fill_uniform(const View& v, std::uint64_t seed) {
  if (!v.span_is_contiguous()) throw InvalidArgument("fill_uniform needs a contiguous view");
  using Scalar = typename View::value_type;
  Scalar* data = v.data();
  Kokkos::parallel_for(
      "kgemm::fill_uniform", Kokkos::RangePolicy<typename View::execution_space>(0, v.span()),
      KOKKOS_LAMBDA(std::size_t i) { data[i] = Scalar(uniform_from_hash(seed, i)); });
}

// Every element set to `value` (NaN poisons an output so unwritten elements show).
template <class View>
void fill_value(const View& v, float value) {
  using Scalar = typename View::value_type;
  Scalar* data = v.data();
  Kokkos::parallel_for(
      "kgemm::fill_value", Kokkos::RangePolicy<typename View::execution_space>(0, v.span()),
      KOKKOS_LAMBDA(std::size_t i) { data[i] = Scalar(value); });
}

}  // namespace kgemm
