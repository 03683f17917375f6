// The tuned-config store and dispatch through it: device fingerprints, the YAML file's round
// trip and errors, atomic saves, the dispatch model's choice among stored configs, and, per
// space and dtype (e.g.
// "DispatchTest/OpenMP_f32.UsesStoredConfig"), which config a kgemm::gemm call really runs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kgemm.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/dispatch/dispatch_model.hpp"
#include "kgemm/dispatch/store_registry.hpp"
#include "kgemm/text_number.hpp"
#include "kgemm/tuner/first_use.hpp"
#include "kgemm/tuner/store_merge.hpp"
#include "support/cases.hpp"
#include "support/gemm_check.hpp"
#include "support/scoped_env.hpp"

namespace kgemm::test {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Dispatch reads the store file at `path()` for the scope's lifetime ($KGEMM_CONFIG_FILE).
class StoreInUse {
 public:
  explicit StoreInUse(const ConfigStore& store) { store.save(path_); }
  explicit StoreInUse(const std::string& text) { write_text(path_, text); }
  const std::string& path() const { return path_; }

 private:
  TempDir dir_;
  std::string path_ = dir_.file("tuned.yaml");
  ScopedEnv env_{"KGEMM_CONFIG_FILE", path_};
};

std::string text_after_replacing(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in:\n" << text;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

Problem gemm_f32(int m, int n, int k) { return {Kernel::Gemm, DType::F32, 'n', 'n', m, n, k, 1}; }

std::string found(const TunedEntry* entry) { return entry ? to_string(entry->problem) : "none"; }

// ---------------------------------------------------------------------------------------------
// Device fingerprints

TEST(DeviceInfo, SlugsAndSameDevice) {
  const DeviceInfo cpu{"openmp", "AMD EPYC 7B13", "x86_64-avx512", 2};
  const DeviceInfo gpu{"cuda", "NVIDIA H100 80GB HBM3", "sm_90", 132};
  EXPECT_EQ(device_slug(cpu), "openmp-amd-epyc-7b13-2t");
  EXPECT_EQ(device_slug(gpu), "cuda-nvidia-h100-80gb-hbm3");
  EXPECT_EQ(device_slug({"serial", "Intel(R) Xeon(R) CPU @ 2.20GHz", "x86_64-avx2", 1}),
            "serial-intel-r-xeon-r-cpu-2-20ghz-1t");
  DeviceInfo narrower = cpu;  // an AVX2 build on the AVX-512 CPU: a store of its own, named apart
  narrower.arch = "x86_64-avx2";
  narrower.narrower_build = true;
  EXPECT_EQ(device_slug(narrower), "openmp-amd-epyc-7b13-avx2-2t");
  EXPECT_EQ(arch_vector_bits(cpu.arch), 512);
  EXPECT_EQ(arch_vector_bits(narrower.arch), 256);
  EXPECT_EQ(arch_vector_bits(gpu.arch), 0);
  EXPECT_FALSE(same_device(cpu, narrower)) << "host spaces: the build's SIMD is part of the device";

  DeviceInfo other = cpu;
  other.threads = 4;
  EXPECT_FALSE(same_device(cpu, other)) << "host spaces: the thread count is part of the device";
  other = gpu;
  other.threads = 114;
  EXPECT_TRUE(same_device(gpu, other)) << "GPUs: the SM count follows from the device";
  other.arch = "sm_80";
  EXPECT_FALSE(same_device(gpu, other));
}

TEST(DeviceInfo, DescribesEveryEnabledSpace) {
  for_each_enabled_space([](auto space) {
    using Space = decltype(space);
    SCOPED_TRACE(Space::name());
    const DeviceInfo device = device_info<Space>();
    EXPECT_EQ(device.space, lowercase(Space::name()));
    EXPECT_FALSE(device.device.empty());
    EXPECT_FALSE(device.arch.empty());
    EXPECT_GE(device.threads, 1);
    EXPECT_EQ(device_slug(device).rfind(device.space + "-", 0), 0u) << device_slug(device);
    std::printf("[device] %s: %s -> %s.yaml\n", Space::name(), to_string(device).c_str(),
                device_slug(device).c_str());
  });
}

// ---------------------------------------------------------------------------------------------
// The YAML file

const DeviceInfo kTestDevice{"openmp", "Test CPU @ 2.20GHz, rev. 7: \"B\"", "x86_64-avx2", 4};
const Problem kTunedShape = gemm_f32(12544, 64, 147);
// How kTunedShape's entry line ends as saved.
const std::string kTunedShapeLineEnd = "candidates: 40, generation: " + std::to_string(kKernelGeneration) + "}";

// Entries in no particular order, with GFLOP/s that have no short decimal form.
std::vector<TunedEntry> sample_entries() {
  return {{{Kernel::Batched, DType::F16, 't', 'n', 196, 256, 2304, 8}, parse_config("mb64_nb64_kb32_tm8_tn8_team2"), 91.25, 40.5, 12},
          {kTunedShape, parse_config("mb64_nb64_kb32_tm4_tn4_team16"), 55.2, 12.1, 40},
          {gemm_f32(784, 128, 1152), parse_config("mb32_nb128_kb64_tm8_tn16_team1"), 1.0 / 3.0, 1e-7, 3},
          {{Kernel::Gemm, DType::F32, 'n', 't', 784, 128, 1152, 1}, parse_config("mb16_nb16_kb32_tm1_tn1_team2"), 7.0, 7.0, 1},
          {gemm_f32(3136, 64, 576), parse_config("mb64_nb128_kb128_tm8_tn16_team1"), 123.456789012345, 99.9, 64}};
}

ConfigStore sample_store() {
  ConfigStore store;
  store.header = StoreHeader::stamped(kTestDevice);
  for (const TunedEntry& entry : sample_entries()) store.put(entry);
  return store;
}

std::string saved_text(const ConfigStore& store) {
  TempDir dir;
  store.save(dir.file("store.yaml"));
  return read_text(dir.file("store.yaml"));
}

// The StoreError message of loading `text`, after checking it starts by naming the file.
std::string load_error(const std::string& text) {
  TempDir dir;
  const std::string path = dir.file("broken.yaml");
  write_text(path, text);
  try {
    ConfigStore::load(path);
  } catch (const StoreError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("kgemm: " + path + ": ", 0), 0u) << message;
    return message;
  }
  ADD_FAILURE() << "no StoreError loading:\n" << text;
  return "";
}

TEST(StoreFile, RoundTripIsExact) {
  const ConfigStore store = sample_store();
  TempDir dir;
  store.save(dir.file("store.yaml"));
  const ConfigStore loaded = ConfigStore::load(dir.file("store.yaml"));
  EXPECT_TRUE(loaded.header == store.header);
  EXPECT_TRUE(loaded.entries() == store.entries());
  EXPECT_EQ(loaded.entries().size(), sample_entries().size());
}

TEST(StoreFile, TextIsSortedWhateverTheInsertionOrder) {
  const ConfigStore forward = sample_store();
  ConfigStore backward;
  backward.header = forward.header;
  const auto entries = sample_entries();
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) backward.put(*it);
  const std::string text = saved_text(forward);
  EXPECT_EQ(text, saved_text(backward));

  // One readable line per entry; kernel, dtype, orders, batch, then m, n, k decide the order.
  EXPECT_NE(text.find("\n  - {kernel: gemm, dtype: f32, order: nn, m: 12544, n: 64, k: 147, batch: 1, "
                      "config: mb64_nb64_kb32_tm4_tn4_team16, gflops: 55.2, default_gflops: 12.1, " +
                      kTunedShapeLineEnd + "\n"),
            std::string::npos)
      << text;
  const std::vector<std::string> in_order = {"order: nn, m: 784,", "order: nn, m: 3136,", "order: nn, m: 12544,",
                                             "order: nt, m: 784,", "kernel: batched"};
  for (std::size_t i = 1; i < in_order.size(); ++i)
    EXPECT_LT(text.find(in_order[i - 1]), text.find(in_order[i])) << in_order[i - 1] << " / " << in_order[i];
}

TEST(StoreFile, PutReplacesTheEntryOfAnEqualProblem) {
  ConfigStore store = sample_store();
  TunedEntry better = *store.exact(kTunedShape);
  better.config.kb = 64;
  better.gflops = 60;
  store.put(better);
  EXPECT_EQ(store.entries().size(), sample_entries().size());
  EXPECT_TRUE(*store.exact(kTunedShape) == better);
}

// The path, in the file, of kTunedShape's entry ("entries[2]").
std::string tuned_shape_entry() {
  const ConfigStore store = sample_store();
  const auto& entries = store.entries();
  const auto at =
      std::find_if(entries.begin(), entries.end(), [](const TunedEntry& e) { return e.problem == kTunedShape; });
  return "entries[" + std::to_string(at - entries.begin()) + "]";
}

std::vector<std::string> sample_shards(const TempDir& dir, int files, const DeviceInfo& device = kTestDevice);

// The line `what` first appears on in `text`, counted from 1.
int line_of(const std::string& text, const std::string& what) {
  const auto at = text.find(what);
  EXPECT_NE(at, std::string::npos) << "'" << what << "' not in:\n" << text;
  return int(std::count(text.begin(), text.begin() + std::min(at, text.size()), '\n')) + 1;
}

// Fields this build does not know (a newer kgemm's, or a note added by hand) anywhere in a store.
std::string text_with_unknown_fields() {
  std::string text = saved_text(sample_store());
  text = text_after_replacing(text, "candidates: 40,", "candidates: 40, note: tuned by ci,");
  return text_after_replacing(text, "\nentries:", "\nnotes: {a: 1, b: [2, 3]}\nentries:");
}

// Readers (the lenient load dispatch uses) read what they know of a store with fields they do
// not, so a newer kgemm's store still dispatches; writers (the strict load, open, update and
// merge) refuse it naming the field, since rewriting it would drop the field.
TEST(StoreFile, UnknownFieldsAreReadByReadersAndRefusedByWriters) {
  TempDir dir;
  const std::string path = dir.file("newer.yaml");
  write_text(path, text_with_unknown_fields());
  std::vector<std::string> refused;
  EXPECT_TRUE(ConfigStore::load(path, &refused).entries() == sample_store().entries());
  EXPECT_TRUE(refused.empty());

  const std::string entry_note = text_after_replacing(saved_text(sample_store()), "candidates: 40,", "candidates: 40, note: x,");
  const std::string top_level_notes = text_after_replacing(saved_text(sample_store()), "\nentries:", "\nnotes: hand-tuned\nentries:");
  const std::string device_field = text_after_replacing(saved_text(sample_store()), "threads: 4}", "threads: 4, cores: 2}");
  // Each with the text its message names the line of.
  const std::tuple<std::string, std::string, std::string> cases[] = {
      {entry_note, "'" + tuned_shape_entry() + ".note' is not a field this kgemm knows", "note: x"},
      {top_level_notes, "'notes' is not a field this kgemm knows", "notes:"},
      {device_field, "'device.cores' is not a field this kgemm knows", "cores:"},
  };
  for (const auto& [text, reason, where] : cases) {
    const std::string message = load_error(text);
    EXPECT_NE(message.find(reason), std::string::npos) << message << "\nmissing: " << reason;
    EXPECT_NE(message.find("use the kgemm that wrote the store, or remove the field"), std::string::npos) << message;
    EXPECT_NE(message.find("line " + std::to_string(line_of(text, where)) + ","), std::string::npos) << message;
  }

  // The writers: the file stays as it was.
  const std::string before = read_text(path);
  EXPECT_THROW(ConfigStore::open(path, kTestDevice), StoreError);
  EXPECT_THROW(ConfigStore::update(path, kTestDevice, [](ConfigStore&) {}), StoreError);
  const std::vector<std::string> inputs = sample_shards(dir, 1);
  EXPECT_THROW(merge_stores({path}, dir.file("merged.yaml")), StoreError);
  EXPECT_THROW(merge_stores(inputs, path), StoreError);
  EXPECT_EQ(read_text(path), before);
  EXPECT_FALSE(fs::exists(dir.file("merged.yaml")));
}

