#pragma once
// What the standalone GPU peers (cublas_peer.cu here, ../cutlass_peer/cutlass_peer.cu) share, so
// that their rows are measured, checked and written alike: the command line's common options, the
// shapes CSV, the operands (random or kgemm-run's hashed ones) in rotating device copies, the
// check against fp64 and kgemm-run's error measure, the timing, the table on stdout and the
// Google Benchmark JSON. A peer adds its library's calls and the fields saying what it chose.
// Needs the CUDA runtime, nlohmann-json and kgemm's Kokkos-free headers from tuner/ and kernels/.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgemm/spaces/stream_hold.hpp"
#include "kgemm/tuner/hashed_reference.hpp"

namespace peer {

// The peer's name, which starts its error messages; each peer program defines it.
extern const char* const kProgram;

using Json = nlohmann::ordered_json;  // keys in insertion order, as Google Benchmark writes them

constexpr double kRotationBytes = 200e6;  // 4x the H100's 50 MB L2: a copy is evicted before its reuse
constexpr int kMaxCopies = 64;
constexpr size_t kCopyAlignElems = 128;  // copies start on 256-byte boundaries, as cudaMalloc's do
constexpr int kCheckSamples = 256;
constexpr int kTransferTrials = 5;
constexpr int kSelectReps = 10;  // timed calls per candidate kernel while choosing
// TF32 rounds each input to 10 mantissa bits: about 2^-11 of each product, summed.
constexpr double kTf32Tolerance = 5e-3;

[[noreturn]] inline void fail(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", kProgram, message.c_str());
  std::exit(1);
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    fail(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + cudaGetErrorName(status) + " (" +
         cudaGetErrorString(status) + ")");
}

#define CUDA_CHECK(call) peer::check_cuda((call), #call, __FILE__, __LINE__)

// ---------------------------------------------------------------------------------------------
// Command line and problem list

inline std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> fields;
  std::istringstream in(text);
  for (std::string field; std::getline(in, field, separator);) fields.push_back(field);
  if (!text.empty() && text.back() == separator) fields.emplace_back();
  return fields;
}

inline std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

inline int parse_int(const std::string& text, const std::string& what, int min_value) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min_value || value > INT_MAX)
    fail(what + ": '" + text + "' is not an integer in [" + std::to_string(min_value) + ", " + std::to_string(INT_MAX) +
         "]");
  return static_cast<int>(value);
}

// --help's lines for the options every peer takes: --shapes before the peer's own, the others after.
constexpr const char* kShapesUsage = "  --shapes FILE      CSV with header set,layer,m,n,k: one GEMM per row\n";
constexpr const char* kCommonUsage =
    R"(  --kgemm-inputs     the CSV's GEMMs multiply kgemm-run's operands for the same rows and report their
                     max relative error against fp64 on kgemm-run's checked rows (column err)
  --reps N           timed calls per problem, median               (default: 50)
  --warmup N         untimed calls before timing                   (default: 5)
  --out FILE         write Google Benchmark JSON (benchmarks/RESULTS_SCHEMA.md)
  --help
)";

// The command line: the names in `flags` stand alone, the others in `valued` take a value as
// --name VALUE or --name=VALUE, each occurrence kept in order; --help prints `usage` and exits.
struct Arguments {
  std::set<std::string> flags;
  std::map<std::string, std::vector<std::string>> values;

  bool flag(const std::string& name) const { return flags.count(name) != 0; }
  std::vector<std::string> all(const std::string& name) const {
    const auto found = values.find(name);
    return found == values.end() ? std::vector<std::string>() : found->second;
  }
  std::string last(const std::string& name) const {
    const std::vector<std::string> given = all(name);
    return given.empty() ? "" : given.back();
  }
  // Every value is checked; the last one counts.
  int last_int(const std::string& name, int min_value, int fallback) const {
    int value = fallback;
    for (const std::string& text : all(name)) value = parse_int(text, name, min_value);
    return value;
  }
};

