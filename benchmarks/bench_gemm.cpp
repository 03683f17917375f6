// kgemm-bench-gemm: Google Benchmark rows for every im2col GEMM of a ResNet (the shape catalogue),
// on each selected space and dtype: kgemm with its dispatched and its default config, and the peer
// KokkosBlas::gemm in the same space (Kokkos' own threads, so nothing competes with them). OpenBLAS
// runs in a process of its own, kgemm-openblas-peer: here Kokkos' spinning OpenMP threads would
// share its cores.
#include <benchmark/benchmark.h>

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>
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

void register_gemm(const Selection& selection) {
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
      }
}

}  // namespace kgemm_bench

int main(int argc, char** argv) {
  kgemm_bench::Program program;
  program.name = "kgemm-bench-gemm";
  program.about = R"(Google Benchmark rows gemm/<impl>/<space>/<dtype>/<model>_i<image>_b<batch>/m<M>_n<N>_k<K>
(benchmarks/RESULTS_SCHEMA.md) for every im2col GEMM of the ResNet: kgemm with the dispatched
config (tuned when the store has one) and with the space default; peer KokkosBlas::gemm in the
same space. OpenBLAS has a process of its own: kgemm-openblas-peer.)";
  program.peers = {"kokkosblas"};
  program.register_benchmarks = kgemm_bench::register_gemm;
  return kgemm_bench::run_program(argc, argv, program);
}
