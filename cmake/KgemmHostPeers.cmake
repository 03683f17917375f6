# The host peers beyond OpenBLAS, each built when found and never required: Intel MKL and BLIS
# (`ci/bootstrap.sh --peers` installs both). Sets KGEMM_HOST_PEERS to the libraries found
# ("mkl;blis") and, per library, KGEMM_<LIB>_INCLUDE_DIR and KGEMM_<LIB>_LIBRARY.
#
# MKL: -DMKLROOT=<prefix> or $MKLROOT (oneAPI), else the prefix ci/bootstrap.sh --peers installs
# PyPI's mkl-devel into, else CMAKE_PREFIX_PATH and the system (Debian's intel-mkl: include/mkl).
# With it Intel's OpenMP runtime, KGEMM_MKL_OPENMP_LIBRARY (libiomp5, which MKL's default threading
# layer loads), which the MKL peer's JIT rows share with MKL.
# BLIS: CMAKE_PREFIX_PATH and the system (Debian's libblis-dev keeps one build per threading model
# under <arch>/blis-<model>/; the OpenMP and pthreads ones are taken first, header and library alike).
# -DKGEMM_HOST_PEERS_OFF=mkl;blis leaves a found library out.
set(KGEMM_PEERS_PREFIX "${PROJECT_SOURCE_DIR}/.cache/peers"
    CACHE PATH "Prefix ci/bootstrap.sh --peers installs MKL (PyPI mkl-devel) into")
set(KGEMM_HOST_PEERS_OFF "" CACHE STRING "Host peers not to build even when found (mkl, blis)")

set(KGEMM_HOST_PEERS "")

# Adds `name` to KGEMM_HOST_PEERS when its header and library were found (the variables named
# KGEMM_<LABEL>_INCLUDE_DIR and KGEMM_<LABEL>_LIBRARY, and any further variables named after
# `label`) and it is not in KGEMM_HOST_PEERS_OFF, saying either way.
macro(kgemm_take_host_peer name label)
  set(_kgemm_peer_found TRUE)
  foreach(_kgemm_variable KGEMM_${label}_INCLUDE_DIR KGEMM_${label}_LIBRARY ${ARGN})
    if(NOT ${_kgemm_variable})
      set(_kgemm_peer_found FALSE)
    endif()
  endforeach()
  if(_kgemm_peer_found AND NOT "${name}" IN_LIST KGEMM_HOST_PEERS_OFF)
    list(APPEND KGEMM_HOST_PEERS ${name})
    message(STATUS "kgemm: host peer ${label}: ${KGEMM_${label}_LIBRARY}")
  else()
    message(STATUS "kgemm: host peer ${label} not built (not found or in KGEMM_HOST_PEERS_OFF; ci/bootstrap.sh --peers installs it)")
  endif()
endmacro()

set(_kgemm_mkl_hints ${MKLROOT} $ENV{MKLROOT} ${KGEMM_PEERS_PREFIX})
find_path(KGEMM_MKL_INCLUDE_DIR mkl_cblas.h HINTS ${_kgemm_mkl_hints} PATH_SUFFIXES include include/mkl)
# PyPI's wheels ship only the versioned file (libmkl_rt.so.3): a name with a dot is also taken
# as the file's whole name.
find_library(KGEMM_MKL_LIBRARY NAMES mkl_rt libmkl_rt.so.3 libmkl_rt.so.2
             HINTS ${_kgemm_mkl_hints} PATH_SUFFIXES lib lib/intel64)
# The OpenMP runtime is looked for only where MKL's is (beside libmkl_rt, or oneAPI's compiler/ beside
# mkl/): another libiomp5, LLVM's libomp say, would be a second runtime beside the one MKL loads.
get_filename_component(_kgemm_mkl_library_dir "${KGEMM_MKL_LIBRARY}" DIRECTORY)
find_library(KGEMM_MKL_OPENMP_LIBRARY NAMES iomp5 PATHS ${_kgemm_mkl_library_dir} ${_kgemm_mkl_hints}
             PATH_SUFFIXES lib lib/intel64 ../../compiler/latest/lib NO_DEFAULT_PATH)
kgemm_take_host_peer(mkl MKL KGEMM_MKL_OPENMP_LIBRARY)

find_path(KGEMM_BLIS_INCLUDE_DIR blis.h PATH_SUFFIXES blis-openmp blis-pthread blis)
find_library(KGEMM_BLIS_LIBRARY NAMES blis PATH_SUFFIXES blis-openmp blis-pthread)
kgemm_take_host_peer(blis BLIS)
