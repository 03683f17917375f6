#pragma once
// Per-case tests: every enabled execution space x element type x accumulation, each named
// so the test output says where it ran, e.g. "GemmTest/OpenMP_f16acc32.EdgeShapes".
// Registered with RegisterTest rather than TYPED_TEST: typed tests carry a "# TypeParam"
// comment in --gtest_list_tests that ctest's discovery would fold into the test name.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <string>
#include <tuple>

#include "kgemm/dtype.hpp"

namespace kgemm::test {

template <class Space, class Scalar, Accum A>
struct Case {
  using ExecSpace = Space;
  using Value = Scalar;
  static constexpr Accum accum = A;
  static std::string name() {
    std::string n = std::string(Space::name()) + "_" + to_string(dtype_of<Scalar>());
    if (dtype_of<Scalar>() == DType::F16) n += std::string("acc") + (A == Accum::F32 ? "32" : "16");
    return n;
  }
};

template <class Space>
using SpaceCases = std::tuple<Case<Space, float, Accum::F32>, Case<Space, half, Accum::F32>,
                              Case<Space, half, Accum::F16>>;

using AllCases = decltype(std::tuple_cat(
#if defined(KOKKOS_ENABLE_CUDA)
    SpaceCases<Kokkos::Cuda>(),
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    SpaceCases<Kokkos::OpenMP>(),
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    SpaceCases<Kokkos::Serial>(),
#endif
    std::tuple<>()));

template <class Body>
struct CaseTest : ::testing::Test {
  void TestBody() override { Body::run(); }
};

// Registers Body<C>::run once per case C as "<suite>/<case>.<test>".
template <template <class> class Body>
bool register_per_case(const char* suite, const char* test, const char* file, int line) {
  std::apply(
      [&](auto... cases) {
        (::testing::RegisterTest((std::string(suite) + "/" + decltype(cases)::name()).c_str(), test, nullptr,
                                 nullptr, file, line,
                                 []() -> ::testing::Test* { return new CaseTest<Body<decltype(cases)>>(); }),
         ...);
      },
      AllCases());
  return true;
}


// KGEMM_CASE_TEST(Suite, Test) { body using TypeParam } : one test per case, like TYPED_TEST.
#define KGEMM_CASE_TEST(Suite, Test)                                                                \
  template <class TypeParam>                                                                        \
  struct Suite##_##Test {                                                                           \
    static void run();                                                                              \
  };                                                                                                \
  [[maybe_unused]] const bool Suite##_##Test##_registered =                                         \
      ::kgemm::test::register_per_case<Suite##_##Test>(#Suite, #Test, __FILE__, __LINE__);          \
  template <class TypeParam>                                                                        \
  void Suite##_##Test<TypeParam>::run()

}  // namespace kgemm::test
