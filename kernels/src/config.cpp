#include "kgemm/config.hpp"

#include <sstream>
#include <stdexcept>

namespace kgemm {

namespace {
struct Field {
  const char* key;
  int Config::*member;
};
constexpr const char* kTensorCores = "_tc";
constexpr Field kFields[] = {{"mb", &Config::mb}, {"nb", &Config::nb}, {"kb", &Config::kb},
                             {"tm", &Config::tm}, {"tn", &Config::tn}, {"team", &Config::team}};
}  // namespace

std::string to_string(const Config& config) {
  std::ostringstream out;
  for (const Field& field : kFields) {
    if (&field != kFields) out << '_';
    out << field.key << config.*field.member;
  }
  if (config.tc) out << kTensorCores;
  return out.str();
}

Config parse_config(const std::string& text) {
  Config config;
  const std::string suffix = kTensorCores;
  config.tc = text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  std::istringstream in(config.tc ? text.substr(0, text.size() - suffix.size()) : text);
  std::string token;
  for (const Field& field : kFields) {
    const std::string key = field.key;
    if (!std::getline(in, token, '_') || token.compare(0, key.size(), key) != 0 ||
        token.size() == key.size() ||
        token.find_first_not_of("0123456789", key.size()) != std::string::npos) {
      throw std::invalid_argument("kgemm: '" + text + "' is not a config string: expected field '" +
                                  key + "<number>' (format mb64_nb64_kb32_tm4_tn4_team16)");
    }
    config.*field.member = std::stoi(token.substr(key.size()));
  }
  if (std::getline(in, token, '_')) {
    throw std::invalid_argument("kgemm: '" + text + "' is not a config string: unexpected '" + token +
                                "' after team (format mb64_nb64_kb32_tm4_tn4_team16, optionally ending in _tc)");
  }
  return config;
}

}  // namespace kgemm