// Stores carry their format; one without (written before formats were numbered) is format 1.
// A newer format is read by readers and refused by writers, naming it.
TEST(StoreFile, FormatIsWrittenAndANewerOneOnlyRead) {
  const std::string text = saved_text(sample_store());
  EXPECT_EQ(text.find("\nformat: " + std::to_string(kStoreFormat) + "\n"), text.find('\n')) << text;
  TempDir dir;
  const std::string format = "format: " + std::to_string(kStoreFormat);
  write_text(dir.file("old.yaml"), text_after_replacing(text, "\n" + format + "\n", "\n"));
  EXPECT_TRUE(ConfigStore::load(dir.file("old.yaml")).entries() == sample_store().entries());

  const std::string newer = text_after_replacing(text, format, "format: " + std::to_string(kStoreFormat + 1));
  write_text(dir.file("newer.yaml"), newer);
  std::vector<std::string> refused;
  EXPECT_TRUE(ConfigStore::load(dir.file("newer.yaml"), &refused).entries() == sample_store().entries());
  const std::string message = load_error(newer);
  EXPECT_NE(message.find("line 2, column 9: format " + std::to_string(kStoreFormat + 1) + " is newer than this kgemm's (" +
                         std::to_string(kStoreFormat) + ")"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("kgemm " + sample_store().header.kgemm_version), std::string::npos) << message;
  for (const char* bad : {"0", "one", "[1]"}) {
    const std::string wrong = load_error(text_after_replacing(text, format, std::string("format: ") + bad));
    EXPECT_NE(wrong.find("format"), std::string::npos) << wrong;
  }
}

// Every entry records the kernel generation it was measured on; one without is generation 0
// (written before generations were recorded), and a store's oldest entry says how stale it is.
TEST(StoreFile, EachEntryRecordsItsKernelGeneration) {
  const std::string text = saved_text(sample_store());
  EXPECT_EQ(occurrences(text, ", generation: " + std::to_string(kKernelGeneration) + "}\n"), sample_entries().size())
      << text;
  EXPECT_EQ(sample_store().oldest_generation(), kKernelGeneration);
  std::string old = text;
  for (auto at = old.find(", generation: "); at != std::string::npos; at = old.find(", generation: "))
    old.erase(at, old.find('}', at) - at);
  TempDir dir;
  write_text(dir.file("old.yaml"), old);
  const ConfigStore loaded = ConfigStore::load(dir.file("old.yaml"));
  for (const TunedEntry& entry : loaded.entries()) EXPECT_EQ(entry.generation, 0) << to_string(entry.problem);
  EXPECT_EQ(loaded.oldest_generation(), 0);
  EXPECT_EQ(ConfigStore().oldest_generation(), kKernelGeneration);
  const std::string negative = load_error(text_after_replacing(text, kTunedShapeLineEnd, "candidates: 40, generation: -1}"));
  EXPECT_NE(negative.find("generation: '-1' is not an integer from 0"), std::string::npos) << negative;
  TunedEntry entry = sample_entries()[0];
  entry.generation = -1;
  EXPECT_NE(why_bad(entry).find("generation -1 is negative"), std::string::npos);
}

// An entry's runners-up: written after its other fields, fastest first as stored, read back
// exactly; an entry without any writes none. Each must be of a block class of its own (not the
// winner's, not an earlier runner-up's) with a rate as a winner's: the reader names the entry,
// the field and why, strict or lenient alike, and put() refuses what the reader refuses.
TEST(StoreFile, RunnersUpRoundTripAndEachIsOfABlockClassOfItsOwn) {
  ConfigStore store = sample_store();
  TunedEntry entry = *store.exact(kTunedShape);
  const Config wide = parse_config("mb64_nb128_kb32_tm4_tn4_team512"), tiles = parse_config("mb64_nb64_kb16_tm8_tn8_team64_ks2");
  entry.runners_up = {{wide, 50.25}, {tiles, 1.0 / 3.0}};
  store.put(entry);
  const std::string text = saved_text(store);
  EXPECT_EQ(occurrences(text, "runners_up"), 1u) << text;
  EXPECT_NE(text.find(kTunedShapeLineEnd.substr(0, kTunedShapeLineEnd.size() - 1) + ", runners_up: [{config: " +
                      to_string(wide) + ", gflops: 50.25}, {config: " + to_string(tiles) + ", gflops: " +
                      shortest(1.0 / 3.0) + "}]}\n"),
            std::string::npos)
      << text;
  TempDir dir;
  write_text(dir.file("store.yaml"), text);
  EXPECT_TRUE(ConfigStore::load(dir.file("store.yaml")).entries() == store.entries());
  EXPECT_TRUE(ConfigStore::load(dir.file("store.yaml")).exact(kTunedShape)->runners_up == entry.runners_up);

  const std::string listed = "runners_up: [{config: " + to_string(wide) + ", gflops: 50.25}, ";
  const std::string winner_class = to_string(parse_config("mb64_nb64_kb64_tm4_tn4_team16_st3"));
  const std::pair<std::string, std::string> bad[] = {
      {listed + "{config: " + winner_class + ", gflops: 3}]}", "runners_up[1]: " + winner_class + " is of the winner's block class"},
      {listed + "{config: mb64_nb128_kb64_tm4_tn4_team512, gflops: 3}]}", "is of the block class of runners_up[0]"},
      {listed + "{config: " + to_string(tiles) + ", gflops: 0}]}", ".runners_up[1].gflops: '0' is not a finite number > 0"},
      {listed + "{config: mb64_nb64, gflops: 3}]}", ".runners_up[1].config: 'mb64_nb64' is not a config string"},
      {listed + "{config: " + to_string(tiles) + "}]}", ".runners_up[1].gflops' is missing"},
      {"runners_up: " + to_string(wide) + "}", ".runners_up is not a list"},
  };
  for (const auto& [tail, reason] : bad) {
    const std::string broken = text_after_replacing(text, text.substr(text.find("runners_up: ["), text.find("}]}\n") + 3 - text.find("runners_up: [")), tail);
    const std::string message = load_error(broken);
    EXPECT_NE(message.find(reason), std::string::npos) << message << "\nmissing: " << reason;
    EXPECT_NE(message.find(tuned_shape_entry()), std::string::npos) << message;
    write_text(dir.file("broken.yaml"), broken);
    std::vector<std::string> refused;
    EXPECT_EQ(ConfigStore::load(dir.file("broken.yaml"), &refused).entries().size(), sample_entries().size() - 1) << tail;
    EXPECT_EQ(refused.size(), 1u) << tail;
  }
  TunedEntry same_class = entry;
  same_class.runners_up.push_back({parse_config("mb64_nb64_kb64_tm8_tn8_team64"), 2});
  EXPECT_THROW(store.put(same_class), std::invalid_argument);
  EXPECT_NE(why_bad(same_class).find("runners_up[2]: mb64_nb64_kb64_tm8_tn8_team64 is of the block class of runners_up[1]"),
            std::string::npos)
      << why_bad(same_class);
}

// Kernels change per family and kind of device: an entry is older than its kernels where its
// config's family changed after it was measured on that kind of device, and other entries of
// the same generation stay current (a store of a device not at hand among them).
TEST(StoreFile, EntriesAreOlderThanTheirOwnFamilysKernels) {
  for (const Family family : {Family::Simt, Family::TensorCore, Family::Warpgroup, Family::WarpSpecialized})
    for (const bool host : {true, false}) {
      const int changed = kernels_changed_at(family, host);
      EXPECT_GE(changed, 1);
      EXPECT_LE(changed, kKernelGeneration);
      EXPECT_TRUE(older_kernels(changed - 1, family, host));
      EXPECT_FALSE(older_kernels(changed, family, host));
      EXPECT_FALSE(older_kernels(kKernelGeneration, family, host));
    }
  ASSERT_GT(kernels_changed_at(Family::TensorCore, false), kernels_changed_at(Family::WarpSpecialized, false))
      << "this case needs a family whose GPU kernels changed after another's";
  ConfigStore store;
  store.header = StoreHeader::stamped(DeviceInfo{"cuda", "NVIDIA H100 80GB HBM3", "sm_90", 132});
  const int before = kernels_changed_at(Family::TensorCore, false) - 1;
  const auto fp16 = [](int m, int n, int k) { return Problem{Kernel::Gemm, DType::F16, 'n', 'n', m, n, k, 1}; };
  store.put({fp16(784, 128, 1152), parse_config("mb128_nb128_kb64_tm64_tn128_team384_st3_ws"), 9, 3, 8, before});
  store.put({fp16(3136, 64, 576), parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc"), 9, 3, 8, before});
  store.put({fp16(196, 256, 2304), parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc"), 9, 3, 8, kKernelGeneration});
  EXPECT_EQ(store.entries_on_older_kernels(), 1u);
  store.header = StoreHeader::stamped(kTestDevice);  // the same entries on a host: its kernels did not change
  EXPECT_EQ(store.entries_on_older_kernels(), std::size_t(kernels_changed_at(Family::TensorCore, true) > before));
}

// CI's check that the committed stores were measured on today's kernels: the commit that bumps
// the generation of a family's kernels re-tunes the entries it makes older, or re-checks them on
// their devices (kernel_generation.hpp).
// Loaded strictly: a committed store holds nothing a writer would refuse. A host store of
// another SIMD width than this build's may name micro-tiles it does not compile (an AVX-512
// store in an AVX2 build, and the reverse): the builds of its width check that one.
TEST(CommittedStores, AreOfTheCodesKernelGeneration) {
  int stores = 0;
  for (const auto& file : fs::directory_iterator(KGEMM_COMMITTED_STORES)) {
    if (file.path().extension() != ".yaml") continue;
    ++stores;
    std::vector<std::string> refused;
    const DeviceInfo tuned = ConfigStore::load(file.path().string(), &refused).header.device;
    if (tuned.is_host() && arch_vector_bits(tuned.arch) != kHostVectorBits && !refused.empty()) continue;
    const ConfigStore store = ConfigStore::load(file.path().string());
    std::vector<std::string> other;
    for (const TunedEntry& entry : store.entries())
      if (measured_on_older_kernels(entry, tuned.is_host()))
        other.push_back(to_string(entry.problem) + " (generation " + std::to_string(entry.generation) + ")");
    EXPECT_EQ(other.size(), 0u) << file.path().string() << " holds " << other.size() << " entries measured before "
                                << "their kernels changed (kernel_generation.hpp), the first " << other.front()
                                << ": re-tune them (autotune --resume), or re-check the store on its device "
                                << "(autotune --verify-store)";
  }
  EXPECT_GE(stores, 1) << "no store in " << KGEMM_COMMITTED_STORES;
}

// Two stores in one file, as `cat a.yaml b.yaml` or a YAML document separator leaves them: only
// the first would be read and a rewrite would drop the second.
TEST(StoreFile, TwoStoresInOneFileAreRefused) {
  const std::string one = saved_text(sample_store());
  const std::string separated = one + "---\n" + one;
  std::string message = load_error(separated);
  const std::string second_line = std::to_string(int(std::count(one.begin(), one.end(), '\n')) + 1);
  EXPECT_NE(message.find("line " + second_line + ", column 1: a second YAML document starts here"), std::string::npos)
      << message;
  EXPECT_NE(message.find("a store file holds one store"), std::string::npos) << message;

  message = load_error(one + one);
  // The second store's first key repeats the first store's.
  const std::string again = std::to_string(int(std::count(one.begin(), one.end(), '\n')) + line_of(one, "format:"));
  EXPECT_NE(message.find("line " + again + ", column 1: 'format' appears twice in one mapping, on line " +
                         std::to_string(line_of(one, "format:")) + " and line " + again),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("a store file holds one store"), std::string::npos) << message;
}

// A key twice in one mapping: YAML keys are unique, and a reader taking either would hide the other.
TEST(StoreFile, RepeatedKeysAreRefusedNamingBothLines) {
  const std::string good = saved_text(sample_store());
  const int entry_line = line_of(good, "m: 12544");
  const std::string entry = tuned_shape_entry();
  const std::pair<std::pair<std::string, std::string>, std::string> cases[] = {
      {{"candidates: 40,", "candidates: 40, config: mb64_nb64_kb32_tm4_tn4_team16,"},
       entry + ".config' appears twice in one mapping, on line " + std::to_string(entry_line) + " and line " +
           std::to_string(entry_line)},
      {{"gflops: 55.2,", "gflops: 55.2, gflops: 60,"}, entry + ".gflops' appears twice"},
      {{"\nentries:", "\nkokkos: 9.9.9\nentries:"},
       "'kokkos' appears twice in one mapping, on line " + std::to_string(line_of(good, "kokkos:")) + " and line " +
           std::to_string(line_of(good, "entries:"))},
      {{"threads: 4}", "threads: 4, threads: 8}"}, "'device.threads' appears twice"},
  };
  for (const auto& [change, reason] : cases) {
    const std::string message = load_error(text_after_replacing(good, change.first, change.second));
    EXPECT_NE(message.find(reason), std::string::npos) << message << "\nmissing: " << reason;
  }
  // Dispatch's lenient load refuses such a file too: it is not YAML.
  TempDir dir;
  write_text(dir.file("twice.yaml"), text_after_replacing(good, "gflops: 55.2,", "gflops: 55.2, gflops: 60,"));
  std::vector<std::string> refused;
  EXPECT_THROW(ConfigStore::load(dir.file("twice.yaml"), &refused), StoreError);
}

// Measurements no device makes: a rate past kMaxStoreGflops would let one entry outrank every
// other in the dispatch model (and 1.8e308 overflows it).
TEST(StoreFile, ImplausibleRatesAreRefused) {
  const std::string good = saved_text(sample_store());
  const std::pair<std::string, std::string> edits[] = {{"gflops: 55.2", "gflops: 1.8e308"},
                                                       {"default_gflops: 12.1", "default_gflops: 2e7"}};
  for (const auto& [from, to] : edits) {
    const std::string message = load_error(text_after_replacing(good, from, to));
    EXPECT_NE(message.find(tuned_shape_entry() + "." + to.substr(0, to.find(':')) + ": '" + to.substr(to.find(' ') + 1) +
                           "' is not a finite number"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("at most 1e+07"), std::string::npos) << message;
  }
  ConfigStore store = sample_store();
  EXPECT_THROW(store.put({gemm_f32(1, 2, 3), {}, 2 * kMaxStoreGflops, 1, 1}), std::invalid_argument);
  EXPECT_NO_THROW(store.put({gemm_f32(1, 2, 3), {}, kMaxStoreGflops, kMaxStoreGflops, 1}));
}

// Causes a YAML parser reports as something else, each named.
TEST(StoreFile, UnsupportedTextIsNamed) {
  const std::string good = saved_text(sample_store());
  std::string nul = good;
  nul[good.find("kokkos:") + 2] = '\0';
  std::string message = load_error(nul);
  EXPECT_NE(message.find("contains a NUL byte at line " + std::to_string(line_of(good, "kokkos:")) + ", column 3"),
            std::string::npos)
      << message;

  std::string mac = good;
  std::replace(mac.begin(), mac.end(), '\n', '\r');
  message = load_error(mac);
  EXPECT_NE(message.find("uses CR-only line ends"), std::string::npos) << message;

  const std::pair<std::string, std::string> edits[] = {{"\nentries:", "\nbase: &base {a: 1}\nentries:"},
                                                       {"candidates: 40,", "candidates: 40, <<: *base,"},
                                                       {"gflops: 55.2", "gflops: *rate"}};
  for (const auto& [from, to] : edits) {
    message = load_error(text_after_replacing(good, from, to));
    EXPECT_NE(message.find("YAML anchors, aliases and merge keys (<<) are not supported in stores"), std::string::npos)
        << message;
    EXPECT_NE(message.find("line " + std::to_string(line_of(text_after_replacing(good, from, to), to.substr(to.find_first_of("&*<"))))), std::string::npos) << message;
  }

  // Windows line ends are line ends.
  std::string crlf;
  for (char ch : good) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  TempDir dir;
  write_text(dir.file("crlf.yaml"), crlf);
  EXPECT_TRUE(ConfigStore::load(dir.file("crlf.yaml")).entries() == sample_store().entries());
}

// A device's memory bandwidth is written where it is known and read back exactly; a store without
// it (written before bandwidths were recorded) loads with 0, and a value that is no bandwidth is
// refused naming the field.
TEST(StoreFile, MemoryBandwidthIsOptionalAndChecked) {
  ConfigStore store = sample_store();
  EXPECT_EQ(saved_text(store).find("memory_gbps"), std::string::npos);
  store.header.device.memory_gbps = 3352.32;
  const std::string text = saved_text(store);
  EXPECT_NE(text.find("memory_gbps: 3352.32}"), std::string::npos) << text;
  TempDir dir;
  write_text(dir.file("gpu.yaml"), text);
  EXPECT_TRUE(ConfigStore::load(dir.file("gpu.yaml")).header == store.header);
  for (const char* bad : {"-1", "fast", ".inf"}) {
    const std::string message = load_error(text_after_replacing(text, "memory_gbps: 3352.32", std::string("memory_gbps: ") + bad));
    EXPECT_NE(message.find("device.memory_gbps: '" + std::string(bad) + "' is not a finite number >= 0"), std::string::npos)
        << message;
  }
}

// Updating a store on its device records the bandwidth the device reports, and one that does not
// report any keeps the recorded one.
TEST(StoreSave, UpdateRecordsTheDevicesBandwidth) {
  TempDir dir;
  const std::string path = dir.file("store.yaml");
  sample_store().save(path);
  DeviceInfo measured = sample_store().header.device;
  measured.memory_gbps = 900;
  ConfigStore::update(path, measured, [](ConfigStore&) {});
  EXPECT_EQ(ConfigStore::load(path).header.device.memory_gbps, 900);
  ConfigStore::update(path, sample_store().header.device, [](ConfigStore&) {});
  EXPECT_EQ(ConfigStore::load(path).header.device.memory_gbps, 900);
}

TEST(StoreFile, SyntaxErrorNamesLineAndColumn) {
  const std::string text = text_after_replacing(saved_text(sample_store()), kTunedShapeLineEnd,
                                                kTunedShapeLineEnd.substr(0, kTunedShapeLineEnd.size() - 1));
  const std::string message = load_error(text);
  EXPECT_NE(message.find("YAML syntax error"), std::string::npos) << message;
  EXPECT_NE(message.find("line "), std::string::npos) << message;
  EXPECT_NE(message.find("column "), std::string::npos) << message;
}

TEST(StoreFile, MissingKeyNamesEntryAndKey) {
  const std::string message = load_error(
      text_after_replacing(saved_text(sample_store()), ", config: mb64_nb64_kb32_tm4_tn4_team16", ""));
  EXPECT_NE(message.find("'" + tuned_shape_entry() + ".config' is missing"), std::string::npos) << message;
}

TEST(StoreFile, BadConfigStringNamesEntryAndValue) {
  const std::string message = load_error(text_after_replacing(
      saved_text(sample_store()), "config: mb64_nb64_kb32_tm4_tn4_team16", "config: mb64_nb64_kb32_tm4_tn4_teamX"));
  EXPECT_NE(message.find(tuned_shape_entry() + ".config: 'mb64_nb64_kb32_tm4_tn4_teamX' is not a config string"),
            std::string::npos)
      << message;
}

TEST(StoreFile, NonPositiveExtentNamesEntryAndKey) {
  const std::string message = load_error(text_after_replacing(saved_text(sample_store()), "m: 12544", "m: -5"));
  EXPECT_NE(message.find(tuned_shape_entry() + ".m: '-5' is not an integer from 1 to 2147483647"), std::string::npos)
      << message;
}

// Entries that would mislead dispatch or the tuner are refused on load, each naming its entry,
// field and reason: measurements that are not finite or not positive, empty or overflowing
// shapes, repeated problems, configs no kernel can run.
TEST(StoreFile, BadEntriesAreRefusedWithEntryFieldAndReason) {
  const std::string good = saved_text(sample_store());
  const std::string entry = tuned_shape_entry();
  const std::pair<std::pair<std::string, std::string>, std::string> cases[] = {
      {{"gflops: 55.2", "gflops: inf"}, entry + ".gflops: 'inf' is not a finite number > 0"},
      {{"gflops: 55.2", "gflops: nan"}, entry + ".gflops: 'nan' is not a finite number > 0"},
      {{"gflops: 55.2", "gflops: 0"}, entry + ".gflops: '0' is not a finite number > 0"},
      {{"default_gflops: 12.1", "default_gflops: -1"}, entry + ".default_gflops: '-1' is not a finite number >= 0"},
      {{"m: 12544", "m: 0"}, entry + ".m: '0' is not an integer from 1"},
      {{"m: 12544", "m: 99999999999"}, entry + ".m: '99999999999' is not an integer from 1"},
      {{"m: 12544, n: 64, k: 147, batch: 1", "m: 2147483647, n: 2147483647, k: 147, batch: 2147483647"},
       entry + ": A of 2147483647x147 times batch 2147483647 has more elements than a 64-bit offset can address"},
      {{"config: mb64_nb64_kb32_tm4_tn4_team16, gflops: 55.2", "config: mb64_nb64_kb32_tm0_tn4_team16, gflops: 55.2"},
       entry + ".config: 'mb64_nb64_kb32_tm0_tn4_team16' is not a config string"},
      {{"m: 12544, n: 64, k: 147", "m: 3136, n: 64, k: 576"}, "repeats the problem gemm_f32_nn_m3136_n64_k576_b1 of entries["},
  };
  for (const auto& [change, reason] : cases) {
    const std::string message = load_error(text_after_replacing(good, change.first, change.second));
    EXPECT_NE(message.find("line "), std::string::npos) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message << "\nmissing: " << reason;
  }
}

// Readers keep every good entry: a bad one is left out and reported, the others stay.
TEST(StoreFile, LenientLoadLeavesOutOnlyTheBadEntries) {
  TempDir dir;
  const std::string path = dir.file("store.yaml");
  write_text(path, text_after_replacing(saved_text(sample_store()), "gflops: 55.2", "gflops: inf"));
  std::vector<std::string> refused;
  const ConfigStore store = ConfigStore::load(path, &refused);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].find(tuned_shape_entry() + ".gflops: 'inf'"), std::string::npos) << refused[0];
  EXPECT_EQ(store.entries().size(), sample_store().entries().size() - 1);
  EXPECT_EQ(store.exact(kTunedShape), nullptr);
}

// A value that is not UTF-8 would come back changed from a save (the emitter replaces its bytes).
TEST(StoreFile, TextThatIsNotUtf8IsRefused) {
  const std::string good = saved_text(sample_store());
  for (const std::string& bad : {std::string("\xff\x01"), std::string("\xc0\xaf"), std::string("\xed\xa0\x80")}) {
    const std::string message = load_error(text_after_replacing(good, "kokkos: ", "kokkos: x" + bad));
    EXPECT_NE(message.find("kokkos is not UTF-8 text"), std::string::npos) << message;
  }
  TempDir dir;
  write_text(dir.file("accented.yaml"), text_after_replacing(good, "kokkos: ", "kokkos: \xc3\xa9"));
  EXPECT_EQ(ConfigStore::load(dir.file("accented.yaml")).header.kokkos_version.substr(0, 2), "\xc3\xa9");
}

TEST(StoreFile, OnlyRegularFilesAreRead) {
  TempDir dir;
  const std::string fifo = dir.file("fifo.yaml");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {dir.path(), fifo}) {
    try {
      ConfigStore::load(path);
      ADD_FAILURE() << "read " << path;
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
}

TEST(StorePut, BadEntriesAreNeverStored) {
  ConfigStore store = sample_store();
  const auto count = store.entries().size();
  const TunedEntry good{gemm_f32(1, 2, 3), {}, 1, 1, 1};
  const std::function<void(TunedEntry&)> spoilers[] = {
      [](TunedEntry& e) { e.gflops = std::numeric_limits<double>::infinity(); },
      [](TunedEntry& e) { e.gflops = 0; },
      [](TunedEntry& e) { e.default_gflops = std::nan(""); },
      [](TunedEntry& e) { e.problem.m = 0; },
      [](TunedEntry& e) { e.config.tm = 0; },
  };
  for (const auto& spoil : spoilers) {
    TunedEntry bad = good;
    spoil(bad);
    EXPECT_THROW(store.put(bad), std::invalid_argument);
  }
  EXPECT_EQ(store.entries().size(), count);
}

TEST(StoreFile, ForeignOrEmptyFileSaysWhatIsMissing) {
  std::string message = load_error("model: resnet50\nlayers: [conv1, conv2]\n");
  EXPECT_NE(message.find("'device' is missing"), std::string::npos) << message;
  message = load_error("");
  EXPECT_NE(message.find("the file is not a mapping"), std::string::npos) << message;
}

TEST(StoreFile, MissingFileIsAStoreError) {
  TempDir dir;
  try {
    ConfigStore::load(dir.file("absent.yaml"));
    ADD_FAILURE() << "no StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "kgemm: " + dir.file("absent.yaml") + ": cannot open: No such file or directory");
    EXPECT_EQ(std::string(e.reason()), dir.file("absent.yaml") + ": cannot open: No such file or directory");
  }
  // Callers that catch the standard base or the whole family catch it too.
  EXPECT_THROW(ConfigStore::load(dir.file("absent.yaml")), std::runtime_error);
  EXPECT_THROW(ConfigStore::load(dir.file("absent.yaml")), Error);
}

// ---------------------------------------------------------------------------------------------
// Saving

TEST(StoreSave, CreatesTheDirectoryAndLeavesNoTempFile) {
  TempDir dir;
  const std::string path = dir.file("new/sub/store.yaml");
  sample_store().save(path);
  sample_store().save(path);  // over an existing file too
  std::vector<std::string> names;
  for (const auto& file : fs::directory_iterator(dir.file("new/sub"))) names.push_back(file.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"store.yaml"});
}

TEST(StoreSave, FailedSaveThrowsAndKeepsThePreviousFile) {
  TempDir dir;
  const std::string path = dir.file("store.yaml");
  sample_store().save(path);
  const std::string before = read_text(path);
  ConfigStore changed = sample_store();
  changed.put({gemm_f32(1, 2, 3), {}, 1, 1, 1});

  // A directory in the store's place: the rename fails, the temp file goes, nothing else changes.
  const std::string occupied = dir.file("occupied.yaml");
  fs::create_directories(occupied + "/inside");
  EXPECT_THROW(changed.save(occupied), StoreError);
  EXPECT_TRUE(fs::is_directory(occupied + "/inside"));

  try {
    changed.save(path + "/under-a-regular-file.yaml");
    ADD_FAILURE() << "no StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create directory " + path), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_text(path), before);
  std::vector<std::string> names;
  for (const auto& file : fs::directory_iterator(dir.file(""))) names.push_back(file.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"occupied.yaml", "store.yaml"})) << "a temporary file was left behind";
}

// The temporary file's name cannot be predicted, and an existing file is never opened as it:
// links planted at the names a save could use do not redirect the write.
TEST(StoreSave, PlantedLinksAreNotFollowed) {
  TempDir dir;
  const std::string path = dir.file("store.yaml"), victim = dir.file("victim.txt");
  {
    std::ofstream(victim) << "precious";
  }
  for (const std::string& name : {path + ".tmp." + std::to_string(getpid()), path + ".tmp.XXXXXX"})
    fs::create_symlink(victim, name);
  const ConfigStore samples = sample_store();
  const auto add_samples = [&](ConfigStore& store) {
    for (const TunedEntry& e : samples.entries()) store.put(e);
  };
  ConfigStore::update(path, sample_store().header.device, add_samples);
  EXPECT_EQ(read_text(victim), "precious");
  EXPECT_TRUE(ConfigStore::load(path).entries() == sample_store().entries());

  // A link in the lock's place is refused rather than followed.
  fs::remove(path);
  fs::remove(path + ".lock");
  fs::create_symlink(victim, path + ".lock");
  try {
    ConfigStore::update(path, sample_store().header.device, add_samples);
    ADD_FAILURE() << "a planted lock link was followed";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open the lock file"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_text(victim), "precious");
  EXPECT_FALSE(fs::exists(path));
}

// ---------------------------------------------------------------------------------------------
// The store file: links, permissions, the lock, interrupted saves

// Sets the process's umask for the scope.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(umask(mask)) {}
  ~ScopedUmask() { umask(old_); }

 private:
  mode_t old_;
};

mode_t mode_of(const std::string& path) {
  struct stat status {};
  EXPECT_EQ(stat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& file : fs::directory_iterator(dir)) names.push_back(file.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The StoreError message of `write`, or a failure when it succeeds.
std::string store_error(const std::function<void()>& write) {
  try {
    write();
  } catch (const StoreError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no StoreError";
  return "";
}

void add_entry(ConfigStore& store) { store.put({gemm_f32(1, 2, 3), {}, 1, 1, 1}); }

TEST(StoreLinks, ARewriteThroughALinkReplacesItsTargetAndKeepsTheLink) {
  TempDir dir;
  fs::create_directories(dir.file("real"));
  const std::string target = dir.file("real/store.yaml"), link = dir.file("link.yaml");
  sample_store().save(target);
  fs::create_symlink("real/store.yaml", link);
  ConfigStore::update(link, kTestDevice, add_entry);
  ASSERT_TRUE(fs::is_symlink(link)) << "the link was replaced by a file";
  EXPECT_EQ(fs::read_symlink(link), "real/store.yaml");
  EXPECT_TRUE(ConfigStore::load(target).exact(gemm_f32(1, 2, 3))) << "the link's target was not updated";
  EXPECT_EQ(ConfigStore::load(target).entries().size(), sample_entries().size() + 1);
  // The lock and the temporary file sit beside the target, the lock shared by every name.
  EXPECT_EQ(names_in(dir.file("real")), (std::vector<std::string>{"store.yaml", "store.yaml.lock"}));
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"link.yaml", "real"}));
  // save() follows the link the same way.
  sample_store().save(link);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(ConfigStore::load(target).exact(gemm_f32(1, 2, 3)));
}

TEST(StoreLinks, ALinkToNothingIsRefused) {
  TempDir dir;
  const std::string link = dir.file("link.yaml");
  fs::create_symlink("missing/store.yaml", link);
  for (const auto& write : std::vector<std::function<void()>>{
           [&] { sample_store().save(link); }, [&] { ConfigStore::update(link, kTestDevice, add_entry); },
           [&] { ConfigStore::check_writable(link); }}) {
    const std::string message = store_error(write);
    EXPECT_NE(message.find(link + ": is a symbolic link to missing/store.yaml, which does not exist"), std::string::npos)
        << message;
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"link.yaml"}) << "something was created";
}

