#pragma once
// kgemm's public API. The one place where the rooms meet: a call becomes a Problem, the
// dispatcher (dispatch/) picks its Config unless the caller passes one, and the kernel runs.
//
//   kgemm::gemm(A, B, C);                                   // C = A * B
//   kgemm::gemm(space, Op::N, Op::T, alpha, A, B, beta, C); // C = alpha A B^T + beta C
//   kgemm::batched_gemm(space, Op::N, Op::N, 1, A, W, 0, C);// C[b] = A[b] W, W shared (rank 2)
//   kgemm::set_warning_handler(to_my_log);                  // warnings there, not on stderr
//
// A call that cannot run throws kgemm::InvalidArgument (a std::invalid_argument); a store or
// device that fails, kgemm::RuntimeError (a std::runtime_error); both are kgemm::Error, whose
// what() is "kgemm: <reason>" (kgemm/spaces/error.hpp).
#include <Kokkos_Core.hpp>
#include <optional>

#include "kgemm/config.hpp"
#include "kgemm/dtype.hpp"
#include "kgemm/launch.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/error.hpp"
#include "kgemm/dispatch/select_config.hpp"
#include "kgemm/dispatch/warnings.hpp"
#include "kgemm/view_operands.hpp"

namespace kgemm {

struct Options {
  std::optional<Config> config;  // set: run exactly this config, bypassing dispatch
  Accum accum = Accum::F32;      // fp16 data only: Accum::F16 accumulates in fp16
};

// The strided operands of C = alpha * op(A) * op(B) + beta * C (rank-3 views: batches).
template <class AV, class BV, class CV>
GemmArgs<typename CV::value_type> gemm_args(Op op_a, Op op_b, float alpha, const AV& A, const BV& B, float beta,
                                           const CV& C) {
  using Scalar = typename CV::value_type;
  static_assert(std::is_same<std::remove_const_t<typename AV::value_type>, Scalar>::value &&
                    std::is_same<std::remove_const_t<typename BV::value_type>, Scalar>::value,
                "kgemm: A, B and C must hold the same element type");
  GemmArgs<Scalar> args;
  args.A = as_matrix(A, op_a);
  args.B = as_matrix(B, op_b);
  args.C = as_matrix(C);
  args.batch = batch_extent(C);
  args.alpha = alpha;
  args.beta = beta;
  return args;
}

// C = alpha * A * B + beta * C on operands given as pointers and strides (op() already applied):
// what bindings for other languages call, with memory ExecSpace can reach. `batched`: a
// batched_gemm call, whose problem is tuned apart from a single product's.
template <class ExecSpace, class Scalar>
void run_gemm(const ExecSpace& space, const GemmArgs<Scalar>& args, bool batched, const Options& options = {}) {
  const Config config = options.config ? *options.config : select_config<ExecSpace>(args, batched, options.accum);
  launch_gemm(space, args, config, options.accum);
}

namespace detail {
template <class ExecSpace, class AV, class BV, class CV>
void run(const ExecSpace& space, Op op_a, Op op_b, float alpha, const AV& A,
         const BV& B, float beta, const CV& C, const Options& options) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename CV::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename AV::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename BV::memory_space>::accessible,
                "kgemm: the views' memory must be accessible from the execution space");
  run_gemm(space, gemm_args(op_a, op_b, alpha, A, B, beta, C), CV::rank == 3, options);
}
}  // namespace detail

// C = alpha * op(A) * op(B) + beta * C, with rank-2 views.
template <class ExecSpace, class AV, class BV, class CV>
void gemm(const ExecSpace& space, Op op_a, Op op_b, float alpha, const AV& A, const BV& B, float beta,
          const CV& C, const Options& options = {}) {
  static_assert(AV::rank == 2 && BV::rank == 2 && CV::rank == 2, "kgemm::gemm takes rank-2 views; see batched_gemm");
  detail::run(space, op_a, op_b, alpha, A, B, beta, C, options);
}

template <class AV, class BV, class CV>
void gemm(const AV& A, const BV& B, const CV& C, const Options& options = {}) {
  gemm(typename CV::execution_space(), Op::N, Op::N, 1.0f, A, B, 0.0f, C, options);
}

// C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b] for every b of the rank-3 (batch-first) C.
// A or B may be a rank-2 view: one matrix shared by the whole batch (batch stride 0).
template <class ExecSpace, class AV, class BV, class CV>
void batched_gemm(const ExecSpace& space, Op op_a, Op op_b, float alpha, const AV& A, const BV& B,
                  float beta, const CV& C, const Options& options = {}) {
  static_assert(CV::rank == 3, "kgemm::batched_gemm writes a rank-3 (batch, rows, cols) C");
  if ((AV::rank == 3 && A.extent(0) != C.extent(0)) || (BV::rank == 3 && B.extent(0) != C.extent(0)))
    throw InvalidArgument("batched_gemm batch counts differ: A " + std::to_string(batch_extent(A)) + ", B " +
                          std::to_string(batch_extent(B)) + ", C " + std::to_string(batch_extent(C)));
  detail::run(space, op_a, op_b, alpha, A, B, beta, C, options);
}

}  // namespace kgemm
