// cutlass_peer: CUTLASS's fp32 GEMM in 3xTF32 for kgemm's GPU benchmarks, the like-for-like
// accuracy peer of kgemm's fp32 kernels, which use 3xTF32 on Hopper too. Standalone (CUDA runtime,
// CUTLASS's headers, nlohmann-json and kgemm's Kokkos-free headers only); it measures, checks and
// writes its rows as the cuBLAS peer does, with the code both share (../cublas_peer/peer_common.cuh):
//
//   CUTLASS_DIR=dir ./build.sh [OUTPUT]   # dir holds CUTLASS's include/
//   ./cutlass_peer --shapes shapes.csv [--dtype fp32] [--impls cutlass,cutlass-tf32]
//                  [--kgemm-inputs] [--reps 50] [--warmup 5] [--out results.json]
//
// shapes.csv has the header `set,layer,m,n,k` as kgemm-run --list-shapes writes it, one GEMM per
// row (m already multiplied by the batch: ResNet's im2col GEMMs fold the batch into M), each run
// as C = A*B with row-major A (MxK), B (KxN), C (MxN), as kgemm does (rows gemm/<impl>/cuda/fp32/...):
//   cutlass        CUTLASS 2.x's device::Gemm on tensor cores with OpMultiplyAddFastF32: each fp32
//                  input split into a TF32 big and small part and three of their products summed in
//                  fp32 (3xTF32, CUTLASS example 27), about fp32's accuracy;
//   cutlass-tf32   the same kernels with OpMultiplyAdd: each input taken at TF32 precision once
//                  (1xTF32), less accurate than fp32: a column beside, as cublaslt-tf32 is.
// CUTLASS has no heuristic: each impl times every kernel configuration of Tiles that can
// implement the problem (alignment) on the problem's own operands and keeps the fastest, as the
// cuBLAS peer does with cuBLASLt's candidates; cutlass_kernel names the one kept.
//
// Checks (fp64 on sampled elements; with --kgemm-inputs kgemm-run's operands and its max_rel_err),
// timing and output are the cuBLAS peer's: see cublas_peer.cu and benchmarks/RESULTS_SCHEMA.md.
#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm.h>
#include <cutlass/version.h>

#include <memory>
#include <tuple>
#include <type_traits>

#include "peer_common.cuh"

const char* const peer::kProgram = "cutlass_peer";

namespace {

using namespace peer;

const std::vector<std::string> kImpls = {"cutlass", "cutlass-tf32"};

const std::string kUsage = std::string("usage: cutlass_peer [options]\n") + kShapesUsage +
                          R"(  --dtype LIST       fp32 (3xTF32 is an fp32 GEMM)                  (default: fp32)
  --impls LIST       cutlass (3xTF32) and/or cutlass-tf32 (1xTF32)  (default: both)
)" + kCommonUsage;

CommonOptions parse_options(int argc, char** argv) {
  const Arguments arguments = parse_arguments(argc, argv, kUsage, {"--kgemm-inputs"},
                                              {"--shapes", "--dtype", "--impls", "--reps", "--warmup", "--out"});
  const CommonOptions options = common_options(arguments, kImpls, {"fp32"});
  if (options.shapes_path.empty()) fail("nothing to run: give --shapes");
  return options;
}

// A kernel configuration: threadblock tile, warp tile (the same K), pipeline stages, and the
// elements one access reads of A and of B and C (row-major: A's needs K, B's and C's N divisible
// by it; 4 is a 128-bit access).
template <int kM, int kN, int kK, int kWarpM, int kWarpN, int kStages, int kAlignA, int kAlignBC>
struct Tile {
  using Threadblock = cutlass::gemm::GemmShape<kM, kN, kK>;
  using Warp = cutlass::gemm::GemmShape<kWarpM, kWarpN, kK>;
  static constexpr int stages = kStages, align_a = kAlignA, align_bc = kAlignBC;

  static std::string describe() {
    const auto shape = [](int m, int n, int k) {
      return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    };
    return "tile " + shape(kM, kN, kK) + " warp " + shape(kWarpM, kWarpN, kK) + " stages " + std::to_string(kStages) +
           " align " + std::to_string(kAlignA) + "/" + std::to_string(kAlignBC);
  }
};

// Tiles of the fp32 tensor-op kernels that CUTLASS's profiler generates for Ampere
// (python/cutlass_library/generator.py, GenerateSM80_TensorOp_1688_fast_fp32_math): all with
// 128-bit accesses, three of them also reading A an element at a time for a K not divisible by 4
// (ResNet's conv1, K = 147), and one reading every operand so for an N not divisible by 4 either.
using Tiles = std::tuple<Tile<128, 128, 32, 32, 64, 3, 4, 4>,  //
                          Tile<128, 128, 16, 32, 64, 4, 4, 4>,  //
                          Tile<256, 64, 32, 64, 32, 3, 4, 4>,   //
                          Tile<64, 256, 32, 32, 64, 3, 4, 4>,   //
                          Tile<128, 64, 32, 64, 32, 3, 4, 4>,   //
                          Tile<64, 128, 32, 32, 64, 3, 4, 4>,   //
                          Tile<64, 64, 32, 32, 32, 3, 4, 4>,    //
                          Tile<128, 128, 32, 32, 64, 3, 1, 4>,  //
                          Tile<128, 64, 32, 64, 32, 3, 1, 4>,   //
                          Tile<64, 64, 32, 32, 32, 3, 1, 4>,    //
                          Tile<64, 64, 32, 32, 32, 3, 1, 1>>;