TEST(StorePermissions, ARewriteKeepsTheModeAndANewStoreFollowsTheUmask) {
  TempDir dir;
  const std::string path = dir.file("store.yaml");
  const ScopedUmask mask(022);
  sample_store().save(path);
  EXPECT_EQ(mode_of(path), 0644u);
  for (const mode_t mode : {0600, 0640, 0664, 0660, 0666}) {
    fs::permissions(path, fs::perms(mode));
    ConfigStore::update(path, kTestDevice, add_entry);
    EXPECT_EQ(mode_of(path), mode) << std::oct << "after a rewrite of a store of mode " << mode;
    sample_store().save(path);
    EXPECT_EQ(mode_of(path), mode) << std::oct << "after a save over a store of mode " << mode;
  }
}

TEST(StorePermissions, RootKeepsTheOwnerAndGroup) {
  if (geteuid() != 0) GTEST_SKIP() << "only root may give a file to another user";
  TempDir dir;
  const std::string path = dir.file("store.yaml");
  sample_store().save(path);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  ConfigStore::update(path, kTestDevice, add_entry);
  struct stat status {};
  ASSERT_EQ(stat(path.c_str(), &status), 0);
  EXPECT_EQ(status.st_uid, 65534u);
  EXPECT_EQ(status.st_gid, 65534u);
}

TEST(StorePermissions, AReadOnlyStoreIsNeverRewritten) {
  TempDir dir;
  const std::string path = dir.file("store.yaml");
  sample_store().save(path);
  fs::permissions(path, fs::perms(0444));
  const std::string before = read_text(path);
  EXPECT_TRUE(read_only_store(path));
  for (const auto& write : std::vector<std::function<void()>>{
           [&] { sample_store().save(path); }, [&] { ConfigStore::update(path, kTestDevice, add_entry); },
           [&] { ConfigStore::check_writable(path); }}) {
    const std::string message = store_error(write);
    EXPECT_NE(message.find(path + ": is read-only (mode 0444"), std::string::npos) << message;
    EXPECT_NE(message.find("make it writable"), std::string::npos) << message;
  }
  EXPECT_EQ(read_text(path), before);
  EXPECT_EQ(mode_of(path), 0444u);
  fs::permissions(path, fs::perms(0644));
  EXPECT_FALSE(read_only_store(path));
  EXPECT_FALSE(read_only_store(dir.file("absent.yaml")));
}

// A read-only store is passed over for one in the user's data directory (autotune copies it
// there), even by root, whom its mode alone tells to leave it alone.
TEST(StorePermissions, TheDefaultStoreToWriteIsNeverAReadOnlyOne) {
  TempDir dir;
  const std::string found = dir.file("found.yaml");
  sample_store().save(found);
  const ScopedEnv file("KGEMM_CONFIG_FILE", found), data("XDG_DATA_HOME", dir.file("data"));
  EXPECT_EQ(writable_store_file(kTestDevice), found);
  fs::permissions(found, fs::perms(0444));
  EXPECT_EQ(writable_store_file(kTestDevice), dir.file("data") + "/kgemm/" + device_slug(kTestDevice) + ".yaml");
}

TEST(StoreLock, TheLockFileTakesTheStoresModeNotTheUmask) {
  TempDir dir;
  const std::string shared = dir.file("shared.yaml"), fresh = dir.file("fresh.yaml");
  const ScopedUmask mask(022);
  sample_store().save(shared);
  fs::permissions(shared, fs::perms(0664));
  ConfigStore::update(shared, kTestDevice, add_entry);
  EXPECT_EQ(mode_of(shared + ".lock"), 0664u) << std::oct << "another member of the group could not open the lock";
  fs::remove(shared + ".lock");
  fs::permissions(shared, fs::perms(0600));
  ConfigStore::update(shared, kTestDevice, add_entry);
  EXPECT_EQ(mode_of(shared + ".lock"), 0600u) << std::oct;
  {
    const ScopedUmask group_mask(002);
    ConfigStore::update(fresh, kTestDevice, add_entry);
  }
  EXPECT_EQ(mode_of(fresh + ".lock"), 0664u) << std::oct;
  EXPECT_EQ(mode_of(fresh), 0664u) << std::oct;
}

// flock locks belong to an open file, so a second update inside the first's change waits for it
// as another process would.
TEST(StoreLock, AHeldLockIsWaitedForSayingWhoHoldsItAndGivenUpAfterTheTimeout) {
  TempDir dir;
  fs::create_directories(dir.file("real"));
  const std::string path = dir.file("real/store.yaml"), link = dir.file("link.yaml");
  sample_store().save(path);
  fs::create_symlink(path, link);
  const std::string holder = "pid " + std::to_string(getpid()) + " on host ";
  std::string message, waiting;
  double waited = 0;
  ConfigStore::update(path, kTestDevice, [&](ConfigStore& store) {
    add_entry(store);
    // The record names this process while it holds the lock.
    EXPECT_EQ(read_text(path + ".lock").rfind(holder, 0), 0u) << read_text(path + ".lock");
    testing::internal::CaptureStderr();
    const auto start = std::chrono::steady_clock::now();
    message = store_error([&] { ConfigStore::update(link, kTestDevice, add_entry, 0.5); });
    waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    waiting = testing::internal::GetCapturedStderr();
    // No wait at all with a timeout of 0, and nothing said about waiting.
    testing::internal::CaptureStderr();
    const std::string at_once = store_error([&] { ConfigStore::check_writable(link, 0.0); });
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_NE(at_once.find("is still held after 0 s, by " + holder), std::string::npos) << at_once;
  });
  EXPECT_GE(waited, 0.5);
  EXPECT_LT(waited, 5.0);
  EXPECT_NE(message.find(link + ": its lock " + path + ".lock is still held after 0.5 s, by " + holder),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("test_store"), std::string::npos) << "the holder's command is not named: " << message;
  EXPECT_EQ(occurrences(waiting, "waiting for its lock " + path + ".lock, held by " + holder), 1u) << waiting;
  EXPECT_NE(waiting.find("giving up after 0.5 s"), std::string::npos) << waiting;
  EXPECT_EQ(read_text(path + ".lock"), "") << "a released lock still names a holder";
  EXPECT_EQ(ConfigStore::load(path).entries().size(), sample_entries().size() + 1);
}

TEST(StoreTemps, LeftoversOfInterruptedSavesAreRemovedUnderTheLock) {
  TempDir dir;
  const std::string path = dir.file("store.yaml");
  sample_store().save(path);
  const std::vector<std::string> leftovers = {"store.yaml.tmp.AbC123", "store.yaml.tmp.zzzzzz"};
  const std::vector<std::string> others = {"store.yaml.tmp.AbC12", "store.yaml.tmp.AbC1234", "store.yaml.tmp.AbC12-",
                                           "other.yaml.tmp.AbC123", "xstore.yaml.tmp.AbC123", "store.yaml.tmp.Link12",
                                           "store.yaml.tmp.Dir123"};
  for (const std::string& name : leftovers) write_text(dir.file(name), "half a store");
  for (const std::string& name : others) write_text(dir.file(name), "not ours");
  fs::remove(dir.file("store.yaml.tmp.Link12"));
  fs::create_symlink("other.yaml.tmp.AbC123", dir.file("store.yaml.tmp.Link12"));
  fs::remove(dir.file("store.yaml.tmp.Dir123"));
  fs::create_directories(dir.file("store.yaml.tmp.Dir123"));
  std::vector<std::string> kept = others;
  if (geteuid() == 0) {
    write_text(dir.file("store.yaml.tmp.Other1"), "another user's");
    ASSERT_EQ(chown(dir.file("store.yaml.tmp.Other1").c_str(), 65534, 65534), 0);
    kept.push_back("store.yaml.tmp.Other1");
  }
  ConfigStore::update(path, kTestDevice, add_entry);
  kept.push_back("store.yaml");
  kept.push_back("store.yaml.lock");
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(names_in(dir.path()), kept);
}

