# Finds kgemm's dependencies. Each one missing stops configuration with one line naming it
# and how to get it. Kokkos: the user's own first (Kokkos_ROOT, CMAKE_PREFIX_PATH, modules,
# Spack), else the Kokkos 3.4.01 that ci/bootstrap.sh builds into .cache/. The library needs
# Kokkos and yaml-cpp only; CLI11 comes with the tools and the benchmarks, fmt and nlohmann-json
# with KGEMM_BUILD_TOOLS (all three header-only here: nothing installed depends on them),
# GoogleTest with KGEMM_BUILD_TESTS, Google Benchmark, OpenBLAS and Kokkos Kernels with
# KGEMM_BUILD_BENCHMARKS.
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

# find_package(<package> CONFIG) or stop, naming it and the Debian package that has it; the
# further arguments are the build options that ask for it, all of which turned off do without it
# (none: the library itself). A macro: the package's variables (benchmark_VERSION, ...) stay
# visible to the caller.
macro(kgemm_require package what debian)
  find_package(${package} CONFIG QUIET)
  if(NOT ${package}_FOUND)
    set(_kgemm_how "Run ci/bootstrap.sh, or: apt-get install ${debian}")
    set(_kgemm_off "")
    foreach(_kgemm_option ${ARGN})
      string(APPEND _kgemm_off " -D${_kgemm_option}=OFF")
    endforeach()
    if(_kgemm_off)
      string(APPEND _kgemm_how " (or${_kgemm_off})")
    endif()
    kgemm_missing("${what}" "${_kgemm_how}")
  endif()
endmacro()

kgemm_require(yaml-cpp "yaml-cpp" libyaml-cpp-dev)
if(KGEMM_BUILD_TESTS AND NOT KGEMM_BUILD_TOOLS)
  kgemm_missing("the tools the tests run" "Turn KGEMM_BUILD_TOOLS on, or KGEMM_BUILD_TESTS off")
endif()
if(KGEMM_BUILD_TOOLS OR KGEMM_BUILD_BENCHMARKS)
  kgemm_require(CLI11 "CLI11 (the command lines of the tools and benchmarks)" libcli11-dev KGEMM_BUILD_TOOLS KGEMM_BUILD_BENCHMARKS)
endif()
if(KGEMM_BUILD_TOOLS)
  kgemm_require(fmt "fmt (the tools' reports)" libfmt-dev KGEMM_BUILD_TOOLS)
  kgemm_require(nlohmann_json "nlohmann-json (the tools' JSON reports)" nlohmann-json3-dev KGEMM_BUILD_TOOLS)
endif()
if(KGEMM_BUILD_TESTS)
  kgemm_require(GTest "GoogleTest" libgtest-dev KGEMM_BUILD_TESTS)
endif()
if(KGEMM_BUILD_BENCHMARKS)
  kgemm_require(benchmark "Google Benchmark" libbenchmark-dev KGEMM_BUILD_BENCHMARKS)
  kgemm_require(OpenBLAS "OpenBLAS" libopenblas-dev KGEMM_BUILD_BENCHMARKS)
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
