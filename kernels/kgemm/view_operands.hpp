#pragma once
// Kokkos::View -> MatrixRef: rank-2 views are single matrices, rank-3 views are batches with
// the batch index first (batch-outer). Any layout works, since only strides are read.
#include <Kokkos_Core.hpp>
#include <climits>
#include <string>
#include <type_traits>

#include "kgemm/matrix_ref.hpp"
#include "kgemm/spaces/error.hpp"

namespace kgemm {

// The kernels count rows, columns and batches in int.
template <class View>
void check_extents_fit(const View& v) {
  for (int d = 0; d < int(View::rank); ++d)
    if (v.extent(d) > std::size_t(INT_MAX))
      throw InvalidArgument("view '" + v.label() + "' has extent " + std::to_string(v.extent(d)) + " in dimension " +
                            std::to_string(d) + "; kgemm takes at most " + std::to_string(INT_MAX) +
                            " rows, columns or batches");
}

template <class View>
auto as_matrix(const View& v, Op op = Op::N) {
  using T = typename View::value_type;
  static_assert(View::rank == 2 || View::rank == 3, "kgemm: operands are rank-2 (matrix) or rank-3 (batch, rows, cols) views");
  constexpr int r = View::rank - 2;  // first matrix dimension
  check_extents_fit(v);
  MatrixRef<T> m{v.data(),
                 int(v.extent(r)),
                 int(v.extent(r + 1)),
                 std::ptrdiff_t(v.stride(r)),
                 std::ptrdiff_t(v.stride(r + 1)),
                 View::rank == 3 ? std::ptrdiff_t(v.stride(0)) : 0};
  return op == Op::T ? m.transposed() : m;
}

template <class View>
int batch_extent(const View& v) {
  check_extents_fit(v);
  return View::rank == 3 ? int(v.extent(0)) : 1;
}

}  // namespace kgemm