TEST(StoreCheckWritable, ProvesARewriteWithoutWritingTheStore) {
  TempDir dir;
  const std::string path = dir.file("new/store.yaml");
  ConfigStore::check_writable(path);
  EXPECT_EQ(names_in(dir.file("new")), std::vector<std::string>{"store.yaml.lock"});
  sample_store().save(path);
  const std::string before = read_text(path);
  ConfigStore::check_writable(path);
  EXPECT_EQ(read_text(path), before);
}

TEST(StoreCheckWritable, RefusesWhatARewriteWouldFailAt) {
  TempDir dir;
  std::string message = store_error([] { ConfigStore::check_writable(""); });
  EXPECT_NE(message.find("an empty name names no store file"), std::string::npos) << message;
  message = store_error([&] { ConfigStore::check_writable(dir.path() + "/"); });
  EXPECT_NE(message.find("names a directory, not a store file"), std::string::npos) << message;
  // A name of 250 bytes is legal, but the temporary file beside it would not be.
  const std::string long_name = dir.file(std::string(250, 'x'));
  message = store_error([&] { ConfigStore::check_writable(long_name); });
  EXPECT_NE(message.find("File name too long"), std::string::npos) << message;
  EXPECT_NE(message.find("may be at most 244 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("this one's is 250"), std::string::npos) << message;
  // A lock that cannot be created.
  fs::create_directories(dir.file("store.yaml.lock"));
  message = store_error([&] { ConfigStore::check_writable(dir.file("store.yaml")); });
  EXPECT_NE(message.find("cannot open the lock file " + dir.file("store.yaml.lock")), std::string::npos) << message;
  // A directory that cannot be created.
  write_text(dir.file("file"), "");
  message = store_error([&] { ConfigStore::check_writable(dir.file("file/store.yaml")); });
  EXPECT_NE(message.find("cannot create directory " + dir.file("file")), std::string::npos) << message;
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"file", "store.yaml.lock"})) << "a probe was left behind";
}

TEST(StoreCheckWritable, RefusesADirectoryItMayNotWrite) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes any directory; tools_bad_input.sh checks this as another user";
  TempDir dir;
  fs::create_directories(dir.file("locked"));
  fs::permissions(dir.file("locked"), fs::perms(0555));
  const std::string message = store_error([&] { ConfigStore::check_writable(dir.file("locked/store.yaml")); });
  EXPECT_NE(message.find("cannot create a temporary file beside it"), std::string::npos) << message;
  EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
  fs::permissions(dir.file("locked"), fs::perms(0755));
}

// ---------------------------------------------------------------------------------------------
// Lookup

TEST(StoreLookup, ExactEntry) {
  ConfigStore store;
  const Problem stored[] = {gemm_f32(1024, 64, 147), Problem{Kernel::Gemm, DType::F32, 't', 'n', 1000, 64, 147, 1}};
  for (const Problem& p : stored) store.put({p, {}, 1, 1, 1});
  EXPECT_EQ(found(store.exact(gemm_f32(1024, 64, 147))), to_string(gemm_f32(1024, 64, 147)));
  EXPECT_EQ(found(store.exact(gemm_f32(1000, 64, 147))), "none");
}

// ---------------------------------------------------------------------------------------------
// The dispatch model (dispatch_model.hpp), on synthetic devices and stores: every number below
// follows from the formulas by hand.

const DeviceInfo kOneThreadHost{"openmp", "Test CPU", "x86_64", 1};
const DeviceInfo kHundredSmGpu{"cuda", "Test GPU", "sm_90", 100};

ConfigStore store_of(const DeviceInfo& device, const std::vector<TunedEntry>& entries) {
  ConfigStore store;
  store.header = StoreHeader::stamped(device);
  for (const TunedEntry& entry : entries) store.put(entry);
  return store;
}

std::vector<std::string> ranked_sources(const ConfigStore& store, const Problem& problem) {
  std::vector<std::string> sources;
  for (const RatePrediction& r : rank_stored_configs(store, problem)) sources.push_back(to_string(r.source.problem));
  return sources;
}

TEST(DispatchModel, TeamSlots) {
  // GPUs: ceil(256 / team) teams per SM, within 2048 threads and 32 blocks.
  EXPECT_EQ(team_slots(parse_config("mb64_nb64_kb32_tm8_tn8_team256"), kHundredSmGpu), 100);
  EXPECT_EQ(team_slots(parse_config("mb64_nb64_kb32_tm8_tn4_team128"), kHundredSmGpu), 200);
  EXPECT_EQ(team_slots(parse_config("mb8_nb8_kb8_tm4_tn4_team4"), kHundredSmGpu), 3200);
  EXPECT_EQ(team_slots(parse_config("mb128_nb128_kb16_tm8_tn8_team1024"), kHundredSmGpu), 100);
  // Hosts: a team per `team` threads, at least one.
  const Config one_thread = ConfigBuilder().mb(60).nb(64).kb(256).tm(12).tn(32).team(1);
  const Config two_threads = ConfigBuilder().mb(60).nb(64).kb(256).tm(12).tn(32).team(2);
  EXPECT_EQ(team_slots(one_thread, DeviceInfo{"openmp", "CPU", "x86_64", 8}), 8);
  EXPECT_EQ(team_slots(two_threads, DeviceInfo{"openmp", "CPU", "x86_64", 8}), 4);
  EXPECT_EQ(team_slots(two_threads, kOneThreadHost), 1);
}

TEST(DispatchModel, FactorsOfOneConfig) {
  // 100 x 100 on 64 x 64 blocks: 4 blocks of 128 x 128 computed, 4 teams in 200 slots; one
  // team walks all 256 of K in 32-deep slabs, its fixed cost filling two slab buffers.
  const Config plain = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  const ConfigFit fit = config_fit(gemm_f32(100, 100, 256), plain, kHundredSmGpu);
  EXPECT_DOUBLE_EQ(fit.padding, 100.0 * 100 / (128 * 128));
  EXPECT_EQ(fit.teams, 4);
  EXPECT_EQ(fit.slots, 200);
  EXPECT_DOUBLE_EQ(fit.fill, 4.0 / 200);
  EXPECT_EQ(fit.team_depth, 256);
  EXPECT_EQ(fit.fixed_depth, 64);
  EXPECT_DOUBLE_EQ(fit.depth, 256.0 / (256 + 64));
  // Three buffers fill in three slabs; a host team's fixed cost is kHostFixedDepth.
  Config staged = plain;
  staged.slab_buffers = 3;
  EXPECT_DOUBLE_EQ(config_fit(gemm_f32(100, 100, 256), staged, kHundredSmGpu).depth, 256.0 / (256 + 96));
  EXPECT_DOUBLE_EQ(config_fit(gemm_f32(100, 100, 256), plain, kOneThreadHost).depth, 256.0 / (256 + kHostFixedDepth));
  // Split K: 8 slabs in 3 splits of 3, 3 and 2 slabs: 12 teams, each over at most 96 of K.
  Config split = plain;
  split.ks = 3;
  const ConfigFit split_fit = config_fit(gemm_f32(100, 100, 256), split, kHundredSmGpu);
  EXPECT_EQ(split_fit.splits, 3);
  EXPECT_EQ(split_fit.teams, 12);
  EXPECT_EQ(split_fit.team_depth, 96);
  EXPECT_DOUBLE_EQ(split_fit.depth, 96.0 / (96 + 64));
  // A grid past one wave: 450 teams in 200 slots take 3 waves.
  const ConfigFit waves = config_fit(Problem{Kernel::Batched, DType::F32, 'n', 'n', 64, 64, 16, 450}, plain, kHundredSmGpu);
  EXPECT_EQ(waves.teams, 450);
  EXPECT_DOUBLE_EQ(waves.fill, 450.0 / 600);
  EXPECT_DOUBLE_EQ(waves.depth, 16.0 / (16 + 2 * 16));  // slabs as deep as K
  // Products per team: 450 products, 4 per team, 113 teams.
  Config grouped = plain;
  grouped.bb = 4;
  EXPECT_EQ(config_fit(Problem{Kernel::Batched, DType::F32, 'n', 'n', 64, 64, 16, 450}, grouped, kHundredSmGpu).teams, 113);
  // An empty product: no useful blocks, no K to weigh a fixed cost against.
  const ConfigFit empty = config_fit(gemm_f32(0, 100, 0), plain, kHundredSmGpu);
  EXPECT_EQ(empty.padding, 0);
  EXPECT_EQ(empty.depth, 1);
}

// A TF32 warpgroup team (fp32 `_wg`) fills its slab pipeline while the other teams its SM runs at
// once multiply: its fixed cost is shared among the grid's teams an SM holds, up to the SM's slots
// (two teams of 128 threads). Other families, and a grid of fewer teams than SMs, keep it whole.
TEST(DispatchModel, ATf32WarpgroupTeamsFixedCostIsSharedWithTheTeamsBesideIt) {
  const Config wg = parse_config("mb128_nb64_kb32_tm128_tn64_team128_st3_wg");
  ASSERT_EQ(team_slots(wg, kHundredSmGpu), 200);
  EXPECT_DOUBLE_EQ(config_fit(gemm_f32(128 * 50, 64, 1024), wg, kHundredSmGpu).fixed_depth, 96);   // 50 teams
  EXPECT_DOUBLE_EQ(config_fit(gemm_f32(128 * 150, 64, 1024), wg, kHundredSmGpu).fixed_depth, 48);  // 150 teams
  EXPECT_DOUBLE_EQ(config_fit(gemm_f32(128 * 400, 64, 1024), wg, kHundredSmGpu).fixed_depth, 48);  // past the slots
  Config split = wg;
  split.ks = 4;  // 50 blocks in 200 teams
  EXPECT_DOUBLE_EQ(config_fit(gemm_f32(128 * 50, 64, 1024), split, kHundredSmGpu).fixed_depth, 48);
  const Config tc = parse_config("mb128_nb64_kb32_tm64_tn32_team128_st3_tc");
  EXPECT_DOUBLE_EQ(config_fit(gemm_f32(128 * 150, 64, 1024), tc, kHundredSmGpu).fixed_depth, 96);
  Problem f16 = gemm_f32(128 * 150, 64, 1024);
  f16.dtype = DType::F16;
  const Config wg16 = parse_config("mb64_nb64_kb64_tm64_tn64_team128_st3_wg");
  EXPECT_DOUBLE_EQ(config_fit(f16, wg16, kHundredSmGpu).fixed_depth, 3 * 64);
}

TEST(DispatchModel, PredictionScalesTheMeasuredRateByFit) {
  // 2 x 128 x 64 x 256 flops at 1 GFLOP/s: 4.2 ms a call, of which one launch.
  const TunedEntry source{gemm_f32(128, 64, 256), parse_config("mb64_nb64_kb32_tm8_tn4_team128"), 1, 0.5, 10};
  const RatePrediction r = predict_rate(gemm_f32(256, 64, 256), source, source.config, kHundredSmGpu);
  // Four teams instead of two, padding and depth alike; twice the rows: a distance of ln 2.
  EXPECT_DOUBLE_EQ(r.on_source.fill, 2.0 / 200);
  EXPECT_DOUBLE_EQ(r.on_problem.fill, 4.0 / 200);
  EXPECT_DOUBLE_EQ(r.distance, std::log(2.0));
  EXPECT_DOUBLE_EQ(r.trust, std::exp(-kGpuTrustDecay * std::log(2.0)));
  // Unsplit: the overhead is one launch, here and at the source.
  const double source_s = 2.0 * 128 * 64 * 256 / 1e9;
  EXPECT_DOUBLE_EQ(r.source_busy, 1 - kGpuLaunchSeconds / source_s);
  const double multiply_gflops = 1 / r.source_busy * 2, multiply_s = 2.0 * 256 * 64 * 256 / (multiply_gflops * 1e9);
  EXPECT_DOUBLE_EQ(r.busy, multiply_s / (multiply_s + kGpuLaunchSeconds));
  EXPECT_DOUBLE_EQ(r.gflops, multiply_gflops * r.busy * r.trust);
  EXPECT_FALSE(r.exact);
  EXPECT_TRUE(predict_rate(source.problem, source, source.config, kHundredSmGpu).exact);
  // A host discounts the farther shape's rate: 2^-0.2 for twice the rows.
  const RatePrediction host = predict_rate(gemm_f32(256, 64, 256), source, source.config, kOneThreadHost);
  EXPECT_DOUBLE_EQ(host.trust, std::pow(2.0, -kHostTrustDecay));
  EXPECT_EQ(host.busy, 1);  // no launch cost on hosts
  EXPECT_DOUBLE_EQ(host.gflops, 1 * host.on_problem.product() / host.on_source.product() * host.trust);
}

// The tools explain the model (kgemm-run's help, --why) with the decays this build runs with.
TEST(DispatchModel, SummaryStatesTheDecaysInForce) {
  const std::string summary = dispatch_model_summary();
  EXPECT_NE(summary.find("exp(-" + shortest(kHostTrustDecay) + " x shape distance) on hosts"), std::string::npos) << summary;
  EXPECT_NE(summary.find("exp(-" + shortest(kGpuTrustDecay) + " x shape distance) on GPUs"), std::string::npos) << summary;
}

// The nearest entry's 128-row blocks would compute 256 rows for 130 (51 % useful); the farther
// entry's 64-row blocks compute 192 (68 %). Measured rates equal, one thread (fill always 1).
TEST(DispatchModel, TilesThatPadBadlyLoseToTilesThatFit) {
  const ConfigStore store = store_of(kOneThreadHost, {{gemm_f32(128, 64, 256), parse_config("mb128_nb64_kb256_tm8_tn8_team1"), 100, 90, 10},
                                                      {gemm_f32(192, 64, 256), parse_config("mb64_nb64_kb256_tm8_tn8_team1"), 100, 90, 10}});
  const Problem problem = gemm_f32(130, 64, 256);
  const auto ranked = rank_stored_configs(store, problem);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(to_string(ranked[0].source.problem), to_string(gemm_f32(192, 64, 256)));
  EXPECT_DOUBLE_EQ(ranked[0].on_problem.padding, 130.0 / 192);
  EXPECT_DOUBLE_EQ(ranked[1].on_problem.padding, 130.0 / 256);
  EXPECT_LT(ranked[1].distance, ranked[0].distance);  // the nearest rule would have taken it
}

// A config measured fast on a grid that filled the GPU better than the new one would: the
// nearest entry's unsplit 64 x 64 blocks give 256 x 256 only 16 teams for 100 SMs (fill 0.16,
// half its own 0.32); the split-K entry's 128 teams take two waves of 100 (0.64, as on its own).
TEST(DispatchModel, ConfigThatLeavesMostOfAGpuIdleLosesOnASmallGrid) {
  const Config unsplit = parse_config("mb64_nb64_kb32_tm8_tn8_team256");
  Config split = unsplit;
  split.ks = 8;
  const ConfigStore store =
      store_of(kHundredSmGpu, {{gemm_f32(512, 256, 4096), unsplit, 1000, 500, 10}, {gemm_f32(120, 256, 4096), split, 800, 100, 10}});
  const Problem small = gemm_f32(256, 256, 4096);
  const auto ranked = rank_stored_configs(store, small);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(to_string(ranked[0].source.config), to_string(split));
  EXPECT_DOUBLE_EQ(ranked[0].on_problem.fill, 128.0 / 200);
  EXPECT_DOUBLE_EQ(ranked[1].on_problem.fill, 16.0 / 100);
  EXPECT_LT(ranked[1].distance, ranked[0].distance);
  // On a grid that fills the GPU either way the faster-measured config wins.
  EXPECT_EQ(to_string(rank_stored_configs(store, gemm_f32(4096, 4096, 4096))[0].source.config), to_string(unsplit));
}

// A call's launch is part of the time a rate was measured in: on a call of two launches' time half
// of it, on a call ten times as large (at 1.5x the rate) a thirteenth. Two configs that fit every
// shape here alike (full waves, no padding, the same K): the one measured 1.5x faster on a large
// shape loses, on a shape between, to the one whose small shape's rate was held down by its launch.
TEST(DispatchModel, ALaunchWeighsOnTheSmallShapeItWasMeasuredOn) {
  const Config x = parse_config("mb64_nb64_kb32_tm8_tn4_team128"), y = parse_config("mb64_nb64_kb32_tm4_tn4_team256");
  const Problem small = gemm_f32(12800, 64, 256), large = gemm_f32(128000, 64, 256), between = gemm_f32(51200, 64, 256);
  const double small_rate = small.flops() / (2 * kGpuLaunchSeconds) / 1e9;
  const ConfigStore store = store_of(kHundredSmGpu, {{small, x, small_rate, 1, 10}, {large, y, 1.5 * small_rate, 1, 10}});
  const auto ranked = rank_stored_configs(store, between);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(to_string(ranked[0].config), to_string(x));
  for (const RatePrediction& r : ranked) {
    EXPECT_DOUBLE_EQ(r.on_problem.product(), r.on_source.product());
    const double source_s = r.source.problem.flops() / (r.source.gflops * 1e9);
    const double multiply_s = between.flops() / (r.source.problem.flops() / (source_s - kGpuLaunchSeconds));
    EXPECT_NEAR(r.gflops, between.flops() / (multiply_s + kGpuLaunchSeconds) / 1e9, 1e-9 * r.gflops);
  }
  EXPECT_GT(ranked[1].source.gflops, ranked[0].source.gflops);  // measured, y was the faster
}