using RowMajor = cutlass::layout::RowMajor;

// Row-major fp32 C = A*B with Ampere's mma.sync (which Hopper runs) doing `Math`; the swizzle is
// the profiler's, which groups neighbouring tiles so that they share operands in L2.
template <class Math, class T>
using TensorOpGemm = cutlass::gemm::device::Gemm<
    float, RowMajor, float, RowMajor, float, RowMajor, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    typename T::Threadblock, typename T::Warp, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, T::align_bc, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>, T::stages, T::align_a, T::align_bc, false, Math>;

// C = 1 A B + 0 C: beta 0, so the epilogue never reads C.
template <class Gemm>
typename Gemm::Arguments gemm_arguments(const Problem& p, const float* a, const float* b, float* c) {
  return typename Gemm::Arguments({p.m, p.n, p.k}, {a, p.k}, {b, p.n}, {c, p.n}, {c, p.n}, {1.0f, 0.0f});
}

// A kernel that can implement the problem, and its call on one copy of the operands.
struct Kernel {
  std::string description;
  std::function<cutlass::Status(const float* a, const float* b, float* c)> run;
};

template <class Math, class T>
void add_kernel(const Problem& p, const RotatingOperands<float>& operands, std::vector<Kernel>& kernels) {
  using Gemm = TensorOpGemm<Math, T>;
  if (Gemm::can_implement(gemm_arguments<Gemm>(p, operands.a(0), operands.b(0), operands.c(0))) !=
      cutlass::Status::kSuccess)
    return;
  auto gemm = std::make_shared<Gemm>();
  kernels.push_back({T::describe(), [gemm, p](const float* a, const float* b, float* c) {
                       return (*gemm)(gemm_arguments<Gemm>(p, a, b, c));
                     }});
}

template <class Math, class... Ts>
std::vector<Kernel> kernels_for(const Problem& p, const RotatingOperands<float>& operands, std::tuple<Ts...>*) {
  std::vector<Kernel> kernels;
  (add_kernel<Math, Ts>(p, operands, kernels), ...);
  return kernels;
}

// The fastest of the kernels that can implement the problem (time_candidates); empty `call` when
// none runs.
template <class Math>
Impl<float> cutlass_best(const Problem& p, ProblemData<float>& data) {
  const std::vector<Kernel> kernels = kernels_for<Math>(p, data.operands, static_cast<Tiles*>(nullptr));
  std::vector<TryCall<float>> candidates;
  for (const Kernel& kernel : kernels)
    candidates.push_back([run = kernel.run](const float* a, const float* b, float* c) {
      return run(a, b, c) == cutlass::Status::kSuccess;
    });
  const std::vector<double> times = time_candidates(data.operands, candidates);
  Impl<float> impl;
  if (std::is_same<Math, cutlass::arch::OpMultiplyAdd>::value) impl.tolerance = kTf32Tolerance;
  const int fastest = fastest_candidate(times);
  if (fastest < 0) {
    impl.chosen.text = "no CUTLASS kernel ran (" + std::to_string(kernels.size()) + " of " +
                       std::to_string(std::tuple_size<Tiles>::value) + " can implement the problem)";
    return impl;
  }
  const Kernel& kept = kernels[fastest];
  impl.call = [run = kept.run](const float* a, const float* b, float* c) {
    const cutlass::Status status = run(a, b, c);
    if (status != cutlass::Status::kSuccess)
      fail(std::string("CUTLASS GEMM failed: ") + cutlass::cutlassGetStatusString(status));
  };
  impl.chosen.fields = {{"cutlass_kernel", kept.description}, {"cutlass_candidates", kernels.size()}};
  impl.chosen.text = "  " + kept.description + ", fastest of " + std::to_string(kernels.size());
  return impl;
}

}  // namespace

int main(int argc, char** argv) {
  const CommonOptions options = parse_options(argc, argv);
  const std::vector<Problem> problems = read_shapes(options.shapes_path);

  Device device(argv[0]);
  const std::string cutlass_version =
      std::to_string(CUTLASS_MAJOR) + "." + std::to_string(CUTLASS_MINOR) + "." + std::to_string(CUTLASS_PATCH);
  Json& context = device.context;
  context["cutlass_version"] = cutlass_version;
  context["library"] = "cutlass";

  std::printf("cutlass_peer: %s, CUTLASS %s, %zu problems, %d warm-up + %d timed calls each; the fastest of %zu kernel "
              "configurations\n",
              device.summary().c_str(), cutlass_version.c_str(), problems.size(), options.warmup, options.reps,
              std::tuple_size<Tiles>::value);
  print_table_header();

  const auto make_impl = [](const std::string& impl_name, const Problem& p, ProblemData<float>& data) {
    return impl_name == "cutlass" ? cutlass_best<cutlass::arch::OpMultiplyAddFastF32>(p, data)
                                  : cutlass_best<cutlass::arch::OpMultiplyAdd>(p, data);
  };
  std::vector<Record> records;
  for (size_t index = 0; index < problems.size(); ++index)
    run_problem<float>(problems[index], index, "fp32", options.impls, make_impl, options, context, records);

  print_geometric_means(records);
  if (!options.out_path.empty()) std::printf("wrote %s\n", options.out_path.c_str());
  return 0;
}
