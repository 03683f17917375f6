// cublas_peer: the cuBLAS references for kgemm's GPU benchmarks. Standalone (CUDA runtime, cuBLAS,
// cuBLASLt, nlohmann-json and kgemm's Kokkos-free headers only) so that it builds with whatever nvcc
// the GPU machine has; what it shares with the CUTLASS peer (options, operands, checks, timing,
// output) is peer_common.cuh:
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

#include <memory>
#include <type_traits>

#include "peer_common.cuh"

const char* const peer::kProgram = "cublas_peer";

namespace {

using namespace peer;

constexpr int kSquaresElems = 1 << 24;  // --squares: batch * n^2 per operand
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;  // NVIDIA's recommendation for Hopper
const std::vector<std::string> kImpls = {"cublas", "cublaslt", "cublaslt-tf32"};

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + cublasGetStatusName(status) +
         " (" + cublasGetStatusString(status) + ")");
}

#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

// ---------------------------------------------------------------------------------------------
// Command line and problem list

struct Options : CommonOptions {
  std::vector<int> squares;
  int lt_candidates = 16;
  bool batched_shapes = false;
};

const std::string kUsage = std::string("usage: cublas_peer [options]\n") + kShapesUsage +
                          R"(  --dtype LIST       fp32 and/or fp16, comma list or repeated      (default: fp32,fp16)
  --squares LIST     batched n x n x n products, batch = 2^24/n^2 (e.g. 8,16,32,64)
  --batched-shapes   also run each CSV row as batch (from the set's _b<batch>) products of m/batch rows, one shared B
  --impls LIST       cublas, cublaslt and/or cublaslt-tf32 (fp32 only)  (default: all three)
  --lt-candidates N  cuBLASLt algorithms to time per problem, the heuristic's first N  (default: 16)
)" + kCommonUsage;

