#pragma once
// What a config's legality reads of a call's operands beyond its Problem: where their rows lie
// in memory. Two calls on one problem whose operands lie alike are legal for the same configs,
// so dispatch decides once per (problem, layout): a padded or offset view gets a config it can
// take, a contiguous one the problem's own choice.
#include <cstddef>
#include <cstdint>
#include <tuple>

#include "kgemm/matrix_ref.hpp"
#include "kgemm/problem.hpp"

namespace kgemm {

// The coarsest alignment any kernel's legality asks of an operand (a GPU's 16-byte copy runs;
// launch_impl.hpp asserts every space's runs fit within it).
constexpr int kMostAlignmentChecked = 16;

struct OperandAlignment {
  int bytes = kMostAlignmentChecked;  // largest power of two up to kMostAlignmentChecked dividing
                                      // the address and every stride but a unit one, in bytes
  bool unit_stride = true;            // rows or columns are contiguous

  friend bool operator==(const OperandAlignment& x, const OperandAlignment& y) {
    return x.bytes == y.bytes && x.unit_stride == y.unit_stride;
  }
  friend bool operator<(const OperandAlignment& x, const OperandAlignment& y) {
    return std::tie(x.bytes, x.unit_stride) < std::tie(y.bytes, y.unit_stride);
  }
};

struct OperandLayout {
  OperandAlignment a, b, c;

  friend bool operator==(const OperandLayout& x, const OperandLayout& y) {
    return x.a == y.a && x.b == y.b && x.c == y.c;
  }
  friend bool operator<(const OperandLayout& x, const OperandLayout& y) {
    return std::tie(x.a, x.b, x.c) < std::tie(y.a, y.b, y.c);
  }
};

template <class T>
OperandAlignment alignment_of(const MatrixRef<T>& m) {
  const std::uintptr_t element = sizeof(T);
  std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(m.data) | kMostAlignmentChecked;
  // The first unit stride is the contiguous dimension; any other stride moves whole rows.
  bool unit = false;
  const std::ptrdiff_t strides[] = {m.col_stride, m.row_stride, m.batch_stride};  // nvcc: no braced list in range-for
  for (const std::ptrdiff_t stride : strides) {
    if (stride == 1 && !unit) {
      unit = true;
      continue;
    }
    if (stride != 0) bits |= std::uintptr_t(stride < 0 ? -stride : stride) * element;
  }
  return {int(bits & (~bits + 1)), unit};  // the lowest set bit
}

template <class Scalar>
OperandLayout operand_layout(const GemmArgs<Scalar>& args) {
  return {alignment_of(args.A), alignment_of(args.B), alignment_of(args.C)};
}

}  // namespace kgemm
