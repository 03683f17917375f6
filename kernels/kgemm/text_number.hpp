#pragma once
// Numbers read from text (config strings, problem keys, store fields, command lines): the whole
// text must be the number, in range, in any locale. std::stoi and sscanf("%d") accept trailing
// junk, and wrap or fail with messages that name nothing ("stoi") on values past int. And numbers
// written as text that reads back as the same number.
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace kgemm {

// The integer `text` spells when it is one within [min, max]; nullopt otherwise.
template <class Int>
std::optional<Int> integer_in(std::string_view text, Int min, Int max) {
  Int value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value < min || value > max) return std::nullopt;
  return value;
}

// Why `text` is not integer_in(text, min, max): "'<text>' is not an integer from <min> to <max>".
inline std::string not_an_integer(std::string_view text, long long min, long long max) {
  return "'" + std::string(text) + "' is not an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

// The finite number `text` spells when it is at least `min`; nullopt otherwise (nan and inf
// included: a measurement or a budget is never either).
inline std::optional<double> finite_at_least(std::string_view text, double min) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || !std::isfinite(value) || value < min) return std::nullopt;
  return value;
}

// The shortest text that reads back as the same double: readable, and the round trip is exact.
inline std::string shortest(double value) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

}  // namespace kgemm
