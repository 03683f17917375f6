#include "store_reader.hpp"

#include <climits>
#include <cmath>
#include <charconv>
#include <exception>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "kgemm/spaces/error.hpp"
#include "kgemm/text_number.hpp"
#include "store_yaml.hpp"

namespace kgemm::detail {

namespace {

using store_yaml::Mark;
using store_yaml::Node;

// What a field's own parser below throws when the text is not what the field's description says;
// FieldReader::parsed turns it into a StoreError quoting that description.
struct NotExpected : std::exception {};

// Whole-text numbers in range; throws NotExpected otherwise.
template <class T>
T required(const std::optional<T>& value) {
  if (!value) throw NotExpected{};
  return *value;
}

std::pair<char, char> parse_orders(const std::string& text) {
  const auto is_order = [](char c) { return c == 'n' || c == 't'; };
  if (text.size() != 2 || !is_order(text[0]) || !is_order(text[1])) throw NotExpected{};
  return {text[0], text[1]};
}

// Well-formed UTF-8: no stray continuation bytes, overlong forms, surrogates or values past U+10FFFF.
bool is_utf8(const std::string& text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0, n = text.size(); i < n;) {
    const unsigned char lead = bytes[i];
    const int length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > n) return false;
    unsigned code = length == 1 ? lead : lead & (0x7F >> length);
    for (int k = 1; k < length; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) return false;
      code = code << 6 | (bytes[i + k] & 0x3F);
    }
    const unsigned smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

// The fields of one YAML mapping. Every failure is a StoreError naming the file, the line and
// column, and the field's path in the file ("entries[3].config"). A strict reader (a writer's
// load) refuses, in finish(), every key no read asked for: a rewrite would drop it.
class FieldReader {
 public:
  FieldReader(const std::string& file, const Node& map, const std::string& name, bool strict)
      : file_(file), map_(map), name_(name), strict_(strict), asked_(map.map.size()) {
    if (map_.kind != Node::Kind::Map) fail(map_, (name_.empty() ? "the file" : name_) + " is not a mapping of keys to values");
  }

  bool has(const char* key) const { return find(key) != nullptr; }

  const Node& node(const char* key) const {
    const Node* value = find(key);
    if (!value) fail(map_, "'" + path_of(key) + "' is missing");
    return *value;
  }
  FieldReader map(const char* key) const { return FieldReader(file_, node(key), path_of(key), strict_); }
  // The mappings of the list under `key`.
  std::vector<FieldReader> maps(const char* key) const {
    const Node& list = node(key);
    if (list.kind != Node::Kind::List) fail(list, path_of(key) + " is not a list");
    std::vector<FieldReader> items;
    for (std::size_t i = 0; i < list.list.size(); ++i)
      items.emplace_back(file_, list.list[i], path_of(key) + "[" + std::to_string(i) + "]", strict_);
    return items;
  }

  std::string text(const char* key) const {
    const Node& value = node(key);
    if (value.kind != Node::Kind::Scalar) fail(value, path_of(key) + " is not a single value");
    // The emitter replaces bytes that are not UTF-8, so such a value would not survive a save.
    if (!is_utf8(value.scalar)) fail(value, path_of(key) + " is not UTF-8 text");
    return value.scalar;
  }

  // parse(text) throws a kgemm::Error giving its own reason, or NotExpected (or any other
  // exception) saying nothing more, when the text is not what expected() describes (built only
  // then: a store's every field is read through here).
  template <class Expected, class Parse>
  auto parsed(const char* key, Expected expected, Parse parse) const {
    const std::string value = text(key);
    try {
      return parse(value);
    } catch (const Error& e) {
      // The parser's own reason says more than `expected`.
      fail(node(key), path_of(key) + ": '" + value + "' is not " + std::string(expected()) + " (" + e.reason() + ")");
    } catch (const std::exception&) {
      fail(node(key), path_of(key) + ": '" + value + "' is not " + std::string(expected()));
    }
  }
  template <class Parse>
  auto parsed(const char* key, const char* expected, Parse parse) const {
    return parsed(key, [&] { return expected; }, parse);
  }
  int integer(const char* key, int min) const {
    return parsed(key, [&] { return "an integer from " + std::to_string(min) + " to " + std::to_string(INT_MAX); },
                  [&](const std::string& t) { return required(integer_in(t, min, INT_MAX)); });
  }
  // Measurements: finite, at most `max`, and positive unless `zero_allowed` (a default that
  // failed is 0).
  double measurement(const char* key, bool zero_allowed, double max = HUGE_VAL) const {
    const auto expected = [&] {
      return std::string(zero_allowed ? "a finite number >= 0" : "a finite number > 0") +
             (max < HUGE_VAL ? " and at most " + shortest(max) : "");
    };
    return parsed(key, expected, [&](const std::string& t) {
      const double value = required(finite_at_least(t, 0.0));
      if ((value == 0 && !zero_allowed) || value > max) throw NotExpected{};
      return value;
    });
  }
  double rate(const char* key, bool zero_allowed) const { return measurement(key, zero_allowed, kMaxStoreGflops); }

  // A strict reader's check that every key was read.
  void finish() const {
    if (!strict_) return;
    for (std::size_t i = 0; i < asked_.size(); ++i)
      if (!asked_[i])
        throw StoreError(file_, store_yaml::position(map_.map[i].key_mark) + "'" + path_of(map_.map[i].key.c_str()) +
                                    "' is not a field this kgemm knows, and rewriting the store would drop it: use "
                                    "the kgemm that wrote the store, or remove the field");
  }

