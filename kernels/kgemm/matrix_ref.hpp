#pragma once
// A strided, possibly batched matrix operand: layout (row/column-major), transposition and a
// shared operand (batch stride 0) are all just strides, so one kernel serves every case.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

namespace kgemm {

enum class Op { N, T };  // op(X) = X or X^T

template <class T>
struct MatrixRef {
  MatrixRef() = default;
  KOKKOS_INLINE_FUNCTION MatrixRef(T* d, int r, int c, std::ptrdiff_t rs, std::ptrdiff_t cs, std::ptrdiff_t bs)
      : data(d), rows(r), cols(c), row_stride(rs), col_stride(cs), batch_stride(bs) {}
  // A mutable operand is also a read-only one.
  template <class U, std::enable_if_t<std::is_same<const U, T>::value && !std::is_const<U>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION MatrixRef(const MatrixRef<U>& m)
      : MatrixRef(m.data, m.rows, m.cols, m.row_stride, m.col_stride, m.batch_stride) {}

  T* data = nullptr;
  int rows = 0;
  int cols = 0;
  std::ptrdiff_t row_stride = 0;    // elements between (i, j) and (i + 1, j)
  std::ptrdiff_t col_stride = 0;    // elements between (i, j) and (i, j + 1)
  std::ptrdiff_t batch_stride = 0;  // elements between matrix b and b + 1; 0 = shared by all

  KOKKOS_INLINE_FUNCTION T& operator()(int b, int i, int j) const {
    return data[b * batch_stride + i * row_stride + j * col_stride];
  }
  MatrixRef transposed() const { return {data, cols, rows, col_stride, row_stride, batch_stride}; }
};

// C[b] = alpha * op(A)[b] * op(B)[b] + beta * C[b] for b < batch, with A, B already op()-applied.
template <class Scalar>
struct GemmArgs {
  MatrixRef<const Scalar> A;  // M x K
  MatrixRef<const Scalar> B;  // K x N
  MatrixRef<Scalar> C;        // M x N
  int batch = 1;
  float alpha = 1.0f;
  float beta = 0.0f;
  KOKKOS_INLINE_FUNCTION int M() const { return C.rows; }
  KOKKOS_INLINE_FUNCTION int N() const { return C.cols; }
  KOKKOS_INLINE_FUNCTION int K() const { return A.cols; }
};

}  // namespace kgemm
