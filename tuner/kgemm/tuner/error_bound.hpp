#pragma once
// How far a correct kernel's C = alpha op(A) op(B) + beta C0 may be from the exact result, per
// element, from the inputs alone: the bound the tuner's check and the kernel tests hold every
// element to. A kernel that drops one k term, a slab, or a block's partial result leaves errors
// of the size of one product |a_ik b_kj| or more, far above it on long K.
#include <cmath>

#include "kgemm/config.hpp"
#include "kgemm/dtype.hpp"

namespace kgemm {

// One rounding to a format: relative error at most `unit` (the unit roundoff) for normal
// results, absolute error at most `underflow` (half the subnormal spacing) below them.
struct Rounding {
  double unit, underflow;
};

inline Rounding rounding_of(DType format) {
  return format == DType::F32 ? Rounding{0x1p-24, 0x1p-150} : Rounding{0x1p-11, 0x1p-25};
}

// What the kernels sum products in: fp32, unless fp16 data asked for fp16 accumulation.
inline DType accumulation_format(DType data, Accum accum) {
  return data == DType::F16 && accum == Accum::F16 ? DType::F16 : DType::F32;
}

// c in |acc - sum_k a_ik b_kj| <= c k u sum_k |a_ik b_kj|. Recursive summation of k products in
// any order and tree shape stays within gamma_k = k u / (1 - k u) of sum |a b| (Higham,
// "Accuracy and Stability of Numerical Algorithms", 3.1), product roundings included; c = 2
// covers gamma's second-order term while k u <= 1/2, split K's extra additions of partial
// blocks (at most one per slab, fewer than k) and accumulators that truncate instead of
// rounding (tensor cores' fp32 accumulation: up to 2u per addition). Measured errors are far
// below it (of order sqrt(k) u), but a looser c would let a dropped k term through: on
// 49x512x4608 in fp32 the bound is about 0.6 per element, while one term |a b| is up to 1.
constexpr double kAccumulationErrorFactor = 2.0;

// How a kernel forms each product a_ik b_kj: rounded once into the accumulation format (inside
// the sum's bound above), or as three TF32 tensor-core products (fp32 data on tensor cores,
// 3xTF32): big_a small_b + small_a big_b + big_a big_b with big = tf32(x), small = tf32(x - big).
// Each of the three is exact; dropped are small_a small_b (at most 2^-22 |a b|) and the rounding
// of each small part (2^-11 of it: 2^-22 (1 + 2^-11) |a b| per operand), 3.001 * 2^-22 |a b| in
// all. The sum is bounded as one of 3k terms (each 8-deep step's 24 summed in the tensor cores,
// truncating, then added to the running sum), a looser bound than the k / 8 roundings of the
// running sum alone would give.
// Hopper's TF32 `wgmma` reads its shared-memory operand (A, in kgemm's fp32 warpgroup kernel)
// truncated to TF32, so A splits as big_a = trunc(a), small_a = a - big_a (exact, below 2^-10
// |a|), and small_a is truncated in turn when read (2^-10 of it): 2^-20 (1 + 2^-11) |a b| for
// that, 2^-22 |a b| for B's small part's rounding, 2^-21 |a b| for the dropped small_a small_b:
// 7.002 * 2^-22 |a b| in all (SplitTf32TruncatedA).
enum class Products { Rounded, SplitTf32, SplitTf32TruncatedA };
constexpr double kSplitTf32ProductError = 3.001 * 0x1p-22;
constexpr double kSplitTf32TruncatedAProductError = 7.002 * 0x1p-22;

// The bound for one element of C, computed by a kernel with `k`-long sums in `accumulation`,
// epilogue (alpha, beta) in fp32, stored in `output`.
struct ErrorBound {
  DType output;
  DType accumulation;
  int k;
  Products products = Products::Rounded;

  // The bound for `config` on data of `dtype` accumulated as `accum` asks.
  static ErrorBound of_call(DType dtype, Accum accum, int k, const Config& config) {
    const bool split = config.tensor_cores() && dtype == DType::F32;
    const Products products = !split ? Products::Rounded : config.warpgroups() ? Products::SplitTf32TruncatedA : Products::SplitTf32;
    return {dtype, accumulation_format(dtype, accum), k, products};
  }

  // exact: alpha sum_k a_ik b_kj + beta c0_ij in fp64; magnitude: sum_k |a_ik b_kj|;
  // beta_c0: beta c0_ij (0 when beta is 0).
  double operator()(double exact, double magnitude, double alpha, double beta_c0) const {
    const Rounding acc = rounding_of(accumulation), f32 = rounding_of(DType::F32), out = rounding_of(output);
    const bool split = products != Products::Rounded;
    const double terms = split ? 3.0 * k : double(k);
    const double product_error = products == Products::SplitTf32            ? kSplitTf32ProductError
                                 : products == Products::SplitTf32TruncatedA ? kSplitTf32TruncatedAProductError
                                                                              : 0.0;
    const double sum_error =
        kAccumulationErrorFactor * terms * acc.unit * magnitude + terms * acc.underflow + product_error * magnitude;
    // value = alpha * acc, then + beta * c0: two fp32 roundings of at most |alpha acc| + |beta c0|.
    const double scaled = std::abs(alpha) * (magnitude + sum_error) + std::abs(beta_c0);
    const double epilogue_error = std::abs(alpha) * sum_error + 2 * (f32.unit * scaled + f32.underflow);
    // Stored in C's format: one more rounding of the computed value.
    return epilogue_error + out.unit * (std::abs(exact) + epilogue_error) + out.underflow;
  }
};

}  // namespace kgemm
