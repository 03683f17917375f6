#include "kgemm/dispatch/config_store.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <climits>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "kgemm/spaces/compat.hpp"
#include "kgemm/text_number.hpp"
#include "store_file.hpp"

namespace kgemm {

StoreError::StoreError(const std::string& path, const std::string& what)
    : std::runtime_error("kgemm: " + path + ": " + what) {}

bool StoreOrder::operator()(const Problem& x, const Problem& y) const {
  return std::tie(x.kernel, x.dtype, x.a_order, x.b_order, x.batch, x.m, x.n, x.k) <
         std::tie(y.kernel, y.dtype, y.a_order, y.b_order, y.batch, y.m, y.n, y.k);
}

StoreHeader StoreHeader::stamped(const DeviceInfo& device) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {device, kokkos_version_string(), KGEMM_VERSION, date};
}

namespace {

// The shortest text that reads back as the same double: readable, and the round trip is exact.
std::string shortest(double value) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

// Whole-text numbers in range; throws std::invalid_argument otherwise.
template <class T>
T required(const std::optional<T>& value) {
  if (!value) throw std::invalid_argument("out of range");
  return *value;
}

std::pair<char, char> parse_orders(const std::string& text) {
  const auto is_order = [](char c) { return c == 'n' || c == 't'; };
  if (text.size() != 2 || !is_order(text[0]) || !is_order(text[1])) throw std::invalid_argument(text);
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

std::string position(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) + ": ";
}

// The fields of one YAML mapping. Every failure is a StoreError naming the file, the line and
// column, and the field's path in the file ("entries[3].config").
class FieldReader {
 public:
  FieldReader(const std::string& file, const YAML::Node& map, const std::string& name)
      : file_(file), map_(map), name_(name) {
    if (!map_.IsMap()) fail(map_, (name_.empty() ? "the file" : name_) + " is not a mapping of keys to values");
  }

  bool has(const char* key) const { return bool(map_[key]); }

  YAML::Node node(const char* key) const {
    const YAML::Node value = map_[key];
    if (!value) fail(map_, "'" + path_of(key) + "' is missing");
    return value;
  }
  FieldReader map(const char* key) const { return FieldReader(file_, node(key), path_of(key)); }

  std::string text(const char* key) const {
    const YAML::Node value = node(key);
    if (!value.IsScalar()) fail(value, path_of(key) + " is not a single value");
    // The emitter replaces bytes that are not UTF-8, so such a value would not survive a save.
    if (!is_utf8(value.Scalar())) fail(value, path_of(key) + " is not UTF-8 text");
    return value.Scalar();
  }

  // parse(text) throws when the text is not what `expected` describes.
  template <class Parse>
  auto parsed(const char* key, const std::string& expected, Parse parse) const {
    const std::string value = text(key);
    try {
      return parse(value);
    } catch (const std::exception& e) {
      // The parser's own reason, when it gives one, says more than `expected`.
      const std::string reason = e.what(), prefix = "kgemm: ";
      fail(map_[key], path_of(key) + ": '" + value + "' is not " + expected +
                          (reason.rfind(prefix, 0) == 0 ? " (" + reason.substr(prefix.size()) + ")" : ""));
    }
  }
  int integer(const char* key, int min) const {
    return parsed(key, "an integer from " + std::to_string(min) + " to " + std::to_string(INT_MAX),
                  [&](const std::string& t) { return required(integer_in(t, min, INT_MAX)); });
  }
  // Measurements: finite, and positive unless `zero_allowed` (a default that failed is 0).
  double measurement(const char* key, bool zero_allowed) const {
    return parsed(key, zero_allowed ? "a finite number >= 0" : "a finite number > 0", [&](const std::string& t) {
      const double value = required(finite_at_least(t, 0.0));
      if (value == 0 && !zero_allowed) throw std::invalid_argument(t);
      return value;
    });
  }

  const std::string& name() const { return name_; }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    throw StoreError(file_, position(at.Mark()) + what);
  }

 private:
  std::string path_of(const char* key) const { return name_.empty() ? key : name_ + "." + key; }

  const std::string& file_;
  YAML::Node map_;
  std::string name_;
};

StoreHeader read_header(const FieldReader& root) {
  const FieldReader device = root.map("device");
  // memory_gbps is optional: stores written before it was recorded leave it out (0: not known).
  return {{device.text("space"), device.text("name"), device.text("arch"), device.integer("threads", 0),
           device.has("memory_gbps") ? device.measurement("memory_gbps", true) : 0.0},
          root.text("kokkos"),
          root.text("kgemm"),
          root.text("date")};
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
  entry.config = fields.parsed("config", "a config string like " + to_string(Config{}), parse_config);
  if (const std::string why = why_invalid(p); !why.empty()) fields.fail(fields.node("m"), fields.name() + ": " + why);
  entry.gflops = fields.measurement("gflops", false);
  entry.default_gflops = fields.measurement("default_gflops", true);
  entry.candidates = fields.integer("candidates", 0);
  return entry;
}