inline Arguments parse_arguments(int argc, char** argv, const std::string& usage, const std::set<std::string>& flags,
                                 const std::set<std::string>& valued) {
  Arguments arguments;
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i], value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "--help") {
      std::fputs(usage.c_str(), stdout);
      std::exit(0);
    }
    if (flags.count(name)) {
      arguments.flags.insert(name);
      continue;
    }
    if (!valued.count(name)) fail("unknown argument '" + name + "' (see --help)");
    if (!inline_value) {
      if (i + 1 >= argc) fail("option " + name + " needs a value");
      value = argv[++i];
    }
    arguments.values[name].push_back(value);
  }
  return arguments;
}

// "is not a", "is neither a nor b", "is none of a, b, c": what a value outside `allowed` is.
inline std::string none_of(const std::vector<std::string>& allowed) {
  if (allowed.size() == 1) return "is not " + allowed[0];
  if (allowed.size() == 2) return "is neither " + allowed[0] + " nor " + allowed[1];
  std::string text = "is none of ";
  for (size_t i = 0; i < allowed.size(); ++i) text += (i ? ", " : "") + allowed[i];
  return text;
}

// The items of an option's comma lists, each once, in order of first mention; all of `allowed`
// when the option is absent.
inline std::vector<std::string> list_option(const Arguments& arguments, const std::string& name,
                                            const std::vector<std::string>& allowed) {
  std::vector<std::string> texts = arguments.all(name);
  if (texts.empty()) return allowed;
  std::vector<std::string> items;
  for (const std::string& text : texts)
    for (const std::string& field : split(text, ',')) {
      const std::string item = trim(field);
      if (std::find(allowed.begin(), allowed.end(), item) == allowed.end())
        fail(name + ": '" + item + "' " + none_of(allowed));
      if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
    }
  return items;
}

// The options every peer takes.
struct CommonOptions {
  std::string shapes_path, out_path;
  std::vector<std::string> dtypes, impls;
  bool kgemm_inputs = false;
  int reps = 50, warmup = 5;
};

inline CommonOptions common_options(const Arguments& arguments, const std::vector<std::string>& impls,
                                    const std::vector<std::string>& dtypes) {
  CommonOptions options;
  options.shapes_path = arguments.last("--shapes");
  options.out_path = arguments.last("--out");
  options.impls = list_option(arguments, "--impls", impls);
  options.dtypes = list_option(arguments, "--dtype", dtypes);
  options.kgemm_inputs = arguments.flag("--kgemm-inputs");
  options.reps = arguments.last_int("--reps", 1, options.reps);
  options.warmup = arguments.last_int("--warmup", 0, options.warmup);
  return options;
}

// One benchmarked problem: `batch` row-major products C = A*B of M x K by K x N.
struct Problem {
  bool batched = false;  // strided-batched API ("batched/..." names), else one plain GEMM
  std::string set, layer;
  int m = 0, n = 0, k = 0;
  int batch = 1;
  bool shared_b = false;  // every product multiplies the same B
  int index_in_set = 0;   // the CSV rows of its set before it: kgemm-run's layer index

  long long a_stride() const { return static_cast<long long>(m) * k; }
  long long b_stride() const { return shared_b ? 0 : static_cast<long long>(k) * n; }
  long long c_stride() const { return static_cast<long long>(m) * n; }
  size_t a_elems() const { return static_cast<size_t>(batch) * a_stride(); }
  size_t b_elems() const { return shared_b ? static_cast<size_t>(k) * n : static_cast<size_t>(batch) * b_stride(); }
  size_t c_elems() const { return static_cast<size_t>(batch) * c_stride(); }
  double flops() const { return 2.0 * m * n * k * batch; }

  std::string name(const std::string& impl, const std::string& dtype) const {
    return std::string(batched ? "batched" : "gemm") + "/" + impl + "/cuda/" + dtype + "/" + set + "/m" +
           std::to_string(m) + "_n" + std::to_string(n) + "_k" + std::to_string(k);
  }
};

