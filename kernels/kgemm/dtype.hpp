#pragma once
// Element types: what is stored (fp32 or fp16) and what the micro-tiles accumulate in.
#include <string>
#include <type_traits>

#include "kgemm/spaces/compat.hpp"
#include "kgemm/spaces/error.hpp"

namespace kgemm {

enum class DType { F32, F16 };
// fp16 data accumulates in fp32 unless F16 is asked for explicitly; fp32 data always in fp32.
enum class Accum { F32, F16 };

template <class Scalar>
constexpr DType dtype_of() {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, half>::value,
                "kgemm supports float and kgemm::half elements");
  return std::is_same<Scalar, float>::value ? DType::F32 : DType::F16;
}

// Store keys and problem strings spell a dtype "f32"; tools, reports and users "fp32".
inline const char* to_string(DType t) { return t == DType::F32 ? "f32" : "f16"; }
inline const char* dtype_name(DType t) { return t == DType::F32 ? "fp32" : "fp16"; }
inline const char* to_string(Accum a) { return a == Accum::F32 ? "f32" : "f16"; }

inline DType parse_dtype(const std::string& text) {
  if (text == "f32" || text == "fp32") return DType::F32;
  if (text == "f16" || text == "fp16") return DType::F16;
  throw InvalidArgument("unknown dtype '" + text + "' (expected fp32 or fp16)");
}

}  // namespace kgemm
