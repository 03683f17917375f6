#!/usr/bin/env bash
# Installs a built kgemm into a temporary prefix, builds the example consumer against the
# installed package (find_package(kgemm)) and runs it, and checks that nothing installed points
# into the source or build tree.
# Usage: ci/install_check.sh [build dir, default build/openmp]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/openmp}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > "$prefix.log"
for item in bin/kgemm-run bin/autotune include/kgemm.hpp lib/cmake/kgemm/kgemmConfig.cmake share/kgemm/configs; do
  [ -e "$prefix/$item" ] || { echo "install check: $item is missing from the install"; exit 1; }
done
# Binaries and stores only: the package file may name where the Kokkos it was built with lives.
if grep -rlF "$PWD" "$prefix/bin" "$prefix"/lib/*.a "$prefix/share"; then
  echo "install check: the files above point into $PWD"; exit 1
fi
cmake -S examples/consumer -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$prefix/configure.log"
cmake --build "$prefix/consumer-build" -j2 > "$prefix/build.log"
# The installed stores come from the prefix: no environment points anywhere else.
env -u KGEMM_CONFIG_FILE -u KGEMM_CONFIG_PATH XDG_DATA_HOME="$prefix/xdg" "$prefix/consumer-build/consumer"
# The installed autotune writes this device's store into the prefix (writable here), where the
# installed kgemm-run then finds it.
export XDG_DATA_HOME="$prefix/xdg"
unset KGEMM_CONFIG_FILE KGEMM_CONFIG_PATH
"$prefix/bin/autotune" --shape 96x64x64 --budget 3 --reps 2 > "$prefix/autotune.log"
"$prefix/bin/kgemm-run" --model resnet18 --image 32 --reps 1 > "$prefix/run.log"
grep -q "^tuned configs: $prefix/share/kgemm/configs/" "$prefix/run.log" ||
  { echo "install check: the installed kgemm-run did not find the prefix's store"; cat "$prefix/run.log"; exit 1; }
tail -n 1 "$prefix/run.log"
echo "install check: kgemm installed, found by find_package and used by the consumer (prefix $prefix)"
rm -f "$prefix.log"
