// cublas_peer: the cuBLAS references for kgemm's GPU benchmarks. Standalone (CUDA runtime, cuBLAS,
// cuBLASLt and the C++ standard library only) so that it builds with whatever nvcc the GPU machine has:
//
//   ./build.sh [OUTPUT]      # nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o OUTPUT cublas_peer.cu -lcublasLt -lcublas
//   ./cublas_peer --shapes shapes.csv [--dtype fp32,fp16] [--squares 8,16,32,64] [--batched-shapes]
//                 [--impls cublas,cublaslt,cublaslt-tf32] [--lt-candidates 16]
//                 [--kgemm-inputs] [--reps 50] [--warmup 5] [--out results.json]
//
// shapes.csv has the header `set,layer,m,n,k`, one GEMM per row (m already multiplied by the batch).
// Each (dtype, problem) runs C = A*B with row-major A (MxK), B (KxN), C (MxN), as kgemm does:
//   gemm    one product per CSV row;
//   batched --squares n: 2^24/n^2 independent n x n x n products (strided, each its own A, B, C);
//           --batched-shapes: each CSV row as batch = the set's _b<batch> suffix products of
//           M = m/batch rows sharing one B (B stride 0).
// Each problem runs as up to three impls (rows <op>/<impl>/cuda/...):
//   cublas         cuBLAS' default heuristic, one algorithm per call: fp32 is cublasSgemm in
//                  CUBLAS_DEFAULT_MATH (true fp32 FMA, TF32 tensor cores OFF); fp16 is cublasGemmEx
//                  with fp16 storage and CUBLAS_COMPUTE_32F (tensor cores, fp32 accumulation).
//   cublaslt       "cuBLASLt best": cublasLtMatmul in the same arithmetic (CUBLAS_COMPUTE_32F), with
//                  the --lt-candidates algorithms its heuristic ranks first each timed on the problem's
//                  own operands and the fastest kept, as NVIDIA's LtSgemmSimpleAutoTuning sample does;
//                  lt_algorithm names the one kept, lt_rank its place in the heuristic's order (0:
//                  the heuristic's own choice was fastest), lt_heuristic_us the time of that first one.
//   cublaslt-tf32  fp32 only: the same search in CUBLAS_COMPUTE_32F_FAST_TF32 (inputs rounded to
//                  TF32 on tensor cores), less accurate than fp32: a column beside, never the best peer.
//
// Every impl is checked once on every problem against fp64 host dot products on sampled elements
// (exit 1 on a mismatch; TF32's bound is TF32's). With --kgemm-inputs the GEMMs multiply the operands kgemm-run multiplies for the same
// row of its --list-shapes (kgemm's fill hash, seeds 2i + 1 and 2i + 2 for the set's i-th layer)
// and report max |C - C_fp64| / max |C_fp64| over the rows kgemm-run checks: both errors on the
// same inputs (the headers it takes from kgemm need no Kokkos). Then each problem is timed: the median of `reps` CUDA-event-bracketed calls, each queued behind an
// untimed one (real_time), of host time for a call to return (launch_us) and to complete
// (call_us), and of 5 pageable-memory transfers of A and B up and C down (transfer_us). Results
// go to stdout and, with --out, to Google Benchmark JSON as benchmarks/RESULTS_SCHEMA.md specifies.
#include <cublasLt.h>
#include <cublas_v2.h>
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
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kgemm/tuner/hashed_reference.hpp"

namespace {

constexpr double kRotationBytes = 200e6;  // 4x the H100's 50 MB L2: a copy is evicted before its reuse
constexpr int kMaxCopies = 64;
constexpr size_t kCopyAlignElems = 128;  // copies start on 256-byte boundaries, as cudaMalloc's do
constexpr int kCheckSamples = 256;
constexpr int kTransferTrials = 5;
constexpr int kSquaresElems = 1 << 24;  // --squares: batch * n^2 per operand
constexpr int kLtSelectReps = 10;         // timed calls per cuBLASLt candidate while choosing
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;  // NVIDIA's recommendation for Hopper
const char* const kImpls[] = {"cublas", "cublaslt", "cublaslt-tf32"};

[[noreturn]] void fail(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "cublas_peer: %s\n", message.c_str());
  std::exit(1);
}

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    fail(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + cudaGetErrorName(status) + " (" +
         cudaGetErrorString(status) + ")");
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + cublasGetStatusName(status) +
         " (" + cublasGetStatusString(status) + ")");
}

