// kgemm-bench-gemm: Google Benchmark rows for every im2col GEMM of a ResNet (the shape catalogue),
// on each selected space and dtype: kgemm with its dispatched and its default config, and the peers
// KokkosBlas::gemm in the same space and OpenBLAS SGEMM on the host.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <string>
#include <type_traits>

#include "bench_cli.hpp"
#include "bench_row.hpp"
#include "call_timing.hpp"
#include "kgemm/tuner/catalogue.hpp"
#include "operand_ring.hpp"
#include "space_rows.hpp"

namespace kgemm_bench {

template <class Scalar, class Device>
using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Device>;

// C (M x N) = A (M x K) * B (K x N), all row-major, allocated in Device.
template <class Scalar, class Device>
OperandRing<Matrix<Scalar, Device>, Matrix<Scalar, Device>, Matrix<Scalar, Device>> gemm_operands(const Row& row) {
  return {Kokkos::LayoutRight(row.m, row.k), Kokkos::LayoutRight(row.k, row.n), Kokkos::LayoutRight(row.m, row.n)};
}

// Kokkos Kernels' own GEMM (this Kokkos Kernels has no BLAS TPL), in kgemm's space.
const auto measure_kokkosblas = [](benchmark::State& state, const auto& space, const auto& ring) {
  using Scalar = typename std::decay_t<decltype(ring.C[0])>::value_type;
  time_calls(state, space, ring.size(), [&](int i) {
    KokkosBlas::gemm("N", "N", Scalar(1.0f), ring.A[i], ring.B[i], Scalar(0.0f), ring.C[i]);
  });
};

// OpenBLAS SGEMM on Kokkos' host space's threads (register_gemm sets its thread count).
void measure_openblas(benchmark::State& state, const Row& row) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const auto ring = gemm_operands<float, Host>(row);
  time_calls(state, Host(), ring.size(), [&](int i) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, row.m, row.n, row.k, 1.0f, ring.A[i].data(), row.k,
                ring.B[i].data(), row.n, 0.0f, ring.C[i].data(), row.n);
  });
}

void register_gemm(const Selection& selection, const kgemm::CommandLine&) {
  const bool openblas = selection.wants("openblas") &&
                        std::count(selection.dtypes.begin(), selection.dtypes.end(), kgemm::DType::F32) > 0;
  if (openblas) {  // the same threads as kgemm's host space
    openblas_set_num_threads(Kokkos::DefaultHostExecutionSpace().concurrency());
    benchmark::AddCustomContext("openblas_threads", std::to_string(openblas_get_num_threads()));
    benchmark::AddCustomContext("openblas_config", openblas_get_config());
  }
  for (int image : selection.images)
    for (int batch : selection.batches)
      for (const kgemm::LayerShape& shape : kgemm::resnet_gemm_shapes(selection.model, image, batch)) {
        Row row;
        row.op = "gemm";
        row.set = resnet_set_name(selection.model, image, batch);
        row.layer = shape.layer;
        row.m = shape.m;
        row.n = shape.n;
        row.k = shape.k;
        for_each_space_and_scalar(selection, [&](auto space, auto scalar) {
          using Scalar = decltype(scalar);
          register_space_rows<Scalar>(selection, row, space, gemm_operands<Scalar, decltype(space)>, "kokkosblas",
                                      measure_kokkosblas);
        });
        if (openblas) {  // the schema names OpenBLAS's space openmp, whichever host space kgemm ran
          row.impl = "openblas";
          row.space = "openmp";
          row.dtype = "fp32";
          register_row(row, measure_openblas);
        }
      }
}

}  // namespace kgemm_bench

int main(int argc, char** argv) {
  kgemm_bench::Program program;
  program.name = "kgemm-bench-gemm";
  program.usage = R"(usage: kgemm-bench-gemm [options] [--benchmark_* flags] [--kokkos-* flags]
Google Benchmark rows gemm/<impl>/<space>/<dtype>/<model>_i<image>_b<batch>/m<M>_n<N>_k<K>
(benchmarks/RESULTS_SCHEMA.md) for every im2col GEMM of the ResNet: kgemm with the dispatched
config (tuned when the store has one) and with the space default; peers KokkosBlas::gemm in the
same space and OpenBLAS SGEMM (fp32) on the host with as many threads as Kokkos' host space.
)";
  program.peers = {"openblas", "kokkosblas"};
  program.register_benchmarks = kgemm_bench::register_gemm;
  return kgemm_bench::run_program(argc, argv, program);
}
