#pragma once
// The tuned configs of one device, kept as a YAML file (configs/<device-slug>.yaml): a header
// fingerprinting the device, then one line per problem with its winning config, speeds and
// runners-up.
// Entries stay sorted, so a file's text depends only on its contents and diffs stay small.
// What a file may hold and what each way of reading it guarantees: docs/tuning.md, "The store
// file: guarantees".
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kgemm/config.hpp"
#include "kgemm/kernel_generation.hpp"
#include "kgemm/problem.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/spaces/error.hpp"

namespace kgemm {

// The store file format this build reads completely and writes (`format:` in the header; a file
// without one is format 1). A kgemm raises it when stores gain something an older kgemm cannot
// write back. Fields keep their meaning in every format, so an older kgemm still reads what it
// knows of a newer store; it does not write one (ConfigStore::load, strict). Format 2: entries
// record their kernel generation (TunedEntry::generation). Format 3: entries may record their
// runners-up (TunedEntry::runners_up).
inline constexpr int kStoreFormat = 3;

// The largest rate a store holds, GFLOP/s: 10 PFLOP/s, ten times the fastest single device's
// dense fp16 peak. A rate past it is no measurement, and would outrank every other entry in the
// dispatch model.
inline constexpr double kMaxStoreGflops = 1e7;

struct StoreHeader {
  DeviceInfo device;
  std::string kokkos_version, kgemm_version, date;  // date: UTC, ISO 8601

  // A header for `device`, stamped with this build's Kokkos and kgemm versions and the time now.
  static StoreHeader stamped(const DeviceInfo& device);

  friend bool operator==(const StoreHeader& a, const StoreHeader& b) {
    return a.device == b.device && a.kokkos_version == b.kokkos_version && a.kgemm_version == b.kgemm_version &&
           a.date == b.date;
  }
};

// A config and the rate it measured on an entry's problem.
struct RatedConfig {
  Config config;
  double gflops = 0;

  friend bool operator==(const RatedConfig& a, const RatedConfig& b) { return a.config == b.config && a.gflops == b.gflops; }
};

struct TunedEntry {
  Problem problem;
  Config config;                            // the winner
  double gflops = 0, default_gflops = 0;    // the winner's speed and the space default's
  int candidates = 0;                       // configs measured
  // The kernels the rates were measured with (kernel_generation.hpp); an entry written before
  // generations were recorded is generation 0.
  int generation = kKernelGeneration;
  // The fastest config the search measured of each of the next fastest block classes
  // (same_block_class), fastest first: none of the winner's class, one a class. A search of
  // another shape starts from them as from winners (tuner/search_space.hpp, store_starts): the
  // best block of a new shape is often one that came second on the tuned shapes near it.
  std::vector<RatedConfig> runners_up;

  friend bool operator==(const TunedEntry& a, const TunedEntry& b) {
    return a.problem == b.problem && a.config == b.config && a.gflops == b.gflops &&
           a.default_gflops == b.default_gflops && a.candidates == b.candidates && a.generation == b.generation &&
           a.runners_up == b.runners_up;
  }
};

// The entry's rated configs as entries of its problem, each the way the dispatch model reads a
// source: the winner (the entry itself) and then each runner-up.
std::vector<TunedEntry> rated_entries(const TunedEntry& entry);

// Whether `entry`, of a host device (`host`) or a GPU, was measured on kernels of its config's
// family that have changed since (kernel_generation.hpp).
inline bool measured_on_older_kernels(const TunedEntry& entry, bool host) {
  return older_kernels(entry.generation, entry.config.family, host);
}

// A store that cannot be read or written. reason() is "<path>: <what is wrong, where>".
class StoreError : public RuntimeError {
 public:
  StoreError(const std::string& path, const std::string& what);
};

// Why `entry` cannot be stored (empty when it can): an invalid or empty shape, a malformed
// config, a measurement that is not finite, not positive (the default's may be 0: it failed) or
// past kMaxStoreGflops, a negative candidate count or generation, a runner-up of the winner's
// block class or of an earlier runner-up's.
std::string why_bad(const TunedEntry& entry);

// The order entries are kept and written in: kernel, dtype, a/b order, batch, m, n, k.
struct StoreOrder {
  bool operator()(const Problem& x, const Problem& y) const;
};

// Whether `path` is an existing file that its owner made read-only (no write permission bit) or
// that this user may not write: a store no rewrite replaces.
bool read_only_store(const std::string& path);

class ConfigStore {
 public:
  StoreHeader header;

