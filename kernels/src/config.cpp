#include "kgemm/config.hpp"

#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kgemm {

namespace {
struct Field {
  const char* key;
  int Config::*member;
  int absent = 0;  // optional fields: the value not written
};
constexpr const char* kTensorCores = "_tc";
constexpr const char* kFormat =
    "format mb64_nb64_kb32_tm4_tn4_team16, optionally followed by _ks<splits>, _bb<products per team>, "
    "_st<slab buffers> and _tc";

bool is_field(const std::string& token, const std::string& key) {
  return token.compare(0, key.size(), key) == 0 && token.size() > key.size() &&
         token.find_first_not_of("0123456789", key.size()) == std::string::npos;
}
constexpr Field kFields[] = {{"mb", &Config::mb}, {"nb", &Config::nb}, {"kb", &Config::kb},
                             {"tm", &Config::tm}, {"tn", &Config::tn}, {"team", &Config::team}};
// Fields after team, in this order, each written only when it differs from its `absent` value.
constexpr Field kOptionalFields[] = {{"ks", &Config::ks, 1}, {"bb", &Config::bb, 1}, {"st", &Config::stages, 0}};
}  // namespace

// Appends rather than streams: every launch names its kernel with this (the label profilers
// see), and an ostringstream costs about a microsecond, a tenth of a batch-1 call.
std::string to_string(const Config& config) {
  std::string out;
  out.reserve(64);
  const auto append = [&](const Field& field) {
    out += field.key;
    out += std::to_string(config.*field.member);
  };
  for (const Field& field : kFields) {
    if (&field != kFields) out += '_';
    append(field);
  }
  for (const Field& field : kOptionalFields)
    if (config.*field.member != field.absent) {
      out += '_';
      append(field);
    }
  if (config.tc) out += kTensorCores;
  return out;
}

Config parse_config(const std::string& text) {
  Config config;
  const std::string suffix = kTensorCores;
  config.tc = text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  std::istringstream in(config.tc ? text.substr(0, text.size() - suffix.size()) : text);
  std::string token;
  for (const Field& field : kFields) {
    const std::string key = field.key;
    if (!std::getline(in, token, '_') || !is_field(token, key)) {
      throw std::invalid_argument("kgemm: '" + text + "' is not a config string: expected field '" +
                                  key + "<number>' (" + kFormat + ")");
    }
    config.*field.member = std::stoi(token.substr(key.size()));
  }
  auto unexpected = [&](const std::string& what) {
    return std::invalid_argument("kgemm: '" + text + "' is not a config string: unexpected '" + what +
                                 "' after team (" + kFormat + ")");
  };
  const Field* next = std::begin(kOptionalFields);
  while (std::getline(in, token, '_')) {
    while (next != std::end(kOptionalFields) && !is_field(token, next->key)) ++next;
    if (next == std::end(kOptionalFields)) throw unexpected(token);
    config.*next->member = std::stoi(token.substr(std::string(next->key).size()));
    ++next;
  }
  return config;
}

}  // namespace kgemm