// The same GPU with a memory bandwidth: 1000 GB/s, and a slow 10 GB/s one.
DeviceInfo with_bandwidth(DeviceInfo device, double gbps) {
  device.memory_gbps = gbps;
  return device;
}

// Every team's 64 x 64 partial block, 4-byte sums written and read back: 12 teams (FactorsOfOneConfig)
// x 4096 x 8 bytes at 10^12 bytes/s. Nothing for an unsplit config or an unknown bandwidth.
TEST(DispatchModel, SumPassAtThePeakBandwidth) {
  const Config plain = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  Config split = plain;
  split.ks = 3;
  const DeviceInfo gpu = with_bandwidth(kHundredSmGpu, 1000);
  const auto sum_pass = [](const Config& c, const DeviceInfo& device) {
    return sum_pass_seconds(config_fit(gemm_f32(100, 100, 256), c, device), c, device);
  };
  EXPECT_DOUBLE_EQ(sum_pass(split, gpu), 12 * 4096 * 8 / 1e12);
  EXPECT_EQ(sum_pass(plain, gpu), 0);
  EXPECT_EQ(sum_pass(split, kHundredSmGpu), 0);
}

// A split source's measured time holds its sum pass: the rate it multiplied at is higher than the
// rate it measured, and a split here pays its own sum pass.
TEST(DispatchModel, PredictionMovesTheSumPassFromTheSourceToTheProblem) {
  const DeviceInfo gpu = with_bandwidth(kHundredSmGpu, 1000);
  Config split = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  split.ks = 2;
  // 128 x 64 x 256: 2 blocks in 2 splits, 4 teams; 2 x 128 x 64 x 256 flops at 10 GFLOP/s.
  const TunedEntry source{gemm_f32(128, 64, 256), split, 10, 5, 10};
  // Two launches, the multiply's and the sum pass's, on either side.
  const double measured_s = 2.0 * 128 * 64 * 256 / 10e9, source_sum_s = 4 * 4096 * 8 / 1e12 + 2 * kGpuLaunchSeconds;
  const RatePrediction r = predict_rate(gemm_f32(256, 64, 256), source, split, gpu);
  EXPECT_DOUBLE_EQ(r.source_busy, 1 - source_sum_s / measured_s);
  const double multiply_gflops = 10 / r.source_busy * r.on_problem.product() / r.on_source.product();
  const double multiply_s = 2.0 * 256 * 64 * 256 / (multiply_gflops * 1e9), sum_s = 8 * 4096 * 8 / 1e12 + 2 * kGpuLaunchSeconds;
  EXPECT_DOUBLE_EQ(r.busy, multiply_s / (multiply_s + sum_s));
  EXPECT_DOUBLE_EQ(r.gflops, multiply_gflops * r.busy * r.trust);
}

// A split latency counts as overhead on either side where the call is split, and nowhere else:
// taken out of a split source's measured time, and added to a split config's time here.
TEST(DispatchModel, ASplitLatencyWeighsOnSplitCallsOnly) {
  const DeviceInfo gpu = with_bandwidth(kHundredSmGpu, 1000);
  const Config unsplit = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  Config split = unsplit;
  split.ks = 2;
  constexpr double kLatency = 3e-6;
  const Problem here = gemm_f32(256, 64, 256);
  for (const Config& stored : {unsplit, split}) {
    const TunedEntry source{gemm_f32(128, 64, 256), stored, 10, 5, 10};
    const RatePrediction whole = predict_rate(here, source, unsplit, gpu, gpu, std::nullopt, kLatency);
    const RatePrediction cut = predict_rate(here, source, split, gpu, gpu, std::nullopt, kLatency);
    const RatePrediction cut_without = predict_rate(here, source, split, gpu);
    // Whole here: the same from a whole source; from a split one, faster (it multiplied faster).
    if (stored.ks == 1)
      EXPECT_DOUBLE_EQ(whole.gflops, predict_rate(here, source, unsplit, gpu).gflops);
    else
      EXPECT_GT(whole.gflops, predict_rate(here, source, unsplit, gpu).gflops);
    const double source_s = 2.0 * 128 * 64 * 256 / 10e9;
    const double source_overhead_s = overhead_seconds(cut.on_source, stored, gpu) + (stored.ks > 1 ? kLatency : 0);
    EXPECT_DOUBLE_EQ(cut.source_busy, 1 - source_overhead_s / source_s) << to_string(stored);
    const double multiply_gflops = 10 / cut.source_busy * cut.on_problem.product() / cut.on_source.product();
    const double multiply_s = here.flops() / (multiply_gflops * 1e9);
    const double overhead_s = overhead_seconds(cut.on_problem, split, gpu) + kLatency;
    EXPECT_DOUBLE_EQ(cut.busy, multiply_s / (multiply_s + overhead_s)) << to_string(stored);
    if (stored.ks == 1) EXPECT_LT(cut.gflops, cut_without.gflops);
  }
}

// One entry, unsplit, tuned on a grid that fills the GPU (1000 teams of 256 threads on 100 SMs).
// A shape of 50 blocks leaves half the SMs idle unsplit: with a known bandwidth the model proposes
// the entry's config split in two (100 teams, the sum pass a fraction of a percent of the call),
// ahead of deeper splits (each team's fixed cost weighs more) and the stored config. On short K
// at a slow 10 GB/s the sum pass outweighs the idle SMs and the stored config stays first.
TEST(DispatchModel, SplitsProposedWhereTheBandwidthPricesThem) {
  const Config unsplit = parse_config("mb64_nb64_kb32_tm8_tn8_team256");
  const TunedEntry entry{gemm_f32(6400, 640, 4096), unsplit, 1000, 500, 10};
  const Problem few_blocks = gemm_f32(320, 640, 4096);

  const auto fast = rank_stored_configs(store_of(with_bandwidth(kHundredSmGpu, 1000), {entry}), few_blocks);
  ASSERT_EQ(fast.size(), 6u);  // the stored config and 5 splits of its 128 slabs, from 2 to 32
  EXPECT_EQ(fast[0].config.ks, 2);
  EXPECT_TRUE(fast[0].source == entry);
  EXPECT_GT(fast[0].busy, 0.99);
  EXPECT_LT(fast[0].busy, 1);
  EXPECT_EQ(fast[1].config.ks, 4);
  EXPECT_EQ(fast.back().config.ks, 1);
  EXPECT_DOUBLE_EQ(fast.back().gflops / fast[0].gflops,
                   fast.back().on_problem.product() * fast.back().busy / (fast[0].on_problem.product() * fast[0].busy));

  const Problem short_k = gemm_f32(320, 640, 256);
  EXPECT_EQ(rank_stored_configs(store_of(with_bandwidth(kHundredSmGpu, 1000), {entry}), short_k)[0].config.ks, 2);
  EXPECT_EQ(rank_stored_configs(store_of(with_bandwidth(kHundredSmGpu, 10), {entry}), short_k)[0].config.ks, 1);
  // Without a bandwidth nothing is proposed; nor where the grid fills the GPU (split_fits).
  EXPECT_EQ(rank_stored_configs(store_of(kHundredSmGpu, {entry}), few_blocks).size(), 1u);
  EXPECT_EQ(rank_stored_configs(store_of(with_bandwidth(kHundredSmGpu, 1000), {entry}), gemm_f32(6400, 2560, 4096)).size(), 1u);
}

// The problem's own entry comes first however much faster another is predicted; entries of
// another kernel, dtype or access order are never candidates.
TEST(DispatchModel, ExactEntryFirstAndComparableEntriesOnly) {
  const Config config = parse_config("mb64_nb64_kb256_tm8_tn8_team1");
  const Problem problem = gemm_f32(1000, 64, 147);
  const ConfigStore store =
      store_of(kOneThreadHost, {{problem, config, 1, 1, 1},
                                {gemm_f32(1024, 64, 147), config, 1000, 1, 1},
                                {Problem{Kernel::Gemm, DType::F32, 't', 'n', 1000, 64, 147, 1}, config, 5000, 1, 1},
                                {Problem{Kernel::Batched, DType::F32, 'n', 'n', 1000, 64, 147, 8}, config, 5000, 1, 1},
                                {Problem{Kernel::Gemm, DType::F16, 'n', 'n', 1000, 64, 147, 1}, config, 5000, 1, 1}});
  EXPECT_EQ(ranked_sources(store, problem), (std::vector<std::string>{to_string(problem), to_string(gemm_f32(1024, 64, 147))}));
  EXPECT_TRUE(ranked_sources(store, Problem{Kernel::Gemm, DType::F32, 't', 't', 1000, 64, 147, 1}).empty());
}

// The runners-up are ranked only when asked for, each from its own measured rate on its entry's
// shape as a winner is, and never as the problem's own pick: only a winner is exact.
TEST(DispatchModel, RunnersUpAreRankedOnlyWhenAskedForAndNeverExact) {
  const Problem problem = gemm_f32(1000, 64, 147);
  const Config winner = parse_config("mb64_nb64_kb256_tm8_tn8_team1"), runner_up = parse_config("mb32_nb64_kb64_tm8_tn4_team1");
  TunedEntry own{problem, winner, 100, 1, 1};
  own.runners_up = {{runner_up, 90}};
  TunedEntry near{gemm_f32(1024, 64, 147), winner, 50, 1, 1};
  near.runners_up = {{runner_up, 500}};
  EXPECT_EQ(rated_entries(near).size(), 2u);
  EXPECT_TRUE(rated_entries(near)[0].runners_up.empty());
  EXPECT_EQ(rated_entries(near)[1].config, runner_up);
  EXPECT_EQ(rated_entries(near)[1].gflops, 500);
  const ConfigStore store = store_of(kOneThreadHost, {own, near});
  const auto configs = [&](StoredConfigs which) {
    std::vector<std::string> out;
    for (const RatePrediction& r : rank_stored_configs(store, problem, store.header.device, std::nullopt, which))
      out.push_back(to_string(r.config) + (r.exact ? " exact" : "") + " from " + shortest(r.source.gflops));
    return out;
  };
  EXPECT_EQ(configs(StoredConfigs::Winners), (std::vector<std::string>{to_string(winner) + " exact from 100", to_string(winner) + " from 50"}));
  const std::vector<std::string> all = configs(StoredConfigs::WithRunnersUp);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0], to_string(winner) + " exact from 100");  // the own winner first, though predicted slower
  EXPECT_EQ(all[1], to_string(runner_up) + " from 500");
  EXPECT_NE(std::find(all.begin(), all.end(), to_string(runner_up) + " from 90"), all.end());
}

// Entries at the edges of what a store holds: the largest shapes (their flop counts far past
// 64-bit integers), the largest and the smallest rates, a GPU of INT_MAX SMs, bandwidths from
// the smallest double up. Every prediction is a finite rate >= 0.
TEST(DispatchModel, PredictionsStayFiniteAtTheEdgesOfTheStore) {
  const int huge = std::numeric_limits<int>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  const Config config = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  const std::vector<TunedEntry> entries = {{gemm_f32(huge, huge, huge), config, kMaxStoreGflops, 1, 1},
                                           {gemm_f32(huge, 1, huge), config, tiny, 0, 1},
                                           {gemm_f32(1, 1, 1), config, kMaxStoreGflops, 1, 1},
                                           {gemm_f32(1, huge, 1), config, tiny, 0, 1}};
  const Problem problems[] = {gemm_f32(huge, huge, huge), gemm_f32(1, 1, 1), gemm_f32(huge, 1, 1), gemm_f32(1000, 64, huge)};
  for (const DeviceInfo& base : {kOneThreadHost, kHundredSmGpu, DeviceInfo{"cuda", "GPU", "sm_90", huge}})
    for (double gbps : {0.0, tiny, 1.0, std::numeric_limits<double>::max()})
      for (const Problem& problem : problems) {
        const auto ranked = rank_stored_configs(store_of(with_bandwidth(base, gbps), entries), problem);
        EXPECT_FALSE(ranked.empty());
        for (const RatePrediction& r : ranked)
          EXPECT_TRUE(std::isfinite(r.gflops) && r.gflops >= 0)
              << r.gflops << " GFLOP/s for " << to_string(problem) << " from " << to_string(r.source.problem) << " on "
              << to_string(base) << " at " << gbps << " GB/s";
      }
}

// ---------------------------------------------------------------------------------------------
// Merging the stores of shards

// The sample entries split among files: entry i goes to file i % files.size().
std::vector<std::string> sample_shards(const TempDir& dir, int files, const DeviceInfo& device) {
  std::vector<ConfigStore> shards(files);
  std::vector<std::string> paths;
  for (int i = 0; i < files; ++i) shards[i].header = StoreHeader::stamped(device);
  const auto entries = sample_entries();
  for (std::size_t i = 0; i < entries.size(); ++i) shards[i % files].put(entries[i]);
  for (int i = 0; i < files; ++i) {
    paths.push_back(dir.file("shard" + std::to_string(i) + ".yaml"));
    shards[i].save(paths.back());
  }
  return paths;
}

TEST(StoreMerge, DisjointStoresGiveTheUnion) {
  TempDir dir;
  const std::string out = dir.file("merged/all.yaml");
  const MergeOutcome outcome = merge_stores(sample_shards(dir, 3), out);
  EXPECT_TRUE(outcome.clashes.empty());
  EXPECT_EQ(outcome.added, int(sample_entries().size()));
  const ConfigStore merged = ConfigStore::load(out);
  EXPECT_TRUE(merged.entries() == sample_store().entries());
  EXPECT_TRUE(merged.entries() == outcome.store.entries());
  EXPECT_TRUE(same_device(merged.header.device, kTestDevice));

  // Merging again adds nothing and reports nothing: the same entries are no clash.
  const MergeOutcome again = merge_stores(sample_shards(dir, 2), out);
  EXPECT_EQ(again.added, 0);
  EXPECT_TRUE(again.clashes.empty());
  EXPECT_TRUE(ConfigStore::load(out).entries() == sample_store().entries());
}

TEST(StoreMerge, FasterMeasurementWinsAClashAndTheMergeSaysSo) {
  TempDir dir;
  ConfigStore slow = sample_store(), fast = sample_store();
  TunedEntry better = *fast.exact(kTunedShape);
  better.config.kb = 64;
  better.gflops = 80;
  fast.put(better);
  slow.save(dir.file("slow.yaml"));
  fast.save(dir.file("fast.yaml"));
  for (const std::string first : {"slow", "fast"}) {
    const std::vector<std::string> inputs = {dir.file(first + ".yaml"), dir.file(first == "slow" ? "fast.yaml" : "slow.yaml")};
    const std::string out = dir.file(first + "-first.yaml");
    const MergeOutcome outcome = merge_stores(inputs, out);
    const ConfigStore merged = ConfigStore::load(out);
    ASSERT_NE(merged.exact(kTunedShape), nullptr);
    EXPECT_TRUE(*merged.exact(kTunedShape) == better) << "from " << inputs[0] << " first";
    EXPECT_EQ(merged.entries().size(), sample_entries().size());
    ASSERT_EQ(outcome.clashes.size(), 1u);
    const std::string& clash = outcome.clashes[0];
    EXPECT_EQ(clash, to_string(kTunedShape) + ": kept " + dir.file("fast.yaml") + "'s mb64_nb64_kb64_tm4_tn4_team16 (80 GFLOP/s) over " +
                         dir.file("slow.yaml") + "'s mb64_nb64_kb32_tm4_tn4_team16 (55.2 GFLOP/s), the faster");
  }

  // Equal speeds, different configs: the first given stays, and the merge says why.
  better.gflops = 55.2;
  fast.put(better);
  fast.save(dir.file("fast.yaml"));
  const MergeOutcome tie = merge_stores({dir.file("slow.yaml"), dir.file("fast.yaml")}, dir.file("tie.yaml"));
  EXPECT_EQ(to_string(ConfigStore::load(dir.file("tie.yaml")).exact(kTunedShape)->config), "mb64_nb64_kb32_tm4_tn4_team16");
  ASSERT_EQ(tie.clashes.size(), 1u);
  EXPECT_NE(tie.clashes[0].find("the first of equal speed"), std::string::npos) << tie.clashes[0];
}