Options parse_options(int argc, char** argv) {
  const Arguments arguments =
      parse_arguments(argc, argv, kUsage, {"--batched-shapes", "--kgemm-inputs"},
                      {"--shapes", "--dtype", "--squares", "--reps", "--warmup", "--out", "--impls", "--lt-candidates"});
  Options options{common_options(arguments, kImpls, {"fp32", "fp16"})};
  options.batched_shapes = arguments.flag("--batched-shapes");
  options.lt_candidates = arguments.last_int("--lt-candidates", 1, options.lt_candidates);
  for (const std::string& text : arguments.all("--squares"))
    for (const std::string& item : split(text, ',')) options.squares.push_back(parse_int(trim(item), "--squares", 1));
  if (options.shapes_path.empty() && options.squares.empty()) fail("nothing to run: give --shapes and/or --squares");
  if (options.batched_shapes && options.shapes_path.empty()) fail("--batched-shapes needs --shapes");
  return options;
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
// rotating operands (time_candidates), the fastest kept. An algorithm the heuristic offers but
// cublasLtMatmul refuses is skipped. Empty `call` when none runs.
template <class T>
Impl<T> cublaslt_best(const Handles& handles, const Problem& p, ProblemData<T>& data, cublasComputeType_t compute,
                      const Options& options) {
  auto matmul = std::make_shared<LtMatmul<T>>(p, compute);
  const std::vector<cublasLtMatmulAlgo_t> algos = matmul->candidates(handles.lt, options.lt_candidates);
  std::vector<TryCall<T>> candidates;
  for (const cublasLtMatmulAlgo_t& algo : algos)
    candidates.push_back([matmul, algo, handles](const T* a, const T* b, T* c) {
      return matmul->run(handles.lt, algo, a, b, c, handles.lt_workspace) == CUBLAS_STATUS_SUCCESS;
    });
  const std::vector<double> times = time_candidates(data.operands, candidates);
  Impl<T> impl;
  if (compute == CUBLAS_COMPUTE_32F_FAST_TF32) impl.tolerance = kTf32Tolerance;
  const int rank = fastest_candidate(times);
  if (rank < 0) {
    impl.chosen.text = "no cuBLASLt algorithm ran (" + std::to_string(algos.size()) + " candidates)";
    return impl;
  }
  const double heuristic_us = std::isinf(times[0]) ? std::nan("") : times[0];
  const std::string algorithm = describe(algos[rank]);
  impl.call = [matmul, algo = algos[rank], handles](const T* a, const T* b, T* c) {
    CUBLAS_CHECK(matmul->run(handles.lt, algo, a, b, c, handles.lt_workspace));
  };
  impl.chosen.fields = {{"lt_algorithm", algorithm},
                        {"lt_candidates", algos.size()},
                        {"lt_rank", rank},
                        {"lt_heuristic_us", heuristic_us}};
  char text[256];
  std::snprintf(text, sizeof text, "  %s, #%d of %zu (heuristic's first %.2f us)", algorithm.c_str(), rank,
                algos.size(), heuristic_us);
  impl.chosen.text = text;
  return impl;
}

// The impl named `impl_name` on a problem, for run_problem.
template <class T>
auto make_impl(const Handles& handles, const Options& options) {
  return [&handles, &options](const std::string& impl_name, const Problem& p, ProblemData<T>& data) {
    return impl_name == "cublas"
               ? cublas_default<T>(handles, p)
               : cublaslt_best<T>(handles, p, data,
                                  impl_name == "cublaslt" ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32, options);
  };
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const std::vector<Problem> problems = build_problems(options);

  Device device(argv[0]);
  Handles handles;
  CUBLAS_CHECK(cublasCreate(&handles.cublas));
  // Default math: fp32 GEMMs keep full fp32 precision (no TF32 unless CUBLAS_TF32_TENSOR_OP_MATH
  // is set); fp16 GEMMs with CUBLAS_COMPUTE_32F still run on tensor cores.
  CUBLAS_CHECK(cublasSetMathMode(handles.cublas, CUBLAS_DEFAULT_MATH));
  CUBLAS_CHECK(cublasLtCreate(&handles.lt));
  CUDA_CHECK(cudaMalloc(&handles.lt_workspace, kLtWorkspaceBytes));

  int cublas_version = 0;
  CUBLAS_CHECK(cublasGetVersion(handles.cublas, &cublas_version));
  const size_t cublaslt_version = cublasLtGetVersion();
  Json& context = device.context;
  context["cublas_version"] = cublas_version;
  context["cublaslt_version"] = cublaslt_version;
  context["library"] = "cublas";

  std::printf(
      "cublas_peer: %s, cuBLAS %d, cuBLASLt %zu, %zu problems x %zu dtypes, %d warm-up + %d timed calls each; "
      "cuBLASLt: the fastest of the heuristic's first %d\n",
      device.summary().c_str(), cublas_version, cublaslt_version, problems.size(), options.dtypes.size(),
      options.warmup, options.reps, options.lt_candidates);
  print_table_header();

  std::vector<std::string> impls_fp16 = options.impls;  // TF32 is an fp32 compute mode
  impls_fp16.erase(std::remove(impls_fp16.begin(), impls_fp16.end(), "cublaslt-tf32"), impls_fp16.end());
  std::vector<Record> records;
  for (const std::string& dtype : options.dtypes) {
    for (size_t index = 0; index < problems.size(); ++index) {
      if (dtype == "fp32")
        run_problem<float>(problems[index], index, dtype, options.impls, make_impl<float>(handles, options), options,
                           context, records);
      else
        run_problem<__half>(problems[index], index, dtype, impls_fp16, make_impl<__half>(handles, options), options,
                            context, records);
    }
  }

  print_geometric_means(records);
  if (!options.out_path.empty()) std::printf("wrote %s\n", options.out_path.c_str());

  CUDA_CHECK(cudaFree(handles.lt_workspace));
  CUBLAS_CHECK(cublasLtDestroy(handles.lt));
  CUBLAS_CHECK(cublasDestroy(handles.cublas));
  return 0;
}
