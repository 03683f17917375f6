#pragma once
// kgemm on arrays described as DLPack describes them (pointer, device, dtype, shape, strides in
// elements): what the Python module calls. Neither Kokkos nor Python appears here, so the module
// compiles with any host compiler and Python against a kgemm built elsewhere (a CUDA build
// carried to a GPU machine). Every refusal is a std::invalid_argument whose message names the
// argument, what it is and what kgemm takes: the library's (kgemm::InvalidArgument, "kgemm: ..."),
// or the binding's own, named by the Python function ("kgemm.gemm: ...") as the package's Python
// checks name theirs, without the library's prefix in front.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kgemm::arrays {

enum class Device { Host, Cuda };

struct Array {
  std::string role;  // "a", "b", "c": how messages name it
  void* data = nullptr;
  Device device = Device::Host;
  int device_id = 0;
  std::string dtype;  // NumPy's name: "float32" and "float16" are multiplied, others refused by name
  int ndim = 0;
  std::int64_t shape[3] = {0, 0, 0};
  std::int64_t strides[3] = {0, 0, 0};  // in elements
  bool writable = true;
};

struct GemmCall {
  Array a, b, c;
  bool trans_a = false, trans_b = false;
  float alpha = 1, beta = 0;
  bool batched = false;       // batched_gemm: c is (batch, m, n); a or b may be one matrix for all
  std::string config;         // a config string: run exactly it; empty: dispatch chooses
  std::string accumulate;     // "float32" (default) or "float16" (float16 data only)
  std::uintptr_t stream = 0;  // CUDA: the caller's stream (cudaStream_t); 0 is the legacy default stream
};

// Kokkos started with `kokkos_args` (e.g. "--kokkos-num-threads=4", "--kokkos-device-id=1"),
// checked as the tools check them; refused once Kokkos runs. Products start it with no
// arguments when no one has.
void initialize(const std::vector<std::string>& kokkos_args);
bool is_initialized();
// Ends Kokkos (idempotent): Kokkos starts once per process, so nothing runs after it.
void finalize();

// C = alpha * op(A) * op(B) + beta * C in place of call.c, on the space of the arrays' device:
// host arrays on the host space and finished on return, CUDA arrays queued on call.stream.
void gemm(const GemmCall& call);

// Which config gemm(call) would run and why, without running it.
struct Explanation {
  std::string space, device, problem, config;
  std::string source;  // "exact entry", "model" or "space default"
  std::string store;   // the store in use and why it serves (or that none does)
  // The model's prediction when a store entry was its source (source_problem empty otherwise).
  std::string source_problem;
  double source_gflops = 0, predicted_gflops = 0;
  double padding = 0, fill = 0, depth = 0, busy = 0, trust = 0;  // here, as dispatch_model.hpp defines them
};
Explanation explain(const GemmCall& call);

// A space's device facts, as stores record them, with the store that serves it.
struct DeviceFacts {
  std::string space, device, arch, store, scratch_limit;
  int threads = 0;  // cores or SMs
  double memory_gbps = 0;
};
DeviceFacts device_facts(Device where);
// Stores in `dir` serve too (store_search_path: after the user's data directory): the package's
// own configs/. Before the first product.
void add_store_directory(const std::string& dir);
// kgemm's warnings (a store it cannot read, a tuned entry it passes over: dispatch/warnings.hpp)
// go to `handler`, one message each; an empty one sends them to stderr again.
void set_warning_handler(std::function<void(const std::string&)> handler);
// The execution spaces this build has ("serial", "openmp", "cuda").
std::vector<std::string> spaces();

// The store's key of a product (parse_problem's form): kernel "gemm", "batched" or "sharedb",
// dtype "float32" or "float16", a_order/b_order 'n' or 't' (problem.hpp).
std::string problem_key(const std::string& kernel, const std::string& dtype, char a_order, char b_order, int m, int n,
                        int k, int batch);

// How far a correct product's element may be from the exact result (error_bound.hpp, the bound
// kgemm's own tests and the tuner hold every element to), for `config` run on `dtype` data
// accumulated as `accumulate` says, k-long sums; exact = alpha sum a b + beta c0, magnitude =
// sum |a b|, beta_c0 = beta c0.
double error_bound(const std::string& dtype, const std::string& accumulate, int k, const std::string& config,
                   double exact, double magnitude, double alpha, double beta_c0);

// A model's distinct convolution GEMMs in im2col form (catalogue.hpp): M = batch * H * W,
// N = output channels, K = input channels * kernel^2, `count` layers of the model each.
struct Layer {
  std::string name;
  int m = 0, n = 0, k = 0, count = 0;
};
std::vector<Layer> resnet_layers(const std::string& model, int image, int batch);

// Problems tuned as autotune tunes them, each written to the store as it is done.
struct TuneSettings {
  Device where = Device::Host;
  std::string budget = "8";         // evaluations ("40") or seconds ("30s") per problem
  std::string strategy = "climb";   // climb, random, exhaustive
  std::uint64_t seed = 1;
  int reps = 7;
  std::string operands = "warm";    // warm, cold (kgemm/tuner/operand_cache.hpp)
  std::string store;                // empty: the store autotune extends on this device
};
struct TunedRow {
  std::string problem, config;
  double gflops = 0, default_gflops = 0;
  int candidates = 0;
  bool stored = false;  // false: no config computed it right; nothing stored
};
struct TuneReport {
  std::string store;
  std::vector<TunedRow> rows;
};
// `problems`: problem keys ("gemm_f32_nn_m256_n64_k576_b1", parse_problem's form).
TuneReport tune(const std::vector<std::string>& problems, const TuneSettings& settings);

}  // namespace kgemm::arrays