// A rate measured on older kernels loses a clash to one of the code's generation, however much
// higher it is: the kernels it was measured on have changed.
TEST(StoreMerge, TheNewerKernelGenerationWinsAClash) {
  TempDir dir;
  ConfigStore old_store = sample_store(), new_store = sample_store();
  TunedEntry stale = *old_store.exact(kTunedShape);
  stale.gflops = 1000;
  stale.generation = kKernelGeneration - 1;
  old_store.put(stale);
  TunedEntry current = *new_store.exact(kTunedShape);
  current.config.kb = 64;
  new_store.put(current);
  old_store.save(dir.file("old.yaml"));
  new_store.save(dir.file("new.yaml"));
  const MergeOutcome outcome = merge_stores({dir.file("new.yaml"), dir.file("old.yaml")}, dir.file("out.yaml"));
  EXPECT_TRUE(*ConfigStore::load(dir.file("out.yaml")).exact(kTunedShape) == current);
  ASSERT_EQ(outcome.clashes.size(), 1u);
  EXPECT_NE(outcome.clashes[0].find("kept " + dir.file("new.yaml") + "'s"), std::string::npos) << outcome.clashes[0];
  EXPECT_NE(outcome.clashes[0].find(", the newer kernel generation (" + std::to_string(kKernelGeneration) + " over " +
                                    std::to_string(kKernelGeneration - 1) + ")"),
            std::string::npos)
      << outcome.clashes[0];
}

// The header keeps the versions that tuned the entries when every store agrees (a GPU job's
// stores merged by a host-only build elsewhere), and names the merging program's when they differ.
TEST(StoreMerge, TheHeaderNamesTheVersionsThatTunedTheEntries) {
  TempDir dir;
  std::vector<std::string> inputs = sample_shards(dir, 2);
  for (const std::string& path : inputs) {
    ConfigStore store = ConfigStore::load(path);
    store.header.kokkos_version = "4.6.1";
    store.save(path);
  }
  merge_stores(inputs, dir.file("agreed.yaml"));
  EXPECT_EQ(ConfigStore::load(dir.file("agreed.yaml")).header.kokkos_version, "4.6.1");

  ConfigStore other = ConfigStore::load(inputs[1]);
  other.header.kokkos_version = "4.7.0";
  other.save(inputs[1]);
  merge_stores(inputs, dir.file("mixed.yaml"));
  EXPECT_EQ(ConfigStore::load(dir.file("mixed.yaml")).header.kokkos_version, StoreHeader::stamped(kTestDevice).kokkos_version);
  // The output's own entries take part: merging agreeing inputs into a store of other versions.
  merge_stores({inputs[0]}, dir.file("mixed.yaml"));
  EXPECT_EQ(ConfigStore::load(dir.file("mixed.yaml")).header.kokkos_version, StoreHeader::stamped(kTestDevice).kokkos_version);
}

TEST(StoreMerge, TheOutputsOwnEntriesTakePart) {
  TempDir dir;
  const std::string out = dir.file("out.yaml");
  ConfigStore held;
  held.header = StoreHeader::stamped(kTestDevice);
  TunedEntry fastest = sample_entries()[1];  // kTunedShape at 55.2
  fastest.gflops = 500;
  const TunedEntry only_here{gemm_f32(5, 6, 7), parse_config("mb16_nb16_kb32_tm1_tn1_team2"), 3.5, 3.5, 2};
  held.put(fastest);
  held.put(only_here);
  held.save(out);
  const MergeOutcome outcome = merge_stores(sample_shards(dir, 2), out);
  const ConfigStore merged = ConfigStore::load(out);
  EXPECT_EQ(merged.entries().size(), sample_entries().size() + 1);
  EXPECT_TRUE(*merged.exact(kTunedShape) == fastest);
  EXPECT_TRUE(*merged.exact(only_here.problem) == only_here);
  EXPECT_EQ(outcome.added, int(sample_entries().size()) - 1);
  ASSERT_EQ(outcome.clashes.size(), 1u);
  EXPECT_NE(outcome.clashes[0].find("kept " + out + "'s"), std::string::npos) << outcome.clashes[0];
}

TEST(StoreMerge, AnotherDevicesStoreIsRefusedNamingBoth) {
  TempDir dir;
  const std::string out = dir.file("out.yaml");
  DeviceInfo more_threads = kTestDevice;
  more_threads.threads = 8;
  std::vector<std::string> inputs = sample_shards(dir, 2);
  ConfigStore foreign;
  foreign.header = StoreHeader::stamped(more_threads);
  foreign.put({gemm_f32(5, 6, 7), parse_config("mb16_nb16_kb32_tm1_tn1_team2"), 3.5, 3.5, 2});
  inputs.push_back(dir.file("foreign.yaml"));
  foreign.save(inputs.back());
  try {
    merge_stores(inputs, out);
    ADD_FAILURE() << "merged a store of another device";
  } catch (const StoreError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("kgemm: " + inputs.back() + ": holds configs of " + to_string(more_threads) + ", but " +
                                inputs.front() + " holds configs of " + to_string(kTestDevice),
                            0),
              0u)
        << message;
  }
  EXPECT_FALSE(fs::exists(out));

  // An output of another device is refused as autotune refuses it.
  foreign.save(out);
  const std::string before = read_text(out);
  EXPECT_THROW(merge_stores(sample_shards(dir, 2), out), StoreError);
  EXPECT_EQ(read_text(out), before);
}

// Nothing is lost: one bad entry in one input refuses the whole merge, the output as it was.
TEST(StoreMerge, ABadInputRefusesTheMergeAndLeavesTheOutputUntouched) {
  TempDir dir;
  const std::string out = dir.file("out.yaml");
  ConfigStore held;
  held.header = StoreHeader::stamped(kTestDevice);
  held.put({gemm_f32(5, 6, 7), parse_config("mb16_nb16_kb32_tm1_tn1_team2"), 3.5, 3.5, 2});
  held.save(out);
  const std::string before = read_text(out);
  const std::vector<std::string> inputs = sample_shards(dir, 2);
  const std::pair<std::string, std::string> spoilers[] = {
      {"gflops: 55.2", "gflops: inf"},
      {"config: mb64_nb64_kb32_tm4_tn4_team16", "config: mb64_nb64_kb32_tm0_tn4_team16"},
      {"m: 12544", "m: 0"},
  };
  const std::string good = read_text(inputs[1]);
  for (const auto& [from, to] : spoilers) {
    write_text(inputs[1], text_after_replacing(good, from, to));
    try {
      merge_stores(inputs, out);
      ADD_FAILURE() << "merged a store with " << to;
    } catch (const StoreError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("kgemm: " + inputs[1] + ": line ", 0), 0u) << e.what();
    }
    EXPECT_EQ(read_text(out), before) << to;
  }
  write_text(inputs[1], good);
  EXPECT_THROW(merge_stores({inputs[0], dir.file("missing.yaml")}, out), StoreError);
  EXPECT_THROW(merge_stores({}, out), std::invalid_argument);
  EXPECT_EQ(read_text(out), before);
  for (const auto& file : fs::directory_iterator(dir.path()))
    EXPECT_EQ(file.path().string().find(".tmp."), std::string::npos) << file.path();
}

// ---------------------------------------------------------------------------------------------
// Dispatch, per space and dtype

std::vector<std::string>& recorded_labels() {
  static std::vector<std::string> labels;
  return labels;
}

void record_label(const char* label, std::uint32_t /*device_id*/, std::uint64_t* /*kernel_id*/) {
  recorded_labels().emplace_back(label);
}

// Runs `run` and returns the labels of the GEMM kernels it launched, as a profiler sees them
// (a Kokkos Tools begin_parallel_for callback).
template <class Run>
std::vector<std::string> gemm_kernel_labels(Run&& run) {
  recorded_labels().clear();
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(record_label);
  run();
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
  std::vector<std::string> gemm;
  for (const std::string& label : recorded_labels())
    if (label.rfind("kgemm::tiled_gemm", 0) == 0) gemm.push_back(label);
  return gemm;
}

// Whether `ran` is `config` with K split any number of ways (1 included).
bool is_split_of(const Config& ran, Config config) {
  config.ks = ran.ks;
  return ran == config;
}

// Runs kgemm::gemm on g's shape (dispatched config), checks it against the fp64 reference and
// that the one kernel launched was `expected`.
template <class Case>
void expect_gemm_runs(const GemmCheck& g, const Config& expected) {
  const auto labels = gemm_kernel_labels([&] { run_check<Case>(g); });
  EXPECT_EQ(labels, std::vector<std::string>{"kgemm::tiled_gemm " + to_string(expected)});
}

// The same where the dispatch model chose by prediction: `expected` or one of the K splits it
// proposes where the store records the device's bandwidth (GPUs).
template <class Case>
void expect_gemm_runs_split_of(const GemmCheck& g, const Config& expected) {
  const auto labels = gemm_kernel_labels([&] { run_check<Case>(g); });
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_TRUE(is_split_of(parse_config(labels[0].substr(labels[0].find(' ') + 1)), expected)) << labels[0];
}

template <class Case>
Problem problem_of_shape(int m, int n, int k) {
  return {Kernel::Gemm, dtype_of<typename Case::Value>(), 'n', 'n', m, n, k, 1};
}

// Legal on every space and unlike its default: the default with half as deep K slabs.
template <class Space>
Config non_default_config() {
  Config config = TuningPolicy<Space>::default_config();
  config.kb /= 2;
  return config;
}

ConfigStore store_for(const DeviceInfo& device, const std::vector<std::pair<Problem, Config>>& tuned) {
  std::vector<TunedEntry> entries;
  for (const auto& [problem, config] : tuned) entries.push_back({problem, config, 2, 1, 10});
  return store_of(device, entries);
}

KGEMM_CASE_TEST(DispatchTest, UsesStoredConfig) {
  using Space = typename TypeParam::ExecSpace;
  GemmCheck g;
  g.m = 67, g.n = 45, g.k = 129;
  const Config tuned = non_default_config<Space>();
  const StoreInUse store(store_for(device_info<Space>(), {{problem_of_shape<TypeParam>(g.m, g.n, g.k), tuned}}));
  expect_gemm_runs<TypeParam>(g, tuned);
}

// An untuned shape runs the stored config that fits it: the 64 x 48 entry's config, not the
// 4096 x 48 entry's 64-column blocks (48 of whose columns would be useful).
KGEMM_CASE_TEST(DispatchTest, UntunedShapeUsesStoredConfigThatFits) {
  using Space = typename TypeParam::ExecSpace;
  GemmCheck g;
  g.m = 70, g.n = 45, g.k = 120;
  const Config fitting = non_default_config<Space>();
  const StoreInUse store(store_for(device_info<Space>(), {{problem_of_shape<TypeParam>(64, 48, 128), fitting},
                                                          {problem_of_shape<TypeParam>(4096, 48, 128), Config{}}}));
  expect_gemm_runs_split_of<TypeParam>(g, fitting);
}

// A store named with KGEMM_CONFIG_FILE serves whichever device of the space it was tuned for,
// with one warning naming both devices.
KGEMM_CASE_TEST(DispatchTest, UsesANamedStoreOfAnotherDeviceWithOneWarning) {
  using Space = typename TypeParam::ExecSpace;
  const Problem problem = problem_of_shape<TypeParam>(67, 45, 129);
  DeviceInfo other = device_info<Space>();
  other.device = "Some Other Device 9000";
  const StoreInUse store(store_for(other, {{problem, non_default_config<Space>()}}));
  testing::internal::CaptureStderr();
  const Config chosen = select_config<Space>(problem);
  select_config<Space>(problem_of_shape<TypeParam>(8, 8, 8));
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(to_string(chosen), to_string(non_default_config<Space>()));
  EXPECT_EQ(warnings.rfind("kgemm: warning: using tuned configs in " + store.path() + " (KGEMM_CONFIG_FILE)", 0), 0u)
      << warnings;
  EXPECT_NE(warnings.find(to_string(other)), std::string::npos) << warnings;
  EXPECT_NE(warnings.find(to_string(device_info<Space>())), std::string::npos) << warnings;
  EXPECT_EQ(occurrences(warnings, "\n"), 1u) << warnings;
}

KGEMM_CASE_TEST(DispatchTest, MalformedStoreWarnsOnceAndUsesDefaults) {
  using Space = typename TypeParam::ExecSpace;
  const StoreInUse store(std::string("device: {space: [\n"));
  testing::internal::CaptureStderr();
  const Config first = select_config<Space>(problem_of_shape<TypeParam>(67, 45, 129));
  const Config second = select_config<Space>(problem_of_shape<TypeParam>(8, 8, 8));
  const std::string warnings = testing::internal::GetCapturedStderr();
  const Config fallback = TuningPolicy<Space>::default_config(dtype_of<typename TypeParam::Value>());
  EXPECT_EQ(to_string(first), to_string(fallback));
  EXPECT_EQ(to_string(second), to_string(fallback));
  EXPECT_EQ(warnings.rfind("kgemm: warning: ignoring tuned configs: kgemm: " + store.path() + ": line ", 0), 0u)
      << warnings;
  EXPECT_EQ(occurrences(warnings, "\n"), 1u) << warnings;
}

// A program's warning handler receives dispatch's warnings instead of stderr, one message each
// without the prefix; a handler that throws loses nothing (the message goes to stderr) and an
// empty handler restores stderr.
KGEMM_CASE_TEST(DispatchTest, WarningsGoToTheProgramsHandler) {
  using Space = typename TypeParam::ExecSpace;
  const StoreInUse store(std::string("device: {space: [\n"));
  std::vector<std::string> received;
  const WarningHandler previous = set_warning_handler([&](const std::string& m) { received.push_back(m); });
  testing::internal::CaptureStderr();
  select_config<Space>(problem_of_shape<TypeParam>(67, 45, 129));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].rfind("ignoring tuned configs: kgemm: " + store.path() + ": line ", 0), 0u) << received[0];

  set_warning_handler([](const std::string&) { throw std::runtime_error("a broken log"); });
  testing::internal::CaptureStderr();
  warn("one line");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "kgemm: warning: one line\n");
  set_warning_handler({});
  testing::internal::CaptureStderr();
  warn("another line");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "kgemm: warning: another line\n");
  set_warning_handler(previous);
}

// An entry that loads but cannot run on this device is skipped and reported at dispatch; one
// that does not load (a micro-tile that is not compiled) is skipped and reported at load. Either
// way the other entries stay in use.
KGEMM_CASE_TEST(DispatchTest, NeverUsesIllegalConfig) {
  using Space = typename TypeParam::ExecSpace;
  Config huge_team = TuningPolicy<Space>::default_config();
  huge_team.team = 4096;
  const Config placeholder = parse_config("mb48_nb64_kb32_tm4_tn4_team1");
  const std::string no_such_micro_tile = "mb48_nb64_kb32_tm3_tn4_team1";
  const Config legal = non_default_config<Space>();
  GemmCheck g;
  g.m = 100, g.n = 64, g.k = 147;
  const StoreInUse store(text_after_replacing(
      saved_text(store_for(device_info<Space>(), {{problem_of_shape<TypeParam>(g.m, g.n, g.k), huge_team},
                                                  {problem_of_shape<TypeParam>(2 * g.m, g.n, g.k), placeholder},
                                                  {problem_of_shape<TypeParam>(16 * g.m, g.n, g.k), legal}})),
      "config: " + to_string(placeholder), "config: " + no_such_micro_tile));
  testing::internal::CaptureStderr();
  expect_gemm_runs_split_of<TypeParam>(g, legal);
  const int times_m[] = {2, 3};  // nvcc: no braced lists in range-for
  for (int times : times_m) {
    const Config chosen = select_config<Space>(problem_of_shape<TypeParam>(times * g.m, g.n, g.k));
    EXPECT_TRUE(is_split_of(chosen, legal)) << to_string(chosen);
  }
  const std::string warnings = testing::internal::GetCapturedStderr();
  // Each bad entry is reported once, however many problems it was a candidate for.
  EXPECT_EQ(occurrences(warnings, "ignoring tuned config " + to_string(huge_team)), 1u) << warnings;
  EXPECT_EQ(occurrences(warnings, "ignoring a tuned entry: kgemm: " + store.path() + ": line "), 1u) << warnings;
  EXPECT_EQ(occurrences(warnings, "].config: '" + no_such_micro_tile + "'"), 1u) << warnings;
  EXPECT_EQ(occurrences(warnings, "micro-tile 3x4 is not a compiled variant"), 1u) << warnings;
  EXPECT_EQ(occurrences(warnings, "\n"), 2u) << warnings;
}

