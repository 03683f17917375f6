#pragma once
// Runtime dispatch: which Config a call gets on this execution space. The device's tuned store
// answers with the call's problem's own entry, else the stored config the dispatch model predicts
// fastest on it (dispatch_model.hpp), provided that config can run the call's operands here;
// otherwise the space default runs.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kgemm/config.hpp"
#include "kgemm/dispatch/store_registry.hpp"
#include "kgemm/launch.hpp"
#include "kgemm/operand_layout.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/tuning_policy.hpp"

namespace kgemm {

namespace detail {

// Calls f(tuned configs, fallback, check, blame) for the space's store and a call on `operands`
// accumulating in `accum`: check(problem, config) says why config cannot run on those operands,
// blame(problem, config) why it cannot run the problem on any (best_laid_operands). Stores are
// tuned with fp32 accumulation; a call accumulating in fp16 takes only the entries that can (not
// tensor-core ones), else the space's fp32 default.
template <class ExecSpace, class Scalar, class F>
auto with_tuned_configs(const GemmArgs<Scalar>& operands, Accum accum, F&& f) {
  using Value = std::remove_const_t<Scalar>;
  const auto tuned = tuned_configs(ExecSpace::name(), [] { return device_info<ExecSpace>(); });
  const auto check = [&operands, accum](const Problem&, const Config& c) {
    return why_illegal<ExecSpace>(operands, c, accum);
  };
  const auto blame = [accum](const Problem& p, const Config& c) {
    return why_illegal<ExecSpace>(best_laid_operands<Value>(p), c, accum);
  };
  const auto fallback = [&] {
    const Config for_dtype = TuningPolicy<ExecSpace>::default_config(dtype_of<Value>());
    return check(Problem{}, for_dtype).empty() ? for_dtype : TuningPolicy<ExecSpace>::default_config();
  };
  return f(*tuned, fallback, check, blame);
}

// Calls f with a call on `problem`'s contiguous operands (operands_without_data).
template <class F>
auto with_contiguous_operands(const Problem& problem, F&& f) {
  return problem.dtype == DType::F32 ? f(operands_without_data<float>(problem)) : f(operands_without_data<half>(problem));
}

}  // namespace detail

// The config a call on `operands` runs (`batched`: a batched_gemm call): the best one legal for
// these operands, decided once per problem and operand layout.
template <class ExecSpace, class Scalar>
Config select_config(const GemmArgs<Scalar>& operands, bool batched, Accum accum = Accum::F32) {
  return detail::with_tuned_configs<ExecSpace>(
      operands, accum, [&](TunedConfigs& tuned, const auto& fallback, const auto& check, const auto& blame) {
        return tuned.select(problem_of(operands, batched), operand_layout(operands), accum, fallback, check, blame);
      });
}

// The config a call on `problem` with contiguous, aligned operands runs.
template <class ExecSpace>
Config select_config(const Problem& problem, Accum accum = Accum::F32) {
  return detail::with_contiguous_operands(problem, [&](const auto& operands) {
    return detail::with_tuned_configs<ExecSpace>(
        operands, accum, [&](TunedConfigs& tuned, const auto& fallback, const auto& check, const auto& blame) {
          return tuned.select(problem, operand_layout(operands), accum, fallback, check, blame);
        });
  });
}

// select_config's choice for a call on `operands` with its reasons, worked out afresh.
template <class ExecSpace, class Scalar>
DispatchChoice explain_config(const GemmArgs<Scalar>& operands, bool batched, Accum accum = Accum::F32) {
  return detail::with_tuned_configs<ExecSpace>(
      operands, accum, [&](TunedConfigs& tuned, const auto& fallback, const auto& check, const auto& blame) {
        return tuned.explain(problem_of(operands, batched), fallback, check, blame);
      });
}

// select_config's choice for contiguous operands with its reasons: the source entry and the
// model's factors (tools' --why).
template <class ExecSpace>
DispatchChoice explain_config(const Problem& problem, Accum accum = Accum::F32) {
  return detail::with_contiguous_operands(problem, [&](const auto& operands) {
    return detail::with_tuned_configs<ExecSpace>(
        operands, accum, [&](TunedConfigs& tuned, const auto& fallback, const auto& check, const auto& blame) {
          return tuned.explain(problem, fallback, check, blame);
        });
  });
}

}  // namespace kgemm
