#pragma once
// Runtime dispatch: which Config a call on `problem` gets on this execution space.
#include "kgemm/config.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/space_traits.hpp"

namespace kgemm {

template <class ExecSpace>
Config select_config(const Problem& /*problem*/) {
  return SpaceTraits<ExecSpace>::default_config();
}

}  // namespace kgemm