// Operands that are windows of wider matrices (rows longer by one element, or starting one
// element in) are valid calls, whatever the store holds for their shape: each runs, correctly,
// on the stored config where that config can take them, else on the best stored or default
// config that can (warpgroup kernels stage aligned 16-byte runs of rows; a call that cannot give
// them those must still run). Every kernel family the case has: the SIMT tile, which takes any
// strides, and on GPUs the mma.sync and warpgroup tensor-core configs.
KGEMM_CASE_TEST(DispatchTest, PaddedAndOffsetOperandsRunOnAConfigTheyCanTake) {
  using Space = typename TypeParam::ExecSpace;
  const bool fp16 = dtype_of<typename TypeParam::Value>() == DType::F16;
  GemmCheck contiguous;
  contiguous.m = 100, contiguous.n = 72, contiguous.k = 40;  // rows of whole 16-byte runs when contiguous
  const Problem problem = problem_of_shape<TypeParam>(contiguous.m, contiguous.n, contiguous.k);
  const std::vector<Config> families = {
      TuningPolicy<Space>::default_config(), parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc"),
      parse_config(fp16 ? "mb64_nb128_kb64_tm64_tn128_team128_wg" : "mb128_nb64_kb16_tm128_tn64_team128_wg")};
  int families_run = 0;
  for (const Config& stored : families) {
    if (!why_illegal<Space>(problem, stored, TypeParam::accum).empty()) continue;  // not on this space or GPU
    ++families_run;
    const StoreInUse store(store_for(device_info<Space>(), {{problem, stored}}));
    expect_gemm_runs<TypeParam>(contiguous, stored);
    const Window windows[] = {{1, 0}, {0, 1}};  // nvcc: no braced lists in range-for
    Window GemmCheck::*const operands[] = {&GemmCheck::a_window, &GemmCheck::b_window, &GemmCheck::c_window};
    for (const Window& window : windows)
      for (Window GemmCheck::*operand : operands) {
        GemmCheck g = contiguous;
        g.*operand = window;
        SCOPED_TRACE("stored " + to_string(stored) + window.describe("operand"));
        std::vector<std::string> labels;
        EXPECT_NO_THROW(labels = gemm_kernel_labels([&] { run_check<TypeParam>(g); }));
        ASSERT_EQ(labels.size(), 1u);
        if (!stored.tensor_cores()) EXPECT_EQ(labels[0], "kgemm::tiled_gemm " + to_string(stored));
      }
  }
  EXPECT_GE(families_run, 1);
}

// An entry legal with fp32 accumulation only (as tensor-core configs are): a call accumulating
// in fp16 gets the fallback, and that neither sticks to the problem nor bars the entry from
// later fp32-accumulating calls.
TEST(TunedConfigsTest, ChoosesPerAccumulation) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  Problem problem;
  problem.dtype = DType::F16, problem.m = 300, problem.n = 64, problem.k = 147;
  const Config fp32_only = parse_config("mb32_nb32_kb16_tm4_tn4_team1"),
               fallback_config = parse_config("mb64_nb64_kb32_tm8_tn8_team1");
  const auto fallback = [&] { return fallback_config; };
  const StoreInUse store(store_for(device_info<Space>(), {{problem, fp32_only}}));
  TunedConfigs configs(device_info<Space>());
  const auto check = [&](const Problem&, const Config& c) { return c == fp32_only ? "fp32 accumulation only" : ""; };
  const auto accept_all = [](const Problem&, const Config&) { return std::string(); };
  testing::internal::CaptureStderr();
  EXPECT_EQ(to_string(configs.select(problem, Accum::F16, fallback, check)), to_string(fallback_config));
  EXPECT_EQ(to_string(configs.select(problem, Accum::F32, fallback, accept_all)), to_string(fp32_only));
  EXPECT_EQ(to_string(configs.select(problem, Accum::F16, fallback, check)), to_string(fallback_config));
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(occurrences(warnings, "ignoring tuned config " + to_string(fp32_only)), 1u) << warnings;
}

// Dispatch runs on every call: the fallback is worked out, and entries checked, only when a
// problem is first seen; a repeated call returns the remembered choice without either.
// A config that these operands cannot take (a window whose rows are not 16-byte aligned) is
// passed over for them, quietly, since the entry is not at fault; the call on contiguous
// operands still gets it, and each layout keeps its own choice.
TEST(TunedConfigsTest, ChoosesPerOperandLayout) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Problem problem = gemm_f32(300, 64, 148);
  const Config aligned_only = parse_config("mb32_nb32_kb16_tm4_tn4_team1"),
               fallback_config = parse_config("mb64_nb64_kb32_tm8_tn8_team1");
  const auto fallback = [&] { return fallback_config; };
  const StoreInUse store(store_for(device_info<Space>(), {{problem, aligned_only}}));
  TunedConfigs configs(device_info<Space>());
  float data[8] = {};
  GemmArgs<float> offset = operands_without_data<float>(problem);
  offset.A.data = data + 1;
  const OperandLayout misaligned = operand_layout(offset);
  ASSERT_FALSE(misaligned == contiguous_layout(problem));
  EXPECT_EQ(misaligned.a.bytes, int(sizeof(float)));
  const auto check = [&](const Problem&, const Config& c) { return c == aligned_only ? "aligned rows only" : ""; };
  const auto accept_all = [](const Problem&, const Config&) { return std::string(); };
  testing::internal::CaptureStderr();
  EXPECT_EQ(to_string(configs.select(problem, Accum::F32, fallback, accept_all)),
            to_string(aligned_only));
  EXPECT_EQ(to_string(configs.select(problem, misaligned, Accum::F32, fallback, check, accept_all)),
            to_string(fallback_config));
  EXPECT_EQ(to_string(configs.select(problem, Accum::F32, fallback, check)), to_string(aligned_only));
  EXPECT_EQ(to_string(configs.select(problem, misaligned, Accum::F32, fallback, accept_all, accept_all)),
            to_string(fallback_config));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(OperandLayout, AlignmentOfAddressAndStrides) {
  alignas(16) float data[64] = {};
  const auto bytes = [&](float* at, std::ptrdiff_t rs, std::ptrdiff_t cs, std::ptrdiff_t bs) {
    return alignment_of(MatrixRef<const float>(at, 2, 2, rs, cs, bs));
  };
  EXPECT_EQ(bytes(data, 8, 1, 0), (OperandAlignment{16, true}));      // contiguous rows of 32 bytes
  EXPECT_EQ(bytes(data, 9, 1, 0), (OperandAlignment{4, true}));       // rows one element longer
  EXPECT_EQ(bytes(data + 2, 8, 1, 0), (OperandAlignment{8, true}));   // two elements in
  EXPECT_EQ(bytes(data, 1, 6, 0), (OperandAlignment{8, true}));       // columns contiguous, 24 bytes apart
  EXPECT_EQ(bytes(data, 8, 1, 20), (OperandAlignment{16, true}));     // batches 80 bytes apart
  EXPECT_EQ(bytes(data, 8, 1, 18), (OperandAlignment{8, true}));
  EXPECT_EQ(bytes(data, 8, 4, 0), (OperandAlignment{16, false}));     // no contiguous dimension
  EXPECT_EQ(bytes(data, 8, 2, 0), (OperandAlignment{8, false}));
}

TEST(TunedConfigsTest, DecidesEachProblemOnce) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  Problem tuned, untuned;
  tuned.dtype = untuned.dtype = DType::F32;
  tuned.m = 300, tuned.n = 64, tuned.k = 147;
  untuned.m = 5, untuned.n = 7, untuned.k = 3;
  const Config entry = parse_config("mb32_nb32_kb16_tm4_tn4_team1"),
               fallback_config = parse_config("mb64_nb64_kb32_tm8_tn8_team1");
  const StoreInUse store(store_for(device_info<Space>(), {{tuned, entry}}));
  TunedConfigs configs(device_info<Space>());
  int fallbacks = 0, checks = 0;
  const auto fallback = [&] {
    ++fallbacks;
    return fallback_config;
  };
  // Legal for the tuned shape only, so the untuned one cannot borrow the entry.
  const auto check = [&](const Problem& p, const Config&) {
    ++checks;
    return p.m == tuned.m ? std::string() : std::string("not here");
  };
  for (int call = 0; call < 3; ++call) {
    EXPECT_EQ(to_string(configs.select(tuned, Accum::F32, fallback, check)), to_string(entry));
    EXPECT_EQ(to_string(configs.select(untuned, Accum::F32, fallback, check)), to_string(fallback_config));
  }
  EXPECT_EQ(fallbacks, 1);
  EXPECT_EQ(checks, 2);  // the tuned shape's entry; the untuned one's check (another shape's entry is not blamed)
}

// Through TunedConfigs, as every call dispatches: the exact entry first; a candidate the check
// rejects gives way to the next, an empty store to the space default; explain() tells which and why.
TEST(TunedConfigsTest, PassesOverIllegalCandidatesAndFallsBackWhenStoreIsEmpty) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Config best = parse_config("mb64_nb64_kb256_tm8_tn8_team1"),
               second = parse_config("mb32_nb64_kb256_tm8_tn8_team1"),
               fallback_config = parse_config("mb16_nb16_kb32_tm4_tn4_team1");
  const Problem problem = gemm_f32(64, 64, 256);
  const auto fallback = [&] { return fallback_config; };
  const auto not_best = [&](const Problem&, const Config& c) { return c == best ? "too big here" : ""; };
  {
    const StoreInUse store(store_for(device_info<Space>(), {{problem, best}, {gemm_f32(32, 64, 512), second}}));
    TunedConfigs configs(device_info<Space>());
    testing::internal::CaptureStderr();
    const DispatchChoice exact = configs.explain(problem, fallback, [](const Problem&, const Config&) { return std::string(); });
    EXPECT_EQ(exact.config, best);
    EXPECT_EQ(exact.source, DispatchChoice::Source::Exact);
    const DispatchChoice choice = configs.explain(problem, fallback, not_best);
    EXPECT_EQ(to_string(configs.select(problem, Accum::F32, fallback, not_best)), to_string(second));
    const std::string warnings = testing::internal::GetCapturedStderr();
    EXPECT_EQ(choice.config, second);
    EXPECT_EQ(choice.source, DispatchChoice::Source::Model);
    ASSERT_TRUE(choice.prediction);
    EXPECT_EQ(to_string(choice.prediction->source.problem), to_string(gemm_f32(32, 64, 512)));
    EXPECT_EQ(occurrences(warnings, "ignoring tuned config " + to_string(best) + " for " + to_string(problem)),
              1u)
        << warnings;
  }
  {
    // The model's candidate from another shape, which this shape cannot take: no fault of its
    // entry, passed over quietly.
    const StoreInUse store(store_for(device_info<Space>(), {{gemm_f32(32, 64, 512), best}}));
    TunedConfigs configs(device_info<Space>());
    testing::internal::CaptureStderr();
    EXPECT_EQ(configs.explain(problem, fallback, not_best).config, fallback_config);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  }
  const StoreInUse empty(store_for(device_info<Space>(), {}));
  TunedConfigs configs(device_info<Space>());
  const DispatchChoice choice = configs.explain(problem, fallback, not_best);
  EXPECT_EQ(choice.config, fallback_config);
  EXPECT_EQ(choice.source, DispatchChoice::Source::Default);
  EXPECT_FALSE(choice.prediction);
}

// Tuning on first use through TunedConfigs: a problem the device's own store lacks goes to the
// tuner once, whatever the layout; its winner runs where the call's check allows it, and
// explain() names it. A stored problem, fp16 accumulation and a tuner that finds nothing fall
// through to the store's choice.
TEST(TunedConfigsTest, TunesWhatTheOwnStoreLacksOnceOnFirstUse) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Config stored = parse_config("mb64_nb64_kb256_tm8_tn8_team1"),
               winner = parse_config("mb32_nb64_kb256_tm8_tn8_team1"),
               fallback_config = parse_config("mb16_nb16_kb32_tm4_tn4_team1");
  const Problem kept = gemm_f32(64, 64, 256), fresh = gemm_f32(40, 24, 72), hopeless = gemm_f32(8, 8, 8);
  const StoreInUse store(store_for(device_info<Space>(), {{kept, stored}}));
  std::vector<std::string> asked;
  TunedConfigs configs(device_info<Space>(), [&](const Problem& p) -> std::optional<TunedEntry> {
    asked.push_back(to_string(p));
    if (p == hopeless) return std::nullopt;
    TunedEntry entry;
    entry.problem = p, entry.config = winner, entry.gflops = 2, entry.default_gflops = 1;
    return entry;
  });
  const auto fallback = [&] { return fallback_config; };
  const auto any = [](const Problem&, const Config&) { return std::string(); };
  const auto not_winner = [&](const Problem&, const Config& c) { return c == winner ? "not for these operands" : ""; };
  EXPECT_EQ(configs.select(kept, Accum::F32, fallback, any), stored);
  EXPECT_EQ(configs.select(fresh, Accum::F32, fallback, any), winner);
  OperandLayout other = contiguous_layout(fresh);
  other.c.bytes = 4;  // C rows aligned to one element only
  EXPECT_EQ(configs.select(fresh, other, Accum::F32, fallback, any, any), winner);
  EXPECT_NE(configs.select(fresh, Accum::F16, fallback, any), winner);  // stores hold fp32 accumulation
  EXPECT_EQ(configs.explain(fresh, fallback, any).source, DispatchChoice::Source::FirstUse);
  EXPECT_NE(configs.explain(fresh, fallback, not_winner).config, winner);
  configs.select(hopeless, Accum::F32, fallback, any);
  configs.select(hopeless, other, Accum::F32, fallback, any, any);
  EXPECT_EQ(asked, (std::vector<std::string>{to_string(fresh), to_string(hopeless)}));
}

// Clears the first-use tuners $KGEMM_TUNE registered, at the end of the scope.
struct FirstUseTuning {
  ~FirstUseTuning() {
    for_each_enabled_space([](auto space) { set_first_use_tuner(decltype(space)::name(), {}); });
  }
};

// $KGEMM_TUNE through the API: a shape the store lacks is tuned on its first call (one line on
// stderr), its winner stored and its product right; later calls tune nothing and run the winner.
KGEMM_CASE_TEST(DispatchTest, KgemmTuneTunesAShapeOnItsFirstCallAndStoresIt) {
  using Space = typename TypeParam::ExecSpace;
  if (!std::is_same<typename TypeParam::Value, float>::value) GTEST_SKIP() << "one dtype is enough";
  const TempDir dir;
  const std::string path = dir.file("tuned.yaml");
  const ScopedEnv file("KGEMM_CONFIG_FILE", path), tune("KGEMM_TUNE", "2");
  const FirstUseTuning tuning;
  ASSERT_TRUE(enable_tuning_on_first_use());
  GemmCheck g;
  g.m = 40, g.n = 24, g.k = 72;
  const Problem problem = problem_of_shape<TypeParam>(g.m, g.n, g.k);
  testing::internal::CaptureStderr();
  run_check<TypeParam>(g);
  run_check<TypeParam>(g);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(occurrences(said, "kgemm: tuned " + to_string(problem) + " on first use (KGEMM_TUNE=2"), 1u) << said;
  const ConfigStore stored = ConfigStore::load(path);
  ASSERT_TRUE(stored.exact(problem)) << read_text(path);
  const DispatchChoice choice = explain_config<Space>(problem);
  EXPECT_EQ(choice.source, DispatchChoice::Source::FirstUse);
  EXPECT_EQ(choice.config, stored.exact(problem)->config);
}

TEST(DispatchTest, KgemmTuneTakesABudgetOrOff) {
  const FirstUseTuning tuning;
  {
    const ScopedEnv tune("KGEMM_TUNE", "soon");
    EXPECT_THROW(
        try { enable_tuning_on_first_use(); } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("KGEMM_TUNE='soon' is not a budget"), std::string::npos) << e.what();
          throw;
        },
        std::invalid_argument);
  }
  const ScopedEnv off("KGEMM_TUNE", "off");
  EXPECT_FALSE(enable_tuning_on_first_use());
}

KGEMM_CASE_TEST(DispatchTest, FindsDeviceStoreInConfigPathSilently) {
  using Space = typename TypeParam::ExecSpace;
  const Problem problem = problem_of_shape<TypeParam>(67, 45, 129);
  const Config tuned = non_default_config<Space>();
  TempDir empty, configs;
  store_for(device_info<Space>(), {{problem, tuned}}).save(configs.file(device_slug(device_info<Space>()) + ".yaml"));
  const ScopedEnv no_file("KGEMM_CONFIG_FILE", "");
  testing::internal::CaptureStderr();
  {
    const ScopedEnv path("KGEMM_CONFIG_PATH", empty.path());
    select_config<Space>(problem);  // no file for this device here: the untuned case, silent
  }
  const ScopedEnv path("KGEMM_CONFIG_PATH", empty.path() + "::" + configs.path());
  EXPECT_EQ(to_string(select_config<Space>(problem)), to_string(tuned));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}


