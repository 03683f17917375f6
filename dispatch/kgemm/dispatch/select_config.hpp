#pragma once
// Runtime dispatch: which Config a call on `problem` gets on this execution space. The device's
// tuned store answers with the problem's own entry, else the stored config the dispatch model
// predicts fastest on it (dispatch_model.hpp), provided that config can run here; otherwise the
// space default runs.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "kgemm/config.hpp"
#include "kgemm/dispatch/store_registry.hpp"
#include "kgemm/launch.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/tuning_policy.hpp"

namespace kgemm {

namespace detail {

// Calls f(tuned configs, fallback, check) for the space's store and a call accumulating in
// `accum`. Stores are tuned with fp32 accumulation; a call accumulating in fp16 takes only the
// entries that can (not tensor-core ones), else the space's fp32 default.
template <class ExecSpace, class F>
auto with_tuned_configs(const Problem& problem, Accum accum, F&& f) {
  const auto tuned = tuned_configs(ExecSpace::name(), [] { return device_info<ExecSpace>(); });
  const auto check = [accum](const Problem& p, const Config& c) { return why_illegal<ExecSpace>(p, c, accum); };
  const auto fallback = [&] {
    const Config for_dtype = TuningPolicy<ExecSpace>::default_config(problem.dtype);
    return check(problem, for_dtype).empty() ? for_dtype : TuningPolicy<ExecSpace>::default_config();
  };
  return f(*tuned, fallback, check);
}

}  // namespace detail

template <class ExecSpace>
Config select_config(const Problem& problem, Accum accum = Accum::F32) {
  return detail::with_tuned_configs<ExecSpace>(problem, accum, [&](TunedConfigs& tuned, const auto& fallback, const auto& check) {
    return tuned.select(problem, accum, fallback, check);
  });
}

// select_config's choice with its reasons: the source entry and the model's factors (tools' --why).
template <class ExecSpace>
DispatchChoice explain_config(const Problem& problem, Accum accum = Accum::F32) {
  return detail::with_tuned_configs<ExecSpace>(problem, accum, [&](TunedConfigs& tuned, const auto& fallback, const auto& check) {
    return tuned.explain(problem, fallback, check);
  });
}

}  // namespace kgemm