// kgemm-run --list-shapes' CSV: one plain GEMM per row, M already multiplied by the batch.
inline std::vector<Problem> read_shapes(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open shapes file '" + path + "'");
  std::string line;
  if (!std::getline(in, line) || trim(line) != "set,layer,m,n,k")
    fail(path + ": the first line must be the header set,layer,m,n,k");
  std::vector<Problem> shapes;
  for (int line_number = 2; std::getline(in, line); ++line_number) {
    if (trim(line).empty()) continue;
    const std::string where = path + ":" + std::to_string(line_number);
    const std::vector<std::string> fields = split(line, ',');
    if (fields.size() != 5) fail(where + ": expected 5 fields set,layer,m,n,k, found " + std::to_string(fields.size()));
    Problem shape;
    shape.set = trim(fields[0]);
    shape.layer = trim(fields[1]);
    shape.m = parse_int(trim(fields[2]), where + ": m", 1);
    shape.n = parse_int(trim(fields[3]), where + ": n", 1);
    shape.k = parse_int(trim(fields[4]), where + ": k", 1);
    if (shape.set.empty()) fail(where + ": empty set name");
    shape.index_in_set = static_cast<int>(
        std::count_if(shapes.begin(), shapes.end(), [&](const Problem& other) { return other.set == shape.set; }));
    shapes.push_back(shape);
  }
  if (shapes.empty()) fail(path + ": no shapes after the header");
  return shapes;
}

// ---------------------------------------------------------------------------------------------
// Data: host-generated so that the fp64 reference reads the very values the GPU multiplies

template <class T>
struct Storage;

template <>
struct Storage<float> {
  static constexpr double tolerance = 1e-4;
  static float from_float(float x) { return x; }
  static double to_double(float x) { return x; }
};

template <>
struct Storage<__half> {
  static constexpr double tolerance = 2e-2;
  static __half from_float(float x) { return __float2half_rn(x); }
  static double to_double(__half x) { return __half2float(x); }
};

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in (-1, 1) on odd multiples of 2^-23: exact in fp32, and never zero even after
// rounding to fp16, so that no product term vanishes.
inline float uniform_nonzero(uint64_t& state) {
  const int32_t odd = 2 * static_cast<int32_t>(splitmix64(state) >> 41) + 1 - (1 << 23);
  return static_cast<float>(odd) * 0x1p-23f;
}

template <class T>
std::vector<T> random_values(size_t count, uint64_t seed) {
  std::vector<T> values(count);
  uint64_t state = seed;
  for (T& value : values) value = Storage<T>::from_float(uniform_nonzero(state));
  return values;
}

// kgemm-run's inputs for layer `index` of a set: A (seed 2 index + 1), B (2 index + 2), row-major.
template <class T>
std::vector<T> kgemm_values(size_t count, uint64_t seed) {
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = Storage<T>::from_float(kgemm::uniform_from_hash(seed, i));
  return values;
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count) { CUDA_CHECK(cudaMalloc(&data_, count * sizeof(T))); }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
};

inline size_t aligned(size_t elems) { return (elems + kCopyAlignElems - 1) / kCopyAlignElems * kCopyAlignElems; }

// `copies` copies of A, B and C side by side; the timed calls cycle through them so that their
// operands come from HBM, not from an L2 still holding the previous call's.
template <class T>
class RotatingOperands {
 public:
  RotatingOperands(const Problem& p, int copies)
      : copies_(copies),
        a_pitch_(aligned(p.a_elems())),
        b_pitch_(aligned(p.b_elems())),
        c_pitch_(aligned(p.c_elems())),
        a_(a_pitch_ * copies),
        b_(b_pitch_ * copies),
        c_(c_pitch_ * copies) {}

  static int copies_for(const Problem& p) {
    const double bytes =
        static_cast<double>(aligned(p.a_elems()) + aligned(p.b_elems()) + aligned(p.c_elems())) * sizeof(T);
    return static_cast<int>(std::min<double>(kMaxCopies, std::floor(kRotationBytes / bytes) + 1));
  }

  int copies() const { return copies_; }
  T* a(int copy) const { return a_.get() + a_pitch_ * (copy % copies_); }
  T* b(int copy) const { return b_.get() + b_pitch_ * (copy % copies_); }
  T* c(int copy) const { return c_.get() + c_pitch_ * (copy % copies_); }

