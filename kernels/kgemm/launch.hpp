#pragma once
// Runs one GEMM with an explicit Config: validates, then launches the compiled variant.
// Instantiated in the library for each enabled space and for float / kgemm::half.
#include <algorithm>
#include <cstddef>
#include <string>

#include "kgemm/config.hpp"
#include "kgemm/dtype.hpp"
#include "kgemm/matrix_ref.hpp"
#include "kgemm/operand_layout.hpp"
#include "kgemm/problem.hpp"

namespace kgemm {

// Why the call cannot run on ExecSpace, naming the value, the limit and the fix (empty when it
// can): operands whose extents disagree, a malformed config (why_malformed), or one this space
// cannot run (slab buffers, tensor cores, team or scratch over the device's limits, counts past
// the kernels' integers). The one legality check: launches, dispatch and the tuner all ask it.
template <class ExecSpace, class Scalar>
std::string why_illegal(const GemmArgs<Scalar>& args, const Config& config, Accum accum = Accum::F32);

// Throws InvalidArgument with why_illegal's reason when the call cannot run.
template <class ExecSpace, class Scalar>
void launch_gemm(const ExecSpace& space, const GemmArgs<Scalar>& args, const Config& config,
                 Accum accum = Accum::F32);

// Operands with `problem`'s extents and access orders but no data: enough to check a config.
template <class Scalar>
GemmArgs<Scalar> operands_without_data(const Problem& p) {
  using In = MatrixRef<const Scalar>;
  GemmArgs<Scalar> args;
  // Order 'n': op(A)'s K (op(B)'s N) dimension is contiguous.
  args.A = p.a_order == 'n' ? In(nullptr, p.m, p.k, p.k, 1, 0) : In(nullptr, p.m, p.k, 1, p.m, 0);
  args.B = p.b_order == 'n' ? In(nullptr, p.k, p.n, p.n, 1, 0) : In(nullptr, p.k, p.n, 1, p.k, 0);
  args.C = MatrixRef<Scalar>(nullptr, p.m, p.n, p.n, 1, std::max<std::ptrdiff_t>(1, std::ptrdiff_t(p.m) * p.n));
  args.batch = p.batch;
  return args;
}

// `problem`'s operands laid out as well as any kernel asks: operands_without_data's with every
// stride but a unit one padded to whole kMostAlignmentChecked-byte runs. A config that cannot run
// these cannot run the problem however its operands lie.
template <class Scalar>
GemmArgs<Scalar> best_laid_operands(const Problem& p) {
  constexpr std::ptrdiff_t run = kMostAlignmentChecked / std::ptrdiff_t(sizeof(Scalar));
  const auto padded = [](auto m) {
    const auto pad = [](std::ptrdiff_t stride) { return stride == 1 ? stride : (stride + run - 1) / run * run; };
    m.row_stride = pad(m.row_stride);
    m.col_stride = pad(m.col_stride);
    m.batch_stride = pad(m.batch_stride);
    return m;
  };
  GemmArgs<Scalar> args = operands_without_data<Scalar>(p);
  args.A = padded(args.A);
  args.B = padded(args.B);
  args.C = padded(args.C);
  return args;
}

// How `problem`'s operands lie when they are contiguous and aligned (operands_without_data's).
inline OperandLayout contiguous_layout(const Problem& p) {
  return p.dtype == DType::F32 ? operand_layout(operands_without_data<float>(p)) : operand_layout(operands_without_data<half>(p));
}

// Why `config` cannot run `problem` on ExecSpace (empty when it can).
template <class ExecSpace>
std::string why_illegal(const Problem& problem, const Config& config, Accum accum = Accum::F32) {
  if (std::string why = why_invalid(problem); !why.empty()) return "problem " + to_string(problem) + ": " + why;
  return problem.dtype == DType::F32 ? why_illegal<ExecSpace, float>(operands_without_data<float>(problem), config, accum)
                                     : why_illegal<ExecSpace, half>(operands_without_data<half>(problem), config, accum);
}

}  // namespace kgemm
