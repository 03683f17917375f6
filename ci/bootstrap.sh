#!/usr/bin/env bash
# Installs everything kgemm needs on a fresh Debian 12 machine, idempotently:
#   1. Debian packages (compilers, yaml-cpp, CLI11, Google Benchmark/Test, OpenBLAS, matplotlib);
#   2. Kokkos + Kokkos Kernels, unless you already have one (Kokkos_ROOT set): the 3.4.01
#      releases carried by Debian's `trilinos` 13.2 source package, built into .cache/ as
#      position-independent code, which the Python module (a shared object) links.
# Usage: ci/bootstrap.sh [--cuda] [--cuda12] [--fuzz] [--peers]
#   --cuda    also Debian's CUDA 11.8 toolkit + g++-11, and a Kokkos 3.4.01 built for CUDA
#             (Ampere, sm_80): enough to compile and link kgemm's CUDA space.
#   --cuda12  also a CUDA 12.4.1 toolkit tree in .cache/cuda-12.4 (ci/cuda12_toolkit.sh), for
#             Hopper's sm_90a instructions; g++-12 is its host compiler, and g++-11 the one the
#             `cuda` preset's configure step hands nvcc_wrapper (its environment), which a build
#             against the tree configures with (docs/gpu.md). Nothing is built with it.
#   --fuzz    also clang-16 with libFuzzer and the sanitizer runtimes (preset fuzz; clang-14 has
#             no _Float16 on x86), its OpenMP headers and llvm-symbolizer.
#   --peers   also the benchmarks' host peers beside OpenBLAS: BLIS (Debian's libblis-dev) and
#             Intel MKL (PyPI's mkl-devel + mkl-include, pip-installed into .cache/peers, where
#             cmake/KgemmHostPeers.cmake looks; about 1 GB). Never needed to build or test kgemm.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${KGEMM_CACHE:-$repo/.cache}
jobs=${KGEMM_JOBS:-$(nproc)}
want_cuda=0
want_cuda12=0
want_fuzz=0
want_peers=0
mkl_version=2026.2.0
for arg in "$@"; do
  case "$arg" in
    --cuda) want_cuda=1 ;;
    --cuda12) want_cuda12=1 ;;
    --fuzz) want_fuzz=1 ;;
    --peers) want_peers=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bootstrap: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

step="start"
say()  { echo "[bootstrap] $*"; }
# logged LOG CMD...: runs CMD with its output in LOG; on failure shows the log's last lines.
logged() {
  local log=$1; shift
  mkdir -p "$(dirname "$log")"
  "$@" >> "$log" 2>&1 || { echo "[bootstrap] command failed: $* -- last lines of $log:" >&2; tail -n 40 "$log" >&2; exit 1; }
}
trap 'rc=$?; [ $rc -eq 0 ] || echo "[bootstrap] FAILED during: $step (exit $rc). Log lines above say why; rerun after fixing, finished steps are reused." >&2' EXIT

# --- 1. Debian packages -------------------------------------------------------------------
packages=(cmake make g++ pkg-config libyaml-cpp-dev libcli11-dev libfmt-dev nlohmann-json3-dev
          libbenchmark-dev libgtest-dev libopenblas-dev python3-matplotlib python3-yaml)
[ $want_cuda -eq 1 ] && packages+=(g++-11 nvidia-cuda-toolkit)
[ $want_cuda12 -eq 1 ] && packages+=(g++-12 g++-11)
[ $want_cuda12 -eq 1 ] && ! python3 -m pip --version > /dev/null 2>&1 && packages+=(python3-pip)
[ $want_fuzz -eq 1 ] && packages+=(clang-16 libclang-rt-16-dev libomp-16-dev llvm-16)
[ $want_peers -eq 1 ] && packages+=(libblis-dev)
[ $want_peers -eq 1 ] && ! python3 -m pip --version > /dev/null 2>&1 && packages+=(python3-pip)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# Kokkos' sources come from `apt-get source trilinos` (needs a deb-src line), the CUDA toolkit
# from Debian's non-free component. Add both for bookworm unless apt already has them.
ensure_apt_sources() {
  local list=/etc/apt/sources.list.d/kgemm-bookworm.sources
  [ -f "$list" ] && return 0
  say "adding $list (deb-src main, deb contrib non-free for bookworm)"
  cat > "$list" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt_updated=0
}

apt_updated=0
apt_update_once() { [ $apt_updated -eq 1 ] || { say "apt-get update"; logged "$cache/logs/apt.log" apt-get update -q; apt_updated=1; }; }

step="Debian packages"
missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "[bootstrap] missing packages: ${missing[*]}; run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  ensure_apt_sources
  apt_update_once
  say "apt-get install ${missing[*]}"
  logged "$cache/logs/apt.log" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  say "Debian packages present"
fi

if [ $want_cuda12 -eq 1 ]; then
  step="CUDA 12.4.1 toolkit tree"
  "$repo/ci/cuda12_toolkit.sh" "$cache/cuda-12.4"
fi

if [ $want_peers -eq 1 ]; then
  step="MKL $mkl_version from PyPI into $cache/peers"
  if [ -f "$cache/peers/.complete-$mkl_version" ]; then
    say "reusing $cache/peers (MKL $mkl_version)"
  else
    say "pip install --prefix $cache/peers mkl-devel==$mkl_version mkl-include==$mkl_version (about 1 GB)"
    rm -rf "$cache/peers"
    logged "$cache/logs/peers.log" python3 -m pip install -q --disable-pip-version-check --no-compile --ignore-installed \
        --prefix "$cache/peers" "mkl-devel==$mkl_version" "mkl-include==$mkl_version"
    touch "$cache/peers/.complete-$mkl_version"
  fi
