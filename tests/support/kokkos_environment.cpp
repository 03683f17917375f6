// GoogleTest main for every kgemm test binary: Kokkos lives for the whole run.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdlib>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Without it Kokkos' OpenMP backend prints advice on stdout, which ctest's test discovery
  // would read as test names; "false" is what Kokkos itself recommends for unit tests.
  setenv("OMP_PROC_BIND", "false", /*overwrite=*/0);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