 private:
  int copies_;
  size_t a_pitch_, b_pitch_, c_pitch_;
  DeviceArray<T> a_, b_, c_;
};

// One problem's inputs in one dtype, on the host (for the checks) and as rotating device copies,
// made once and multiplied by every impl.
template <class T>
struct ProblemData {
  ProblemData(const Problem& p, uint64_t seed, bool use_kgemm_inputs)
      : kgemm_inputs(use_kgemm_inputs && !p.batched),
        seed_a(kgemm_inputs ? 2 * p.index_in_set + 1 : 2 * seed + 1),
        seed_b(kgemm_inputs ? 2 * p.index_in_set + 2 : 2 * seed + 2),
        host_a(kgemm_inputs ? kgemm_values<T>(p.a_elems(), seed_a) : random_values<T>(p.a_elems(), seed_a)),
        host_b(kgemm_inputs ? kgemm_values<T>(p.b_elems(), seed_b) : random_values<T>(p.b_elems(), seed_b)),
        operands(p, RotatingOperands<T>::copies_for(p)) {
    CUDA_CHECK(cudaMemcpy(operands.a(0), host_a.data(), host_a.size() * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(operands.b(0), host_b.data(), host_b.size() * sizeof(T), cudaMemcpyHostToDevice));
    for (int copy = 1; copy < operands.copies(); ++copy) {
      CUDA_CHECK(cudaMemcpy(operands.a(copy), operands.a(0), host_a.size() * sizeof(T), cudaMemcpyDeviceToDevice));
      CUDA_CHECK(cudaMemcpy(operands.b(copy), operands.b(0), host_b.size() * sizeof(T), cudaMemcpyDeviceToDevice));
    }
  }

  const bool kgemm_inputs;
  const uint64_t seed_a, seed_b;
  const std::vector<T> host_a, host_b;
  RotatingOperands<T> operands;
};

// ---------------------------------------------------------------------------------------------
// Checks

// Compares sampled elements of C (always including the first and the last) with fp64 dot products;
// the error bound, `tolerance` x sum |a||b|, scales with the rounding errors of any summation order.
template <class T>
void check_result(const Problem& p, const std::string& name, double tolerance, const std::vector<T>& a,
                  const std::vector<T>& b, const std::vector<T>& c) {
  uint64_t state = 0x5eed;
  for (int sample = 0; sample < kCheckSamples; ++sample) {
    size_t product = 0, row = 0, col = 0;
    if (sample == 1) {
      product = p.batch - 1;
      row = p.m - 1;
      col = p.n - 1;
    } else if (sample > 1) {
      product = splitmix64(state) % p.batch;
      row = splitmix64(state) % p.m;
      col = splitmix64(state) % p.n;
    }
    const T* a_row = a.data() + product * p.a_stride() + row * p.k;
    const T* b_matrix = b.data() + product * p.b_stride();
    double reference = 0, magnitude = 0;
    for (int i = 0; i < p.k; ++i) {
      const double term =
          Storage<T>::to_double(a_row[i]) * Storage<T>::to_double(b_matrix[i * static_cast<size_t>(p.n) + col]);
      reference += term;
      magnitude += std::fabs(term);
    }
    const double result = Storage<T>::to_double(c[product * p.c_stride() + row * p.n + col]);
    const double error = std::fabs(result - reference);
    if (!(error <= tolerance * magnitude)) {  // also catches NaN: an element left unwritten
      char detail[256];
      std::snprintf(detail, sizeof detail,
                    "C[%zu][%zu][%zu] = %.9g, fp64 reference %.9g: error %.3g > %g * sum|a||b| = %.3g", product, row,
                    col, result, reference, error, tolerance, tolerance * magnitude);
      fail("wrong result for " + name + " (" + p.layer + ", M=" + std::to_string(p.m) + " N=" + std::to_string(p.n) +
           " K=" + std::to_string(p.k) + " batch=" + std::to_string(p.batch) + "): " + detail);
    }
  }
}

// max |C - C_exact| / max |C_exact| over the rows kgemm-run checks, against the fp64 product of
// the inputs as generated (kgemm-run's measure_error).
template <class T>
double kgemm_max_rel_err(const Problem& p, uint64_t seed_a, uint64_t seed_b, const std::vector<T>& c) {
  const std::vector<int> rows = kgemm::sample_rows(p.m, 16, seed_a);
  const kgemm::ProductRows exact = kgemm::hashed_product_rows<float>(seed_a, rows, p.k, seed_b, 0, p.n);
  kgemm::RelativeError error;
  for (size_t r = 0; r < rows.size(); ++r)
    for (int j = 0; j < p.n; ++j)
      error.add(Storage<T>::to_double(c[static_cast<size_t>(rows[r]) * p.n + j]), exact.exact[r * p.n + j]);
  return error.max_relative();
}

// ---------------------------------------------------------------------------------------------
// Measurement

// What an impl chose among its library's kernels: the peer's own JSON fields (written before the
// label) and the same said at the end of its table row; empty for an impl that chooses nothing.
struct Choice {
  Json fields = Json::object();
  std::string text;
};

struct Measurement {
  double kernel_us = 0, launch_us = 0, call_us = 0, transfer_us = 0;
  int copies = 0;
  double max_rel_err = std::nan("");  // measured with --kgemm-inputs
  Choice chosen;
};

using Clock = std::chrono::steady_clock;

inline double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// The upper median, as kgemm's time_median takes it.
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Events around each call, queued behind an untimed call and a hold of the stream
// (kgemm/spaces/stream_hold.hpp) so that the GPU is still busy when the timed one is launched:
// the pair times the GPU's work for one call rather than the host's launch latency (call_us
// reports that). kgemm's benchmarks time their GPU calls the same way (kgemm::time_queued_call).
template <class Call>
double kernel_median_us(Call&& call, int reps) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> us(reps);
  for (double& rep_us : us) {
    call();
    CUDA_CHECK(kgemm::hold_stream(0));
    CUDA_CHECK(cudaEventRecord(start));
    call();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    rep_us = 1e3 * ms;
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return median(us);
}

// A library call on one copy of the operands; false when the library refuses it.
template <class T>
using TryCall = std::function<bool(const T* a, const T* b, T* c)>;

// The time of each candidate kernel on the problem's rotating operands, for a peer to keep the
// fastest (fastest_candidate): one untimed call on the first copy, then kSelectReps queued calls,
// median. A candidate the library refuses on its first call gets INFINITY.
template <class T>
std::vector<double> time_candidates(RotatingOperands<T>& operands, const std::vector<TryCall<T>>& candidates) {
  std::vector<double> times;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i](operands.a(0), operands.b(0), operands.c(0))) {
      times.push_back(INFINITY);
      continue;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    int next_copy = 0;
    times.push_back(kernel_median_us(
        [&] {
          const int copy = next_copy++;
          if (!candidates[i](operands.a(copy), operands.b(copy), operands.c(copy)))
            fail("candidate " + std::to_string(i) + " failed after its first call ran");
        },
        kSelectReps));
  }
  return times;
}