#define CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

// ---------------------------------------------------------------------------------------------
// Command line and problem list

struct Options {
  std::string shapes_path, out_path;
  std::vector<std::string> dtypes, impls;
  std::vector<int> squares;
  int lt_candidates = 16;
  bool batched_shapes = false;
  bool kgemm_inputs = false;
  int reps = 50, warmup = 5;
};

const char* kUsage = R"(usage: cublas_peer [options]
  --shapes FILE      CSV with header set,layer,m,n,k: one GEMM per row
  --dtype LIST       fp32 and/or fp16, comma list or repeated      (default: fp32,fp16)
  --squares LIST     batched n x n x n products, batch = 2^24/n^2 (e.g. 8,16,32,64)
  --batched-shapes   also run each CSV row as batch (from the set's _b<batch>) products of m/batch rows, one shared B
  --impls LIST       cublas, cublaslt and/or cublaslt-tf32 (fp32 only)  (default: all three)
  --lt-candidates N  cuBLASLt algorithms to time per problem, the heuristic's first N  (default: 16)
  --kgemm-inputs     the CSV's GEMMs multiply kgemm-run's operands for the same rows and report their
                     max relative error against fp64 on kgemm-run's checked rows (column err)
  --reps N           timed calls per problem, median               (default: 50)
  --warmup N         untimed calls before timing                   (default: 5)
  --out FILE         write Google Benchmark JSON (benchmarks/RESULTS_SCHEMA.md)
  --help
)";

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> fields;
  std::istringstream in(text);
  for (std::string field; std::getline(in, field, separator);) fields.push_back(field);
  if (!text.empty() && text.back() == separator) fields.emplace_back();
  return fields;
}

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

int parse_int(const std::string& text, const std::string& what, int min_value) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min_value || value > INT_MAX)
    fail(what + ": '" + text + "' is not an integer in [" + std::to_string(min_value) + ", " + std::to_string(INT_MAX) +
         "]");
  return static_cast<int>(value);
}

Options parse_options(int argc, char** argv) {
  Options options;
  std::vector<std::string> dtype_texts, square_texts, impl_texts;
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i], value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (name == "--batched-shapes") {
      options.batched_shapes = true;
      continue;
    }
    if (name == "--kgemm-inputs") {
      options.kgemm_inputs = true;
      continue;
    }
    if (name != "--shapes" && name != "--dtype" && name != "--squares" && name != "--reps" && name != "--warmup" &&
        name != "--out" && name != "--impls" && name != "--lt-candidates")
      fail("unknown argument '" + name + "' (see --help)");
    if (!inline_value) {
      if (i + 1 >= argc) fail("option " + name + " needs a value");
      value = argv[++i];
    }
    if (name == "--shapes") options.shapes_path = value;
    if (name == "--out") options.out_path = value;
    if (name == "--dtype") dtype_texts.push_back(value);
    if (name == "--squares") square_texts.push_back(value);
    if (name == "--reps") options.reps = parse_int(value, "--reps", 1);
    if (name == "--warmup") options.warmup = parse_int(value, "--warmup", 0);
    if (name == "--impls") impl_texts.push_back(value);
    if (name == "--lt-candidates") options.lt_candidates = parse_int(value, "--lt-candidates", 1);
  }
  if (impl_texts.empty()) impl_texts.push_back("cublas,cublaslt,cublaslt-tf32");
  for (const std::string& text : impl_texts)
    for (const std::string& item : split(text, ',')) {
      const std::string impl = trim(item);
      if (std::find(std::begin(kImpls), std::end(kImpls), impl) == std::end(kImpls))
        fail("--impls: '" + impl + "' is none of cublas, cublaslt, cublaslt-tf32");
      if (std::find(options.impls.begin(), options.impls.end(), impl) == options.impls.end())
        options.impls.push_back(impl);
    }
  if (dtype_texts.empty()) dtype_texts.push_back("fp32,fp16");
  for (const std::string& text : dtype_texts)
    for (const std::string& item : split(text, ',')) {
      const std::string dtype = trim(item);
      if (dtype != "fp32" && dtype != "fp16") fail("--dtype: '" + dtype + "' is neither fp32 nor fp16");
      if (std::find(options.dtypes.begin(), options.dtypes.end(), dtype) == options.dtypes.end())
        options.dtypes.push_back(dtype);
    }
  for (const std::string& text : square_texts)
    for (const std::string& item : split(text, ',')) options.squares.push_back(parse_int(trim(item), "--squares", 1));
  if (options.shapes_path.empty() && options.squares.empty()) fail("nothing to run: give --shapes and/or --squares");
  if (options.batched_shapes && options.shapes_path.empty()) fail("--batched-shapes needs --shapes");
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

