# Finds kgemm's dependencies. Each one missing stops configuration with one line naming it
# and how to get it. Kokkos: the user's own first (Kokkos_ROOT, CMAKE_PREFIX_PATH, modules,
# Spack), else the Kokkos 3.4.01 that ci/bootstrap.sh builds into .cache/. The library needs
# Kokkos and yaml-cpp only; CLI11 comes with the command-line tools (always built, the fuzz
# targets included: header-only, nothing installed depends on it), GoogleTest with
# KGEMM_BUILD_TESTS, Google Benchmark, OpenBLAS and Kokkos Kernels with KGEMM_BUILD_BENCHMARKS.
set(KGEMM_BOOTSTRAP_KOKKOS "${PROJECT_SOURCE_DIR}/.cache/kokkos-3.4.01-openmp"
    CACHE PATH "Kokkos prefix built by ci/bootstrap.sh, used when no other Kokkos is found")

function(kgemm_missing what how)
  message(FATAL_ERROR "kgemm: ${what} not found. ${how}")
endfunction()

find_package(Kokkos CONFIG QUIET)
if(NOT Kokkos_FOUND)
  find_package(Kokkos CONFIG QUIET PATHS "${KGEMM_BOOTSTRAP_KOKKOS}" NO_DEFAULT_PATH)
endif()
if(NOT Kokkos_FOUND)
  kgemm_missing("Kokkos (>= 3.4.01)"
    "Run ci/bootstrap.sh (builds Kokkos 3.4.01 from Debian's trilinos source into .cache/), or pass -DKokkos_ROOT=<your Kokkos install prefix>.")
endif()
if(Kokkos_VERSION VERSION_LESS 3.4.1)
  kgemm_missing("Kokkos >= 3.4.01 (found ${Kokkos_VERSION} at ${Kokkos_DIR})"
    "Point -DKokkos_ROOT at a newer Kokkos, or run ci/bootstrap.sh.")
endif()
message(STATUS "kgemm: Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}, devices: ${Kokkos_DEVICES}")

find_package(yaml-cpp CONFIG QUIET)
if(NOT yaml-cpp_FOUND)
  kgemm_missing("yaml-cpp" "Run ci/bootstrap.sh, or: apt-get install libyaml-cpp-dev")
endif()

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  kgemm_missing("CLI11 (the tools' command lines)" "Run ci/bootstrap.sh, or: apt-get install libcli11-dev")
endif()

if(KGEMM_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    kgemm_missing("GoogleTest" "Run ci/bootstrap.sh, or: apt-get install libgtest-dev (or -DKGEMM_BUILD_TESTS=OFF)")
  endif()
endif()
if(KGEMM_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG QUIET)
  if(NOT benchmark_FOUND)
    kgemm_missing("Google Benchmark" "Run ci/bootstrap.sh, or: apt-get install libbenchmark-dev (or -DKGEMM_BUILD_BENCHMARKS=OFF)")
  endif()
  find_package(OpenBLAS CONFIG QUIET)
  if(NOT OpenBLAS_FOUND)
    kgemm_missing("OpenBLAS" "Run ci/bootstrap.sh, or: apt-get install libopenblas-dev (or -DKGEMM_BUILD_BENCHMARKS=OFF)")
  endif()
  # Kokkos Kernels is a peer in the benchmarks and nothing else links it; take the one installed
  # beside Kokkos first.
  get_filename_component(_kgemm_kokkos_prefix "${Kokkos_DIR}/../../.." ABSOLUTE)
  find_package(KokkosKernels CONFIG QUIET PATHS "${_kgemm_kokkos_prefix}" NO_DEFAULT_PATH)
  if(NOT KokkosKernels_FOUND)
    find_package(KokkosKernels CONFIG QUIET)
  endif()
  if(NOT KokkosKernels_FOUND)
    kgemm_missing("Kokkos Kernels"
      "Install it beside your Kokkos (-DKokkosKernels_ROOT=<prefix>), or run ci/bootstrap.sh (or -DKGEMM_BUILD_BENCHMARKS=OFF)")
  endif()
endif()

# The execution spaces kgemm instantiates its kernels for: those this Kokkos enables.
set(KGEMM_SPACES "")
foreach(_device IN ITEMS SERIAL OPENMP CUDA)
  if(_device IN_LIST Kokkos_DEVICES)
    list(APPEND KGEMM_SPACES ${_device})
  endif()
endforeach()
if("CUDA" IN_LIST KGEMM_SPACES AND NOT "OPENMP" IN_LIST KGEMM_SPACES)
  message(WARNING "kgemm: this Kokkos enables CUDA but not OpenMP: kgemm-run --space openmp,cuda has no "
                  "multi-core CPU side (Serial runs on one core). Build Kokkos with -DKokkos_ENABLE_OPENMP=ON.")
endif()
