#pragma once
// Names compared without case (space names, dtypes, options): one lower-casing for every layer.
#include <cctype>
#include <string>

namespace kgemm {

inline std::string lowercase(std::string text) {
  for (char& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

}  // namespace kgemm
