#pragma once
// What the libFuzzer targets share: a property that fails stops the run like a crash (libFuzzer
// saves the input as an artifact and the ctest step fails), with a line saying which property
// and the input, printable.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace kgemm::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// `text` with bytes outside printable ASCII as \xNN, so the report shows exactly what was read.
inline std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char ch : text) {
    if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
      out += char(ch);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", ch);
      out += escaped;
    }
  }
  return out;
}

[[noreturn]] inline void property_failed(const std::string& property, const std::string& input) {
  std::fprintf(stderr, "\nkgemm fuzz: property failed: %s\n  input: '%s'\n", property.c_str(), printable(input).c_str());
  std::abort();
}

inline void require(bool holds, const std::string& property, const std::string& input) {
  if (!holds) property_failed(property, input);
}

// A refusal names what it refused: the message quotes the text (up to any NUL byte, which no
// message can carry).
inline bool names(const char* message, const std::string& text) {
  return std::string(message).find(text.substr(0, text.find('\0'))) != std::string::npos;
}

// The parser of a text form that names what it refuses and prints canonically: `parse(text)`
// either gives a value or throws std::invalid_argument quoting the text (anything else escaping
// is a crash); a value prints (`print`) as a text that parses back to the same value, and
// printing that is a fixed point. Returns the value, or nothing when the text was refused.
template <class Parse, class Print>
auto parses_canonically(Parse parse, Print print, const std::string& text) -> std::optional<decltype(parse(text))> {
  decltype(parse(text)) value;
  try {
    value = parse(text);
  } catch (const std::invalid_argument& e) {
    require(names(e.what(), text), std::string("the refusal quotes the text: ") + e.what(), text);
    return std::nullopt;
  }
  const std::string printed = print(value);
  decltype(parse(text)) again;
  try {
    again = parse(printed);
  } catch (const std::exception& e) {
    property_failed("the printed form '" + printed + "' parses: " + e.what(), text);
  }
  require(again == value, "the printed form '" + printed + "' parses to the same value", text);
  require(print(again) == printed, "printing is a fixed point ('" + printed + "')", text);
  return value;
}

}  // namespace kgemm::fuzz
