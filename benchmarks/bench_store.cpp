// The cost of a large tuned-config store: generates one of --entries entries (100,000 by default,
// about 16 MB of YAML), then times ConfigStore::save and ConfigStore::load of it (best of --reps)
// and reports each one's peak resident memory above what the process held before it. Prints
// numbers only; what they should be is for a person to judge on a quiet machine.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include "kgemm/cli/options.hpp"
#include "kgemm/dispatch/config_store.hpp"

namespace {

// /proc/self/status's `field` ("VmRSS", "VmHWM") in MB.
double status_mb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::atof(line.c_str() + field.size() + 1) / 1024;
  return 0;
}

// Seconds of the fastest of `reps` runs of `run`, wall clock and this process' CPU time (on a
// shared machine the CPU time says more), and the peak resident memory it added (Linux: writing
// 5 to clear_refs resets the peak to the current size).
void measure(const char* what, int reps, const std::function<void()>& run) {
  double wall = 1e300, cpu = 1e300, peak = 0;
  for (int i = 0; i < reps; ++i) {
    std::ofstream("/proc/self/clear_refs") << "5";
    const double before = status_mb("VmRSS");
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    run();
    cpu = std::min(cpu, double(std::clock() - cpu_start) / CLOCKS_PER_SEC);
    wall = std::min(wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    peak = std::max(peak, status_mb("VmHWM") - before);
  }
  std::printf("%-5s %8.3f s wall %8.3f s CPU  peak +%7.1f MB resident\n", what, wall, cpu, peak);
}

kgemm::ConfigStore generated(int entries) {
  kgemm::ConfigStore store;
  store.header = kgemm::StoreHeader::stamped({"openmp", "Benchmark CPU", "x86_64-avx512", 2});
  for (int i = 0; i < entries; ++i) {
    // In store order (by m), so each put appends.
    const kgemm::Problem problem{kgemm::Kernel::Gemm, kgemm::DType::F32, 'n', 'n', 1 + i, 64 << (i % 3), 147 + i % 7, 1};
    store.put({problem, kgemm::parse_config("mb64_nb64_kb32_tm4_tn4_team16"), 55.2123456789 + i % 1000, 12.19876 + i % 100, 40});
  }
  return store;
}

}  // namespace

int main(int argc, char** argv) {
  int entries = 100000, reps = 3;
  kgemm::cli::App app("Times ConfigStore::save and load of a generated store, and their peak memory.", "kgemm-bench-store", "");
  app.add_option("--entries", entries, "the store's entries")->transform(kgemm::cli::count())->type_name("N")->capture_default_str();
  app.add_option("--reps", reps, "timed repetitions, best of")->transform(kgemm::cli::count())->type_name("N")->capture_default_str();
  try {
    if (!app.read(kgemm::cli::own_words(argc, argv, {}))) return 0;
  } catch (const kgemm::InvalidArgument& e) {
    std::fprintf(stderr, "kgemm-bench-store: %s\n", e.reason());
    return 1;
  }
  std::string dir = (std::filesystem::temp_directory_path() / "kgemm-bench-store-XXXXXX").string();
  if (!mkdtemp(dir.data())) return 1;
  const std::string path = dir + "/store.yaml";
  {
    const kgemm::ConfigStore store = generated(entries);
    measure("save", reps, [&] { store.save(path); });
  }
  std::printf("%d entries, %.1f MB\n", entries, std::filesystem::file_size(path) / 1e6);
  measure("load", reps, [&] { kgemm::ConfigStore::load(path); });
  std::filesystem::remove_all(dir);
  return 0;
}