// The index of the fastest of time_candidates' times; -1 when no candidate ran.
inline int fastest_candidate(const std::vector<double>& times) {
  const auto fastest = std::min_element(times.begin(), times.end());
  return fastest == times.end() || std::isinf(*fastest) ? -1 : static_cast<int>(fastest - times.begin());
}

// An impl's call on one copy of the operands, the bound its results are checked with, and what
// it chose; an impl with no call (none of its library's kernels ran) says why in chosen.text.
template <class T>
struct Impl {
  std::function<void(const T* a, const T* b, T* c)> call;
  double tolerance = Storage<T>::tolerance;
  Choice chosen;
};

// Checks the impl once on the problem, then times it: kernel (events), launch and call (host
// clock), and the transfers of its operands.
template <class T>
Measurement measure(const Problem& p, const std::string& name, ProblemData<T>& data, const Impl<T>& impl,
                    const CommonOptions& options) {
  RotatingOperands<T>& operands = data.operands;
  std::vector<T> host_c(p.c_elems());
  // All-ones bytes are NaN in fp32 and fp16, so an element the library fails to write cannot pass.
  CUDA_CHECK(cudaMemset(operands.c(0), 0xff, host_c.size() * sizeof(T)));
  impl.call(operands.a(0), operands.b(0), operands.c(0));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(host_c.data(), operands.c(0), host_c.size() * sizeof(T), cudaMemcpyDeviceToHost));
  check_result(p, name, impl.tolerance, data.host_a, data.host_b, host_c);
  Measurement result;
  result.chosen = impl.chosen;
  if (data.kgemm_inputs) result.max_rel_err = kgemm_max_rel_err(p, data.seed_a, data.seed_b, host_c);

  int next_copy = 0;
  const auto call = [&] {
    const int copy = next_copy++;
    impl.call(operands.a(copy), operands.b(copy), operands.c(copy));
  };
  result.copies = operands.copies();
  for (int rep = 0; rep < options.warmup; ++rep) call();
  result.kernel_us = kernel_median_us(call, options.reps);

  std::vector<double> launch_us(options.reps), call_us(options.reps);
  for (int rep = 0; rep < options.reps; ++rep) {
    CUDA_CHECK(cudaDeviceSynchronize());
    const Clock::time_point start = Clock::now();
    call();
    launch_us[rep] = microseconds_since(start);
    CUDA_CHECK(cudaDeviceSynchronize());
    call_us[rep] = microseconds_since(start);
  }
  result.launch_us = median(launch_us);
  result.call_us = median(call_us);

  std::vector<double> transfer_us(kTransferTrials);
  for (double& us : transfer_us) {
    const Clock::time_point start = Clock::now();
    CUDA_CHECK(cudaMemcpy(operands.a(0), data.host_a.data(), data.host_a.size() * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(operands.b(0), data.host_b.data(), data.host_b.size() * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(host_c.data(), operands.c(0), host_c.size() * sizeof(T), cudaMemcpyDeviceToHost));
    us = microseconds_since(start);
  }
  result.transfer_us = median(transfer_us);
  CUDA_CHECK(cudaGetLastError());
  return result;
}

// ---------------------------------------------------------------------------------------------
// Output

struct Record {
  Problem problem;
  std::string impl, dtype;
  Measurement measurement;
  double gflops() const { return problem.flops() / measurement.kernel_us * 1e-3; }
};

// ISO 8601 with the UTC offset, as Google Benchmark writes its date.
inline std::string local_date() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
  std::string date = text;
  if (date.size() > 2) date.insert(date.size() - 2, ":");
  return date;
}

