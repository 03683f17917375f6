#pragma once
// Whether the calls a tuning run times find their operands in cache (no Kokkos: the command-line
// parsers read it, and they are also built without Kokkos: tests/fuzz).
#include <string>

#include "kgemm/spaces/error.hpp"

namespace kgemm {

// Whether the calls a tuning run times find their operands in cache. Warm: every call on the
// same operands, as a loop over one layer's call sees them. Cold: each call on the next of a
// ring of operand sets too large for the cache (operand_ring_size.hpp), as the benchmarks time a
// call: on a host a cold call may run at half a warm one's rate and rank configs otherwise
// (docs/tuning.md, "Warm or cold operands").
enum class OperandCache { Warm, Cold };

inline OperandCache parse_operand_cache(const std::string& text) {
  if (text == "warm") return OperandCache::Warm;
  if (text == "cold") return OperandCache::Cold;
  throw InvalidArgument("unknown operands '" + text + "' (expected warm or cold)");
}
inline const char* to_string(OperandCache operands) { return operands == OperandCache::Cold ? "cold" : "warm"; }

}  // namespace kgemm
