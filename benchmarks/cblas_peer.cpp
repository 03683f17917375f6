// kgemm-<library>-peer: a CBLAS library's SGEMM (OpenBLAS, MKL, BLIS: cblas_library.hpp), a host
// peer of kgemm's benchmarks, in a process of its own. Timed inside kgemm-bench-gemm, OpenBLAS ran
// right after Kokkos' OpenMP threads, which keep spinning after each parallel region (libgomp's
// default wait policy) and so took its cores: it reached about half the speed it has alone. This
// process has no Kokkos; only the library's threads run. Its rows are named and timed as kgemm's
// host rows are (RESULTS_SCHEMA.md: the host clock around one call, operands rotated through 4x
// the last-level cache), so the report sets them beside kgemm's from another process of the same
// run. report/peer_alone_check.py checks that the run measured the peer at the speed it reaches
// alone. A batched row comes once per way the library computes a batch (its batch call, MKL's JIT
// too: cblas_library.hpp's kBatchedImpls), each an impl of its own, so that the report takes the
// fastest per row; a way that does not apply to a row's shape leaves that row out, saying so on
// stderr and in the context. Every row's first call is checked against fp64 dot products: a peer
// that computes something else (a wrong leading dimension, a batch call misread) ends the program
// with status 1.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_row.hpp"
#include "cblas_library.hpp"
#include "host_clock.hpp"
#include "host_threads.hpp"
#include "kgemm/tuner/catalogue.hpp"
#include "kgemm/cli/options.hpp"
#include "kgemm/spaces/operand_ring_size.hpp"