  const std::string& name() const { return name_; }
  bool strict() const { return strict_; }

  [[noreturn]] void fail(const Node& at, const std::string& what) const {
    throw StoreError(file_, store_yaml::position(at.mark) + what);
  }

 private:
  const Node* find(const char* key) const {
    for (std::size_t i = 0; i < map_.map.size(); ++i)
      if (map_.map[i].key == key) {
        asked_[i] = true;
        return &map_.map[i].value;
      }
    return nullptr;
  }
  std::string path_of(const char* key) const { return name_.empty() ? key : name_ + "." + key; }

  const std::string& file_;
  const Node& map_;
  std::string name_;
  bool strict_;
  mutable std::vector<bool> asked_;  // per key of the mapping: read
};

StoreHeader read_header(const FieldReader& root) {
  const FieldReader device = root.map("device");
  // memory_gbps is optional: stores written before it was recorded leave it out (0: not known).
  // Field by field: when a later field throws, g++ 12 destroys a half-built nested aggregate
  // whose members have default initializers twice (a double free of the device's strings).
  StoreHeader header;
  header.device = {device.text("space"), device.text("name"), device.text("arch"), device.integer("threads", 0),
                   device.has("memory_gbps") ? device.measurement("memory_gbps", true) : 0.0};
  header.kokkos_version = root.text("kokkos");
  header.kgemm_version = root.text("kgemm");
  header.date = root.text("date");
  device.finish();
  // A store without a format was written before formats were numbered: format 1.
  const int format = root.has("format") ? root.integer("format", 1) : 1;
  if (format > kStoreFormat && root.strict())
    root.fail(root.node("format"), "format " + std::to_string(format) + " is newer than this kgemm's (" +
                                       std::to_string(kStoreFormat) + "), and rewriting the store would drop what " +
                                       "this kgemm cannot read: use kgemm " + header.kgemm_version +
                                       " (which wrote it) or newer");
  return header;
}

TunedEntry read_entry(const FieldReader& fields) {
  TunedEntry entry;
  Problem& p = entry.problem;
  p.kernel = fields.parsed("kernel", "gemm, batched or sharedb", parse_kernel);
  p.dtype = fields.parsed("dtype", "f32 or f16", parse_dtype);
  std::tie(p.a_order, p.b_order) = fields.parsed("order", "nn, nt, tn or tt", parse_orders);
  p.m = fields.integer("m", 1);
  p.n = fields.integer("n", 1);
  p.k = fields.integer("k", 1);
  p.batch = fields.integer("batch", 1);
  const auto config_text = [] { return "a config string like " + to_string(Config{}); };
  entry.config = fields.parsed("config", config_text, parse_config);
  if (const std::string why = why_invalid(p); !why.empty()) fields.fail(fields.node("m"), fields.name() + ": " + why);
  entry.gflops = fields.rate("gflops", false);
  entry.default_gflops = fields.rate("default_gflops", true);
  entry.candidates = fields.integer("candidates", 0);
  // Entries written before generations were recorded were measured on generation 0's kernels.
  entry.generation = fields.has("generation") ? fields.integer("generation", 0) : 0;
  if (fields.has("runners_up")) {
    for (const FieldReader& item : fields.maps("runners_up")) {
      entry.runners_up.push_back({item.parsed("config", config_text, parse_config), item.rate("gflops", false)});
      item.finish();
    }
    // What the fields' readers leave to check: each runner-up of a class of its own.
    if (const std::string why = why_bad(entry); !why.empty()) fields.fail(fields.node("runners_up"), fields.name() + ": " + why);
  }
  fields.finish();
  return entry;
}

}  // namespace

ConfigStore read_store(const std::string& path, std::string_view text, std::vector<std::string>* refused) {
  const bool strict = refused == nullptr;
  // Each entry read as the parser reaches it and kept in store order, with where it is.
  struct Located {
    TunedEntry entry;
    std::size_t index;
    int line;
  };
  const auto name_of = [](std::size_t index) { return "entries[" + std::to_string(index) + "]"; };
  std::map<Problem, Located, StoreOrder> entries;
  const Node root = store_yaml::parse(path, text, "entries", [&](Node&& item, std::size_t index) {
    try {
      const FieldReader fields(path, item, name_of(index), strict);
      const TunedEntry entry = read_entry(fields);
      const auto [seen, first] = entries.emplace(entry.problem, Located{entry, index, item.mark.line});
      if (!first)
        fields.fail(item, name_of(index) + " repeats the problem " + to_string(entry.problem) + " of " +
                              name_of(seen->second.index) + " on line " + std::to_string(seen->second.line) +
                              "; keep one of them");
    } catch (const StoreError& e) {
      if (strict) throw;
      refused->push_back(e.what());
    }
  });
  const FieldReader fields(path, root, "", strict);
  ConfigStore store;
  store.header = read_header(fields);
  if (fields.node("entries").kind != Node::Kind::List) fields.fail(fields.node("entries"), "'entries' is not a list");
  fields.finish();
  for (const auto& [problem, located] : entries) store.put(located.entry);
  return store;
}

}  // namespace kgemm::detail
