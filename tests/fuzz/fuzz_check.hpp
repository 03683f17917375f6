#pragma once
// What the libFuzzer targets share: a property that fails stops the run like a crash (libFuzzer
// saves the input as an artifact and the ctest step fails), with a line saying which property
// and the input, printable.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

}  // namespace kgemm::fuzz
