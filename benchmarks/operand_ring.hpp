#pragma once
// Operands for a timing loop that must not find its inputs in cache: a ring of independent
// operand sets with random inputs (never all zeros, which some hardware multiplies faster),
// each iteration taking the next set.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kgemm/fill.hpp"
#include "kgemm/spaces/space_traits.hpp"
#include "kgemm/spaces/operand_ring_size.hpp"

namespace kgemm_bench {

// The cache a repeated call in `ExecSpace` could find its operands in (operand_ring_size.hpp).
template <class ExecSpace>
std::size_t cache_bytes() {
  return kgemm::operand_cache_bytes(kgemm::SpaceTraits<ExecSpace>::is_gpu);
}

// A, B and C views allocated in their execution space; A and B hold uniform values in [-1, 1).
template <class AV, class BV, class CV>
struct OperandRing {
  std::vector<AV> A;
  std::vector<BV> B;
  std::vector<CV> C;

  OperandRing(const typename AV::array_layout& a, const typename BV::array_layout& b,
              const typename CV::array_layout& c) {
    add_set(a, b, c);
    const std::size_t set_bytes = (A[0].span() + B[0].span() + C[0].span()) * sizeof(typename CV::value_type);
    const int sets = kgemm::ring_size(set_bytes, cache_bytes<typename CV::execution_space>());
    while (size() < sets) add_set(a, b, c);
    Kokkos::fence();
  }

  int size() const { return int(C.size()); }

 private:
  void add_set(const typename AV::array_layout& a, const typename BV::array_layout& b,
               const typename CV::array_layout& c) {
    const std::uint64_t seed = 2 * A.size();
    A.emplace_back("A", a);
    B.emplace_back("B", b);
    C.emplace_back("C", c);
    kgemm::fill_uniform(A.back(), seed + 1);
    kgemm::fill_uniform(B.back(), seed + 2);
  }
};

}  // namespace kgemm_bench
