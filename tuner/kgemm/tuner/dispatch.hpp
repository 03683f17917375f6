#pragma once
// Runtime dispatch: which Config a call on `problem` gets on this execution space. The device's
// tuned store answers with the problem's own entry or the nearest tuned shape, provided that
// config can run here; otherwise the space default runs.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "kgemm/config.hpp"
#include "kgemm/launch.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/spaces/space_traits.hpp"
#include "kgemm/tuner/store_registry.hpp"

namespace kgemm {

namespace detail {

// Operands with `problem`'s extents and access orders but no data: enough to validate a config.
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

// Why `config` cannot run `problem` on ExecSpace (validate_gemm's message); empty when it can.
template <class ExecSpace>
std::string why_illegal(const Problem& problem, const Config& config, Accum accum = Accum::F32) {
  try {
    if (problem.dtype == DType::F32)
      validate_gemm<ExecSpace, float>(operands_without_data<float>(problem), config, accum);
    else
      validate_gemm<ExecSpace, half>(operands_without_data<half>(problem), config, accum);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace detail

// Stores are tuned with fp32 accumulation; a call accumulating in fp16 takes only the entries
// that can (not tensor-core ones), else the space's fp32 default.
template <class ExecSpace>
Config select_config(const Problem& problem, Accum accum = Accum::F32) {
  const auto tuned = tuned_configs(ExecSpace::name(), [] { return device_info<ExecSpace>(); });
  const auto check = [accum](const Problem& p, const Config& c) { return detail::why_illegal<ExecSpace>(p, c, accum); };
  const auto fallback = [&] {
    const Config for_dtype = SpaceTraits<ExecSpace>::default_config(problem.dtype);
    return check(problem, for_dtype).empty() ? for_dtype : SpaceTraits<ExecSpace>::default_config();
  };
  return tuned->select(problem, accum, fallback, check);
}

}  // namespace kgemm
