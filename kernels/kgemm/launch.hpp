#pragma once
// Runs one GEMM with an explicit Config: validates, then launches the compiled variant.
// Instantiated in the library for each enabled space and for float / kgemm::half.
#include "kgemm/config.hpp"
#include "kgemm/dtype.hpp"
#include "kgemm/matrix_ref.hpp"

namespace kgemm {

// Throws std::invalid_argument, naming the value, the limit and the fix, when the operands'
// extents disagree or the config cannot run on this space (not a variant, tile not a multiple
// of the micro-tile, team or scratch over the device's limits).
template <class ExecSpace, class Scalar>
void launch_gemm(const ExecSpace& space, const GemmArgs<Scalar>& args, const Config& config,
                 Accum accum = Accum::F32);

// Same checks, no launch: the tuner uses it to filter candidates.
template <class ExecSpace, class Scalar>
void validate_gemm(const GemmArgs<Scalar>& args, const Config& config, Accum accum = Accum::F32);

}  // namespace kgemm
