// kgemm-fma-peak: the host's fp32 FMA peak, measured, so that the report can give every host
// GFLOP/s figure as a fraction of the limit. Each thread runs independent chains acc = acc * a + b
// on vectors of the SIMD width this file is compiled for (-march=native: 512 bits with AVX-512,
// 256 with AVX, else 128), enough chains to cover the FMA latency on every FMA unit; the peak is
// the best of several runs with 1 thread (Serial) and with kgemm's OpenMP thread count. It also
// estimates the clock from a chain of dependent integer adds (one per cycle), which splits the
// peak into cores x SIMD lanes x 2 flops x FMAs per cycle x clock. No Kokkos, no OpenMP: threads
// are std::threads. Output: a Google Benchmark-shaped JSON file (context only, no rows) that
// benchmarks/report/kgemm_report.py reads beside the result files.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "host_clock.hpp"
#include "host_threads.hpp"
#include "kgemm/spaces/host_vector_width.hpp"
#include "kgemm/cli/options.hpp"

namespace kgemm_bench {
namespace {

constexpr int kSimdBytes = kgemm::kHostVectorBits / 8;
constexpr int kLanes = kSimdBytes / int(sizeof(float));
// Chains in flight per thread: at least FMA latency (4-5 cycles) x FMA units (2), within the
// vector registers (32 with AVX-512, 16 otherwise, two of them holding a and b).
constexpr int kChains = kSimdBytes == 64 ? 16 : 12;
constexpr int kRuns = 5;
constexpr double kRunSeconds = 0.2;

typedef float Vector __attribute__((vector_size(kSimdBytes)));

volatile float g_multiplier = 0.999f, g_addend = 0.001f;  // unknown to the compiler: no folding
volatile double g_sink;                                    // results stored here are never dead code

// `iterations` steps of every chain; returns their sum.
float fma_chains(std::int64_t iterations) {
  const Vector a = Vector{} + g_multiplier, b = Vector{} + g_addend;
  Vector acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = Vector{} + float(c);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * a + b;
  float sum = 0;
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < kLanes; ++l) sum += acc[c][l];
  return sum;
}

// GFLOP/s of `threads` threads each running fma_chains(iterations) at once.
double fma_rate(int threads, std::int64_t iterations) {
  std::vector<std::thread> pool;
  std::vector<float> sums(threads);
  const Clock::time_point start = Clock::now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sums[t] = fma_chains(iterations); });
  for (std::thread& thread : pool) thread.join();
  const double seconds = seconds_since(start);
  g_sink = std::accumulate(sums.begin(), sums.end(), 0.0);
  return 2.0 * kLanes * kChains * double(iterations) * threads / seconds * 1e-9;
}

// The best of kRuns runs of about kRunSeconds each, iterations sized by a short first run.
double fma_peak(int threads) {
  const std::int64_t probe = 1 << 16;
  const double probe_rate = fma_rate(threads, probe);
  const auto iterations = std::int64_t(kRunSeconds * probe_rate * 1e9 / (2.0 * kLanes * kChains * threads));
  double best = 0;
  for (int run = 0; run < kRuns; ++run) best = std::max(best, fma_rate(threads, std::max(iterations, probe)));
  return best;
}

// Clock estimate, GHz: 8 dependent integer adds per loop step take 8 cycles (add latency 1). The
// addend is a register the compiler cannot see into (some cores fold adds of immediates away at
// rename), the empty asm keeps it from merging the adds; the loop's counter runs beside them.
double clock_ghz() {
  const std::int64_t steps = 50'000'000;
  double best = 0;
  for (int run = 0; run < kRuns; ++run) {
    std::uint64_t x = run, step = 1;
    asm volatile("" : "+r"(step));
    const Clock::time_point start = Clock::now();
    for (std::int64_t i = 0; i < steps; ++i) {
      x += step; asm volatile("" : "+r"(x));
      x += step; asm volatile("" : "+r"(x));
      x += step; asm volatile("" : "+r"(x));
      x += step; asm volatile("" : "+r"(x));
      x += step; asm volatile("" : "+r"(x));
      x += step; asm volatile("" : "+r"(x));
      x += step; asm volatile("" : "+r"(x));
      x += step; asm volatile("" : "+r"(x));
    }
    const double seconds = seconds_since(start);
    g_sink = double(x);
    best = std::max(best, 8.0 * double(steps) / seconds * 1e-9);
  }
  return best;
}

std::string number(double value, int decimals) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << value;
  return text.str();
}

const char* const kAbout = R"(The host's fp32 FMA peak, measured with independent FMA chains on every thread at this build's
SIMD width, for 1 thread (space serial) and N threads (space openmp; default: as many as Kokkos'
OpenMP space takes: $OMP_NUM_THREADS when set, else the CPUs this process may use). Prints a
table; --out FILE also writes it as a JSON file whose context kgemm_report.py reads
(fma_peak_gflops_<space>).)";

int run(int argc, char** argv) {
  int threads = host_threads();
  std::optional<std::string> out_path;
  kgemm::cli::App app(kAbout, "kgemm-fma-peak", "");
  app.add_option("--threads", threads, "threads of the openmp row")->transform(kgemm::cli::count())->type_name("N");
  app.add_option("--out", out_path, "also write the table as a JSON file")->type_name("FILE");
  if (!app.read(kgemm::cli::own_words(argc, argv, {}))) return 0;
  const double ghz = clock_ghz();
  std::map<std::string, std::string> context = {
      {"fma_peak_simd_bits", std::to_string(8 * kSimdBytes)},
      {"fma_peak_clock_ghz_estimate", number(ghz, 2)},
  };
  std::cout << "SIMD " << 8 * kSimdBytes << " bits (" << kLanes << " fp32 lanes), clock about " << number(ghz, 2)
            << " GHz (dependent adds)\n";
  const std::pair<std::string, int> rows[] = {{"serial", 1}, {"openmp", threads}};
  for (const auto& [space, count] : rows) {
    if (space == "openmp" && count == 1) continue;  // the serial row already has it
    const double peak = fma_peak(count);
    const double fma_per_cycle = peak / (2.0 * kLanes * count * ghz);
    context["fma_peak_gflops_" + space] = number(peak, 1);
    context["fma_peak_threads_" + space] = std::to_string(count);
    context["fma_peak_formula_" + space] = std::to_string(count) + (count == 1 ? " core x " : " cores x ") + std::to_string(kLanes) +
                                           " lanes x 2 flops x " + number(fma_per_cycle, 2) + " FMA/cycle x " +
                                           number(ghz, 2) + " GHz";
    std::cout << space << ": " << number(peak, 1) << " GFLOP/s = " << context["fma_peak_formula_" + space] << "\n";
  }
  if (out_path) {
    const std::string& path = *out_path;
    std::ofstream out(path);
    out << "{\n  \"context\": {\n";
    for (auto it = context.begin(); it != context.end(); ++it)
      out << "    \"" << it->first << "\": \"" << it->second << "\"" << (std::next(it) == context.end() ? "\n" : ",\n");
    out << "  },\n  \"benchmarks\": []\n}\n";
    if (!out) throw kgemm::RuntimeError("cannot write " + path);
  }
  return 0;
}

}  // namespace
}  // namespace kgemm_bench

int main(int argc, char** argv) {
  try {
    return kgemm_bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kgemm-fma-peak: " << kgemm::reason_of(e) << "\n";
    return 1;
  }
}