namespace kgemm_bench {
namespace {

namespace library = cblas_library;

const std::string kProgram = std::string("kgemm-") + library::kImpl + "-peer";

// The peer's options (--help tells them).
struct PeerOptions {
  std::vector<int> threads{host_threads()};
  std::string model = "resnet50";
  std::vector<int> images{224}, batches{1};
  bool batched = false;
  Squares squares;
};

// The options of `words` (argv less the program name and Google Benchmark's flags); nullopt when
// --help printed the help.
std::optional<PeerOptions> parse_options(const std::vector<std::string>& words) {
  const std::string impl = library::kImpl;
  PeerOptions o;
  kgemm::cli::App app(R"(Google Benchmark rows gemm/)" + impl + R"(/<space>/fp32/<model>_i<image>_b<batch>/m<M>_n<N>_k<K>
(benchmarks/RESULTS_SCHEMA.md): cblas_sgemm, row-major C = A B, for every im2col GEMM of the
ResNet, in a process without Kokkos. <space> is serial for 1 thread, openmp for more: the space
of kgemm's rows it compares with. Every row's first call is checked against fp64 dot products
(exit status 1 when one is wrong).)",
                      kProgram, R"(Google Benchmark's --benchmark_* flags pass through; unless told otherwise every row runs 5
repetitions and the console shows their aggregates (the JSON file holds all).
)");
  app.add_list("--threads", o.threads,
                       "the library's threads, one set of rows each; by default as many as Kokkos'\n"
                       "OpenMP space takes: $OMP_NUM_THREADS when set, else the CPUs this process may use")
      ->transform(kgemm::cli::count());
  app.add_option("--model", o.model, "resnet18 | resnet34 | resnet50")->type_name("NAME")->capture_default_str();
  app.add_list("--image", o.images, "input image sides")->transform(kgemm::cli::count());
  app.add_list("--batch", o.batches, "batch sizes")->transform(kgemm::cli::count());
  std::string batched_rows;
  for (const library::BatchedImpl& way : library::kBatchedImpls)
    batched_rows += std::string("\n  batched/") + way.impl + "/...: " + way.call;
  app.add_flag("--batched", o.batched,
               "also batched rows, as kgemm-bench-batched --shared-b measures kgemm::batched_gemm:\n"
               "each ResNet layer as one product per image sharing the weights (batch = --batch),\n"
               "and set `squares`; where a way does not apply to a shape, no row:" + batched_rows);
  add_squares_options(app, o.squares, "64, as kgemm-bench-batched on the host", "with --batched: ");
  if (!app.read(words)) return std::nullopt;
  return o;
}

// A, B and C of one call, row-major, `batch` products back to back (B once when they share it);
// A and B uniform in [-1, 1). `products` points into them, for the batched rows.
struct Operands {
  std::vector<float> A, B, C;
  library::Products products;
};

// Whether the products of a row share B: the ResNet sets of the batched op (a layer's weights).
bool shares_b(const Row& row) { return row.op == "batched" && row.set != "squares"; }

// Sets that together exceed 4x the last-level cache, as kgemm's rows cycle through.
std::vector<Operands> operand_ring(const Row& row) {
  const std::size_t a_stride = std::size_t(row.m) * row.k, c_stride = std::size_t(row.m) * row.n;
  const std::size_t b_stride = shares_b(row) ? 0 : std::size_t(row.k) * row.n;
  const std::size_t a = row.batch * a_stride, c = row.batch * c_stride;
  const std::size_t b = std::size_t(shares_b(row) ? 1 : row.batch) * row.k * row.n;
  const int sets = kgemm::ring_size((a + b + c) * sizeof(float), kgemm::host_cache_bytes());
  std::vector<Operands> ring(sets);
  std::mt19937_64 generator(std::uint64_t(row.m) * row.n * row.k);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (Operands& set : ring) {
    set.A.resize(a);
    set.B.resize(b);
    set.C.assign(c, 0.0f);
    for (float& x : set.A) x = uniform(generator);
    for (float& x : set.B) x = uniform(generator);
    library::Products& p = set.products;
    p.m = row.m;
    p.n = row.n;
    p.k = row.k;
    for (int i = 0; i < row.batch; ++i) {
      p.a.push_back(set.A.data() + i * a_stride);
      p.b.push_back(set.B.data() + i * b_stride);
      p.c.push_back(set.C.data() + i * c_stride);
    }
  }
  return ring;
}

// Compares sampled elements of C (the first and the last among them) with fp64 dot products of the
// inputs; the bound scales with sum |a b|, the size of any summation order's rounding errors (as
// the cuBLAS peer checks). A wrong result ends the program: every rate of a wrong peer is void.
void check_result(const Row& row, const Operands& set) {
  constexpr int kSamples = 64;
  constexpr double kTolerance = 1e-4;
  const library::Products& p = set.products;
  std::mt19937_64 generator(0x5eed);
  for (int sample = 0; sample < kSamples; ++sample) {
    const std::size_t product = sample == 0 ? 0 : sample == 1 ? p.c.size() - 1 : generator() % p.c.size();
    const std::size_t i = sample == 0 ? 0 : sample == 1 ? p.m - 1 : generator() % p.m;
    const std::size_t j = sample == 0 ? 0 : sample == 1 ? p.n - 1 : generator() % p.n;
    double exact = 0, magnitude = 0;
    for (int l = 0; l < p.k; ++l) {
      const double term = double(p.a[product][i * p.k + l]) * double(p.b[product][l * std::size_t(p.n) + j]);
      exact += term;
      magnitude += std::fabs(term);
    }
    const double computed = p.c[product][i * p.n + j];
    if (!(std::fabs(computed - exact) <= kTolerance * magnitude)) {  // NaN too: an element left unwritten
      std::fprintf(stderr, "%s: wrong result for %s: C[%zu][%zu][%zu] = %.9g, fp64 %.9g (bound %.3g)\n",
                   kProgram.c_str(), row.name().c_str(), product, i, j, computed, exact, kTolerance * magnitude);
      std::exit(1);
    }
  }
}

// A gemm row's call: one cblas_sgemm.
void one_sgemm(const library::Products& p) { library::sgemm(p.m, p.n, p.k, p.a[0], p.b[0], p.c[0]); }

// Each iteration times the row's call on the next set with the host clock; one untimed, checked
// call first.
void measure_peer(benchmark::State& state, const Row& row, int threads, const library::Call& call) {
  library::set_threads(threads);
  std::vector<Operands> ring = operand_ring(row);
  call(ring.back().products);
  check_result(row, ring.back());
  std::size_t next = 0;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    call(ring[next].products);
    state.SetIterationTime(seconds_since(start));
    next = (next + 1) % ring.size();
  }
  state.counters["threads"] = library::threads();
}