std::vector<Problem> read_shapes(const std::string& path) {
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

// "resnet50_i224_b128" -> 128.
int batch_of_set(const std::string& set) {
  const size_t pos = set.rfind("_b");
  const std::string digits = pos == std::string::npos ? "" : set.substr(pos + 2);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    fail("--batched-shapes: set '" + set + "' does not end in _b<batch>");
  return parse_int(digits, "batch of set '" + set + "'", 1);
}

std::vector<Problem> build_problems(const Options& options) {
  std::vector<Problem> problems;
  if (!options.shapes_path.empty()) {
    const std::vector<Problem> shapes = read_shapes(options.shapes_path);
    problems = shapes;
    if (options.batched_shapes)
      for (Problem shape : shapes) {
        shape.batched = true;
        shape.shared_b = true;
        shape.batch = batch_of_set(shape.set);
        if (shape.m % shape.batch != 0)
          fail("--batched-shapes: " + shape.set + " " + shape.layer + ": m = " + std::to_string(shape.m) +
               " is not a multiple of the batch " + std::to_string(shape.batch));
        shape.m /= shape.batch;
        problems.push_back(shape);
      }
  }
  for (const int side : options.squares) {
    if (side > 4096) fail("--squares: " + std::to_string(side) + " > 4096 leaves no product in 2^24 elements");
    Problem square;
    square.batched = true;
    square.set = "squares";
    square.m = square.n = square.k = side;
    square.batch = kSquaresElems / (side * side);
    square.layer = "n=" + std::to_string(side) + " x" + std::to_string(square.batch);
    problems.push_back(square);
  }
  return problems;
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

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in (-1, 1) on odd multiples of 2^-23: exact in fp32, and never zero even after
// rounding to fp16, so that no product term vanishes.
float uniform_nonzero(uint64_t& state) {
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

size_t aligned(size_t elems) { return (elems + kCopyAlignElems - 1) / kCopyAlignElems * kCopyAlignElems; }

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

// ---------------------------------------------------------------------------------------------
// cuBLAS calls. cuBLAS is column-major: row-major C = A*B is column-major C^T = B^T * A^T, so
// cuBLAS gets the N x M problem with B first and the row lengths as leading dimensions.

void gemm(cublasHandle_t handle, const Problem& p, const float* a, const float* b, float* c) {
  const float alpha = 1, beta = 0;
  if (p.batched)
    CUBLAS_CHECK(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, b, p.n,
                                           p.b_stride(), a, p.k, p.a_stride(), &beta, c, p.n, p.c_stride(), p.batch));
  else
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, b, p.n, a, p.k, &beta, c, p.n));
}

