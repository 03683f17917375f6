// libFuzzer target: kgemm::parse_config, the parser of config strings ("mb64_nb64_kb32_tm4_tn4_team16",
// from --config, stores and KGEMM_* settings). Properties checked on every input:
// - a refusal is a std::invalid_argument quoting the text (anything else escaping is a crash);
// - an accepted config prints (to_string) as a string that parses back to the same Config, and
//   printing that again gives the same string: the canonical form is a fixed point;
// - an accepted config's derived sizes (micro-tiles, tiles per thread) are defined (no division
//   by zero and no overflow, which UBSan reports) and at least 1: a config whose block holds no
//   micro-tile would leave C unwritten.
#include <stdexcept>

#include "fuzz_check.hpp"
#include "kgemm/config.hpp"

using kgemm::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = kgemm::fuzz::text_of(data, size);
  kgemm::Config config;
  try {
    config = kgemm::parse_config(text);
  } catch (const std::invalid_argument& e) {
    require(kgemm::fuzz::names(e.what(), text), std::string("the refusal quotes the text: ") + e.what(), text);
    return 0;
  }
  const std::string printed = kgemm::to_string(config);
  kgemm::Config again;
  try {
    again = kgemm::parse_config(printed);
  } catch (const std::exception& e) {
    kgemm::fuzz::property_failed("the printed form '" + printed + "' parses: " + e.what(), text);
  }
  require(again == config, "the printed form '" + printed + "' parses to the same config", text);
  require(kgemm::to_string(again) == printed, "printing is a fixed point ('" + printed + "')", text);

  require(config.micro_tiles() >= 1 && config.tiles_per_thread() >= 1,
          "the config covers its block with micro-tiles (" + printed + ")", text);
  return 0;
}