  // Throws StoreError naming what is wrong and where: the line and column, and the field's path
  // ("entries[3].config"). The file must be one YAML document of the subset stores are written
  // in (block and one-line flow mappings and lists, plain and quoted values, comments; no
  // anchors, aliases, merge keys, tags or multi-line values), each key once per mapping.
  // An entry is bad when a field does not parse, its config is malformed (why_malformed), its
  // problem is invalid (why_invalid), a measurement is not finite, not positive or past
  // kMaxStoreGflops, or it repeats an earlier entry's problem.
  // Strict (no `refused`: writers, whose rewrite must keep everything the file holds): any bad
  // entry, a key this build does not know or a format newer than kStoreFormat is refused.
  // Lenient (with `refused`: readers): bad entries are left out and their messages appended
  // there (readers keep every good shape), unknown keys and newer formats are read as far as
  // this build knows them; the header must be good. Saving a leniently loaded store drops what
  // it left out.
  static ConfigStore load(const std::string& path, std::vector<std::string>* refused = nullptr);
  // Replaces `path` atomically (an exclusively created temp file beside it, then rename),
  // creating its directory. A symbolic link stays: the file it leads to is replaced (a link to
  // nothing is refused). The new file keeps the old one's mode (and its owner and group where
  // permitted); a new store gets 0666 & ~umask. A read-only store (read_only_store) is refused.
  // Throws StoreError on failure, leaving any previous file as it was. Takes no lock: for a file
  // no other process writes (update() is the writer for shared stores).
  void save(const std::string& path) const;
  // Proves, before anything is worth losing, that update() can rewrite `path`: refuses what
  // save() refuses, creates the directory, creates and removes a temporary file beside the
  // store, and takes and releases its lock (waiting as update() does). Throws StoreError.
  static void check_writable(const std::string& path, std::optional<double> lock_timeout = std::nullopt);
  // The store in `path` for `device`, loaded strictly (every entry and key must load: a writer
  // that dropped one would lose it), or an empty one with `device`'s header when there is no file.
  // Throws StoreError when the file is another device's or bad.
  static ConfigStore open(const std::string& path, const DeviceInfo& device);
  // Read-merge-write under an exclusive lock on `<path>.lock`: reads the file as it is now
  // (other writers may have added entries since this process last read it), applies `change`,
  // saves, and returns the store written. Concurrent writers thus end with the union of their
  // entries. The file is opened as open() does; throws StoreError when that fails.
  // The lock is on `<file>.lock` beside the file the store's name leads to (through links), so
  // every name of one store shares it; it is created with the store's mode, and names its holder
  // while held. A held lock is waited for, saying once on stderr who holds it; after
  // `lock_timeout` seconds (none: no limit; 0: no wait) StoreError names the holder. Under the
  // lock, temporary files left beside the store by interrupted saves are removed.
  static ConfigStore update(const std::string& path, const DeviceInfo& device,
                            const std::function<void(ConfigStore&)>& change,
                            std::optional<double> lock_timeout = std::nullopt);

  const TunedEntry* exact(const Problem& problem) const;
  // Adds the entry, replacing the one with an equal problem. Throws InvalidArgument, and
  // keeps the store as it was, when the entry is bad (why_bad): a store never holds one.
  void put(const TunedEntry& entry);
  // Removes the entry of `problem`; false when there is none.
  bool erase(const Problem& problem);
  const std::vector<TunedEntry>& entries() const { return entries_; }
  // The oldest generation of its entries (kKernelGeneration when it has none).
  int oldest_generation() const;
  // How many of its entries were measured on kernels that have changed since (older_kernels).
  std::size_t entries_on_older_kernels() const;

 private:
  std::vector<TunedEntry> entries_;  // sorted by StoreOrder, one per problem
};

}  // namespace kgemm