// ---------------------------------------------------------------------------------------------
// Which store serves a device without one of its own (find_serving_store), on synthetic devices
// of an architecture no committed store has, with the search path reduced to test directories.

const DeviceInfo kStoreless{"openmp", "Test CPU A", "test_arch-simd9", 4};

DeviceInfo variant(DeviceInfo device, const std::string& name, int threads, const std::string& arch = "") {
  device.device = name;
  device.threads = threads;
  if (!arch.empty()) device.arch = arch;
  return device;
}

// `device`'s store with one entry, saved as `path`.
void save_store(const DeviceInfo& device, const std::string& path) {
  store_for(device, {{gemm_f32(64, 64, 64), parse_config("mb32_nb32_kb32_tm4_tn4_team1")}}).save(path);
}

// The store serving `device` and why, checking that finding it warned about nothing.
std::string serving_of(const DeviceInfo& device) {
  std::vector<std::string> warnings;
  const ServingStore serving = find_serving_store(device, warnings);
  EXPECT_EQ(warnings, std::vector<std::string>{});
  EXPECT_EQ(serving.store.has_value(), serving.match != StoreMatch::None);
  return std::string(to_string(serving.match)) + " " + fs::path(serving.path).filename().string();
}

// This device's store; else the same device under another file name; else another of the same
// model (another thread count); else the nearest count among other models; never another
// architecture or space.
TEST(StoreFallback, ExactThenSameModelThenNearestCountOfTheArchitectureThenNone) {
  TempDir first, second;
  const SearchPath path({first.path(), second.path()});
  save_store(kStoreless, first.file(device_slug(kStoreless) + ".yaml"));
  save_store(kStoreless, second.file("renamed.yaml"));
  save_store(variant(kStoreless, "Test CPU A", 16), second.file("a16.yaml"));
  save_store(variant(kStoreless, "Test CPU B", 3), first.file("b3.yaml"));
  save_store(variant(kStoreless, "Test CPU C", 32), first.file("c32.yaml"));
  save_store(variant(kStoreless, "Test CPU A", 4, "test_arch-simd5"), first.file("other-arch.yaml"));
  DeviceInfo other_space = kStoreless;
  other_space.space = "serial";
  save_store(other_space, first.file("other-space.yaml"));
  const std::vector<std::pair<std::string, std::string>> removed_then_served = {
      {"", "exact " + device_slug(kStoreless) + ".yaml"},
      {first.file(device_slug(kStoreless) + ".yaml"), "exact renamed.yaml"},
      {second.file("renamed.yaml"), "same architecture a16.yaml"},
      {second.file("a16.yaml"), "same architecture b3.yaml"},
      {first.file("b3.yaml"), "same architecture c32.yaml"},
      {first.file("c32.yaml"), "none "}};
  for (const auto& [removed, served] : removed_then_served) {
    if (!removed.empty()) fs::remove(removed);
    EXPECT_EQ(serving_of(kStoreless), served) << "after removing " << removed;
  }
}

// Beside a device's own store, its sibling is the nearest store of another device of its space and
// architecture (the same order as above, this device's stores under any name passed over), or none.
TEST(StoreFallback, ASiblingIsTheNearestStoreOfAnotherDeviceOfTheArchitecture) {
  TempDir dir;
  const SearchPath path({dir.path()});
  const auto sibling_of = [](const DeviceInfo& device) {
    const ServingStore sibling = find_sibling_store(device);
    EXPECT_EQ(sibling.store.has_value(), sibling.match != StoreMatch::None);
    EXPECT_FALSE(sibling.own);
    return std::string(to_string(sibling.match)) + " " + fs::path(sibling.path).filename().string();
  };
  save_store(kStoreless, dir.file(device_slug(kStoreless) + ".yaml"));
  save_store(kStoreless, dir.file("renamed.yaml"));
  save_store(variant(kStoreless, "Test CPU A", 4, "test_arch-simd5"), dir.file("other-arch.yaml"));
  EXPECT_EQ(sibling_of(kStoreless), "none ");
  save_store(variant(kStoreless, "Test CPU C", 32), dir.file("c32.yaml"));
  EXPECT_EQ(sibling_of(kStoreless), "sibling c32.yaml");
  save_store(variant(kStoreless, "Test CPU B", 3), dir.file("b3.yaml"));
  EXPECT_EQ(sibling_of(kStoreless), "sibling b3.yaml");
  const ServingStore sibling = find_sibling_store(kStoreless);
  EXPECT_NE(describe(sibling, kStoreless).find("sibling, same architecture, test_arch-simd9: tuned for openmp on Test CPU B"),
            std::string::npos)
      << describe(sibling, kStoreless);
  // The store that serves the device is still its own.
  EXPECT_EQ(serving_of(kStoreless), "exact " + device_slug(kStoreless) + ".yaml");
}

// Counts equally far by ratio: the larger (its configs were chosen to fill more cores or SMs);
// then search order. A file name is searched once, in the first directory that has it.
TEST(StoreFallback, TiesGoToTheLargerCountThenToSearchOrder) {
  TempDir first, second;
  const SearchPath path({first.path(), second.path()});
  save_store(variant(kStoreless, "Test CPU B", 2), first.file("b2.yaml"));
  save_store(variant(kStoreless, "Test CPU C", 8), second.file("c8.yaml"));
  EXPECT_EQ(serving_of(kStoreless), "same architecture c8.yaml");
  save_store(variant(kStoreless, "Test CPU D", 8), first.file("d8.yaml"));
  EXPECT_EQ(serving_of(kStoreless), "same architecture d8.yaml");
  save_store(variant(kStoreless, "Test CPU E", 4, "test_arch-simd5"), first.file("shadow.yaml"));
  save_store(variant(kStoreless, "Test CPU E", 4), second.file("shadow.yaml"));
  EXPECT_EQ(serving_of(kStoreless), "same architecture d8.yaml");
}

// KGEMM_CONFIG_FILE: any device of the space, one warning when not this one; a file of another
// space leaves the search to run, saying so; one that does not load serves nothing, saying why.
TEST(StoreFallback, ANamedStoreServesAnyDeviceOfItsSpace) {
  TempDir dir;
  const SearchPath path({dir.path()});
  save_store(variant(kStoreless, "Test CPU B", 4), dir.file("b4.yaml"));
  const DeviceInfo elsewhere = variant(kStoreless, "Test GPU", 100, "test_sm_99");
  save_store(variant(elsewhere, "Test GPU", 100), dir.file("gpu.yaml"));
  const DeviceInfo far_away = variant(kStoreless, "Test CPU Z", 64, "test_arch-simd5");
  save_store(far_away, dir.file("far.yaml"));
  {
    const ScopedEnv named("KGEMM_CONFIG_FILE", dir.file("far.yaml"));
    std::vector<std::string> warnings;
    const ServingStore serving = find_serving_store(kStoreless, warnings);
    EXPECT_EQ(serving.match, StoreMatch::Named);
    EXPECT_FALSE(serving.own);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(to_string(far_away)), std::string::npos) << warnings[0];
    EXPECT_NE(describe(serving, kStoreless).find("named by KGEMM_CONFIG_FILE"), std::string::npos);
  }
  {
    DeviceInfo gpu_store = elsewhere;
    gpu_store.space = "cuda";
    save_store(gpu_store, dir.file("gpu.yaml"));
    const ScopedEnv named("KGEMM_CONFIG_FILE", dir.file("gpu.yaml"));
    std::vector<std::string> warnings;
    const ServingStore serving = find_serving_store(kStoreless, warnings);
    EXPECT_EQ(serving.match, StoreMatch::SameArch);
    EXPECT_EQ(serving.path, dir.file("b4.yaml"));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("holds configs of the cuda space, not openmp"), std::string::npos) << warnings[0];
  }
  {
    write_text(dir.file("broken.yaml"), "device: {space: [\n");
    const ScopedEnv named("KGEMM_CONFIG_FILE", dir.file("broken.yaml"));
    std::vector<std::string> warnings;
    EXPECT_EQ(find_serving_store(kStoreless, warnings).match, StoreMatch::None);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].rfind("ignoring tuned configs: kgemm: " + dir.file("broken.yaml") + ": line ", 0), 0u);
  }
}

// A file named as this device's store that holds another device's configs, or does not load, is
// not its store: warned about, and the nearest store of the architecture serves.
TEST(StoreFallback, AFileNamedForThisDeviceThatIsNotItsStoreIsWarnedAbout) {
  TempDir dir;
  const SearchPath path({dir.path()});
  const std::string own = dir.file(device_slug(kStoreless) + ".yaml");
  save_store(variant(kStoreless, "Test CPU B", 4), dir.file("b4.yaml"));
  const std::string texts[] = {saved_text(store_for(variant(kStoreless, "Test CPU A", 4, "test_arch-simd5"), {})),
                               "device: {space: [\n"};  // nvcc: no braced lists in range-for
  for (const std::string& text : texts) {
    write_text(own, text);
    std::vector<std::string> warnings;
    const ServingStore serving = find_serving_store(kStoreless, warnings);
    EXPECT_EQ(serving.match, StoreMatch::SameArch);
    EXPECT_EQ(serving.path, dir.file("b4.yaml"));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(own), std::string::npos) << warnings[0];
  }
}

// Two builds on one CPU (an AVX2 build beside the AVX-512 one) are two devices: each build's store
// is named and keyed apart (DeviceInfo::arch), so neither takes the other's as its own nor as one
// of its architecture. Named with KGEMM_CONFIG_FILE, the other build's store serves with its
// warning, and its entries whose micro-tiles this build does not compile are refused by name at
// load; the others stay in use.
TEST(StoreFallback, AStoreOfAnotherBuildsSimdOnThisCpuIsAnotherDevices) {
  const bool wide = kHostVectorBits == 512;
  using OtherTile = std::conditional_t<wide, HostMicroTiles<256>, HostMicroTiles<512>>::Default;
  const std::string other_tile = dims(OtherTile::tm, OtherTile::tn);
  bool compiled_here = false;
  for_each_micro_tile([&](auto tile) { compiled_here = compiled_here || dims(tile.tm, tile.tn) == other_tile; });
  ASSERT_FALSE(compiled_here) << other_tile << " is compiled in this build too";
  // This build and the other on a CPU with both: the narrower one names its SIMD in its file.
  DeviceInfo here = variant(kStoreless, "Test CPU W", 2, wide ? "test_arch-avx512" : "test_arch-avx2");
  DeviceInfo other = variant(here, here.device, 2, wide ? "test_arch-avx2" : "test_arch-avx512");
  here.narrower_build = !wide;
  other.narrower_build = wide;
  TempDir dir;
  const SearchPath path({dir.path()});
  const Config placeholder = parse_config("mb48_nb64_kb32_tm4_tn4_team1"),
               portable = parse_config("mb64_nb64_kb32_tm8_tn8_team1");
  const Config other_config = ConfigBuilder().mb(2 * OtherTile::tm).nb(2 * OtherTile::tn).kb(32).tm(OtherTile::tm).tn(OtherTile::tn).team(1);
  const std::string other_store = dir.file(device_slug(other) + ".yaml");
  write_text(other_store, text_after_replacing(saved_text(store_for(other, {{gemm_f32(64, 64, 64), portable},
                                                                            {gemm_f32(96, 64, 64), placeholder}})),
                                               "config: " + to_string(placeholder), "config: " + to_string(other_config)));
  EXPECT_NE(device_slug(here), device_slug(other));
  EXPECT_EQ(serving_of(here), "none ");

  const ScopedEnv named("KGEMM_CONFIG_FILE", other_store);
  std::vector<std::string> warnings;
  const ServingStore serving = find_serving_store(here, warnings);
  EXPECT_EQ(serving.match, StoreMatch::Named);
  EXPECT_FALSE(serving.own);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(to_string(other)), std::string::npos) << warnings[0];
  ASSERT_EQ(serving.refused.size(), 1u);
  EXPECT_NE(serving.refused[0].find("micro-tile " + other_tile + " is not a compiled variant"), std::string::npos)
      << serving.refused[0];
  ASSERT_EQ(serving.store->entries().size(), 1u);
  EXPECT_EQ(serving.store->entries()[0].config, portable);
}

// Another device's store is ranked with this device's facts: the problem's fit on this GPU's
// SMs and bandwidth, the source's on the store's GPU.
TEST(StoreFallback, AnotherDevicesStoreIsRankedWithThisDevicesFacts) {
  TempDir dir;
  const SearchPath path({dir.path()});
  DeviceInfo gpu = kStoreless;
  gpu.space = "cuda";
  const DeviceInfo small = with_bandwidth(variant(gpu, "Test GPU S", 50, "test_sm_99"), 1000);
  const DeviceInfo big = with_bandwidth(variant(small, "Test GPU L", 132), 3000);
  const Config config = parse_config("mb64_nb64_kb32_tm8_tn4_team128");
  store_for(big, {{gemm_f32(4096, 256, 1024), config}}).save(dir.file("big.yaml"));
  TunedConfigs configs(small);
  EXPECT_EQ(configs.serving().match, StoreMatch::SameArch);
  const auto accept_all = [](const Problem&, const Config&) { return std::string(); };
  const DispatchChoice choice = configs.explain(gemm_f32(2048, 256, 4096), [] { return Config{}; }, accept_all);
  ASSERT_TRUE(choice.prediction);
  EXPECT_EQ(choice.prediction->on_problem.slots, team_slots(choice.config, small));
  EXPECT_EQ(choice.prediction->on_source.slots, team_slots(config, big));
  EXPECT_NE(team_slots(config, small), team_slots(config, big));
  const RatePrediction expected =
      predict_rate(gemm_f32(2048, 256, 4096), choice.prediction->source, choice.config, small, big);
  EXPECT_DOUBLE_EQ(choice.prediction->gflops, expected.gflops);
}

// A store tuned on a device with more threads or SMs, more scratch or tensor cores than this one
// holds configs this device cannot run: each is checked here (why_illegal, as every call does)
// and passed over quietly, so a call runs the best config that is legal here, or the default.
KGEMM_CASE_TEST(DispatchTest, AnotherDevicesStoreNeverRunsAConfigIllegalHere) {
  using Space = typename TypeParam::ExecSpace;
  const Accum accum = TypeParam::accum;
  DeviceInfo here = device_info<Space>();
  here.device = "kgemm test device";
  here.arch = "kgemm_test_arch";
  const DeviceInfo bigger = variant(here, "kgemm test device, bigger", 8 * here.threads);
  Config huge_team = TuningPolicy<Space>::default_config();
  huge_team.team = 4096;
  const Config tensor_cores = parse_config("mb64_nb64_kb32_tm32_tn32_team128_tc");
  const Config big_scratch = parse_config("mb1024_nb1024_kb1024_tm8_tn8_team1");
  const Config legal = non_default_config<Space>();
  GemmCheck g;
  g.m = 100, g.n = 64, g.k = 147;
  const auto shape = [&](int times) { return problem_of_shape<TypeParam>(times * g.m, g.n, g.k); };
  // The illegal configs measured fastest, so the model ranks them first.
  const ConfigStore store = store_of(bigger, {{shape(1), huge_team, 900, 1, 10},
                                              {shape(2), tensor_cores, 800, 1, 10},
                                              {shape(4), big_scratch, 700, 1, 10},
                                              {shape(16), legal, 1, 1, 10}});
  int illegal_here = 0;
  for (const TunedEntry& entry : store.entries()) illegal_here += !why_illegal<Space>(entry.problem, entry.config, accum).empty();
  ASSERT_GE(illegal_here, 2) << "the test needs configs this device cannot run";
  TempDir dir;
  store.save(dir.file("bigger.yaml"));
  {
    const SearchPath path({dir.path()});
    TunedConfigs configs(here);
    ASSERT_EQ(configs.serving().match, StoreMatch::SameArch);
    const auto check = [&](const Problem& p, const Config& c) { return why_illegal<Space>(p, c, accum); };
    const auto fallback = [] { return TuningPolicy<Space>::default_config(); };
    testing::internal::CaptureStderr();
    const int times_m[] = {1, 2, 3, 4, 16};  // nvcc: no braced lists in range-for
    for (int times : times_m) {
      const Config chosen = configs.select(shape(times), accum, fallback, check);
      EXPECT_EQ(why_illegal<Space>(shape(times), chosen, accum), "") << to_string(chosen);
    }
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  }
  // Through kgemm::gemm, the store named: the one legal config runs, correctly.
  const StoreInUse named(store_for(bigger, {{shape(1), huge_team}, {shape(16), legal}}));
  testing::internal::CaptureStderr();
  expect_gemm_runs_split_of<TypeParam>(g, legal);
  EXPECT_EQ(occurrences(testing::internal::GetCapturedStderr(), "\n"), 1u);  // the named store's warning only
}

}  // namespace
}  // namespace kgemm::test
