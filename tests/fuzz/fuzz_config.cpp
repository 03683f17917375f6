// libFuzzer target: kgemm::parse_config, the parser of config strings ("mb64_nb64_kb32_tm4_tn4_team16",
// from --config, stores and KGEMM_* settings). Properties checked on every input:
// - a refusal is a std::invalid_argument quoting the text (anything else escaping is a crash);
// - an accepted config prints (to_string) as a string that parses back to the same Config, and
//   printing that again gives the same string: the canonical form is a fixed point;
// - an accepted config's derived sizes (micro-tiles, tiles per thread) are defined (no division
//   by zero and no overflow, which UBSan reports) and at least 1: a config whose block holds no
//   micro-tile would leave C unwritten.
#include "fuzz_check.hpp"
#include "kgemm/config.hpp"

using kgemm::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = kgemm::fuzz::text_of(data, size);
  const auto parse = [](const std::string& t) { return kgemm::parse_config(t); };
  const auto print = [](const kgemm::Config& c) { return kgemm::to_string(c); };
  const std::optional<kgemm::Config> config = kgemm::fuzz::parses_canonically(parse, print, text);
  if (config)
    require(config->micro_tiles() >= 1 && config->tiles_per_thread() >= 1,
            "the config covers its block with micro-tiles (" + print(*config) + ")", text);
  return 0;
}
