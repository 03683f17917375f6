// kgemm-bench-batched: Google Benchmark rows for batched GEMM, many independent products per call:
// `squares`, batches of n x n x n products, and with --shared-b the layers of a ResNet as one product
// per image against the layer's weight matrix, shared by the batch. Peer: KokkosBatched's Team GEMM
// in the same space; OpenBLAS' loop of products: kgemm-openblas-peer --batched.
#include <benchmark/benchmark.h>

#include <KokkosBatched_Gemm_Decl.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <string>

#include "bench_cli.hpp"
#include "bench_row.hpp"
#include "call_timing.hpp"
#include "kgemm/tuner/catalogue.hpp"
#include "operand_ring.hpp"
#include "space_rows.hpp"

namespace kgemm_bench {

template <class Scalar, class Device>
using Batch = Kokkos::View<Scalar***, Kokkos::LayoutRight, Device>;
template <class Scalar, class Device>
using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Device>;

// Squares: A, B and C each hold row.batch matrices.
template <class Scalar, class Device>
OperandRing<Batch<Scalar, Device>, Batch<Scalar, Device>, Batch<Scalar, Device>> square_operands(const Row& row) {
  return {Kokkos::LayoutRight(row.batch, row.m, row.k), Kokkos::LayoutRight(row.batch, row.k, row.n),
          Kokkos::LayoutRight(row.batch, row.m, row.n)};
}

// A layer over a batch of images: A and C per image, one weight matrix B for all.
template <class Scalar, class Device>
OperandRing<Batch<Scalar, Device>, Matrix<Scalar, Device>, Batch<Scalar, Device>> shared_b_operands(const Row& row) {
  return {Kokkos::LayoutRight(row.batch, row.m, row.k), Kokkos::LayoutRight(row.k, row.n),
          Kokkos::LayoutRight(row.batch, row.m, row.n)};
}

// Product b's matrix of a batch operand, or the matrix the batch shares.
template <class View>
KOKKOS_INLINE_FUNCTION auto matrix_of(const View& v, int b) {
  if constexpr (View::rank == 3)
    return Kokkos::subview(v, b, Kokkos::ALL, Kokkos::ALL);
  else
    return v;
}

// One team per product, team size Kokkos' choice. Vector length 1: TeamGemm spreads a product over
// the team's threads only (lanes would repeat the work). Unblocked: the one algorithm both the Team
// and the TeamVector variants implement in 3.4 and 4.6.
template <class ExecSpace, class AV, class BV, class CV>
void kkbatched_gemm(const ExecSpace& space, const AV& A, const BV& B, const CV& C) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using Scalar = typename CV::value_type;
  using TeamGemm = KokkosBatched::TeamGemm<Member, KokkosBatched::Trans::NoTranspose,
                                           KokkosBatched::Trans::NoTranspose, KokkosBatched::Algo::Gemm::Unblocked>;
  Kokkos::parallel_for(
      "kgemm_bench::kkbatched_gemm", Policy(space, int(C.extent(0)), Kokkos::AUTO), KOKKOS_LAMBDA(const Member& member) {
        const int b = member.league_rank();
        TeamGemm::invoke(member, Scalar(1.0f), matrix_of(A, b), matrix_of(B, b), Scalar(0.0f), matrix_of(C, b));
      });
}

const auto measure_kkbatched = [](benchmark::State& state, const auto& space, const auto& ring) {
  time_calls(state, space, ring.size(), [&](int i) { kkbatched_gemm(space, ring.A[i], ring.B[i], ring.C[i]); });
};

struct BatchedOptions {
  Squares squares;
  bool shared_b = false;
};

// squares_batch's scale: 1 on GPUs, kHostSquaresScale on host spaces, unless --squares-scale says.
template <class ExecSpace>
int square_batch(int n, const Squares& squares) {
  return squares_batch(n, squares.scale.value_or(kgemm::SpaceTraits<ExecSpace>::is_gpu ? 1 : kHostSquaresScale));
}

void register_batched(const Selection& selection, const BatchedOptions& options) {
  Row row;
  row.op = "batched";
  row.set = "squares";
  for (int n : options.squares.sides)
    for_each_space_and_scalar(selection, [&](auto space, auto scalar) {
      using ExecSpace = decltype(space);
      using Scalar = decltype(scalar);
      row.m = row.n = row.k = n;
      row.batch = square_batch<ExecSpace>(n, options.squares);
      register_space_rows<Scalar>(selection, row, space, square_operands<Scalar, ExecSpace>, "kkbatched",
                                  measure_kkbatched);
    });
  if (!options.shared_b) return;
  for (int image : selection.images)
    for (int batch : selection.batches)
      for (const kgemm::LayerShape& shape : kgemm::resnet_gemm_shapes(selection.model, image, 1)) {
        row.set = resnet_set_name(selection.model, image, batch);
        row.layer = shape.layer;
        row.m = shape.m;
        row.n = shape.n;
        row.k = shape.k;
        row.batch = batch;
        for_each_space_and_scalar(selection, [&](auto space, auto scalar) {
          using ExecSpace = decltype(space);
          using Scalar = decltype(scalar);
          register_space_rows<Scalar>(selection, row, space, shared_b_operands<Scalar, ExecSpace>, "kkbatched",
                                      measure_kkbatched);
        });
      }
}

}  // namespace kgemm_bench

int main(int argc, char** argv) {
  kgemm_bench::BatchedOptions options;
  kgemm_bench::Program program;
  program.name = "kgemm-bench-batched";
  program.about = R"(Google Benchmark rows batched/<impl>/<space>/<dtype>/<set>/m<M>_n<N>_k<K> (benchmarks/RESULTS_SCHEMA.md;
M, N, K per product, counter `batch` the products per call) for kgemm::batched_gemm with the
dispatched config and with the space default; peer KokkosBatched::TeamGemm, one team per product.)";
  program.add_options = [&](kgemm::cli::App& app) {
    kgemm_bench::add_squares_options(app, options.squares, "1 on GPUs, 64 on host spaces");
    app.add_flag("--shared-b", options.shared_b,
                 "also set <model>_i<image>_b<batch>: each ResNet layer as one product per\n"
                 "image (M = the layer's H*W) with one weight matrix shared; batch = --batch");
  };
  program.peers = {"kkbatched"};
  program.register_benchmarks = [&](const kgemm_bench::Selection& selection) {
    kgemm_bench::register_batched(selection, options);
  };
  return kgemm_bench::run_program(argc, argv, program);
}