void gemm(cublasHandle_t handle, const Problem& p, const __half* a, const __half* b, __half* c) {
  const float alpha = 1, beta = 0;
  if (p.batched)
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, b, CUDA_R_16F, p.n,
                                            p.b_stride(), a, CUDA_R_16F, p.k, p.a_stride(), &beta, c, CUDA_R_16F, p.n,
                                            p.c_stride(), p.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  else
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, b, CUDA_R_16F, p.n, a,
                              CUDA_R_16F, p.k, &beta, c, CUDA_R_16F, p.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// cuBLASLt: the same column-major N x M problem (B first) as one cublasLtMatmul, a strided batch
// where the problem has one (a B stride of 0 broadcasts the shared B), with an algorithm the
// caller picks from the heuristic's candidates.
template <class T>
class LtMatmul {
 public:
  LtMatmul(const Problem& p, cublasComputeType_t compute) {
    const cudaDataType_t type = std::is_same<T, float>::value ? CUDA_R_32F : CUDA_R_16F;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, type, p.n, p.k, p.n));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, type, p.k, p.m, p.k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_layout_, type, p.n, p.m, p.n));
    if (p.batched) {
      const int32_t batch = p.batch;
      const int64_t strides[] = {p.b_stride(), p.a_stride(), p.c_stride()};
      const cublasLtMatrixLayout_t layouts[] = {b_layout_, a_layout_, c_layout_};
      for (int i = 0; i < 3; ++i) {
        CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                      sizeof batch));
        CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                      &strides[i], sizeof strides[i]));
      }
    }
  }
  ~LtMatmul() {
    cublasLtMatrixLayoutDestroy(c_layout_);
    cublasLtMatrixLayoutDestroy(a_layout_);
    cublasLtMatrixLayoutDestroy(b_layout_);
    cublasLtMatmulDescDestroy(desc_);
  }
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  // The heuristic's first `count` algorithms that fit the workspace, best estimate first.
  std::vector<cublasLtMatmulAlgo_t> candidates(cublasLtHandle_t lt, int count) const {
    cublasLtMatmulPreference_t preference = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    const size_t workspace = kLtWorkspaceBytes;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                      sizeof workspace));
    std::vector<cublasLtMatmulHeuristicResult_t> results(count);
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt, desc_, b_layout_, a_layout_, c_layout_, c_layout_,
                                                                 preference, count, results.data(), &returned);
    cublasLtMatmulPreferenceDestroy(preference);
    std::vector<cublasLtMatmulAlgo_t> algos;
    if (status == CUBLAS_STATUS_NOT_SUPPORTED) return algos;
    CUBLAS_CHECK(status);
    for (int i = 0; i < returned; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= workspace)
        algos.push_back(results[i].algo);
    return algos;
  }

  cublasStatus_t run(cublasLtHandle_t lt, const cublasLtMatmulAlgo_t& algo, const T* a, const T* b, T* c,
                     void* workspace) const {
    const float alpha = 1, beta = 0;
    return cublasLtMatmul(lt, desc_, &alpha, b, b_layout_, a, a_layout_, &beta, c, c_layout_, c, c_layout_, &algo,
                          workspace, kLtWorkspaceBytes, 0);
  }

 private:
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
};

// "algo 21 tile 18 stages 8 splitK 1": what the label says of a cuBLASLt algorithm.
std::string describe(const cublasLtMatmulAlgo_t& algo) {
  int32_t id = 0, split_k = 1;
  uint32_t tile = 0, stages = 0;
  size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &written);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &written);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split_k, sizeof split_k, &written);
  return "algo " + std::to_string(id) + " tile " + std::to_string(tile) + " stages " + std::to_string(stages) +
         " splitK " + std::to_string(split_k);
}

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

// ---------------------------------------------------------------------------------------------
// Measurement

struct Measurement {
  double kernel_us = 0, launch_us = 0, call_us = 0, transfer_us = 0;
  int copies = 0;
  double max_rel_err = std::nan("");  // measured with --kgemm-inputs
  std::string algorithm;              // cuBLASLt: the algorithm kept
  int lt_candidates = 0, lt_rank = -1;
  double lt_heuristic_us = std::nan("");
};