// The batched rows a way of computing them left out, and all it was asked for.
struct Applied {
  int left_out = 0, rows = 0;
};

void register_rows(const PeerOptions& options) {
  const std::string& model = options.model;
  const bool batched = options.batched;
  std::vector<Applied> applied(std::size(library::kBatchedImpls));
  for (int threads : options.threads) {
    Row row;
    row.space = threads == 1 ? "serial" : "openmp";
    row.dtype = "fp32";
    const auto add_row = [&](const library::Call& call) {
      register_row(row,
                   [threads, call](benchmark::State& state, const Row& r) { measure_peer(state, r, threads, call); });
    };
    // A gemm row; a batched row once per way that applies to its shape.
    const auto add = [&] {
      if (row.op == "gemm") {
        row.impl = library::kImpl;
        return add_row(one_sgemm);
      }
      for (std::size_t i = 0; i < applied.size(); ++i) {
        const library::BatchedImpl& way = library::kBatchedImpls[i];
        row.impl = way.impl;
        library::Call call;
        try {
          call = way.prepare(row.m, row.n, row.k);
        } catch (const std::exception& e) {
          throw std::runtime_error(row.name() + ": " + kgemm::reason_of(e));
        }
        ++applied[i].rows;
        if (call)
          add_row(call);
        else
          ++applied[i].left_out;
      }
    };
    for (int image : options.images)
      for (int batch : options.batches) {
        row.set = resnet_set_name(model, image, batch);
        // gemm: a layer's batch in one product (M = batch x H x W); batched: one product per image.
        for (const std::string op : {"gemm", "batched"}) {
          if (op == "batched" && !batched) continue;
          row.op = op;
          row.batch = op == "gemm" ? 1 : batch;
          for (const kgemm::LayerShape& shape : kgemm::resnet_gemm_shapes(model, image, op == "gemm" ? batch : 1)) {
            row.layer = shape.layer;
            row.m = shape.m;
            row.n = shape.n;
            row.k = shape.k;
            add();
          }
        }
      }
    if (!batched) continue;
    row.op = "batched";
    row.set = "squares";
    row.layer = "";
    for (int n : options.squares.sides) {
      row.m = row.n = row.k = n;
      row.batch = squares_batch(n, options.squares.scale.value_or(kHostSquaresScale));
      add();
    }
  }
  for (std::size_t i = 0; i < applied.size(); ++i) {
    const library::BatchedImpl& way = library::kBatchedImpls[i];
    if (applied[i].left_out == 0) continue;
    const std::string counts = std::to_string(applied[i].rows - applied[i].left_out) + " of " +
                               std::to_string(applied[i].rows) + " batched rows";
    std::fprintf(stderr, "%s: %s rows: %s; none for the others: %s\n", kProgram.c_str(), way.impl, counts.c_str(),
                 way.not_applied);
    benchmark::AddCustomContext(std::string(way.impl) + "_rows",
                                counts + " (none for the others: " + way.not_applied + ")");
  }
  library::add_context();
  benchmark::AddCustomContext("operand_ring_cache_bytes", std::to_string(kgemm::host_cache_bytes()));
}

}  // namespace
}  // namespace kgemm_bench

int main(int argc, char** argv) {
  try {
    std::vector<char*> benchmark_args{argv[0]};
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]).rfind("--benchmark_", 0) == 0) benchmark_args.push_back(argv[i]);
    const auto options = kgemm_bench::parse_options(kgemm::cli::own_words(argc, argv, {"--benchmark_"}));
    if (!options) return 0;
    kgemm_bench::register_rows(*options);
    return kgemm_bench::run_registered_rows(benchmark_args);
  } catch (const std::exception& e) {
    std::cerr << kgemm_bench::kProgram << ": " << kgemm::reason_of(e) << "\n";
    return 1;
  }
}