fi

# --- 2. Kokkos + Kokkos Kernels -----------------------------------------------------------
if [ -n "${Kokkos_ROOT:-}" ]; then
  say "Kokkos_ROOT=$Kokkos_ROOT is set: using your Kokkos, nothing to build"
  exit 0
fi

kokkos_version=3.4.01
src_dir=$cache/src
top=Trilinos-trilinos-release-13-2-0

fetch_trilinos_sources() {
  step="Kokkos sources from Debian's trilinos 13.2 source package"
  [ -f "$src_dir/kokkos/CMakeLists.txt" ] && [ -f "$src_dir/kokkos-kernels/CMakeLists.txt" ] && return 0
  mkdir -p "$src_dir"
  if ! ls "$src_dir"/trilinos_13.2.0.orig.tar.* >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] && { ensure_apt_sources; apt_update_once; }
    say "apt-get source --download-only trilinos=13.2.0-4 (about 170 MB)"
    (cd "$src_dir" && logged "$cache/logs/apt.log" apt-get source -q --download-only trilinos=13.2.0-4)
  fi
  say "unpacking packages/kokkos and packages/kokkos-kernels"
  tar -xzf "$src_dir"/trilinos_13.2.0.orig.tar.gz -C "$src_dir" \
      "$top/packages/kokkos" "$top/packages/kokkos-kernels"
  rm -rf "$src_dir/kokkos" "$src_dir/kokkos-kernels"
  mv "$src_dir/$top/packages/kokkos" "$src_dir/kokkos"
  mv "$src_dir/$top/packages/kokkos-kernels" "$src_dir/kokkos-kernels"
  rm -rf "${src_dir:?}/$top"
}

# build_kokkos NAME CXX [cmake args...]: Kokkos then Kokkos Kernels (ETI off) into $cache/NAME
build_kokkos() {
  local name=$1 cxx=$2; shift 2
  local prefix=$cache/$name
  # The stamp records the options the tree was built with; a tree built with others is rebuilt.
  local stamp="$cxx $*"
  if [ "$(cat "$prefix/.complete" 2>/dev/null)" = "$stamp" ]; then say "reusing $prefix"; return 0; fi
  fetch_trilinos_sources
  step="configure/build/install Kokkos $kokkos_version ($name)"
  say "$step"
  rm -rf "$cache/build/$name"
  local log=$cache/logs/$name.log
  logged "$log" cmake -S "$src_dir/kokkos" -B "$cache/build/$name/kokkos" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$prefix" \
      -DKokkos_ENABLE_SERIAL=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON "$@"
  logged "$log" cmake --build "$cache/build/$name/kokkos" -j "$jobs" --target install
  step="configure/install Kokkos Kernels $kokkos_version ($name)"
  say "$step"
  logged "$log" cmake -S "$src_dir/kokkos-kernels" -B "$cache/build/$name/kokkos-kernels" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_INSTALL_PREFIX="$prefix" \
      -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DKokkos_ROOT="$prefix" -DKokkosKernels_ADD_DEFAULT_ETI=OFF \
      -DKokkosKernels_NO_DEFAULT_CUDA_TPLS=ON -DKokkosKernels_ENABLE_TPL_BLAS=OFF
  logged "$log" cmake --build "$cache/build/$name/kokkos-kernels" -j "$jobs" --target install
  echo "$stamp" > "$prefix/.complete"
  rm -rf "$cache/build/$name"
  say "installed $prefix"
}

build_kokkos kokkos-$kokkos_version-openmp g++ -DKokkos_ENABLE_OPENMP=ON

if [ $want_cuda -eq 1 ]; then
  # CUDA 13 in /usr/local/cuda cannot build Kokkos 3.4: put Debian's CUDA 11.8 (/usr/bin/nvcc)
  # first, with g++-11 as the host compiler nvcc_wrapper hands to it.
  export PATH=/usr/bin:$PATH NVCC_WRAPPER_DEFAULT_COMPILER=g++-11
  # Some images link CUDA 13's headers into /usr/local/include, which the host compiler searches
  # before /usr/include (where Debian's CUDA 11.8 keeps its own): a directory of links to the
  # 11.8 headers of the same names, passed with -I (CXXFLAGS: Kokkos and Kokkos Kernels both
  # take it at configure time), puts them first again.
  step="CUDA 11.8 header links"
  shadow=$cache/cuda-11.8-include
  rm -rf "$shadow" && mkdir -p "$shadow"
  for entry in /usr/local/include/*; do
    name=${entry##*/}
    case "$(readlink -f "$entry")" in */cuda*) [ -e "/usr/include/$name" ] && ln -s "/usr/include/$name" "$shadow/$name" ;; esac
  done
  export CXXFLAGS="-I$shadow${CXXFLAGS:+ $CXXFLAGS}"
  fetch_trilinos_sources
  # OpenMP for the host space: a CUDA build's CPU column is then a real multi-core CPU.
  build_kokkos kokkos-$kokkos_version-cuda "$src_dir/kokkos/bin/nvcc_wrapper" \
      -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON \
      -DKokkos_ENABLE_OPENMP=ON -DCUDAToolkit_ROOT=/usr
fi
step="done"
say "ready: cmake presets find Kokkos in $cache"
