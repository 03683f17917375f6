#pragma once
// The rows of one problem in one space and dtype, alike in both executables: kgemm's own, `kgemm`
// with the config dispatch picks (tuned when the device's store has the shape or a near one) and
// `kgemm-default` with the space's default config, and the executable's Kokkos Kernels peer.
// kgemm's rows also report the call's overheads (call_timing.hpp) and name the config that ran.
#include <benchmark/benchmark.h>

#include "bench_cli.hpp"
#include "bench_row.hpp"
#include "call_timing.hpp"
#include "kgemm.hpp"
#include "operand_ring.hpp"
#include "peer_compat.hpp"

namespace kgemm_bench {

// C = A B on every set of `ring`: rank-3 C is a batched call, a rank-2 B then shared by the batch.
template <class ExecSpace, class AV, class BV, class CV>
void measure_kgemm(benchmark::State& state, const Row& row, const ExecSpace& space,
                   const OperandRing<AV, BV, CV>& ring) {
  using kgemm::Op;
  constexpr bool batched = CV::rank == 3;
  kgemm::Options options;
  const kgemm::Problem problem =
      kgemm::problem_of(kgemm::gemm_args(Op::N, Op::N, 1.0f, ring.A[0], ring.B[0], 0.0f, ring.C[0]), batched);
  if (row.impl == "kgemm-default") options.config = kgemm::TuningPolicy<ExecSpace>::default_config(problem.dtype);
  const kgemm::Config config = options.config ? *options.config : kgemm::select_config<ExecSpace>(problem);
  state.SetLabel((row.layer.empty() ? "" : row.layer + " ") + kgemm::to_string(config));

  const auto call = [&](int i) {
    if constexpr (batched)
      kgemm::batched_gemm(space, Op::N, Op::N, 1.0f, ring.A[i], ring.B[i], 0.0f, ring.C[i], options);
    else
      kgemm::gemm(space, Op::N, Op::N, 1.0f, ring.A[i], ring.B[i], 0.0f, ring.C[i], options);
  };
  time_calls(state, space, ring.size(), call);
  report_call_overheads(state, space, ring.size(), call);
  report_transfer(state, space, ring.A[0], ring.B[0], ring.C[0]);
}

// Registers the row in `space` for Scalar: the kgemm impls `selection` wants, then `peer` if wanted,
// measured by measure_peer(state, space, ring) (a generic lambda: instantiated only for element
// types Kokkos Kernels computes in, see peer_compat.hpp). make_ring(row) allocates the operands
// when the row runs, so only one row's operands exist at a time.
template <class Scalar, class ExecSpace, class MakeRing, class MeasurePeer>
void register_space_rows(const Selection& selection, Row row, const ExecSpace& space, const MakeRing& make_ring,
                         const std::string& peer, const MeasurePeer& measure_peer) {
  row.space = space_name<ExecSpace>();
  row.dtype = kgemm::dtype_name(kgemm::dtype_of<Scalar>());
  for (const std::string& impl : kKgemmImpls) {
    if (!selection.wants(impl)) continue;
    row.impl = impl;
    register_row(row, [space, make_ring](benchmark::State& state, const Row& r) {
      measure_kgemm(state, r, space, make_ring(r));
    });
  }
  if constexpr (kokkos_kernels_supports<Scalar>()) {
    if (selection.wants(peer)) {
      row.impl = peer;
      register_row(row, [space, make_ring, measure_peer](benchmark::State& state, const Row& r) {
        measure_peer(state, space, make_ring(r));
      });
    }
  }
}

}  // namespace kgemm_bench
