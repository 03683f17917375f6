// libFuzzer target: kgemm::ConfigStore::load, the reader of tuned-config stores (YAML files that
// users edit, merge and copy between machines). The input is written to a file and loaded;
// properties checked on every input:
// - a refusal is a kgemm::StoreError naming the file (anything else escaping is a crash);
// - nothing is lost silently: the strict load keeps one entry per item of the file's `entries`
//   list, and the lenient load (the library's readers) keeps or names each item, taking the
//   same entries as the strict one when it names none;
// - every loaded entry could be posed and measured: extents >= 1 whose operands fit 64-bit
//   offsets, finite non-negative speeds, a config that prints and parses back to itself and
//   whose block holds micro-tiles (sizes defined, at least 1);
// - a store the strict load (writers) refuses without a bad entry holds something this build
//   cannot write back (an unknown field, a newer format), and the writer's path (open) refuses
//   it too, the file untouched: nothing is dropped by a rewrite;
// - save then load gives the same header and entries, and saving that again the same text.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "fuzz_check.hpp"
#include "kgemm/dispatch/config_store.hpp"

using kgemm::fuzz::require;

namespace {

// A directory of this process' own for the input and the saved copy (saving writes a temp file
// beside the target and renames it).
const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "kgemm-fuzz-store-XXXXXX").string();
    if (!mkdtemp(pattern.data())) std::abort();
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) std::abort();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Items in the file's `entries` list as yaml-cpp reads it: a second reader of the same text (the
// store's own reads the subset of YAML that stores are written in). None where yaml-cpp cannot
// read it: yaml-cpp refuses some YAML of that subset (a '?' inside a plain value, for one).
std::optional<std::size_t> listed_entries(const std::string& path) {
  try {
    return YAML::LoadFile(path)["entries"].size();
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

// Whether a strict load's refusal is of something this build reads but cannot write back.
bool unrepresentable(const std::string& message) {
  return message.find("is not a field this kgemm knows") != std::string::npos ||
         message.find("is newer than this kgemm's") != std::string::npos;
}

bool addressable(const kgemm::Problem& p) {
  std::int64_t elements = 0;
  for (const auto& [rows, cols] : {std::pair{p.m, p.k}, {p.k, p.n}, {p.m, p.n}})
    if (__builtin_mul_overflow(std::int64_t(rows) * cols, std::int64_t(p.batch), &elements)) return false;
  return true;
}

void check_entry(const kgemm::TunedEntry& e, const std::string& input) {
  const kgemm::Problem& p = e.problem;
  const std::string key = kgemm::to_string(p) + " " + kgemm::to_string(e.config);
  require(p.m >= 1 && p.n >= 1 && p.k >= 1 && p.batch >= 1, "loaded extents are >= 1: " + key, input);
  require(addressable(p), "loaded operands fit 64-bit offsets: " + key, input);
  require(std::isfinite(e.gflops) && e.gflops >= 0 && std::isfinite(e.default_gflops) && e.default_gflops >= 0,
          "loaded speeds are finite and >= 0: " + key, input);
  require(e.candidates >= 0, "loaded candidate count is >= 0: " + key, input);
  require(e.generation >= 0, "loaded kernel generation is >= 0: " + key, input);
  require(kgemm::parse_config(kgemm::to_string(e.config)) == e.config, "the loaded config prints and parses back: " + key,
          input);
  require(e.config.micro_tiles() >= 1 && e.config.tiles_per_thread() >= 1,
          "the loaded config covers its block with micro-tiles: " + key, input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = kgemm::fuzz::text_of(data, size);
  const std::string input = (scratch_dir() / "input.yaml").string(), saved = (scratch_dir() / "saved.yaml").string();
  write_file(input, text);
  const auto refusal_names_file = [&](const kgemm::StoreError& e) {
    require(std::string(e.what()).rfind("kgemm: " + input + ": ", 0) == 0,
            std::string("the refusal names the file: ") + e.what(), text);
  };
  // Lenient: a bad header still refuses the file; a bad entry is left out with a message.
  std::vector<std::string> refused;
  kgemm::ConfigStore lenient;
  try {
    lenient = kgemm::ConfigStore::load(input, &refused);
  } catch (const kgemm::StoreError& e) {
    refusal_names_file(e);
    return 0;
  }
  if (const std::optional<std::size_t> listed = listed_entries(input))
    require(lenient.entries().size() + refused.size() == *listed,
            "every listed entry is loaded or named as refused (" + std::to_string(lenient.entries().size()) + " + " +
                std::to_string(refused.size()) + " of " + std::to_string(*listed) + ")",
            text);
  for (const kgemm::TunedEntry& e : lenient.entries()) check_entry(e, text);

  kgemm::ConfigStore store;
  try {
    store = kgemm::ConfigStore::load(input);
  } catch (const kgemm::StoreError& e) {
    refusal_names_file(e);
    if (refused.empty()) {
      require(unrepresentable(e.what()),
              std::string("the strict load refuses only what the lenient one names, or what it cannot write back: ") +
                  e.what(),
              text);
      try {
        kgemm::ConfigStore::open(input, lenient.header.device);
        kgemm::fuzz::property_failed("the writer's open refuses what the strict load refuses", text);
      } catch (const kgemm::StoreError& refusal) {
        refusal_names_file(refusal);
      }
      require(read_file(input) == text, "a refused store's file is left as it was", text);
    }
    return 0;
  }
  require(refused.empty() && store.header == lenient.header && store.entries() == lenient.entries(),
          "the strict and the lenient load agree on a store without bad entries", text);

  store.save(saved);
  const std::string saved_text = read_file(saved);
  kgemm::ConfigStore reloaded;
  try {
    reloaded = kgemm::ConfigStore::load(saved);
  } catch (const kgemm::StoreError& e) {
    kgemm::fuzz::property_failed(std::string("the saved store loads: ") + e.what() + "\n  saved:\n" + saved_text, text);
  }
  require(reloaded.header == store.header, "the saved header reloads equal; saved:\n" + saved_text, text);
  require(reloaded.entries() == store.entries(), "the saved entries reload equal; saved:\n" + saved_text, text);
  reloaded.save(saved);
  require(read_file(saved) == saved_text, "saving is a fixed point; saved:\n" + saved_text, text);
  return 0;
}