// One flow mapping per entry keeps each entry on one line: diffs show exactly what changed.
std::string to_yaml(const ConfigStore& store) {
  const StoreHeader& h = store.header;
  YAML::Emitter out;
  out << YAML::Comment("kgemm tuned configurations (written by autotune; edit with care)") << YAML::BeginMap;
  out << "device" << YAML::Flow << YAML::BeginMap << "space" << h.device.space << "name" << h.device.device
      << "arch" << h.device.arch << "threads" << h.device.threads;
  if (h.device.memory_gbps > 0) out << "memory_gbps" << shortest(h.device.memory_gbps);
  out << YAML::EndMap;
  out << "kokkos" << h.kokkos_version << "kgemm" << h.kgemm_version << "date" << h.date;
  out << "entries";
  if (store.entries().empty()) out << YAML::Flow;
  out << YAML::BeginSeq;
  for (const TunedEntry& e : store.entries()) {
    const Problem& p = e.problem;
    out << YAML::Flow << YAML::BeginMap << "kernel" << to_string(p.kernel)
        << "dtype" << to_string(p.dtype) << "order" << std::string{p.a_order, p.b_order} << "m" << p.m << "n"
        << p.n << "k" << p.k << "batch" << p.batch << "config" << to_string(e.config) << "gflops"
        << shortest(e.gflops) << "default_gflops" << shortest(e.default_gflops) << "candidates" << e.candidates
        << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

template <class Entries>
auto position_of(Entries& entries, const Problem& problem) {
  return std::lower_bound(entries.begin(), entries.end(), problem,
                          [](const TunedEntry& e, const Problem& p) { return StoreOrder()(e.problem, p); });
}

}  // namespace

ConfigStore ConfigStore::load(const std::string& path, std::vector<std::string>* refused) {
  // A directory, FIFO or device would fail later in odd ways (an exception from the stream, a
  // read that never ends); only a regular file can be a store.
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) throw StoreError(path, std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) throw StoreError(path, "cannot open: not a regular file");
  std::ifstream in(path);
  if (!in) throw StoreError(path, std::string("cannot open: ") + std::strerror(errno));
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw StoreError(path, position(e.mark) + "YAML syntax error: " + e.msg);
  }
  const FieldReader fields(path, root, "");
  ConfigStore store;
  store.header = read_header(fields);
  const YAML::Node entries = fields.node("entries");
  if (!entries.IsSequence()) fields.fail(entries, "'entries' is not a list");
  std::map<Problem, std::string, StoreOrder> first_seen;  // problem -> where its entry is
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string name = "entries[" + std::to_string(i) + "]";
    try {
      const FieldReader entry_fields(path, entries[i], name);
      const TunedEntry entry = read_entry(entry_fields);
      const auto [seen, first] =
          first_seen.emplace(entry.problem, name + " on line " + std::to_string(entries[i].Mark().line + 1));
      if (!first)
        entry_fields.fail(entries[i], name + " repeats the problem " + to_string(entry.problem) + " of " +
                                          seen->second + "; keep one of them");
      store.put(entry);
    } catch (const StoreError& e) {
      if (!refused) throw;
      refused->push_back(e.what());
    }
  }
  return store;
}

void ConfigStore::save(const std::string& path) const {
  const std::string target = store_file::target_of(path);
  store_file::refuse_read_only(path, target);
  store_file::create_parent_directory(path, target);
  store_file::TempFile(path, target).replace(to_yaml(*this));
}

void ConfigStore::check_writable(const std::string& path, std::optional<double> lock_timeout) {
  const std::string target = store_file::target_of(path);
  store_file::refuse_read_only(path, target);
  store_file::create_parent_directory(path, target);
  { const store_file::TempFile probe(path, target); }
  const store_file::StoreLock lock(path, target, lock_timeout);
}

ConfigStore ConfigStore::open(const std::string& path, const DeviceInfo& device) {
  ConfigStore store;
  store.header = StoreHeader::stamped(device);
  if (access(path.c_str(), F_OK) != 0) return store;
  store = load(path);
  if (!same_device(store.header.device, device))
    throw StoreError(path, "holds configs of " + to_string(store.header.device) + ", not " + to_string(device) +
                               "; pass --out with another file");
  return store;
}

ConfigStore ConfigStore::update(const std::string& path, const DeviceInfo& device,
                                const std::function<void(ConfigStore&)>& change,
                                std::optional<double> lock_timeout) {
  const std::string target = store_file::target_of(path);
  store_file::create_parent_directory(path, target);
  const store_file::StoreLock lock(path, target, lock_timeout);
  store_file::remove_stale_temps(target);
  ConfigStore store = open(path, device);
  // The file's device (same_device leaves a GPU's thread count out), with the bandwidth of the
  // caller's where it knows one: a store written before bandwidths were recorded gains it.
  DeviceInfo stamped = store.header.device;
  if (device.memory_gbps > 0) stamped.memory_gbps = device.memory_gbps;
  store.header = StoreHeader::stamped(stamped);
  change(store);
  store.save(path);
  return store;
}

const TunedEntry* ConfigStore::exact(const Problem& problem) const {
  const auto it = position_of(entries_, problem);
  return it != entries_.end() && it->problem == problem ? &*it : nullptr;
}

std::string why_bad(const TunedEntry& entry) {
  if (std::string why = why_invalid(entry.problem); !why.empty()) return why;
  if (entry.problem.m < 1 || entry.problem.n < 1 || entry.problem.k < 1) return "a stored shape has extents >= 1";
  if (std::string why = why_malformed(entry.config); !why.empty()) return "config " + to_string(entry.config) + ": " + why;
  if (!std::isfinite(entry.gflops) || entry.gflops <= 0) return "gflops " + shortest(entry.gflops) + " is not finite and > 0";
  if (!std::isfinite(entry.default_gflops) || entry.default_gflops < 0)
    return "default_gflops " + shortest(entry.default_gflops) + " is not finite and >= 0";
  if (entry.candidates < 0) return "candidates " + std::to_string(entry.candidates) + " is negative";
  return "";
}

void ConfigStore::put(const TunedEntry& entry) {
  if (const std::string why = why_bad(entry); !why.empty())
    throw std::invalid_argument("kgemm: refusing to store an entry for " + to_string(entry.problem) + ": " + why);
  const auto it = position_of(entries_, entry.problem);
  if (it != entries_.end() && it->problem == entry.problem)
    *it = entry;
  else
    entries_.insert(it, entry);
}

}  // namespace kgemm