// kgemm-run's inputs for layer `index` of a set: A (seed 2 index + 1), B (2 index + 2), row-major.
template <class T>
std::vector<T> kgemm_values(size_t count, uint64_t seed) {
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = Storage<T>::from_float(kgemm::uniform_from_hash(seed, i));
  return values;
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

using Clock = std::chrono::steady_clock;

double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// The upper median, as kgemm's time_median takes it.
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Events around each call, queued behind an untimed call so that the GPU is still busy when the
// timed one is launched: the pair times the GPU's work for one call rather than the host's
// launch latency (call_us reports that). kgemm's benchmarks time their GPU calls the same way
// (kgemm::time_queued_call).
template <class Call>
double kernel_median_us(Call&& call, int reps) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> us(reps);
  for (double& rep_us : us) {
    call();
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

// An impl's call on one copy of the operands, the bound its results are checked with, and what
// it chose (cuBLASLt).
template <class T>
struct Impl {
  std::function<void(const T* a, const T* b, T* c)> call;
  double tolerance = Storage<T>::tolerance;
  Measurement chosen;  // algorithm and lt_* fields; measure() fills in the rest
};

// Checks the impl once on the problem, then times it: kernel (events), launch and call (host
// clock), and the transfers of its operands.
template <class T>
Measurement measure(const Problem& p, const std::string& name, ProblemData<T>& data, const Impl<T>& impl,
                    const Options& options) {
  RotatingOperands<T>& operands = data.operands;
  std::vector<T> host_c(p.c_elems());
  // All-ones bytes are NaN in fp32 and fp16, so an element the library fails to write cannot pass.
  CUDA_CHECK(cudaMemset(operands.c(0), 0xff, host_c.size() * sizeof(T)));
  impl.call(operands.a(0), operands.b(0), operands.c(0));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(host_c.data(), operands.c(0), host_c.size() * sizeof(T), cudaMemcpyDeviceToHost));
  check_result(p, name, impl.tolerance, data.host_a, data.host_b, host_c);
  Measurement result = impl.chosen;
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

struct Handles {
  cublasHandle_t cublas = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* lt_workspace = nullptr;
};

// cuBLAS' default heuristic.
template <class T>
Impl<T> cublas_default(const Handles& handles, const Problem& p) {
  Impl<T> impl;
  impl.call = [handle = handles.cublas, p](const T* a, const T* b, T* c) { gemm(handle, p, a, b, c); };
  return impl;
}

// "cuBLASLt best": the heuristic's first --lt-candidates algorithms, each timed on the problem's
// rotating operands (kLtSelectReps queued calls, median), the fastest kept. An algorithm the
// heuristic offers but cublasLtMatmul refuses is skipped. Empty `call` when none runs.
template <class T>
Impl<T> cublaslt_best(const Handles& handles, const Problem& p, ProblemData<T>& data, cublasComputeType_t compute,
                      const Options& options) {
  auto matmul = std::make_shared<LtMatmul<T>>(p, compute);
  const std::vector<cublasLtMatmulAlgo_t> algos = matmul->candidates(handles.lt, options.lt_candidates);
  Impl<T> impl;
  impl.chosen.lt_candidates = static_cast<int>(algos.size());
  RotatingOperands<T>& operands = data.operands;
  double best_us = INFINITY;
  for (size_t i = 0; i < algos.size(); ++i) {
    if (matmul->run(handles.lt, algos[i], operands.a(0), operands.b(0), operands.c(0), handles.lt_workspace) !=
        CUBLAS_STATUS_SUCCESS)
      continue;
    CUDA_CHECK(cudaDeviceSynchronize());
    int next_copy = 0;
    const double us = kernel_median_us(
        [&] {
          const int copy = next_copy++;
          CUBLAS_CHECK(matmul->run(handles.lt, algos[i], operands.a(copy), operands.b(copy), operands.c(copy),
                                   handles.lt_workspace));
        },
        kLtSelectReps);
    if (i == 0) impl.chosen.lt_heuristic_us = us;
    if (us < best_us) {
      best_us = us;
      impl.chosen.lt_rank = static_cast<int>(i);
      impl.chosen.algorithm = describe(algos[i]);
      impl.call = [matmul, algo = algos[i], handles](const T* a, const T* b, T* c) {
        CUBLAS_CHECK(matmul->run(handles.lt, algo, a, b, c, handles.lt_workspace));
      };
    }
  }
  // TF32 rounds each input to 10 mantissa bits: about 2^-11 of each product, summed.
  if (compute == CUBLAS_COMPUTE_32F_FAST_TF32) impl.tolerance = 5e-3;
  return impl;
}

// ---------------------------------------------------------------------------------------------
// Output

struct Record {
  Problem problem;
  std::string impl, dtype;
  Measurement measurement;
  double gflops() const { return problem.flops() / measurement.kernel_us * 1e-3; }
};

struct Context {
  std::string date, host_name, executable, device, compute_capability;
  int cuda_runtime = 0, cublas_version = 0;
  size_t cublaslt_version = 0;
};

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char ch : text) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", ch);
      out += escaped;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";  // JSON has no inf or NaN
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

// Rewritten after every problem, so that an abort later on keeps the rows already measured.
void write_json(const std::string& path, const Context& context, const std::vector<Record>& records, int reps) {
  std::ofstream out(path, std::ios::trunc);
  out << "{\n  \"context\": {\n"
      << "    \"date\": " << json_string(context.date) << ",\n"
      << "    \"host_name\": " << json_string(context.host_name) << ",\n"
      << "    \"executable\": " << json_string(context.executable) << ",\n"
      << "    \"device\": " << json_string(context.device) << ",\n"
      << "    \"compute_capability\": " << json_string(context.compute_capability) << ",\n"
      << "    \"cuda_runtime\": " << context.cuda_runtime << ",\n"
      << "    \"cublas_version\": " << context.cublas_version << ",\n"
      << "    \"cublaslt_version\": " << context.cublaslt_version << ",\n"
      << "    \"library\": \"cublas\"\n  },\n  \"benchmarks\": [";
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    const Problem& p = r.problem;
    const Measurement& m = r.measurement;
    const std::string name = json_string(p.name(r.impl, r.dtype));
    out << (i ? ",\n" : "\n") << "    {\n"
        << "      \"name\": " << name << ",\n"
        << "      \"run_name\": " << name << ",\n"
        << "      \"run_type\": \"iteration\",\n"
        << "      \"repetitions\": 1,\n"
        << "      \"repetition_index\": 0,\n"
        << "      \"threads\": 1,\n"
        << "      \"iterations\": " << reps << ",\n"
        << "      \"real_time\": " << json_number(r.measurement.kernel_us) << ",\n"
        << "      \"cpu_time\": " << json_number(r.measurement.kernel_us) << ",\n"
        << "      \"time_unit\": \"us\",\n"
        << "      \"GFLOP/s\": " << json_number(r.gflops()) << ",\n"
        << "      \"M\": " << p.m << ",\n"
        << "      \"N\": " << p.n << ",\n"
        << "      \"K\": " << p.k << ",\n"
        << "      \"batch\": " << p.batch << ",\n"
        << "      \"launch_us\": " << json_number(r.measurement.launch_us) << ",\n"
        << "      \"call_us\": " << json_number(r.measurement.call_us) << ",\n"
        << "      \"transfer_us\": " << json_number(r.measurement.transfer_us) << ",\n"
        << (std::isnan(m.max_rel_err) ? "" : "      \"max_rel_err\": " + json_number(m.max_rel_err) + ",\n")
        << (m.algorithm.empty() ? ""
                                : "      \"lt_algorithm\": " + json_string(m.algorithm) + ",\n      \"lt_candidates\": " +
                                      std::to_string(m.lt_candidates) + ",\n      \"lt_rank\": " +
                                      std::to_string(m.lt_rank) + ",\n      \"lt_heuristic_us\": " +
                                      json_number(m.lt_heuristic_us) + ",\n")
        << "      \"label\": " << json_string(p.layer) << "\n"
        << "    }";
  }
  out << "\n  ]\n}\n";
  out.close();
  if (!out) fail("cannot write '" + path + "'");
}

