#include "kgemm/tuner/config_store.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <utility>

#include "kgemm/spaces/compat.hpp"

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

// Locale-independent, whole-text number parsing; throws std::invalid_argument otherwise.
template <class T>
T number_at_least(const std::string& text, T min) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || !(value >= min)) throw std::invalid_argument(text);
  return value;
}

std::pair<char, char> parse_orders(const std::string& text) {
  const auto is_order = [](char c) { return c == 'n' || c == 't'; };
  if (text.size() != 2 || !is_order(text[0]) || !is_order(text[1])) throw std::invalid_argument(text);
  return {text[0], text[1]};
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

  YAML::Node node(const char* key) const {
    const YAML::Node value = map_[key];
    if (!value) fail(map_, "'" + path_of(key) + "' is missing");
    return value;
  }
  FieldReader map(const char* key) const { return FieldReader(file_, node(key), path_of(key)); }

  std::string text(const char* key) const {
    const YAML::Node value = node(key);
    if (!value.IsScalar()) fail(value, path_of(key) + " is not a single value");
    return value.Scalar();
  }

  // parse(text) throws when the text is not what `expected` describes.
  template <class Parse>
  auto parsed(const char* key, const std::string& expected, Parse parse) const {
    const std::string value = text(key);
    try {
      return parse(value);
    } catch (const std::exception&) {
      fail(map_[key], path_of(key) + ": '" + value + "' is not " + expected);
    }
  }
  int integer(const char* key, int min) const {
    return parsed(key, "an integer >= " + std::to_string(min),
                  [&](const std::string& t) { return number_at_least(t, min); });
  }
  double number(const char* key) const {
    return parsed(key, "a number >= 0", [](const std::string& t) { return number_at_least(t, 0.0); });
  }

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
  return {{device.text("space"), device.text("name"), device.text("arch"), device.integer("threads", 0)},
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
  entry.gflops = fields.number("gflops");
  entry.default_gflops = fields.number("default_gflops");
  entry.candidates = fields.integer("candidates", 0);
  return entry;
}

// One flow mapping per entry keeps each entry on one line: diffs show exactly what changed.
std::string to_yaml(const ConfigStore& store) {
  const StoreHeader& h = store.header;
  YAML::Emitter out;
  out << YAML::Comment("kgemm tuned configurations (written by autotune; edit with care)") << YAML::BeginMap;
  out << "device" << YAML::Flow << YAML::BeginMap << "space" << h.device.space << "name" << h.device.device
      << "arch" << h.device.arch << "threads" << h.device.threads << YAML::EndMap;
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

ConfigStore ConfigStore::load(const std::string& path) {
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
  for (std::size_t i = 0; i < entries.size(); ++i)
    store.put(read_entry(FieldReader(path, entries[i], "entries[" + std::to_string(i) + "]")));
  return store;
}

void ConfigStore::save(const std::string& path) const {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) throw StoreError(path, "cannot create directory " + parent.string() + ": " + error.message());

  // Written beside the target and renamed over it: an interrupted save leaves the old file whole.
  const std::string temp = path + ".tmp." + std::to_string(getpid());
  std::ofstream out(temp, std::ios::trunc);
  if (!out) throw StoreError(path, "cannot create " + temp + ": " + std::strerror(errno));
  out << to_yaml(*this) << std::flush;
  out.close();
  if (!out) {
    std::remove(temp.c_str());
    throw StoreError(path, "cannot write " + temp);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temp.c_str());
    throw StoreError(path, "cannot replace it with " + temp + ": " + std::strerror(err));
  }
}

const TunedEntry* ConfigStore::exact(const Problem& problem) const {
  const auto it = position_of(entries_, problem);
  return it != entries_.end() && it->problem == problem ? &*it : nullptr;
}

const TunedEntry* ConfigStore::nearest(const Problem& problem,
                                       const std::function<bool(const TunedEntry&)>& accept) const {
  // Extents count as at least 1, so an empty problem still has a finite distance.
  const auto gap = [](int x, int y) { return std::abs(std::log(double(std::max(x, 1)) / std::max(y, 1))); };
  std::vector<std::pair<double, const TunedEntry*>> candidates;
  for (const TunedEntry& e : entries_) {
    const Problem& q = e.problem;
    if (q.kernel == problem.kernel && q.dtype == problem.dtype && q.a_order == problem.a_order &&
        q.b_order == problem.b_order)
      candidates.emplace_back(gap(q.m, problem.m) + gap(q.n, problem.n) + gap(q.k, problem.k) +
                                  gap(q.batch, problem.batch),
                              &e);
  }
  // Closest first, ties in store order; `accept` sees only the entries up to the one taken.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [distance, entry] : candidates)
    if (!accept || accept(*entry)) return entry;
  return nullptr;
}

void ConfigStore::put(const TunedEntry& entry) {
  const auto it = position_of(entries_, entry.problem);
  if (it != entries_.end() && it->problem == entry.problem)
    *it = entry;
  else
    entries_.insert(it, entry);
}

}  // namespace kgemm
