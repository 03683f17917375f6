#pragma once
// One benchmark row: its six-field name (RESULTS_SCHEMA.md), the problem counters every row
// carries, its registration with the settings all rows share, and running the registered rows.
// No Kokkos here: the peers that run in processes of their own (cblas_peer.cpp) use it too.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "kgemm/cli/options.hpp"

namespace kgemm_bench {

struct Row {
  std::string op;     // gemm | batched
  std::string impl;   // kgemm | kgemm-default | openblas | mkl | mkl-jit | blis | kokkosblas | kkbatched
  std::string space;  // serial | openmp | cuda
  std::string dtype;  // fp32 | fp16
  std::string set;    // resnet50_i224_b1 | squares
  std::string layer;  // the label's first part; empty for the squares
  int m = 0, n = 0, k = 0;
  int batch = 1;  // independent products per call (batched); 1 for gemm

  std::string name() const {
    return op + "/" + impl + "/" + space + "/" + dtype + "/" + set + "/m" + std::to_string(m) + "_n" +
           std::to_string(n) + "_k" + std::to_string(k);
  }
  double flops() const { return 2.0 * m * n * double(k) * batch; }
};

// Products per call of the batched set `squares` for n x n x n: 2^24 / n^2 fill a GPU (a 200 MB
// operand set in fp32); `scale` divides that, kHostSquaresScale on host spaces so a Serial run ends
// in seconds.
constexpr int kHostSquaresScale = 64;
inline int squares_batch(int n, int scale) { return std::max(1, (1 << 24) / (n * n) / std::max(1, scale)); }
// Set `squares`: the sides n of its products and, given, the scale of squares_batch.
struct Squares {
  std::vector<int> sides{8, 16, 32, 64};
  std::optional<int> scale;
};
// --squares LIST ("--squares=" for none) and --squares-scale S; `scale_default` tells its default.
inline void add_squares_options(kgemm::cli::App& app, Squares& squares, const std::string& scale_default,
                                const std::string& squares_note = "") {
  app.add_list("--squares", squares.sides,
                       squares_note + "set `squares`: batches of n x n x n products (\"--squares=\" for none)", true)
      ->transform(kgemm::cli::count());
  app.add_option("--squares-scale", squares.scale, "batch = 2^24 / n^2 / S")
      ->transform(kgemm::cli::count())
      ->type_name("S")
      ->default_str(scale_default);
}

inline std::string resnet_set_name(const std::string& model, int image, int batch) {
  return model + "_i" + std::to_string(image) + "_b" + std::to_string(batch);
}

// Registers measure(state, row) under row.name(). Time is manual (each measure reports its calls'
// work, call_timing.hpp) in µs; GFLOP/s is a rate over that time. An exception (a config
// the space cannot run, memory exhausted) fails this row only.
template <class Measure>
void register_row(const Row& row, Measure measure) {
  benchmark::RegisterBenchmark(row.name().c_str(),
                               [row, measure](benchmark::State& state) {
                                 state.counters["GFLOP/s"] = benchmark::Counter(
                                     row.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
                                 state.counters["M"] = row.m;
                                 state.counters["N"] = row.n;
                                 state.counters["K"] = row.k;
                                 state.counters["batch"] = row.batch;
                                 state.SetLabel(row.layer);
                                 try {
                                   measure(state, row);
                                 } catch (const std::exception& e) {
                                   state.SkipWithError(e.what());
                                 }
                               })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

// Runs the registered rows with Google Benchmark's flags `benchmark_args` (argv[0] first); returns
// the exit status. Unless the flags say otherwise every row runs 5 repetitions and the console
// shows their aggregates: the median of repetitions, not one run, is what the report reads.
int run_registered_rows(std::vector<char*> benchmark_args);

}  // namespace kgemm_bench