inline std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

// The GPU the peer runs on: its properties and the JSON context's first fields, the machine's (a
// peer appends its library's versions and name).
struct Device {
  cudaDeviceProp properties{};
  Json context;

  explicit Device(const char* executable) {
    int device = 0, cuda_runtime = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    CUDA_CHECK(cudaRuntimeGetVersion(&cuda_runtime));
    context = {{"date", local_date()},
               {"host_name", host_name()},
               {"executable", executable},
               {"device", properties.name},
               {"compute_capability", std::to_string(properties.major) + "." + std::to_string(properties.minor)},
               {"cuda_runtime", cuda_runtime}};
  }

  // "NVIDIA H100 80GB HBM3 (sm 9.0, L2 50 MB), CUDA runtime 13000": the banner's start.
  std::string summary() const {
    return std::string(properties.name) + " (sm " + context["compute_capability"].get<std::string>() + ", L2 " +
           std::to_string(properties.l2CacheSize >> 20) + " MB), CUDA runtime " +
           std::to_string(context["cuda_runtime"].get<int>());
  }
};

// Rewritten after every problem, so that an abort later on keeps the rows already measured.
// Google Benchmark's JSON layout, so that the report reads kgemm's and the peer's files alike;
// NaN and infinite values are written as null (JSON has neither).
inline void write_json(const std::string& path, const Json& context, const std::vector<Record>& records, int reps) {
  Json benchmarks = Json::array();
  for (const Record& r : records) {
    const Problem& p = r.problem;
    const Measurement& m = r.measurement;
    const std::string name = p.name(r.impl, r.dtype);
    Json row = {{"name", name}, {"run_name", name}, {"run_type", "iteration"}, {"repetitions", 1},
                {"repetition_index", 0}, {"threads", 1}, {"iterations", reps}, {"real_time", m.kernel_us},
                {"cpu_time", m.kernel_us}, {"time_unit", "us"}, {"GFLOP/s", r.gflops()}, {"M", p.m}, {"N", p.n},
                {"K", p.k}, {"batch", p.batch}, {"launch_us", m.launch_us}, {"call_us", m.call_us},
                {"transfer_us", m.transfer_us}};
    if (!std::isnan(m.max_rel_err)) row["max_rel_err"] = m.max_rel_err;
    for (const auto& field : m.chosen.fields.items()) row[field.key()] = field.value();
    row["label"] = p.layer;
    benchmarks.push_back(std::move(row));
  }
  const Json document = {{"context", context}, {"benchmarks", benchmarks}};
  std::ofstream out(path, std::ios::trunc);
  out << document.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  out.close();
  if (!out) fail("cannot write '" + path + "'");
}