// ISO 8601 with the UTC offset, as Google Benchmark writes its date.
std::string local_date() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
  std::string date = text;
  if (date.size() > 2) date.insert(date.size() - 2, ":");
  return date;
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

// Every selected impl on one problem in one dtype, on the same inputs; a line each on stdout, and
// the JSON rewritten after each.
template <class T>
void run_problem(const Handles& handles, const Problem& p, size_t index, const std::string& dtype,
                 const Options& options, const Context& context, std::vector<Record>& records) {
  ProblemData<T> data(p, index, options.kgemm_inputs);
  for (const std::string& impl_name : options.impls) {
    if (impl_name == "cublaslt-tf32" && dtype != "fp32") continue;
    std::printf("%-4s %-13s %-7s %-20s %-30s %8d %5d %5d %7d ", dtype.c_str(), impl_name.c_str(),
                p.batched ? "batched" : "gemm", p.set.c_str(), p.layer.c_str(), p.m, p.n, p.k, p.batch);
    std::fflush(stdout);  // a failure below then shows which problem it hit
    const Impl<T> impl =
        impl_name == "cublas"
            ? cublas_default<T>(handles, p)
            : cublaslt_best<T>(handles, p, data,
                               impl_name == "cublaslt" ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32, options);
    if (!impl.call) {
      std::printf("no cuBLASLt algorithm ran (%d candidates)\n", impl.chosen.lt_candidates);
      continue;
    }
    const Measurement m = measure<T>(p, p.name(impl_name, dtype), data, impl, options);
    records.push_back({p, impl_name, dtype, m});
    std::printf("%6d %10.2f %9.1f %10.2f %10.2f %11.1f %9.2e", m.copies, m.kernel_us, records.back().gflops(),
                m.launch_us, m.call_us, m.transfer_us, m.max_rel_err);
    if (!m.algorithm.empty())
      std::printf("  %s, #%d of %d (heuristic's first %.2f us)", m.algorithm.c_str(), m.lt_rank, m.lt_candidates,
                  m.lt_heuristic_us);
    std::printf("\n");
    if (!options.out_path.empty()) write_json(options.out_path, context, records, options.reps);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const std::vector<Problem> problems = build_problems(options);

  int device = 0;
  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  Handles handles;
  CUBLAS_CHECK(cublasCreate(&handles.cublas));
  // Default math: fp32 GEMMs keep full fp32 precision (no TF32 unless CUBLAS_TF32_TENSOR_OP_MATH
  // is set); fp16 GEMMs with CUBLAS_COMPUTE_32F still run on tensor cores.
  CUBLAS_CHECK(cublasSetMathMode(handles.cublas, CUBLAS_DEFAULT_MATH));
  CUBLAS_CHECK(cublasLtCreate(&handles.lt));
  CUDA_CHECK(cudaMalloc(&handles.lt_workspace, kLtWorkspaceBytes));

  Context context;
  context.date = local_date();
  context.host_name = host_name();
  context.executable = argv[0];
  context.device = properties.name;
  context.compute_capability = std::to_string(properties.major) + "." + std::to_string(properties.minor);
  CUDA_CHECK(cudaRuntimeGetVersion(&context.cuda_runtime));
  CUBLAS_CHECK(cublasGetVersion(handles.cublas, &context.cublas_version));
  context.cublaslt_version = cublasLtGetVersion();

  std::printf(
      "cublas_peer: %s (sm %s, L2 %d MB), CUDA runtime %d, cuBLAS %d, cuBLASLt %zu, %zu problems x %zu dtypes, "
      "%d warm-up + %d timed calls each; cuBLASLt: the fastest of the heuristic's first %d\n",
      context.device.c_str(), context.compute_capability.c_str(), properties.l2CacheSize >> 20, context.cuda_runtime,
      context.cublas_version, context.cublaslt_version, problems.size(), options.dtypes.size(), options.warmup,
      options.reps, options.lt_candidates);
  std::printf("%-4s %-13s %-7s %-20s %-30s %8s %5s %5s %7s %6s %10s %9s %10s %10s %11s %9s\n", "type", "impl", "op",
              "set", "layer", "M", "N", "K", "batch", "copies", "time[us]", "GFLOP/s", "launch[us]", "call[us]",
              "transfer[us]", "err");

  std::vector<Record> records;
  for (const std::string& dtype : options.dtypes) {
    for (size_t index = 0; index < problems.size(); ++index) {
      if (dtype == "fp32")
        run_problem<float>(handles, problems[index], index, dtype, options, context, records);
      else
        run_problem<__half>(handles, problems[index], index, dtype, options, context, records);
    }
  }

  // Geometric means per impl and dtype within each op and set: one number per comparable group.
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
  if (!options.out_path.empty()) std::printf("wrote %s\n", options.out_path.c_str());

  CUDA_CHECK(cudaFree(handles.lt_workspace));
  CUBLAS_CHECK(cublasLtDestroy(handles.lt));
  CUBLAS_CHECK(cublasDestroy(handles.cublas));
  return 0;
}
