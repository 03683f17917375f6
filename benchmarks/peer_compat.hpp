#pragma once
// What the Kokkos Kernels peers accept, across the Kokkos Kernels releases kgemm supports
// (3.4.01 .. 4.6) and builds; the benchmarks ask here instead of testing versions themselves.
#include <Kokkos_ArithTraits.hpp>

namespace kgemm_bench {

// Whether Kokkos Kernels can compute in Scalar (Kokkos::ArithTraits in both 3.4 and 4.6). On CUDA
// builds kgemm::half is Kokkos' half_t, which it knows (and accumulates in: fp16 peer rows sum
// in fp16, not fp32 as kgemm does). On host builds kgemm::half is _Float16, which it does not know,
// so its fp16 rows are left out there.
template <class Scalar>
constexpr bool kokkos_kernels_supports() {
  return Kokkos::ArithTraits<Scalar>::is_specialized;
}

}  // namespace kgemm_bench