inline void print_table_header() {
  std::printf("%-4s %-13s %-7s %-20s %-30s %8s %5s %5s %7s %6s %10s %9s %10s %10s %11s %9s\n", "type", "impl", "op",
              "set", "layer", "M", "N", "K", "batch", "copies", "time[us]", "GFLOP/s", "launch[us]", "call[us]",
              "transfer[us]", "err");
}

// Every impl of `impls` on one problem in one dtype, on the same inputs: `make(name, p, data)` gives
// the impl (choosing its kernel on `data`), which is checked and timed. A table row each, started
// and flushed before the impl is made so that a failure shows which problem it hit, and the JSON
// rewritten after each.
template <class T, class MakeImpl>
void run_problem(const Problem& p, size_t index, const std::string& dtype, const std::vector<std::string>& impls,
                 MakeImpl&& make, const CommonOptions& options, const Json& context, std::vector<Record>& records) {
  ProblemData<T> data(p, index, options.kgemm_inputs);
  for (const std::string& impl_name : impls) {
    std::printf("%-4s %-13s %-7s %-20s %-30s %8d %5d %5d %7d ", dtype.c_str(), impl_name.c_str(),
                p.batched ? "batched" : "gemm", p.set.c_str(), p.layer.c_str(), p.m, p.n, p.k, p.batch);
    std::fflush(stdout);
    const Impl<T> impl = make(impl_name, p, data);
    if (!impl.call) {
      std::printf("%s\n", impl.chosen.text.c_str());
      continue;
    }
    const Measurement m = measure<T>(p, p.name(impl_name, dtype), data, impl, options);
    records.push_back({p, impl_name, dtype, m});
    std::printf("%6d %10.2f %9.1f %10.2f %10.2f %11.1f %9.2e%s\n", m.copies, m.kernel_us, records.back().gflops(),
                m.launch_us, m.call_us, m.transfer_us, m.max_rel_err, m.chosen.text.c_str());
    if (!options.out_path.empty()) write_json(options.out_path, context, records, options.reps);
  }
}

// Geometric means per impl and dtype within each op and set: one number per comparable group.
inline void print_geometric_means(const std::vector<Record>& records) {
  std::map<std::string, std::pair<double, int>> log_sums;
  for (const Record& r : records) {
    auto& sum =
        log_sums[r.impl + " " + r.dtype + " " + (r.problem.batched ? "batched" : "gemm") + " " + r.problem.set];
    sum.first += std::log(r.gflops());
    ++sum.second;
  }
  for (const auto& group : log_sums)
    std::printf("geometric mean %s over %d problems: %.1f GFLOP/s\n", group.first.c_str(), group.second.second,
                std::exp(group.second.first / group.second.second));
}

}  // namespace peer
